package transforms

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// EventRouter is io.debezium.transforms.outbox.EventRouter (Debezium 3.6
// "Outbox Event Router",
// https://debezium.io/documentation/reference/stable/transformations/outbox-event-router.html):
// it turns the create events of an outbox table into the events the
// application wrote.
//
//   - Tombstones are dropped; records that are not change event envelopes
//     (heartbeats, schema changes) pass unchanged; deletes are dropped;
//     updates are dropped with a warning (table.op.invalid.behavior=warn,
//     default) or an error log (error), or fail the record (fatal). Creates
//     and snapshot reads are routed.
//   - Topic: the row's route.by.field column (default aggregatetype), then
//     rewritten as RegexRouter with route.topic.regex (default
//     "(?<routedByValue>.*)") and route.topic.replacement (default
//     "outbox.event.${routedByValue}").
//   - Key: the table.field.event.key column (default aggregateid) with its
//     schema; a missing column fails the record.
//   - Headers: "id" with the table.field.event.id column (default id), then
//     each table.fields.additional.placement "column:header[:alias]"; values
//     serialised as the default SimpleHeaderConverter does.
//   - Value: without any "envelope" placement, the table.field.event.payload
//     column (default payload) alone, with its schema; with some, a STRUCT
//     {payload, <aliases>...} named after the row schema with the routed
//     value inserted before its last segment
//     ("dbserver1.public.outboxevent.<route value>.Value"), versioned by the
//     table.field.event.schema.version column when set. As Debezium, that
//     STRUCT schema is cached by payload schema (and by version), so later
//     events keep the name derived from the first event's route value.
//   - "column:partition" sets the Kafka partition from an INT32 column.
//   - Timestamp: the envelope's ts_ms, or the table.field.event.timestamp
//     column when set (io.debezium.time.Timestamp, MicroTimestamp or
//     NanoTimestamp, converted to ms; a null value falls back to ts_ms).
//   - A null or blank payload gives a tombstone (null value and schema) with
//     route.tombstone.on.empty.payload=true.
//   - table.expand.json.payload=true parses a string payload that starts
//     with '{' into a STRUCT whose schema is inferred as Debezium's
//     JsonSchemaData does (see expandJSON); null members are left out
//     (table.json.payload.null.behavior=ignore) or kept as optional BYTES
//     (optional_bytes). A payload that is not JSON is kept as it is, with a
//     warning; a JSON array fails the record (Debezium's record has the
//     inferred ARRAY schema over the string and cannot be converted).
//   - A configured additional column missing from the row fails the record
//     unless table.fields.additional.error.on.missing=false (as documented)
//     or table.field.additional.missing=ignore (the key of Debezium 3.6.1's
//     code).
//
// The tracing options (tracing.span.context.field, tracing.operation.name,
// tracing.with.context.field.only) are accepted and ignored: connectd has
// no OpenTelemetry integration. table.field.event.type is accepted, and, as
// in Debezium, unused.
type EventRouter struct {
	invalidOp      string
	fieldID        string
	fieldKey       string
	fieldPayload   string
	fieldTimestamp string
	fieldVersion   string
	routeBy        string
	routeRe        *regexp.Regexp
	routeRepl      string
	tombstoneEmpty bool
	expandJSON     bool
	nullAsBytes    bool
	additional     []outboxField
	ignoreMissing  bool
	onlyHeaders    bool

	valueSchemas     map[string]*connect.Schema
	versionedSchemas map[int]*connect.Schema
	log              *slog.Logger
}

type outboxField struct {
	column, placement, alias string
}

var _ connect.Transformation = (*EventRouter)(nil)

