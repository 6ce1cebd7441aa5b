package mariadiff

import "math/rand"

// colType is one entry of the generator's type matrix: a MariaDB column
// type with its attributes (UNSIGNED, ZEROFILL, length, precision,
// character set) and SQL literals of its values, extremes included. NULL
// is added by the generator.
type colType struct {
	sql  string   // as written in CREATE TABLE
	vals []string // SQL literals, each valid for the type under the default sql_mode
	// defs are DEFAULT expressions beyond the literals.
	defs []string
	// key: the type may be a primary key column (keyLiteral knows it).
	key bool
	// text: a character column (masks, truncation, message.key.columns).
	text bool
	// noDefault: BLOB/TEXT/JSON/GEOMETRY take no literal DEFAULT in older
	// servers' DDL dialect; the generator gives them none.
	noDefault bool
	// grow is a wider type MODIFY COLUMN may change it to ("" = none).
	grow string
}

var textVals = []string{`'plain'`, `'it''s'`, `'Größe'`, `'日本語'`, `'emoji 😀 𝄞'`, `''`, `' lead and trail '`,
	`'back\\slash'`, `'tab\tnew\nline'`, `'"double"'`, `'ĀāĂă'`}

var latin1Vals = []string{`'plain'`, `'café'`, `''`, `'it''s'`, `'Ärger über Öl'`, `'naïve ÿ'`}

