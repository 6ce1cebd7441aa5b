package postgres

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/relational"
	"github.com/connectd/connectd/internal/javafloat"
)

// PostgreSQL type OIDs (pg_type.oid) of the built-in types mapped here.
// Extension types (citext, hstore, ltree) have no fixed OID and are
// recognised by name.
const (
	oidBool        = 16
	oidBytea       = 17
	oidChar        = 18
	oidName        = 19
	oidInt8        = 20
	oidInt2        = 21
	oidInt2Vector  = 22
	oidInt4        = 23
	oidText        = 25
	oidOID         = 26
	oidJSON        = 114
	oidXML         = 142
	oidPoint       = 600
	oidLseg        = 601
	oidPath        = 602
	oidBox         = 603
	oidPolygon     = 604
	oidLine        = 628
	oidCidr        = 650
	oidFloat4      = 700
	oidFloat8      = 701
	oidCircle      = 718
	oidMacaddr8    = 774
	oidMoney       = 790
	oidMacaddr     = 829
	oidInet        = 869
	oidBPChar      = 1042
	oidVarchar     = 1043
	oidDate        = 1082
	oidTime        = 1083
	oidTimestamp   = 1114
	oidTimestamptz = 1184
	oidInterval    = 1186
	oidTimetz      = 1266
	oidBit         = 1560
	oidVarbit      = 1562
	oidNumeric     = 1700
	oidUUID        = 2950
	oidTsvector    = 3614
	oidJSONB       = 3802
	oidInt4Range   = 3904
	oidNumRange    = 3906
	oidTsRange     = 3908
	oidTstzRange   = 3910
	oidDateRange   = 3912
	oidInt8Range   = 3926
)

// Logical schema names (Debezium's io.debezium.time.*, io.debezium.data.*).
const (
	nameDate           = "io.debezium.time.Date"
	nameTime           = "io.debezium.time.Time"
	nameMicroTime      = "io.debezium.time.MicroTime"
	nameNanoTime       = "io.debezium.time.NanoTime"
	nameZonedTime      = "io.debezium.time.ZonedTime"
	nameTimestamp      = "io.debezium.time.Timestamp"
	nameMicroTimestamp = "io.debezium.time.MicroTimestamp"
	nameNanoTimestamp  = "io.debezium.time.NanoTimestamp"
	nameZonedTimestamp = "io.debezium.time.ZonedTimestamp"
	nameIsoDate        = "io.debezium.time.IsoDate"
	nameIsoTime        = "io.debezium.time.IsoTime"
	nameIsoTimestamp   = "io.debezium.time.IsoTimestamp"
	nameMicroDuration  = "io.debezium.time.MicroDuration"
	nameInterval       = "io.debezium.time.Interval"
	nameUUID           = "io.debezium.data.Uuid"
	nameJSON           = "io.debezium.data.Json"
	nameXML            = "io.debezium.data.Xml"
	nameEnum           = "io.debezium.data.Enum"
	nameBits           = "io.debezium.data.Bits"
	nameLtree          = "io.debezium.data.Ltree"
	nameTsvector       = "io.debezium.data.Tsvector"
	namePoint          = "io.debezium.data.geometry.Point"
	nameVarScale       = "io.debezium.data.VariableScaleDecimal"
)

// unavailableValue is Debezium's unavailable.value.placeholder default, used
// for unchanged TOASTed columns that pgoutput does not send.
const unavailableValue = "__debezium_unavailable_value"

// colType is how one column maps to Kafka Connect: its field schema, the
// conversion from the PostgreSQL text representation (shared by snapshot and
// streaming so both produce identical values), and the value Debezium uses
// for a NULL in a NOT NULL column (delete events carry only key columns).
// A column whose type Debezium does not know is omitted (omit) unless
// include.unknown.datatypes is set.
type colType struct {
	schema   *connect.Schema
	fromText func(string) (any, error)
	fallback any
	elemText func(string) (any, error) // arrays: the element conversion
	post     func(any) any             // column.truncate / column.mask.hash mapper of non-null values
	mask     any                       // column.mask.with.N.chars: the value of every row, NULL included
	// unavailable is the value of an unchanged TOASTed column (pgoutput
	// 'u'), derived from unavailable.value.placeholder as Debezium's
	// UnchangedToastedPlaceholder does for the type; nil = no placeholder
	// (null, or the fallback in a NOT NULL column).
	unavailable any
	omit        bool
}

