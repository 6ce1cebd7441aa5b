package javafloat

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestJava17 compares Format with what Java 17's Double.toString and
// Float.toString printed for edge values (Double.MIN_VALUE 4.9E-324,
// 1.0E7, 0.001, 1.0E-4, Float.MIN_VALUE …), every power of two, powers of
// ten and seeded random bit patterns (testdata/JavaFloats.java, run by
// OpenJDK 17.0.15).
func TestJava17(t *testing.T) {
	f, err := os.Open("testdata/java17.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n, bad := 0, 0
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		hexBits, want, _ := strings.Cut(rest, " ")
		u, err := strconv.ParseUint(hexBits, 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if kind == "f" {
			got = Format(float64(math.Float32frombits(uint32(u))), 32)
		} else {
			got = Format(math.Float64frombits(u), 64)
		}
		n++
		if got != want {
			bad++
			if bad <= 20 {
				t.Errorf("%s %s: got %s, Java %s", kind, hexBits, got, want)
			}
		}
	}
	if n < 10000 {
		t.Fatalf("only %d cases read", n)
	}
	if bad > 0 {
		t.Errorf("%d of %d differ", bad, n)
	}
}

func TestSpecial(t *testing.T) {
	for f, want := range map[float64]string{math.NaN(): "NaN", math.Inf(1): "Infinity", math.Inf(-1): "-Infinity", math.Copysign(0, -1): "-0.0", 0: "0.0"} {
		if got := Format(f, 64); got != want {
			t.Errorf("Format(%v) = %q, want %q", f, got, want)
		}
	}
}
