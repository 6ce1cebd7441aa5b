package connect

import "sort"

// Plugins maps connector class names (and their aliases) to factories. The
// daemon's main package fills it; the runtime looks classes up in it.
type Plugins struct {
	sources map[string]func() SourceConnector
	aliases map[string]string
	others  map[string][]PluginDesc
}

// NewPlugins returns an empty plugin set.
func NewPlugins() *Plugins {
	return &Plugins{sources: map[string]func() SourceConnector{}, aliases: map[string]string{}}
}

// RegisterSource registers a source connector under its class name and
// aliases (Kafka Connect accepts the simple class name and the name without
// the "Connector" suffix).
func (p *Plugins) RegisterSource(class string, f func() SourceConnector, aliases ...string) {
	p.sources[class] = f
	for _, a := range aliases {
		p.aliases[a] = class
	}
}

// Source returns the factory for class (or an alias) and the full class name.
func (p *Plugins) Source(class string) (func() SourceConnector, string, bool) {
	if full, ok := p.aliases[class]; ok {
		class = full
	}
	f, ok := p.sources[class]
	return f, class, ok
}

// SourceClasses lists the registered class names, sorted.
func (p *Plugins) SourceClasses() []string {
	out := make([]string, 0, len(p.sources))
	for c := range p.sources {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}
