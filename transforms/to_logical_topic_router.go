package transforms

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/connectd/connectd/connect"
)

// ToLogicalTopicRouter is io.debezium.transforms.ToLogicalTopicRouter, the
// successor of ByLogicalTableRouter (Debezium "Topic Routing",
// https://debezium.io/documentation/reference/stable/transformations/topic-routing.html):
// it sends the change events of several physical tables (shards,
// partitions) to one logical topic.
//
//   - A record whose whole topic matches topic.regex (Java
//     Matcher.matches) gets the topic topic.replacement ($n, ${name} group
//     references, Matcher.replaceFirst); other records, and records whose
//     replacement is empty, pass unchanged.
//   - A non-null key must be a STRUCT (else ErrUnexpectedType); its schema is
//     renamed "<new topic>.Key" and, with key.enforce.uniqueness (default
//     true), gets a required STRING field key.field.name whose value is the
//     old topic, or key.field.regex/key.field.replacement applied to it when
//     that regex matches the whole old topic.
//   - A change event envelope (value schema named "*.Envelope") is rebuilt
//     with its schema named "<new topic>.Envelope" and before/after named
//     "<new topic>.Value"; tombstones and other records (heartbeats, schema
//     change and transaction events) keep their value, only topic and key
//     change.
//   - Schema names pass through schema.name.adjustment.mode: none (default),
//     avro (characters invalid in Avro names become '_', a leading digit
//     is prefixed with '_'), avro_unicode (invalid characters become _uXXXX).
//
// Config keys differ from the deprecated class only in key.field.name's
// default (__dbz__sourceIdentifier) and the cache size key
// (logical.destination.cache.size). Debezium 3.6.1's own jar
// (debezium-connect-plugins) ships only ByLogicalTableRouter; this class
// follows the later Debezium source where ByLogicalTableRouter became a
// deprecated subclass of ToLogicalTopicRouter.
type ToLogicalTopicRouter struct {
	logicalRouter
}

var _ connect.Transformation = (*ToLogicalTopicRouter)(nil)

// Config returns the keys of ToLogicalTopicRouter.
func (t *ToLogicalTopicRouter) Config() *connect.ConfigDef {
	return logicalRouterConfig("__dbz__sourceIdentifier", "logical.destination.cache.size", "Logical destination cache size")
}

// Configure reads the keys of Config.
func (t *ToLogicalTopicRouter) Configure(props map[string]string) error {
	return t.configure(t.Config(), props, "logical.destination.cache.size")
}

// logicalRouter is the implementation shared by ToLogicalTopicRouter and
// ByLogicalTableRouter (the Debezium source of both is the same class).
type logicalRouter struct {
	topicRegex       *regexp.Regexp
	topicReplacement string
	keyRegex         *regexp.Regexp
	keyReplacement   string
	enforce          bool
	keyField         string
	adjust           func(string) string
	cacheSize        int

	topics      map[string]string // old topic -> new topic ("" = no match)
	keySchemas  map[*connect.Schema]*connect.Schema
	envSchemas  map[*connect.Schema]*connect.Schema
	identifiers map[string]string
}

const (
	lrTopicRegex       = "topic.regex"
	lrTopicReplacement = "topic.replacement"
	lrEnforce          = "key.enforce.uniqueness"
	lrKeyFieldRegex    = "key.field.regex"
	lrKeyFieldName     = "key.field.name"
	lrKeyFieldRepl     = "key.field.replacement"
	lrAdjustmentMode   = "schema.name.adjustment.mode"
)

func logicalRouterConfig(keyFieldDefault, cacheKey, cacheLabel string) *connect.ConfigDef {
	d := connect.NewConfigDef()
	d.Define(connect.ConfigKey{Name: lrTopicRegex, Type: connect.TypeString, Importance: connect.Low, Width: "LONG", DisplayName: "Topic regex",
		Doc: "The regex used for extracting the name of the logical table from the original topic name.", Validator: regexValidator})
	d.Define(connect.ConfigKey{Name: lrTopicReplacement, Type: connect.TypeString, Importance: connect.Low, Width: "LONG", DisplayName: "Topic replacement",
		Doc: "The replacement string used in conjunction with " + lrTopicRegex + ". This will be used to create the new topic name."})
	d.Define(connect.ConfigKey{Name: lrEnforce, Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Low, Width: "SHORT",
		DisplayName: "Add source topic name into key",
		Doc: "Augment each record's key with a field denoting the source topic. This field distinguishes records coming from different physical tables " +
			"which may otherwise have primary/unique key conflicts. If the source tables are guaranteed to have globally unique keys then this may be set to false to disable key rewriting."})
	d.Define(connect.ConfigKey{Name: lrKeyFieldRegex, Type: connect.TypeString, Default: connect.Str(""), Importance: connect.Low, Width: "LONG", DisplayName: "Key field regex",
		Doc:       "The regex used for extracting the physical table identifier from the original topic name.",
		Validator: optionalRegexValidator})
	d.Define(connect.ConfigKey{Name: lrKeyFieldName, Type: connect.TypeString, Default: connect.Str(keyFieldDefault), Importance: connect.Low, Width: "LONG", DisplayName: "Key field name",
		Doc: "Each record's key schema will be augmented with this field name. The purpose of this field is to distinguish the different physical tables that can now share a single topic. " +
			"Make sure not to configure a field name that is at risk of conflict with existing key schema field names."})
	d.Define(connect.ConfigKey{Name: lrKeyFieldRepl, Type: connect.TypeString, Default: connect.Str(""), Importance: connect.Low, Width: "LONG", DisplayName: "Key field replacement",
		Doc: "The replacement string used in conjunction with " + lrKeyFieldRegex + ". This will be used to create the physical table identifier in the record's key."})
	d.Define(connect.ConfigKey{Name: lrAdjustmentMode, Type: connect.TypeString, Default: connect.Str("none"), Importance: connect.Low, Width: "MEDIUM", DisplayName: "Schema Name Adjustment",
		Doc: "Specify how the message key schema names derived from the resulting topic name should be adjusted for compatibility with the message converter used by the connector, including: " +
			"'avro' replaces the characters that cannot be used in the Avro type name with underscore, 'avro_unicode' replaces them with _uxxxx, 'none' does not apply any adjustment (default)",
		Allowed: []string{"none", "avro", "avro_unicode"}})
	d.Define(connect.ConfigKey{Name: cacheKey, Type: connect.TypeInt, Default: connect.Str("16"), Importance: connect.Low, Width: "LONG", DisplayName: cacheLabel,
		Doc: "The size used for holding the max entries in LRUCache. The cache will keep the old/new schema for logical table key and value, " +
			"also cache the derived key and topic regex result for improving the source record transformation."})
	return d
}

func (t *logicalRouter) configure(def *connect.ConfigDef, props map[string]string, cacheKey string) error {
	p, err := parse(def, props)
	if err != nil {
		return err
	}
	// Debezium's validateKeyFieldReplacement.
	if p.String(lrKeyFieldRegex) != "" && p.String(lrKeyFieldRepl) == "" {
		return configErr(lrKeyFieldRepl, lrKeyFieldRepl+" must be non-empty if "+lrKeyFieldRegex+" is set.")
	}
	t.topicRegex, _ = compileJavaRegex(props[lrTopicRegex])
	t.topicReplacement = javaReplacement(props[lrTopicReplacement])
	t.keyRegex, t.keyReplacement = nil, ""
	if r := p.String(lrKeyFieldRegex); r != "" {
		t.keyRegex, _ = compileJavaRegex(r)
		t.keyReplacement = javaReplacement(props[lrKeyFieldRepl])
	}
	t.enforce = p.Bool(lrEnforce)
	t.keyField = p.String(lrKeyFieldName)
	t.adjust = schemaNameAdjuster(p.String(lrAdjustmentMode))
	t.cacheSize = p.Int(cacheKey)
	t.topics = map[string]string{}
	t.keySchemas = map[*connect.Schema]*connect.Schema{}
	t.envSchemas = map[*connect.Schema]*connect.Schema{}
	t.identifiers = map[string]string{}
	return nil
}

