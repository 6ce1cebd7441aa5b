package job

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/connectd/connectd/sinks/jdbc"
)

// Spec is a job written as JSON: the operations of the flinklite Go API
// (Flink's DataStream API) a daemon user composes without Go. Keys are
// Flink's names in camelCase; durations are Go duration strings ("5m",
// "500ms") or integers in ms. See the package documentation for an
// example and Validate for the rules.
type Spec struct {
	// ID names the job in the REST API (/jobs/{id}); letters, digits, '.',
	// '_' and '-'.
	ID     string     `json:"id"`
	Source SourceSpec `json:"source"`
	// EventTime says where an element's event time comes from.
	EventTime EventTimeSpec `json:"eventTime"`
	// MaxOutOfOrderness is how far behind the latest event time of its
	// partition an element may be and still be on time (Flink's
	// WatermarkStrategy.forBoundedOutOfOrderness; default 0), per source
	// partition; a distributed job that repartitions forwards each source
	// partition's watermark through the repartition topic (README,
	// distributed jobs).
	MaxOutOfOrderness Duration `json:"maxOutOfOrderness"`
	// Idleness is how long a partition may receive nothing before it no
	// longer holds the watermark back (Flink's withIdleness; default 0 =
	// never idle); on a distributed worker the idle status of a source
	// partition is forwarded through the repartition topic.
	Idleness Duration `json:"idleness"`
	// Filter keeps the rows for which every condition holds (AND).
	Filter []Condition `json:"filter,omitempty"`
	// Map adds (or replaces) computed fields, in order, after Filter.
	Map []Projection `json:"map,omitempty"`
	// KeyBy names the fields the windows are keyed by (Flink's keyBy);
	// at least one.
	KeyBy  []string   `json:"keyBy"`
	Window WindowSpec `json:"window"`
	// AllowedLateness keeps a window for that long after it fired; a late
	// row updates and re-fires it (Flink's allowedLateness; default 0).
	AllowedLateness Duration `json:"allowedLateness"`
	// Aggregates are computed per window and key; at least one.
	Aggregates []AggregateSpec `json:"aggregates"`
	// LateOutput, when set, receives the rows later than AllowedLateness
	// (Flink's sideOutputLateData); without it they are only counted.
	LateOutput *TopicSpec `json:"lateOutput,omitempty"`
	Sinks      SinksSpec  `json:"sinks"`
	Checkpoint struct {
		// Interval is Flink's execution.checkpointing.interval (default 10 s).
		Interval Duration `json:"interval"`
	} `json:"checkpoint"`
	// Savepoint is the path of a savepoint (POST /jobs/{id}/savepoints) to
	// start from when the job has no checkpoint of its own yet.
	Savepoint string `json:"savepoint,omitempty"`
	// StateBackend is where the windows' state lives (Flink's
	// state.backend.type): "memory" (the default, HashMapStateBackend) or
	// "pebble" (an LSM store under data.dir/jobs/<id>/state, as
	// EmbeddedRocksDBStateBackend, for state larger than memory; session
	// windows keep their state in memory). Checkpoints and savepoints have
	// the same format with either, so a job may switch between runs.
	StateBackend string `json:"stateBackend,omitempty"`
}

// SourceSpec names the Kafka topics read and their format.
type SourceSpec struct {
	Topics []string `json:"topics"`
	// Format is "debezium-json" (default: Debezium change events with the
	// JSON converter, schemas.enable=true; updates and deletes retract, as
	// Flink's debezium-json format) or "json" (one JSON object per record,
	// insertions only).
	Format string `json:"format,omitempty"`
	// Key names the fields of the records' Kafka key (Debezium: the
	// table's primary key columns), by which the topics are partitioned.
	// On a distributed worker a job whose keyBy is exactly these fields
	// reads its input partitions directly (no repartition topic); every
	// record's key is then checked to have exactly these fields.
	Key []string `json:"key,omitempty"`
}

// EventTimeSpec is either Field (a row field: Debezium's
// ZonedTimestamp/Timestamp/MicroTimestamp/NanoTimestamp/Date, an integer
// in ms, or an RFC 3339 string) or KafkaTimestamp (the record timestamp).
type EventTimeSpec struct {
	Field          string `json:"field,omitempty"`
	KafkaTimestamp bool   `json:"kafkaTimestamp,omitempty"`
}

// Condition is one filter condition: Field Op Value. Op is one of =, !=,
// <, <=, >, >= (numbers compare as numbers, strings as strings), in
// (Value is an array), isNull, isNotNull (no Value). A missing field is
// NULL, and a comparison with NULL is false (SQL's three-valued logic).
type Condition struct {
	Field string `json:"field"`
	Op    string `json:"op"`
	// Value is a string, bool, json.Number (a number as written, so that
	// it meets exact row values exactly: literalValue) or an array of them.
	Value any `json:"value,omitempty"`
}

