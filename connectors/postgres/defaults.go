package postgres

import (
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/relational"
)

// Column defaults as Debezium 3.6.1's PostgresDefaultValueConverter turns
// them into schema defaults. Only what Debezium turns into a value gets a
// default: Kafka Connect's JsonConverter writes a field's schema default for
// a null value, so a default Debezium does not have would turn every NULL of
// the column into that default.
//
// Debezium picks a parser by the column's type name; a type without one
// (arrays, domains, "char", name, oid, money, bytea, inet, cidr, macaddr,
// ranges, point, timetz, tsvector, extension types…) has no default. The
// parser takes the text between the first pair of single quotes of
// pg_get_expr's text ('it''s' gives "it"), or the whole text when it has no
// quote; an expression that starts like a function call (now(),
// gen_random_uuid(), nextval(…)) or is CURRENT_DATE, CURRENT_TIME,
// CURRENT_TIMESTAMP, LOCALTIME or LOCALTIMESTAMP gives the type's fixed
// placeholder (0, false, "", "{}", the zero UUID, the epoch); NULL::… gives
// none. The result goes through the column's value conversion; a text the
// parser or the conversion refuses ((2 * 21) for an integer, a numeric
// default with more fraction digits than the column's scale) gives no
// default, and so does a VariableScaleDecimal (a struct, which Kafka
// Connect cannot hold as a default, KAFKA-12694).

// defaultFunction is Debezium's FUNCTION_DEFAULT_PATTERN (found at the
// start of the text); '.' of a Java regular expression matches no line
// terminator.
var defaultFunction = regexp.MustCompile(`^[(]?[A-Za-z0-9_.]+\((?:[^\n\r\x{85}\x{2028}\x{2029}]+(?:, ?[^\n\r\x{85}\x{2028}\x{2029}]+)*)?\)`)

// defaultCurrentTimes are Debezium's CURRENT_DATE_TIMES (compared with the
// lower-cased expression).
var defaultCurrentTimes = map[string]bool{"current_timestamp": true, "current_time": true, "current_date": true, "localtime": true, "localtimestamp": true}

// defaultMapperTypes are the built-in types Debezium has a default parser
// for, by OID, with the placeholder of a generated value; trimmed says
// whether the expression is trimmed first (Debezium's TRIM_DATA_TYPES).
var defaultMapperTypes = map[uint32]struct {
	placeholder string
	trimmed     bool
}{
	oidBit: {"00", true}, oidVarbit: {"0", true}, oidBool: {"false", true},
	oidBPChar: {"", false}, oidVarchar: {"", false}, oidText: {"", false},
	oidNumeric: {"0.0", true}, oidFloat4: {"0.0", true}, oidFloat8: {"0.0", true},
	oidInt2: {"0", true}, oidInt4: {"0", true}, oidInt8: {"0", true},
	oidJSON: {"{}", false}, oidJSONB: {"{}", false}, oidXML: {"", false},
	oidUUID: {"00000000-0000-0000-0000-000000000000", true},
	oidDate: {"1970-01-01", true}, oidTime: {"00:00", true}, oidTimestamp: {"1970-01-01", true},
	oidTimestamptz: {"1970-01-01", true}, oidInterval: {"epoch", true},
}

