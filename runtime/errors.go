package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/connectd/connectd/connect"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ErrNotFound is returned for an unknown connector or task (REST 404).
var ErrNotFound = errors.New("not found")

// ErrAlreadyExists is returned when creating a connector whose name is taken (REST 409).
var ErrAlreadyExists = errors.New("already exists")

// ErrRebalanceInProgress is returned for a request that needs the group's
// current assignment while a rebalance is in progress (REST 409, with
// Kafka Connect's message for its RebalanceNeededException).
var ErrRebalanceInProgress = errors.New("Cannot complete request momentarily due to stale configuration (typically caused by a concurrent config change)")

// ConflictError is a request that cannot be served now because of the
// group's state (REST 409), e.g. a forwarded request that reached a worker
// that is not its target either.
type ConflictError struct{ Msg string }

func (e *ConflictError) Error() string { return e.Msg }

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
// Page, when set, is the reference page of the connector's keys
// (referencePageOf).
type ConfigInvalidError struct {
	Errors []connect.ConfigError
	Page   string
}

// Error matches Kafka Connect's AbstractHerder message for an invalid
// config, followed, for a shipped connector, by the page describing its
// keys.
func (e *ConfigInvalidError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Connector configuration is invalid and contains the following %d error(s):\n", len(e.Errors))
	for _, ce := range e.Errors {
		b.WriteString(ce.Message)
		b.WriteString("\n")
	}
	b.WriteString("You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
	if e.Page != "" {
		b.WriteString("\nEvery key of this connector is described in " + e.Page)
	}
	return b.String()
}

// BadRequestError is a request that cannot be served as sent (REST 400).
type BadRequestError struct{ Msg string }

func (e *BadRequestError) Error() string { return e.Msg }

// PluginNotFoundError is an unknown plugin class or alias (REST 404).
type PluginNotFoundError struct{ Plugin string }

func (e *PluginNotFoundError) Error() string { return "Unknown plugin " + e.Plugin + "." }
func (e *PluginNotFoundError) Unwrap() error { return ErrNotFound }

// Stage says where in a source task's pipeline an error happened, with
// Kafka Connect's names (org.apache.kafka.connect.runtime.errors.Stage).
type Stage string

// Stages of a source task.
const (
	StageTaskStart      Stage = "TASK_START" // SourceTask.Start (Kafka Connect has no stage for it)
	StageTaskPoll       Stage = "TASK_POLL"
	StageKeyConverter   Stage = "KEY_CONVERTER"
	StageValueConverter Stage = "VALUE_CONVERTER"
	StageKafkaProduce   Stage = "KAFKA_PRODUCE"
	StageTransformation Stage = "TRANSFORMATION"
)

// connectorStage reports whether s is inside the connector (its own
// retry policy applies, Debezium's errors.max.retries) rather than the
// worker (Kafka Connect's errors.retry.timeout).
func (s Stage) connectorStage() bool { return s == StageTaskStart || s == StageTaskPoll }

// TaskError is a source task failure: the task, the stage and the cause.
// Its message is the cause's, so that status traces read as the cause.
type TaskError struct {
	Task  TaskID
	Stage Stage
	Err   error
}

func (e *TaskError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *TaskError) Unwrap() error { return e.Err }

// IsRetriable reports whether err may go away when the failed operation or
// task is tried again: a *connect.RetriableError anywhere in the chain; a
// refused, reset, aborted or timed-out connection; a connection closed
// mid-protocol (io.ErrUnexpectedEOF, io.EOF); a network timeout or
// context.DeadlineExceeded; a database error of SQLSTATE class 08
// (connection exception) or 57P01-57P03 (server shut down or starting up,
// as Debezium's PostgresErrorHandler); an error a client says is safe to
// retry (pgconn's SafeToRetry); a retriable Kafka error. A cancelled
// context is never retriable: it is a stop.
func IsRetriable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var re *connect.RetriableError
	if errors.As(err, &re) {
		return true
	}
	for _, errno := range []syscall.Errno{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED,
		syscall.EPIPE, syscall.ETIMEDOUT, syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.ENETDOWN} {
		if errors.Is(err, errno) {
			return true
		}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	var sqlErr interface{ SQLState() string }
	if errors.As(err, &sqlErr) {
		code := sqlErr.SQLState()
		if strings.HasPrefix(code, "08") || code == "57P01" || code == "57P02" || code == "57P03" {
			return true
		}
	}
	var safe interface{ SafeToRetry() bool }
	if errors.As(err, &safe) && safe.SafeToRetry() {
		return true
	}
	return kerr.IsRetriable(err)
}
