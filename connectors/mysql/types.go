package mysql

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"math/big"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/relational"
)

// kind is how a column's values are represented, as Debezium's
// MySqlValueConverters / BinlogValueConverters map them. The handling modes
// (valueModes) choose the kind and the final representation.
type kind int

// valueModes are the connector's value handling modes, as Debezium's
// decimal.handling.mode, time.precision.mode, bigint.unsigned.handling.mode
// and binary.handling.mode.
type valueModes struct {
	decimal       string       // precise (Decimal), double (float64), string (plain decimal text)
	time          string       // adaptive_time_microseconds, connect
	bigintPrecise bool         // BIGINT UNSIGNED as Decimal(20,0) instead of a wrapping int64
	binary        string       // bytes, base64, base64-url-safe, hex
	timeAdjuster  bool         // enable.time.adjuster: years 0-99 of DATE/DATETIME read as two-digit years
	tinyBool      *tinyIntBool // converters: a TinyIntOneToBooleanConverter; nil = none
}

// defaultModes are Debezium's defaults.
var defaultModes = valueModes{decimal: "precise", time: "adaptive_time_microseconds", binary: "bytes", timeAdjuster: true}

// adjustYear applies Debezium's enable.time.adjuster to a DATE or DATETIME
// value (MySqlValueConverters.adjustTemporal): a year from 0 to 69 gets
// 2000 years added, one from 70 to 99 gets 1900.
func (ct *colType) adjustYear(t time.Time) time.Time {
	if !ct.modes.timeAdjuster {
		return t
	}
	switch y := t.Year(); {
	case y >= 0 && y <= 69:
		return t.AddDate(2000, 0, 0)
	case y >= 70 && y <= 99:
		return t.AddDate(1900, 0, 0)
	}
	return t
}

const (
	kInt16 kind = iota
	kInt32
	kInt64
	kDecimal
	kFloat
	kDouble
	kString
	kDate      // io.debezium.time.Date: days since epoch
	kTimestamp // io.debezium.time.Timestamp: ms since epoch (DATETIME(0-3))
	kMicroTS   // io.debezium.time.MicroTimestamp (DATETIME(4-6))
	kZoned     // io.debezium.time.ZonedTimestamp (TIMESTAMP), UTC
	kMicroTime // io.debezium.time.MicroTime (TIME)
	kYear      // io.debezium.time.Year
	kEnum      // io.debezium.data.Enum
	kSet       // io.debezium.data.EnumSet
	kBool      // BIT(1)
	kTinyBool  // TINYINT(1) taken by a TinyIntOneToBooleanConverter (converters.go): > 0 is true
	kBits      // io.debezium.data.Bits
	kBytes     // BINARY, VARBINARY, BLOB
	kUDecimal  // BIGINT UNSIGNED with bigint.unsigned.handling.mode=precise: Decimal(20,0)
	kTimeMs    // TIME as a Connect Time: int32 ms of the day (time.precision.mode=connect)
	kGeometry  // io.debezium.data.geometry.Geometry {wkb, srid}
	kPoint     // io.debezium.data.geometry.Point {x, y, wkb, srid}
	kUUID      // MariaDB UUID: io.debezium.data.Uuid
	kInet      // MariaDB INET6 / INET4: the address as text
	kUnsupported
)

// Spatial schemas, as Debezium's io.debezium.data.geometry.Geometry and
// Point (the value of a spatial column is MySQL's internal format: a
// little-endian uint32 SRID, then WKB).
func geometrySchema(optional bool) *connect.SchemaBuilder {
	b := connect.StructSchema().Name("io.debezium.data.geometry.Geometry").Version(1).Doc("Geometry").
		Field("wkb", connect.Prim(connect.Bytes, false)).Field("srid", connect.Prim(connect.Int32, true))
	if optional {
		b.Optional()
	}
	return b
}