// UnmarshalJSON decodes c with its numbers as written (json.Number).
func (c *Condition) UnmarshalJSON(b []byte) error {
	type plain Condition
	return decodeExact(b, (*plain)(c))
}

// decodeExact decodes b into v with numbers kept as json.Number and
// unknown fields refused (as ParseSpec).
func decodeExact(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// Projection sets field As to Value (a constant) or to field Field,
// multiplied by Multiply then increased by Add (numbers), or with Case
// "lower"/"upper" (strings).
type Projection struct {
	As    string `json:"as"`
	Field string `json:"field,omitempty"`
	// Value is a constant; a number is kept as written (json.Number).
	Value    any      `json:"value,omitempty"`
	Multiply *float64 `json:"multiply,omitempty"`
	Add      *float64 `json:"add,omitempty"`
	Case     string   `json:"case,omitempty"`

	// mul and add are literalNumber of Multiply and Add, set by compile
	// (not parsed per row).
	mul, add any
}

// UnmarshalJSON decodes p with a constant number as written (json.Number).
func (p *Projection) UnmarshalJSON(b []byte) error {
	type plain Projection
	return decodeExact(b, (*plain)(p))
}

// WindowSpec is the window assigner: "tumbling" (Size, optional Offset),
// "hopping" (Size and Slide; Flink's sliding windows) or "session" (Gap).
type WindowSpec struct {
	Type   string   `json:"type"`
	Size   Duration `json:"size"`
	Slide  Duration `json:"slide"`
	Offset Duration `json:"offset"`
	Gap    Duration `json:"gap"`
}

// AggregateSpec is one aggregate: Function over Field, named As in the
// results (default "<function>_<field>", or "count"). Functions: count
// (rows, or non-NULL values of Field when given, as SQL COUNT), sum, min,
// max, avg (NULLs ignored, as SQL) and distinctCount (SQL COUNT(DISTINCT)).
// All of them retract (min/max keep a multiset of values, as Flink's
// MinWithRetractAggFunction), so they stay correct over a CDC table.
type AggregateSpec struct {
	Function string `json:"function"`
	Field    string `json:"field,omitempty"`
	As       string `json:"as,omitempty"`
}

// TopicSpec names a Kafka topic.
type TopicSpec struct {
	Topic string `json:"topic"`
}

// SinksSpec lists where results go: a Kafka topic written exactly once
// (transactions committed with each checkpoint), a JDBC upsert table, or
// both; at least one.
type SinksSpec struct {
	Kafka *TopicSpec `json:"kafka,omitempty"`
	JDBC  *JDBCSpec  `json:"jdbc,omitempty"`
}

// JDBCSpec is the upsert table, with the JDBC sink connector's keys.
type JDBCSpec struct {
	// URL is jdbc:postgresql://host:port/db, jdbc:mysql://host:port/db or
	// jdbc:mariadb://host:port/db (the JDBC sink connector's
	// connection.url).
	URL      string `json:"connection.url"`
	User     string `json:"connection.username,omitempty"`
	Password string `json:"connection.password,omitempty"`
	// Table is created when missing, with the primary key (window_start,
	// window_end, keyBy fields...).
	Table string `json:"table"`
}

// Duration is a duration in a spec: a Go duration string or an integer in
// ms. An unparsable value is kept and reported by Validate with its field.
type Duration struct {
	D   time.Duration
	raw json.RawMessage
	bad bool
}

// UnmarshalJSON accepts "5m", "250ms" or 300000.
func (d *Duration) UnmarshalJSON(b []byte) error {
	d.raw = append(json.RawMessage(nil), b...)
	d.bad = false
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		d.D, d.bad = v, err != nil
		return nil
	}
	var ms float64
	if err := json.Unmarshal(b, &ms); err == nil {
		d.D = time.Duration(ms * float64(time.Millisecond))
		return nil
	}
	d.bad = true
	return nil
}

// MarshalJSON writes the value as given, or the duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	if d.raw != nil {
		return d.raw, nil
	}
	if d.D == 0 {
		return []byte("0"), nil
	}
	return json.Marshal(d.D.String())
}

// FieldError is one problem of a spec: the field's dotted path and why.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// SpecInvalidError lists every problem of a spec, or of another request
// body named by What (REST 400).
type SpecInvalidError struct {
	Errors []FieldError
	// What is the invalid body ("Job spec" when empty).
	What string
}