// typeMapper maps PostgreSQL columns to Connect schemas and conversions
// under the connector's handling modes. reg may be nil (built-in types only).
type typeMapper struct {
	h     handling
	reg   *typeRegistry
	rules *columnRules // column filters and mappers; nil = none
	// comments: column comments become field schema docs
	// (include.schema.comments).
	comments bool
	// moneyErr, when set, fails every money value (checkMoneyLocale).
	moneyErr error
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

// timePrecision returns the fractional-second digits of a time/timestamp
// column (atttypmod, -1 = the default 6).
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

func pointSchema(optional bool) *connect.Schema {
	b := connect.StructSchema().Name(namePoint).Version(1).Doc("Geometry (POINT)").
		Field("x", connect.Prim(connect.Float64, false)).
		Field("y", connect.Prim(connect.Float64, false)).
		Field("wkb", connect.Prim(connect.Bytes, true)).
		Field("srid", connect.Prim(connect.Int32, true))
	if optional {
		b.Optional()
	}
	return b.Build()
}

// mapColumn maps a column with Debezium's default modes and built-in types
// only (used by tests and tools that have no catalog at hand).
func mapColumn(c relational.Column) colType {
	return (&typeMapper{h: defaultHandling}).column(c)
}

// column returns the Connect mapping of a column.
func (m *typeMapper) column(c relational.Column) colType {
	oid, typmod := m.reg.resolveDomain(c.TypeOID, c.TypeMod)
	var ct colType
	var eoid uint32 // element type of an array column
	if t := m.reg.get(oid); t.isArray() {
		var emod int32
		eoid, emod = m.reg.resolveDomain(t.elem, typmod)
		el, ok := m.scalar(eoid, emod, true)
		if omittedArrayElems[eoid] {
			return colType{omit: true} // Debezium has no schema for these arrays, include.unknown.datatypes or not
		}
		if !ok {
			ct = m.unknown(oid, c.Optional)
		} else {
			if et := m.reg.get(eoid); et != nil && et.typtype == 'e' {
				el.schema = cloneRequired(el.schema) // Debezium: enum array items are not optional
			}
			ct = arrayType(el, c.Optional)
		}
	} else if oid == oidInt2Vector {
		el, _ := m.scalar(oidInt2, -1, false)
		ct = arrayType(el, c.Optional)
		ct.fromText = func(s string) (any, error) { return parseVector(s, el.fromText) }
	} else {
		var ok bool
		if ct, ok = m.scalar(oid, typmod, c.Optional); !ok {
			ct = m.unknown(oid, c.Optional)
		}
	}
	if ct.omit {
		return ct
	}
	ct.unavailable = m.unavailable(oid, eoid, ct)
	if ct.fallback == nil {
		ct.fallback = zeroValue(ct.schema)
	}
	if c.Default != nil {
		ct.schema.Default = c.Default
	}
	return ct
}

// omittedArrayElems are the element types of the arrays Debezium's
// PostgresValueConverter has no schema for (xml[], money[], name[],
// point[], interval[], varbit[], refcursor[]): their columns are left out
// of the events ("No converter found for column … of type _interval").
var omittedArrayElems = map[uint32]bool{oidXML: true, oidMoney: true, oidName: true, oidPoint: true, oidInterval: true, oidVarbit: true, 1790: true}

// unavailable returns a column's value for an unchanged TOASTed value, as
// Debezium 3.6's UnchangedToastedReplicationMessageColumn and
// UnchangedToastedPlaceholder represent unavailable.value.placeholder: the
// string for string columns (json, xml, bytea in base64/hex modes…), its
// bytes for bytea, a one-element list for arrays of text, varchar, char,
// json, jsonb, bytea and uuid (the uuid is UUID.nameUUIDFromBytes of the
// placeholder), the placeholder's bytes as numbers for int4, date and int8
// arrays, {placeholder: placeholder} for hstore. nil for other types.
func (m *typeMapper) unavailable(oid, elem uint32, ct colType) any {
	p := m.h.placeholder
	if p == "" {
		p = unavailableValue
	}
	if elem != 0 {
		items := ct.schema.ValueSchema
		switch elem {
		case oidText, oidVarchar, oidBPChar, oidJSON, oidJSONB:
			return []any{p}
		case oidBytea:
			v, err := parseArray(`{"\\x`+hex.EncodeToString([]byte(p))+`"}`, ct.elemText)
			if err != nil {
				return nil
			}
			return v
		case oidUUID:
			return []any{nameUUIDFromBytes([]byte(p))}
		case oidInt4, oidDate:
			if items == nil || items.Type != connect.Int32 {
				return nil
			}
			out := make([]any, len(p))
			for i := 0; i < len(p); i++ {
				out[i] = int32(int8(p[i]))
			}
			return out
		case oidInt8:
			out := make([]any, len(p))
			for i := 0; i < len(p); i++ {
				out[i] = int64(int8(p[i]))
			}
			return out
		}
		return nil
	}
	if t := m.reg.get(oid); t != nil && t.name == "hstore" {
		v, err := ct.fromText(hstoreQuote(p) + "=>" + hstoreQuote(p))
		if err != nil {
			return nil
		}
		return v
	}
	switch {
	case ct.schema.Type == connect.String:
		return p
	case ct.schema.Type == connect.Bytes && ct.schema.Name == "":
		return []byte(p)
	}
	return nil
}

func hstoreQuote(s string) string {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return string(append(b, '"'))
}

// nameUUIDFromBytes is Java's UUID.nameUUIDFromBytes (version 3, MD5).
func nameUUIDFromBytes(b []byte) string {
	h := md5.Sum(b)
	h[6] = h[6]&0x0f | 0x30
	h[8] = h[8]&0x3f | 0x80
	x := hex.EncodeToString(h[:])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:]
}

