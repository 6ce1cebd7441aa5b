package transforms

import (
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect"
)

// ExtractNewRecordState is io.debezium.transforms.ExtractNewRecordState
// (Debezium "New Record State Extraction"): it replaces a Debezium change
// event envelope by its "after" row state.
//
//   - Create, read (snapshot) and update events become the "after" struct
//     with the envelope's key, topic and partition.
//   - Delete events and the tombstones that follow them are handled by
//     delete.tombstone.handling.mode: "tombstone" (default: the delete
//     becomes a record with a null value and the row schema, the tombstone
//     is dropped), "drop" (both dropped), "rewrite" (the delete becomes its
//     "before" state plus __deleted="true", other events get
//     __deleted="false", tombstones dropped), "rewrite-with-tombstone" (as
//     rewrite, tombstones kept), "delete-to-tombstone" (the delete becomes a
//     tombstone: null value and null schema; tombstones dropped). The options
//     removed in Debezium 3.2, delete.handling.mode (none|drop|rewrite) and
//     drop.tombstones (default true), are still accepted when
//     delete.tombstone.handling.mode is not set, with their old meaning.
//   - Truncate events (op "t") are dropped; records that are not change
//     event envelopes (value schema name not ending in ".Envelope": schema
//     change, heartbeat, transaction metadata) pass through unchanged.
//   - add.fields copies envelope fields into the row (op, ts_ms, ts_us,
//     ts_ns, source.* by default, transaction fields id, total_order,
//     data_collection_order; "struct.field" to qualify, "field:newName" to
//     rename), named add.fields.prefix (default "__") + field, or
//     prefix+struct+"_"+field when qualified; each added field is optional.
//     add.headers (with add.headers.prefix) does the same as headers; a
//     tombstone gets the op header "d".
//   - route.by.field sets the topic to the value of that row field (from
//     "before" for deletes).
//   - replace.null.with.default (default true) writes a field's default
//     value in place of null when the row is copied (rewrite, add.fields).
type ExtractNewRecordState struct {
	onDelete       deleteAction
	keepTombstones bool
	rewrite        bool
	addFields      []fieldRef
	addHeaders     []fieldRef
	routeByField   string
	replaceNull    bool
}

type deleteAction int

const (
	deleteToNullValue deleteAction = iota // value null, row schema kept
	deleteDrop
	deleteRewrite
	deleteToTombstone // value and schema null
)

// Debezium ExtractNewRecordStateConfigDefinition keys.
const (
	enrsDeleteTombstoneMode = "delete.tombstone.handling.mode"
	enrsDeleteMode          = "delete.handling.mode"
	enrsDropTombstones      = "drop.tombstones"
	enrsRouteByField        = "route.by.field"
	enrsAddFieldsPrefix     = "add.fields.prefix"
	enrsAddFields           = "add.fields"
	enrsAddHeadersPrefix    = "add.headers.prefix"
	enrsAddHeaders          = "add.headers"
	enrsReplaceNull         = "replace.null.with.default"
	enrsDeletedField        = "__deleted"
)

var _ connect.Transformation = (*ExtractNewRecordState)(nil)

