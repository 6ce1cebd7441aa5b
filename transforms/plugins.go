package transforms

import (
	"sort"
	"strings"

	"github.com/connectd/connectd/connect"
)

// Versions reported in GET /connector-plugins?connectorsOnly=false, as the
// reference workers do: Kafka Connect's classes carry the Kafka version,
// Debezium's the Debezium version.
var (
	Version         = "3.9.0"
	DebeziumVersion = "3.6.1.Final"
)

// plugin is one transformation or predicate class.
type plugin struct {
	class   string
	kind    string // connect.PluginTransformation or connect.PluginPredicate
	newT    func() connect.Transformation
	newP    func() connect.Predicate
	aliases []string
}

func (p plugin) config() *connect.ConfigDef {
	if p.newT != nil {
		return p.newT().Config()
	}
	return p.newP().Config()
}

const (
	kafkaPkg = "org.apache.kafka.connect.transforms."
	dbzPkg   = "io.debezium.transforms."
)

// keyValue registers the $Key and $Value inner classes of a Kafka Connect
// transformation. Their simple names ("Key", "Value") are shared by many
// classes, so, as Kafka Connect's PluginUtils, no alias is derived from them.
func keyValue(simple string, f func(operand) connect.Transformation) []plugin {
	return []plugin{
		{class: kafkaPkg + simple + "$Key", kind: connect.PluginTransformation, newT: func() connect.Transformation { return f(keyOp) }},
		{class: kafkaPkg + simple + "$Value", kind: connect.PluginTransformation, newT: func() connect.Transformation { return f(valueOp) }},
	}
}

// registry lists every class this package implements. Aliases are the
// simple class names that Kafka Connect derives (PluginUtils.simpleName)
// where they are unambiguous.
var registry = func() []plugin {
	t := func(class string, f func() connect.Transformation) plugin {
		return plugin{class: class, kind: connect.PluginTransformation, newT: f, aliases: []string{class[strings.LastIndex(class, ".")+1:]}}
	}
	p := func(class string, f func() connect.Predicate) plugin {
		return plugin{class: class, kind: connect.PluginPredicate, newP: f, aliases: []string{class[strings.LastIndex(class, ".")+1:]}}
	}
	ps := []plugin{
		t(dbzPkg+"ExtractNewRecordState", func() connect.Transformation { return &ExtractNewRecordState{} }),
		t(dbzPkg+"ByLogicalTableRouter", func() connect.Transformation { return &ByLogicalTableRouter{} }),
		t(dbzPkg+"ToLogicalTopicRouter", func() connect.Transformation { return &ToLogicalTopicRouter{} }),
		t(dbzPkg+"HeaderToValue", func() connect.Transformation { return &HeaderToValue{} }),
		t(dbzPkg+"outbox.EventRouter", func() connect.Transformation { return &EventRouter{} }),
		t(dbzPkg+"partitions.PartitionRouting", func() connect.Transformation { return &PartitionRouting{} }),
		t(kafkaPkg+"RegexRouter", func() connect.Transformation { return &RegexRouter{} }),
		t(kafkaPkg+"TimestampRouter", func() connect.Transformation { return &TimestampRouter{} }),
		t(kafkaPkg+"ValueToKey", func() connect.Transformation { return &ValueToKey{} }),
		t(kafkaPkg+"Filter", func() connect.Transformation { return &Filter{} }),
		t(kafkaPkg+"DropHeaders", func() connect.Transformation { return &DropHeaders{} }),
		t(kafkaPkg+"InsertHeader", func() connect.Transformation { return &InsertHeader{} }),
		p(kafkaPkg+"predicates.TopicNameMatches", func() connect.Predicate { return &TopicNameMatches{} }),
		p(kafkaPkg+"predicates.HasHeaderKey", func() connect.Predicate { return &HasHeaderKey{} }),
		p(kafkaPkg+"predicates.RecordIsTombstone", func() connect.Predicate { return &RecordIsTombstone{} }),
	}
	ps = append(ps, keyValue("ReplaceField", func(o operand) connect.Transformation { return &ReplaceField{op: o} })...)
	ps = append(ps, keyValue("MaskField", func(o operand) connect.Transformation { return &MaskField{op: o} })...)
	ps = append(ps, keyValue("InsertField", func(o operand) connect.Transformation { return &InsertField{op: o} })...)
	ps = append(ps, keyValue("ExtractField", func(o operand) connect.Transformation { return &ExtractField{op: o} })...)
	ps = append(ps, keyValue("HoistField", func(o operand) connect.Transformation { return &HoistField{op: o} })...)
	ps = append(ps, keyValue("Cast", func(o operand) connect.Transformation { return &Cast{op: o} })...)
	ps = append(ps, keyValue("TimestampConverter", func(o operand) connect.Transformation { return &TimestampConverter{op: o} })...)
	ps = append(ps, keyValue("Flatten", func(o operand) connect.Transformation { return &Flatten{op: o} })...)
	ps = append(ps, keyValue("SetSchemaMetadata", func(o operand) connect.Transformation { return &SetSchemaMetadata{op: o} })...)
	ps = append(ps, keyValue("HeaderFrom", func(o operand) connect.Transformation { return &HeaderFrom{op: o} })...)
	sort.Slice(ps, func(i, j int) bool { return ps[i].class < ps[j].class })
	return ps
}()

// lookup finds a class by full name or alias and kind.
func lookup(name, kind string) (plugin, bool) {
	name = strings.TrimSpace(name)
	for _, p := range registry {
		if p.kind != kind {
			continue
		}
		if p.class == name {
			return p, true
		}
		for _, a := range p.aliases {
			if a == name {
				return p, true
			}
		}
	}
	return plugin{}, false
}

// Classes returns the class names of every transformation and predicate,
// sorted.
func Classes() []string {
	out := make([]string, len(registry))
	for i, p := range registry {
		out[i] = p.class
	}
	return out
}

// Register adds every transformation and predicate class, with its aliases
// and ConfigDef, to p for GET /connector-plugins?connectorsOnly=false and
// GET /connector-plugins/{class}/config.
func Register(p *connect.Plugins) {
	for _, pl := range registry {
		v := Version
		if strings.HasPrefix(pl.class, dbzPkg) {
			v = DebeziumVersion
		}
		p.RegisterPlugin(connect.PluginDesc{Class: pl.class, Type: pl.kind, Version: v, Config: pl.config}, pl.aliases...)
	}
}
