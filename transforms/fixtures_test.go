package transforms

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/transforms")

// debeziumEvents reads real Debezium 3.6.1 events (testdata/debezium) back
// into the connect.Schema/connect.Struct values our connectors build;
// TestFixturesRoundTrip proves that rendering them reproduces the file byte
// for byte, so the inputs of the golden tests are Debezium's own.
func debeziumEvents(t testing.TB, file string) []*connect.SourceRecord {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "testdata", "debezium", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*connect.SourceRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var line struct {
			Topic string
			Key   json.RawMessage
			Value json.RawMessage
		}
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		if err := dec.Decode(&line); err != nil {
			t.Fatal(err)
		}
		r := &connect.SourceRecord{Topic: line.Topic, Timestamp: time.UnixMilli(1795946541581).UTC()}
		r.KeySchema, r.Key = decodeEnvelopeJSON(t, line.Key)
		r.ValueSchema, r.Value = decodeEnvelopeJSON(t, line.Value)
		out = append(out, r)
	}
	return out
}

func decodeEnvelopeJSON(t testing.TB, raw json.RawMessage) (*connect.Schema, any) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var sv struct {
		Schema  map[string]any
		Payload any
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&sv); err != nil {
		t.Fatal(err)
	}
	s := schemaFromJSON(sv.Schema)
	return s, valueFromJSON(t, s, sv.Payload)
}

func schemaFromJSON(m map[string]any) *connect.Schema {
	if m == nil {
		return nil
	}
	b := connect.NewSchema(connect.Type(m["type"].(string)))
	if m["optional"] == true {
		b.Optional()
	}
	if n, ok := m["name"].(string); ok {
		b.Name(n)
	}
	if v, ok := m["version"].(json.Number); ok {
		n, _ := v.Int64()
		b.Version(int(n))
	}
	if d, ok := m["doc"].(string); ok {
		b.Doc(d)
	}
	if ps, ok := m["parameters"].(map[string]any); ok {
		// JSON objects lose their order; Debezium's parameter orders are
		// restored for the names that have more than one.
		keys := make([]string, 0, len(ps))
		for k := range ps {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			return paramRank(keys[i]) < paramRank(keys[j]) || paramRank(keys[i]) == paramRank(keys[j]) && keys[i] < keys[j]
		})
		for _, k := range keys {
			b.Param(k, ps[k].(string))
		}
	}
	if fs, ok := m["fields"].([]any); ok {
		for _, f := range fs {
			fm := f.(map[string]any)
			b.Field(fm["field"].(string), schemaFromJSON(fm))
		}
	}
	if it, ok := m["items"].(map[string]any); ok {
		b.Items(schemaFromJSON(it))
	}
	s := b.Build()
	if ks, ok := m["keys"].(map[string]any); ok {
		s.KeySchema = schemaFromJSON(ks)
		s.ValueSchema = schemaFromJSON(m["values"].(map[string]any))
	}
	if d, ok := m["default"]; ok && d != nil {
		s.Default = valueFromJSON(nil, s, d)
	}
	return s
}

func paramRank(k string) int {
	switch k {
	case "scale", "length", "allowed":
		return 0
	case "connect.decimal.precision":
		return 1
	}
	return 2
}

func valueFromJSON(t testing.TB, s *connect.Schema, v any) any {
	if v == nil || s == nil {
		return v
	}
	num := func() json.Number { return v.(json.Number) }
	switch s.Name {
	case connect.DecimalName:
		raw, _ := base64.StdEncoding.DecodeString(v.(string))
		n := new(big.Int).SetBytes(raw)
		if len(raw) > 0 && raw[0]&0x80 != 0 {
			n.Sub(n, new(big.Int).Lsh(big.NewInt(1), uint(8*len(raw))))
		}
		scale, _ := s.Param("scale")
		sc, _ := strconv.Atoi(scale)
		return connect.Decimal{Unscaled: n, Scale: sc}
	case connect.DateName:
		d, _ := num().Int64()
		return time.Unix(d*86400, 0).UTC()
	case connect.TimestampName:
		ms, _ := num().Int64()
		return time.UnixMilli(ms).UTC()
	case connect.TimeName:
		ms, _ := num().Int64()
		return time.UnixMilli(ms).UTC()
	}
	switch s.Type {
	case connect.Int8:
		n, _ := num().Int64()
		return int8(n)
	case connect.Int16:
		n, _ := num().Int64()
		return int16(n)
	case connect.Int32:
		n, _ := num().Int64()
		return int32(n)
	case connect.Int64:
		n, _ := num().Int64()
		return n
	case connect.Float32:
		if str, ok := v.(string); ok {
			f, _ := strconv.ParseFloat(str, 32)
			return float32(f)
		}
		f, _ := strconv.ParseFloat(string(num()), 32)
		return float32(f)
	case connect.Float64:
		if str, ok := v.(string); ok {
			f, _ := strconv.ParseFloat(str, 64)
			return f
		}
		f, _ := num().Float64()
		return f
	case connect.Bytes:
		raw, _ := base64.StdEncoding.DecodeString(v.(string))
		return raw
	case connect.Array:
		var out []any
		for _, it := range v.([]any) {
			out = append(out, valueFromJSON(t, s.ValueSchema, it))
		}
		return out
	case connect.Map:
		out := map[string]any{}
		for k, it := range v.(map[string]any) {
			out[k] = valueFromJSON(t, s.ValueSchema, it)
		}
		return out
	case connect.StructT:
		m := v.(map[string]any)
		st := connect.NewStruct(s)
		for _, f := range s.Fields {
			st.Values[f.Index] = valueFromJSON(t, f.Schema, m[f.Name])
		}
		return st
	}
	return v
}