func cloneRequired(s *connect.Schema) *connect.Schema {
	c := *s
	c.Optional = false
	return &c
}

// unknown maps a type Debezium has no converter for: omitted, or with
// include.unknown.datatypes=true bytes holding the text representation
// (geometric types re-rendered with Java number formatting, as the JDBC
// driver's PGline/PGbox/… toString does).
func (m *typeMapper) unknown(oid uint32, optional bool) colType {
	if !m.h.includeUnknown {
		return colType{omit: true}
	}
	conv := func(s string) (any, error) { return []byte(s), nil }
	switch oid {
	case oidLine, oidLseg, oidBox, oidPath, oidPolygon, oidCircle:
		conv = func(s string) (any, error) { return []byte(javaGeometric(s)), nil }
	}
	return colType{schema: prim(connect.Bytes, optional).Build(), fromText: conv}
}

func prim(t connect.Type, optional bool) *connect.SchemaBuilder {
	b := connect.NewSchema(t)
	if optional {
		b.Optional()
	}
	return b
}

func arrayType(el colType, optional bool) colType {
	b := connect.NewSchema(connect.Array).Items(el.schema)
	if optional {
		b.Optional()
	}
	conv := el.fromText
	return colType{schema: b.Build(), elemText: conv, fromText: func(s string) (any, error) { return parseArray(s, conv) }}
}

