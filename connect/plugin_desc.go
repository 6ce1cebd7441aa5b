package connect

import "sort"

// Plugin types as Kafka Connect's PluginType, lower-cased as the REST API
// renders them (GET /connector-plugins?connectorsOnly=false).
const (
	PluginSource          = "source"
	PluginSink            = "sink"
	PluginConverter       = "converter"
	PluginHeaderConverter = "header_converter"
	PluginTransformation  = "transformation"
	PluginPredicate       = "predicate"
)

// PluginDesc describes a plugin that is not a connector: a converter,
// header converter, transformation or predicate.
type PluginDesc struct {
	Class   string
	Type    string // one of the Plugin* constants
	Version string
	// Config returns the plugin's own keys; nil = none.
	Config func() *ConfigDef
}

// RegisterPlugin registers a converter, header converter, transformation or
// predicate under its class name and aliases, for listing and for
// GET /connector-plugins/{p}/config. A class may be registered once per type
// (JsonConverter is both a converter and a header converter).
func (p *Plugins) RegisterPlugin(d PluginDesc, aliases ...string) {
	if p.others == nil {
		p.others = map[string][]PluginDesc{}
	}
	p.others[d.Class] = append(p.others[d.Class], d)
	for _, a := range aliases {
		p.aliases[a] = d.Class
	}
}

// OtherPlugins returns the non-connector plugins, by type in Kafka
// Connect's listing order (converters, header converters, transformations,
// predicates), each sorted by class.
func (p *Plugins) OtherPlugins() []PluginDesc {
	var out []PluginDesc
	for _, ds := range p.others {
		out = append(out, ds...)
	}
	rank := map[string]int{PluginConverter: 0, PluginHeaderConverter: 1, PluginTransformation: 2, PluginPredicate: 3}
	sort.Slice(out, func(i, j int) bool {
		if rank[out[i].Type] != rank[out[j].Type] {
			return rank[out[i].Type] < rank[out[j].Type]
		}
		return out[i].Class < out[j].Class
	})
	return out
}

// Plugin returns the non-connector plugin called name (class or alias).
func (p *Plugins) Plugin(name string) (PluginDesc, bool) {
	if full, ok := p.aliases[name]; ok {
		name = full
	}
	ds := p.others[name]
	if len(ds) == 0 {
		return PluginDesc{}, false
	}
	return ds[0], true
}
