package runtime

import (
	"errors"
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect"
)

// ErrNotFound is returned for an unknown connector or task (REST 404).
var ErrNotFound = errors.New("not found")

// ErrAlreadyExists is returned when creating a connector whose name is taken (REST 409).
var ErrAlreadyExists = errors.New("already exists")

// NotFoundError says which connector was not found. Msg, when set, is the
// message Kafka Connect gives for the operation (it varies: "Unknown
// connector X", "No status found for task X-0", ...).
type NotFoundError struct {
	Connector string
	Msg       string
}

func (e *NotFoundError) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	return fmt.Sprintf("Connector %s not found", e.Connector)
}
func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// ConfigInvalidError lists the problems of a connector config (REST 400).
type ConfigInvalidError struct{ Errors []connect.ConfigError }

// Error matches Kafka Connect's AbstractHerder message for an invalid config.
func (e *ConfigInvalidError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Connector configuration is invalid and contains the following %d error(s):\n", len(e.Errors))
	for _, ce := range e.Errors {
		b.WriteString(ce.Message)
		b.WriteString("\n")
	}
	b.WriteString("You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
	return b.String()
}

// BadRequestError is a request that cannot be served as sent (REST 400).
type BadRequestError struct{ Msg string }

func (e *BadRequestError) Error() string { return e.Msg }

// PluginNotFoundError is an unknown plugin class or alias (REST 404).
type PluginNotFoundError struct{ Plugin string }

func (e *PluginNotFoundError) Error() string { return "Unknown plugin " + e.Plugin + "." }
func (e *PluginNotFoundError) Unwrap() error { return ErrNotFound }
