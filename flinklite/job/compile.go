package job

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/connectd/connectd/sinks/jdbc"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/flinklite"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Compile builds s's job graph on env, reading the cluster at brokers
// (the source topics must exist: their partitions are read now). The
// graph is, in Flink's terms: Kafka source → debezium-json (or json)
// decoding → watermarks → filter → map → keyBy → window → aggregate →
// Kafka sink (exactly once) and/or JDBC upsert sink, with the late side
// output to its topic. The same spec always compiles to the same operator
// ids, so checkpoints and savepoints of one spec restore into the next run.
// The window state is in the operator's memory; CompileWithState puts it
// in a state backend.
func Compile(ctx context.Context, env *flinklite.Env, s *Spec, brokers []string, opts ...kgo.Opt) error {
	return CompileWithState(ctx, env, s, brokers, nil, opts...)
}

// CompileWithState is Compile with the window state in state (nil: the
// operator's memory), for a spec whose stateBackend is "pebble".
func CompileWithState(ctx context.Context, env *flinklite.Env, s *Spec, brokers []string, state flinklite.StateBackend, opts ...kgo.Opt) error {
	msgs, err := flinklite.FromKafka(ctx, env, brokers, s.Source.Topics, opts...)
	if err != nil {
		return err
	}
	return compileWindows(env, s, transformRows(s, withWatermarks(s, decodeRows(s, msgs))), state)
}

// decodeRows is the source's format: debezium-json changes or json rows.
func decodeRows(s *Spec, msgs *flinklite.Stream[flinklite.Message]) *flinklite.Stream[Row] {
	if s.Source.Format == "json" {
		return flinklite.FlatMap(msgs, func(m flinklite.Message, out func(Row)) {
			r, ok, err := jsonRow(m, s.EventTime)
			if err != nil {
				// FlatMap cannot fail the job; a malformed record is a
				// poison pill, skipped as Flink's json format with
				// ignore-parse-errors.
				return
			}
			if ok {
				out(r)
			}
		})
	}
	et := s.EventTime
	return flinklite.DebeziumChanges(msgs, func(st *connect.Struct, meta flinklite.ChangeMeta) (Row, error) {
		return structRow(st, meta, et)
	})
}

// withWatermarks assigns the rows' event time and the spec's watermarks.
func withWatermarks(s *Spec, rows *flinklite.Stream[Row]) *flinklite.Stream[Row] {
	return flinklite.AssignTimestampsAndWatermarks(rows, flinklite.WatermarkStrategy[Row]{
		Timestamp:         func(r Row) time.Time { return time.UnixMilli(r.Time) },
		MaxOutOfOrderness: s.MaxOutOfOrderness.D,
		IdleTimeout:       s.Idleness.D,
	})
}

// transformRows applies the spec's filter, then its map.
func transformRows(s *Spec, rows *flinklite.Stream[Row]) *flinklite.Stream[Row] {
	if len(s.Filter) > 0 {
		conds := make([]Condition, len(s.Filter))
		for i, c := range s.Filter {
			conds[i] = c.compiled()
		}
		rows = flinklite.Filter(rows, func(r Row) bool {
			for _, c := range conds {
				if !c.matches(r) {
					return false
				}
			}
			return true
		})
	}
	if len(s.Map) > 0 {
		projs := append([]Projection(nil), s.Map...)
		for i := range projs {
			if projs[i].Value != nil {
				projs[i].Value = literalValue(projs[i].Value)
			}
			if m := projs[i].Multiply; m != nil {
				projs[i].mul = literalNumber(*m)
			}
			if a := projs[i].Add; a != nil {
				projs[i].add = literalNumber(*a)
			}
		}
		rows = flinklite.Map(rows, func(r Row) Row {
			f := make(map[string]any, len(r.Fields)+len(projs))
			for k, v := range r.Fields {
				f[k] = v
			}
			for _, p := range projs {
				p.apply(f)
			}
			return Row{Fields: f, Time: r.Time}
		})
	}
	return rows
}