// scalar maps a non-array type; ok is false for a type Debezium does not know.
func (m *typeMapper) scalar(oid uint32, typmod int32, opt bool) (colType, bool) {
	h := m.h
	str := func(name string) colType {
		b := prim(connect.String, opt)
		if name != "" {
			b.Name(name).Version(1)
		}
		return colType{schema: b.Build(), fromText: textValue}
	}
	switch oid {
	case oidInt2:
		return colType{schema: prim(connect.Int16, opt).Build(), fromText: parseInt16}, true
	case oidInt4:
		return colType{schema: prim(connect.Int32, opt).Build(), fromText: parseInt32}, true
	case oidInt8, oidOID:
		return colType{schema: prim(connect.Int64, opt).Build(), fromText: parseInt64}, true
	case oidBool:
		return colType{schema: prim(connect.Boolean, opt).Build(), fromText: parseBool}, true
	case oidFloat4:
		return colType{schema: prim(connect.Float32, opt).Build(), fromText: parseFloat32}, true
	case oidFloat8:
		return colType{schema: prim(connect.Float64, opt).Build(), fromText: parseFloat64}, true
	case oidNumeric:
		return m.numeric(typmod, opt), true
	case oidMoney:
		return m.money(opt), true
	case oidText, oidVarchar, oidBPChar, oidName, oidChar, oidInet, oidCidr, oidMacaddr, oidMacaddr8,
		oidInt4Range, oidInt8Range, oidNumRange, oidTsRange, oidTstzRange, oidDateRange:
		return str(""), true
	case oidUUID:
		return str(nameUUID), true
	case oidJSON, oidJSONB:
		return str(nameJSON), true
	case oidXML:
		return str(nameXML), true
	case oidTsvector:
		return str(nameTsvector), true
	case oidBytea:
		return m.bytea(opt), true
	case oidBit, oidVarbit:
		if oid == oidBit && typmod == 1 {
			return colType{schema: prim(connect.Boolean, opt).Build(), fromText: parseBit1}, true
		}
		length := "2147483647"
		if typmod > 0 {
			length = strconv.Itoa(int(typmod))
		}
		return colType{schema: prim(connect.Bytes, opt).Name(nameBits).Version(1).Param("length", length).Build(), fromText: parseBits}, true
	case oidPoint:
		sch := pointSchema(opt)
		// NOT NULL and absent (outside the replica identity index of a
		// delete): POINT(0 0), as Debezium writes
		zero, _ := parsePoint(sch, "(0,0)")
		return colType{schema: sch, fromText: func(s string) (any, error) { return parsePoint(sch, s) }, fallback: zero}, true
	case oidDate:
		return m.date(opt), true
	case oidTime:
		return m.time(typmod, opt), true
	case oidTimetz:
		return colType{schema: prim(connect.String, opt).Name(nameZonedTime).Version(1).Build(), fromText: parseZonedTime}, true
	case oidTimestamp:
		return m.timestamp(typmod, opt), true
	case oidTimestamptz:
		digits := timePrecision(typmod)
		return colType{schema: prim(connect.String, opt).Name(nameZonedTimestamp).Version(1).Build(),
			fromText: func(s string) (any, error) {
				us, sp, err := parseTimestampUs(s, true)
				switch {
				case err != nil:
					return nil, err
				case sp > 0:
					return "infinity", nil
				case sp < 0:
					return "-infinity", nil
				}
				return formatZonedTimestamp(us, digits), nil
			}}, true
	case oidInterval:
		if h.interval == intervalString {
			return colType{schema: prim(connect.String, opt).Name(nameInterval).Version(1).Build(), fromText: parseIntervalISO}, true
		}
		return colType{schema: prim(connect.Int64, opt).Name(nameMicroDuration).Version(1).Build(), fromText: parseIntervalMicros}, true
	}
	t := m.reg.get(oid)
	if t == nil {
		return colType{}, false
	}
	if t.typtype == 'e' {
		return colType{schema: prim(connect.String, opt).Name(nameEnum).Version(1).Param("allowed", t.labels).Build(), fromText: enumValue(t.labels)}, true
	}
	switch t.name {
	case "citext":
		return str(""), true
	case "ltree":
		return str(nameLtree), true
	case "hstore":
		if h.hstore == hstoreMap {
			b := connect.NewSchema(connect.Map)
			sch := b.Build()
			sch.KeySchema = connect.Prim(connect.String, false)
			sch.ValueSchema = connect.Prim(connect.String, true)
			sch.Optional = opt
			return colType{schema: sch, fromText: parseHstoreMap}, true
		}
		return colType{schema: prim(connect.String, opt).Name(nameJSON).Version(1).Build(), fromText: parseHstoreJSON, fallback: "{}"}, true
	}
	return colType{}, false
}

