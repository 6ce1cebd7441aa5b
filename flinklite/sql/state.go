package sql

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"

	"github.com/connectd/connectd/flinklite"
	"github.com/connectd/connectd/flinklite/job"
)

// stateTable is one keyed state of an operator in a flinklite
// StateBackend (in memory, or Pebble on disk), with Flink SQL's
// table.exec.state.ttl: with a TTL, each entry carries the time of its
// last write, a read never sees an entry idle for TTL or longer
// (StateVisibility.NeverReturnExpired), and expire removes them
// (UpdateType.OnCreateAndWrite, processing time). Expired state is dropped
// without any output, as Flink's: a later change of its key starts from
// nothing.
type stateTable struct {
	t   flinklite.StateTable
	ttl int64 // ms; 0: no expiry
	now func() int64
	// queue is the writes in time order (the clock is monotonic and the TTL
	// fixed, so expiry order is write order): expire pops its front.
	queue   []expiry
	expired int64
	// shared: a value got from the table and changed in place needs no
	// put (the in-memory backend without TTL keeps the Go value itself).
	shared bool
}

type expiry struct {
	key string
	at  int64
}

// ttlValue is an entry of a table with a TTL.
type ttlValue struct {
	at int64
	v  any
}

func newStateTable(be flinklite.StateBackend, name string, ttl int64, now func() int64, codec flinklite.StateCodec) *stateTable {
	if ttl > 0 {
		inner := codec
		codec = flinklite.StateCodec{
			Encode: func(v any) ([]byte, error) {
				tv := v.(*ttlValue)
				b, err := inner.Encode(tv.v)
				if err != nil {
					return nil, err
				}
				out := strconv.AppendInt([]byte(`{"at":`), tv.at, 10)
				out = append(append(out, `,"v":`...), b...)
				return append(out, '}'), nil
			},
			Decode: func(b []byte) (any, error) {
				var w struct {
					At int64           `json:"at"`
					V  json.RawMessage `json:"v"`
				}
				if err := json.Unmarshal(b, &w); err != nil {
					return nil, err
				}
				v, err := inner.Decode(w.V)
				if err != nil {
					return nil, err
				}
				return &ttlValue{at: w.At, v: v}, nil
			},
		}
	}
	_, mem := be.(*flinklite.MemoryStateBackend)
	return &stateTable{t: be.Table(name, codec), ttl: ttl, now: now, shared: mem && ttl == 0}
}

func (s *stateTable) get(k string) (any, bool) {
	v, ok := s.t.Get(k)
	if !ok || s.ttl == 0 {
		return v, ok
	}
	tv := v.(*ttlValue)
	if s.now()-tv.at >= s.ttl {
		return nil, false
	}
	return tv.v, true
}

func (s *stateTable) put(k string, v any) {
	if s.ttl == 0 {
		s.t.Put(k, v)
		return
	}
	at := s.now()
	s.t.Put(k, &ttlValue{at: at, v: v})
	s.queue = append(s.queue, expiry{k, at})
}

func (s *stateTable) del(k string) { s.t.Delete(k) }

// expire removes the entries not written for TTL or longer.
func (s *stateTable) expire(now int64) {
	if s.ttl == 0 {
		return
	}
	i := 0
	for ; i < len(s.queue) && now-s.queue[i].at >= s.ttl; i++ {
		e := s.queue[i]
		if v, ok := s.t.Get(e.key); ok && v.(*ttlValue).at == e.at {
			s.t.Delete(e.key)
			s.expired++
		}
	}
	if i > 0 {
		s.queue = append(s.queue[:0], s.queue[i:]...)
	}
}

// restored rebuilds the expiry queue from the table's content.
func (s *stateTable) restored() {
	if s.ttl == 0 {
		return
	}
	s.queue = s.queue[:0]
	s.t.Range(func(k string, v any) bool {
		s.queue = append(s.queue, expiry{k, v.(*ttlValue).at})
		return true
	})
	sort.Slice(s.queue, func(a, b int) bool { return s.queue[a].at < s.queue[b].at })
}

// joinCodec encodes a join side's rows of one join key (row id → change)
// as {"id": {"r": [row | null, …], "k": [key, …]}}, rows in Row's
// kind-preserving JSON.
func joinCodec() flinklite.StateCodec {
	type wire struct {
		R []*job.Row `json:"r"`
		K []string   `json:"k"`
	}
	return flinklite.StateCodec{
		Encode: func(v any) ([]byte, error) {
			m := v.(map[string]change)
			w := make(map[string]wire, len(m))
			for id, c := range m {
				x := wire{R: make([]*job.Row, len(c.rows)), K: c.keys}
				for i, r := range c.rows {
					if r != nil {
						x.R[i] = &job.Row{Fields: r}
					}
				}
				w[id] = x
			}
			return json.Marshal(w)
		},
		Decode: func(b []byte) (any, error) {
			var w map[string]wire
			if err := json.Unmarshal(b, &w); err != nil {
				return nil, err
			}
			m := make(map[string]change, len(w))
			for id, x := range w {
				c := change{rows: make([]map[string]any, len(x.R)), keys: x.K}
				for i, r := range x.R {
					if r != nil {
						c.rows[i] = r.Fields
						if c.rows[i] == nil {
							c.rows[i] = map[string]any{}
						}
					}
				}
				m[id] = c
			}
			return m, nil
		},
	}
}