// Config returns the keys of the Debezium 3.6 option table, the
// table.field.additional.missing key of the 3.6.1 code and the tracing keys.
func (t *EventRouter) Config() *connect.ConfigDef {
	d := connect.NewConfigDef()
	str := func(name, def, group, label, doc string, imp connect.Importance) {
		d.Define(connect.ConfigKey{Name: name, Type: connect.TypeString, Default: connect.Str(def), Importance: imp, Group: group, Width: "MEDIUM", DisplayName: label, Doc: doc})
	}
	boolean := func(name, def, group, label, doc string, imp connect.Importance) {
		d.Define(connect.ConfigKey{Name: name, Type: connect.TypeBoolean, Default: connect.Str(def), Importance: imp, Group: group, Width: "MEDIUM", DisplayName: label, Doc: doc})
	}
	str("table.field.event.id", "id", "Table", "Event ID Field", "The column which contains the event ID within the outbox table", connect.Low)
	str("table.field.event.key", "aggregateid", "Table", "Event Key Field", "The column which contains the event key within the outbox table", connect.Low)
	str("table.field.event.type", "type", "Table", "Event Type Field", "The column which contains the event type within the outbox table", connect.Low)
	str("table.field.event.payload", "payload", "Table", "Event Payload Field", "The column which contains the event payload within the outbox table", connect.Low)
	str("table.field.event.timestamp", "", "Table", "Event Timestamp Field",
		"Optionally you can override the Kafka message timestamp with a value from a chosen column, otherwise it'll be the Debezium event processed timestamp.", connect.Medium)
	d.Define(connect.ConfigKey{Name: "table.fields.additional.placement", Type: connect.TypeList, Default: connect.Str(""), Importance: connect.High, Group: "Table", Width: "MEDIUM",
		DisplayName: "Settings for each additional column in the outbox table",
		Doc: "Extra fields can be added as part of the event envelope or a message header, format is a list of colon-delimited pairs or trios when you desire to have aliases, " +
			"e.g. <code>id:header,field_name:envelope:alias,field_name:partition</code> ",
		Validator: func(v string) string {
			if _, err := parseOutboxFields(v); err != nil {
				return err.Error()
			}
			return ""
		}})
	boolean("table.fields.additional.error.on.missing", "true", "Table", "Should the transform error if an additional field is missing in the change data",
		"When transforming the 'table.fields.additional.placement' fields, should the transform throw an exception if one of the fields is missing in the change data", connect.Medium)
	d.Define(connect.ConfigKey{Name: "table.field.additional.missing", Type: connect.TypeString, Default: connect.Str("error"), Importance: connect.Medium, Group: "Table", Width: "MEDIUM",
		DisplayName: "Behavior when an additional field is missing in the change data",
		Doc: "When transforming the 'table.fields.additional.placement' fields, defines the behavior when one of the configured fields is missing in the change data. " +
			"'error' (default) will throw an exception; 'ignore' will silently skip the missing field.",
		Allowed: []string{"error", "ignore"}})
	str("table.field.event.schema.version", "", "Table", "Event Schema Version Field", "The column which contains the event schema version within the outbox table", connect.Low)
	d.Define(connect.ConfigKey{Name: "table.op.invalid.behavior", Type: connect.TypeString, Default: connect.Str("warn"), Importance: connect.Medium, Group: "Table", Width: "MEDIUM",
		DisplayName: "Behavior when capturing an unexpected outbox event",
		Doc: "While Debezium is capturing changes from the outbox table, it is expecting only to process 'create' or 'delete' row events; " +
			"in case something else is processed this transform can log it as warning, error or stop the process.",
		Allowed: []string{"warn", "error", "fatal"}})
	boolean("table.expand.json.payload", "false", "Table", "Expand Payload escaped string as real JSON",
		"Whether or not to try unescaping a JSON string and make it real JSON. It will infer schema information from payload and update the record schema accordingly. "+
			"If content is not JSON, it just produces a warning and emits the record unchanged", connect.Medium)
	d.Define(connect.ConfigKey{Name: "table.json.payload.null.behavior", Type: connect.TypeString, Default: connect.Str("ignore"), Importance: connect.Medium, Group: "Table", Width: "MEDIUM",
		DisplayName: "Behavior when json payload including null value",
		Doc:         "Behavior when json payload including null value, the default will ignore null, optional_bytes will keep the null value, and treat null as optional bytes of connect.",
		Allowed:     []string{"ignore", "optional_bytes"}})
	str("route.by.field", "aggregatetype", "Router", "Field to route events by",
		"The column which determines how the events will be routed, the value will become part of the topic name", connect.High)
	d.Define(connect.ConfigKey{Name: "route.topic.regex", Type: connect.TypeString, Default: connect.Str("(?<routedByValue>.*)"), Importance: connect.Low, Group: "Router", Width: "MEDIUM",
		DisplayName: "The name of the routed topic",
		Doc:         "The default regex to use within the RegexRouter, the default capture will allow to replace the routed field into a new topic name defined in 'route.topic.replacement'",
		Validator:   regexValidator})
	str("route.topic.replacement", "outbox.event.${routedByValue}", "Router", "The name of the routed topic",
		"The name of the topic in which the events will be routed, a replacement '${routedByValue}' is available which is the value of The column configured via 'route.by.field'", connect.High)
	boolean("route.tombstone.on.empty.payload", "false", "Router", "Empty payloads cause a tombstone message", "Whether or not an empty payload should cause a tombstone event.", connect.High)
	str("tracing.span.context.field", "tracingspancontext", "Tracing", "Serialized tracing span context field",
		"The name of the field containing java.util.Properties representation of serialized span context. Accepted and ignored by connectd.", connect.Low)
	str("tracing.operation.name", "debezium-read", "Tracing", "Tracing operation name",
		"The operation name representing Debezium processing span. Accepted and ignored by connectd.", connect.Low)
	boolean("tracing.with.context.field.only", "false", "Tracing", "Trace only events with context field present",
		"Set to true when only events that have serialized context field should be traced. Accepted and ignored by connectd.", connect.Low)
	return d
}

