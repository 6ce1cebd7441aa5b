package flinklite

import "errors"

// ErrNotRetractable: a retraction reached an aggregate function that does
// not implement RetractingAggregateFunction (e.g. Min/Max). Not retryable:
// the job graph must change.
var ErrNotRetractable = errors.New("flinklite: retraction reached an aggregate function without Retract")

// ErrNoTimestamp: an element reached an event-time window or timer without
// an event time (no AssignTimestampsAndWatermarks upstream). Not retryable.
var ErrNoTimestamp = errors.New("flinklite: element without event time (assign timestamps and watermarks upstream)")

// ErrNoCommittedCheckpoint: the checkpoint a committed Kafka transaction
// names is missing from the checkpoint directory, so the job cannot
// restore the state matching its committed output. Not retryable.
var ErrNoCommittedCheckpoint = errors.New("flinklite: committed checkpoint file missing")

// ErrSkipRow is returned by a RowDecoder for a row image it cannot use;
// DebeziumChanges then skips the image (see RowDecoder).
var ErrSkipRow = errors.New("flinklite: row image skipped")
