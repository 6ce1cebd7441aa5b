package runtime

import (
	"fmt"
	"github.com/connectd/connectd/transforms"
	"slices"
	"sort"
	"strings"

	"github.com/connectd/connectd/connect"
)

// ConfigInfos is the result of validating a connector config, as Kafka
// Connect's rest.entities.ConfigInfos: the connector class, the number of
// errors, the groups in order, and one ConfigInfo per key.
type ConfigInfos struct {
	Name       string
	ErrorCount int
	Groups     []string
	Configs    []ConfigInfo
}

// ConfigInfo is one key's definition (nil for a key that only the
// connector's own validation reported) and validated value.
type ConfigInfo struct {
	Definition *connect.KeyInfo
	Value      *connect.ConfigValue
}

// Messages returns every error message in ConfigInfos order.
func (ci ConfigInfos) Messages() []connect.ConfigError {
	var out []connect.ConfigError
	for _, c := range ci.Configs {
		if c.Value == nil {
			continue
		}
		for _, m := range c.Value.Errors {
			out = append(out, connect.ConfigError{Key: c.Value.Name, Message: m})
		}
	}
	return out
}

// ValidateConnectorConfig validates cfg as Kafka Connect's
// AbstractHerder.validateConnectorConfig does: the common source connector
// keys (ConnectorConfig, SourceConnectorConfig, plus one
// transforms.<alias>.type / predicates.<alias>.type key per alias), then the
// connector's ConfigDef, then the connector's own cross-key validation.
// Keys keep the base definition's position when the connector redefines
// them. Errors: *BadRequestError when cfg names no connector class or an
// unknown one.
func (h *Herder) ValidateConnectorConfig(cfg map[string]string) (ConfigInfos, error) {
	class := strings.TrimSpace(cfg["connector.class"])
	if class == "" {
		return ConfigInfos{}, &BadRequestError{Msg: "Connector config " + configString(cfg) + " contains no connector type"}
	}
	factory, _, _, ok := h.plugins.Connector(class)
	if !ok {
		return ConfigInfos{}, &BadRequestError{Msg: fmt.Sprintf("Failed to find any class that implements Connector and which name matches %s, available connectors are: %s", class, strings.Join(append(h.plugins.SourceClasses(), h.plugins.SinkClasses()...), ", "))}
	}
	// Validation sees the resolved values, as AbstractHerder's
	// validateConnectorConfig transforms the config first.
	cfg, err := h.resolveConfig(cfg)
	if err != nil {
		return ConfigInfos{}, err
	}
	conn := factory()
	base := h.enrichedDef(cfg)
	res := ConfigInfos{Name: class}
	index := map[string]int{}
	addGroup := func(g *string) {
		if g == nil {
			return
		}
		for _, have := range res.Groups {
			if have == *g {
				return
			}
		}
		res.Groups = append(res.Groups, *g)
	}
	add := func(def *connect.ConfigDef) {
		infos := def.Info()
		vals := def.ValidateAll(cfg)
		for i := range infos {
			ki, cv := infos[i], vals[i]
			if nullDefaults[ki.Name] && ki.Default != nil && *ki.Default == "" && def == base {
				ki.Default = nil
				if _, set := cfg[ki.Name]; !set {
					cv.Value = nil
				}
			}
			if def != base && ki.Name == "connector.class" {
				// Kafka's ConnectorConfig owns connector.class: Java
				// connectors never define it, so the response keeps the
				// framework's definition (Common, 2) even when a
				// connectd connector's ConfigDef lists it too.
				continue
			}
			addGroup(ki.Group)
			if j, ok := index[ki.Name]; ok {
				res.Configs[j] = ConfigInfo{Definition: &ki, Value: &cv}
				continue
			}
			index[ki.Name] = len(res.Configs)
			res.Configs = append(res.Configs, ConfigInfo{Definition: &ki, Value: &cv})
		}
	}
	add(base)
	add(conn.Config())
	addErr := func(key, msg string) {
		j, ok := index[key]
		if !ok {
			cv := connect.ConfigValue{Name: key, Recommended: []string{}, Errors: []string{}, Visible: true}
			if v, set := cfg[key]; set {
				cv.Value = &v
			}
			index[key] = len(res.Configs)
			res.Configs = append(res.Configs, ConfigInfo{Value: &cv})
			j = index[key]
		}
		v := res.Configs[j].Value
		for _, m := range v.Errors {
			if m == msg {
				return
			}
		}
		v.Errors = append(v.Errors, msg)
	}
	for _, e := range conn.Validate(cfg) {
		addErr(e.Key, e.Message)
	}
	if _, ok := conn.(connect.SinkConnector); ok {
		for _, e := range sinkConfigErrors(cfg) { // sink_herder.go
			addErr(e.Key, e.Message)
		}
	}
	// The transformation chain: each alias's plugin keys and the errors
	// only configuring the plugins reveals (ConnectorConfig.enrich).
	for _, e := range transforms.Validate(cfg) {
		addErr(e.Key, e.Message)
	}
	// The converters must also accept their own properties.
	for _, isKey := range []bool{true, false} {
		if _, err := newConverter(h.cfg, cfg, isKey); err != nil {
			k := "value.converter"
			if isKey {
				k = "key.converter"
			}
			if v := res.Configs[index[k]].Value; len(v.Errors) == 0 {
				addErr(k, err.Error())
			}
		}
	}
	// Client overrides, as far as the worker's policy allows them
	// (AbstractHerder.validateClientOverrides for a source connector:
	// producer.override.* and admin.override.*).
	policy, err := OverridePolicy(h.cfg)
	if err != nil {
		return ConfigInfos{}, err
	}
	for _, cv := range clientOverrideValues(policy, h.cfg, cfg) {
		if len(cv.Errors) == 0 {
			if _, ok := index[cv.Name]; !ok {
				cv := cv
				index[cv.Name] = len(res.Configs)
				res.Configs = append(res.Configs, ConfigInfo{Value: &cv})
			}
			continue
		}
		for _, m := range cv.Errors {
			addErr(cv.Name, m)
		}
	}
	for _, c := range res.Configs {
		res.ErrorCount += len(c.Value.Errors)
	}
	if res.Groups == nil {
		res.Groups = []string{}
	}
	return res, nil
}