// keyOf is a row's key: the JSON array of its keyBy values.
func keyOf(s *Spec, r Row) string {
	vals := make([]any, len(s.KeyBy))
	for i, k := range s.KeyBy {
		vals[i] = r.Fields[k]
	}
	return encodeValues(vals) // numbers keep their kind (keyValues)
}

// compileWindows keys the rows, windows and aggregates them and writes
// the results to the sinks (and the late rows to the late output).
func compileWindows(env *flinklite.Env, s *Spec, rows *flinklite.Stream[Row], state flinklite.StateBackend) error {
	keyed := flinklite.KeyBy(rows, func(r Row) string { return keyOf(s, r) })
	var assigner flinklite.WindowAssigner
	switch s.Window.Type {
	case "tumbling":
		assigner = flinklite.TumblingEventTimeWindows(s.Window.Size.D, s.Window.Offset.D)
	case "hopping":
		assigner = flinklite.SlidingEventTimeWindows(s.Window.Size.D, s.Window.Slide.D)
	case "session":
		assigner = flinklite.EventTimeSessionWindows(s.Window.Gap.D)
	default:
		return fmt.Errorf("window.type %q", s.Window.Type)
	}
	ws := flinklite.Window(keyed, assigner).AllowedLateness(s.AllowedLateness.D)
	if state != nil {
		ws = ws.StateBackend(state)
	}
	var late *flinklite.Stream[Row]
	if s.LateOutput != nil {
		late = ws.SideOutputLateData()
	}
	results := flinklite.Aggregate(ws, flinklite.AggregateFunction[Row, Acc, Result](specAggregate{aggs: s.Aggregates}))
	out := &resultShape{spec: s}
	if k := s.Sinks.Kafka; k != nil {
		flinklite.ToKafka(results, k.Topic, out.kafkaRecord)
	}
	if j := s.Sinks.JDBC; j != nil {
		dialect, dsn, err := jdbc.DriverDSN(j.URL, j.User, j.Password)
		if err != nil {
			return err
		}
		if dialect == "mysql" {
			out.mysql = true
			flinklite.ToMySQLUpsert(results, flinklite.MySQLUpsertConfig{DSN: dsn, Table: j.Table}, out.upsertRow)
		} else {
			flinklite.ToPostgresUpsert(results, flinklite.PostgresUpsertConfig{URL: dsn, Table: j.Table}, out.upsertRow)
		}
	}
	if late != nil {
		flinklite.ToKafka(late, s.LateOutput.Topic, func(c flinklite.Change[Row]) ([]byte, []byte, error) {
			v := make(map[string]any, len(c.Value.Fields)+2)
			for k, x := range c.Value.Fields {
				v[k] = x
			}
			v["event_time"] = c.Value.Time
			v["retract"] = c.Retract
			b, err := json.Marshal(v)
			return nil, b, err
		})
	}
	return nil
}

// resultShape turns window results into the records and rows of the
// sinks: window_start and window_end (ms since the epoch in Kafka,
// timestamptz in PostgreSQL, DATETIME(3) in UTC in MySQL), the keyBy
// fields, then the aggregates; mysql selects MySQL's column types.
type resultShape struct {
	spec  *Spec
	mysql bool
}

type windowResult = flinklite.WindowResult[string, Result]

func (o resultShape) keyValues(r windowResult) []any {
	vals, _ := decodeValues(r.Key)
	if len(vals) != len(o.spec.KeyBy) {
		vals = make([]any, len(o.spec.KeyBy))
	}
	return vals
}