func (e *SpecInvalidError) Error() string {
	var b strings.Builder
	what := e.What
	if what == "" {
		what = "Job spec"
	}
	fmt.Fprintf(&b, "%s is invalid and contains the following %d error(s):", what, len(e.Errors))
	for _, fe := range e.Errors {
		fmt.Fprintf(&b, "\n%s: %s", fe.Field, fe.Message)
	}
	return b.String()
}

// ParseSpec decodes a JSON spec and validates it. Errors: a
// *SpecInvalidError (malformed JSON and unknown fields included, with the
// field named when the decoder says it).
func ParseSpec(b []byte) (*Spec, error) {
	var s Spec
	if err := DecodeStrict(b, &s, ""); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return &s, nil
}

// DecodeStrict decodes the JSON body b into v, refusing unknown fields.
// Errors: a *SpecInvalidError (What: what, "" for a job spec) whose one
// FieldError names the field when the decoder says it (a wrong type, an
// unknown field).
func DecodeStrict(b []byte, v any, what string) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		field := ""
		var te *json.UnmarshalTypeError
		if ok := asTypeError(err, &te); ok {
			field = te.Field
		} else if m := unknownFieldRE.FindStringSubmatch(err.Error()); m != nil {
			field = m[1]
		}
		return &SpecInvalidError{Errors: []FieldError{{Field: field, Message: err.Error()}}, What: what}
	}
	return nil
}

var unknownFieldRE = regexp.MustCompile(`unknown field "([^"]+)"`)

func asTypeError(err error, te **json.UnmarshalTypeError) bool {
	t, ok := err.(*json.UnmarshalTypeError)
	if ok {
		*te = t
	}
	return ok
}

var idRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,200}$`)

// Validate checks s and returns a *SpecInvalidError naming every invalid
// field, or nil.
func (s *Spec) Validate() error {
	var errs []FieldError
	bad := func(field, format string, args ...any) {
		errs = append(errs, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	dur := func(field string, d Duration, positive bool) {
		switch {
		case d.bad:
			bad(field, "invalid duration %s: a Go duration string (\"5m\", \"250ms\") or an integer in ms", d.raw)
		case d.D < 0:
			bad(field, "must not be negative, got %s", d.D)
		case positive && d.D == 0:
			bad(field, "is required and must be > 0")
		}
	}
	if !idRE.MatchString(s.ID) {
		bad("id", "must be 1 to 200 letters, digits, '.', '_' or '-', got %q", s.ID)
	}
	if len(s.Source.Topics) == 0 {
		bad("source.topics", "at least one topic is required")
	}
	for i, t := range s.Source.Topics {
		if strings.TrimSpace(t) == "" {
			bad(fmt.Sprintf("source.topics[%d]", i), "empty topic name")
		}
	}
	for i, k := range s.Source.Key {
		if k == "" {
			bad(fmt.Sprintf("source.key[%d]", i), "empty field name")
		}
	}
	switch s.Source.Format {
	case "", "debezium-json", "json":
	default:
		bad("source.format", "must be debezium-json or json, got %q", s.Source.Format)
	}
	switch {
	case s.EventTime.Field == "" && !s.EventTime.KafkaTimestamp:
		bad("eventTime", "either field or kafkaTimestamp=true is required")
	case s.EventTime.Field != "" && s.EventTime.KafkaTimestamp:
		bad("eventTime", "field and kafkaTimestamp=true are exclusive")
	}
	dur("maxOutOfOrderness", s.MaxOutOfOrderness, false)
	dur("idleness", s.Idleness, false)
	for i, c := range s.Filter {
		p := fmt.Sprintf("filter[%d]", i)
		if c.Field == "" {
			bad(p+".field", "is required")
		}
		switch c.Op {
		case "=", "!=", "<", "<=", ">", ">=":
			switch c.Value.(type) {
			case string, json.Number, float64, bool:
			default:
				bad(p+".value", "op %s needs a string, number or boolean value", c.Op)
			}
		case "in":
			if _, ok := c.Value.([]any); !ok {
				bad(p+".value", "op in needs an array value")
			}
		case "isNull", "isNotNull":
			if c.Value != nil {
				bad(p+".value", "op %s takes no value", c.Op)
			}
		default:
			bad(p+".op", "must be one of =, !=, <, <=, >, >=, in, isNull, isNotNull, got %q", c.Op)
		}
	}
	for i, m := range s.Map {
		p := fmt.Sprintf("map[%d]", i)
		if m.As == "" {
			bad(p+".as", "is required")
		}
		if (m.Field == "") == (m.Value == nil) {
			bad(p, "exactly one of field and value is required")
		}
		if m.Value != nil && (m.Multiply != nil || m.Add != nil || m.Case != "") {
			bad(p, "a constant value takes no multiply, add or case")
		}
		if m.Case != "" && m.Case != "lower" && m.Case != "upper" {
			bad(p+".case", "must be lower or upper, got %q", m.Case)
		}
		if m.Case != "" && (m.Multiply != nil || m.Add != nil) {
			bad(p, "case (strings) and multiply/add (numbers) are exclusive")
		}
	}
	if len(s.KeyBy) == 0 {
		bad("keyBy", "at least one field is required")
	}
	for i, k := range s.KeyBy {
		if k == "" {
			bad(fmt.Sprintf("keyBy[%d]", i), "empty field name")
		}
		if k == "window_start" || k == "window_end" || k == "firing" {
			bad(fmt.Sprintf("keyBy[%d]", i), "%s is a column of the results", k)
		}
	}
	w := s.Window
	switch w.Type {
	case "tumbling":
		dur("window.size", w.Size, true)
		dur("window.offset", w.Offset, false)
		if w.Slide.D != 0 || w.Gap.D != 0 {
			bad("window", "a tumbling window takes size (and offset), not slide or gap")
		}
		if w.Offset.D >= w.Size.D && w.Size.D > 0 {
			bad("window.offset", "must be smaller than size")
		}
	case "hopping":
		dur("window.size", w.Size, true)
		dur("window.slide", w.Slide, true)
		if w.Gap.D != 0 || w.Offset.D != 0 {
			bad("window", "a hopping window takes size and slide, not gap or offset")
		}
	case "session":
		dur("window.gap", w.Gap, true)
		if w.Size.D != 0 || w.Slide.D != 0 || w.Offset.D != 0 {
			bad("window", "a session window takes gap, not size, slide or offset")
		}
	default:
		bad("window.type", "must be tumbling, hopping or session, got %q", w.Type)
	}
	for _, d := range []struct {
		f string
		v Duration
	}{{"window.size", w.Size}, {"window.slide", w.Slide}, {"window.gap", w.Gap}} {
		if d.v.D > 0 && d.v.D%time.Millisecond != 0 {
			bad(d.f, "must be a whole number of ms, got %s", d.v.D)
		}
	}
	dur("allowedLateness", s.AllowedLateness, false)
	if len(s.Aggregates) == 0 {
		bad("aggregates", "at least one aggregate is required")
	}
	names := map[string]bool{"window_start": true, "window_end": true, "firing": true}
	for _, k := range s.KeyBy {
		names[k] = true
	}
	for i, a := range s.Aggregates {
		p := fmt.Sprintf("aggregates[%d]", i)
		switch a.Function {
		case "count":
		case "sum", "min", "max", "avg", "distinctCount":
			if a.Field == "" {
				bad(p+".field", "function %s needs a field", a.Function)
			}
		default:
			bad(p+".function", "must be one of count, sum, min, max, avg, distinctCount, got %q", a.Function)
		}
		if n := a.Name(); names[n] {
			bad(p+".as", "result column %q is used twice (window_start, window_end, firing, keyBy fields and aggregates share the results)", n)
		} else {
			names[n] = true
		}
	}
	if s.LateOutput != nil && s.LateOutput.Topic == "" {
		bad("lateOutput.topic", "is required")
	}
	if s.Sinks.Kafka == nil && s.Sinks.JDBC == nil {
		bad("sinks", "at least one of kafka and jdbc is required")
	}
	if s.Sinks.Kafka != nil && s.Sinks.Kafka.Topic == "" {
		bad("sinks.kafka.topic", "is required")
	}
	if j := s.Sinks.JDBC; j != nil {
		if _, err := j.DSN(); err != nil {
			bad("sinks.jdbc.connection.url", "%v", err)
		}
		if j.Table == "" {
			bad("sinks.jdbc.table", "is required")
		}
	}
	dur("checkpoint.interval", s.Checkpoint.Interval, false)
	switch s.StateBackend {
	case "", "memory", "pebble":
	default:
		bad("stateBackend", "must be \"memory\" or \"pebble\", got %q", s.StateBackend)
	}
	if len(errs) > 0 {
		return &SpecInvalidError{Errors: errs}
	}
	return nil
}

// Name is the aggregate's result column.
func (a AggregateSpec) Name() string {
	switch {
	case a.As != "":
		return a.As
	case a.Field == "":
		return a.Function
	}
	return a.Function + "_" + a.Field
}

// DSN turns the JDBC URL (and user and password) into the Go driver's
// DSN, as the JDBC sink connector does (jdbc.DriverDSN): a pgx URL for
// jdbc:postgresql://, a go-sql-driver/mysql DSN in UTC for jdbc:mysql://
// and jdbc:mariadb://. Errors: not a JDBC URL, another database.
func (j *JDBCSpec) DSN() (string, error) {
	_, dsn, err := jdbc.DriverDSN(j.URL, j.User, j.Password)
	return dsn, err
}
