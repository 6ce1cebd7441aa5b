package connect

import (
	"fmt"
	"strings"
)

// ConfigValue is the result of validating one key, as
// org.apache.kafka.common.config.ConfigValue: the parsed value rendered as
// a string (nil when missing without default or unparsable), recommended
// values, error messages and visibility.
type ConfigValue struct {
	Name        string
	Value       *string
	Recommended []string
	Errors      []string
	Visible     bool
}

// KeyInfo is a key's definition as Kafka Connect's ConfigKeyInfo renders it
// (AbstractHerder.convertConfigKey): Default is nil for a required key.
type KeyInfo struct {
	Name         string
	Type         string
	Required     bool
	Default      *string
	Importance   string
	Doc          string
	Group        *string
	OrderInGroup int
	Width        string
	DisplayName  string
	Dependents   []string
	// Allowed is the key's accepted values (ConfigKey.Allowed), for the
	// generated reference; the REST bodies do not carry it.
	Allowed []string
}

// Info returns the ConfigKeyInfo view of every key, in definition order.
func (d *ConfigDef) Info() []KeyInfo {
	out := make([]KeyInfo, 0, len(d.keys))
	pos := map[string]int{}
	for _, k := range d.keys {
		ki := KeyInfo{Name: k.Name, Type: string(k.Type), Importance: string(k.Importance), Doc: k.Doc,
			Width: k.Width, DisplayName: k.DisplayName, Dependents: k.Dependents, OrderInGroup: -1, Allowed: k.Allowed}
		if ki.Type == "" {
			ki.Type = string(TypeString)
		}
		if ki.Importance == "" {
			ki.Importance = string(Low)
		}
		if ki.Width == "" {
			ki.Width = "NONE"
		}
		if ki.DisplayName == "" {
			ki.DisplayName = k.Name
		}
		if ki.Dependents == nil {
			ki.Dependents = []string{}
		}
		if k.Default == nil {
			ki.Required = !k.Optional
		} else {
			ki.Default = k.Default
		}
		if k.Group != "" {
			g := k.Group
			ki.Group = &g
			pos[g]++
			ki.OrderInGroup = pos[g]
			if k.OrderInGroup != 0 {
				ki.OrderInGroup = k.OrderInGroup
			}
		}
		out = append(out, ki)
	}
	return out
}

// ValidateAll validates cfg against every key as ConfigDef.validateAll does
// and returns one ConfigValue per key in definition order. A key's value is
// its configured value, else its default; an unparsable value is nil. The
// messages are the same as Validate's.
func (d *ConfigDef) ValidateAll(cfg map[string]string) []ConfigValue {
	errs := map[string][]string{}
	for _, e := range d.Validate(cfg) {
		errs[e.Key] = append(errs[e.Key], e.Message)
	}
	out := make([]ConfigValue, 0, len(d.keys))
	for _, k := range d.keys {
		cv := ConfigValue{Name: k.Name, Visible: true, Recommended: []string{}, Errors: []string{}}
		if v, ok := cfg[k.Name]; ok {
			v = strings.TrimSpace(v)
			if checkType(k, v) == "" {
				cv.Value = &v
			}
		} else if k.Default != nil {
			def := *k.Default
			cv.Value = &def
		}
		if cv.Value != nil && k.Type == TypePassword {
			hidden := "[hidden]"
			cv.Value = &hidden
		}
		switch {
		case k.Recommended != nil:
			cv.Recommended = append(cv.Recommended, k.Recommended...)
		case k.Allowed != nil:
			cv.Recommended = append(cv.Recommended, k.Allowed...)
		}
		if e := errs[k.Name]; e != nil {
			cv.Errors = e
		}
		out = append(out, cv)
	}
	return out
}

// MissingMessage is ConfigDef's message for a required key without value.
func MissingMessage(key string) string {
	return fmt.Sprintf("Missing required configuration %q which has no default value.", key)
}