var typeMatrix = []colType{
	{sql: "TINYINT", vals: []string{"0", "-128", "127", "7"}, grow: "SMALLINT"},
	{sql: "TINYINT UNSIGNED", vals: []string{"0", "255", "200"}},
	{sql: "TINYINT(1)", vals: []string{"0", "1", "-1", "5"}, defs: []string{"1"}},
	{sql: "BOOLEAN", vals: []string{"TRUE", "FALSE", "2"}, defs: []string{"FALSE"}},
	{sql: "SMALLINT", vals: []string{"0", "-32768", "32767"}, grow: "INT"},
	{sql: "SMALLINT UNSIGNED ZEROFILL", vals: []string{"0", "65535", "42"}},
	{sql: "MEDIUMINT", vals: []string{"-8388608", "8388607", "0"}},
	{sql: "MEDIUMINT UNSIGNED", vals: []string{"16777215", "1"}},
	{sql: "INT", vals: []string{"0", "-2147483648", "2147483647", "42"}, key: true, defs: []string{"(2 * 21)"}, grow: "BIGINT"},
	{sql: "INT UNSIGNED", vals: []string{"0", "4294967295", "3000000000"}, key: true},
	{sql: "INT(5) ZEROFILL", vals: []string{"7", "123456", "0"}},
	{sql: "BIGINT", vals: []string{"0", "-9223372036854775808", "9223372036854775807", "1234567890123"}, key: true},
	{sql: "BIGINT UNSIGNED", vals: []string{"0", "18446744073709551615", "9223372036854775808"}, key: true},
	{sql: "DECIMAL(10,3)", vals: []string{"12345.678", "-0.001", "0", "1.5", "9999999.999"}, key: true, defs: []string{"1.25"}, grow: "DECIMAL(20,6)"},
	{sql: "DECIMAL(65,30)", vals: []string{"12345678901234567890.123456789012345678901234567890", "-99999999999999999999999999999999999.999999999999999999999999999999", "0.000000000000000000000000000001"}},
	{sql: "DECIMAL(5,0)", vals: []string{"12345", "-99999", "0"}},
	{sql: "DECIMAL(8,2) UNSIGNED ZEROFILL", vals: []string{"1.5", "999999.99"}},
	{sql: "NUMERIC(4,4)", vals: []string{"0.1234", "-0.9999"}},
	{sql: "FLOAT", vals: []string{"1.5", "-3.4e38", "1e-7", "0.1", "3.4e38"}, defs: []string{"0.5"}},
	{sql: "FLOAT(7,3)", vals: []string{"1234.567", "-0.5"}},
	{sql: "DOUBLE", vals: []string{"2.25", "1e-300", "0.1", "1.7976931348623157e308", "-0.0", "123456789.125"}},
	{sql: "DOUBLE UNSIGNED", vals: []string{"2.5", "0"}},
	{sql: "CHAR(5)", vals: []string{"'ab'", "''", "'ÄÖÜßé'"}, text: true, key: true},
	{sql: "CHAR(6) CHARACTER SET latin1", vals: latin1Vals[:4], text: true},
	{sql: "VARCHAR(20)", vals: []string{"'varchar'", "''", "'Größe'", "'😀😀'"}, text: true, key: true, defs: []string{"'dflt'"}, grow: "VARCHAR(60)"},
	{sql: "VARCHAR(40) CHARACTER SET latin1 COLLATE latin1_swedish_ci", vals: latin1Vals, text: true, key: true},
	{sql: "VARCHAR(30) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin", vals: textVals[:9], text: true},
	{sql: "VARCHAR(10) CHARACTER SET binary", vals: []string{"'bin'", "X'00FF'", "''"}},
	{sql: "TINYTEXT", vals: textVals, text: true, noDefault: true},
	{sql: "TEXT", vals: textVals, text: true, noDefault: true, grow: "MEDIUMTEXT"},
	{sql: "TEXT CHARACTER SET latin1", vals: latin1Vals, text: true, noDefault: true},
	{sql: "MEDIUMTEXT", vals: textVals, text: true, noDefault: true},
	{sql: "LONGTEXT", vals: append([]string{"REPEAT('long ü ', 500)"}, textVals[:4]...), text: true, noDefault: true},
	{sql: "BINARY(4)", vals: []string{"X'DEADBEEF'", "X'00'", "''"}},
	{sql: "VARBINARY(8)", vals: []string{"X'0102'", "X''", "X'FFFFFFFFFFFFFFFF'"}},
	{sql: "TINYBLOB", vals: []string{"X'00FF10'", "X''"}, noDefault: true},
	{sql: "BLOB", vals: []string{"X'00FF10'", "X''", "X'FBFF'", "REPEAT(X'AB', 3000)"}, noDefault: true},
	{sql: "LONGBLOB", vals: []string{"X'0001'", "REPEAT(X'CD', 70000)"}, noDefault: true},
	{sql: "DATE", vals: []string{"'2024-02-29'", "'1969-12-31'", "'1970-01-01'", "'9999-12-31'", "'1000-01-01'", "'0000-00-00'", "'0018-04-01'", "'2024-00-00'"}, key: true, defs: []string{"'2000-01-01'", "'0000-00-00'"}},
	{sql: "DATETIME", vals: []string{"'2024-02-29 13:14:15'", "'1000-01-01 00:00:00'", "'9999-12-31 23:59:59'", "'0000-00-00 00:00:00'", "'1969-12-31 23:59:59'"}, defs: []string{"CURRENT_TIMESTAMP", "'2020-01-01 00:00:00'"}},
	{sql: "DATETIME(1)", vals: []string{"'2024-02-29 13:14:15.1'", "'1970-01-01 00:00:00.9'"}},
	{sql: "DATETIME(3)", vals: []string{"'2024-02-29 13:14:15.123'", "'1969-12-31 23:59:59.999'"}, key: true, defs: []string{"CURRENT_TIMESTAMP(3)"}},
	{sql: "DATETIME(6)", vals: []string{"'2024-02-29 13:14:15.123456'", "'1969-12-31 23:59:59.999999'", "'0000-00-00 00:00:00.000000'"}},
	{sql: "TIMESTAMP NULL", vals: []string{"'2024-02-29 13:14:15'", "'1970-01-02 00:00:01'", "'2038-01-18 03:14:07'"}, defs: []string{"CURRENT_TIMESTAMP", "NULL"}},
	{sql: "TIMESTAMP(2) NULL", vals: []string{"'2024-02-29 13:14:15.12'", "'2000-01-01 00:00:00.5'"}},
	{sql: "TIMESTAMP(6) NULL", vals: []string{"'2024-02-29 13:14:15.654321'", "'2038-01-18 03:14:07.999999'"}, defs: []string{"CURRENT_TIMESTAMP(6)"}},
	{sql: "TIMESTAMP NOT NULL DEFAULT '0000-00-00 00:00:00'", vals: []string{"'2024-02-29 13:14:15'", "'0000-00-00 00:00:00'"}, noDefault: true},
	{sql: "TIME", vals: []string{"'13:14:15'", "'00:00:00'", "'-838:59:59'", "'838:59:59'", "'-00:00:01'"}},
	{sql: "TIME(3)", vals: []string{"'13:14:15.123'", "'23:59:59.999'"}},
	{sql: "TIME(6)", vals: []string{"'13:14:15.123456'", "'-838:59:59.000000'", "'-01:02:03.500000'"}},
	{sql: "YEAR", vals: []string{"2024", "1901", "2155", "0", "70", "69"}, defs: []string{"2000"}},
	{sql: "ENUM('small','medium','large')", vals: []string{"'small'", "'large'"}, defs: []string{"'medium'"}, grow: "ENUM('small','medium','large','huge')"},
	{sql: "ENUM('à','é','plain') CHARACTER SET latin1", vals: []string{"'à'", "'plain'"}},
	{sql: "SET('a','b','c')", vals: []string{"'a,c'", "''", "'b'", "'a,b,c'"}, defs: []string{"'a'"}},
	{sql: "BIT(1)", vals: []string{"b'1'", "b'0'"}, defs: []string{"b'1'"}},
	{sql: "BIT(7)", vals: []string{"b'1010001'", "b'0000001'"}},
	{sql: "BIT(12)", vals: []string{"b'101000000011'", "b'000000000001'"}},
	{sql: "BIT(64)", vals: []string{"b'1111111111111111111111111111111111111111111111111111111111111111'", "b'1'"}},
	{sql: "JSON", vals: []string{`'{"b": 2, "a": [1, 2.5, null]}'`, `'[]'`, `'"str ü"'`, `'null'`, `'{"k": "😀"}'`}, noDefault: true},
}

func pick[T any](r *rand.Rand, s []T) T { return s[r.Intn(len(s))] }

// chance reports true with probability p.
func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }
