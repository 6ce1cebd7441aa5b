package transforms

import (
	"strings"

	"github.com/connectd/connectd/connect"
)

// ReplaceField is org.apache.kafka.connect.transforms.ReplaceField$Key and
// $Value: keep the fields named in include (all when empty) that are not in
// exclude, and rename them by renames ("old:new,..."). The deprecated
// whitelist/blacklist keys are accepted as include/exclude. A STRUCT keeps
// its schema's name, version, doc and parameters; a schemaless map is
// filtered the same way. A null key or value (tombstone) passes unchanged.
type ReplaceField struct {
	op          operand
	include     map[string]bool
	exclude     map[string]bool
	renames     map[string]string
	replaceNull bool
}

var _ connect.Transformation = (*ReplaceField)(nil)

// Config: exclude, include, renames, replace.null.with.default.
func (t *ReplaceField) Config() *connect.ConfigDef {
	return connect.NewConfigDef().
		Define(connect.ConfigKey{Name: "exclude", Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Medium,
			Doc: "Fields to exclude. This takes precedence over the fields to include."}).
		Define(connect.ConfigKey{Name: "include", Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Medium,
			Doc: "Fields to include. If specified, only these fields will be used."}).
		Define(connect.ConfigKey{Name: "renames", Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Medium,
			Doc: "Field rename mappings.", Validator: func(v string) string {
				if _, err := parseRenames(v); err != "" {
					return err
				}
				return ""
			}}).
		Define(connect.ConfigKey{Name: "replace.null.with.default", Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Medium,
			Doc: "Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used."})
}

func parseRenames(v string) (map[string]string, string) {
	out := map[string]string{}
	for _, item := range list(v) {
		from, to, ok := strings.Cut(item, ":")
		if !ok || from == "" || to == "" || strings.Contains(to, ":") {
			return nil, "Invalid rename mapping: " + item
		}
		out[from] = to
	}
	return out, ""
}

func set(items []string) map[string]bool {
	m := map[string]bool{}
	for _, s := range items {
		m[s] = true
	}
	return m
}

// Configure reads the keys of Config (and whitelist/blacklist).
func (t *ReplaceField) Configure(props map[string]string) error {
	props = withFallback(props, "include", "whitelist")
	props = withFallback(props, "exclude", "blacklist")
	p, err := parse(t.Config(), props)
	if err != nil {
		return err
	}
	t.include, t.exclude = set(p.List("include")), set(p.List("exclude"))
	t.renames, _ = parseRenames(p.String("renames"))
	t.replaceNull = p.Bool("replace.null.with.default")
	return nil
}

// withFallback copies props[old] to props[key] when only old is set.
func withFallback(props map[string]string, key, old string) map[string]string {
	if _, ok := props[key]; ok {
		return props
	}
	v, ok := props[old]
	if !ok {
		return props
	}
	out := make(map[string]string, len(props)+1)
	for k, x := range props {
		out[k] = x
	}
	out[key] = v
	return out
}

func (t *ReplaceField) keep(name string) bool {
	return !t.exclude[name] && (len(t.include) == 0 || t.include[name])
}

func (t *ReplaceField) renamed(name string) string {
	if to, ok := t.renames[name]; ok {
		return to
	}
	return name
}

// Apply filters and renames the fields of the key or value.
func (t *ReplaceField) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	s, v := t.op.get(r)
	if v == nil {
		return r, nil
	}
	if s == nil {
		m, err := requireMap(v, "field replacement")
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for k, x := range m {
			if t.keep(k) {
				out[t.renamed(k)] = x
			}
		}
		return t.op.with(r, nil, out), nil
	}
	st, err := requireStruct(v, "field replacement")
	if err != nil {
		return nil, err
	}
	b := copyBasics(s, connect.StructT)
	var idx []int
	for _, f := range s.Fields {
		if t.keep(f.Name) {
			b.Field(t.renamed(f.Name), f.Schema)
			idx = append(idx, f.Index)
		}
	}
	ns := b.Build()
	nv := connect.NewStruct(ns)
	for i, j := range idx {
		nv.Values[i] = fieldValue(st, s.Fields[j], t.replaceNull)
	}
	return t.op.with(r, ns, nv), nil
}

// fieldValue is Struct.get (replaceNull) or Struct.getWithoutDefault.
func fieldValue(st *connect.Struct, f connect.Field, replaceNull bool) any {
	if replaceNull {
		return getOrDefault(st, f)
	}
	return st.Values[f.Index]
}

// Close does nothing.
func (t *ReplaceField) Close() {}
