package connect

import "sort"

// Plugins maps connector class names (and their aliases) to factories. The
// daemon's main package fills it; the runtime looks classes up in it.
type Plugins struct {
	sources map[string]func() SourceConnector
	sinks   map[string]func() SinkConnector
	aliases map[string]string
	others  map[string][]PluginDesc
}

// NewPlugins returns an empty plugin set.
func NewPlugins() *Plugins {
	return &Plugins{sources: map[string]func() SourceConnector{}, sinks: map[string]func() SinkConnector{}, aliases: map[string]string{}}
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

// RegisterSink registers a sink connector under its class name and aliases.
func (p *Plugins) RegisterSink(class string, f func() SinkConnector, aliases ...string) {
	if p.sinks == nil {
		p.sinks = map[string]func() SinkConnector{}
	}
	p.sinks[class] = f
	for _, a := range aliases {
		p.aliases[a] = class
	}
}

// Sink returns the factory for a sink class (or an alias) and the full
// class name.
func (p *Plugins) Sink(class string) (func() SinkConnector, string, bool) {
	if full, ok := p.aliases[class]; ok {
		class = full
	}
	f, ok := p.sinks[class]
	return f, class, ok
}

// Connector returns a factory for a source or sink connector class (or
// alias), the full class name and whether it is a sink.
func (p *Plugins) Connector(class string) (f func() Connector, full string, sink bool, ok bool) {
	if sf, full, ok := p.Source(class); ok {
		return func() Connector { return sf() }, full, false, true
	}
	if kf, full, ok := p.Sink(class); ok {
		return func() Connector { return kf() }, full, true, true
	}
	return nil, class, false, false
}

// SinkClasses lists the registered sink class names, sorted.
func (p *Plugins) SinkClasses() []string {
	out := make([]string, 0, len(p.sinks))
	for c := range p.sinks {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}
