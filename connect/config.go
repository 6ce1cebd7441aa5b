package connect

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// ConfigType is a Kafka Connect ConfigDef.Type.
type ConfigType string

// ConfigDef types, as org.apache.kafka.common.config.ConfigDef.Type.
const (
	TypeString   ConfigType = "STRING"
	TypeInt      ConfigType = "INT"
	TypeLong     ConfigType = "LONG"
	TypeBoolean  ConfigType = "BOOLEAN"
	TypeList     ConfigType = "LIST"
	TypePassword ConfigType = "PASSWORD"
	TypeClass    ConfigType = "CLASS"
)

// Importance is ConfigDef.Importance.
type Importance string

// Importance levels.
const (
	High   Importance = "HIGH"
	Medium Importance = "MEDIUM"
	Low    Importance = "LOW"
)

// ConfigKey defines one configuration key.
type ConfigKey struct {
	Name    string
	Type    ConfigType
	Default *string // nil = required, no default (unless Optional)
	// Optional, with a nil Default, makes the default null instead of
	// required, as a Kafka ConfigDef key defined with a null default
	// (required false, default_value null): the key may be absent, and
	// Parsed returns "" for it.
	Optional   bool
	Importance Importance
	Doc        string
	Group      string
	// Allowed, when set, lists the accepted values (case-insensitive), as
	// ConfigDef.ValidString.
	Allowed []string
	// Validator, when set, returns a message for an invalid value.
	Validator func(v string) string

	// DisplayName, Width, OrderInGroup and Dependents are ConfigDef.ConfigKey's
	// UI metadata, served by GET /connector-plugins/{p}/config and the
	// validate endpoint. Zero values mean Kafka's defaults: the key's name,
	// "NONE", the key's position in its group (-1 without a group), none.
	DisplayName  string
	Width        string // NONE, SHORT, MEDIUM, LONG
	OrderInGroup int
	Dependents   []string
	// Recommended, when set, lists the recommended values shown in the
	// validate response (ConfigDef.Recommender); Allowed is used otherwise.
	Recommended []string
}

// ConfigError is a problem with one key's value.
type ConfigError struct {
	Key     string
	Message string
}

func (e ConfigError) Error() string { return e.Message }

// ConfigDef is an ordered set of ConfigKeys: the single source for defaults,
// validation, documentation and the REST validate response.
type ConfigDef struct {
	keys  []*ConfigKey
	index map[string]*ConfigKey
}

// NewConfigDef returns an empty definition.
func NewConfigDef() *ConfigDef { return &ConfigDef{index: map[string]*ConfigKey{}} }

// Define adds k (replacing a key of the same name) and returns d.
func (d *ConfigDef) Define(k ConfigKey) *ConfigDef {
	if old, ok := d.index[k.Name]; ok {
		*old = k
		return d
	}
	kk := k
	d.keys = append(d.keys, &kk)
	d.index[k.Name] = &kk
	return d
}

// Keys returns the keys in definition order.
func (d *ConfigDef) Keys() []*ConfigKey { return d.keys }

// Key returns the key called name, or nil.
func (d *ConfigDef) Key(name string) *ConfigKey { return d.index[name] }

// Str returns a pointer to s, for ConfigKey.Default.
func Str(s string) *string { return &s }

// Validate checks cfg against every key: missing required keys, types,
// allowed values and validators. Messages follow Kafka Connect's wording.
func (d *ConfigDef) Validate(cfg map[string]string) []ConfigError {
	var errs []ConfigError
	for _, k := range d.keys {
		v, ok := cfg[k.Name]
		if !ok {
			if k.Default == nil && !k.Optional {
				errs = append(errs, ConfigError{k.Name, fmt.Sprintf("Missing required configuration %q which has no default value.", k.Name)})
			}
			continue
		}
		v = strings.TrimSpace(v)
		if msg := checkType(k, v); msg != "" {
			errs = append(errs, ConfigError{k.Name, msg})
			continue
		}
		if len(k.Allowed) > 0 && !containsFold(k.Allowed, v) {
			errs = append(errs, ConfigError{k.Name, fmt.Sprintf("Invalid value %s for configuration %s: String must be one of: %s", v, k.Name, strings.Join(k.Allowed, ", "))})
			continue
		}
		if k.Validator != nil {
			if msg := k.Validator(v); msg != "" {
				errs = append(errs, ConfigError{k.Name, fmt.Sprintf("Invalid value %s for configuration %s: %s", v, k.Name, msg)})
			}
		}
	}
	return errs
}

func checkType(k *ConfigKey, v string) string {
	switch k.Type {
	case TypeInt:
		if _, err := strconv.ParseInt(v, 10, 32); err != nil {
			return fmt.Sprintf("Invalid value %s for configuration %s: Not a number of type INT", v, k.Name)
		}
	case TypeLong:
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return fmt.Sprintf("Invalid value %s for configuration %s: Not a number of type LONG", v, k.Name)
		}
	case TypeBoolean:
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return fmt.Sprintf("Invalid value %s for configuration %s: Expected value to be either true or false", v, k.Name)
		}
	}
	return ""
}

func containsFold(list []string, v string) bool {
	for _, a := range list {
		if strings.EqualFold(a, v) {
			return true
		}
	}
	return false
}

// Parsed is a config with defaults applied.
type Parsed struct {
	def *ConfigDef
	raw map[string]string
}

// Parse applies defaults; call Validate first.
func (d *ConfigDef) Parse(cfg map[string]string) Parsed { return Parsed{def: d, raw: cfg} }

// String returns the value of key, or its default, or "".
func (p Parsed) String(key string) string {
	if v, ok := p.raw[key]; ok {
		return strings.TrimSpace(v)
	}
	if k := p.def.Key(key); k != nil && k.Default != nil {
		return *k.Default
	}
	return ""
}

// Int returns the value of key as an int (0 when unparsable; Validate first).
func (p Parsed) Int(key string) int {
	n, _ := strconv.Atoi(p.String(key))
	return n
}

// Bool returns the value of key as a bool.
func (p Parsed) Bool(key string) bool { return strings.EqualFold(p.String(key), "true") }

// List returns the value of key split on commas, trimmed, without empties.
func (p Parsed) List(key string) []string {
	var out []string
	for _, s := range strings.Split(p.String(key), ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// SortErrors orders errors by key for stable messages.
func SortErrors(errs []ConfigError) {
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Key < errs[j].Key })
}
