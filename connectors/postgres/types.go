package postgres

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/relational"
)

// PostgreSQL type OIDs (pg_type.oid) mapped here.
const (
	oidBool        = 16
	oidBytea       = 17
	oidName        = 19
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidJSON        = 114
	oidFloat4      = 700
	oidFloat8      = 701
	oidBPChar      = 1042
	oidVarchar     = 1043
	oidDate        = 1082
	oidTimestamp   = 1114
	oidTimestamptz = 1184
	oidNumeric     = 1700
	oidUUID        = 2950
	oidJSONB       = 3802
)

// Logical schema names Debezium uses with its default modes.
const (
	nameDate           = "io.debezium.time.Date"
	nameTimestamp      = "io.debezium.time.Timestamp"
	nameMicroTimestamp = "io.debezium.time.MicroTimestamp"
	nameZonedTimestamp = "io.debezium.time.ZonedTimestamp"
	nameUUID           = "io.debezium.data.Uuid"
	nameJSON           = "io.debezium.data.Json"
	nameVarScale       = "io.debezium.data.VariableScaleDecimal"
)

// unavailableValue is Debezium's unavailable.value.placeholder default, used
// for unchanged TOASTed columns that pgoutput does not send.
const unavailableValue = "__debezium_unavailable_value"

// colType is how one column maps to Kafka Connect: its field schema, the
// conversion from the PostgreSQL text representation (shared by snapshot and
// streaming so both produce identical values), and the value Debezium uses
// for a NULL in a NOT NULL column (delete events carry only key columns).
type colType struct {
	schema   *connect.Schema
	fromText func(string) (any, error)
	fallback any
	stringy  bool // string-typed: unchanged TOAST becomes the placeholder
	bytesy   bool
}

// numericPrecisionScale decodes a numeric atttypmod; ok is false for an
// unconstrained numeric.
func numericPrecisionScale(typmod int32) (precision, scale int, ok bool) {
	if typmod < 4 {
		return 0, 0, false
	}
	t := typmod - 4
	return int(t>>16) & 0xffff, int(t & 0xffff), true
}

// timePrecision returns the fractional-second digits of a timestamp column
// (atttypmod, -1 = the default 6).
func timePrecision(typmod int32) int {
	if typmod < 0 || typmod > 6 {
		return 6
	}
	return int(typmod)
}

func varScaleSchema(optional bool) *connect.Schema {
	b := connect.StructSchema().Name(nameVarScale).Version(1).Doc("Variable scaled decimal").
		Field("scale", connect.Prim(connect.Int32, false)).
		Field("value", connect.Prim(connect.Bytes, false))
	if optional {
		b.Optional()
	}
	return b.Build()
}

