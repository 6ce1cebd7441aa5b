package mariadiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/connectd/connectd/internal/difftest"
)

// Record is one change event as a Kafka Connect worker would write it.
type (
	Record = difftest.Record
	Header = difftest.Header
)

// Diff is one difference between connectd's and Debezium's output.
type Diff struct {
	Seed int64
	W    *Workload
	// Kind: topic, key, value, headers, partition, offset (a field differs
	// in a matched pair; Path names it), bytes (same decoded JSON, other
	// bytes), missing (Debezium emitted a record connectd did not), extra
	// (the reverse), snapshot-order, history (a field of a matched schema
	// history record), history-missing, history-extra, connectd-error,
	// reference-error.
	Kind  string
	Path  string
	Got   string // connectd's JSON at Path ("" when absent)
	Want  string // Debezium's
	Table string // db.table of the record ("" for schema changes / tombstones)
	Op    string // the record's op ("" for tombstones and schema changes)
	Index [2]int // record positions (connectd, Debezium); -1 when absent

	got, want *Record
}

func (d *Diff) String() string {
	s := fmt.Sprintf("%s %s [%s op=%s]: connectd %s, Debezium %s", d.Kind, d.Path, d.Table, d.Op, difftest.Clip(d.Got), difftest.Clip(d.Want))
	if c := d.Column(); c != "" {
		s += " (column " + c + ")"
	}
	return s
}

var (
	payloadCol = regexp.MustCompile(`^value\.payload\.(?:before|after)\.(.+?)$`)
	schemaCol  = regexp.MustCompile(`^value\.schema\.fields\.\[(?:before|after)\]\.fields\.\[([^]]*)\]`)
)

// Column is the generated definition of the column d's path names, or "".
func (d *Diff) Column() string {
	if d.W == nil {
		return ""
	}
	col := ""
	if m := payloadCol.FindStringSubmatch(d.Path); m != nil {
		col = m[1]
	} else if m := schemaCol.FindStringSubmatch(d.Path); m != nil {
		col = m[1]
	}
	if col == "" {
		return ""
	}
	if c, ok := d.W.Columns[d.Table+"."+col]; ok {
		return c
	}
	return ""
}

// FieldSchemaName is the Connect schema name ("io.debezium.time.Year")
// of the after/before field d's path names, read from Debezium's record
// (connectd's when Debezium has none); "" if there is none. It types a
// column the generator did not write itself (a CREATE … SELECT).
func (d *Diff) FieldSchemaName() string {
	col := ""
	if m := payloadCol.FindStringSubmatch(d.Path); m != nil {
		col = m[1]
	} else if m := schemaCol.FindStringSubmatch(d.Path); m != nil {
		col = m[1]
	}
	r := d.want
	if r == nil {
		r = d.got
	}
	if col == "" || r == nil {
		return ""
	}
	var v struct {
		Schema struct {
			Fields []struct {
				Field  string `json:"field"`
				Fields []struct {
					Field string `json:"field"`
					Name  string `json:"name"`
				} `json:"fields"`
			} `json:"fields"`
		} `json:"schema"`
	}
	if json.Unmarshal([]byte(r.Value), &v) != nil {
		return ""
	}
	for _, f := range v.Schema.Fields {
		if f.Field != "after" && f.Field != "before" {
			continue
		}
		for _, c := range f.Fields {
			if c.Field == col {
				return c.Name
			}
		}
	}
	return ""
}

var wallClock = regexp.MustCompile(`"(ts_ms|ts_us|ts_ns|ts_sec)":-?[0-9]+|"version":"[0-9.]+Final"`)

// mask masks wall clocks and the connector version (the reference is
// Debezium 3.5.0, the last MariaDB connector published).
func mask(s string) string {
	return wallClock.ReplaceAllStringFunc(s, func(m string) string {
		k, _, _ := strings.Cut(m, ":")
		return k + `:"*"`
	})
}

// meta is what the comparison reads from a record's value.
type meta struct {
	op, table, ddl, db string
	snapshot           bool
	key                string
}