// numeric maps numeric(p,s) / numeric per decimal.handling.mode.
func (m *typeMapper) numeric(typmod int32, opt bool) colType {
	switch m.h.decimal {
	case decimalDouble:
		return colType{schema: prim(connect.Float64, opt).Build(), fromText: parseFloat64}
	case decimalString:
		// placeholder: BigDecimal.ZERO at the column's scale, toPlainString
		zero := "0"
		if _, s, ok := numericPrecisionScale(typmod); ok {
			zero = plainDecimal(new(big.Int), s)
		}
		return colType{schema: prim(connect.String, opt).Build(), fromText: numericString, fallback: zero}
	}
	if p, s, ok := numericPrecisionScale(typmod); ok {
		b := prim(connect.Bytes, opt).Name(connect.DecimalName).Version(1).
			Param("scale", strconv.Itoa(s)).Param("connect.decimal.precision", strconv.Itoa(p))
		scale := s
		return colType{schema: b.Build(), fallback: connect.Decimal{Unscaled: new(big.Int), Scale: scale},
			fromText: func(txt string) (any, error) { return parseDecimal(txt, scale) }}
	}
	sch := varScaleSchema(opt)
	return colType{schema: sch, fromText: func(txt string) (any, error) { return parseVarScale(sch, txt) },
		fallback: varScaleStruct(sch, connect.Decimal{Unscaled: new(big.Int)})}
}

// money maps money per decimal.handling.mode, with money.fraction.digits
// as the Decimal scale. The text is lc_monetary=C's ("-$1,234.56"), which
// every connection uses; moneyErr (a server locale with another scale)
// fails each value instead.
func (m *typeMapper) money(opt bool) colType {
	ct := m.moneyType(opt)
	if m.moneyErr != nil {
		err := m.moneyErr
		ct.fromText = func(string) (any, error) { return nil, err }
	}
	return ct
}

func (m *typeMapper) moneyType(opt bool) colType {
	switch m.h.decimal {
	case decimalDouble:
		return colType{schema: prim(connect.Float64, opt).Build(), fromText: func(s string) (any, error) {
			return parseFloat64(moneyPlain(s))
		}}
	case decimalString:
		// placeholder: BigDecimal.ZERO.setScale(money.fraction.digits).toString()
		zero := plainDecimal(new(big.Int), m.h.moneyDigits)
		if m.h.moneyDigits > 6 {
			zero = "0E-" + strconv.Itoa(m.h.moneyDigits)
		}
		return colType{schema: prim(connect.String, opt).Build(), fromText: func(s string) (any, error) { return moneyPlain(s), nil }, fallback: zero}
	}
	scale := m.h.moneyDigits
	return colType{schema: prim(connect.Bytes, opt).Name(connect.DecimalName).Version(1).Param("scale", strconv.Itoa(scale)).Build(),
		fallback: connect.Decimal{Unscaled: new(big.Int), Scale: scale},
		fromText: func(s string) (any, error) { return parseDecimal(moneyPlain(s), scale) }}
}

// moneyPlain turns money text ("-$1,234.56", "($1.00)") into a plain number.
func moneyPlain(s string) string {
	neg := strings.HasPrefix(s, "-") || strings.HasPrefix(s, "(")
	b := make([]byte, 0, len(s)+1)
	if neg {
		b = append(b, '-')
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c >= '0' && c <= '9') || c == '.' {
			b = append(b, c)
		}
	}
	return string(b)
}

func (m *typeMapper) bytea(opt bool) colType {
	switch m.h.binary {
	case binaryBase64:
		return colType{schema: prim(connect.String, opt).Build(), fromText: byteaAs(base64.StdEncoding.EncodeToString)}
	case binaryBase64URL:
		return colType{schema: prim(connect.String, opt).Build(), fromText: byteaAs(base64.URLEncoding.EncodeToString)}
	case binaryHex:
		return colType{schema: prim(connect.String, opt).Build(), fromText: byteaAs(hex.EncodeToString)}
	}
	return colType{schema: prim(connect.Bytes, opt).Build(), fromText: parseBytea}
}

func byteaAs(enc func([]byte) string) func(string) (any, error) {
	return func(s string) (any, error) {
		b, err := parseBytea(s)
		if err != nil {
			return nil, err
		}
		return enc(b.([]byte)), nil
	}
}

func (m *typeMapper) date(opt bool) colType {
	switch m.h.time {
	case timeIsoString:
		return colType{schema: prim(connect.String, opt).Name(nameIsoDate).Version(1).Build(), fromText: func(s string) (any, error) {
			d, err := parseDateDays(s)
			return formatIsoDate(int64(d)), err
		}}
	case timeConnect:
		return colType{schema: prim(connect.Int32, opt).Name(connect.DateName).Version(1).Build(), fromText: parseDate}
	}
	return colType{schema: prim(connect.Int32, opt).Name(nameDate).Version(1).Build(), fromText: parseDate}
}