// enrichedDef is the base source connector definition plus, as
// ConnectorConfig.enrich, the keys of each transformation and predicate
// alias: "<alias>.type" (which must name a registered plugin of that kind),
// the plugin's own keys, "negate" and "predicate" (transforms.ConfigDef).
func (h *Herder) enrichedDef(cfg map[string]string) *connect.ConfigDef {
	d := sourceConnectorConfigDef(h.pluginVersionsOf(cfg))
	for _, k := range topicCreationKeys(h.cfg, cfg) {
		d.Define(k)
	}
	for _, k := range transforms.ConfigDef(cfg).Keys() {
		d.Define(*k)
	}
	return d
}

// validateForWrite validates cfg for POST /connectors and PUT/PATCH config
// and returns a *ConfigInvalidError with the same messages, in the same
// order, as the validate endpoint's ConfigInfos
// (AbstractHerder.maybeAddConfigErrors).
func (h *Herder) validateForWrite(cfg map[string]string) error {
	infos, err := h.ValidateConnectorConfig(cfg)
	if err != nil {
		return err
	}
	page := referencePageOf(cfg["connector.class"])
	if infos.ErrorCount > 0 {
		return &ConfigInvalidError{Errors: infos.Messages(), Page: page}
	}
	where := ""
	if page != "" {
		where = " (" + page + " lists the connector's keys)"
	}
	for _, k := range unknownKeys(cfg, infos) {
		h.log.Warn(fmt.Sprintf("The configuration '%s' was supplied but isn't a known config: connectd ignores it%s", k, where), "connector", cfg["name"])
	}
	return nil
}

// UnknownConnectorKeys returns the keys of cfg that no ConfigDef of the
// connector, the framework, its transforms or converters defines and no
// pass-through prefix covers (unknownKeys): the keys validateForWrite
// logs a WARN for.
func (h *Herder) UnknownConnectorKeys(cfg map[string]string) ([]string, error) {
	infos, err := h.ValidateConnectorConfig(cfg)
	if err != nil {
		return nil, err
	}
	return unknownKeys(cfg, infos), nil
}

// passThroughPrefixes are the key prefixes whose keys a connector passes
// on to something else (clients, converters, transforms, the JDBC driver,
// Debezium's signal/notification channels and schema history clients) or
// whose names hold a table or a length (column.mask.with.N.chars,
// snapshot.select.statement.overrides.T): no ConfigDef lists them.
var passThroughPrefixes = []string{
	"producer.override.", "consumer.override.", "admin.override.", "key.converter.", "value.converter.",
	"header.converter.", "transforms.", "predicates.", "topic.creation.", "database.", "driver.",
	"schema.history.internal.", "signal.", "notification.", "column.mask.", "column.truncate.",
	"snapshot.select.statement.overrides.", "errors.", "internal.", "offset.storage.",
}

