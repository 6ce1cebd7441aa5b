package transforms

import (
	"math/big"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

// TestJavaHashCodeAndMurmur checks javaHashCode and murmurHashObject
// against values printed by the JDK 17 and Debezium 3.6.1's
// io.debezium.util.MurmurHash3 (debezium-util-3.6.1.Final.jar):
// testdata/transforms/reference/PartitionRoutingProbe.java prints
// "<class> <value> <v.hashCode()> <MurmurHash3.getInstance().hash(v)>".
func TestJavaHashCodeAndMurmur(t *testing.T) {
	dec := func(s string, scale int) connect.Decimal {
		n, _ := new(big.Int).SetString(s, 10)
		return connect.Decimal{Unscaled: n, Scale: scale}
	}
	for _, c := range []struct {
		v            any
		java, murmur int32
	}{
		{"", 0, 89125410},
		{"a", 97, -1119243492},
		{"hammer", -1224598842, 693644843},
		{"scooter", 1923926513, -2029482068},
		{"héllo wörld ünïcödé long string 12345", 1600476566, -1697522663},
		{"\U0001F600x", 54959989, 966414759},
		{int32(0), 0, 1805505889},
		{int32(1), 1, -1931162451},
		{int32(-1), -1, 171705313},
		{int32(123456789), 123456789, 1798169500},
		{int8(-5), -5, 1960881932},
		{int16(300), 300, -297510042},
		{int64(4102444800000), 751033275, 1714296469},
		{int64(-1), 0, 1805505889},
		{true, 1231, -1891831265},
		{false, 1237, -682375457},
		{float32(3.14), 1078523331, 1649129452},
		{2.718281828, -889114991, 180693426},
		{dec("1250", 2), 38752, -1550805569},                           // new BigDecimal("12.50")
		{dec("-1234567890123456789012345", 1), -292950204, 1633561412}, // new BigDecimal("-123456789012345678901234.5")
		{time.UnixMilli(1795946541581).UTC(), 650212271, 406496762},    // new java.util.Date(1795946541581L)
		{[]any{"a", int32(1), nil}, 123039, 820459433},                 // Arrays.asList("a", 1, null)
		{[]byte{1, 2, 0x80}, -93154, -2113773211},                      // ByteBuffer.wrap(new byte[]{1,2,(byte)0x80})
	} {
		j, err := javaHashCode(c.v)
		if err != nil || j != c.java {
			t.Errorf("javaHashCode(%#v) = %d, %v; want %d", c.v, j, err, c.java)
		}
		m, err := murmurHashObject(c.v)
		if err != nil || m != c.murmur {
			t.Errorf("murmur(%#v) = %d, %v; want %d", c.v, m, err, c.murmur)
		}
	}
	nan, _ := javaHashCode(float64NaN())
	if nan != 2146959360 { // Double.NaN.hashCode()
		t.Errorf("NaN: %d", nan)
	}
}

func float64NaN() float64 { z := 0.0; return z / z }