func recordMeta(r *Record) meta {
	var m meta
	var v struct {
		Payload struct {
			Op           string `json:"op"`
			DDL          string `json:"ddl"`
			DatabaseName string `json:"databaseName"`
			Source       *struct {
				DB       string `json:"db"`
				Table    string `json:"table"`
				Snapshot string `json:"snapshot"`
			} `json:"source"`
		} `json:"payload"`
	}
	json.Unmarshal([]byte(r.Value), &v)
	m.op, m.ddl, m.db = v.Payload.Op, v.Payload.DDL, v.Payload.DatabaseName
	if s := v.Payload.Source; s != nil {
		if s.Table != "" {
			m.table = s.DB + "." + s.Table
		}
		m.snapshot = s.Snapshot != "" && s.Snapshot != "false"
	}
	var k struct {
		Payload json.RawMessage `json:"payload"`
	}
	if json.Unmarshal([]byte(r.Key), &k) == nil {
		m.key = string(k.Payload)
	}
	return m
}

func (m meta) signature(r *Record) string {
	switch {
	case r.Value == "null":
		return "tomb|" + r.Topic + "|" + m.key
	case m.op == "":
		return "ddl|" + m.db + "|" + m.ddl
	}
	return m.table + "|" + m.op + "|" + m.key
}

// Compare matches connectd's records to Debezium's and returns every
// difference. Snapshot records are matched by signature whatever their
// order (a different table order is one snapshot-order difference);
// streamed records by a longest common subsequence of signatures (table,
// op, key; the DDL text of a schema change event).
func Compare(w *Workload, got, want []Record) []*Diff {
	var diffs []*Diff
	gs, ws := splitSnapshot(got), splitSnapshot(want)
	if a, b := tableOrder(got[:gs]), tableOrder(want[:ws]); !reflect.DeepEqual(a, b) {
		diffs = append(diffs, &Diff{Kind: "snapshot-order", Got: strings.Join(a, " "), Want: strings.Join(b, " "), Index: [2]int{-1, -1}})
	}
	used := make([]bool, gs)
	for j := 0; j < ws; j++ {
		sig := recordMeta(&want[j]).signature(&want[j])
		found := -1
		for i := 0; i < gs; i++ {
			if !used[i] && recordMeta(&got[i]).signature(&got[i]) == sig {
				found = i
				break
			}
		}
		if found < 0 {
			diffs = append(diffs, missing("missing", &want[j], j))
			continue
		}
		used[found] = true
		diffs = append(diffs, comparePair(&got[found], &want[j], found, j)...)
	}
	for i := 0; i < gs; i++ {
		if !used[i] {
			diffs = append(diffs, missing("extra", &got[i], i))
		}
	}
	g, wt := got[gs:], want[ws:]
	gsig := make([]string, len(g))
	wsig := make([]string, len(wt))
	for i := range g {
		gsig[i] = recordMeta(&g[i]).signature(&g[i])
	}
	for j := range wt {
		wsig[j] = recordMeta(&wt[j]).signature(&wt[j])
	}
	for _, st := range difftest.Align(gsig, wsig) {
		i, j := st[0], st[1]
		switch {
		case i >= 0 && j >= 0:
			diffs = append(diffs, comparePair(&g[i], &wt[j], gs+i, ws+j)...)
		case i >= 0:
			diffs = append(diffs, missing("extra", &g[i], gs+i))
		default:
			diffs = append(diffs, missing("missing", &wt[j], ws+j))
		}
	}
	for _, d := range diffs {
		d.Seed, d.W = w.Seed, w
	}
	return diffs
}

// splitSnapshot returns the number of leading snapshot records.
func splitSnapshot(rs []Record) int {
	n := 0
	for n < len(rs) && recordMeta(&rs[n]).snapshot {
		n++
	}
	return n
}

func tableOrder(rs []Record) []string {
	var out []string
	for i := range rs {
		m := recordMeta(&rs[i])
		t := m.table
		if t == "" || m.op == "" {
			continue // tombstones and schema change events
		}
		if len(out) == 0 || out[len(out)-1] != t {
			out = append(out, t)
		}
	}
	return out
}

