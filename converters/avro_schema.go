package converters

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// Names and properties of Confluent's AvroData
// (io.confluent.connect.avro.AvroData, kafka-connect-avro-data).
const (
	avroNamespace          = "io.confluent.connect.avro"
	avroDefaultName        = "ConnectDefault"
	avroMapEntryName       = "MapEntry"
	avroRecordDocParam     = avroNamespace + ".record.doc"
	avroFieldDocPrefix     = avroNamespace + ".field.doc."
	avroFieldDefaultFlag   = avroNamespace + ".field.default"
	avroDecimalPrecision   = "connect.decimal.precision"
	avroDefaultPrecision   = 64
	connectNameProp        = "connect.name"
	connectDocProp         = "connect.doc"
	connectVersionProp     = "connect.version"
	connectDefaultProp     = "connect.default"
	connectParametersProp  = "connect.parameters"
	connectTypeProp        = "connect.type"
	connectInternalTypeKey = "connect.internal.type"
	avroTypeEnum           = avroNamespace + ".Enum"          // AvroData.AVRO_TYPE_ENUM
	avroEnumDocPrefix      = avroNamespace + ".enum.doc."     // AvroData.AVRO_ENUM_DOC_PREFIX_PROP
	avroEnumDefaultPrefix  = avroNamespace + ".enum.default." // AvroData.AVRO_ENUM_DEFAULT_PREFIX_PROP
)

// avroDataConfig is the part of Confluent's AvroDataConfig the converter
// reads: connect.meta.data (default true), enhanced.avro.schema.support
// and scrub.invalid.names (default false).
type avroDataConfig struct {
	metaData bool
	enhanced bool
	scrub    bool
}

// avroEnumSymbols reports whether s is written as an Avro enum: with
// enhanced.avro.schema.support, a STRING whose parameters have
// io.confluent.connect.avro.Enum (the enum's full name) and one
// io.confluent.connect.avro.Enum.<symbol> per symbol, in parameter order
// (AvroData.fromConnectSchema, case STRING). Debezium's own
// io.debezium.data.Enum ("allowed" parameter) is not one: AvroData keeps
// it a string, and so do we.
func avroEnumSymbols(s *connect.Schema, o avroDataConfig) (symbols []string, name string, ok bool) {
	if !o.enhanced || s.Type != connect.String {
		return nil, "", false
	}
	name, ok = s.Param(avroTypeEnum)
	if !ok {
		return nil, "", false
	}
	for _, k := range s.ParamKeys() {
		if sym, found := strings.CutPrefix(k, avroTypeEnum+"."); found {
			symbols = append(symbols, sym)
		}
	}
	return symbols, name, true
}

// scrubAvroName is AvroData.doScrubName (scrub.invalid.names=true): a name
// that is not [A-Za-z_][A-Za-z0-9_]* is URL-encoded (Java's URLEncoder,
// UTF-8), prefixed with "x" if that starts with a digit, and every
// character outside [A-Za-z0-9_] becomes "_".
func scrubAvroName(name string) string {
	valid := func(c byte) bool {
		return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
	}
	ok := name != ""
	for i := 0; i < len(name); i++ {
		if !valid(name[i]) {
			ok = false
		}
	}
	if name == "" || ok && !(name[0] >= '0' && name[0] <= '9') {
		return name
	}
	var enc strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case valid(c) && c != '_' || c == '.' || c == '-' || c == '*' || c == '_':
			enc.WriteByte(c)
		case c == ' ':
			enc.WriteByte('+')
		default:
			fmt.Fprintf(&enc, "%%%02X", c)
		}
	}
	out := []byte(enc.String())
	if out[0] >= '0' && out[0] <= '9' {
		out = append([]byte{'x'}, out...)
	}
	for i, c := range out {
		if !valid(c) {
			out[i] = '_'
		}
	}
	return string(out)
}

// scrubFullName scrubs each dotted part of a full name (AvroData.splitName).
func scrubFullName(full string) string {
	parts := strings.Split(full, ".")
	for i, p := range parts {
		parts[i] = scrubAvroName(p)
	}
	return strings.Join(parts, ".")
}

