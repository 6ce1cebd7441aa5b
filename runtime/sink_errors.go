package runtime

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/metrics"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Kafka Connect's dead letter queue context headers
// (org.apache.kafka.connect.runtime.errors.DeadLetterQueueReporter).
const (
	HeaderErrorsTopic            = "__connect.errors.topic"
	HeaderErrorsPartition        = "__connect.errors.partition"
	HeaderErrorsOffset           = "__connect.errors.offset"
	HeaderErrorsConnectorName    = "__connect.errors.connector.name"
	HeaderErrorsTaskID           = "__connect.errors.task.id"
	HeaderErrorsStage            = "__connect.errors.stage"
	HeaderErrorsClassName        = "__connect.errors.class.name"
	HeaderErrorsExceptionClass   = "__connect.errors.exception.class.name"
	HeaderErrorsExceptionMessage = "__connect.errors.exception.message"
	HeaderErrorsExceptionTrace   = "__connect.errors.exception.stacktrace"
)

// sinkErrorHandler applies a sink connector's errors.* keys to a record
// that failed conversion, transformation or (through
// connect.ErrantRecordReporter) the task's write, as Kafka Connect's
// RetryWithToleranceOperator with its LogReporter and
// DeadLetterQueueReporter:
//
//   - errors.tolerance=none: the failure fails the task;
//   - errors.tolerance=all: the record is skipped, after being logged
//     (errors.log.enable, with the record's content when
//     errors.log.include.messages) and written, original key, value and
//     headers, to errors.deadletterqueue.topic.name when set, with the
//     __connect.errors.* headers when
//     errors.deadletterqueue.context.headers.enable.
type sinkErrorHandler struct {
	id          TaskID
	tolerateAll bool
	logEnable   bool
	logMessages bool
	dlqTopic    string
	dlqHeaders  bool
	dlqRF       int16
	producer    *kgo.Client
	log         *slog.Logger
	// metrics counts the tolerated record errors and the records written
	// to the dead letter queue.
	metrics *metrics.SinkTask
	// originals maps the records of the batch being put to their consumed
	// records, so that Report writes the original bytes, as
	// WorkerErrantRecordReporter does.
	originals map[*connect.SinkRecord]*kgo.Record

	ensureOnce   sync.Once
	ensureErr    error
	skippedCount int64
}

var _ connect.ErrantRecordReporter = (*sinkErrorHandler)(nil)

// newSinkErrorHandler reads the errors.* keys of a connector config.
func newSinkErrorHandler(id TaskID, cfg map[string]string, producer *kgo.Client, log *slog.Logger) (*sinkErrorHandler, error) {
	h := &sinkErrorHandler{id: id, producer: producer, log: log, dlqRF: 3}
	switch strings.ToLower(strings.TrimSpace(cfg["errors.tolerance"])) {
	case "", "none":
	case "all":
		h.tolerateAll = true
	default:
		return nil, fmt.Errorf("Invalid value %s for configuration errors.tolerance: String must be one of: none, all", cfg["errors.tolerance"])
	}
	h.logEnable = strings.EqualFold(strings.TrimSpace(cfg["errors.log.enable"]), "true")
	h.logMessages = strings.EqualFold(strings.TrimSpace(cfg["errors.log.include.messages"]), "true")
	h.dlqTopic = strings.TrimSpace(cfg["errors.deadletterqueue.topic.name"])
	h.dlqHeaders = strings.EqualFold(strings.TrimSpace(cfg["errors.deadletterqueue.context.headers.enable"]), "true")
	if v := strings.TrimSpace(cfg["errors.deadletterqueue.topic.replication.factor"]); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || (n < 1 && n != -1) {
			return nil, fmt.Errorf("Invalid value %s for configuration errors.deadletterqueue.topic.replication.factor: must be -1 or at least 1", v)
		}
		h.dlqRF = int16(n)
	}
	return h, nil
}