// mapColumn returns the Connect mapping of a column under Debezium's default
// decimal.handling.mode=precise, time.precision.mode=adaptive,
// binary.handling.mode=bytes. Types not listed map to a string holding the
// PostgreSQL text value (Debezium maps several of them differently; see the
// package documentation).
func mapColumn(c relational.Column) colType {
	opt := c.Optional
	prim := func(t connect.Type) *connect.SchemaBuilder {
		b := connect.NewSchema(t)
		if opt {
			b.Optional()
		}
		return b
	}
	var ct colType
	switch c.TypeOID {
	case oidInt2:
		ct = colType{schema: prim(connect.Int16).Build(), fallback: int16(0), fromText: func(s string) (any, error) {
			n, err := strconv.ParseInt(s, 10, 16)
			return int16(n), err
		}}
	case oidInt4:
		ct = colType{schema: prim(connect.Int32).Build(), fallback: int32(0), fromText: func(s string) (any, error) {
			n, err := strconv.ParseInt(s, 10, 32)
			return int32(n), err
		}}
	case oidInt8:
		ct = colType{schema: prim(connect.Int64).Build(), fallback: int64(0), fromText: func(s string) (any, error) {
			return strconv.ParseInt(s, 10, 64)
		}}
	case oidBool:
		ct = colType{schema: prim(connect.Boolean).Build(), fallback: false, fromText: parseBool}
	case oidFloat4:
		ct = colType{schema: prim(connect.Float32).Build(), fallback: float32(0), fromText: func(s string) (any, error) {
			f, err := strconv.ParseFloat(s, 32)
			return float32(f), err
		}}
	case oidFloat8:
		ct = colType{schema: prim(connect.Float64).Build(), fallback: float64(0), fromText: func(s string) (any, error) {
			return strconv.ParseFloat(s, 64)
		}}
	case oidNumeric:
		if p, s, ok := numericPrecisionScale(c.TypeMod); ok {
			b := prim(connect.Bytes).Name(connect.DecimalName).Version(1).
				Param("scale", strconv.Itoa(s)).Param("connect.decimal.precision", strconv.Itoa(p))
			scale := s
			ct = colType{schema: b.Build(), fallback: connect.Decimal{Unscaled: new(big.Int), Scale: scale},
				fromText: func(txt string) (any, error) { return parseDecimal(txt, scale) }}
		} else {
			sch := varScaleSchema(opt)
			ct = colType{schema: sch, fromText: func(txt string) (any, error) { return parseVarScale(sch, txt) }}
			ct.fallback = varScaleStruct(sch, connect.Decimal{Unscaled: new(big.Int)})
		}
	case oidDate:
		ct = colType{schema: prim(connect.Int32).Name(nameDate).Version(1).Build(), fallback: int32(0), fromText: parseDate}
	case oidTimestamp:
		if timePrecision(c.TypeMod) <= 3 {
			ct = colType{schema: prim(connect.Int64).Name(nameTimestamp).Version(1).Build(), fallback: int64(0),
				fromText: func(s string) (any, error) {
					us, err := parseTimestampMicros(s)
					return floorDiv(us, 1000), err
				}}
		} else {
			ct = colType{schema: prim(connect.Int64).Name(nameMicroTimestamp).Version(1).Build(), fallback: int64(0),
				fromText: func(s string) (any, error) { return parseTimestampMicros(s) }}
		}
	case oidTimestamptz:
		digits := timePrecision(c.TypeMod)
		ct = colType{schema: prim(connect.String).Name(nameZonedTimestamp).Version(1).Build(),
			fallback: formatZoned(time.Unix(0, 0).UTC(), digits), stringy: true,
			fromText: func(s string) (any, error) {
				t, err := parseTimestamptz(s)
				if err != nil {
					return nil, err
				}
				return formatZoned(t, digits), nil
			}}
	case oidUUID:
		ct = colType{schema: prim(connect.String).Name(nameUUID).Version(1).Build(), fallback: "00000000-0000-0000-0000-000000000000", fromText: textValue}
	case oidJSON, oidJSONB:
		ct = colType{schema: prim(connect.String).Name(nameJSON).Version(1).Build(), fallback: "{}", fromText: textValue, stringy: true}
	case oidBytea:
		ct = colType{schema: prim(connect.Bytes).Build(), fallback: []byte{}, fromText: parseBytea, bytesy: true}
	default:
		// text, varchar, bpchar (padded as PostgreSQL returns it), name, and —
		// for now — every other type as its PostgreSQL text representation.
		ct = colType{schema: prim(connect.String).Build(), fallback: "", fromText: textValue, stringy: true}
	}
	if c.Default != nil {
		ct.schema.Default = c.Default
	}
	return ct
}

func textValue(s string) (any, error) { return s, nil }

func parseBool(s string) (any, error) {
	switch s {
	case "t", "true":
		return true, nil
	case "f", "false":
		return false, nil
	}
	return nil, fmt.Errorf("invalid boolean %q", s)
}

func parseBytea(s string) (any, error) {
	if !strings.HasPrefix(s, `\x`) {
		return nil, fmt.Errorf("bytea value not in hex format (bytea_output must be hex)")
	}
	b, err := hex.DecodeString(s[2:])
	if err != nil {
		return nil, fmt.Errorf("invalid bytea: %w", err)
	}
	return b, nil
}

// parseDecimalDigits parses PostgreSQL numeric text into an unscaled integer
// and the number of fraction digits.
func parseDecimalDigits(s string) (*big.Int, int, error) {
	if s == "NaN" || strings.Contains(s, "Infinity") {
		return nil, 0, fmt.Errorf("numeric %s has no decimal representation", s)
	}
	intPart, frac, _ := strings.Cut(s, ".")
	u, ok := new(big.Int).SetString(intPart+frac, 10)
	if !ok {
		return nil, 0, fmt.Errorf("invalid numeric %q", s)
	}
	return u, len(frac), nil
}

// parseDecimal returns s as connect.Decimal with exactly scale fraction digits.
func parseDecimal(s string, scale int) (any, error) {
	u, n, err := parseDecimalDigits(s)
	if err != nil {
		return nil, err
	}
	switch {
	case n < scale:
		u.Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale-n)), nil))
	case n > scale:
		u.Quo(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n-scale)), nil))
	}
	return connect.Decimal{Unscaled: u, Scale: scale}, nil
}

func varScaleStruct(sch *connect.Schema, d connect.Decimal) *connect.Struct {
	st := connect.NewStruct(sch)
	st.Put("scale", int32(d.Scale))
	st.Put("value", d.TwosComplement())
	return st
}