// avroSchemaWriter turns a Kafka Connect schema into the text of the Avro
// schema Confluent's AvroData.fromConnectSchema builds for it, serialised
// as Avro's Schema.toString() does (the text Confluent's AvroConverter
// registers):
//
//   - STRUCT → record named by splitting the Connect name at its last dot
//     (namespace, name); unnamed → io.confluent.connect.avro.ConnectDefault.
//     A record already written is referred to by name (short when in the
//     enclosing namespace), "namespace" is written only when it differs
//     from the enclosing one.
//   - INT8/INT16 → int with "connect.type"; other primitives map 1:1.
//   - MAP with required string keys → map; otherwise an array of
//     MapEntry records {key, value}.
//   - Decimal → bytes with "scale", "precision" (connect.decimal.precision,
//     default 64) and logicalType decimal; Date/Time/Timestamp → the
//     date/time-millis/timestamp-millis logical types.
//   - connect.meta.data=true (default): "connect.doc", "connect.version",
//     "connect.parameters", "connect.default", "connect.name" properties, in
//     that order, on the non-union schema.
//   - optional → ["null", T] with field default null; optional with a
//     default → [T, "null"] with that default.
type avroSchemaWriter struct {
	avroDataConfig
	b       bytes.Buffer
	defined map[string]bool
	space   string // enclosing namespace
	unnamed int
}

// avroSchemaJSON returns the Avro schema text of s.
func avroSchemaJSON(s *connect.Schema, metaData bool) (string, error) {
	return avroSchemaJSONOpts(s, avroDataConfig{metaData: metaData})
}

// avroSchemaJSONOpts returns the Avro schema text of s under the AvroData
// options o.
func avroSchemaJSONOpts(s *connect.Schema, o avroDataConfig) (string, error) {
	w := &avroSchemaWriter{avroDataConfig: o, defined: map[string]bool{}}
	if err := w.schema(s, false); err != nil {
		return "", err
	}
	return w.b.String(), nil
}

// avroFullName is the Avro full name the record of s gets (for
// RecordNameStrategy), or the Avro type name for non-records.
func avroFullName(s *connect.Schema, scrub bool) string {
	if s.Type == connect.StructT {
		if s.Name == "" {
			return avroNamespace + "." + avroDefaultName
		}
		if scrub {
			return scrubFullName(s.Name)
		}
		return s.Name
	}
	return avroPrimitive(s.Type)
}

func avroPrimitive(t connect.Type) string {
	switch t {
	case connect.Int8, connect.Int16, connect.Int32:
		return "int"
	case connect.Int64:
		return "long"
	case connect.Float32:
		return "float"
	case connect.Float64:
		return "double"
	case connect.Boolean:
		return "boolean"
	case connect.String:
		return "string"
	case connect.Bytes:
		return "bytes"
	case connect.Array:
		return "array"
	case connect.Map:
		return "map"
	case connect.StructT:
		return "record"
	}
	return string(t)
}

func splitAvroName(full string) (ns, name string) {
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		return full[:i], full[i+1:]
	}
	return "", full
}

// schema writes s; ignoreOptional writes the non-null branch only.
func (w *avroSchemaWriter) schema(s *connect.Schema, ignoreOptional bool) error {
	if s.Optional && !ignoreOptional {
		w.b.WriteByte('[')
		// AvroData puts null first for optional structs always, and for
		// other types unless they have a default.
		if s.Default != nil && s.Type != connect.StructT {
			if err := w.base(s); err != nil {
				return err
			}
			w.b.WriteString(`,"null"]`)
			return nil
		}
		w.b.WriteString(`"null",`)
		if err := w.base(s); err != nil {
			return err
		}
		w.b.WriteByte(']')
		return nil
	}
	return w.base(s)
}

// props collects the properties of a non-union schema in insertion order.
type avroProps struct {
	keys []string
	vals []string // JSON texts
}

func (p *avroProps) add(k, jsonVal string) {
	for _, x := range p.keys {
		if x == k {
			return // Avro's addProp keeps the first value
		}
	}
	p.keys = append(p.keys, k)
	p.vals = append(p.vals, jsonVal)
}

func (p *avroProps) write(b *bytes.Buffer) {
	for i, k := range p.keys {
		b.WriteByte(',')
		writeString(b, k)
		b.WriteByte(':')
		b.WriteString(p.vals[i])
	}
}

func jsonString(s string) string {
	var b bytes.Buffer
	writeString(&b, s)
	return b.String()
}

