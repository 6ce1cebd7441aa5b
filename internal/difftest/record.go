// Package difftest holds what the differential suites (pgdiff: PostgreSQL,
// mariadiff: MariaDB) share: the record model and its readers (ref.Capture's
// files, connectd's source records through its JsonConverter), the JSON
// field comparison, record alignment, java.util.Properties writing, the
// task poller and the deviation-list enforcement helpers.
package difftest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
)

// Record is one change event as a Kafka Connect worker would write it:
// topic, key and value bytes of the JsonConverter (schemas.enable=true),
// headers as the SimpleHeaderConverter writes them, and the source
// partition and offset the connector attached.
type Record struct {
	Topic      string
	Key, Value string // JSON text; "null" for a null key/value (a tombstone's value)
	Headers    []Header
	Partition  map[string]any
	Offset     map[string]any
}

// Header is one record header; Value is its bytes as a string.
type Header struct {
	Key   string  `json:"key"`
	Value *string `json:"value"`
}

// Line renders r as ref.Capture writes it.
func (r *Record) Line() string {
	tb, _ := json.Marshal(r.Topic)
	s := `{"topic":` + string(tb) + `,"key":` + r.Key + `,"value":` + r.Value
	if len(r.Headers) > 0 {
		hb, _ := json.Marshal(r.Headers)
		s += `,"headers":` + string(hb)
	}
	return s + "}"
}

// ReadCapture reads ref.Capture's OUTPUT and OUTPUT.record-offsets.jsonl.
func ReadCapture(path string) ([]Record, error) {
	lines, err := ReadLines(path)
	if err != nil {
		return nil, err
	}
	offs, err := ReadLines(path + ".record-offsets.jsonl")
	if err != nil {
		return nil, err
	}
	if len(offs) != len(lines) {
		return nil, fmt.Errorf("%s: %d records but %d record offsets", path, len(lines), len(offs))
	}
	out := make([]Record, len(lines))
	for i, l := range lines {
		var raw struct {
			Topic   string          `json:"topic"`
			Key     json.RawMessage `json:"key"`
			Value   json.RawMessage `json:"value"`
			Headers []Header        `json:"headers"`
		}
		if err := json.Unmarshal([]byte(l), &raw); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, i+1, err)
		}
		var off struct {
			Key   []json.RawMessage `json:"key"`
			Value map[string]any    `json:"value"`
		}
		d := json.NewDecoder(bytes.NewReader([]byte(offs[i])))
		d.UseNumber()
		if err := d.Decode(&off); err != nil || len(off.Key) != 2 {
			return nil, fmt.Errorf("%s record offset %d: %v", path, i+1, err)
		}
		var part map[string]any
		d = json.NewDecoder(bytes.NewReader(off.Key[1]))
		d.UseNumber()
		if err := d.Decode(&part); err != nil {
			return nil, err
		}
		out[i] = Record{Topic: raw.Topic, Key: string(raw.Key), Value: string(raw.Value), Headers: raw.Headers, Partition: part, Offset: off.Value}
	}
	return out, nil
}

// FromConnect renders a connectd source record with connectd's JsonConverter.
func FromConnect(conv *converters.JSONConverter, r *connect.SourceRecord) (Record, error) {
	k, err := conv.FromConnect(r.Topic, r.KeySchema, r.Key)
	if err != nil {
		return Record{}, fmt.Errorf("key of %s: %w", r.Topic, err)
	}
	v, err := conv.FromConnect(r.Topic, r.ValueSchema, r.Value)
	if err != nil {
		return Record{}, fmt.Errorf("value of %s: %w", r.Topic, err)
	}
	out := Record{Topic: r.Topic, Key: "null", Value: "null", Partition: RoundTrip(r.SourcePartition), Offset: RoundTrip(r.SourceOffset)}
	if k != nil {
		out.Key = string(k)
	}
	if v != nil {
		out.Value = string(v)
	}
	for _, h := range r.Headers {
		hv := Header{Key: h.Key}
		if h.Value != nil {
			s := string(h.Value)
			hv.Value = &s
		}
		out.Headers = append(out.Headers, hv)
	}
	return out, nil
}

// RoundTrip passes an offset map through JSON, as the offsets topic does.
func RoundTrip(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	b, _ := json.Marshal(m)
	var out map[string]any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	d.Decode(&out)
	return out
}

// ReadLines reads a file's lines (up to 256 MB each).
func ReadLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<28)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out, sc.Err()
}
