package flinklite

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Message is a Kafka record as a source emits it.
type Message struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	// Timestamp is the Kafka record timestamp.
	Timestamp time.Time
	// Headers are the record's headers (a watermark record of a shuffle
	// topic is marked by one, ShuffleWatermarks).
	Headers []kgo.RecordHeader
}

// ChangeMeta is what a Debezium envelope says about a change besides its
// row images.
type ChangeMeta struct {
	Topic string
	// Op is Debezium's op: "c", "r", "u", "d" ("t" is handled by the
	// source itself).
	Op string
	// SourceTs is source.ts_ms: when the change was made in the database.
	SourceTs time.Time
	// Timestamp is the Kafka record timestamp of the change event.
	Timestamp time.Time
	// Key is the change event's record key (the primary key columns, in
	// the converter's format), for a decoder that keys its rows by it.
	Key []byte
}

// RowDecoder turns one row image (Debezium's before or after struct) into
// a T. T must round-trip through encoding/json: the last row of each key
// is checkpointed. A decoder returns ErrSkipRow for an image it cannot
// use (e.g. a delete's before image holding only the key columns, with
// REPLICA IDENTITY DEFAULT): an insertion is then dropped and a
// retraction counted in Metrics.NumUnmatchedRetractions.
type RowDecoder[T any] func(row *connect.Struct, meta ChangeMeta) (T, error)

// debeziumOp turns Debezium change events into a changelog of rows
// (Flink's debezium-json format followed by ChangelogNormalize): "c" and
// "r" insert the after image, "u" retracts the previous row of the key and
// inserts the after image, "d" retracts the previous row, "t" (truncate)
// retracts every row of the topic, tombstones, schema-change, heartbeat
// and "m" (message) events emit nothing.
//
// The previous row comes from the operator's own state (the last row seen
// per topic and record key), so updates and deletes are correct with
// PostgreSQL's REPLICA IDENTITY DEFAULT, whose update events carry no
// before image and whose delete events carry only the key columns. Only
// for a key the job never saw is the event's before image used (complete
// with REPLICA IDENTITY FULL); with no before image either, the
// retraction is counted in Metrics.NumUnmatchedRetractions.
type debeziumOp[T any] struct {
	env    *Env
	conv   *converters.JSONConverter
	decode RowDecoder[T]
	rows   map[string]T // topic \x00 key payload JSON → last row
	out    *Stream[T]
}

// DebeziumChanges decodes the Debezium change events of s (JSON converter
// with schemas.enable=true, the default of Debezium's Kafka Connect
// deployments) into a stream of row insertions and retractions, so that
// retract-aware aggregates over a CDC table stay equal to the same query
// on the table. A malformed event fails the job.
func DebeziumChanges[T any](s *Stream[Message], decode RowDecoder[T]) *Stream[T] {
	out := newStream[T](s.env, s.parts)
	op := &debeziumOp[T]{env: s.env, conv: converters.NewJSONConverter(), decode: decode, rows: map[string]T{}, out: out}
	s.subscribe(op)
	s.env.register(s.env.uid("debezium"), op)
	return out
}

func (d *debeziumOp[T]) processWatermark(wm int64) { d.out.emitWatermark(wm) }

func (d *debeziumOp[T]) processElement(e element[Message]) {
	if err := d.process(e); err != nil {
		d.env.fail(fmt.Errorf("flinklite: Debezium event %s/%d@%d: %w", e.v.Topic, e.v.Partition, e.v.Offset, err))
	}
}

func (d *debeziumOp[T]) process(e element[Message]) error {
	m := e.v
	if m.Value == nil {
		return nil // tombstone
	}
	_, v, err := d.conv.ToConnect(m.Topic, m.Value)
	if err != nil {
		return err
	}
	env, ok := v.(*connect.Struct)
	if !ok || env.Schema.Field("op") == nil {
		return nil // schema change, heartbeat or transaction metadata event
	}
	op, _ := env.Get("op").(string)
	meta := ChangeMeta{Topic: m.Topic, Op: op, Timestamp: m.Timestamp, Key: m.Key}
	if src, ok := env.Get("source").(*connect.Struct); ok {
		if ts, ok := src.Get("ts_ms").(int64); ok {
			meta.SourceTs = time.UnixMilli(ts).UTC()
		}
	}
	if op == "t" {
		prefix := m.Topic + "\x00"
		for k, row := range d.rows {
			if strings.HasPrefix(k, prefix) {
				d.out.emit(element[T]{v: row, ts: e.ts, part: e.part, retract: true})
				delete(d.rows, k)
			}
		}
		return nil
	}
	if op != "c" && op != "r" && op != "u" && op != "d" {
		return nil // "m": logical decoding message
	}
	key, err := keyPayload(m.Key)
	if err != nil {
		return err
	}
	sk := m.Topic + "\x00" + key
	{ // an insert of an existing key (a re-snapshot) replaces the row, as an upsert
		if old, ok := d.rows[sk]; ok {
			d.out.emit(element[T]{v: old, ts: e.ts, part: e.part, retract: true})
			delete(d.rows, sk)
		} else if op == "u" || op == "d" {
			before, _ := env.Get("before").(*connect.Struct)
			if before == nil {
				d.env.metrics.NumUnmatchedRetractions++
			} else {
				row, err := d.decode(before, meta)
				switch {
				case errors.Is(err, ErrSkipRow):
					d.env.metrics.NumUnmatchedRetractions++
				case err != nil:
					return err
				default:
					d.out.emit(element[T]{v: row, ts: e.ts, part: e.part, retract: true})
				}
			}
		}
	}
	if op == "d" {
		return nil
	}
	after, _ := env.Get("after").(*connect.Struct)
	if after == nil {
		return fmt.Errorf("op %q without an after image", op)
	}
	row, err := d.decode(after, meta)
	if errors.Is(err, ErrSkipRow) {
		return nil
	}
	if err != nil {
		return err
	}
	d.rows[sk] = row
	d.out.emit(element[T]{v: row, ts: e.ts, part: e.part})
	return nil
}

// keyPayload returns the canonical JSON of a record key's payload (the key
// columns), so that a key is the same whatever its envelope's schema bytes.
func keyPayload(key []byte) (string, error) {
	if key == nil {
		return "", nil
	}
	var env struct {
		Payload json.RawMessage `json:"payload"`
	}
	dec := json.NewDecoder(bytes.NewReader(key))
	if err := dec.Decode(&env); err != nil || env.Payload == nil {
		return string(key), nil // not a schema envelope: the raw bytes
	}
	var v any
	if err := json.Unmarshal(env.Payload, &v); err != nil {
		return "", err
	}
	b, err := json.Marshal(v) // sorted object keys
	return string(b), err
}

func (d *debeziumOp[T]) stateSize() int { return len(d.rows) }

func (d *debeziumOp[T]) snapshot() (json.RawMessage, error) { return json.Marshal(d.rows) }

func (d *debeziumOp[T]) restore(b json.RawMessage) error {
	d.rows = map[string]T{}
	return json.Unmarshal(b, &d.rows)
}
