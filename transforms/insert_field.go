package transforms

import (
	"errors"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// InsertField is org.apache.kafka.connect.transforms.InsertField$Key and
// $Value: it appends topic.field (string), partition.field (int32, when the
// record has a partition), timestamp.field (Timestamp, when the record has
// a timestamp) and static.field (string static.value) to a STRUCT or a
// schemaless map. A field name ending in "!" is required, in "?" (or
// nothing) optional. offset.field only applies to sink records and fails
// on source records. A null key or value (tombstone) passes unchanged.
type InsertField struct {
	op                                   operand
	topic, partition, offset, ts, static insertSpec
	staticValue                          string
	replaceNull                          bool
}

type insertSpec struct {
	name     string
	optional bool
}

var _ connect.Transformation = (*InsertField)(nil)

// Config: topic.field, partition.field, offset.field, timestamp.field,
// static.field, static.value, replace.null.with.default.
func (t *InsertField) Config() *connect.ConfigDef {
	d := connect.NewConfigDef()
	for _, k := range []struct{ name, doc string }{
		{"topic.field", "Field name for Kafka topic. Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."},
		{"partition.field", "Field name for Kafka partition. Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."},
		{"offset.field", "Field name for Kafka offset - only applicable to sink connectors.<br/>Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."},
		{"timestamp.field", "Field name for record timestamp. Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."},
		{"static.field", "Field name for static data field. Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."},
		{"static.value", "Static field value, if field name configured."},
	} {
		d.Define(connect.ConfigKey{Name: k.name, Type: connect.TypeString, Default: connect.Str(""), Importance: connect.Medium, Doc: k.doc})
	}
	d.Define(connect.ConfigKey{Name: "replace.null.with.default", Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Medium,
		Doc: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used."})
	return d
}

func parseInsertSpec(v string) insertSpec {
	switch {
	case v == "":
		return insertSpec{}
	case strings.HasSuffix(v, "?"):
		return insertSpec{name: v[:len(v)-1], optional: true}
	case strings.HasSuffix(v, "!"):
		return insertSpec{name: v[:len(v)-1]}
	}
	return insertSpec{name: v, optional: true}
}

// Configure reads the field specs.
func (t *InsertField) Configure(props map[string]string) error {
	p, err := parse(t.Config(), props)
	if err != nil {
		return err
	}
	t.topic = parseInsertSpec(p.String("topic.field"))
	t.partition = parseInsertSpec(p.String("partition.field"))
	t.offset = parseInsertSpec(p.String("offset.field"))
	t.ts = parseInsertSpec(p.String("timestamp.field"))
	t.static = parseInsertSpec(p.String("static.field"))
	t.staticValue = p.String("static.value")
	t.replaceNull = p.Bool("replace.null.with.default")
	if t.topic.name == "" && t.partition.name == "" && t.offset.name == "" && t.ts.name == "" && t.static.name == "" {
		return configErr("topic.field", "No field insertion configured")
	}
	if t.static.name != "" && t.staticValue == "" {
		return configErr("static.value", "No value specified for static field: "+t.static.name)
	}
	return nil
}

func specSchema(t connect.Type, sp insertSpec) *connect.Schema { return connect.Prim(t, sp.optional) }

// Apply inserts the fields.
func (t *InsertField) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	s, v := t.op.get(r)
	if v == nil {
		return r, nil
	}
	if t.offset.name != "" {
		return nil, errors.New("Only SinkRecord supported for [field insertion], found: SourceRecord")
	}
	if s == nil {
		m, err := requireMap(v, "field insertion")
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m)+4)
		for k, x := range m {
			out[k] = x
		}
		if t.topic.name != "" {
			out[t.topic.name] = r.Topic
		}
		if t.partition.name != "" && r.Partition != nil {
			out[t.partition.name] = *r.Partition
		}
		if t.ts.name != "" && !r.Timestamp.IsZero() {
			out[t.ts.name] = r.Timestamp.UnixMilli()
		}
		if t.static.name != "" {
			out[t.static.name] = t.staticValue
		}
		return t.op.with(r, nil, out), nil
	}
	st, err := requireStruct(v, "field insertion")
	if err != nil {
		return nil, err
	}
	b := copyBasics(s, connect.StructT)
	for _, f := range s.Fields {
		b.Field(f.Name, f.Schema)
	}
	if t.topic.name != "" {
		b.Field(t.topic.name, specSchema(connect.String, t.topic))
	}
	if t.partition.name != "" {
		b.Field(t.partition.name, specSchema(connect.Int32, t.partition))
	}
	if t.ts.name != "" {
		tb := connect.NewSchema(connect.Int64).Name(connect.TimestampName).Version(1)
		if t.ts.optional {
			tb.Optional()
		}
		b.Field(t.ts.name, tb.Build())
	}
	if t.static.name != "" {
		b.Field(t.static.name, specSchema(connect.String, t.static))
	}
	ns := b.Build()
	nv := connect.NewStruct(ns)
	for _, f := range s.Fields {
		nv.Values[f.Index] = fieldValue(st, f, t.replaceNull)
	}
	if t.topic.name != "" {
		nv.Put(t.topic.name, r.Topic)
	}
	if t.partition.name != "" && r.Partition != nil {
		nv.Put(t.partition.name, *r.Partition)
	}
	if t.ts.name != "" && !r.Timestamp.IsZero() {
		nv.Put(t.ts.name, r.Timestamp.UTC().Truncate(time.Millisecond))
	}
	if t.static.name != "" {
		nv.Put(t.static.name, t.staticValue)
	}
	return t.op.with(r, ns, nv), nil
}

// Close does nothing.
func (t *InsertField) Close() {}
