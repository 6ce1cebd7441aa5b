package transforms

import (
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect"
)

// Chain is the ordered list of transformations of one connector, each with
// its optional predicate, as Kafka Connect's TransformationChain. It is
// owned by one task and used from its poll goroutine only.
type Chain struct {
	stages []stage
}

type stage struct {
	alias  string
	class  string
	t      connect.Transformation
	pred   connect.Predicate
	negate bool
}

// NewChain builds the chain a connector config describes with Kafka
// Connect's keys: "transforms" (aliases, in order), "transforms.<a>.type"
// (full class name or alias; the $Key/$Value inner classes by full name,
// e.g. org.apache.kafka.connect.transforms.ReplaceField$Value),
// "transforms.<a>.predicate", "transforms.<a>.negate", "predicates" and
// "predicates.<p>.type"; each plugin receives its "transforms.<a>." or
// "predicates.<p>." keys without the prefix. An empty "transforms" gives an
// empty chain that returns every record unchanged.
//
// Errors: ConfigErrors, every error keyed by its full connector config key
// (for example "transforms.route.regex"), the same errors Validate returns.
func NewChain(cfg map[string]string) (*Chain, error) {
	if errs := Validate(cfg); len(errs) > 0 {
		return nil, ConfigErrors(errs)
	}
	preds := map[string]connect.Predicate{}
	for _, alias := range list(cfg["predicates"]) {
		prefix := "predicates." + alias + "."
		pl, _ := lookup(cfg[prefix+"type"], connect.PluginPredicate)
		p := pl.newP()
		if err := p.Configure(subset(cfg, prefix)); err != nil {
			return nil, prefixed(err, prefix)
		}
		preds[alias] = p
	}
	c := &Chain{}
	for _, alias := range list(cfg["transforms"]) {
		prefix := "transforms." + alias + "."
		pl, _ := lookup(cfg[prefix+"type"], connect.PluginTransformation)
		t := pl.newT()
		if err := t.Configure(subset(cfg, prefix)); err != nil {
			c.Close()
			return nil, prefixed(err, prefix)
		}
		st := stage{alias: alias, class: pl.class, t: t}
		if p := strings.TrimSpace(cfg[prefix+"predicate"]); p != "" {
			st.pred = preds[p]
			st.negate = strings.EqualFold(strings.TrimSpace(cfg[prefix+"negate"]), "true")
		}
		c.stages = append(c.stages, st)
	}
	return c, nil
}

// Apply runs r through every stage in order, as
// TransformationChain.apply: a stage whose predicate does not match (or
// matches, with negate=true) is skipped; a stage returning nil drops the
// record and Apply returns (nil, nil). Errors name the alias and class of
// the failing stage and wrap its error. r itself is never modified.
func (c *Chain) Apply(r *connect.SourceRecord) (*connect.SourceRecord, error) {
	for _, st := range c.stages {
		if r == nil {
			return nil, nil
		}
		if st.pred != nil && st.pred.Test(r) == st.negate {
			continue
		}
		out, err := st.t.Apply(r)
		if err != nil {
			return nil, fmt.Errorf("transformation %s (%s): %w", st.alias, st.class, err)
		}
		r = out
	}
	return r, nil
}

// Len returns the number of transformations.
func (c *Chain) Len() int { return len(c.stages) }

// Close closes every transformation. It is safe on a nil chain.
func (c *Chain) Close() {
	if c == nil {
		return
	}
	for _, st := range c.stages {
		st.t.Close()
	}
}