// bounded empties m when it holds cacheSize entries, so that the caches
// stay within logical.*.cache.size entries (Debezium uses an LRUCache of
// that size; which entries are evicted does not change the output).
func bounded[K comparable, V any](m map[K]V, size int) map[K]V {
	if len(m) >= size {
		return map[K]V{}
	}
	return m
}

// Apply routes r as described on ToLogicalTopicRouter.
func (t *logicalRouter) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	oldTopic := r.Topic
	newTopic, ok := t.topics[oldTopic]
	if !ok {
		if m := t.topicRegex.FindStringSubmatchIndex(oldTopic); m != nil {
			newTopic = string(t.topicRegex.ExpandString(nil, t.topicReplacement, oldTopic, m))
		}
		if t.cacheSize > 0 {
			t.topics = bounded(t.topics, t.cacheSize)
			t.topics[oldTopic] = newTopic
		}
	}
	if newTopic == "" { // no match, or "Routing regex returned an empty topic name"
		return r, nil
	}
	out := withRecord(r)
	out.Topic = newTopic
	if r.Key != nil {
		oldKey, err := requireStruct(r.Key, "Updating schema")
		if err != nil {
			return nil, err
		}
		ks := t.keySchema(oldKey.Schema, newTopic)
		nk := connect.NewStruct(ks)
		for _, f := range oldKey.Schema.Fields {
			nk.Values[f.Index] = getOrDefault(oldKey, f)
		}
		if t.enforce {
			nk.Put(t.keyField, t.identifier(oldTopic))
		}
		out.KeySchema, out.Key = ks, nk
	}
	if r.Value == nil || !isEnvelope(r.ValueSchema) {
		return out, nil
	}
	oldEnv, err := requireStruct(r.Value, "Updating schema")
	if err != nil {
		return nil, err
	}
	es := t.envelopeSchema(oldEnv.Schema, newTopic)
	rowSchema := es.Field("before").Schema
	ne := connect.NewStruct(es)
	for _, f := range oldEnv.Schema.Fields {
		v := getOrDefault(oldEnv, f)
		if (f.Name == "before" || f.Name == "after") && v != nil {
			row, err := requireStruct(v, "Updating schema")
			if err != nil {
				return nil, err
			}
			nr := connect.NewStruct(rowSchema)
			for _, rf := range row.Schema.Fields {
				if rf2 := rowSchema.Field(rf.Name); rf2 != nil {
					nr.Values[rf2.Index] = getOrDefault(row, rf)
				}
			}
			v = nr
		}
		ne.Values[f.Index] = v
	}
	out.ValueSchema, out.Value = es, ne
	return out, nil
}

// identifier returns the key.field.name value for a record of oldTopic.
func (t *logicalRouter) identifier(oldTopic string) string {
	if t.keyRegex == nil {
		return oldTopic
	}
	if id, ok := t.identifiers[oldTopic]; ok {
		return id
	}
	m := t.keyRegex.FindStringSubmatchIndex(oldTopic)
	if m == nil {
		return oldTopic
	}
	id := string(t.keyRegex.ExpandString(nil, t.keyReplacement, oldTopic, m))
	if t.cacheSize > 0 {
		t.identifiers = bounded(t.identifiers, t.cacheSize)
		t.identifiers[oldTopic] = id
	}
	return id
}