func (w *avroSchemaWriter) base(s *connect.Schema) error {
	var props avroProps
	connectType := ""
	decimal := strings.EqualFold(s.Name, connect.DecimalName)
	precision, scale := avroDefaultPrecision, 0
	if decimal {
		if v, ok := s.Param("scale"); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("avro: Decimal scale %q: %w", v, err)
			}
			scale = n
		}
		if v, ok := s.Param(avroDecimalPrecision); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("avro: Decimal precision %q: %w", v, err)
			}
			precision = n
		}
	}
	switch s.Type {
	case connect.Int8:
		connectType = "int8"
	case connect.Int16:
		connectType = "int16"
	case connect.Bytes:
		if decimal {
			props.add("scale", strconv.Itoa(scale))
			props.add("precision", strconv.Itoa(precision))
		}
	}
	meta := func() error {
		if !w.metaData {
			return nil
		}
		if s.Doc != "" {
			props.add(connectDocProp, jsonString(s.Doc))
		}
		if s.Version != 0 {
			props.add(connectVersionProp, strconv.Itoa(s.Version))
		}
		if keys := s.ParamKeys(); len(keys) > 0 {
			var pb bytes.Buffer
			pb.WriteByte('{')
			n := 0
			for _, k := range keys {
				if k == avroFieldDefaultFlag {
					continue
				}
				if n > 0 {
					pb.WriteByte(',')
				}
				n++
				v, _ := s.Param(k)
				writeString(&pb, k)
				pb.WriteByte(':')
				writeString(&pb, v)
			}
			pb.WriteByte('}')
			if n > 0 {
				props.add(connectParametersProp, pb.String())
			}
		}
		if s.Default != nil {
			if _, flagged := s.Param(avroFieldDefaultFlag); !flagged {
				d, err := avroDefaultJSON(s, s.Default, false)
				if err != nil {
					return err
				}
				props.add(connectDefaultProp, d)
			}
		}
		if s.Name != "" {
			props.add(connectNameProp, jsonString(s.Name))
		}
		if connectType != "" {
			props.add(connectTypeProp, jsonString(connectType))
		}
		return nil
	}
	logical := func() {
		switch {
		case decimal:
			props.add("logicalType", `"decimal"`)
		case strings.EqualFold(s.Name, connect.TimeName):
			props.add("logicalType", `"time-millis"`)
		case strings.EqualFold(s.Name, connect.TimestampName):
			props.add("logicalType", `"timestamp-millis"`)
		case strings.EqualFold(s.Name, connect.DateName):
			props.add("logicalType", `"date"`)
		}
		for _, k := range s.ParamKeys() {
			if strings.HasPrefix(k, "avro") {
				v, _ := s.Param(k)
				props.add(k, jsonString(v))
			}
		}
	}
	switch s.Type {
	case connect.StructT:
		return w.record(s, meta, logical, &props)
	case connect.Array:
		w.b.WriteString(`{"type":"array","items":`)
		if err := w.schema(s.ValueSchema, false); err != nil {
			return err
		}
	case connect.Map:
		if s.KeySchema.Type == connect.String && !s.KeySchema.Optional {
			w.b.WriteString(`{"type":"map","values":`)
			if err := w.schema(s.ValueSchema, false); err != nil {
				return err
			}
		} else {
			w.b.WriteString(`{"type":"array","items":`)
			if err := w.mapEntry(s); err != nil {
				return err
			}
		}
	default:
		if err := meta(); err != nil {
			return err
		}
		logical()
		if symbols, enumName, ok := avroEnumSymbols(s, w.avroDataConfig); ok {
			w.enum(s, symbols, enumName, &props)
			return nil
		}
		if len(props.keys) == 0 {
			writeString(&w.b, avroPrimitive(s.Type))
			return nil
		}
		w.b.WriteString(`{"type":`)
		writeString(&w.b, avroPrimitive(s.Type))
		props.write(&w.b)
		w.b.WriteByte('}')
		return nil
	}
	if err := meta(); err != nil {
		return err
	}
	logical()
	props.write(&w.b)
	w.b.WriteByte('}')
	return nil
}

// splitName splits a Connect name into Avro namespace and name, scrubbing
// both with scrub.invalid.names.
func (w *avroSchemaWriter) splitName(full string) (ns, name string) {
	if w.scrub {
		full = scrubFullName(full)
	}
	return splitAvroName(full)
}