func pointSchema(optional bool) *connect.SchemaBuilder {
	b := connect.StructSchema().Name("io.debezium.data.geometry.Point").Version(1).Doc("Geometry (POINT)").
		Field("x", connect.Prim(connect.Float64, false)).Field("y", connect.Prim(connect.Float64, false)).
		Field("wkb", connect.Prim(connect.Bytes, true)).Field("srid", connect.Prim(connect.Int32, true))
	if optional {
		b.Optional()
	}
	return b
}

// colType is a column's mapping.
type colType struct {
	kind     kind
	schema   *connect.Schema
	col      *column
	modes    valueModes
	fallback any           // value of a NOT NULL column without default when the row has none
	post     func(any) any // column.truncate / column.mask.hash mapper of non-null values; nil = none
	mask     any           // column.mask.with.N.chars: the value of every row; nil = none
}

// newColType maps column c under the handling modes m, as Debezium 3.6's
// MySQL connector documents its data type mappings ("How the connector
// maps data types"), checked against real captures for every mode
// (testdata/debezium/mariadb_types_<mode>.jsonl).
func newColType(c *column, m valueModes) colType {
	ct := colType{col: c, modes: m}
	b := func(t connect.Type) *connect.SchemaBuilder { return connect.NewSchema(t) }
	var sb *connect.SchemaBuilder
	switch c.dataType {
	case "tinyint":
		ct.kind, sb = kInt16, b(connect.Int16)
	case "smallint":
		if c.unsigned {
			ct.kind, sb = kInt32, b(connect.Int32)
		} else {
			ct.kind, sb = kInt16, b(connect.Int16)
		}
	case "mediumint":
		ct.kind, sb = kInt32, b(connect.Int32)
	case "int", "integer":
		if c.unsigned {
			ct.kind, sb = kInt64, b(connect.Int64)
		} else {
			ct.kind, sb = kInt32, b(connect.Int32)
		}
	case "bigint":
		if c.unsigned && m.bigintPrecise {
			ct.kind = kUDecimal
			sb = b(connect.Bytes).Name(connect.DecimalName).Version(1).Param("scale", "0").Param("connect.decimal.precision", "20")
		} else {
			ct.kind, sb = kInt64, b(connect.Int64)
		}
	case "decimal", "numeric":
		ct.kind = kDecimal
		switch m.decimal {
		case "double":
			sb = b(connect.Float64)
		case "string":
			sb = b(connect.String)
		default:
			sb = b(connect.Bytes).Name(connect.DecimalName).Version(1).
				Param("scale", strconv.Itoa(c.scale)).Param("connect.decimal.precision", strconv.Itoa(c.precision))
		}
	case "float":
		if c.floatMD {
			// FLOAT(M,D): a double in Debezium (its schema for a FLOAT
			// with a scale)
			ct.kind, sb = kDouble, b(connect.Float64)
		} else {
			ct.kind, sb = kFloat, b(connect.Float32)
		}
	case "double", "real":
		ct.kind, sb = kDouble, b(connect.Float64)
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext":
		ct.kind, sb = kString, b(connect.String)
	case "json":
		ct.kind, sb = kString, b(connect.String).Name("io.debezium.data.Json").Version(1)
	case "date":
		if m.time == "connect" {
			ct.kind, sb = kDate, b(connect.Int32).Name(connect.DateName).Version(1)
		} else {
			ct.kind, sb = kDate, b(connect.Int32).Name("io.debezium.time.Date").Version(1)
		}
	case "datetime":
		switch {
		case m.time == "connect":
			ct.kind, sb = kTimestamp, b(connect.Int64).Name(connect.TimestampName).Version(1)
		case c.fsp <= 3:
			ct.kind, sb = kTimestamp, b(connect.Int64).Name("io.debezium.time.Timestamp").Version(1)
		default:
			ct.kind, sb = kMicroTS, b(connect.Int64).Name("io.debezium.time.MicroTimestamp").Version(1)
		}
	case "timestamp":
		ct.kind, sb = kZoned, b(connect.String).Name("io.debezium.time.ZonedTimestamp").Version(1)
	case "time":
		switch {
		case m.time == "connect":
			ct.kind, sb = kTimeMs, b(connect.Int32).Name(connect.TimeName).Version(1)
		default:
			ct.kind, sb = kMicroTime, b(connect.Int64).Name("io.debezium.time.MicroTime").Version(1)
		}
	case "year":
		ct.kind, sb = kYear, b(connect.Int32).Name("io.debezium.time.Year").Version(1)
	case "enum":
		ct.kind, sb = kEnum, b(connect.String).Name("io.debezium.data.Enum").Version(1).Param("allowed", strings.Join(c.options, ","))
	case "set":
		ct.kind, sb = kSet, b(connect.String).Name("io.debezium.data.EnumSet").Version(1).Param("allowed", strings.Join(c.options, ","))
	case "boolean": // declared BOOLEAN/BOOL in the DDL text (ddl_mariadb.go)
		ct.kind, sb = kBool, b(connect.Boolean)
	case "bit":
		if c.precision <= 1 {
			ct.kind, sb = kBool, b(connect.Boolean)
		} else {
			ct.kind, sb = kBits, b(connect.Bytes).Name("io.debezium.data.Bits").Version(1).Param("length", strconv.Itoa(c.precision))
		}
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		if m.binary == "" || m.binary == "bytes" {
			ct.kind, sb = kBytes, b(connect.Bytes)
		} else {
			ct.kind, sb = kBytes, b(connect.String)
		}
	case "uuid":
		// Debezium's MariaDbValueConverters (DBZ-9027): io.debezium.data.Uuid,
		// the binlog's 16 bytes read as one big-endian UUID
		ct.kind, sb = kUUID, b(connect.String).Name("io.debezium.data.Uuid").Version(1)
	case "inet6", "inet4":
		// Debezium 3.6 has no mapping for these (its MariaDB grammar has no
		// INET6/INET4 type); connectd emits the address as the server prints it
		ct.kind, sb = kInet, b(connect.String)
	case "point":
		ct.kind, sb = kPoint, pointSchema(c.Optional)
	case "geometry", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection", "geomcollection":
		ct.kind, sb = kGeometry, geometrySchema(c.Optional)
	default:
		ct.kind = kUnsupported
		return ct
	}
	if c.Optional {
		sb.Optional()
	}
	if c.comment != "" {
		sb.Doc(c.comment) // the column comment, as Debezium's field doc
	}
	ct.schema = sb.Build() // Default below sets it on the same schema
	if c.defaultSQL != nil {
		if v, ok := ct.defaultValue(*c.defaultSQL); ok {
			sb.Default(v)
		}
	}
	ct.fallback = relational.ZeroOf(ct.schema.Type)
	return ct
}

