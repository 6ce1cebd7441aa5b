// Test peer only: prints Java's Double.toString / Float.toString of edge
// values, powers of 2 and 10 and seeded random bit patterns, one per line as
// "d|f <hex bits> <text>". Regenerate java17.txt with a Java 17 runtime:
//   java internal/javafloat/testdata/JavaFloats.java > internal/javafloat/testdata/java17.txt
import java.util.Random;

public class JavaFloats {
    static void d(double v) { System.out.println("d " + Long.toHexString(Double.doubleToRawLongBits(v)) + " " + Double.toString(v)); }
    static void f(float v) { System.out.println("f " + Integer.toHexString(Float.floatToRawIntBits(v)) + " " + Float.toString(v)); }

    public static void main(String[] args) {
        double[] ds = {4.9E-324, Double.MIN_VALUE, Double.MIN_NORMAL, Double.MAX_VALUE, 1.0E7, 9999999.999999998, 1.0E-3, 0.001, 9.999999999999998E-4,
            100.0, 0.1, 0.2, 0.3, 1.0/3, 2.0/3, 1e23, 8.41e21, 5e-324, 1e-300, 1.7976931348623157e308, 123456789.125, 2.25, -0.0, 0.0,
            1e22, 1e21, 9.007199254740992E15, 9.007199254740993E15, 1.2345678901234567E-5, 2.0E-3, 1.0E-5, 4.35, 0.3 + 0.6, 1e16, 1e17};
        for (double v : ds) { d(v); d(-v); }
        float[] fs = {Float.MIN_VALUE, Float.MIN_NORMAL, Float.MAX_VALUE, 1.0E7f, 1.0E-3f, 0.001f, 100.0f, 0.1f, 1.1f, 3.4028235e38f, 1.4e-45f,
            1e-7f, -3.4e38f, 1.5f, 0.5f, 1e10f, 16777216f, 16777217f, 3.3554432E7f, 9999999f, 1.0E-4f, 2.0E-3f, 0.3f};
        for (float v : fs) { f(v); f(-v); }
        for (int e = -1074; e <= 1023; e++) { d(Math.scalb(1.0, e)); d(Math.scalb(1.0, e) * 3); }
        for (int e = -149; e <= 127; e++) { f(Math.scalb(1.0f, e)); f(Math.scalb(1.0f, e) * 3); }
        for (int e = -325; e <= 308; e++) { d(Double.parseDouble("1e" + e)); }
        for (int e = -46; e <= 38; e++) { f(Float.parseFloat("1e" + e)); }
        Random r = new Random(16);
        for (int i = 0; i < 2500; i++) {
            double v = Double.longBitsToDouble(r.nextLong());
            if (!Double.isNaN(v)) d(v);
            float w = Float.intBitsToFloat(r.nextInt());
            if (!Float.isNaN(w)) f(w);
        }
        for (int i = 0; i < 600; i++) {
            d(r.nextInt(100000000) / 1000.0);
            f(r.nextInt(1000000) / 100.0f);
            d(r.nextDouble());
            f(r.nextFloat());
        }
    }
}
