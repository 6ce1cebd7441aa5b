package job

import (
	"encoding/json"
	"errors"
	"reflect"
	"sort"
	"testing"
)

const validSpec = `{
  "id": "orders-per-customer",
  "source": {"topics": ["shop.public.orders"]},
  "eventTime": {"field": "created_at"},
  "maxOutOfOrderness": "5s",
  "idleness": 60000,
  "filter": [{"field": "amount", "op": ">", "value": 0}],
  "map": [{"as": "cents", "field": "amount", "multiply": 100}],
  "keyBy": ["customer"],
  "window": {"type": "tumbling", "size": "5m"},
  "allowedLateness": "1h",
  "aggregates": [{"function": "sum", "field": "amount", "as": "total"}, {"function": "count"}],
  "lateOutput": {"topic": "orders-late"},
  "sinks": {"kafka": {"topic": "totals"},
            "jdbc": {"connection.url": "jdbc:postgresql://db:5432/shop", "connection.username": "u", "connection.password": "p", "table": "totals"}},
  "checkpoint": {"interval": "10s"}
}`

func TestParseValidSpec(t *testing.T) {
	s, err := ParseSpec([]byte(validSpec))
	if err != nil {
		t.Fatal(err)
	}
	if s.MaxOutOfOrderness.D.Seconds() != 5 || s.Idleness.D.Seconds() != 60 || s.Window.Size.D.Minutes() != 5 {
		t.Fatalf("durations: %+v %+v %+v", s.MaxOutOfOrderness, s.Idleness, s.Window.Size)
	}
	dsn, _ := s.Sinks.JDBC.DSN()
	if dsn != "postgres://u:p@db:5432/shop" {
		t.Fatalf("DSN %s", dsn)
	}
	// The spec round-trips (it is persisted as job.json).
	b, _ := json.Marshal(s)
	if _, err := ParseSpec(b); err != nil {
		t.Fatalf("re-parsing %s: %v", b, err)
	}
}

// Each invalid spec names the fields at fault, as a connector config's
// ConfigDef validation does (REST 400).
func TestSpecValidationNamesFields(t *testing.T) {
	for name, tc := range map[string]struct {
		patch  string // JSON merged over validSpec's top-level keys
		fields []string
	}{
		"bad id":             {`{"id": "a/b"}`, []string{"id"}},
		"no topics":          {`{"source": {"topics": []}}`, []string{"source.topics"}},
		"bad format":         {`{"source": {"topics": ["t"], "format": "avro"}}`, []string{"source.format"}},
		"no event time":      {`{"eventTime": {}}`, []string{"eventTime"}},
		"both event times":   {`{"eventTime": {"field": "t", "kafkaTimestamp": true}}`, []string{"eventTime"}},
		"bad duration":       {`{"maxOutOfOrderness": "soon", "allowedLateness": "-1s"}`, []string{"allowedLateness", "maxOutOfOrderness"}},
		"bad filter":         {`{"filter": [{"field": "a", "op": "like", "value": 1}, {"op": "in", "value": 3}]}`, []string{"filter[0].op", "filter[1].field", "filter[1].value"}},
		"bad map":            {`{"map": [{"field": "a"}, {"as": "b", "field": "c", "case": "title"}]}`, []string{"map[0].as", "map[1].case"}},
		"no key":             {`{"keyBy": []}`, []string{"keyBy"}},
		"window type":        {`{"window": {"type": "global"}}`, []string{"window.type"}},
		"tumbling size":      {`{"window": {"type": "tumbling"}}`, []string{"window.size"}},
		"tumbling offset":    {`{"window": {"type": "tumbling", "size": "1m", "offset": "1m"}}`, []string{"window.offset"}},
		"hopping slide":      {`{"window": {"type": "hopping", "size": "1m"}}`, []string{"window.slide"}},
		"session gap":        {`{"window": {"type": "session", "size": "1m"}}`, []string{"window", "window.gap"}},
		"sub-ms size":        {`{"window": {"type": "tumbling", "size": "1500us"}}`, []string{"window.size"}},
		"no aggregates":      {`{"aggregates": []}`, []string{"aggregates"}},
		"bad function":       {`{"aggregates": [{"function": "median", "field": "a"}, {"function": "sum"}]}`, []string{"aggregates[0].function", "aggregates[1].field"}},
		"duplicate column":   {`{"aggregates": [{"function": "count"}, {"function": "count"}, {"function": "sum", "field": "a", "as": "customer"}]}`, []string{"aggregates[1].as", "aggregates[2].as"}},
		"no sinks":           {`{"sinks": {}}`, []string{"sinks"}},
		"bad jdbc":           {`{"sinks": {"jdbc": {"connection.url": "jdbc:oracle://h/db"}}}`, []string{"sinks.jdbc.connection.url", "sinks.jdbc.table"}},
		"bad checkpoint":     {`{"checkpoint": {"interval": true}}`, []string{"checkpoint.interval"}},
		"unknown field":      {`{"windw": {}}`, []string{"windw"}},
		"bad state backend":  {`{"stateBackend": "rocksdb"}`, []string{"stateBackend"}},
		"wrong type of keys": {`{"keyBy": "customer"}`, []string{"keyBy"}},
	} {
		t.Run(name, func(t *testing.T) {
			var base, patch map[string]json.RawMessage
			if err := json.Unmarshal([]byte(validSpec), &base); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tc.patch), &patch); err != nil {
				t.Fatal(err)
			}
			for k, v := range patch {
				base[k] = v
			}
			b, _ := json.Marshal(base)
			_, err := ParseSpec(b)
			var si *SpecInvalidError
			if !errors.As(err, &si) {
				t.Fatalf("got %v, want a *SpecInvalidError", err)
			}
			var fields []string
			for _, fe := range si.Errors {
				if fe.Message == "" {
					t.Errorf("%s: no reason", fe.Field)
				}
				fields = append(fields, fe.Field)
			}
			sort.Strings(fields)
			if !reflect.DeepEqual(fields, tc.fields) {
				t.Fatalf("fields %v, want %v (%v)", fields, tc.fields, err)
			}
		})
	}
}