// parseOutboxFields parses table.fields.additional.placement
// (AdditionalFieldsValidator.isListOfStringPairs and
// parseAdditionalFieldsConfig): column:placement[:alias], placement header,
// envelope or partition; the alias defaults to the column.
func parseOutboxFields(v string) ([]outboxField, error) {
	var out []outboxField
	for _, item := range list(v) {
		parts := strings.Split(item, ":")
		if len(parts) < 2 || len(parts) > 3 {
			return nil, fmt.Errorf("'%s' must be a pair or trio of colon-separated values (column:placement or column:placement:alias)", item)
		}
		f := outboxField{column: parts[0], placement: strings.ToLower(strings.TrimSpace(parts[1])), alias: parts[0]}
		if len(parts) == 3 {
			f.alias = parts[2]
		}
		switch f.placement {
		case "header", "envelope", "partition":
		default:
			return nil, fmt.Errorf("'%s' has placement '%s'; it must be header, envelope or partition", item, parts[1])
		}
		out = append(out, f)
	}
	return out, nil
}

// Configure reads the keys of Config.
func (t *EventRouter) Configure(props map[string]string) error {
	p, err := parse(t.Config(), props)
	if err != nil {
		return err
	}
	t.invalidOp = strings.ToLower(p.String("table.op.invalid.behavior"))
	t.fieldID = p.String("table.field.event.id")
	t.fieldKey = p.String("table.field.event.key")
	t.fieldPayload = p.String("table.field.event.payload")
	t.fieldTimestamp = p.String("table.field.event.timestamp")
	t.fieldVersion = p.String("table.field.event.schema.version")
	t.routeBy = p.String("route.by.field")
	t.routeRe, _ = compileJavaRegex(p.String("route.topic.regex"))
	t.routeRepl = javaReplacement(p.String("route.topic.replacement"))
	t.tombstoneEmpty = p.Bool("route.tombstone.on.empty.payload")
	t.expandJSON = p.Bool("table.expand.json.payload")
	t.nullAsBytes = strings.EqualFold(p.String("table.json.payload.null.behavior"), "optional_bytes")
	t.additional, _ = parseOutboxFields(p.String("table.fields.additional.placement"))
	t.ignoreMissing = !p.Bool("table.fields.additional.error.on.missing") || strings.EqualFold(p.String("table.field.additional.missing"), "ignore")
	t.onlyHeaders = true
	for _, f := range t.additional {
		if f.placement == "envelope" {
			t.onlyHeaders = false
		}
	}
	t.valueSchemas = map[string]*connect.Schema{}
	t.versionedSchemas = map[int]*connect.Schema{}
	t.log = slog.Default().With("transformation", dbzPkg+"outbox.EventRouter")
	return nil
}

