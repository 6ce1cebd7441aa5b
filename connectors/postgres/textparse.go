package postgres

import (
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/connectd/connectd/internal/javafloat"
)

// Parsers of PostgreSQL's text output for composite values: arrays,
// int2vector, hstore and interval (IntervalStyle=postgres). Pure functions,
// shared by snapshot and streaming.

// parseArray parses a one-dimensional array literal ("{1,NULL,"a b"}",
// optionally prefixed by explicit bounds "[0:1]=") and converts each element
// with conv; NULL elements are nil.
func parseArray(s string, conv func(string) (any, error)) (any, error) {
	if strings.HasPrefix(s, "[") {
		if i := strings.IndexByte(s, '='); i > 0 {
			s = s[i+1:]
		}
	}
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' {
		return nil, fmt.Errorf("invalid array %q", s)
	}
	body := s[1 : len(s)-1]
	out := make([]any, 0, strings.Count(body, ",")+1)
	if body == "" {
		return out, nil
	}
	var sb strings.Builder
	for i := 0; i <= len(body); {
		if i < len(body) && body[i] == '{' {
			return nil, fmt.Errorf("multi-dimensional arrays are not supported: %q", s)
		}
		var elem string
		quoted := false
		if i < len(body) && body[i] == '"' {
			quoted = true
			sb.Reset()
			i++
			for i < len(body) && body[i] != '"' {
				if body[i] == '\\' && i+1 < len(body) {
					i++
				}
				sb.WriteByte(body[i])
				i++
			}
			i++ // closing quote
			elem = sb.String()
		} else {
			j := i
			for j < len(body) && body[j] != ',' {
				j++
			}
			elem = strings.TrimSpace(body[i:j])
			i = j
		}
		if !quoted && strings.EqualFold(elem, "NULL") {
			out = append(out, nil)
		} else {
			v, err := conv(elem)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		if i >= len(body) {
			break
		}
		if body[i] != ',' {
			return nil, fmt.Errorf("invalid array %q", s)
		}
		i++
	}
	return out, nil
}

// parseVector parses int2vector / oidvector text ("1 2 3").
func parseVector(s string, conv func(string) (any, error)) (any, error) {
	fields := strings.Fields(s)
	out := make([]any, len(fields))
	for i, f := range fields {
		v, err := conv(f)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

type hstorePair struct {
	key   string
	value *string
}

// parseHstore parses hstore output: "k"=>"v", "k2"=>NULL (quotes optional,
// backslash escapes inside quotes).
func parseHstore(s string) ([]hstorePair, error) {
	var out []hstorePair
	i := 0
	skipSpace := func() {
		for i < len(s) && (s[i] == ' ' || s[i] == ',') {
			i++
		}
	}
	token := func() (string, bool, error) {
		if i < len(s) && s[i] == '"' {
			var sb strings.Builder
			i++
			for i < len(s) && s[i] != '"' {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				sb.WriteByte(s[i])
				i++
			}
			if i >= len(s) {
				return "", false, fmt.Errorf("invalid hstore %q", s)
			}
			i++
			return sb.String(), true, nil
		}
		j := i
		for j < len(s) && s[j] != '=' && s[j] != ',' && s[j] != ' ' {
			j++
		}
		t := s[i:j]
		i = j
		return t, false, nil
	}
	for {
		skipSpace()
		if i >= len(s) {
			return out, nil
		}
		k, _, err := token()
		if err != nil {
			return nil, err
		}
		for i < len(s) && s[i] == ' ' {
			i++
		}
		if !strings.HasPrefix(s[i:], "=>") {
			return nil, fmt.Errorf("invalid hstore %q", s)
		}
		i += 2
		for i < len(s) && s[i] == ' ' {
			i++
		}
		v, quoted, err := token()
		if err != nil {
			return nil, err
		}
		p := hstorePair{key: k}
		if quoted || !strings.EqualFold(v, "NULL") {
			vv := v
			p.value = &vv
		}
		out = append(out, p)
	}
}

// parseHstoreMap is hstore.handling.mode=map: map<string, optional string>.
func parseHstoreMap(s string) (any, error) {
	pairs, err := parseHstore(s)
	if err != nil {
		return nil, err
	}
	m := make(map[string]any, len(pairs))
	for _, p := range pairs {
		if p.value == nil {
			m[p.key] = nil
		} else {
			m[p.key] = *p.value
		}
	}
	return m, nil
}

// parseHstoreJSON is hstore.handling.mode=json: a JSON object text as
// Jackson writes a map (compact, keys sorted, null for NULL values).
func parseHstoreJSON(s string) (any, error) {
	pairs, err := parseHstore(s)
	if err != nil {
		return nil, err
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i].key < pairs[j].key })
	b := make([]byte, 0, len(s)+2)
	b = append(b, '{')
	for i, p := range pairs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJacksonString(b, p.key)
		b = append(b, ':')
		if p.value == nil {
			b = append(b, "null"...)
		} else {
			b = appendJacksonString(b, *p.value)
		}
	}
	return string(append(b, '}')), nil
}