// Config returns Debezium 3.6's keys plus the two removed in 3.2.
func (t *ExtractNewRecordState) Config() *connect.ConfigDef {
	d := connect.NewConfigDef()
	d.Define(connect.ConfigKey{Name: enrsDeleteTombstoneMode, Type: connect.TypeString, Default: connect.Str(""), Importance: connect.Medium, Width: "MEDIUM",
		DisplayName: "Handle delete and tombstone records",
		Doc: "How to handle delete records. Options are: drop - Remove the delete event and tombstone from the stream. " +
			"tombstone (default) - For each delete event, leave only a tombstone in the stream. " +
			"rewrite - Remove tombstone from the record, and add a `__deleted` field with the value `true`. " +
			"rewrite-with-tombstone - Retain tombstone in record and add a `__deleted` field with the value `true`. " +
			"delete-to-tombstone - Convert delete events to tombstone events and drop tombstone events.",
		Recommended: []string{"drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone"},
		Validator:   oneOfOrEmpty("drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone")})
	d.Define(connect.ConfigKey{Name: enrsDeleteMode, Type: connect.TypeString, Default: connect.Str(""), Importance: connect.Low, Width: "MEDIUM",
		DisplayName: "Handle delete records (removed in Debezium 3.2)",
		Doc:         "Removed in Debezium 3.2, accepted for older configs when " + enrsDeleteTombstoneMode + " is not set: none (delete becomes a null value), drop, rewrite.",
		Validator:   oneOfOrEmpty("none", "drop", "rewrite")})
	d.Define(connect.ConfigKey{Name: enrsDropTombstones, Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Low, Width: "SHORT",
		DisplayName: "Drop tombstones (removed in Debezium 3.2)",
		Doc:         "Removed in Debezium 3.2, accepted for older configs when " + enrsDeleteTombstoneMode + " is not set: whether tombstones are dropped."})
	d.Define(connect.ConfigKey{Name: enrsRouteByField, Type: connect.TypeString, Default: connect.Str(""), Importance: connect.Low, Width: "LONG",
		DisplayName: "Route by field name", Doc: "The column which determines how the events will be routed, the value will replace the topic name."})
	d.Define(connect.ConfigKey{Name: enrsAddFieldsPrefix, Type: connect.TypeString, Default: connect.Str("__"), Importance: connect.Low, Width: "SHORT",
		DisplayName: "Field prefix to be added to each field.", Doc: "Adds this prefix to each field listed."})
	d.Define(connect.ConfigKey{Name: enrsAddFields, Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Low, Width: "LONG",
		DisplayName: "Adds the specified field(s) to the message if they exist.",
		Doc: "Adds each field listed, prefixed with __ (or __<struct>_ if the struct is specified). " +
			"Example: 'version,connector,source.ts_ms' would add __version, __connector and __source_ts_ms fields. " +
			"Optionally one can also map new field name like version:VERSION,connector:CONNECTOR,source.ts_ms:EVENT_TIMESTAMP." +
			"Please note that the new field name is case-sensitive.", Validator: fieldRefsValidator})
	d.Define(connect.ConfigKey{Name: enrsAddHeadersPrefix, Type: connect.TypeString, Default: connect.Str("__"), Importance: connect.Low, Width: "SHORT",
		DisplayName: "Header prefix to be added to each header.", Doc: "Adds this prefix listed to each header."})
	d.Define(connect.ConfigKey{Name: enrsAddHeaders, Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Low, Width: "LONG",
		DisplayName: "Adds the specified fields to the header if they exist.",
		Doc: "Adds each field listed to the header,  __ (or __<struct>_ if the struct is specified). " +
			"Example: 'version,connector,source.ts_ms' would add __version, __connector and __source_ts_ms fields. " +
			"Optionally one can also map new field name like version:VERSION,connector:CONNECTOR,source.ts_ms:EVENT_TIMESTAMP." +
			"Please note that the new field name is case-sensitive.", Validator: fieldRefsValidator})
	d.Define(connect.ConfigKey{Name: enrsReplaceNull, Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Low, Width: "SHORT",
		DisplayName: "replace null field value with default",
		Doc:         "When this option is enabled, null field values are replaced by source-defined defaults when rewriting the record."})
	return d
}

func oneOfOrEmpty(vals ...string) func(string) string {
	return func(v string) string {
		if v == "" {
			return ""
		}
		for _, a := range vals {
			if strings.EqualFold(a, v) {
				return ""
			}
		}
		return "Value must be one of " + strings.Join(vals, ", ")
	}
}

func fieldRefsValidator(v string) string {
	if _, err := parseFieldRefs("", v); err != nil {
		return err.Error()
	}
	return ""
}

// Configure reads the keys of Config.
func (t *ExtractNewRecordState) Configure(props map[string]string) error {
	p, err := parse(t.Config(), props)
	if err != nil {
		return err
	}
	mode := strings.ToLower(p.String(enrsDeleteTombstoneMode))
	_, legacyMode := props[enrsDeleteMode]
	_, legacyDrop := props[enrsDropTombstones]
	if mode == "" && (legacyMode || legacyDrop) {
		switch strings.ToLower(p.String(enrsDeleteMode)) {
		case "drop":
			t.onDelete = deleteDrop
		case "rewrite":
			t.onDelete, t.rewrite = deleteRewrite, true
		default:
			t.onDelete = deleteToNullValue
		}
		t.keepTombstones = !p.Bool(enrsDropTombstones)
	} else {
		switch mode {
		case "drop":
			t.onDelete = deleteDrop
		case "rewrite":
			t.onDelete, t.rewrite = deleteRewrite, true
		case "rewrite-with-tombstone":
			t.onDelete, t.rewrite, t.keepTombstones = deleteRewrite, true, true
		case "delete-to-tombstone":
			t.onDelete = deleteToTombstone
		default: // "tombstone"
			t.onDelete = deleteToNullValue
		}
	}
	t.addFields, _ = parseFieldRefs(p.String(enrsAddFieldsPrefix), p.String(enrsAddFields))
	t.addHeaders, _ = parseFieldRefs(p.String(enrsAddHeadersPrefix), p.String(enrsAddHeaders))
	t.routeByField = p.String(enrsRouteByField)
	t.replaceNull = p.Bool(enrsReplaceNull)
	return nil
}