// defaultValue converts a COLUMN_DEFAULT literal (MariaDB quotes string
// literals; "NULL" and expressions such as current_timestamp() have no
// constant value).
func (ct *colType) defaultValue(lit string) (any, bool) {
	if lit == "NULL" || strings.HasSuffix(lit, ")") {
		return nil, false
	}
	quoted := len(lit) >= 2 && lit[0] == '\'' && lit[len(lit)-1] == '\''
	if quoted {
		lit = strings.ReplaceAll(lit[1:len(lit)-1], "''", "'")
	}
	if ct.kind == kDouble && ct.col.floatMD {
		// a FLOAT(M,D) DEFAULT is the literal's double (Debezium: 1234.567),
		// not the stored float's
		f, err := strconv.ParseFloat(lit, 64)
		return f, err == nil
	}
	if ct.kind == kYear && !quoted {
		// a two-digit YEAR DEFAULT is its year, as MariaDB stores it and
		// Debezium's default converter reads it: 1-69 → 2001-2069,
		// 70-99 → 1970-1999 (mariadiff seed 50); 0 stays 0 (deviation
		// debezium-year-zero)
		if n, err := strconv.Atoi(lit); err == nil && n >= 1 && n <= 99 {
			if n < 70 {
				return int32(2000 + n), true
			}
			return int32(1900 + n), true
		}
	}
	if ct.kind == kInt64 && ct.col.unsigned {
		// a BIGINT UNSIGNED DEFAULT beyond int64 under
		// bigint.unsigned.handling.mode=long: Debezium's default converter
		// clamps it to Long.MAX_VALUE, where values wrap as the binlog's
		// long does (mariadiff seeds 12, 14)
		if n, err := strconv.ParseUint(strings.TrimPrefix(lit, "+"), 10, 64); err == nil && n > math.MaxInt64 {
			return int64(math.MaxInt64), true
		}
	}
	switch ct.kind {
	case kInt16, kInt32, kInt64, kFloat, kDouble, kString, kDecimal, kYear, kEnum, kSet, kUDecimal, kUUID, kInet:
		v, err := ct.fromText([]byte(lit))
		if err == nil && v != nil {
			v = ct.present(v)
		}
		return v, err == nil && v != nil
	case kDate, kTimestamp, kMicroTS, kMicroTime, kTimeMs:
		// a DATE/DATETIME/TIME literal default, in the column's own
		// representation (Debezium's schema default: DATE '2000-01-01' →
		// 10957)
		if ct.kind != kMicroTime && ct.kind != kTimeMs && (strings.HasPrefix(lit, "0000-00-00") || lit == "0") {
			// a zero date: none for an optional column, the epoch for a
			// NOT NULL one, as Debezium's MySqlDefaultValueConverter
			// (convertToLocalDate/convertToLocalDateTime; mariadiff seed
			// 170)
			if ct.col.Optional {
				return nil, false
			}
			lit = "1970-01-01 00:00:00"
			if ct.kind == kDate {
				lit = "1970-01-01"
			}
		}
		v, err := ct.fromText([]byte(lit))
		if err == nil && v != nil {
			v = ct.present(v)
		}
		return v, err == nil && v != nil
	case kBytes:
		// A text literal DEFAULT of a VARBINARY/BLOB (DEFAULT 'bin') is
		// its bytes, as Debezium's schema default. A default with bytes
		// MariaDB prints escaped (X'00FF' → '\0\xFF') Debezium mangles
		// (the deviation debezium-binary-default): none then, nor for
		// BINARY(n), whose stored default is padded.
		if !quoted || ct.col.dataType == "binary" || !exactBinaryDefault(lit) {
			return nil, false
		}
		return ct.present([]byte(lit)), true
	case kBits, kBool:
		// a BIT default's digits (debeziumDefault: b'101' → 101): the
		// value's bytes (a boolean for BIT(1)), as Debezium's default
		if quoted || lit == "" {
			return nil, false
		}
		if ct.col.dataType == "boolean" {
			// a column declared BOOLEAN: its DEFAULT is an integer (TRUE
			// and FALSE are 1 and 0), true when not 0 (DEFAULT 2 → true,
			// mariadiff seed 190)
			switch strings.ToUpper(lit) {
			case "TRUE":
				return true, true
			case "FALSE":
				return false, true
			}
			n, err := strconv.ParseInt(lit, 10, 64)
			return n != 0, err == nil
		}
		u, err := strconv.ParseUint(lit, 2, 64)
		if err != nil {
			return nil, false
		}
		if ct.kind == kBool {
			return u != 0, true
		}
		return bitsValue(u, ct.col.precision), true
	case kZoned:
		// A zero TIMESTAMP default is the epoch, as Debezium's schema default
		// (mariadb_types_default.jsonl, edge_types.ts_zero_nn).
		// So is the epoch of a CURRENT_TIMESTAMP default (debeziumDefault).
		if strings.HasPrefix(lit, "0000-00-00") || lit == "1970-01-01 00:00:00" {
			return zoned(time.Unix(0, 0), ct.col.fsp), true
		}
	}
	return nil, false
}