const hexUpper = "0123456789ABCDEF"

// appendJacksonString appends s as a JSON string the way Jackson writes it
// (control characters as \u00XX with upper-case hex, non-BMP characters as
// escaped surrogate pairs, other non-ASCII raw).
func appendJacksonString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"':
				b = append(b, '\\', '"')
			case c == '\\':
				b = append(b, '\\', '\\')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexUpper[c>>4], hexUpper[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r > 0xFFFF {
			hi, lo := utf16.EncodeRune(r)
			for _, u := range []rune{hi, lo} {
				b = append(b, '\\', 'u', hexUpper[u>>12&0xf], hexUpper[u>>8&0xf], hexUpper[u>>4&0xf], hexUpper[u&0xf])
			}
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// interval is a PostgreSQL interval as the JDBC driver's PGInterval holds
// it: years, months, days, hours and minutes as Java ints, the seconds
// rounded to whole microseconds (setSeconds: Math.round(seconds × 10^6)).
type interval struct {
	years, months, days, hours, minutes int32
	wholeSeconds, microSeconds          int32
}

// seconds is PGInterval.getSeconds: wholeSeconds + microSeconds / 1e6.
func (iv interval) seconds() float64 {
	return float64(iv.wholeSeconds) + float64(iv.microSeconds)/1000000.0
}

// parseInterval parses IntervalStyle=postgres output ("1 year 2 mons 3
// days 04:05:06.789", "-1 days -02:00:00.5", "00:00:00") as PGInterval's
// setValue does: whitespace-separated tokens, a number followed by its unit
// (year, mon, day, hour, min, sec), or [-]H:MM[:SS.ffffff] whose sign
// applies to hours, minutes and seconds. A number beyond a Java int fails
// (the driver's "Conversion of interval failed").
func parseInterval(s string) (interval, error) {
	var iv interval
	bad := func() (interval, error) { return interval{}, fmt.Errorf("invalid interval %q", s) }
	f := strings.Fields(strings.ToLower(strings.NewReplacer("+", " ", "@", " ").Replace(s)))
	var years, months, days, hours, minutes int32
	var secs float64
	valueToken, haveValue := "", false
	javaInt := func(v string, ok bool) (int32, bool) {
		if !ok {
			return 0, true // nullSafeIntGet(null)
		}
		n, err := strconv.ParseInt(v, 10, 32)
		return int32(n), err == nil
	}
	for i, tok := range f {
		if i%2 == 0 {
			endHours := strings.IndexByte(tok, ':')
			if endHours < 0 {
				valueToken, haveValue = tok, true
				continue
			}
			off := 0
			if tok[0] == '-' {
				off = 1
			}
			var ok1, ok2 bool
			hours, ok1 = javaInt(tok[off:endHours], true)
			if endHours+3 > len(tok) {
				return bad()
			}
			minutes, ok2 = javaInt(tok[endHours+1:endHours+3], true)
			if !ok1 || !ok2 {
				return bad()
			}
			secs = 0
			if endMinutes := strings.IndexByte(tok[endHours+1:], ':'); endMinutes >= 0 {
				v, err := strconv.ParseFloat(tok[endHours+1+endMinutes+1:], 64)
				if err != nil {
					return bad()
				}
				secs = v
			}
			if off == 1 {
				hours, minutes, secs = -hours, -minutes, -secs
			}
			valueToken, haveValue = "", false
			continue
		}
		var ok bool
		switch {
		case strings.HasPrefix(tok, "year"):
			years, ok = javaInt(valueToken, haveValue)
		case strings.HasPrefix(tok, "mon"):
			months, ok = javaInt(valueToken, haveValue)
		case strings.HasPrefix(tok, "day"):
			days, ok = javaInt(valueToken, haveValue)
		case strings.HasPrefix(tok, "hour"):
			hours, ok = javaInt(valueToken, haveValue)
		case strings.HasPrefix(tok, "min"):
			minutes, ok = javaInt(valueToken, haveValue)
		case strings.HasPrefix(tok, "sec"):
			ok = true
			if haveValue {
				v, err := strconv.ParseFloat(valueToken, 64)
				ok, secs = err == nil, v
			}
		default:
			ok = true
		}
		if !ok {
			return bad()
		}
	}
	micros := secs * 1000000.0
	if lim := float64(float32(9.223372e18)); micros > lim || micros < -lim { // setSeconds' float bounds
		return bad()
	}
	total := javaRound(micros)
	iv = interval{years: years, months: months, days: days, hours: hours, minutes: minutes,
		wholeSeconds: int32(total / 1000000), microSeconds: int32(total % 1000000)}
	return iv, nil
}

// javaRound is Java's Math.round(double): the closest long, ties toward
// positive infinity.
func javaRound(x float64) int64 {
	r := math.Floor(x)
	if x-r >= 0.5 {
		r++
	}
	return javaLong(r)
}

// javaLong is Java's (long) cast of a double: truncation toward zero, NaN
// 0, saturated at the int64 range.
func javaLong(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// parseIntervalMicros is io.debezium.time.MicroDuration
// (interval.handling.mode=numeric), computed as Debezium's
// MicroDuration.durationMicros does, in doubles with an average month of
// 30.4375 days: an interval beyond the int64 range of microseconds is
// clamped to it (Java's long cast), as in Debezium.
func parseIntervalMicros(s string) (any, error) {
	iv, err := parseInterval(s)
	if err != nil {
		return nil, err
	}
	days := float64(iv.years*12+iv.months)*30.4375 + float64(iv.days)
	secs := ((days*24.0+float64(iv.hours))*60.0+float64(iv.minutes))*60.0 + iv.seconds()
	return javaLong(secs*1000000.0 + 0), nil
}

// parseIntervalISO is io.debezium.time.Interval (interval.handling.mode=
// string) as Debezium's Interval.toIsoString: "P<y>Y<m>M<d>DT<h>H<m>M<s>S"
// with PGInterval's fields, the seconds BigDecimal.valueOf(getSeconds())
// (Java's Double.toString digits) cut to 9 fraction digits, trailing zeros
// stripped, in plain notation.
func parseIntervalISO(s string) (any, error) {
	iv, err := parseInterval(s)
	if err != nil {
		return nil, err
	}
	i32 := func(v int32) string { return strconv.FormatInt(int64(v), 10) }
	return "P" + i32(iv.years) + "Y" + i32(iv.months) + "M" + i32(iv.days) + "DT" + i32(iv.hours) + "H" +
		i32(iv.minutes) + "M" + javaSecondsText(iv.seconds()) + "S", nil
}

// javaSecondsText is BigDecimal.valueOf(f), cut to scale 9 (RoundingMode.DOWN)
// if finer, stripTrailingZeros().toPlainString().
func javaSecondsText(f float64) string {
	u, scale, ok := javaBigDecimal(javafloat.Format(f, 64))
	if !ok {
		return "0"
	}
	if scale > 9 {
		u.Quo(u, pow10(scale-9)) // toward zero
		scale = 9
	}
	ten, q, r := big.NewInt(10), new(big.Int), new(big.Int)
	for u.Sign() != 0 {
		q.QuoRem(u, ten, r)
		if r.Sign() != 0 {
			break
		}
		u, q = q, u
		scale--
	}
	if u.Sign() == 0 {
		return "0"
	}
	if scale < 0 {
		u.Mul(u, pow10(-scale))
		scale = 0
	}
	return plainDecimal(u, scale)
}