// parseDefault returns the schema default Debezium 3.6.1 gives column c
// whose DEFAULT is expr (pg_get_expr of pg_attrdef.adbin), converted to the
// column's Connect value under the connector's handling modes; nil when
// Debezium gives none.
func (m *typeMapper) parseDefault(c relational.Column, expr string) any {
	if t := m.reg.get(c.TypeOID); t != nil && t.typtype == 'e' {
		s, ok := enumDefault(t.name, expr)
		if !ok {
			return nil
		}
		return m.convertDefault(c, s)
	}
	mt, ok := defaultMapperTypes[c.TypeOID]
	if !ok {
		return nil // domains, arrays and the types Debezium has no parser for
	}
	if mt.trimmed {
		expr = javaTrim(expr)
	}
	if strings.HasPrefix(expr, "NULL::") {
		return nil
	}
	s, ok := extractDefault(expr, mt.placeholder)
	if !ok {
		return nil
	}
	switch c.TypeOID {
	case oidBool:
		if strings.EqualFold(s, "true") {
			s = "t"
		} else {
			s = "f"
		}
	case oidInt2, oidInt4, oidInt8:
		bits := map[uint32]int{oidInt2: 16, oidInt4: 32, oidInt8: 64}[c.TypeOID]
		n, err := strconv.ParseInt(s, 10, bits) // Short/Integer/Long.parseLong: sign and decimal digits
		if err != nil {
			return nil
		}
		s = strconv.FormatInt(n, 10)
	case oidFloat4, oidFloat8:
		if !javaFloatText(s) {
			return nil
		}
		s = strings.TrimRight(javaTrim(s), "fFdD")
	case oidNumeric:
		return m.numericDefault(c, s)
	case oidUUID:
		u, ok := javaUUID(s)
		if !ok {
			return nil
		}
		s = u
	case oidTime:
		if strings.HasPrefix(s, "24:00") {
			// the JDBC driver's toLocalTime: LocalTime.MAX
			s = "23:59:59.999999"
		} else if len(s) == 5 {
			s += ":00"
		}
	case oidDate:
		if i := strings.IndexByte(s, ' '); i > 0 && !strings.HasSuffix(s, " BC") {
			s = s[:i] // toLocalDateTime of a date: the date
		}
	case oidTimestamp:
		if len(s) == 10 {
			s += " 00:00:00"
		}
	case oidTimestamptz:
		if len(s) == 10 {
			s += " 00:00:00+00" // the JVM zone of the reference runs is UTC
		}
	case oidInterval:
		if s == "epoch" {
			s = "00:00:00"
		}
	}
	return m.convertDefault(c, s)
}

// convertDefault converts a default's text as the column's values are.
func (m *typeMapper) convertDefault(c relational.Column, s string) any {
	c.Default = nil
	ct := m.column(c)
	if ct.omit {
		return nil
	}
	v, err := ct.fromText(s)
	if err != nil || v == nil {
		return nil
	}
	if _, isStruct := v.(*connect.Struct); isStruct {
		return nil // KAFKA-12694: Debezium gives a struct default up
	}
	return v
}

// numericDefault is Debezium's numeric parser (new BigDecimal) followed by
// its decimal conversion: scaled up to the column's scale, or down when
// only zeros go (else no default); no default for an unconstrained numeric
// under decimal.handling.mode=precise (VariableScaleDecimal).
func (m *typeMapper) numericDefault(c relational.Column, s string) any {
	u, scale, ok := javaBigDecimal(s)
	if !ok {
		return nil
	}
	if _, colScale, constrained := numericPrecisionScale(c.TypeMod); constrained {
		switch {
		case scale < colScale:
			u.Mul(u, pow10(colScale-scale))
		case scale > colScale:
			q, r := new(big.Int).QuoRem(u, pow10(scale-colScale), new(big.Int))
			if r.Sign() != 0 {
				return nil // BigDecimal.setScale without rounding throws
			}
			u = q
		}
		scale = colScale
	} else if m.h.decimal == decimalPrecise {
		return nil
	}
	if scale < 0 {
		u.Mul(u, pow10(-scale))
		scale = 0
	}
	switch m.h.decimal {
	case decimalPrecise:
		return connect.Decimal{Unscaled: u, Scale: scale}
	case decimalString:
		return plainDecimal(u, scale)
	}
	f, err := strconv.ParseFloat(plainDecimal(u, scale), 64)
	if err != nil {
		return nil
	}
	return f
}

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// plainDecimal is BigDecimal.toPlainString of unscaled×10^-scale (scale ≥ 0).
func plainDecimal(u *big.Int, scale int) string {
	neg := u.Sign() < 0
	d := new(big.Int).Abs(u).String()
	if scale > 0 {
		if len(d) <= scale {
			d = strings.Repeat("0", scale-len(d)+1) + d
		}
		d = d[:len(d)-scale] + "." + d[len(d)-scale:]
	}
	if neg {
		return "-" + d
	}
	return d
}

// extractDefault is Debezium's extractDefault(defaultValue, placeholder):
// the placeholder for a generated value, else the text between the first
// two quotes, else the whole text; ok is false where Debezium fails (an
// unpaired quote on a line) or has no value (NULL::…).
func extractDefault(expr, placeholder string) (string, bool) {
	if defaultFunction.MatchString(expr) || defaultCurrentTimes[strings.ToLower(expr)] {
		return placeholder, true
	}
	if !strings.Contains(expr, "'") {
		if strings.HasPrefix(expr, "NULL::") {
			return "", false
		}
		return expr, true
	}
	// '(.*?)' found anywhere: the first quote followed, on the same line,
	// by a second one.
	for i := 0; i < len(expr); i++ {
		if expr[i] != '\'' {
			continue
		}
		for j := i + 1; j < len(expr); j++ {
			if expr[j] == '\'' {
				return expr[i+1 : j], true
			}
			if javaLineTerminator(expr, j) {
				break
			}
		}
	}
	return "", false
}