// Apply routes one outbox table event as described on the type.
func (t *EventRouter) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	if r.Value == nil {
		return nil, nil
	}
	if !isEnvelope(r.ValueSchema) {
		return r, nil
	}
	env, err := requireStruct(r.Value, "Detect Debezium Operation")
	if err != nil {
		return nil, err
	}
	op, _ := env.Get("op").(string)
	switch op {
	case "d":
		return nil, nil
	case "u":
		switch t.invalidOp {
		case "fatal":
			return nil, fmt.Errorf("Unexpected update message received %s, fail.", keyString(r))
		case "error":
			t.log.Error("Unexpected update message received and ignored", "key", keyString(r))
		default:
			t.log.Warn("Unexpected update message received and ignored", "key", keyString(r))
		}
		return nil, nil
	}
	row, err := requireStruct(env.Get("after"), "Read Outbox Event")
	if err != nil {
		return nil, err
	}
	rowSchema := row.Schema
	payloadField := rowSchema.Field(t.fieldPayload)
	if payloadField == nil {
		return nil, fmt.Errorf("Unable to find payload field %s in event", t.fieldPayload)
	}
	payloadSchema := payloadField.Schema
	ts, err := t.timestamp(env, row)
	if err != nil {
		return nil, err
	}
	idField := rowSchema.Field(t.fieldID)
	if idField == nil {
		return nil, fmt.Errorf("Unable to find event-id field %s in event", t.fieldID)
	}
	payload := getOrDefault(row, *payloadField)
	out := withRecord(r)
	out.Headers = append(out.Headers, connect.Header{Key: "id", Value: headerBytes(idField.Schema, getOrDefault(row, *idField))})

	if t.expandJSON {
		if s, ok := payload.(string); !ok {
			t.log.Warn("Expand JSON payload is turned on but payload is not a string", "key", keyString(r))
		} else if es, ev, err := expandJSON(t.fieldPayload, s, t.nullAsBytes); errors.Is(err, errJSONValue) {
			// Debezium has already replaced the payload schema when the value
			// conversion fails: its record carries the string under the
			// inferred schema and cannot be converted.
			return nil, fmt.Errorf("payload %.40q does not fit the schema inferred from it: %w", s, err)
		} else if err != nil {
			t.log.Warn("JSON expansion failed", "error", err)
		} else {
			payloadSchema, payload = es, ev
		}
	}
	if payloadSchema == nil && !t.onlyHeaders {
		return nil, fmt.Errorf("fieldSchema for field payload cannot be null.")
	}

	routeValue, err := rowString(row, t.routeBy)
	if err != nil {
		return nil, err
	}
	var valueSchema *connect.Schema
	var value *connect.Struct
	if !t.onlyHeaders {
		version := 0
		if t.fieldVersion != "" {
			f := rowSchema.Field(t.fieldVersion)
			if f == nil {
				return nil, fmt.Errorf("%s is not a valid field name", t.fieldVersion)
			}
			if v, ok := getOrDefault(row, *f).(int32); ok {
				version = int(v)
			}
		}
		if valueSchema, err = t.valueSchema(payloadSchema, rowSchema, routeValue, version); err != nil {
			return nil, err
		}
		value = connect.NewStruct(valueSchema).Put("payload", payload)
	}
	for _, f := range t.additional {
		cf := rowSchema.Field(f.column)
		if cf == nil {
			if t.ignoreMissing {
				continue
			}
			return nil, fmt.Errorf("%s is not a valid field name", f.column)
		}
		v := getOrDefault(row, *cf)
		switch f.placement {
		case "envelope":
			value.Put(f.alias, v)
		case "header":
			out.Headers = append(out.Headers, connect.Header{Key: f.alias, Value: headerBytes(cf.Schema, v)})
		case "partition":
			if cf.Schema.Type != connect.Int32 {
				return nil, fmt.Errorf("Field '%s' is not of type INT32 (partition placement): %w", f.column, ErrUnexpectedType)
			}
			if n, ok := v.(int32); ok {
				out.Partition = &n
			} else {
				out.Partition = nil
			}
		}
	}
	empty := payload == nil
	if s, ok := payload.(string); ok && strings.TrimSpace(s) == "" {
		empty = true
	}
	switch {
	case empty && t.tombstoneEmpty:
		out.ValueSchema, out.Value = nil, nil
	case t.onlyHeaders:
		out.ValueSchema, out.Value = payloadSchema, payload
	default:
		out.ValueSchema, out.Value = valueSchema, value
	}
	if kf := t.fieldKey; kf != "" {
		f := rowSchema.Field(kf)
		if f == nil {
			return nil, fmt.Errorf("%s is not a valid field name", kf)
		}
		out.KeySchema, out.Key = f.Schema, getOrDefault(row, *f)
	} else {
		out.KeySchema, out.Key = connect.Prim(connect.String, false), nil
	}
	out.Timestamp = time.UnixMilli(ts).UTC()
	out.Topic = routeValue
	if m := t.routeRe.FindStringSubmatchIndex(routeValue); m != nil {
		out.Topic = string(t.routeRe.ExpandString(nil, t.routeRepl, routeValue, m))
	}
	return out, nil
}

