package job

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
)

// Decimal is an exact decimal number, Unscaled × 10^−Scale: the row value
// of a Kafka Connect Decimal field (org.apache.kafka.connect.data.Decimal:
// the two's-complement bytes of Unscaled, base64 in JSON, with "scale" in
// the schema) or of a Debezium VariableScaleDecimal field (a struct of
// "scale" and "value"), of a decimal literal in a JSON record, and of the
// sum, min, max and avg of exact numbers. It is written as a JSON number
// and to SQL with its digits as they are ("12.30"), never through a binary
// float.
type Decimal struct {
	Unscaled *big.Int
	Scale    int32
}

var bigTen = big.NewInt(10)

func pow10(n int32) *big.Int { return new(big.Int).Exp(bigTen, big.NewInt(int64(n)), nil) }

// String is d in plain notation: "-12.30", "0.05", "1200" (a negative
// scale multiplies by ten).
func (d Decimal) String() string { return string(d.append(nil)) }

// append appends String's text to b.
func (d Decimal) append(b []byte) []byte {
	u := d.Unscaled
	if u == nil {
		u = new(big.Int)
	}
	if d.Scale <= 0 {
		if d.Scale < 0 {
			u = new(big.Int).Mul(u, pow10(-d.Scale))
		}
		return u.Append(b, 10)
	}
	if u.Sign() < 0 {
		b = append(b, '-')
	}
	start := len(b)
	if u.IsInt64() { // no big.Int allocated in the common case
		b = strconv.AppendUint(b, absU64(u.Int64()), 10)
	} else {
		b = new(big.Int).Abs(u).Append(b, 10)
	}
	digits := len(b) - start
	if n := int(d.Scale) + 1 - digits; n > 0 { // 0.05: leading zeros
		b = append(b, make([]byte, n)...)
		copy(b[start+n:], b[start:start+digits])
		for i := 0; i < n; i++ {
			b[start+i] = '0'
		}
		digits += n
	}
	cut := start + digits - int(d.Scale)
	b = append(b, 0)
	copy(b[cut+1:], b[cut:len(b)-1])
	b[cut] = '.'
	return b
}

func absU64(x int64) uint64 {
	if x < 0 {
		return uint64(-(x + 1)) + 1
	}
	return uint64(x)
}

// MarshalJSON writes d as a JSON number with its exact digits.
func (d Decimal) MarshalJSON() ([]byte, error) { return d.append(nil), nil }

// rescale returns d with scale s ≥ d.Scale (the same value).
func (d Decimal) rescale(s int32) Decimal {
	if s == d.Scale {
		return d
	}
	return Decimal{Unscaled: new(big.Int).Mul(d.Unscaled, pow10(s-d.Scale)), Scale: s}
}

// canonical is d without trailing fraction zeros (1.50 → 1.5, 2.00 → 2),
// so that equal values have one form.
func (d Decimal) canonical() Decimal {
	u := new(big.Int).Set(d.Unscaled)
	s := d.Scale
	q, r := new(big.Int), new(big.Int)
	for s > 0 && u.Sign() != 0 {
		q.QuoRem(u, bigTen, r)
		if r.Sign() != 0 {
			break
		}
		u.Set(q)
		s--
	}
	if u.Sign() == 0 {
		s = 0
	}
	return Decimal{Unscaled: u, Scale: s}
}

func (d Decimal) cmp(e Decimal) int {
	s := max(d.Scale, e.Scale)
	return d.rescale(s).Unscaled.Cmp(e.rescale(s).Unscaled)
}

func (d Decimal) float() float64 {
	r := new(big.Rat).SetInt(d.Unscaled)
	if d.Scale > 0 {
		r.Quo(r, new(big.Rat).SetInt(pow10(d.Scale)))
	} else if d.Scale < 0 {
		r.Mul(r, new(big.Rat).SetInt(pow10(-d.Scale)))
	}
	f, _ := r.Float64()
	return f
}

// parseDecimal reads [-+]digits[.digits] (no exponent) exactly.
func parseDecimal(s string) (Decimal, bool) {
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 || body == "" || body == "." {
		return Decimal{}, false
	}
	intPart, frac, _ := strings.Cut(body, ".")
	var small uint64 // the digits while they fit (18 digits always do)
	for _, part := range [2]string{intPart, frac} {
		for i := 0; i < len(part); i++ {
			c := part[i]
			if c < '0' || c > '9' {
				return Decimal{}, false
			}
			small = small*10 + uint64(c-'0')
		}
	}
	var u *big.Int
	if len(intPart)+len(frac) <= 18 {
		u = new(big.Int).SetUint64(small)
	} else if u, _ = new(big.Int).SetString(intPart+frac, 10); u == nil {
		return Decimal{}, false
	}
	if s[0] == '-' {
		u.Neg(u)
	}
	return Decimal{Unscaled: u, Scale: int32(len(frac))}, true
}