// handle deals with a record that failed at stage. It returns nil when
// the record is to be skipped, or the error that fails the task.
func (h *sinkErrorHandler) handle(ctx context.Context, r *kgo.Record, stage Stage, class string, cause error) error {
	if !h.tolerateAll {
		return &TaskError{Stage: stage, Err: fmt.Errorf("Tolerance exceeded in error handler: %w", cause)}
	}
	// total-record-errors; a failure that is not tolerated is counted once,
	// as the task's failure (workerSinkTask.run).
	h.metrics.Error()
	if h.logEnable {
		attrs := []any{"task", h.id, "stage", stage, "class", class, "topic", r.Topic, "partition", r.Partition, "offset", r.Offset, "err", cause}
		if h.logMessages {
			attrs = append(attrs, "key", string(r.Key), "value", string(r.Value))
		}
		// LogReporter's message.
		h.log.Error(fmt.Sprintf("Error encountered in task %s. Executing stage '%s' with class '%s', where consumed record is {topic='%s', partition=%d, offset=%d}.", h.id, stage, class, r.Topic, r.Partition, r.Offset), attrs...)
	}
	if h.dlqTopic == "" {
		h.skippedCount++
		return nil
	}
	if err := h.sendDLQ(ctx, r, stage, class, cause); err != nil {
		return &TaskError{Stage: stage, Err: fmt.Errorf("writing to the dead letter queue %s: %w", h.dlqTopic, err)}
	}
	h.metrics.DeadLetter(1)
	h.skippedCount++
	return nil
}

// Report implements connect.ErrantRecordReporter for records the task
// could not write (stage TASK_PUT): the dead letter record carries the
// consumed record's original key, value and headers.
func (h *sinkErrorHandler) Report(ctx context.Context, sr *connect.SinkRecord, cause error) error {
	if orig, ok := h.originals[sr]; ok {
		return h.handle(ctx, orig, StageTaskPut, "SinkTask", cause)
	}
	r := &kgo.Record{Topic: sr.Topic, Partition: sr.Partition, Offset: sr.Offset, Timestamp: sr.Timestamp}
	for _, hd := range sr.Headers {
		r.Headers = append(r.Headers, kgo.RecordHeader{Key: hd.Key, Value: hd.Value})
	}
	if sr.Key != nil {
		r.Key = []byte(fmt.Sprint(sr.Key))
	}
	if sr.Value != nil {
		r.Value = []byte(fmt.Sprint(sr.Value))
	}
	return h.handle(ctx, r, StageTaskPut, "SinkTask", cause)
}

func (h *sinkErrorHandler) sendDLQ(ctx context.Context, r *kgo.Record, stage Stage, class string, cause error) error {
	h.ensureOnce.Do(func() {
		adm := kadm.NewClient(h.producer)
		resp, err := adm.CreateTopic(ctx, 1, h.dlqRF, nil, h.dlqTopic)
		if err == nil {
			err = resp.Err
		}
		if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			h.ensureErr = err
		}
	})
	if h.ensureErr != nil {
		return h.ensureErr
	}
	out := &kgo.Record{Topic: h.dlqTopic, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp}
	out.Headers = append(out.Headers, r.Headers...)
	if h.dlqHeaders {
		add := func(k, v string) { out.Headers = append(out.Headers, kgo.RecordHeader{Key: k, Value: []byte(v)}) }
		add(HeaderErrorsTopic, r.Topic)
		add(HeaderErrorsPartition, strconv.Itoa(int(r.Partition)))
		add(HeaderErrorsOffset, strconv.FormatInt(r.Offset, 10))
		add(HeaderErrorsConnectorName, h.id.Connector)
		add(HeaderErrorsTaskID, strconv.Itoa(h.id.Task))
		add(HeaderErrorsStage, string(stage))
		add(HeaderErrorsClassName, class)
		add(HeaderErrorsExceptionClass, exceptionClassOf(cause))
		add(HeaderErrorsExceptionMessage, cause.Error())
		add(HeaderErrorsExceptionTrace, fmt.Sprintf("%s: %s", exceptionClassOf(cause), cause.Error()))
	}
	return h.producer.ProduceSync(ctx, out).FirstErr()
}

// exceptionClassOf names the Java exception class Kafka Connect reports
// for a failure at a stage: a converter's and a transformation's errors
// are org.apache.kafka.connect.errors.DataException there.
func exceptionClassOf(err error) string {
	var re *connect.RetriableError
	if errors.As(err, &re) {
		return "org.apache.kafka.connect.errors.RetriableException"
	}
	return "org.apache.kafka.connect.errors.DataException"
}