// Apply unwraps r as described on the type.
func (t *ExtractNewRecordState) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	if r.Value == nil {
		if !t.keepTombstones {
			return nil, nil
		}
		out := withRecord(r)
		for _, f := range t.addHeaders {
			if f.field == "op" {
				out.Headers = append(out.Headers, connect.Header{Key: f.newName, Value: []byte("d")})
			}
		}
		return out, nil
	}
	if !isEnvelope(r.ValueSchema) {
		return r, nil
	}
	env, err := requireStruct(r.Value, "Read Debezium envelope")
	if err != nil {
		return nil, err
	}
	if op, _ := env.Get("op").(string); op == "t" {
		return nil, nil
	}
	after, _ := env.Get("after").(*connect.Struct)
	before, _ := env.Get("before").(*connect.Struct)
	if after == nil && before == nil {
		return nil, nil
	}
	out := withRecord(r)
	for _, f := range t.addHeaders {
		if s, v, ok := f.lookup(env); ok {
			out.Headers = append(out.Headers, connect.Header{Key: f.newName, Value: headerBytes(s, v)})
		}
	}
	rowSchema := r.ValueSchema.Field("after").Schema
	if after == nil { // delete
		if t.routeByField != "" {
			out.Topic = routeTopic(before, t.routeByField, out.Topic)
		}
		switch t.onDelete {
		case deleteDrop:
			return nil, nil
		case deleteToTombstone:
			out.ValueSchema, out.Value = nil, nil
			return out, nil
		case deleteRewrite:
			s, v := t.withAddedFields(before, env, true)
			out.ValueSchema, out.Value = s, v
			return out, nil
		default:
			out.ValueSchema, out.Value = rowSchema, nil
			return out, nil
		}
	}
	if t.routeByField != "" {
		out.Topic = routeTopic(after, t.routeByField, out.Topic)
	}
	if len(t.addFields) == 0 && !t.rewrite {
		out.ValueSchema, out.Value = after.Schema, after
		return out, nil
	}
	s, v := t.withAddedFields(after, env, false)
	out.ValueSchema, out.Value = s, v
	return out, nil
}

// withAddedFields copies row and appends the add.fields and, in rewrite
// mode, __deleted ("true" for deletes).
func (t *ExtractNewRecordState) withAddedFields(row, env *connect.Struct, deleted bool) (*connect.Schema, *connect.Struct) {
	b := copyBasics(row.Schema, connect.StructT)
	for _, f := range row.Schema.Fields {
		b.Field(f.Name, f.Schema)
	}
	type added struct {
		name string
		v    any
	}
	var extra []added
	for _, f := range t.addFields {
		if s, v, ok := f.lookup(env); ok {
			b.Field(f.newName, copyBasics(s, s.Type).Optional().Build())
			extra = append(extra, added{f.newName, v})
		}
	}
	if t.rewrite {
		b.Field(enrsDeletedField, connect.Prim(connect.String, true))
		extra = append(extra, added{enrsDeletedField, fmt.Sprint(deleted)})
	}
	s := b.Build()
	st := connect.NewStruct(s)
	for i, f := range row.Schema.Fields {
		v := row.Values[i]
		if v == nil && t.replaceNull {
			v = f.Schema.Default
		}
		st.Values[i] = v
	}
	for _, a := range extra {
		st.Put(a.name, a.v)
	}
	return s, st
}

func routeTopic(row *connect.Struct, field, topic string) string {
	if row == nil || row.Schema.Field(field) == nil {
		return topic
	}
	if v, ok := row.Get(field).(string); ok && v != "" {
		return v
	}
	return topic
}

// isEnvelope reports whether s is a Debezium envelope schema
// (Envelope.isEnvelopeSchema: the name ends with ".Envelope").
func isEnvelope(s *connect.Schema) bool {
	return s != nil && s.Type == connect.StructT && strings.HasSuffix(s.Name, ".Envelope")
}

// fieldRef is one entry of add.fields/add.headers: an envelope field, the
// struct hosting it ("" = the envelope itself) and the output name.
type fieldRef struct {
	parent  string
	field   string
	newName string
}

func parseFieldRefs(prefix, v string) ([]fieldRef, error) {
	var out []fieldRef
	for _, item := range list(v) {
		parts := strings.Split(item, ":")
		if len(parts) > 2 {
			return nil, fmt.Errorf("Unexpected field name: %s", item)
		}
		path := strings.Split(parts[0], ".")
		f := fieldRef{field: path[len(path)-1]}
		if len(path) > 1 {
			f.parent = path[0]
		} else {
			switch f.field {
			case "id", "total_order", "data_collection_order":
				f.parent = "transaction"
			case "op", "ts_ms", "ts_us", "ts_ns":
			default:
				f.parent = "source"
			}
		}
		switch {
		case len(parts) == 2:
			f.newName = prefix + parts[1]
		case len(path) > 1:
			f.newName = prefix + f.parent + "_" + f.field
		default:
			f.newName = prefix + f.field
		}
		out = append(out, f)
	}
	return out, nil
}

// lookup returns the schema and value of the field in env: in its parent
// struct, else (a field another SMT added) in the envelope itself.
func (f fieldRef) lookup(env *connect.Struct) (*connect.Schema, any, bool) {
	if f.parent != "" {
		if pf := env.Schema.Field(f.parent); pf != nil && pf.Schema.Type == connect.StructT {
			if ff := pf.Schema.Field(f.field); ff != nil {
				var v any
				if ps, ok := env.Values[pf.Index].(*connect.Struct); ok {
					v = ps.Values[ff.Index]
				}
				return ff.Schema, v, true
			}
		}
	}
	if ff := env.Schema.Field(f.field); ff != nil {
		return ff.Schema, env.Values[ff.Index], true
	}
	return nil, nil, false
}

// Close does nothing.
func (t *ExtractNewRecordState) Close() {}