// Validate checks the transforms and predicates of a connector config as
// Kafka Connect's ConnectorConfig.enrich + validate do: every alias needs a
// "type" naming a known class of its kind, each plugin's own keys are
// checked against its ConfigDef under the alias prefix, a "predicate" must
// name an alias listed in "predicates", and "negate" must be a boolean.
// Beyond the ConfigDef, each plugin is configured once so that cross-key
// errors (for example an unparsable ReplaceField renames list) are
// reported too. Errors are keyed and worded with the full key, e.g.
// `Missing required configuration "transforms.route.regex" which has no
// default value.`; nil means valid.
func Validate(cfg map[string]string) []connect.ConfigError {
	var errs []connect.ConfigError
	errs = append(errs, ConfigDef(cfg).Validate(cfg)...)
	bad := map[string]bool{}
	for _, e := range errs {
		bad[e.Key] = true
	}
	predAliases := map[string]bool{}
	for _, alias := range list(cfg["predicates"]) {
		predAliases[alias] = true
		prefix := "predicates." + alias + "."
		if hasBad(bad, prefix) {
			continue
		}
		pl, _ := lookup(cfg[prefix+"type"], connect.PluginPredicate)
		if err := pl.newP().Configure(subset(cfg, prefix)); err != nil {
			errs = append(errs, prefixed(err, prefix).(ConfigErrors)...)
		}
	}
	for _, alias := range list(cfg["transforms"]) {
		prefix := "transforms." + alias + "."
		if p := strings.TrimSpace(cfg[prefix+"predicate"]); p != "" && !predAliases[p] {
			errs = append(errs, connect.ConfigError{Key: prefix + "predicate", Message: fmt.Sprintf(
				"Invalid value %s for configuration %spredicate: Predicate alias %s is not among the aliases defined in predicates", p, prefix, p)})
		}
		if hasBad(bad, prefix) {
			continue
		}
		pl, _ := lookup(cfg[prefix+"type"], connect.PluginTransformation)
		t := pl.newT()
		if err := t.Configure(subset(cfg, prefix)); err != nil {
			errs = append(errs, prefixed(err, prefix).(ConfigErrors)...)
		}
		t.Close()
	}
	return errs
}

func hasBad(bad map[string]bool, prefix string) bool {
	for k := range bad {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// ConfigDef returns the keys the transforms and predicates of cfg add to a
// connector's definition, as ConnectorConfig.enrich: per transformation
// alias a, "transforms.a.type", then the class's own keys prefixed with
// "transforms.a.", then "transforms.a.negate" and "transforms.a.predicate",
// in the group "Transforms: a"; per predicate alias p, "predicates.p.type"
// and the class's keys, in the group "Predicates: p". The runtime merges it
// into /config/validate responses.
func ConfigDef(cfg map[string]string) *connect.ConfigDef {
	d := connect.NewConfigDef()
	for _, kind := range []struct{ key, group, label, typ string }{
		{"transforms", "Transforms", "Transformation", connect.PluginTransformation},
		{"predicates", "Predicates", "Predicate", connect.PluginPredicate},
	} {
		for _, alias := range list(cfg[kind.key]) {
			prefix := kind.key + "." + alias + "."
			group := kind.group + ": " + alias
			typ := kind.typ
			d.Define(connect.ConfigKey{Name: prefix + "type", Type: connect.TypeClass, Importance: connect.High,
				Doc: "Class for the '" + alias + "' " + strings.ToLower(kind.label) + ".", Group: group, Width: "LONG",
				DisplayName: kind.label + " type for " + alias,
				Validator: func(v string) string {
					if _, ok := lookup(v, typ); ok {
						return ""
					}
					return "Class " + v + " could not be found."
				}})
			if pl, ok := lookup(cfg[prefix+"type"], typ); ok {
				for _, k := range pl.config().Keys() {
					kk := *k
					kk.Name = prefix + k.Name
					kk.Group = group
					kk.OrderInGroup = 0
					d.Define(kk)
				}
			}
			if kind.key == "transforms" {
				d.Define(connect.ConfigKey{Name: prefix + "negate", Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Medium,
					Doc: "Whether the configured predicate should be negated.", Group: group, Width: "SHORT", DisplayName: "Negate"})
				d.Define(connect.ConfigKey{Name: prefix + "predicate", Type: connect.TypeString, Default: connect.Str(""), Importance: connect.Medium,
					Doc: "The alias of a predicate used to determine whether to apply this transformation.", Group: group, Width: "MEDIUM", DisplayName: "Predicate"})
			}
		}
	}
	return d
}

// subset returns the keys of cfg starting with prefix, without it.
func subset(cfg map[string]string, prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range cfg {
		if strings.HasPrefix(k, prefix) {
			out[k[len(prefix):]] = v
		}
	}
	return out
}

// prefixed rewrites the keys of a Configure error to full connector keys.
func prefixed(err error, prefix string) error {
	ce, ok := err.(ConfigErrors)
	if !ok {
		return ConfigErrors{{Key: prefix + "type", Message: err.Error()}}
	}
	out := make(ConfigErrors, len(ce))
	for i, e := range ce {
		out[i] = connect.ConfigError{Key: prefix + e.Key, Message: e.Message}
	}
	return out
}

func list(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