func missing(kind string, r *Record, idx int) *Diff {
	m := recordMeta(r)
	d := &Diff{Kind: kind, Table: m.table, Op: m.op, Path: r.Topic, Index: [2]int{-1, -1}}
	if m.ddl != "" {
		d.Path = r.Topic + " ddl " + m.ddl
	}
	if kind == "missing" {
		d.Want, d.want, d.Index[1] = r.Line(), r, idx
	} else {
		d.Got, d.got, d.Index[0] = r.Line(), r, idx
	}
	return d
}

func comparePair(g, w *Record, gi, wi int) []*Diff {
	m := recordMeta(w)
	mk := func(kind, path, got, want string) *Diff {
		return &Diff{Kind: kind, Path: path, Got: got, Want: want, Table: m.table, Op: m.op, Index: [2]int{gi, wi}, got: g, want: w}
	}
	var out []*Diff
	if g.Topic != w.Topic {
		out = append(out, mk("topic", "topic", g.Topic, w.Topic))
	}
	for _, part := range []struct{ name, a, b string }{{"key", g.Key, w.Key}, {"value", mask(g.Value), mask(w.Value)}} {
		if part.a == part.b {
			continue
		}
		ds := difftest.JSONDiff(part.name, difftest.Decode(part.a), difftest.Decode(part.b))
		if len(ds) == 0 {
			out = append(out, mk("bytes", part.name, part.a, part.b))
		}
		for _, d := range ds {
			out = append(out, mk(part.name, d[0], d[1], d[2]))
		}
	}
	gh, _ := json.Marshal(difftest.MaskHeaders(g.Headers))
	wh, _ := json.Marshal(difftest.MaskHeaders(w.Headers))
	if !bytes.Equal(gh, wh) {
		out = append(out, mk("headers", "headers", string(gh), string(wh)))
	}
	for _, d := range difftest.JSONDiff("partition", difftest.AnyMap(g.Partition), difftest.AnyMap(w.Partition)) {
		out = append(out, mk("partition", d[0], d[1], d[2]))
	}
	for _, d := range difftest.JSONDiff("offset", maskOffset(g.Offset), maskOffset(w.Offset)) {
		out = append(out, mk("offset", d[0], d[1], d[2]))
	}
	return out
}

func maskOffset(m map[string]any) any {
	if m == nil {
		return nil
	}
	out := map[string]any{}
	for k, v := range m {
		if k == "ts_sec" {
			v = "*"
		}
		out[k] = v
	}
	return out
}

// CompareHistory compares the schema history records (Debezium's
// FileSchemaHistory lines, connectd's history topic values), aligned by
// database and DDL text; ts_ms and position.ts_sec are masked.
func CompareHistory(w *Workload, got, want []string) []*Diff {
	sig := func(s string) string {
		var h struct {
			DB  string `json:"databaseName"`
			DDL string `json:"ddl"`
		}
		json.Unmarshal([]byte(s), &h)
		return h.DB + "|" + h.DDL
	}
	gs := make([]string, len(got))
	ws := make([]string, len(want))
	for i := range got {
		gs[i] = sig(got[i])
	}
	for j := range want {
		ws[j] = sig(want[j])
	}
	var out []*Diff
	for _, st := range difftest.Align(gs, ws) {
		i, j := st[0], st[1]
		switch {
		case i >= 0 && j >= 0:
			for _, d := range difftest.JSONDiff("history", difftest.Decode(mask(got[i])), difftest.Decode(mask(want[j]))) {
				out = append(out, &Diff{Seed: w.Seed, W: w, Kind: "history", Path: d[0], Got: d[1], Want: d[2], Index: [2]int{i, j}})
			}
		case i >= 0:
			out = append(out, &Diff{Seed: w.Seed, W: w, Kind: "history-extra", Path: gs[i], Got: got[i], Index: [2]int{i, -1}})
		default:
			out = append(out, &Diff{Seed: w.Seed, W: w, Kind: "history-missing", Path: ws[j], Want: want[j], Index: [2]int{-1, j}})
		}
	}
	return out
}