// javaLineTerminator reports whether s[i:] starts with a character Java's
// '.' does not match (\n, \r, U+0085, U+2028, U+2029).
func javaLineTerminator(s string, i int) bool {
	switch {
	case s[i] == '\n' || s[i] == '\r':
		return true
	case strings.HasPrefix(s[i:], "\u0085"), strings.HasPrefix(s[i:], "\u2028"), strings.HasPrefix(s[i:], "\u2029"):
		return true
	}
	return false
}

// enumDefault is Debezium's extractEnumDefault: the text between the
// quotes of '<label>'::<type>, when the cast names the column's enum type.
// A doubled quote inside the label stays doubled, as in Debezium.
func enumDefault(typname, expr string) (string, bool) {
	i := strings.LastIndex(expr, "::")
	if i < 0 {
		return "", false
	}
	parts := typeIDParts(expr[i+2:])
	if len(parts) == 0 {
		return "", false
	}
	name := parts[0]
	if len(parts) > 1 {
		name = parts[1]
	}
	if name != typname {
		return "", false
	}
	v := expr[:i]
	if len(v) < 2 || v[0] != '\'' || v[len(v)-1] != '\'' {
		return "", false
	}
	return v[1 : len(v)-1], true
}

// typeIDParts splits a (possibly quoted, schema-qualified) type name as
// Debezium's TypeId.parse: at dots outside double quotes, quotes removed
// ("" inside quotes is one quote), empty parts dropped.
func typeIDParts(s string) []string {
	var parts []string
	var cur strings.Builder
	inQuotes := false
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '"':
			if inQuotes && i+1 < len(s) && s[i+1] == '"' {
				cur.WriteByte('"')
				i++
			} else {
				inQuotes = !inQuotes
			}
		case ch == '.' && !inQuotes:
			if cur.Len() > 0 {
				parts = append(parts, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteByte(ch)
		}
	}
	if cur.Len() > 0 {
		parts = append(parts, cur.String())
	}
	return parts
}

// javaTrim is Java's String.trim: leading and trailing characters ≤ ' '.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

var javaFloatRe = regexp.MustCompile(`^[+-]?(NaN|Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?)$`)

// javaFloatText reports whether Double.parseDouble / Float.parseFloat
// accept s as a decimal number (hexadecimal floats aside), NaN or Infinity;
// the number's value is then what strconv.ParseFloat reads.
func javaFloatText(s string) bool {
	return javaFloatRe.MatchString(javaTrim(s))
}

var javaBigDecimalRe = regexp.MustCompile(`^([+-]?)([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$`)

// javaBigDecimal parses s as new BigDecimal(String): the unscaled value and
// the scale (negative for a positive exponent beyond the fraction digits).
func javaBigDecimal(s string) (*big.Int, int, bool) {
	mm := javaBigDecimalRe.FindStringSubmatch(s)
	if mm == nil || mm[2]+mm[3] == "" {
		return nil, 0, false
	}
	u, ok := new(big.Int).SetString(mm[1]+mm[2]+mm[3], 10)
	if !ok {
		return nil, 0, false
	}
	scale := len(mm[3])
	if mm[4] != "" {
		e, err := strconv.Atoi(mm[4])
		if err != nil {
			return nil, 0, false
		}
		scale -= e
	}
	return u, scale, true
}

// javaUUID is UUID.fromString followed by toString: five dash-separated
// hexadecimal groups (each at most its width), in canonical lower case.
func javaUUID(s string) (string, bool) {
	if len(s) > 36 {
		return "", false
	}
	g := strings.Split(s, "-")
	if len(g) != 5 {
		return "", false
	}
	widths := []int{8, 4, 4, 4, 12}
	var b strings.Builder
	for i, part := range g {
		if part == "" || len(part) > 16 {
			return "", false
		}
		n, err := strconv.ParseUint(strings.TrimPrefix(part, "+"), 16, 64)
		if err != nil {
			return "", false
		}
		x := strconv.FormatUint(n, 16)
		if len(x) > widths[i] {
			x = x[len(x)-widths[i]:] // Java masks each group to its bits
		}
		if i > 0 {
			b.WriteByte('-')
		}
		b.WriteString(strings.Repeat("0", widths[i]-len(x)) + x)
	}
	return b.String(), true
}