// exactBinaryDefault: a binary column's default as information_schema
// reports it, s, is its bytes exactly. MariaDB 10.11 prints the bytes of
// a VARBINARY default as they are where they are valid UTF-8, except \0,
// \n, \r and \\ (escaped) and ' (doubled), and each byte of an invalid
// sequence as '?' (X'FF' → '?', mariadiff seed 73; X'01' → '\x01' raw,
// seed 113). So s without a backslash, a quote or '?' and valid UTF-8 is
// the default exactly; Debezium's default (from SHOW CREATE TABLE, which
// prints the same text) is those bytes too.
func exactBinaryDefault(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsAny(s, "\\'?")
}

// fromText converts a value as the text protocol returns it (snapshot).
// BIT values arrive as big-endian bytes, BINARY/BLOB as raw bytes.
func (ct *colType) fromText(b []byte) (any, error) {
	s := string(b)
	c := ct.col
	switch ct.kind {
	case kUDecimal:
		u, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return nil, fmt.Errorf("invalid BIGINT UNSIGNED %q", s)
		}
		return connect.Decimal{Unscaled: u, Scale: 0}, nil
	case kTinyBool:
		n, err := strconv.ParseInt(s, 10, 64)
		return n > 0, err
	case kInt16, kInt32, kInt64, kYear:
		var n int64
		if c.unsigned {
			u, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return nil, err
			}
			n = int64(u) // bigint.unsigned.handling.mode=long wraps, as Debezium
		} else {
			var err error
			if n, err = strconv.ParseInt(s, 10, 64); err != nil {
				return nil, err
			}
		}
		return ct.fromInt(n), nil
	case kDecimal:
		return parseDecimal(s, c.scale)
	case kFloat:
		f, err := strconv.ParseFloat(s, 32)
		return float32(f), err
	case kDouble:
		if c.floatMD {
			// FLOAT(M,D) is stored as a float: its double is the float's
			// (1234.567 → 1234.5670166015625), as the binlog's and Debezium's
			f, err := strconv.ParseFloat(s, 32)
			return float64(float32(f)), err
		}
		return strconv.ParseFloat(s, 64)
	case kString, kEnum, kSet, kUUID, kInet:
		return s, nil
	case kDate:
		t, err := time.Parse("2006-01-02", s)
		if err != nil {
			return nil, zeroDate(s, err)
		}
		return int32(ct.adjustYear(t).Unix() / 86400), nil
	case kTimestamp, kMicroTS, kZoned:
		t, err := parseDateTime(s)
		if err != nil {
			return nil, zeroDate(s, err)
		}
		switch ct.kind {
		case kTimestamp:
			return ct.adjustYear(t).UnixMilli(), nil
		case kMicroTS:
			return ct.adjustYear(t).UnixMicro(), nil
		}
		return zoned(t, c.fsp), nil
	case kMicroTime:
		return parseTime(s)
	case kTimeMs:
		us, err := parseTime(s)
		if err != nil {
			return nil, err
		}
		if ct.modes.time == "connect" && (us < 0 || us >= 24*3600*1_000_000) {
			// A Connect Time is a time of day: Debezium emits null (or the
			// NOT NULL fallback) for durations outside it
			// (mariadb_types_time_connect.jsonl, c_time6 = ±838:59:59).
			return nil, errNoValue
		}
		return int32(us / 1000), nil
	case kGeometry, kPoint:
		return ct.spatial(b)
	case kBool:
		return len(b) > 0 && bytesToUint(b) != 0, nil
	case kBits:
		return bitsValue(bytesToUint(b), c.precision), nil
	case kBytes:
		return ct.padBinary(append([]byte(nil), b...)), nil
	}
	return nil, fmt.Errorf("unsupported type %s", c.columnType)
}