// kafkaRecord is the result's record: key {"window_start", "window_end",
// keyBy fields...} in JSON; value the key's fields, the aggregates and
// "firing" (0 for the on-time result, n for the n-th update by late rows:
// a result is identified by its key and firing, and a read_committed
// consumer sees each once); a window whose rows were all retracted is a
// tombstone (Flink's upsert-kafka writes a DELETE as one).
func (o resultShape) kafkaRecord(c flinklite.Change[windowResult]) ([]byte, []byte, error) {
	r := c.Value
	kv := o.keyValues(r)
	key := orderedJSON{{"window_start", r.Window.Start}, {"window_end", r.Window.End}}
	for i, k := range o.spec.KeyBy {
		key = append(key, kvPair{k, kv[i]})
	}
	kb, err := key.MarshalJSON()
	if err != nil {
		return nil, nil, err
	}
	if r.Value.Rows <= 0 {
		return kb, nil, nil
	}
	val := append(orderedJSON(nil), key...)
	for i, a := range o.spec.Aggregates {
		val = append(val, kvPair{a.Name(), r.Value.Values[i]})
	}
	val = append(val, kvPair{"firing", r.Firing})
	vb, err := val.MarshalJSON()
	return kb, vb, err
}

// upsertRow is the result's table row, keyed on (window_start,
// window_end, keyBy fields); an emptied window deletes its row. Numbers
// go to numeric columns as they are: exact integers and decimals as their
// digits (numeric in PostgreSQL, DECIMAL(65, scale) in MySQL), floats as
// double precision.
func (o resultShape) upsertRow(c flinklite.Change[windowResult]) (flinklite.UpsertRow, error) {
	r := c.Value
	kv := o.keyValues(r)
	ts := "timestamptz"
	if o.mysql {
		ts = "datetime(3)"
	}
	row := flinklite.UpsertRow{Key: []flinklite.UpsertColumn{
		{Name: "window_start", Value: time.UnixMilli(r.Window.Start).UTC(), Type: ts},
		{Name: "window_end", Value: time.UnixMilli(r.Window.End).UTC(), Type: ts},
	}}
	for i, k := range o.spec.KeyBy {
		row.Key = append(row.Key, flinklite.UpsertColumn{Name: k, Value: kv[i], Type: o.sqlType(kv[i], true)})
	}
	if r.Value.Rows <= 0 {
		row.Delete = true
		return row, nil
	}
	for i, a := range o.spec.Aggregates {
		v := r.Value.Values[i]
		typ := o.sqlType(v, false)
		switch a.Function {
		case "count", "distinctCount":
			typ = "bigint"
		case "avg":
			if _, ok := v.(Decimal); !ok && v != nil {
				typ = o.sqlType(0.0, false)
			}
		}
		row.Values = append(row.Values, flinklite.UpsertColumn{Name: a.Name(), Value: v, Type: typ})
	}
	typ := "integer"
	if o.mysql {
		typ = "int"
	}
	row.Values = append(row.Values, flinklite.UpsertColumn{Name: "firing", Value: int64(r.Firing), Type: typ})
	return row, nil
}

// sqlType is the column type of a value: text (varchar(255) in a MySQL
// key: it cannot index TEXT), boolean, numeric (exact numbers; in MySQL
// bigint for integers, DECIMAL(65, scale) for decimals), double precision
// (double) for floats.
func (o resultShape) sqlType(v any, inKey bool) string {
	switch x := v.(type) {
	case string:
		if o.mysql && inKey {
			return "varchar(255)"
		}
		if o.mysql {
			return "longtext"
		}
		return "text"
	case bool:
		return "boolean"
	case float64:
		if o.mysql {
			return "double"
		}
		return "double precision"
	case Decimal:
		if o.mysql {
			return fmt.Sprintf("decimal(65,%d)", min(max(x.Scale, 0), 30))
		}
	case int64:
		if o.mysql && inKey {
			return "bigint"
		}
		if o.mysql {
			return "decimal(65,0)" // a sum of bigints may pass int64
		}
	case nil:
		if o.mysql {
			return "decimal(65,10)"
		}
	}
	return "numeric"
}

type kvPair struct {
	k string
	v any
}

// orderedJSON is a JSON object with its keys in the given order.
type orderedJSON []kvPair

func (o orderedJSON) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, p := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(p.k)
		v, err := json.Marshal(p.v)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}