// min and max retract (Flink's MinWithRetractAggFunction keeps a map of
// value → count for this): removing the current minimum falls back to the
// next value, as SQL MIN over the remaining rows; sum, avg and count
// follow SQL too (NULLs ignored; sum of no value is NULL).
func TestSpecAggregateRetracts(t *testing.T) {
	aggs := []AggregateSpec{{Function: "min", Field: "v"}, {Function: "max", Field: "v"}, {Function: "sum", Field: "v"},
		{Function: "avg", Field: "v"}, {Function: "count", Field: "v"}, {Function: "count"}, {Function: "distinctCount", Field: "v"}}
	f := specAggregate{aggs: aggs}
	row := func(v any) Row { return Row{Fields: map[string]any{"v": v}} }
	acc := f.CreateAccumulator()
	for _, v := range []any{3.0, 1.0, 5.0, 1.0, nil} {
		acc = f.Add(row(v), acc)
	}
	check := func(want ...any) {
		t.Helper()
		got := f.GetResult(acc).Values
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("results %v, want %v", got, want)
		}
	}
	check(1.0, 5.0, 10.0, 2.5, int64(4), int64(5), int64(3)) // counts are integers
	acc = f.Retract(row(1.0), acc)                           // one of the two 1s
	check(1.0, 5.0, 9.0, 3.0, int64(3), int64(4), int64(3))
	acc = f.Retract(row(1.0), acc)
	acc = f.Retract(row(5.0), acc)
	check(3.0, 3.0, 3.0, 3.0, int64(1), int64(2), int64(1))
	acc = f.Retract(row(3.0), acc)
	acc = f.Retract(row(nil), acc)
	check(nil, nil, nil, nil, int64(0), int64(0), int64(0))
	if r := f.GetResult(acc); r.Rows != 0 {
		t.Fatalf("rows %d after retracting every row", r.Rows)
	}
	// The accumulator survives a checkpoint (JSON) unchanged in meaning.
	acc = f.Add(row(7.0), acc)
	acc = f.Add(row(2.0), acc)
	b, _ := json.Marshal(acc)
	var back Acc
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if a, b := f.GetResult(acc), f.GetResult(f.Merge(back, f.CreateAccumulator())); !reflect.DeepEqual(a, b) {
		t.Fatalf("after a round trip %v, want %v", b, a)
	}
}