// fromTwosComplement decodes Java's BigInteger.toByteArray (big-endian
// two's complement), the unscaled value of a Kafka Connect Decimal.
func fromTwosComplement(b []byte) *big.Int {
	v := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return v
}

// literalNumber is the row value of a number written in a spec (decoded
// by encoding/json as a float64): an integer (exact up to 2^53) is an
// int64, another number the Decimal of its shortest decimal form (0.1 is
// exactly 0.1), so that it meets exact row values without float rounding.
func literalNumber(f float64) any {
	if f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
		return int64(f)
	}
	if d, ok := floatDecimal(f); ok {
		return d
	}
	return f
}

// floatDecimal is the Decimal of f's shortest decimal form, which reads
// back as f (strconv's shortest round-trip formatting). NaN and ±Inf have
// none.
func floatDecimal(f float64) (Decimal, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Decimal{}, false
	}
	return parseDecimal(strconv.FormatFloat(f, 'f', -1, 64))
}

// jsonNumber is the row value of a number in a JSON record: an integer
// literal is an int64 (a Decimal beyond int64), a plain decimal literal
// an exact Decimal of its digits, a literal with an exponent a float64.
func jsonNumber(n json.Number) any {
	s := n.String()
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
	}
	if !strings.ContainsAny(s, "eE") {
		if d, ok := parseDecimal(s); ok {
			return d
		}
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

func isNumber(v any) bool {
	switch v.(type) {
	case int64, float64, Decimal:
		return true
	}
	return false
}

func toDecimal(v any) (Decimal, bool) {
	switch x := v.(type) {
	case int64:
		return Decimal{Unscaled: big.NewInt(x)}, true
	case Decimal:
		return x, true
	case float64:
		return floatDecimal(x)
	}
	return Decimal{}, false
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case Decimal:
		return x.float()
	case float64:
		return x
	}
	return math.NaN()
}

// addNumbers is a+b, nil being the empty sum (0): int64 + int64 is an
// int64, or the exact Decimal when it overflows; an exact number with a
// Decimal is a Decimal (scale: the larger); anything with a float64 is a
// float64 (as SQL's DOUBLE wins over exact types).
func addNumbers(a, b any) any {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	x, xi := a.(int64)
	y, yi := b.(int64)
	if xi && yi {
		s := x + y
		if (s > x) == (y > 0) {
			return s
		}
	}
	_, xf := a.(float64)
	_, yf := b.(float64)
	if xf || yf {
		return toFloat(a) + toFloat(b)
	}
	d, _ := toDecimal(a)
	e, _ := toDecimal(b)
	s := max(d.Scale, e.Scale)
	return Decimal{Unscaled: new(big.Int).Add(d.rescale(s).Unscaled, e.rescale(s).Unscaled), Scale: s}
}

// negNumber is −v (−MinInt64 becomes a Decimal).
func negNumber(v any) any {
	switch x := v.(type) {
	case int64:
		if x == math.MinInt64 {
			return Decimal{Unscaled: new(big.Int).Neg(big.NewInt(x))}
		}
		return -x
	case float64:
		return -x
	case Decimal:
		return Decimal{Unscaled: new(big.Int).Neg(x.Unscaled), Scale: x.Scale}
	}
	return v
}

// mulNumbers is v × m, m a number of a spec (literalNumber): int64 ×
// integer is an int64 (a Decimal when it overflows), a float64 stays a
// float64, else the exact Decimal product.
func mulNumbers(v any, m float64) any { return mulLiteral(v, literalNumber(m), m) }

