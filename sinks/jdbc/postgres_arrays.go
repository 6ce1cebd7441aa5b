package jdbc

import (
	"fmt"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/jackc/pgx/v5/pgtype"
)

// typedColumn returns column i of rows as an array pgx sends in binary
// (int8[], float8[], float4[], bool[], numeric[] or timestamp[]) and its
// SQL array type, when the column's SQL type sqlType and the schema of
// every row's value allow it without changing the value the text path
// (textValue and a cast) would store: integers into bigint/integer/
// smallint, FLOAT64 into double precision, FLOAT32 into real, BOOLEAN into
// boolean, Kafka Connect Decimal into numeric, Debezium's Timestamp,
// MicroTimestamp and NanoTimestamp (wall-clock values encoded as UTC,
// truncated to microseconds as textValue does) into timestamp without
// time zone. ok=false keeps the column on the text path. Binary values
// spare PostgreSQL the text parsing (about a quarter of an upsert's
// server CPU in bench/jdbc).
func typedColumn(rows []*change, i, nk int, sqlType string) (arr any, arrType string, ok bool) {
	at := func(c *change) field {
		if i < nk {
			return c.key[i]
		}
		return c.cols[i-nk]
	}
	first := at(rows[0]).schema
	for _, c := range rows[1:] {
		if s := at(c).schema; s != first && (s.Name != first.Name || s.Type != first.Type) {
			return nil, "", false
		}
	}
	switch {
	case first.Name == "" && (first.Type == connect.Int8 || first.Type == connect.Int16 || first.Type == connect.Int32 || first.Type == connect.Int64) &&
		(sqlType == "bigint" || sqlType == "integer" || sqlType == "smallint"):
		out := make([]pgtype.Int8, len(rows))
		for r, c := range rows {
			if v := at(c).value; v != nil {
				n, isInt := asInt(v)
				if !isInt {
					return nil, "", false
				}
				out[r] = pgtype.Int8{Int64: n, Valid: true}
			}
		}
		return out, "int8[]", true
	case first.Name == "" && first.Type == connect.Float64 && sqlType == "double precision":
		out := make([]pgtype.Float8, len(rows))
		for r, c := range rows {
			if v := at(c).value; v != nil {
				f, isF := v.(float64)
				if !isF {
					return nil, "", false
				}
				out[r] = pgtype.Float8{Float64: f, Valid: true}
			}
		}
		return out, "float8[]", true
	case first.Name == "" && first.Type == connect.Float32 && sqlType == "real":
		out := make([]pgtype.Float4, len(rows))
		for r, c := range rows {
			if v := at(c).value; v != nil {
				f, isF := v.(float32)
				if !isF {
					return nil, "", false
				}
				out[r] = pgtype.Float4{Float32: f, Valid: true}
			}
		}
		return out, "float4[]", true
	case first.Name == "" && first.Type == connect.Boolean && sqlType == "boolean":
		out := make([]pgtype.Bool, len(rows))
		for r, c := range rows {
			if v := at(c).value; v != nil {
				b, isB := v.(bool)
				if !isB {
					return nil, "", false
				}
				out[r] = pgtype.Bool{Bool: b, Valid: true}
			}
		}
		return out, "bool[]", true
	case first.Name == connect.DecimalName && strings.HasPrefix(sqlType, "numeric"):
		out := make([]pgtype.Numeric, len(rows))
		for r, c := range rows {
			if v := at(c).value; v != nil {
				d, isD := v.(connect.Decimal)
				if !isD || d.Unscaled == nil {
					return nil, "", false
				}
				out[r] = pgtype.Numeric{Int: d.Unscaled, Exp: int32(-d.Scale), Valid: true}
			}
		}
		return out, "numeric[]", true
	case (first.Name == dbzTimestamp || first.Name == dbzMicroTimestamp || first.Name == dbzNanoTimestamp) &&
		strings.HasPrefix(sqlType, "timestamp") && !strings.Contains(sqlType, "with time zone"):
		out := make([]pgtype.Timestamp, len(rows))
		for r, c := range rows {
			if v := at(c).value; v != nil {
				n, isInt := asInt(v)
				if !isInt {
					return nil, "", false
				}
				var t time.Time
				switch first.Name {
				case dbzTimestamp:
					t = time.UnixMilli(n)
				case dbzMicroTimestamp:
					t = time.UnixMicro(n)
				default:
					t = time.Unix(0, n).Truncate(time.Microsecond)
				}
				out[r] = pgtype.Timestamp{Time: t.UTC(), Valid: true}
			}
		}
		return out, "timestamp[]", true
	}
	return nil, "", false
}

// textColumn is column i of rows as text (textValue), NUL characters
// removed (PostgreSQL text cannot hold them).
// An array into a PostgreSQL array column (sqlType "….[]") is written as
// an array literal ({"a","b",NULL}), any other array as JSON.
func textColumn(rows []*change, i, nk int, table, name, sqlType string) ([]pgtype.Text, error) {
	out := make([]pgtype.Text, len(rows))
	native := strings.HasSuffix(sqlType, "]")
	for r, c := range rows {
		var f field
		if i < nk {
			f = c.key[i]
		} else {
			f = c.cols[i-nk]
		}
		var s string
		var ok bool
		var err error
		if items, isArr := f.value.([]any); native && isArr && f.schema.Type == connect.Array {
			s, ok, err = arrayLiteral(f.schema.ValueSchema, items)
		} else {
			s, ok, err = textValue(f.schema, f.value)
		}
		if err != nil {
			return nil, fmt.Errorf("table %s column %s: %w", table, name, err)
		}
		if ok {
			if strings.IndexByte(s, 0) >= 0 {
				s = strings.ReplaceAll(s, "\x00", "")
			}
			out[r] = pgtype.Text{String: s, Valid: true}
		}
	}
	return out, nil
}

// arrayLiteral renders items (element schema elem) as a PostgreSQL array
// literal: each element textValue's text, double-quoted with backslash and
// double quote escaped, NULL for a null.
func arrayLiteral(elem *connect.Schema, items []any) (string, bool, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, v := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		if sub, ok := v.([]any); ok && elem != nil && elem.Type == connect.Array {
			s, _, err := arrayLiteral(elem.ValueSchema, sub)
			if err != nil {
				return "", false, err
			}
			b.WriteString(s)
			continue
		}
		var s string
		var ok bool
		var err error
		if elem != nil {
			s, ok, err = textValue(elem, v)
		} else {
			s, ok, err = textValue(&connect.Schema{}, v)
		}
		if err != nil {
			return "", false, err
		}
		if !ok {
			b.WriteString("NULL")
			continue
		}
		if elem != nil && elem.Type == connect.Bytes && elem.Name == "" {
			s = `\x` + s // bytea elements in hex input form
		}
		b.WriteByte('"')
		for _, r := range s {
			if r == '"' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String(), true, nil
}