func parseDate(s string) (any, error) { return parseDateDays(s) }

// time maps time(p) per time.precision.mode.
func (m *typeMapper) time(typmod int32, opt bool) colType {
	p := timePrecision(typmod)
	micro := func(s string) (int64, error) { us, _, err := parseTimePart(s); return us, err }
	ms := func(name string) colType {
		return colType{schema: prim(connect.Int32, opt).Name(name).Version(1).Build(), fromText: func(s string) (any, error) {
			us, err := micro(s)
			return int32(us / 1000), err
		}}
	}
	us := func() colType {
		return colType{schema: prim(connect.Int64, opt).Name(nameMicroTime).Version(1).Build(), fromText: func(s string) (any, error) {
			return micro(s)
		}}
	}
	switch m.h.time {
	case timeConnect:
		return ms(connect.TimeName)
	case timeIsoString:
		return colType{schema: prim(connect.String, opt).Name(nameIsoTime).Version(1).Build(), fromText: func(s string) (any, error) {
			us, err := micro(s)
			return formatIsoTime(us), err
		}}
	case timeMicroseconds, timeAdaptiveMicros:
		return us()
	case timeNanoseconds:
		return colType{schema: prim(connect.Int64, opt).Name(nameNanoTime).Version(1).Build(), fromText: func(s string) (any, error) {
			us, err := micro(s)
			return us * 1000, err
		}}
	}
	if p <= 3 {
		return ms(nameTime)
	}
	return us()
}

// timestamp maps timestamp(p) per time.precision.mode; ±infinity become
// Debezium's constants (see temporal.go).
func (m *typeMapper) timestamp(typmod int32, opt bool) colType {
	p := timePrecision(typmod)
	mk := func(t connect.Type, name string, conv func(us int64, special int) any) colType {
		return colType{schema: prim(t, opt).Name(name).Version(1).Build(), fromText: func(s string) (any, error) {
			us, sp, err := parseTimestampUs(s, false)
			if err != nil {
				return nil, err
			}
			return conv(us, sp), nil
		}}
	}
	millis := func(us int64, sp int) any {
		switch {
		case sp > 0:
			return infTimestampMs
		case sp < 0:
			return negInfTimestampMs
		}
		return floorDiv(us, 1000)
	}
	micros := func(us int64, sp int) any {
		switch {
		case sp > 0:
			return infTimestampMs * 1000
		case sp < 0:
			return negInfTimestampMs * 1000
		}
		return us
	}
	switch m.h.time {
	case timeConnect:
		return mk(connect.Int64, connect.TimestampName, millis)
	case timeIsoString:
		return mk(connect.String, nameIsoTimestamp, func(us int64, sp int) any {
			switch {
			case sp > 0:
				return formatIsoTimestamp(infTimestampMs * 1000)
			case sp < 0:
				return formatIsoTimestamp(negInfTimestampMs * 1000)
			}
			return formatIsoTimestamp(us)
		})
	case timeMicroseconds:
		return mk(connect.Int64, nameMicroTimestamp, micros)
	case timeNanoseconds:
		return mk(connect.Int64, nameNanoTimestamp, func(us int64, sp int) any {
			switch {
			case sp > 0:
				return int64(math.MaxInt64)
			case sp < 0:
				return int64(math.MinInt64)
			}
			if us > math.MaxInt64/1000 || us < math.MinInt64/1000 {
				return nil // Debezium: overflow → null (with a warning)
			}
			return us * 1000
		})
	}
	if p <= 3 {
		return mk(connect.Int64, nameTimestamp, millis)
	}
	return mk(connect.Int64, nameMicroTimestamp, micros)
}

func textValue(s string) (any, error) { return s, nil }

func parseInt16(s string) (any, error) {
	n, err := strconv.ParseInt(s, 10, 16)
	return int16(n), err
}

func parseInt32(s string) (any, error) {
	n, err := strconv.ParseInt(s, 10, 32)
	return int32(n), err
}

func parseInt64(s string) (any, error) { return strconv.ParseInt(s, 10, 64) }

func parseFloat32(s string) (any, error) {
	f, err := strconv.ParseFloat(s, 32)
	return float32(f), err
}