// parseVarScale returns io.debezium.data.VariableScaleDecimal {scale, value}.
func parseVarScale(sch *connect.Schema, s string) (any, error) {
	u, n, err := parseDecimalDigits(s)
	if err != nil {
		return nil, err
	}
	return varScaleStruct(sch, connect.Decimal{Unscaled: u, Scale: n}), nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// parseDate returns days since 1970-01-01 (io.debezium.time.Date).
func parseDate(s string) (any, error) {
	t, err := parseCalendar(s, "2006-01-02")
	if err != nil {
		return nil, err
	}
	return int32(floorDiv(t.Unix(), 86400)), nil
}

// parseCalendar parses a date/timestamp in DateStyle ISO, with an optional
// " BC" suffix.
func parseCalendar(s, layout string) (time.Time, error) {
	bc := strings.HasSuffix(s, " BC")
	s = strings.TrimSuffix(s, " BC")
	if s == "infinity" || s == "-infinity" {
		return time.Time{}, fmt.Errorf("%s has no representation", s)
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return time.Time{}, err
	}
	if bc {
		t = t.AddDate(1-2*t.Year(), 0, 0) // year N BC is astronomical year 1-N
	}
	return t, nil
}

// parseTimestampMicros returns microseconds since the epoch of a timestamp
// without time zone read as UTC (io.debezium.time.MicroTimestamp).
func parseTimestampMicros(s string) (int64, error) {
	t, err := parseCalendar(s, "2006-01-02 15:04:05.999999999")
	if err != nil {
		return 0, err
	}
	return t.Unix()*1_000_000 + int64(t.Nanosecond()/1000), nil
}

var tzSuffix = regexp.MustCompile(`([+-])(\d\d)(?::?(\d\d))?(?::?(\d\d))?$`)

// parseTimestamptz parses timestamptz text ("2024-02-29 07:44:15.654321+00",
// offsets may carry minutes and seconds).
func parseTimestamptz(s string) (time.Time, error) {
	bc := strings.HasSuffix(s, " BC")
	s = strings.TrimSuffix(s, " BC")
	m := tzSuffix.FindStringSubmatchIndex(s)
	if m == nil {
		return time.Time{}, fmt.Errorf("invalid timestamptz %q", s)
	}
	sub := tzSuffix.FindStringSubmatch(s)
	local := s[:m[0]]
	t, err := parseCalendar(local, "2006-01-02 15:04:05.999999999")
	if err != nil {
		return time.Time{}, err
	}
	h, _ := strconv.Atoi(sub[2])
	mi, _ := strconv.Atoi(sub[3])
	se, _ := strconv.Atoi(sub[4])
	off := time.Duration(h)*time.Hour + time.Duration(mi)*time.Minute + time.Duration(se)*time.Second
	if sub[1] == "-" {
		off = -off
	}
	t = t.Add(-off)
	if bc {
		t = t.AddDate(1-2*t.Year(), 0, 0)
	}
	return t.UTC(), nil
}

// formatZoned formats io.debezium.time.ZonedTimestamp: ISO-8601 in UTC with
// exactly digits fraction digits (the column precision), e.g.
// "2000-01-01T08:00:00.000000Z", as Debezium 3.6 emits it.
func formatZoned(t time.Time, digits int) string {
	t = t.UTC()
	layout := "2006-01-02T15:04:05"
	if digits > 0 {
		layout += "." + strings.Repeat("0", digits)
	}
	return t.Format(layout) + "Z"
}

var (
	defaultQuoted  = regexp.MustCompile(`^'((?:[^']|'')*)'(?:::[a-zA-Z0-9_ ."]+(?:\([0-9, ]+\))?(?:\[\])?)?$`)
	defaultLiteral = regexp.MustCompile(`^(-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false)$`)
)

// parseDefault converts a column default expression (pg_get_expr of
// pg_attrdef.adbin) to the column's Connect value when it is a constant.
// Debezium gives an expression it cannot evaluate (nextval() of a serial
// column, now(), …) the type's zero value as default ("default":0 on serial
// ids in the reference capture); so does this function.
func parseDefault(c relational.Column, expr string) any {
	expr = strings.TrimSpace(expr)
	for strings.HasPrefix(expr, "(") && strings.HasSuffix(expr, ")") {
		expr = strings.TrimSpace(expr[1 : len(expr)-1])
	}
	var text string
	if m := defaultQuoted.FindStringSubmatch(expr); m != nil {
		text = strings.ReplaceAll(m[1], "''", "'")
	} else if defaultLiteral.MatchString(expr) {
		text = expr
		if c.TypeOID == oidBool {
			text = expr[:1]
		}
	} else {
		c.Default = nil
		return mapColumn(c).fallback
	}
	c.Default = nil
	ct := mapColumn(c)
	v, err := ct.fromText(text)
	if err != nil {
		return ct.fallback
	}
	return v
}
