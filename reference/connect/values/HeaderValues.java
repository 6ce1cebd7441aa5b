// Test peer only: prints Kafka Connect's Values.convertToString (what
// SimpleHeaderConverter writes for a header) of key structs, one line per
// case, "<case>\t<text with \t, \n and \\ escaped>". Go's
// connectors/internal/headers test builds the same structs by case name.
// Run by values.sh (the real connect-api jar of Kafka 4.3.0).
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Arrays;
import org.apache.kafka.connect.data.*;

public class HeaderValues {
    static void emit(String name, Schema s, Object v) {
        Struct st = new Struct(s);
        st.put("k", v);
        print(name, st);
    }

    static void print(String name, Struct st) {
        String t = Values.convertToString(st.schema(), st);
        System.out.println(name + "\t" + t.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n"));
    }

    static Schema one(Schema f) { return SchemaBuilder.struct().name("K").field("k", f).build(); }

    public static void main(String[] a) {
        emit("int32", one(Schema.INT32_SCHEMA), 3);
        emit("int64", one(Schema.INT64_SCHEMA), -9223372036854775808L);
        emit("int16", one(Schema.INT16_SCHEMA), (short) -7);
        emit("int8", one(Schema.INT8_SCHEMA), (byte) 5);
        emit("bool", one(Schema.BOOLEAN_SCHEMA), true);
        emit("null", one(Schema.OPTIONAL_STRING_SCHEMA), null);
        emit("double2", one(Schema.FLOAT64_SCHEMA), 2.0d);
        emit("double1e21", one(Schema.FLOAT64_SCHEMA), 1e21d);
        emit("double_small", one(Schema.FLOAT64_SCHEMA), 0.0001d);
        emit("float01", one(Schema.FLOAT32_SCHEMA), 0.1f);
        emit("string", one(Schema.STRING_SCHEMA), "a\tb\nc\"d\\e ü 😀 {x:1}");
        emit("bytes", one(Schema.BYTES_SCHEMA), new byte[] {1, 2, (byte) 255});
        emit("decimal150", one(Decimal.schema(3)), new BigDecimal(new BigInteger("150000"), 3));
        emit("decimal_neg", one(Decimal.schema(1)), new BigDecimal(new BigInteger("-125"), 1));
        emit("decimal_1e-7", one(Decimal.schema(7)), new BigDecimal(BigInteger.ONE, 7));
        emit("decimal_zero8", one(Decimal.schema(8)), new BigDecimal(BigInteger.ZERO, 8));
        emit("decimal_small", one(Decimal.schema(6)), new BigDecimal(new BigInteger("12"), 6));
        emit("decimal_int", one(Decimal.schema(0)), new BigDecimal(new BigInteger("123456789012345678901234567890"), 0));
        emit("date", one(Date.SCHEMA), Date.toLogical(Date.SCHEMA, 18265));
        emit("date_before_epoch", one(Date.SCHEMA), Date.toLogical(Date.SCHEMA, -1));
        emit("date_epoch", one(Date.SCHEMA), Date.toLogical(Date.SCHEMA, 0));
        emit("time_midnight", one(Time.SCHEMA), Time.toLogical(Time.SCHEMA, 0));
        emit("time", one(Time.SCHEMA), Time.toLogical(Time.SCHEMA, 3723004));
        emit("timestamp", one(Timestamp.SCHEMA), Timestamp.toLogical(Timestamp.SCHEMA, 1577836800123L));
        emit("timestamp_day", one(Timestamp.SCHEMA), Timestamp.toLogical(Timestamp.SCHEMA, 1577836800000L));
        emit("timestamp_before_epoch", one(Timestamp.SCHEMA), Timestamp.toLogical(Timestamp.SCHEMA, -1500L));
        emit("array", one(SchemaBuilder.array(Schema.OPTIONAL_STRING_SCHEMA).build()), Arrays.asList("x", null, "y\""));
        Schema vsd = SchemaBuilder.struct().name("io.debezium.data.VariableScaleDecimal")
                .field("scale", Schema.INT32_SCHEMA).field("value", Schema.BYTES_SCHEMA).build();
        Struct n = new Struct(vsd).put("scale", 2).put("value", new byte[] {0x04, (byte) 0xd2});
        emit("nested", one(vsd), n);
        Schema multi = SchemaBuilder.struct().name("K").field("id", Schema.INT32_SCHEMA)
                .field("Name x", Schema.STRING_SCHEMA).field("d", Date.SCHEMA).build();
        print("composite", new Struct(multi).put("id", 1).put("Name x", "o'k").put("d", Date.toLogical(Date.SCHEMA, 18265)));
    }
}
