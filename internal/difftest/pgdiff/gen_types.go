package pgdiff

import (
	"math/rand"
	"strings"
)

// colType is one entry of the generator's type matrix: a PostgreSQL type
// (with or without typmod) and SQL literals of its values, extremes
// included. NULL is added by the generator.
type colType struct {
	sql  string   // type as written in CREATE TABLE (schema-qualified for enums/domains: see typeRef)
	vals []string // SQL literals, each valid for the type
	// arr: the type may be an array element type (T[] with NULL elements).
	arr bool
	// defs are DEFAULT expressions of the type beyond its literals
	// (functions, expressions, casts).
	defs []string
	// key: the type may be a primary key column.
	key bool
	// custom: "enum" or "domain" (created per schema by the generator).
	custom string
}

// text values: quotes, non-ASCII letters, 4-byte characters, escapes.
var textVals = []string{`'plain'`, `'it''s'`, `'Größe'`, `'日本語のテキスト'`, `'emoji 😀 𝄞'`, `''`, `' lead and trail '`,
	`'back\slash'`, `E'tab\tnew\nline'`, `'"double"'`, `'ĀāĂă ŉ ſ'`}

var typeMatrix = []colType{
	{sql: "smallint", vals: []string{"0", "-32768", "32767", "7"}, arr: true, key: true, defs: []string{"(1 + 2)"}},
	{sql: "integer", vals: []string{"0", "-2147483648", "2147483647", "42"}, arr: true, key: true, defs: []string{"(2 * 21)", "'5'::integer"}},
	{sql: "bigint", vals: []string{"0", "-9223372036854775808", "9223372036854775807", "1234567890123"}, arr: true, key: true},
	{sql: "real", vals: []string{"1.5", "-3.4e38", "1e-7", "0.1", "'NaN'", "'Infinity'", "1.4e-45", "3.4028235e38"}, arr: true, defs: []string{"0.5"}},
	{sql: "double precision", vals: []string{"2.25", "1e-300", "4.9e-324", "0.1", "1.7976931348623157e308", "'-Infinity'", "-0.0", "123456789.125"}, arr: true},
	{sql: "numeric(10,3)", vals: []string{"12345.678", "-0.001", "0", "1.5", "9999999.999"}, arr: true, key: true, defs: []string{"0", "1.25"}},
	{sql: "numeric(5)", vals: []string{"12345", "-99999", "0"}, arr: true},
	{sql: "numeric(12,4)", vals: []string{"10.10", "0.0001", "-1234.5"}, defs: []string{"0"}},
	{sql: "numeric", vals: []string{"10.10", "3.14159", "1e20", "0.000", "-0.5", "123456789012345678901234567890.123456789", "'NaN'", "100"}, arr: true, defs: []string{"1.50"}},
	{sql: "boolean", vals: []string{"true", "false"}, arr: true, defs: []string{"true"}},
	{sql: "char(5)", vals: []string{"'ab'", "''", "'ÄÖÜßé'"}, arr: true},
	{sql: "varchar(20)", vals: []string{"'varchar'", "''", "'Größe'", "'😀😀'"}, arr: true, key: true, defs: []string{"'dflt'"}},
	{sql: "varchar", vals: textVals, arr: true, key: true},
	{sql: "text", vals: textVals, arr: true, key: true, defs: []string{"'it''s'", "''", "'x'::text", "current_user"}},
	{sql: `"char"`, vals: []string{"'x'", "'Z'"}},
	{sql: "uuid", vals: []string{"'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", "'00000000-0000-0000-0000-000000000000'"}, arr: true, key: true, defs: []string{"gen_random_uuid()"}},
	{sql: "json", vals: []string{`'{"b": 2, "a": [1]}'`, `'null'`, `'"str ü"'`}},
	{sql: "jsonb", vals: []string{`'{"b": 2, "a": [1]}'`, `'[]'`, `'{"k": "😀"}'`}, defs: []string{`'{}'::jsonb`}},
	{sql: "xml", vals: []string{`'<a><b>x &amp; y</b></a>'`}},
	{sql: "bytea", vals: []string{`'\x00ff10'`, `'\x'`, `'\xfbff'`}, arr: true, defs: []string{`'\x01'::bytea`}},
	{sql: "bit(1)", vals: []string{"B'1'", "B'0'"}},
	{sql: "bit(8)", vals: []string{"B'10100011'", "B'00000001'"}},
	{sql: "varbit(16)", vals: []string{"B'101'", "B''", "B'1111111111111111'"}},
	{sql: "date", vals: []string{"'2024-02-29'", "'1969-12-31'", "'1970-01-01'", "'0044-03-15 BC'", "'9999-12-31'"}, arr: true, key: true, defs: []string{"current_date", "'2000-01-01'::date"}},
	{sql: "time", vals: []string{"'13:14:15.123456'", "'00:00:00'", "'24:00:00'"}, arr: true},
	{sql: "time(3)", vals: []string{"'13:14:15.123'", "'23:59:59.999'"}},
	{sql: "time(0)", vals: []string{"'13:14:15'"}},
	{sql: "timetz", vals: []string{"'13:14:15.123456+05:30'", "'00:00:00+00'"}},
	{sql: "timestamp", vals: []string{"'2024-02-29 13:14:15.123456'", "'1969-12-31 23:59:59.999999'", "'1970-01-01 00:00:00'"}, arr: true, key: true, defs: []string{"now()", "'2020-01-01 00:00:00'::timestamp"}},
	{sql: "timestamp(3)", vals: []string{"'2024-02-29 13:14:15.123'", "'1969-12-31 23:59:59.999'"}},
	{sql: "timestamptz", vals: []string{"'2024-02-29 13:14:15.123456+05:30'", "'1900-01-01 00:00:00+00'", "'1970-01-01 00:00:00+00'"}, arr: true, defs: []string{"now()", "CURRENT_TIMESTAMP"}},
	{sql: "timestamptz(3)", vals: []string{"'2024-02-29 13:14:15.123+05:30'", "'1970-01-01 00:00:00.001+00'"}, defs: []string{"now()"}},
	{sql: "interval", vals: []string{"'1 year 2 months 3 days 04:05:06.789'", "'-1 days -02:00:00.5'", "'0'", "'178000000 years'"}, arr: true, defs: []string{"'1 day'::interval"}},
	{sql: "money", vals: []string{"12.34", "-92233720368547758.08", "0"}},
	{sql: "inet", vals: []string{"'192.168.0.1'", "'::1/128'"}, arr: true},
	{sql: "cidr", vals: []string{"'10.0.0.0/8'"}},
	{sql: "macaddr", vals: []string{"'08:00:2b:01:02:03'"}},
	{sql: "int4range", vals: []string{"'[1,10)'", "'empty'"}},
	{sql: "point", vals: []string{"'(1.5,2.5)'"}},
	{sql: "oid", vals: []string{"42", "4294967295"}},
	{custom: "enum", vals: []string{"'sad'", "'ok'", "'happy'"}, arr: true},
	{custom: "domain_int", vals: []string{"5", "1", "2147483647"}, key: true},
	{custom: "domain_text", vals: []string{"'dom'", "''", "'Größe'"}},
	{custom: "domain_num", vals: []string{"12.5", "-0.5"}},
}

// nameType is PostgreSQL's name (63-byte identifiers; longer values are
// cut). Not in typeMatrix: its index draws would change every seed.
var nameType = colType{sql: "name", vals: []string{"'a_name'", "''", "'Größe 😀'", "'" + strings.Repeat("long", 20) + "'"},
	defs: []string{"'dflt'::name", "current_user"}}

func pick[T any](r *rand.Rand, s []T) T { return s[r.Intn(len(s))] }

// chance reports true with probability p.
func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }
