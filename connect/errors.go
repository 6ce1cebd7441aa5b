package connect

// RetriableError marks a task failure that may go away if the task is
// started again (Kafka Connect's org.apache.kafka.connect.errors.
// RetriableException; Debezium's connection errors). A connector returns it
// from Start or Poll to have the worker restart the task with backoff
// instead of failing it; the worker also recognises common network and
// database errors (connection refused/reset, timeouts) without it.
type RetriableError struct{ Err error }

func (e *RetriableError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *RetriableError) Unwrap() error { return e.Err }