func rowString(row *connect.Struct, field string) (string, error) {
	f := row.Schema.Field(field)
	if f == nil {
		return "", fmt.Errorf("%s is not a valid field name", field)
	}
	s, ok := getOrDefault(row, *f).(string)
	if !ok {
		return "", fmt.Errorf("route.by.field %s has no string value: %w", field, ErrUnexpectedType)
	}
	return s, nil
}

func keyString(r *connect.SourceRecord) string {
	if st, ok := r.Key.(*connect.Struct); ok {
		var b strings.Builder
		b.WriteString("Struct{")
		n := 0
		for i, f := range st.Schema.Fields {
			if st.Values[i] == nil {
				continue
			}
			if n > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%s=%v", f.Name, st.Values[i])
			n++
		}
		b.WriteByte('}')
		return b.String()
	}
	return fmt.Sprint(r.Key)
}

// timestamp returns the record timestamp in ms (getEventTimestampMs).
func (t *EventRouter) timestamp(env, row *connect.Struct) (int64, error) {
	tsMs, _ := env.Get("ts_ms").(int64)
	if t.fieldTimestamp == "" {
		return tsMs, nil
	}
	f := row.Schema.Field(t.fieldTimestamp)
	if f == nil {
		return 0, fmt.Errorf("Unable to find timestamp field %s in event", t.fieldTimestamp)
	}
	if f.Schema.Type != connect.Int64 {
		return 0, fmt.Errorf("Unsupported field type %s for event timestamp: %w", f.Schema.Type, ErrUnexpectedType)
	}
	v, ok := getOrDefault(row, *f).(int64)
	if !ok {
		return tsMs, nil
	}
	switch f.Schema.Name {
	case "":
		return 0, fmt.Errorf("Unsupported field type %s (without logical schema name) for event timestamp", strings.ToUpper(string(f.Schema.Type)))
	case "io.debezium.time.Timestamp":
		return v, nil
	case "io.debezium.time.MicroTimestamp":
		return v / 1000, nil
	case "io.debezium.time.NanoTimestamp":
		return v / 1000000, nil
	}
	return 0, fmt.Errorf("Unsupported field type %s for event timestamp", f.Schema.Name)
}

// valueSchema returns the envelope STRUCT schema (getValueSchema), cached
// as Debezium caches it: by payload schema, or by version when
// table.field.event.schema.version is set.
func (t *EventRouter) valueSchema(payload, row *connect.Schema, routeValue string, version int) (*connect.Schema, error) {
	key := schemaFingerprint(payload)
	if t.fieldVersion != "" {
		if s, ok := t.versionedSchemas[version]; ok {
			return s, nil
		}
	} else if s, ok := t.valueSchemas[key]; ok {
		return s, nil
	}
	name := routeValue
	if row.Name != "" {
		if i := strings.LastIndexByte(row.Name, '.'); i >= 0 {
			name = row.Name[:i+1] + routeValue + "." + row.Name[i+1:]
		} else {
			name = routeValue + "." + row.Name
		}
	}
	b := connect.StructSchema().Name(name).Field("payload", payload)
	for _, f := range t.additional {
		if f.placement != "envelope" {
			continue
		}
		cf := row.Field(f.column)
		if cf == nil {
			return nil, fmt.Errorf("Unable to find field %s of table.fields.additional.placement in event", f.column)
		}
		b.Field(f.alias, cf.Schema)
	}
	if t.fieldVersion != "" {
		b.Version(version)
		s := b.Build()
		t.versionedSchemas[version] = s
		return s, nil
	}
	s := b.Build()
	if len(t.valueSchemas) >= 10000 {
		t.valueSchemas = map[string]*connect.Schema{}
	}
	t.valueSchemas[key] = s
	return s, nil
}

