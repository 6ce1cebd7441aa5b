package transforms

import (
	"errors"
	"strings"

	"github.com/connectd/connectd/connect"
)

// ConfigErrors is the error returned by Configure and NewChain for an invalid
// configuration: one connect.ConfigError per offending key, named as in the
// connector config (for example "transforms.route.regex"), so that the REST
// API can answer 400 with per-key messages.
type ConfigErrors []connect.ConfigError

func (e ConfigErrors) Error() string {
	msgs := make([]string, len(e))
	for i, ce := range e {
		msgs[i] = ce.Message
	}
	return strings.Join(msgs, "; ")
}

// ErrUnexpectedType is wrapped by Apply errors when a record's key or value
// is not of the type the transformation requires (Kafka Connect's
// Requirements.requireStruct/requireMap DataException).
var ErrUnexpectedType = errors.New("unexpected type")

// configErr returns a ConfigErrors with one error for key.
func configErr(key, msg string) error {
	return ConfigErrors{{Key: key, Message: msg}}
}

// invalid formats Kafka's ConfigException message for a bad value.
func invalid(key, value, why string) error {
	return configErr(key, "Invalid value "+value+" for configuration "+key+": "+why)
}

// parse validates props against def (missing required keys, types, allowed
// values, validators) and returns the parsed config with defaults applied.
func parse(def *connect.ConfigDef, props map[string]string) (connect.Parsed, error) {
	if errs := def.Validate(props); len(errs) > 0 {
		return connect.Parsed{}, ConfigErrors(errs)
	}
	return def.Parse(props), nil
}