// copyExcludingName is Debezium's copySchemaExcludingName: version, doc,
// parameters and optionality of s, and its fields when withFields.
func copyExcludingName(s *connect.Schema, withFields bool) *connect.SchemaBuilder {
	b := connect.StructSchema().Version(s.Version).Doc(s.Doc)
	for _, k := range s.ParamKeys() {
		v, _ := s.Param(k)
		b.Param(k, v)
	}
	if s.Optional {
		b.Optional()
	}
	if withFields {
		for _, f := range s.Fields {
			b.Field(f.Name, f.Schema)
		}
	}
	return b
}

func (t *logicalRouter) keySchema(old *connect.Schema, newTopic string) *connect.Schema {
	if s, ok := t.keySchemas[old]; ok {
		return s
	}
	b := copyExcludingName(old, true).Name(t.adjust(newTopic + ".Key"))
	if t.enforce {
		b.Field(t.keyField, connect.Prim(connect.String, false))
	}
	s := b.Build()
	if t.cacheSize > 0 {
		t.keySchemas = bounded(t.keySchemas, t.cacheSize)
		t.keySchemas[old] = s
	}
	return s
}

func (t *logicalRouter) envelopeSchema(old *connect.Schema, newTopic string) *connect.Schema {
	if s, ok := t.envSchemas[old]; ok {
		return s
	}
	row := copyExcludingName(old.Field("before").Schema, true).Name(t.adjust(newTopic + ".Value")).Build()
	b := copyExcludingName(old, false)
	for _, f := range old.Fields {
		fs := f.Schema
		if f.Name == "before" || f.Name == "after" {
			fs = row
		}
		b.Field(f.Name, fs)
	}
	s := b.Name(t.adjust(newTopic + ".Envelope")).Build()
	if t.cacheSize > 0 {
		t.envSchemas = bounded(t.envSchemas, t.cacheSize)
		t.envSchemas[old] = s
	}
	return s
}

// Close does nothing.
func (t *logicalRouter) Close() {}

// schemaNameAdjuster returns Debezium's SchemaNameAdjuster for a
// schema.name.adjustment.mode: "none" leaves names unchanged; "avro"
// (SchemaNameAdjuster.AVRO, ReplacementFunction.UNDERSCORE_REPLACEMENT)
// replaces each UTF-16 unit that is not [A-Za-z0-9_.] (first: [A-Za-z_])
// by '_', keeping a replaced leading digit after the '_'; "avro_unicode"
// replaces it by "_u" and its four hex digits.
func schemaNameAdjuster(mode string) func(string) string {
	validFirst := func(c uint16) bool { return c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }
	validNext := func(c uint16) bool { return c == '.' || validFirst(c) || c >= '0' && c <= '9' }
	var unicode bool
	switch strings.ToLower(mode) {
	case "avro":
	case "avro_unicode":
		unicode = true
	default:
		return func(s string) string { return s }
	}
	return func(s string) string {
		units := utf16Units(s)
		if len(units) == 0 {
			return s
		}
		var b strings.Builder
		changed := false
		repl := func(c uint16) string {
			if unicode {
				return fmt.Sprintf("_u%04x", c)
			}
			return "_"
		}
		for i, c := range units {
			ok := validNext(c)
			if i == 0 {
				ok = validFirst(c)
			}
			if ok {
				b.WriteRune(rune(c))
				continue
			}
			changed = true
			b.WriteString(repl(c))
			if i == 0 && !unicode && c >= '0' && c <= '9' {
				b.WriteRune(rune(c))
			}
		}
		if !changed {
			return s
		}
		return b.String()
	}
}

// utf16Units returns s as Java's UTF-16 code units.
func utf16Units(s string) []uint16 {
	var out []uint16
	for _, r := range s {
		if r >= 0x10000 {
			r -= 0x10000
			out = append(out, uint16(0xD800+(r>>10)), uint16(0xDC00+(r&0x3FF)))
		} else {
			out = append(out, uint16(r))
		}
	}
	return out
}

func optionalRegexValidator(v string) string {
	if v == "" {
		return ""
	}
	return regexValidator(v)
}