// enum writes an enhanced.avro.schema.support enum as Avro's
// EnumSchema.toJson does: type, name, namespace, doc, symbols, default,
// then the properties. The doc and default come from the parameters
// io.confluent.connect.avro.enum.doc.<n> / .enum.default.<n>, <n> being
// the short name of the Connect schema (ConnectDefault<i> when unnamed,
// which takes the next unnamed index, as AvroData.getNameOrDefault).
func (w *avroSchemaWriter) enum(s *connect.Schema, symbols []string, enumName string, props *avroProps) {
	short := avroDefaultName
	if s.Name != "" {
		_, short = w.splitName(s.Name)
	} else {
		w.unnamed++
		if w.unnamed > 1 {
			short += strconv.Itoa(w.unnamed)
		}
	}
	ns, name := splitAvroName(enumName)
	if w.nameRef(ns, name) {
		return
	}
	w.b.WriteString(`{"type":"enum",`)
	w.writeName(ns, name)
	if doc, ok := s.Param(avroEnumDocPrefix + short); ok {
		w.b.WriteString(`,"doc":`)
		writeString(&w.b, doc)
	}
	w.b.WriteString(`,"symbols":[`)
	for i, sym := range symbols {
		if i > 0 {
			w.b.WriteByte(',')
		}
		writeString(&w.b, sym)
	}
	w.b.WriteByte(']')
	if def, ok := s.Param(avroEnumDefaultPrefix + short); ok {
		w.b.WriteString(`,"default":`)
		writeString(&w.b, def)
	}
	props.write(&w.b)
	w.b.WriteByte('}')
}

// nameRef writes a reference to an already written named type and
// reports whether it did.
func (w *avroSchemaWriter) nameRef(ns, name string) bool {
	full := name
	if ns != "" {
		full = ns + "." + name
	}
	if !w.defined[full] {
		w.defined[full] = true
		return false
	}
	if ns == w.space {
		writeString(&w.b, name)
	} else {
		writeString(&w.b, full)
	}
	return true
}

func (w *avroSchemaWriter) writeName(ns, name string) {
	w.b.WriteString(`"name":`)
	writeString(&w.b, name)
	if ns != w.space {
		w.b.WriteString(`,"namespace":`)
		writeString(&w.b, ns)
	}
}

func (w *avroSchemaWriter) record(s *connect.Schema, meta func() error, logical func(), props *avroProps) error {
	ns, name := avroNamespace, avroDefaultName
	if s.Name != "" {
		ns, name = w.splitName(s.Name)
	} else {
		w.unnamed++
		if w.unnamed > 1 {
			name += strconv.Itoa(w.unnamed)
		}
	}
	if w.nameRef(ns, name) {
		return nil
	}
	saved := w.space
	w.b.WriteString(`{"type":"record",`)
	w.writeName(ns, name)
	w.space = ns
	if doc, ok := s.Param(avroRecordDocParam); ok {
		w.b.WriteString(`,"doc":`)
		writeString(&w.b, doc)
	}
	w.b.WriteString(`,"fields":[`)
	for i, f := range s.Fields {
		if i > 0 {
			w.b.WriteByte(',')
		}
		doc, _ := s.Param(avroFieldDocPrefix + f.Name)
		fname := f.Name
		if w.scrub {
			fname = scrubAvroName(fname)
		}
		if err := w.field(fname, f.Schema, doc); err != nil {
			return err
		}
	}
	w.b.WriteByte(']')
	w.space = saved
	if err := meta(); err != nil {
		return err
	}
	logical()
	props.write(&w.b)
	w.b.WriteByte('}')
	return nil
}

// field writes an Avro record field as AvroData.addAvroRecordField does:
// the Connect default as the field default, else null for optional fields.
func (w *avroSchemaWriter) field(name string, s *connect.Schema, doc string) error {
	w.b.WriteString(`{"name":`)
	writeString(&w.b, name)
	w.b.WriteString(`,"type":`)
	if err := w.schema(s, false); err != nil {
		return err
	}
	if doc != "" {
		w.b.WriteString(`,"doc":`)
		writeString(&w.b, doc)
	}
	switch {
	case s.Default != nil:
		d, err := avroDefaultJSON(s, s.Default, true)
		if err != nil {
			return err
		}
		w.b.WriteString(`,"default":`)
		w.b.WriteString(d)
	case s.Optional:
		w.b.WriteString(`,"default":null`)
	}
	w.b.WriteByte('}')
	return nil
}

func (w *avroSchemaWriter) mapEntry(s *connect.Schema) error {
	ns, name := avroNamespace, avroMapEntryName
	if s.Name != "" {
		ns, name = w.splitName(s.Name)
	}
	if w.nameRef(ns, name) {
		return nil
	}
	saved := w.space
	w.b.WriteString(`{"type":"record",`)
	w.writeName(ns, name)
	w.space = ns
	w.b.WriteString(`,"fields":[`)
	if err := w.field("key", s.KeySchema, ""); err != nil {
		return err
	}
	w.b.WriteByte(',')
	if err := w.field("value", s.ValueSchema, ""); err != nil {
		return err
	}
	w.b.WriteByte(']')
	w.space = saved
	if s.Name != "" {
		w.b.WriteString(`,"connect.internal.type":"MapEntry"`)
	}
	w.b.WriteByte('}')
	return nil
}