// errNoValue marks a value Debezium emits as null (for a NOT NULL column:
// the schema default, else the type's zero: epoch day 0, epoch ms 0):
// a zero date ('0000-00-00'), as Debezium's BinlogValueConverters
// ("Invalid value '0000-00-00' … converted to empty value"), or a TIME
// outside a Connect Time's day.
var errNoValue = fmt.Errorf("no value")

func zeroDate(s string, err error) error {
	// '0000-00-00' and a date with a zero month or day ('2024-00-00',
	// '2024-02-00': sql_mode without NO_ZERO_IN_DATE): no value, as
	// Debezium (its binlog deserializer gives no date for them)
	if strings.HasPrefix(s, "0000-00-00") || len(s) >= 10 && s[4] == '-' && s[7] == '-' && (s[5:7] == "00" || s[8:10] == "00") {
		return errNoValue
	}
	return err
}

// fromInt narrows an integer to the column's Connect type.
func (ct *colType) fromInt(n int64) any {
	switch ct.schema.Type {
	case connect.Int16:
		return int16(n)
	case connect.Int32:
		return int32(n)
	}
	return n
}

// fromBinlog converts a value decoded by go-mysql from a row event
// (ParseTime=true: a DATETIME from 1970 on or a non-zero TIMESTAMP is a
// time.Time, earlier and zero ones a string; UseDecimal=false; TIMESTAMP
// strings rendered in UTC).
func (ct *colType) fromBinlog(v any) (any, error) {
	c := ct.col
	switch x := v.(type) {
	case time.Time:
		x = x.UTC()
		switch ct.kind {
		case kTimestamp:
			return ct.adjustYear(x).UnixMilli(), nil
		case kMicroTS:
			return ct.adjustYear(x).UnixMicro(), nil
		case kZoned:
			return zoned(x, c.fsp), nil
		}
		// Any other kind: the text go-mysql gives without ParseTime
		// (fractional digits as the column's fsp), converted as before.
		layout := "2006-01-02 15:04:05"
		if c.fsp > 0 {
			layout += "." + strings.Repeat("0", c.fsp)
		}
		return ct.fromBinlogBytes([]byte(x.Format(layout)))
	case string:
		return ct.fromBinlogBytes([]byte(x))
	case []byte:
		return ct.fromBinlogBytes(x)
	case float32:
		if ct.kind == kDouble {
			return float64(x), nil
		}
		return x, nil
	case float64:
		if ct.kind == kFloat {
			return float32(x), nil
		}
		if c.floatMD {
			// FLOAT(M,D) read as text (the snapshot): the stored float's
			// double (1234.567 → 1234.5670166015625), as the binlog's
			return float64(float32(x)), nil
		}
		return x, nil
	}
	// integers: go-mysql returns them signed at their storage width
	var n int64
	var u uint64
	switch x := v.(type) {
	case int8:
		n, u = int64(x), uint64(uint8(x))
	case int16:
		n, u = int64(x), uint64(uint16(x))
	case int32:
		n, u = int64(x), uint64(uint32(x))
		if c.dataType == "mediumint" {
			u = uint64(uint32(x) & 0xffffff)
		}
	case int64:
		n, u = x, uint64(x)
	case int:
		n, u = int64(x), uint64(x)
	case uint64:
		n, u = int64(x), x
	default:
		return nil, fmt.Errorf("unexpected binlog value %T for %s", v, c.columnType)
	}
	switch ct.kind {
	case kUDecimal:
		return connect.Decimal{Unscaled: new(big.Int).SetUint64(u), Scale: 0}, nil
	case kInt16, kInt32, kInt64, kYear:
		if c.unsigned {
			n = int64(u)
		}
		return ct.fromInt(n), nil
	case kEnum:
		if u == 0 || int(u) > len(c.options) {
			return "", nil
		}
		return c.options[u-1], nil
	case kSet:
		var parts []string
		for i, o := range c.options {
			if u&(1<<uint(i)) != 0 {
				parts = append(parts, o)
			}
		}
		return strings.Join(parts, ","), nil
	case kBool:
		return u != 0, nil
	case kTinyBool:
		if c.unsigned {
			n = int64(u)
		}
		return n > 0, nil
	case kBits:
		return bitsValue(u, c.precision), nil
	}
	return nil, fmt.Errorf("unexpected integer binlog value for %s", c.columnType)
}