// mulLiteral is mulNumbers with m's literalNumber lit computed once (a
// projection prepares it at compile).
func mulLiteral(v, lit any, m float64) any {
	if x, ok := v.(int64); ok {
		if y, ok := lit.(int64); ok {
			hi, lo := bits.Mul64(uint64(abs64(x)), uint64(abs64(y)))
			if hi == 0 && lo <= math.MaxInt64 && x != math.MinInt64 && y != math.MinInt64 {
				p := int64(lo)
				if (x < 0) != (y < 0) {
					p = -p
				}
				return p
			}
		}
	}
	if f, ok := v.(float64); ok {
		return f * m
	}
	d, ok1 := toDecimal(v)
	e, ok2 := toDecimal(lit)
	if !ok1 || !ok2 {
		return toFloat(v) * m
	}
	return Decimal{Unscaled: new(big.Int).Mul(d.Unscaled, e.Unscaled), Scale: d.Scale + e.Scale}
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// avgScale is the least scale of an average of exact numbers: Flink's AVG
// over DECIMAL(p, s) returns DECIMAL(38, max(6, s)).
const avgScale = 6

// avgNumbers is sum / n: a float64 for a float64 sum, else the Decimal
// rounded half up to scale max(6, sum's scale).
func avgNumbers(sum any, n int64) any {
	if sum == nil || n == 0 {
		return nil
	}
	if f, ok := sum.(float64); ok {
		return f / float64(n)
	}
	d, ok := toDecimal(sum)
	if !ok {
		return nil
	}
	s := max(d.Scale, avgScale)
	num := d.rescale(s).Unscaled
	q, r := new(big.Int).QuoRem(num, big.NewInt(n), new(big.Int))
	// half up, away from zero: |2r| ≥ n rounds the magnitude up
	if new(big.Int).Abs(new(big.Int).Lsh(r, 1)).Cmp(big.NewInt(abs64(n))) >= 0 {
		if (num.Sign() < 0) != (n < 0) {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return Decimal{Unscaled: q, Scale: s}
}

// compareNumbers orders two numbers of any kind exactly: a float64 meets
// an exact number as the Decimal of its shortest form (±Inf above and
// below everything); ok is false for NaN or a non-number.
func compareNumbers(a, b any) (int, bool) {
	if x, ok := a.(int64); ok {
		if y, ok := b.(int64); ok {
			return cmpInt(x, y), true
		}
	}
	x, xf := a.(float64)
	y, yf := b.(float64)
	switch {
	case !isNumber(a) || !isNumber(b):
		return 0, false
	case xf && math.IsNaN(x), yf && math.IsNaN(y):
		return 0, false
	case xf && yf:
		switch {
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	case xf && math.IsInf(x, 0):
		return int(math.Copysign(1, x)), true
	case yf && math.IsInf(y, 0):
		return -int(math.Copysign(1, y)), true
	}
	d, _ := toDecimal(a)
	e, _ := toDecimal(b)
	return d.cmp(e), true
}

func cmpInt(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// appendValue appends the checkpoint encoding of a row value: JSON that
// keeps the kind of a number, so that a row is the same after a restore:
// an int64 as an integer, a float64 always with a fraction or an exponent
// (1.0), a Decimal as {"decimal":"12.30"}, a NaN or infinite float64 as
// {"float":"NaN"}; strings, booleans and null as JSON.
func appendValue(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Appendf(b, `{"float":%q}`, strconv.FormatFloat(x, 'g', -1, 64)), nil
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		return append(b, s...), nil
	case Decimal:
		b = append(b, `{"decimal":"`...)
		return append(x.append(b), `"}`...), nil
	}
	j, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, j...), nil
}

// encodeValues is the checkpoint encoding (appendValue) of a JSON array of
// values: the key of keyBy's fields.
func encodeValues(vals []any) string {
	b := []byte{'['}
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = appendValue(b, v); err != nil {
			b = append(b, "null"...)
		}
	}
	return string(append(b, ']'))
}

// fromJSON turns a value decoded with json.Decoder.UseNumber from
// appendValue's encoding back into a row value.
func fromJSON(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		s := x.String()
		if strings.ContainsAny(s, ".eE") {
			return strconv.ParseFloat(s, 64)
		}
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i, nil
		}
		if d, ok := parseDecimal(s); ok {
			return d, nil
		}
		return nil, fmt.Errorf("number %s", s)
	case map[string]any:
		if s, ok := x["decimal"].(string); ok && len(x) == 1 {
			if d, ok := parseDecimal(s); ok {
				return d, nil
			}
			return nil, fmt.Errorf("decimal %q", s)
		}
		if s, ok := x["float"].(string); ok && len(x) == 1 {
			return strconv.ParseFloat(s, 64)
		}
		return nil, errors.New("object is not a row value")
	}
	return v, nil
}

// decodeValue reads one value of appendValue's encoding.
func decodeValue(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return fromJSON(v)
}

// decodeValues reads encodeValues' array.
func decodeValues(s string) ([]any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var vals []any
	if err := dec.Decode(&vals); err != nil {
		return nil, err
	}
	for i, v := range vals {
		x, err := fromJSON(v)
		if err != nil {
			return nil, err
		}
		vals[i] = x
	}
	return vals, nil
}