// avroDefaultJSON renders a Connect default value as AvroData's
// defaultValueFromConnect: numbers, booleans, strings; bytes (and Decimal)
// as an ISO-8859-1 string; structs as objects. As a field default
// (field=true) a float goes through Jackson's double, as Avro's
// JacksonUtils.toObject turns it into a Double.
func avroDefaultJSON(s *connect.Schema, v any, field bool) (string, error) {
	var b bytes.Buffer
	if err := writeAvroDefault(&b, s, v, field); err != nil {
		return "", err
	}
	return b.String(), nil
}

func writeAvroDefault(b *bytes.Buffer, s *connect.Schema, v any, field bool) error {
	if v == nil {
		b.WriteString("null")
		return nil
	}
	switch s.Name {
	case connect.DecimalName:
		d, ok := v.(connect.Decimal)
		if !ok {
			return fmt.Errorf("avro: default %T is not a Decimal", v)
		}
		writeLatin1(b, d.TwosComplement())
		return nil
	case connect.DateName, connect.TimeName, connect.TimestampName:
		if t, ok := v.(time.Time); ok {
			b.WriteString(strconv.FormatInt(logicalTimeValue(s.Name, t), 10))
			return nil
		}
	}
	switch s.Type {
	case connect.Int8, connect.Int16, connect.Int32, connect.Int64:
		n, ok := toInt64(v)
		if !ok {
			return fmt.Errorf("avro: default %T is not an %s", v, s.Type)
		}
		b.WriteString(strconv.FormatInt(n, 10))
	case connect.Float32:
		f, ok := v.(float32)
		if !ok {
			return fmt.Errorf("avro: default %T is not a float", v)
		}
		if field {
			b.WriteString(JavaFloat(float64(f), 64))
		} else {
			b.WriteString(JavaFloat(float64(f), 32))
		}
	case connect.Float64:
		f, ok := v.(float64)
		if !ok {
			return fmt.Errorf("avro: default %T is not a double", v)
		}
		b.WriteString(JavaFloat(f, 64))
	case connect.Boolean:
		t, ok := v.(bool)
		if !ok {
			return fmt.Errorf("avro: default %T is not a boolean", v)
		}
		b.WriteString(strconv.FormatBool(t))
	case connect.String:
		str, ok := v.(string)
		if !ok {
			return fmt.Errorf("avro: default %T is not a string", v)
		}
		writeString(b, str)
	case connect.Bytes:
		raw, ok := v.([]byte)
		if !ok {
			return fmt.Errorf("avro: default %T is not bytes", v)
		}
		writeLatin1(b, raw)
	case connect.Array:
		items, _ := v.([]any)
		b.WriteByte('[')
		for i, it := range items {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeAvroDefault(b, s.ValueSchema, it, field); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case connect.Map:
		m, _ := v.(map[string]any)
		return writeObject(b, m, func(x any) error { return writeAvroDefault(b, s.ValueSchema, x, field) })
	case connect.StructT:
		st, ok := v.(*connect.Struct)
		if !ok {
			return fmt.Errorf("avro: default %T is not a struct", v)
		}
		b.WriteByte('{')
		for i, f := range s.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, f.Name)
			b.WriteByte(':')
			if err := writeAvroDefault(b, f.Schema, st.Values[i], field); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("avro: unknown schema type %q", s.Type)
	}
	return nil
}

// writeLatin1 writes raw bytes as a JSON string of the ISO-8859-1
// characters they encode (Java's new String(bytes, ISO_8859_1)).
func writeLatin1(b *bytes.Buffer, raw []byte) {
	r := make([]rune, len(raw))
	for i, c := range raw {
		r[i] = rune(c)
	}
	writeString(b, string(r))
}

// logicalTimeValue is the Avro value of a Kafka Connect Date (days since
// the epoch), Time (ms of the day) or Timestamp (ms since the epoch).
func logicalTimeValue(name string, t time.Time) int64 {
	switch name {
	case connect.DateName:
		return int64(math.Floor(float64(t.Unix()) / 86400))
	case connect.TimeName:
		return (int64(t.Hour())*3600+int64(t.Minute())*60+int64(t.Second()))*1000 + int64(t.Nanosecond()/1e6)
	}
	return t.UnixMilli()
}