// fromBinlogBytes converts a row event's string or bytes value: binary
// types as they are, strings decoded from the column's character set, a
// zero TIMESTAMP as the epoch (the binlog stores it as 0 seconds;
// Debezium's binlog reader emits 1970-01-01T00:00:00Z while its snapshot
// emits null, mariadb_types_default.jsonl).
func (ct *colType) fromBinlogBytes(b []byte) (any, error) {
	switch ct.kind {
	case kBytes:
		return ct.padBinary(append([]byte(nil), b...)), nil
	case kGeometry, kPoint:
		return ct.spatial(b)
	case kString, kEnum, kSet:
		return decodeCharset(ct.col.charset, b)
	case kUUID:
		// The binlog drops a BINARY value's trailing zero bytes (as for
		// BINARY(n), see padBinary): put them back.
		if len(b) > 16 {
			return nil, fmt.Errorf("UUID of %d bytes", len(b))
		}
		var u [16]byte
		copy(u[:], b)
		x := hex.EncodeToString(u[:])
		return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:], nil
	case kInet:
		if ct.col.dataType == "inet4" {
			return inetText(b, 4)
		}
		return inetText(b, 16)
	case kZoned:
		if strings.HasPrefix(string(b), "0000-00-00") {
			return zoned(time.Unix(0, 0), ct.col.fsp), nil
		}
	}
	return ct.fromText(b)
}