// groupWire is a GROUP BY group in a checkpoint.
type groupWire struct {
	Vals    string            `json:"v"` // job.EncodeValues
	Rows    int64             `json:"n"`
	Accs    []json.RawMessage `json:"a"`
	Emitted *string           `json:"e,omitempty"`
}

// groupCodec encodes an aggregate's groups; decoding recomputes the
// output key.
func (a *aggOp) groupCodec() flinklite.StateCodec {
	return flinklite.StateCodec{
		Encode: func(v any) ([]byte, error) {
			g := v.(*group)
			w := groupWire{Vals: job.EncodeValues(g.vals), Rows: g.rows}
			if g.emitted != nil {
				s := string(g.emitted)
				w.Emitted = &s
			}
			for _, ac := range g.accs {
				b, err := ac.encode()
				if err != nil {
					return nil, err
				}
				w.Accs = append(w.Accs, b)
			}
			return json.Marshal(w)
		},
		Decode: func(b []byte) (any, error) {
			var w groupWire
			if err := json.Unmarshal(b, &w); err != nil {
				return nil, err
			}
			vals, err := job.DecodeValues(w.Vals)
			if err != nil {
				return nil, err
			}
			if len(vals) != len(a.n.groups) || len(w.Accs) != len(a.n.aggs) {
				return nil, fmt.Errorf("a group of %d keys and %d aggregates, the query has %d and %d", len(vals), len(w.Accs), len(a.n.groups), len(a.n.aggs))
			}
			if len(vals) == 0 {
				vals = nil
			}
			g := a.newGroup(vals)
			g.rows = w.Rows
			if w.Emitted != nil {
				g.emitted = []byte(*w.Emitted)
			}
			for i, raw := range w.Accs {
				if err := g.accs[i].decode(raw); err != nil {
					return nil, fmt.Errorf("%s: %w", a.n.aggs[i].text, err)
				}
			}
			return g, nil
		},
	}
}

func encodeValue(v any) (json.RawMessage, error) { return job.AppendValue(nil, v) }

func decodeValue(b json.RawMessage) (any, error) {
	vals, err := job.DecodeValues("[" + string(b) + "]")
	if err != nil {
		return nil, err
	}
	if len(vals) != 1 {
		return nil, fmt.Errorf("bad value %s", b)
	}
	return vals[0], nil
}

func (c *countAcc) encode() (json.RawMessage, error) { return json.Marshal(c.n) }
func (c *countAcc) decode(b json.RawMessage) error   { return json.Unmarshal(b, &c.n) }

// multisetWire is a multiset of values: [[value, count], …].
type multisetWire [][2]json.RawMessage

func encodeMultiset(n int, each func(func(v any, count int64))) (json.RawMessage, error) {
	w := make(multisetWire, 0, n)
	var err error
	each(func(v any, count int64) {
		if err != nil {
			return
		}
		var vb json.RawMessage
		if vb, err = encodeValue(v); err == nil {
			w = append(w, [2]json.RawMessage{vb, json.RawMessage(strconv.FormatInt(count, 10))})
		}
	})
	if err != nil {
		return nil, err
	}
	// equal state, equal bytes
	sort.Slice(w, func(i, j int) bool { return string(w[i][0]) < string(w[j][0]) })
	return json.Marshal(w)
}

func decodeMultiset(b json.RawMessage, add func(v any, count int64)) error {
	var w multisetWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	for _, e := range w {
		v, err := decodeValue(e[0])
		if err != nil {
			return err
		}
		n, err := strconv.ParseInt(string(e[1]), 10, 64)
		if err != nil {
			return err
		}
		add(v, n)
	}
	return nil
}

// The keys of a COUNT(DISTINCT) multiset are appendKey's encodings of
// the values (valid UTF-8: strings come from JSON), kept as they are.
func (d *distinctAcc) encode() (json.RawMessage, error) { return json.Marshal(d.values) }
func (d *distinctAcc) decode(b json.RawMessage) error   { return json.Unmarshal(b, &d.values) }

type sumWire struct {
	Sum    json.RawMessage `json:"sum,omitempty"`
	N      int64           `json:"n"`
	Fast   int64           `json:"fast"`
	Scale  int32           `json:"scale"`
	InFast bool            `json:"in_fast"`
}

func (s *sumAcc) encode() (json.RawMessage, error) {
	w := sumWire{N: s.n, Fast: s.fast, Scale: s.scale, InFast: s.inFast}
	if s.sum != nil {
		var err error
		if w.Sum, err = encodeValue(s.sum); err != nil {
			return nil, err
		}
	}
	return json.Marshal(w)
}

func (s *sumAcc) decode(b json.RawMessage) error {
	var w sumWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	s.n, s.fast, s.scale, s.inFast, s.sum = w.N, w.Fast, w.Scale, w.InFast, nil
	if len(w.Sum) > 0 && string(w.Sum) != "null" {
		v, err := decodeValue(w.Sum)
		if err != nil {
			return err
		}
		s.sum = v
	}
	return nil
}

func (e *extremumAcc) encode() (json.RawMessage, error) {
	return encodeMultiset(e.live, func(f func(any, int64)) {
		for _, c := range e.values {
			if c.n > 0 {
				f(c.v, c.n)
			}
		}
	})
}

func (e *extremumAcc) decode(b json.RawMessage) error {
	e.best, e.live = nil, 0
	return decodeMultiset(b, func(v any, n int64) {
		c := newCounted(v)
		c.n = n
		e.values[string(appendKey(nil, v))] = c
		e.live++
	})
}
