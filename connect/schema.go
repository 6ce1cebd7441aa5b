package connect

import (
	"encoding/binary"
	"fmt"
	"math/big"
)

// Type is a Kafka Connect schema type, spelled as in org.apache.kafka.connect.data.Schema.Type.
type Type string

// The Kafka Connect schema types.
const (
	Int8    Type = "int8"
	Int16   Type = "int16"
	Int32   Type = "int32"
	Int64   Type = "int64"
	Float32 Type = "float"
	Float64 Type = "double"
	Boolean Type = "boolean"
	String  Type = "string"
	Bytes   Type = "bytes"
	Array   Type = "array"
	Map     Type = "map"
	StructT Type = "struct"
)

// Field is one named field of a STRUCT schema.
type Field struct {
	Name   string
	Index  int
	Schema *Schema
}

// Schema describes a value as org.apache.kafka.connect.data.Schema does.
// Parameters keep insertion order in ParamKeys so that converters emit them
// in the order the reference does.
type Schema struct {
	Type     Type
	Optional bool
	Name     string
	Version  int // 0 = absent
	Doc      string
	Default  any // nil = absent

	params    map[string]string
	paramKeys []string

	Fields      []Field
	ValueSchema *Schema // array items, map values
	KeySchema   *Schema // map keys

	fieldIdx map[string]int
}

// Param returns the schema parameter k and whether it is set.
func (s *Schema) Param(k string) (string, bool) {
	v, ok := s.params[k]
	return v, ok
}

// ParamKeys returns the parameter names in insertion order.
func (s *Schema) ParamKeys() []string { return s.paramKeys }

// Field returns the field called name, or nil.
func (s *Schema) Field(name string) *Field {
	if i, ok := s.fieldIdx[name]; ok {
		return &s.Fields[i]
	}
	return nil
}

// SchemaBuilder builds a Schema as org.apache.kafka.connect.data.SchemaBuilder does.
type SchemaBuilder struct{ s *Schema }

// NewSchema starts a builder for a schema of type t.
func NewSchema(t Type) *SchemaBuilder { return &SchemaBuilder{s: &Schema{Type: t}} }

// StructSchema starts a builder for a STRUCT schema.
func StructSchema() *SchemaBuilder { return NewSchema(StructT) }

func (b *SchemaBuilder) Optional() *SchemaBuilder     { b.s.Optional = true; return b }
func (b *SchemaBuilder) Name(n string) *SchemaBuilder { b.s.Name = n; return b }
func (b *SchemaBuilder) Version(v int) *SchemaBuilder { b.s.Version = v; return b }
func (b *SchemaBuilder) Doc(d string) *SchemaBuilder  { b.s.Doc = d; return b }
func (b *SchemaBuilder) Default(v any) *SchemaBuilder { b.s.Default = v; return b }

// Param sets a schema parameter, keeping the first insertion position.
func (b *SchemaBuilder) Param(k, v string) *SchemaBuilder {
	if b.s.params == nil {
		b.s.params = map[string]string{}
	}
	if _, ok := b.s.params[k]; !ok {
		b.s.paramKeys = append(b.s.paramKeys, k)
	}
	b.s.params[k] = v
	return b
}

// Field appends a field to a STRUCT schema.
func (b *SchemaBuilder) Field(name string, s *Schema) *SchemaBuilder {
	if b.s.fieldIdx == nil {
		b.s.fieldIdx = map[string]int{}
	}
	b.s.fieldIdx[name] = len(b.s.Fields)
	b.s.Fields = append(b.s.Fields, Field{Name: name, Index: len(b.s.Fields), Schema: s})
	return b
}

// Items sets the element schema of an ARRAY schema.
func (b *SchemaBuilder) Items(s *Schema) *SchemaBuilder { b.s.ValueSchema = s; return b }

// Build returns the schema.
func (b *SchemaBuilder) Build() *Schema { return b.s }

// Primitive schemas, as Schema.INT32_SCHEMA etc.
func Prim(t Type, optional bool) *Schema {
	b := NewSchema(t)
	if optional {
		b.Optional()
	}
	return b.Build()
}

// Logical type names of Kafka Connect.
const (
	DecimalName   = "org.apache.kafka.connect.data.Decimal"
	DateName      = "org.apache.kafka.connect.data.Date"
	TimeName      = "org.apache.kafka.connect.data.Time"
	TimestampName = "org.apache.kafka.connect.data.Timestamp"
)

// Decimal is the value of an org.apache.kafka.connect.data.Decimal field: the
// unscaled value; the scale is the schema parameter "scale".
type Decimal struct {
	Unscaled *big.Int
	Scale    int
}

// DecimalSchema returns org.apache.kafka.connect.data.Decimal with the given scale.
func DecimalSchema(scale int, optional bool) *Schema {
	b := NewSchema(Bytes).Name(DecimalName).Version(1).Param("scale", fmt.Sprint(scale))
	if optional {
		b.Optional()
	}
	return b.Build()
}

// TwosComplement encodes the unscaled value as Java's BigInteger.toByteArray:
// big-endian two's complement, minimal length.
// AppendTwosComplement appends TwosComplement's bytes to dst; an unscaled
// value that fits an int64 (every numeric of up to 18 digits) takes no
// allocation.
func (d Decimal) AppendTwosComplement(dst []byte) []byte {
	if !d.Unscaled.IsInt64() {
		return append(dst, d.TwosComplement()...)
	}
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(d.Unscaled.Int64()))
	// Drop the leading bytes that only extend the sign of the next one.
	i := 0
	for i < 7 && (b[i] == 0 && b[i+1]&0x80 == 0 || b[i] == 0xff && b[i+1]&0x80 != 0) {
		i++
	}
	return append(dst, b[i:]...)
}

func (d Decimal) TwosComplement() []byte {
	x := d.Unscaled
	if x.Sign() >= 0 {
		b := x.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// negative: 2^(8n) + x for the smallest n that keeps the sign bit set
	n := (x.BitLen() + 8) / 8
	mod := new(big.Int).Lsh(big.NewInt(1), uint(8*n))
	v := new(big.Int).Add(mod, x)
	b := v.Bytes()
	for len(b) < n {
		b = append([]byte{0xff}, b...)
	}
	// trim redundant leading 0xff bytes
	for len(b) > 1 && b[0] == 0xff && b[1]&0x80 != 0 {
		b = b[1:]
	}
	return b
}