// inetText prints a MariaDB INET4 (4 bytes) or INET6 (16 bytes) binlog
// value as the server does: IPv4 dotted, IPv6 with the longest run of zero
// groups shortened to ::, IPv4-mapped (::ffff:a.b.c.d) and IPv4-compatible
// (::a.b.c.d) addresses with the IPv4 part dotted.
func inetText(b []byte, width int) (string, error) {
	if len(b) > width {
		return "", fmt.Errorf("INET value of %d bytes", len(b))
	}
	// the binlog drops trailing zero bytes, as for BINARY(n)
	b = append(b[:len(b):len(b)], make([]byte, width-len(b))...)
	switch len(b) {
	case 4:
		return netip.AddrFrom4([4]byte(b)).String(), nil
	case 16:
		a := netip.AddrFrom16([16]byte(b))
		zero10 := !slices.ContainsFunc(b[:10], func(x byte) bool { return x != 0 })
		switch {
		case zero10 && b[10] == 0xff && b[11] == 0xff:
			return "::ffff:" + netip.AddrFrom4([4]byte(b[12:])).String(), nil
		case zero10 && b[10] == 0 && b[11] == 0 && (b[12] != 0 || b[13] != 0):
			return "::" + netip.AddrFrom4([4]byte(b[12:])).String(), nil
		}
		return a.String(), nil
	}
	return "", fmt.Errorf("INET value of %d bytes", len(b))
}

// present applies decimal.handling.mode and binary.handling.mode to a
// converted value, as Debezium: double is the decimal's nearest float64,
// string its plain text at the column's scale; base64 (standard, padded),
// base64-url-safe (padded) and hex (lower case) encode the bytes.
func (ct *colType) present(v any) any {
	switch ct.kind {
	case kDecimal:
		d, ok := v.(connect.Decimal)
		if !ok {
			return v
		}
		switch ct.modes.decimal {
		case "double":
			f, _ := strconv.ParseFloat(decimalText(d), 64)
			return f
		case "string":
			return decimalText(d)
		}
	case kBytes:
		b, ok := v.([]byte)
		if !ok {
			return v
		}
		switch ct.modes.binary {
		case "base64":
			return base64.StdEncoding.EncodeToString(b)
		case "base64-url-safe":
			return base64.URLEncoding.EncodeToString(b)
		case "hex":
			return hex.EncodeToString(b)
		}
	}
	return v
}