// unknownKeys returns the keys of cfg that neither the framework, the
// connector, its transforms nor its converters define (infos, the
// validate answer) and that no pass-through prefix covers, sorted: Kafka
// Connect accepts them silently, connectd logs a WARN naming each (a
// mistyped key would otherwise be a silent default).
func unknownKeys(cfg map[string]string, infos ConfigInfos) []string {
	// A sink connector's framework keys (SinkConnectorConfig), which the
	// validate answer checks (sinkConfigErrors) without listing them.
	known := map[string]bool{"topics": true, "topics.regex": true}
	for _, c := range infos.Configs {
		if c.Definition != nil {
			known[c.Definition.Name] = true
		}
		if c.Value != nil {
			known[c.Value.Name] = true
		}
	}
	prefixes := passThroughPrefixes
	// Debezium's custom converters and post processors: "<alias>.type" and
	// the alias's own keys.
	for _, list := range []string{"converters", "post.processors"} {
		for _, alias := range splitList(cfg[list]) {
			prefixes = append(prefixes, alias+".")
		}
	}
	var out []string
	for k := range cfg {
		if known[k] || slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(k, p) }) {
			continue
		}
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// PluginConfig returns the ConfigKeyInfo list of a plugin as
// AbstractHerder.connectorPluginConfig (PluginConfigOf with this worker's
// plugins and config).
func (h *Herder) PluginConfig(name string) ([]connect.KeyInfo, error) {
	return PluginConfigOf(h.plugins, h.cfg, name)
}

// PluginConfigOf returns the ConfigKeyInfo list of a plugin as
// AbstractHerder.connectorPluginConfig: the plugin's own keys first, then
// the framework's connector keys it does not define. It serves
// GET /connector-plugins/{p}/config and the generated config reference
// (internal/docgen), so the two cannot disagree. Errors:
// *PluginNotFoundError for an unknown plugin.
func PluginConfigOf(plugins *connect.Plugins, cfg WorkerConfig, name string) ([]connect.KeyInfo, error) {
	if f, _, _, ok := plugins.Connector(name); ok {
		var own []connect.KeyInfo
		seen := map[string]bool{}
		for _, k := range f().Config().Info() {
			// Kafka's ConnectorConfig owns connector.class (Java connectors
			// never define it): the framework's definition (Common, 2) is
			// listed, as in the validate response.
			if k.Name == "connector.class" {
				continue
			}
			seen[k.Name] = true
			own = append(own, k)
		}
		// With the KIP-891 plugin version keys, as connectorPluginConfig
		// lists them: the connector's version as its default, the
		// converters' versions without one (no converter is chosen yet).
		for _, k := range sourceConnectorConfigDef(pluginVersionsOf(plugins, cfg, map[string]string{"connector.class": name})).Info() {
			if seen[k.Name] {
				continue
			}
			if nullDefaults[k.Name] || (strings.HasSuffix(k.Name, ".converter.plugin.version")) {
				k.Default = nil
			}
			own = append(own, k)
		}
		return own, nil
	}
	if p, ok := plugins.Plugin(name); ok {
		if p.Config == nil {
			return []connect.KeyInfo{}, nil
		}
		return p.Config().Info(), nil
	}
	return nil, &PluginNotFoundError{Plugin: name}
}

// pluginVersionsOf returns the installed versions of cfg's connector class
// and converters (the worker's key.converter / value.converter and
// SimpleHeaderConverter when cfg names none), for the KIP-891 keys.
func (h *Herder) pluginVersionsOf(cfg map[string]string) *pluginVersions {
	return pluginVersionsOf(h.plugins, h.cfg, cfg)
}

func pluginVersionsOf(plugins *connect.Plugins, worker WorkerConfig, cfg map[string]string) *pluginVersions {
	class := strings.TrimSpace(cfg["connector.class"])
	pv := &pluginVersions{connectorClass: class}
	if f, _, ok := plugins.Source(class); ok {
		pv.connector = f().Version()
	}
	version := func(key, workerDefault string) string {
		c := strings.TrimSpace(cfg[key])
		if c == "" {
			c = workerDefault
		}
		if d, ok := plugins.Plugin(c); ok {
			return d.Version
		}
		return ""
	}
	pv.key = version("key.converter", worker.Get("key.converter"))
	pv.value = version("value.converter", worker.Get("value.converter"))
	pv.header = version("header.converter", "org.apache.kafka.connect.storage.SimpleHeaderConverter")
	return pv
}