func parseFloat64(s string) (any, error) { return strconv.ParseFloat(s, 64) }

func parseBool(s string) (any, error) {
	switch s {
	case "t", "true":
		return true, nil
	case "f", "false":
		return false, nil
	}
	return nil, fmt.Errorf("invalid boolean %q", s)
}

func parseBit1(s string) (any, error) { return s == "1", nil }

// parseBits returns io.debezium.data.Bits: the bit string read as a binary
// number (first bit most significant), little-endian, without high zero
// bytes (Java's BitSet.toByteArray).
func parseBits(s string) (any, error) {
	n := len(s)
	b := make([]byte, (n+7)/8)
	for i := 0; i < n; i++ {
		switch s[i] {
		case '1':
			idx := n - 1 - i
			b[idx/8] |= 1 << (idx % 8)
		case '0':
		default:
			return nil, fmt.Errorf("invalid bit string %q", s)
		}
	}
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b, nil
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

// numericSpecial reports NaN / ±Infinity numeric text.
func numericSpecial(s string) bool {
	return s == "NaN" || s == "Infinity" || s == "-Infinity"
}

// numericString is decimal.handling.mode=string: the plain decimal text;
// NaN and ±Infinity as Debezium's SpecialValueDecimal names them.
func numericString(s string) (any, error) {
	switch s {
	case "NaN":
		return "NAN", nil
	case "Infinity":
		return "POSITIVE_INFINITY", nil
	case "-Infinity":
		return "NEGATIVE_INFINITY", nil
	}
	return s, nil
}

// parseDecimalDigits parses PostgreSQL numeric text into an unscaled integer
// and the number of fraction digits.
func parseDecimalDigits(s string) (*big.Int, int, error) {
	intPart, frac, _ := strings.Cut(s, ".")
	u := new(big.Int)
	if len(intPart)+len(frac) < 19 {
		// fast path without concatenation: at most 18 digits fit an int64
		neg := strings.HasPrefix(intPart, "-")
		var n int64
		digits := 0
		for _, part := range [2]string{strings.TrimPrefix(intPart, "-"), frac} {
			for i := 0; i < len(part); i++ {
				c := part[i]
				if c < '0' || c > '9' {
					return nil, 0, fmt.Errorf("invalid numeric %q", s)
				}
				n = n*10 + int64(c-'0')
				digits++
			}
		}
		if digits == 0 {
			return nil, 0, fmt.Errorf("invalid numeric %q", s)
		}
		if neg {
			n = -n
		}
		return u.SetInt64(n), len(frac), nil
	}
	if _, ok := u.SetString(intPart+frac, 10); !ok {
		return nil, 0, fmt.Errorf("invalid numeric %q", s)
	}
	return u, len(frac), nil
}

// parseDecimal returns s as connect.Decimal with exactly scale fraction
// digits; NaN and ±Infinity, which Decimal cannot hold, become null (as
// Debezium does under decimal.handling.mode=precise, with a warning).
func parseDecimal(s string, scale int) (any, error) {
	if numericSpecial(s) {
		return nil, nil
	}
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
	st.Values[0] = int32(d.Scale)
	st.Values[1] = d.TwosComplement()
	return st
}

// parseVarScale returns io.debezium.data.VariableScaleDecimal {scale, value}
// without trailing fraction zeros (Debezium's BigDecimal.stripTrailingZeros,
// never below scale 0: 10.10 is {1, 101}, 100 is {0, 100}, 0.000 is {0, 0});
// NaN/±Infinity are null, as Debezium 3.6 emits them.
func parseVarScale(sch *connect.Schema, s string) (any, error) {
	if numericSpecial(s) {
		return nil, nil
	}
	u, n, err := parseDecimalDigits(s)
	if err != nil {
		return nil, err
	}
	if u.Sign() == 0 {
		n = 0
	}
	if n > 0 {
		ten, q, r := big.NewInt(10), new(big.Int), new(big.Int)
		for n > 0 {
			q.QuoRem(u, ten, r)
			if r.Sign() != 0 {
				break
			}
			u, q = q, u
			n--
		}
	}
	return varScaleStruct(sch, connect.Decimal{Unscaled: u, Scale: n}), nil
}

// parseZonedTime returns io.debezium.time.ZonedTime: the time in UTC,
// "HH:MM:SS[.f]Z" with as few fraction digits as needed.
func parseZonedTime(s string) (any, error) {
	us, err := parseTimetzUs(s)
	if err != nil {
		return nil, err
	}
	return formatIsoTime(us), nil
}

// parsePoint returns io.debezium.data.geometry.Point {x, y, wkb, srid}
// from "(x,y)"; wkb is the little-endian WKB point.
func parsePoint(sch *connect.Schema, s string) (any, error) {
	in := strings.TrimSuffix(strings.TrimPrefix(s, "("), ")")
	xs, ys, ok := strings.Cut(in, ",")
	if !ok {
		return nil, fmt.Errorf("invalid point %q", s)
	}
	x, err1 := strconv.ParseFloat(xs, 64)
	y, err2 := strconv.ParseFloat(ys, 64)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("invalid point %q", s)
	}
	wkb := make([]byte, 21)
	wkb[0] = 1
	wkb[1] = 1
	putFloatLE(wkb[5:], x)
	putFloatLE(wkb[13:], y)
	st := connect.NewStruct(sch)
	st.Values[0], st.Values[1], st.Values[2] = x, y, wkb
	return st, nil
}