// decimalText renders a decimal as Java's BigDecimal.toPlainString.
func decimalText(d connect.Decimal) string {
	s := new(big.Int).Abs(d.Unscaled).String()
	if d.Scale > 0 {
		if len(s) <= d.Scale {
			s = strings.Repeat("0", d.Scale-len(s)+1) + s
		}
		s = s[:len(s)-d.Scale] + "." + s[len(s)-d.Scale:]
	}
	if d.Unscaled.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// spatial converts MySQL's internal geometry format (uint32 little-endian
// SRID, then WKB) into Debezium's Geometry {wkb, srid} or, for POINT
// columns, Point {x, y, wkb, srid}; an SRID of 0 is null, as Debezium.
func (ct *colType) spatial(b []byte) (any, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("geometry value of %d bytes", len(b))
	}
	var srid any
	if n := binary.LittleEndian.Uint32(b); n != 0 {
		srid = int32(n)
	}
	wkb := append([]byte(nil), b[4:]...)
	st := connect.NewStruct(ct.schema)
	if ct.kind == kPoint {
		if len(wkb) < 21 {
			return nil, fmt.Errorf("POINT WKB of %d bytes", len(wkb))
		}
		var order binary.ByteOrder = binary.LittleEndian
		if wkb[0] == 0 {
			order = binary.BigEndian
		}
		st.Put("x", math.Float64frombits(order.Uint64(wkb[5:13]))).Put("y", math.Float64frombits(order.Uint64(wkb[13:21])))
	}
	st.Put("wkb", wkb).Put("srid", srid)
	return st, nil
}

// padBinary pads BINARY(n) values with zero bytes to n, as the server
// returns them (the binlog strips trailing zeros).
func (ct *colType) padBinary(b []byte) []byte {
	if ct.col.dataType == "binary" && len(b) < ct.col.length {
		b = append(b, make([]byte, ct.col.length-len(b))...)
	}
	return b
}

func bytesToUint(b []byte) uint64 {
	var u uint64
	for _, x := range b {
		u = u<<8 | uint64(x)
	}
	return u
}

// bitsValue is io.debezium.data.Bits: little-endian, (n+7)/8 bytes.
func bitsValue(u uint64, n int) []byte {
	out := make([]byte, (n+7)/8)
	for i := range out {
		out[i] = byte(u >> (8 * i))
	}
	return out
}

// zoned formats a UTC time as io.debezium.time.ZonedTimestamp with the
// column's fractional digits.
func zoned(t time.Time, fsp int) string {
	layout := "2006-01-02T15:04:05"
	if fsp > 0 {
		layout += "." + strings.Repeat("0", fsp)
	}
	return t.UTC().Format(layout) + "Z"
}

// parseTime parses [-]HHH:MM:SS[.ffffff] into microseconds.
func parseTime(s string) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	hms, frac, _ := strings.Cut(s, ".")
	parts := strings.Split(hms, ":")
	if len(parts) != 3 {
		return 0, fmt.Errorf("invalid TIME %q", s)
	}
	var v [3]int64
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("invalid TIME %q", s)
		}
		v[i] = n
	}
	us := ((v[0]*60+v[1])*60 + v[2]) * 1_000_000
	if frac != "" {
		f := (frac + "000000")[:6]
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("invalid TIME %q", s)
		}
		us += n
	}
	if neg {
		us = -us
	}
	return us, nil
}

// parseDecimal parses a decimal literal at the column's scale.
func parseDecimal(s string, scale int) (connect.Decimal, error) {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	ip, fp, _ := strings.Cut(s, ".")
	if len(fp) < scale {
		fp += strings.Repeat("0", scale-len(fp))
	} else {
		fp = fp[:scale]
	}
	u, ok := new(big.Int).SetString(ip+fp, 10)
	if !ok {
		return connect.Decimal{}, fmt.Errorf("invalid decimal %q", s)
	}
	if neg {
		u.Neg(u)
	}
	return connect.Decimal{Unscaled: u, Scale: scale}, nil
}
