package pgdiff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/connectd/connectd/internal/difftest"
	"reflect"
	"regexp"
	"strings"
)

// Diff is one difference between connectd's and Debezium's output.
type Diff struct {
	Seed int64
	W    *Workload
	// Kind: topic, key, value, headers, partition, offset (a field differs
	// in a matched pair; Path names it), bytes (same decoded JSON, other
	// bytes: key order or number format), missing (Debezium emitted a
	// record connectd did not), extra (the reverse), snapshot-order.
	Kind  string
	Path  string // e.g. value.payload.after.Größe, value.schema.fields[after].fields[x].default, offset.lsn
	Got   string // connectd's JSON at Path ("" when absent)
	Want  string // Debezium's
	Table string // schema.table of the record ("" for transaction metadata / tombstones)
	Op    string // the record's op ("" for tombstones and transaction metadata)
	Index [2]int // record positions (connectd, Debezium); -1 when absent

	got, want *Record
}

func (d *Diff) String() string {
	s := fmt.Sprintf("%s %s [%s op=%s]: connectd %s, Debezium %s", d.Kind, d.Path, d.Table, d.Op, clip(d.Got), clip(d.Want))
	if c := d.Column(); c != "" {
		s += " (column " + c + ")"
	}
	return s
}

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
	if p, ok := d.W.PartitionOf[d.Table]; ok {
		// a partition's columns are its partitioned table's
		if c, ok := d.W.Columns[p+"."+col]; ok {
			return c
		}
	}
	// a dotted column name followed by a struct member (x, scale, …)
	if i := strings.LastIndex(col, "."); i > 0 {
		return d.W.Columns[d.Table+"."+col[:i]]
	}
	return ""
}

func clip(s string) string { return difftest.Clip(s) }

var (
	wallClock = regexp.MustCompile(`"(ts_ms|ts_us|ts_ns)":-?[0-9]+`)
	snapLSN   = regexp.MustCompile(`"(lsn|txId|xmin)":[0-9]+`)
	snapSeq   = regexp.MustCompile(`"sequence":"(?:[^"\\]|\\.)*"`)
)

// meta is what the comparison reads from a record's value.
type meta struct {
	op, table, status, id string
	snapshot              bool
	key                   string // key payload JSON
}

func recordMeta(r *Record) meta {
	var m meta
	var v struct {
		Payload struct {
			Op     string `json:"op"`
			Status string `json:"status"`
			ID     string `json:"id"`
			Source *struct {
				Schema   string `json:"schema"`
				Table    string `json:"table"`
				Snapshot string `json:"snapshot"`
			} `json:"source"`
		} `json:"payload"`
	}
	json.Unmarshal([]byte(r.Value), &v)
	m.op, m.status, m.id = v.Payload.Op, v.Payload.Status, v.Payload.ID
	if s := v.Payload.Source; s != nil {
		m.table = s.Schema + "." + s.Table
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
		return "tomb|" + m.key
	case m.status != "":
		return "tx|" + m.status + "|" + m.id
	}
	return m.table + "|" + m.op + "|" + m.key
}

// maskValue masks wall clocks everywhere, and the snapshot transaction's
// own LSN, txId and sequence in snapshot records.
func maskValue(s string, snapshot bool) string {
	s = wallClock.ReplaceAllString(s, `"$1":"*"`)
	if snapshot {
		s = snapLSN.ReplaceAllString(s, `"$1":"*"`)
		s = snapSeq.ReplaceAllString(s, `"sequence":"*"`)
	}
	return s
}

// maskOffset masks the snapshot transaction's own position in snapshot
// records, and snapLSN (the side's snapshot LSN, its slot's consistent
// point) where a streamed offset still names it (lsn_proc of the first
// BEGIN).
func maskOffset(m map[string]any, snapshot bool, snapLSN string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if snapshot && (k == "lsn" || k == "txId" || k == "ts_usec" || k == "lsn_proc" || k == "lsn_commit" || k == "xmin") {
			v = "*"
		}
		if (k == "lsn" || k == "lsn_proc" || k == "lsn_commit") && snapLSN != "" && fmt.Sprint(v) == snapLSN {
			v = "snapshot-lsn"
		}
		out[k] = v
	}
	return out
}

// Compare matches connectd's records to Debezium's and returns every
// difference. Snapshot records are matched by table and key whatever
// their order (the table order is one snapshot-order difference);
// streamed records by a longest common subsequence of (table, op, key).
func Compare(w *Workload, got, want []Record) []*Diff {
	diffs := compare(w.Seed, got, want)
	for _, d := range diffs {
		d.W = w
	}
	return diffs
}