// render writes a record as one JSON line: topic, partition, timestamp
// (ms), headers (key and UTF-8 value), then key and value as
// JsonConverter with schemas.enable=true writes them.
func render(t testing.TB, r *connect.SourceRecord) string {
	t.Helper()
	if r == nil {
		return "(dropped)"
	}
	conv := converters.NewJSONConverter()
	var b strings.Builder
	b.WriteString(`{"topic":` + strconv.Quote(r.Topic))
	if r.Partition != nil {
		fmt.Fprintf(&b, `,"partition":%d`, *r.Partition)
	}
	if !r.Timestamp.IsZero() {
		fmt.Fprintf(&b, `,"timestamp":%d`, r.Timestamp.UnixMilli())
	}
	if len(r.Headers) > 0 {
		b.WriteString(`,"headers":[`)
		for i, h := range r.Headers {
			if i > 0 {
				b.WriteByte(',')
			}
			if h.Value == nil {
				fmt.Fprintf(&b, `[%q,null]`, h.Key)
			} else {
				fmt.Fprintf(&b, `[%q,%q]`, h.Key, string(h.Value))
			}
		}
		b.WriteByte(']')
	}
	for _, kv := range []struct {
		name string
		s    *connect.Schema
		v    any
	}{{"key", r.KeySchema, r.Key}, {"value", r.ValueSchema, r.Value}} {
		out, err := conv.FromConnect(r.Topic, kv.s, kv.v)
		if err != nil {
			t.Fatalf("%s: %v", kv.name, err)
		}
		if out == nil {
			out = []byte("null")
		}
		fmt.Fprintf(&b, `,%q:%s`, kv.name, out)
	}
	b.WriteByte('}')
	return b.String()
}

// goldenCase is one input/config pair of a golden test; doc cites the
// reference documentation section whose behaviour the case checks.
type goldenCase struct {
	name  string
	doc   string
	class string
	cfg   map[string]string
	in    []*connect.SourceRecord
	// wantErr, when set, is a substring of the expected Apply error of the
	// first record instead of an output.
	wantErr string
}

// runGolden applies each case and compares the rendered output with
// testdata/transforms/<file>.golden (rewritten with -update).
func runGolden(t *testing.T, file string, cases []goldenCase) {
	t.Helper()
	var b strings.Builder
	for _, c := range cases {
		fmt.Fprintf(&b, "### %s\n# ref: %s\n# type: %s\n", c.name, c.doc, c.class)
		keys := make([]string, 0, len(c.cfg))
		for k := range c.cfg {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "# %s=%s\n", k, c.cfg[k])
		}
		pl, ok := lookup(c.class, connect.PluginTransformation)
		if !ok {
			t.Fatalf("%s: unknown class %s", c.name, c.class)
		}
		tr := pl.newT()
		if err := tr.Configure(c.cfg); err != nil {
			t.Fatalf("%s: configure: %v", c.name, err)
		}
		for _, r := range c.in {
			before := render(t, r)
			out, err := tr.Apply(r)
			if err != nil {
				if c.wantErr == "" || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("%s: apply: %v", c.name, err)
				}
				fmt.Fprintf(&b, "error: %s\n", err)
				continue
			}
			if got := render(t, r); got != before {
				t.Errorf("%s: the input record was modified", c.name)
			}
			b.WriteString(render(t, out) + "\n")
		}
		tr.Close()
		b.WriteString("\n")
	}
	path := filepath.Join("..", "testdata", "transforms", file+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./transforms -update)", err)
	}
	if string(want) != b.String() {
		t.Errorf("%s differs from the golden file (go test ./transforms -update rewrites it); got:\n%s", path, b.String())
	}
}

func TestFixturesRoundTrip(t *testing.T) {
	for _, file := range []string{"pg_inventory_snapshot_stream.jsonl", "pg_truncate.jsonl"} {
		raw, err := os.ReadFile(filepath.Join("..", "testdata", "debezium", file))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		for i, r := range debeziumEvents(t, file) {
			conv := converters.NewJSONConverter()
			k, _ := conv.FromConnect(r.Topic, r.KeySchema, r.Key)
			v, _ := conv.FromConnect(r.Topic, r.ValueSchema, r.Value)
			if k == nil {
				k = []byte("null")
			}
			if v == nil {
				v = []byte("null")
			}
			got := fmt.Sprintf(`{"topic":%q,"key":%s,"value":%s}`, r.Topic, k, v)
			if got != lines[i] {
				t.Fatalf("%s line %d does not round-trip:\n got %s\nwant %s", file, i+1, got, lines[i])
			}
		}
	}
}

// byOp picks events of the inventory file: the i-th record of topic suffix
// table with op (or "tombstone").
func pick(t testing.TB, recs []*connect.SourceRecord, table, op string) *connect.SourceRecord {
	t.Helper()
	for _, r := range recs {
		if !strings.HasSuffix(r.Topic, "."+table) {
			continue
		}
		if op == "tombstone" {
			if r.Value == nil {
				return r
			}
			continue
		}
		if st, ok := r.Value.(*connect.Struct); ok && st.Get("op") == op {
			return r
		}
	}
	t.Fatalf("no %s event for %s", op, table)
	return nil
}