// schemaFingerprint renders s structurally, standing for ConnectSchema's
// equals/hashCode as a cache key.
func schemaFingerprint(s *connect.Schema) string {
	if s == nil {
		return "nil"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%v|%q|%d|%q|", s.Type, s.Optional, s.Name, s.Version, s.Doc)
	for _, k := range s.ParamKeys() {
		v, _ := s.Param(k)
		fmt.Fprintf(&b, "%q=%q,", k, v)
	}
	if s.Default != nil {
		fmt.Fprintf(&b, "d=%v", s.Default)
	}
	for _, f := range s.Fields {
		fmt.Fprintf(&b, "{%q:%s}", f.Name, schemaFingerprint(f.Schema))
	}
	if s.KeySchema != nil {
		b.WriteString("k" + schemaFingerprint(s.KeySchema))
	}
	if s.ValueSchema != nil {
		b.WriteString("v" + schemaFingerprint(s.ValueSchema))
	}
	return b.String()
}

// jsonNode is a parsed JSON value with object members in document order, as
// Jackson's ObjectNode keeps them.
type jsonNode struct {
	kind   byte // 's' string, 'b' bool, 'n' number, 'a' array, 'o' object, 'z' null
	str    string
	b      bool
	num    json.Number
	items  []*jsonNode
	keys   []string
	values []*jsonNode
}

func (n *jsonNode) member(k string) (*jsonNode, bool) {
	// Jackson keeps the last of duplicated keys.
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == k {
			return n.values[i], true
		}
	}
	return nil, false
}

func readJSONNode(dec *json.Decoder) (*jsonNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch x := tok.(type) {
	case json.Delim:
		switch x {
		case '{':
			n := &jsonNode{kind: 'o'}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := readJSONNode(dec)
				if err != nil {
					return nil, err
				}
				n.keys = append(n.keys, kt.(string))
				n.values = append(n.values, v)
			}
			_, err := dec.Token()
			return n, err
		case '[':
			n := &jsonNode{kind: 'a'}
			for dec.More() {
				v, err := readJSONNode(dec)
				if err != nil {
					return nil, err
				}
				n.items = append(n.items, v)
			}
			_, err := dec.Token()
			return n, err
		}
	case string:
		return &jsonNode{kind: 's', str: x}, nil
	case bool:
		return &jsonNode{kind: 'b', b: x}, nil
	case json.Number:
		return &jsonNode{kind: 'n', num: x}, nil
	case nil:
		return &jsonNode{kind: 'z'}, nil
	}
	return nil, fmt.Errorf("unexpected JSON token %v", tok)
}

// numberKind classifies a JSON number as Jackson's default parser does:
// 'i' (IntNode), 'l' (LongNode), 'g' (BigIntegerNode) for integer literals,
// 'd' (DoubleNode) for the others.
func numberKind(n json.Number) byte {
	s := string(n)
	if strings.ContainsAny(s, ".eE") {
		return 'd'
	}
	v, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil:
		return 'g'
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return 'i'
	}
	return 'l'
}

var (
	errJSONExpansion = errors.New("JSON expansion failed")
	// errJSONValue: a schema was inferred but the document does not convert
	// to it (an array payload, an integer beyond int64).
	errJSONValue = errors.New("JSON payload does not convert to its inferred schema")
)