func compare(seed int64, got, want []Record) []*Diff {
	var diffs []*Diff
	gs, gt := splitSnapshot(got)
	ws, wt := splitSnapshot(want)
	// snapshot
	if a, b := tableOrder(got[:gs]), tableOrder(want[:ws]); !reflect.DeepEqual(a, b) {
		diffs = append(diffs, &Diff{Seed: seed, Kind: "snapshot-order", Got: strings.Join(a, " "), Want: strings.Join(b, " "), Index: [2]int{-1, -1}})
	}
	gLSN, wLSN := snapshotLSN(got[:gs]), snapshotLSN(want[:ws])
	used := make([]bool, gs)
	for j := 0; j < ws; j++ {
		wm := recordMeta(&want[j])
		sig := wm.signature(&want[j])
		found := -1
		for i := 0; i < gs; i++ {
			if !used[i] && recordMeta(&got[i]).signature(&got[i]) == sig {
				found = i
				break
			}
		}
		if found < 0 {
			diffs = append(diffs, missing(seed, "missing", &want[j], j))
			continue
		}
		used[found] = true
		diffs = append(diffs, comparePair(seed, &got[found], &want[j], found, j, gLSN, wLSN)...)
	}
	for i := 0; i < gs; i++ {
		if !used[i] {
			diffs = append(diffs, missing(seed, "extra", &got[i], i))
		}
	}
	// stream: LCS
	g, w := got[gs:], want[ws:]
	_ = gt
	_ = wt
	gsig := make([]string, len(g))
	wsig := make([]string, len(w))
	for i := range g {
		gsig[i] = recordMeta(&g[i]).signature(&g[i])
	}
	for j := range w {
		wsig[j] = recordMeta(&w[j]).signature(&w[j])
	}
	for _, st := range difftest.Align(gsig, wsig) {
		i, j := st[0], st[1]
		switch {
		case i >= 0 && j >= 0:
			diffs = append(diffs, comparePair(seed, &g[i], &w[j], gs+i, ws+j, gLSN, wLSN)...)
		case i >= 0:
			diffs = append(diffs, missing(seed, "extra", &g[i], gs+i))
		default:
			diffs = append(diffs, missing(seed, "missing", &w[j], ws+j))
		}
	}
	return diffs
}

// splitSnapshot returns the number of leading snapshot records.
func splitSnapshot(rs []Record) (int, int) {
	n := 0
	for n < len(rs) && recordMeta(&rs[n]).snapshot {
		n++
	}
	return n, len(rs) - n
}

func tableOrder(rs []Record) []string {
	var out []string
	for i := range rs {
		t := recordMeta(&rs[i]).table
		if len(out) == 0 || out[len(out)-1] != t {
			out = append(out, t)
		}
	}
	return out
}

func missing(seed int64, kind string, r *Record, idx int) *Diff {
	m := recordMeta(r)
	d := &Diff{Seed: seed, Kind: kind, Table: m.table, Op: m.op, Path: r.Topic, Index: [2]int{-1, -1}}
	if kind == "missing" {
		d.Want, d.want, d.Index[1] = r.Line(), r, idx
	} else {
		d.Got, d.got, d.Index[0] = r.Line(), r, idx
	}
	return d
}

func snapshotLSN(rs []Record) string {
	if len(rs) == 0 {
		return ""
	}
	if v, ok := rs[len(rs)-1].Offset["lsn"]; ok {
		return fmt.Sprint(v)
	}
	return ""
}

func comparePair(seed int64, g, w *Record, gi, wi int, gLSN, wLSN string) []*Diff {
	m := recordMeta(w)
	mk := func(kind, path, got, want string) *Diff {
		return &Diff{Seed: seed, Kind: kind, Path: path, Got: got, Want: want, Table: m.table, Op: m.op, Index: [2]int{gi, wi}, got: g, want: w}
	}
	var out []*Diff
	if g.Topic != w.Topic {
		out = append(out, mk("topic", "topic", g.Topic, w.Topic))
	}
	for _, part := range []struct{ name, a, b string }{{"key", g.Key, w.Key}, {"value", maskValue(g.Value, m.snapshot), maskValue(w.Value, m.snapshot)}} {
		if part.a == part.b {
			continue
		}
		ds := jsonDiff(part.name, decode(part.a), decode(part.b))
		if len(ds) == 0 {
			out = append(out, mk("bytes", part.name, part.a, part.b))
		}
		for _, d := range ds {
			out = append(out, mk(part.name, d[0], d[1], d[2]))
		}
	}
	gh, _ := json.Marshal(maskHeaders(g.Headers))
	wh, _ := json.Marshal(maskHeaders(w.Headers))
	if !bytes.Equal(gh, wh) {
		out = append(out, mk("headers", "headers", string(gh), string(wh)))
	}
	for _, d := range jsonDiff("partition", anyMap(g.Partition), anyMap(w.Partition)) {
		out = append(out, mk("partition", d[0], d[1], d[2]))
	}
	for _, d := range jsonDiff("offset", anyMap(maskOffset(g.Offset, m.snapshot, gLSN)), anyMap(maskOffset(w.Offset, m.snapshot, wLSN))) {
		out = append(out, mk("offset", d[0], d[1], d[2]))
	}
	return out
}

func maskHeaders(hs []Header) []Header { return difftest.MaskHeaders(hs) }

func anyMap(m map[string]any) any { return difftest.AnyMap(m) }

func decode(s string) any { return difftest.Decode(s) }

func jsonText(v any) string { return difftest.JSONText(v) }

func jsonDiff(path string, a, b any) [][3]string { return difftest.JSONDiff(path, a, b) }