func putFloatLE(b []byte, f float64) {
	u := math.Float64bits(f)
	for i := 0; i < 8; i++ {
		b[i] = byte(u >> (8 * i))
	}
}

var geoNumber = regexp.MustCompile(`-?[0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?|-?Infinity|NaN`)

// javaGeometric re-renders the numbers of a geometric value's text as Java's
// Double.toString does ("{1,2,3}" → "{1.0,2.0,3.0}").
func javaGeometric(s string) string {
	return geoNumber.ReplaceAllStringFunc(s, func(n string) string {
		f, err := strconv.ParseFloat(n, 64)
		if err != nil {
			return n
		}
		return javaDouble(f)
	})
}

// javaDouble formats f as Java 17's Double.toString.
func javaDouble(f float64) string { return javafloat.Format(f, 64) }

// zeroValue is the value Debezium puts in a NOT NULL column that a delete
// event does not carry (pgoutput sends only the key columns): the fallback
// of its value converter (JdbcValueConverters, PostgresValueConverter).
func zeroValue(s *connect.Schema) any {
	switch s.Name {
	case nameZonedTimestamp, nameIsoTimestamp:
		return "1970-01-01T00:00:00Z" // ISO_OFFSET_DATE_TIME of the epoch, whatever the column's precision
	case nameZonedTime, nameIsoTime:
		return "00:00:00Z"
	case nameIsoDate:
		return "1970-01-01Z"
	case nameInterval:
		return "P0Y0M0DT0H0M0S"
	case namePoint:
		v, _ := parsePoint(s, "(0,0)")
		return v
	}
	switch s.Type {
	case connect.Int8:
		return int8(0)
	case connect.Bytes:
		if s.Name == connect.DecimalName {
			sc, _ := s.Param("scale")
			n, _ := strconv.Atoi(sc)
			return connect.Decimal{Unscaled: new(big.Int), Scale: n}
		}
	case connect.Array:
		return []any{}
	case connect.Map:
		return map[string]any{}
	}
	return relational.ZeroOf(s.Type)
}

// errStaleEnum says that an enum value is not among the labels the type
// registry holds: a label was added (ALTER TYPE … ADD VALUE) after the
// registry was loaded. The streamer reloads pg_type and rebuilds the table
// schemas, so the event carries the refreshed io.debezium.data.Enum
// "allowed" parameter.
var errStaleEnum = errors.New("postgres: enum label not in the loaded type registry")

// enumValue converts an enum label, failing with errStaleEnum for a label
// the registry does not know. labels is the comma-separated "allowed" list;
// when a label itself contains a comma the list cannot be split and every
// value is accepted.
func enumValue(labels string) func(string) (any, error) {
	known := map[string]struct{}{}
	for _, l := range strings.Split(labels, ",") {
		known[l] = struct{}{}
	}
	return func(s string) (any, error) {
		if _, ok := known[s]; !ok && !strings.Contains(s, ",") {
			return nil, errStaleEnum
		}
		return s, nil
	}
}