// expandJSON is Debezium's table.expand.json.payload: the payload string
// must start with '{' or '[' and parse as JSON; its schema is inferred as
// JsonSchemaData.toConnectSchema (objects: optional STRUCT named by their
// path from field, e.g. "payload.customer"; strings, booleans: optional;
// integers: INT32 or INT64, other numbers FLOAT64; arrays: optional ARRAY of
// the first non-null element's schema, array objects merged field by field;
// empty arrays and nulls left out, or nulls as optional BYTES), and its
// value built as toConnectData. Only an object gives a value: a non-empty
// array payload (or an integer beyond int64) fails with errJSONValue, as
// Debezium's conversion leaves the string under the inferred schema; "[]"
// gives a nil schema and the string; other failures (not JSON,
// heterogeneous arrays) wrap errJSONExpansion and the caller keeps the
// payload as it is.
func expandJSON(field, s string, nullAsBytes bool) (*connect.Schema, any, error) {
	if !strings.HasPrefix(s, "{") && !strings.HasPrefix(s, "[") {
		return nil, nil, fmt.Errorf("Unable to parse payload starting with '%c': %w", []rune(s + " ")[0], errJSONExpansion)
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	node, err := readJSONNode(dec)
	if err != nil {
		return nil, nil, fmt.Errorf("%v: %w", err, errJSONExpansion)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, fmt.Errorf("trailing content after the JSON document: %w", errJSONExpansion)
	}
	js := jsonSchemaData{nullAsBytes: nullAsBytes}
	schema, err := js.schema(field, true, node)
	if err != nil {
		return nil, nil, err
	}
	if schema == nil { // "[]": Debezium's payload schema becomes null, the string stays
		return nil, s, nil
	}
	v, err := js.structValue(node, schema)
	if err != nil {
		return nil, nil, fmt.Errorf("%v: %w", err, errJSONValue)
	}
	return schema, v, nil
}

type jsonSchemaData struct{ nullAsBytes bool }

func (j jsonSchemaData) schema(key string, hasKey bool, n *jsonNode) (*connect.Schema, error) {
	switch n.kind {
	case 's':
		return connect.Prim(connect.String, true), nil
	case 'b':
		return connect.Prim(connect.Boolean, true), nil
	case 'n':
		switch numberKind(n.num) {
		case 'i':
			return connect.Prim(connect.Int32, true), nil
		case 'l':
			return connect.Prim(connect.Int64, true), nil
		}
		return connect.Prim(connect.Float64, true), nil
	case 'a':
		if len(n.items) == 0 {
			return nil, nil
		}
		items, err := j.arrayItems(key, hasKey, n)
		if err != nil {
			return nil, err
		}
		return connect.NewSchema(connect.Array).Items(items).Optional().Build(), nil
	case 'o':
		b := connect.StructSchema().Optional()
		prefix := "null"
		if hasKey {
			b.Name(key)
			prefix = key
		}
		seen := map[string]bool{}
		for i, k := range n.keys {
			fs, err := j.schema(prefix+"."+k, true, n.values[i])
			if err != nil {
				return nil, err
			}
			if fs != nil && !seen[k] {
				seen[k] = true
				b.Field(k, fs)
			}
		}
		return b.Build(), nil
	case 'z':
		if j.nullAsBytes {
			return connect.Prim(connect.Bytes, true), nil
		}
	}
	return nil, nil
}

// arrayItems is toConnectSchemaWithCycles with getFirstArrayElement.
func (j jsonSchemaData) arrayItems(key string, hasKey bool, n *jsonNode) (*connect.Schema, error) {
	var sample *jsonNode
	var sampleNum byte
	for _, e := range n.items {
		if e.kind == 'z' {
			continue
		}
		if sample == nil {
			sample = e
		}
		if e.kind != sample.kind {
			return nil, fmt.Errorf("Field is not a homogenous array: %w", errJSONExpansion)
		}
		if e.kind == 'n' {
			k := numberKind(e.num)
			if k == 'g' {
				k = 'd'
			}
			if sampleNum == 0 {
				sampleNum = k
			} else if k != sampleNum {
				return nil, fmt.Errorf("Field is not a homogenous array, different number types: %w", errJSONExpansion)
			}
		}
	}
	if sample == nil {
		sample = &jsonNode{kind: 'z'}
	}
	if sample.kind != 'o' {
		s, err := j.schema("", false, sample)
		if err != nil {
			return nil, err
		}
		if s == nil {
			return nil, fmt.Errorf("Array has unrecognized member schema: %w", errJSONExpansion)
		}
		return s, nil
	}
	var merged *connect.Schema
	var seen []string
	for _, e := range n.items {
		if e.kind != 'o' {
			continue
		}
		s, err := j.schema(key, hasKey, e)
		if err != nil {
			return nil, err
		}
		fp := schemaFingerprint(s)
		dup := false
		for _, x := range seen {
			dup = dup || x == fp
		}
		if dup {
			continue
		}
		seen = append(seen, fp)
		merged = mergeJSONSchemas(merged, s)
	}
	return merged, nil
}

// mergeJSONSchemas is JsonSchemaData.mergeSchema: left's fields, then the
// new fields of right; a BYTES field (a null member) gives way to a typed
// one. The result is built with SchemaUtil.copySchemaBasics (so it is not
// optional).
func mergeJSONSchemas(left, right *connect.Schema) *connect.Schema {
	if left == nil {
		return right
	}
	type fs struct {
		name string
		s    *connect.Schema
	}
	var fields []fs
	idx := map[string]int{}
	for _, f := range left.Fields {
		idx[f.Name] = len(fields)
		fields = append(fields, fs{f.Name, f.Schema})
	}
	for _, f := range right.Fields {
		i, ok := idx[f.Name]
		if !ok {
			idx[f.Name] = len(fields)
			fields = append(fields, fs{f.Name, f.Schema})
			continue
		}
		old := fields[i].s
		if schemaFingerprint(old) != schemaFingerprint(f.Schema) && old.Type == connect.Bytes && f.Schema.Type != connect.Bytes {
			fields[i].s = f.Schema
		}
	}
	b := copyBasics(left, connect.StructT)
	for _, f := range fields {
		b.Field(f.name, f.s)
	}
	return b.Build()
}

func (j jsonSchemaData) structValue(n *jsonNode, s *connect.Schema) (*connect.Struct, error) {
	if n.kind != 'o' || s.Type != connect.StructT {
		return nil, fmt.Errorf("Cannot list fields on non-struct type: %w", errJSONExpansion)
	}
	st := connect.NewStruct(s)
	for _, f := range s.Fields {
		m, ok := n.member(f.Name)
		if !ok {
			continue
		}
		v, err := j.value(m, f.Schema)
		if err != nil {
			return nil, err
		}
		st.Values[f.Index] = v
	}
	return st, nil
}

// value is getStructFieldValue, with Struct.put's type check.
func (j jsonSchemaData) value(n *jsonNode, s *connect.Schema) (any, error) {
	mismatch := func() error {
		return fmt.Errorf("Invalid Java object for schema type %s: %w", strings.ToUpper(string(s.Type)), errJSONExpansion)
	}
	switch n.kind {
	case 's':
		if s.Type != connect.String {
			return nil, mismatch()
		}
		return n.str, nil
	case 'b':
		if s.Type != connect.Boolean {
			return nil, mismatch()
		}
		return n.b, nil
	case 'n':
		switch numberKind(n.num) {
		case 'd':
			f, err := strconv.ParseFloat(string(n.num), 64)
			if err != nil || s.Type != connect.Float64 {
				return nil, mismatch()
			}
			return f, nil
		case 'i':
			v, _ := strconv.ParseInt(string(n.num), 10, 32)
			if s.Type != connect.Int32 {
				return nil, mismatch()
			}
			return int32(v), nil
		case 'l':
			v, _ := strconv.ParseInt(string(n.num), 10, 64)
			if s.Type != connect.Int64 {
				return nil, mismatch()
			}
			return v, nil
		}
		return nil, mismatch() // a BigDecimal in a FLOAT64 field
	case 'a':
		if s.Type != connect.Array {
			return nil, mismatch()
		}
		out := make([]any, 0, len(n.items))
		for _, e := range n.items {
			v, err := j.value(e, s.ValueSchema)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case 'o':
		return j.structValue(n, s)
	}
	return nil, nil
}

// Close does nothing.
func (t *EventRouter) Close() {}
