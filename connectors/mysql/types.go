package mysql

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// kind is how a column's values are represented, as Debezium's
// MySqlValueConverters map them under the default modes
// (decimal.handling.mode=precise, time.precision.mode=adaptive_time_microseconds,
// bigint.unsigned.handling.mode=long, binary.handling.mode=bytes).
type kind int

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
	kBits      // io.debezium.data.Bits
	kBytes     // BINARY, VARBINARY, BLOB
	kUnsupported
)

// colType is a column's mapping.
type colType struct {
	kind     kind
	schema   *connect.Schema
	col      *column
	fallback any // value of a NOT NULL column without default when the row has none
}

func newColType(c *column) colType {
	ct := colType{col: c}
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
		ct.kind, sb = kInt64, b(connect.Int64)
	case "decimal", "numeric":
		ct.kind = kDecimal
		sb = b(connect.Bytes).Name(connect.DecimalName).Version(1).
			Param("scale", strconv.Itoa(c.scale)).Param("connect.decimal.precision", strconv.Itoa(c.precision))
	case "float":
		ct.kind, sb = kFloat, b(connect.Float32)
	case "double", "real":
		ct.kind, sb = kDouble, b(connect.Float64)
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "json":
		ct.kind, sb = kString, b(connect.String)
	case "date":
		ct.kind, sb = kDate, b(connect.Int32).Name("io.debezium.time.Date").Version(1)
	case "datetime":
		if c.fsp <= 3 {
			ct.kind, sb = kTimestamp, b(connect.Int64).Name("io.debezium.time.Timestamp").Version(1)
		} else {
			ct.kind, sb = kMicroTS, b(connect.Int64).Name("io.debezium.time.MicroTimestamp").Version(1)
		}
	case "timestamp":
		ct.kind, sb = kZoned, b(connect.String).Name("io.debezium.time.ZonedTimestamp").Version(1)
	case "time":
		ct.kind, sb = kMicroTime, b(connect.Int64).Name("io.debezium.time.MicroTime").Version(1)
	case "year":
		ct.kind, sb = kYear, b(connect.Int32).Name("io.debezium.time.Year").Version(1)
	case "enum":
		ct.kind, sb = kEnum, b(connect.String).Name("io.debezium.data.Enum").Version(1).Param("allowed", strings.Join(c.options, ","))
	case "set":
		ct.kind, sb = kSet, b(connect.String).Name("io.debezium.data.EnumSet").Version(1).Param("allowed", strings.Join(c.options, ","))
	case "bit":
		if c.precision <= 1 {
			ct.kind, sb = kBool, b(connect.Boolean)
		} else {
			ct.kind, sb = kBits, b(connect.Bytes).Name("io.debezium.data.Bits").Version(1).Param("length", strconv.Itoa(c.precision))
		}
	case "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob":
		ct.kind, sb = kBytes, b(connect.Bytes)
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
	ct.fallback = zeroOf(ct.schema.Type)
	return ct
}

func zeroOf(t connect.Type) any {
	switch t {
	case connect.Int16:
		return int16(0)
	case connect.Int32:
		return int32(0)
	case connect.Int64:
		return int64(0)
	case connect.Float32:
		return float32(0)
	case connect.Float64:
		return float64(0)
	case connect.Boolean:
		return false
	case connect.String:
		return ""
	case connect.Bytes:
		return []byte{}
	}
	return nil
}

// defaultValue converts a COLUMN_DEFAULT literal (MariaDB quotes string
// literals; "NULL" and expressions such as current_timestamp() have no
// constant value).
func (ct *colType) defaultValue(lit string) (any, bool) {
	if lit == "NULL" || strings.HasSuffix(lit, ")") {
		return nil, false
	}
	if len(lit) >= 2 && lit[0] == '\'' && lit[len(lit)-1] == '\'' {
		lit = strings.ReplaceAll(lit[1:len(lit)-1], "''", "'")
	}
	switch ct.kind {
	case kInt16, kInt32, kInt64, kFloat, kDouble, kString, kDecimal, kYear, kEnum, kSet:
		v, err := ct.fromText([]byte(lit))
		return v, err == nil && v != nil
	}
	return nil, false
}

// fromText converts a value as the text protocol returns it (snapshot).
// BIT values arrive as big-endian bytes, BINARY/BLOB as raw bytes.
func (ct *colType) fromText(b []byte) (any, error) {
	s := string(b)
	c := ct.col
	switch ct.kind {
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
		return strconv.ParseFloat(s, 64)
	case kString, kEnum, kSet:
		return s, nil
	case kDate:
		t, err := time.Parse("2006-01-02", s)
		if err != nil {
			return nil, zeroDate(s, err)
		}
		return int32(t.Unix() / 86400), nil
	case kTimestamp, kMicroTS, kZoned:
		t, err := time.Parse("2006-01-02 15:04:05.999999999", s)
		if err != nil {
			return nil, zeroDate(s, err)
		}
		switch ct.kind {
		case kTimestamp:
			return t.UnixMilli(), nil
		case kMicroTS:
			return t.UnixMicro(), nil
		}
		return zoned(t, c.fsp), nil
	case kMicroTime:
		return parseTime(s)
	case kBool:
		return len(b) > 0 && bytesToUint(b) != 0, nil
	case kBits:
		return bitsValue(bytesToUint(b), c.precision), nil
	case kBytes:
		return ct.padBinary(append([]byte(nil), b...)), nil
	}
	return nil, fmt.Errorf("unsupported type %s", c.columnType)
}

// errZeroDate marks a zero date ('0000-00-00'), which Debezium emits as null.
var errZeroDate = fmt.Errorf("zero date")

func zeroDate(s string, err error) error {
	if strings.HasPrefix(s, "0000-00-00") {
		return errZeroDate
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
// (ParseTime=false, UseDecimal=false, TIMESTAMP rendered in UTC).
func (ct *colType) fromBinlog(v any) (any, error) {
	c := ct.col
	switch x := v.(type) {
	case string:
		if ct.kind == kBytes {
			return ct.padBinary([]byte(x)), nil
		}
		return ct.fromText([]byte(x))
	case []byte:
		if ct.kind == kBytes {
			return ct.padBinary(append([]byte(nil), x...)), nil
		}
		return ct.fromText(x)
	case float32:
		if ct.kind == kDouble {
			return float64(x), nil
		}
		return x, nil
	case float64:
		if ct.kind == kFloat {
			return float32(x), nil
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
	case kBits:
		return bitsValue(u, c.precision), nil
	}
	return nil, fmt.Errorf("unexpected integer binlog value for %s", c.columnType)
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
