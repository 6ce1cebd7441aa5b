package sql

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strings"
	"time"

	"github.com/connectd/connectd/flinklite"
	"github.com/connectd/connectd/flinklite/job"
)

// change is one element of a changelog between operators: a row (one map
// per FROM slot, nil for slots the row does not carry or a LEFT JOIN
// extends with NULLs), each slot's record key (JSON; "" for none) and
// whether it is a retraction.
type change struct {
	rows    []map[string]any
	keys    []string
	retract bool
}

type operator interface{ push(c change) error }

// Output is one result change: the upsert topic's key and value (nil: a
// tombstone, the result row was deleted).
type Output struct {
	Key, Value []byte
}

// Pipeline is a query's operators and their state (in a flinklite
// StateBackend). It is not safe for concurrent use.
type Pipeline struct {
	q       *Query
	st      *pipelineState
	tables  []*stateTable
	entries map[int][]operator // slot → its first operator
	sink    *upsertSink
	global  *aggOp // an aggregate without GROUP BY: its row exists from the start
	agg     *aggOp
	rank    *rankOp
	// reuse are per-slot change buffers when no operator keeps a change
	// (no join).
	reuse []change
	// subs are the branches of a UNION ALL.
	subs []*Pipeline
	// joins numbers the joins while building.
	joins int
}

// pipelineState is where a pipeline's operators keep their state: the
// backend, the TTL of idle state (ms, 0: none) and the processing-time
// clock (ms).
type pipelineState struct {
	be  flinklite.StateBackend
	ttl int64
	now func() int64
}

// NewPipeline builds q's operators with their state in memory and no TTL.
func (q *Query) NewPipeline() *Pipeline {
	return q.newPipeline(&pipelineState{be: flinklite.NewMemoryStateBackend(), now: func() int64 { return time.Now().UnixMilli() }}, "")
}

// newPipeline builds q's operators; prefix names its state tables.
func (q *Query) newPipeline(st *pipelineState, prefix string) *Pipeline {
	p := &Pipeline{q: q, st: st, entries: map[int][]operator{}, sink: &upsertSink{pending: map[string]int{}}}
	if q.branches != nil {
		for i, b := range q.branches {
			sub := b.newPipeline(st, fmt.Sprintf("%su%d.", prefix, i))
			p.subs = append(p.subs, sub)
			p.tables = append(p.tables, sub.tables...)
		}
		return p
	}
	var root operator
	switch q.plan.kind {
	case "project":
		root = &projectOp{q: q, outs: q.plan.outs, slots: q.plan.slots, sink: p.sink}
	case "aggregate":
		a := &aggOp{q: q, n: q.plan, sink: p.sink, dirty: map[string]*group{}}
		a.groups = newStateTable(st.be, prefix+"groups", st.ttl, st.now, a.groupCodec())
		p.tables = append(p.tables, a.groups)
		p.agg = a
		if len(q.plan.groups) == 0 {
			p.global = a
		}
		root = a
	case "rank":
		r := &rankOp{q: q, r: q.plan.rank, sink: p.sink, slots: q.plan.slots, dirty: map[string]*partition{}}
		r.parts = newStateTable(st.be, prefix+"rank", st.ttl, st.now, r.partitionCodec())
		p.tables = append(p.tables, r.parts)
		p.rank = r
		root = r
	}
	p.build(q.plan.in, root, prefix)
	if !hasJoin(q.plan) {
		p.reuse = make([]change, len(q.slots))
		for i := range p.reuse {
			p.reuse[i] = change{rows: make([]map[string]any, len(q.slots)), keys: make([]string, len(q.slots))}
		}
	}
	return p
}

func hasJoin(n *planNode) bool {
	if n == nil {
		return false
	}
	return n.kind == "join" || hasJoin(n.in) || hasJoin(n.left) || hasJoin(n.right)
}

func (p *Pipeline) build(n *planNode, out operator, prefix string) {
	switch n.kind {
	case "scan":
		p.entries[n.slot] = append(p.entries[n.slot], out)
	case "filter":
		p.build(n.in, &filterOp{q: p.q, pred: n.pred, out: out}, prefix)
	case "join":
		// tables named by the join's position: join0 is the outermost
		name := fmt.Sprintf("%sjoin%d.", prefix, p.joins)
		p.joins++
		j := &joinOp{q: p.q, n: n, out: out,
			lstate: newStateTable(p.st.be, name+"left", p.st.ttl, p.st.now, joinCodec()),
			rstate: newStateTable(p.st.be, name+"right", p.st.ttl, p.st.now, joinCodec())}
		p.tables = append(p.tables, j.lstate, j.rstate)
		p.build(n.left, joinSide{j, true}, prefix)
		p.build(n.right, joinSide{j, false}, prefix)
	}
}

// expire removes the state idle for the TTL or longer.
func (p *Pipeline) expire(now int64) {
	for _, t := range p.tables {
		t.expire(now)
	}
}

// restored rebuilds what is derived from the state after a restore.
func (p *Pipeline) restored() {
	for _, t := range p.tables {
		t.restored()
	}
}

// stateSize is the number of state entries (join keys and groups).
func (p *Pipeline) stateSize() int {
	n := 0
	for _, t := range p.tables {
		n += t.t.Len()
	}
	return n
}

// expired counts the entries the TTL removed.
func (p *Pipeline) expired() int64 {
	var n int64
	for _, t := range p.tables {
		n += t.expired
	}
	return n
}

// Start emits the rows a query has before any input: the one row of an
// aggregate without GROUP BY (COUNT 0, SUM NULL).
func (p *Pipeline) Start() error {
	for _, s := range p.subs {
		if err := s.Start(); err != nil {
			return err
		}
	}
	if p.global != nil {
		return p.global.touch("", nil)
	}
	return nil
}

// Push applies one change of a source topic: the row (column → value)
// of the record key keyJSON, inserted or retracted.
func (p *Pipeline) Push(topic, keyJSON string, row map[string]any, retract bool) error {
	for _, s := range p.subs {
		if err := s.Push(topic, keyJSON, row, retract); err != nil {
			return err
		}
	}
	if p.subs != nil {
		return nil
	}
	for i, s := range p.q.slots {
		if s.topic != topic {
			continue
		}
		var c change
		if p.reuse != nil { // no join keeps the change: one buffer per slot
			c = p.reuse[i]
			c.retract = retract
		} else {
			c = change{rows: make([]map[string]any, len(p.q.slots)), keys: make([]string, len(p.q.slots)), retract: retract}
		}
		c.rows[i], c.keys[i] = row, keyJSON
		for _, op := range p.entries[i] {
			if err := op.push(c); err != nil {
				return err
			}
		}
	}
	return nil
}

// Drain returns the result changes since the last Drain: the last change
// of each key, in the order the keys first changed. The groups of an
// aggregate are computed here, once per batch however many of their rows
// changed; an error is one of evaluating them (HAVING, the SELECT list).
func (p *Pipeline) Drain() ([]Output, error) {
	if p.subs != nil {
		var all []Output
		for i, s := range p.subs {
			outs, err := s.Drain()
			if err != nil {
				return nil, err
			}
			for _, o := range outs {
				k := fmt.Appendf(nil, `{"union":%d,"key":`, i)
				o.Key = append(append(k, o.Key...), '}')
				all = append(all, o)
			}
		}
		return all, nil
	}
	if p.agg != nil {
		if err := p.agg.flush(); err != nil {
			return nil, err
		}
	}
	if p.rank != nil {
		if err := p.rank.flush(); err != nil {
			return nil, err
		}
	}
	return p.sink.drain(), nil
}

func (q *Query) ctx(c change) *evalCtx { return &evalCtx{rows: c.rows, slots: q.slots} }

// reuse resets an operator's evaluation context for c's row (operators
// run on one goroutine; a context does not outlive the call).
func (x *evalCtx) reuse(q *Query, c change) *evalCtx {
	x.rows, x.slots, x.vals, x.err = c.rows, q.slots, x.vals[:0], nil
	return x
}

// names are the JSON object prefixes ("name":) of the result's columns
// and of its key's.
func namePrefixes(names []string) [][]byte {
	out := make([][]byte, len(names))
	for i, n := range names {
		out[i] = append(appendJSONString(nil, n), ':')
	}
	return out
}

type filterOp struct {
	q    *Query
	pred *expr
	out  operator
	x    evalCtx
}

func (f *filterOp) push(c change) error {
	x := f.x.reuse(f.q, c)
	v := f.pred.eval(x)
	if x.err != nil {
		return fmt.Errorf("WHERE %s: %w", f.pred.text, x.err)
	}
	b, ok := v.(bool)
	if v != nil && !ok {
		return fmt.Errorf("WHERE %s: %v is not a boolean", f.pred.text, v)
	}
	if !b {
		return nil
	}
	return f.out.push(c)
}

// joinOp is a regular join with retractions: each side's rows by join key
// (a row of a side is identified by its slots' record keys).
type joinOp struct {
	q              *Query
	n              *planNode
	out            operator
	lstate, rstate *stateTable // join key → row id → row
	x              evalCtx
	kb             []byte
}

type joinSide struct {
	j    *joinOp
	left bool
}

func (s joinSide) push(c change) error { return s.j.push(c, s.left) }

func (j *joinOp) joinKey(c change, keys []*expr) (string, bool, error) {
	x := j.x.reuse(j.q, c)
	b := j.kb[:0]
	defer func() { j.kb = b[:0] }()
	for _, k := range keys {
		v := k.eval(x)
		if x.err != nil {
			return "", false, fmt.Errorf("join key %s: %w", k.text, x.err)
		}
		if v == nil {
			return "", false, nil // NULL = anything is not true
		}
		b = appendKey(b, v)
	}
	return string(b), true, nil
}

func rowID(c change, slots []int) string {
	var b strings.Builder
	for _, s := range slots {
		b.WriteString(c.keys[s])
		b.WriteByte(0)
	}
	return b.String()
}

func merge(l, r change, retract bool) change {
	out := change{rows: make([]map[string]any, len(l.rows)), keys: make([]string, len(l.keys)), retract: retract}
	for i := range l.rows {
		if l.rows[i] != nil || l.keys[i] != "" {
			out.rows[i], out.keys[i] = l.rows[i], l.keys[i]
		} else {
			out.rows[i], out.keys[i] = r.rows[i], r.keys[i]
		}
	}
	return out
}

// rows are the rows of a join side under join key jk.
func (s *stateTable) rows(jk string) map[string]change {
	v, ok := s.get(jk)
	if !ok {
		return nil
	}
	return v.(map[string]change)
}

// update inserts or retracts row id of c under join key jk and returns
// how many rows the key has then.
func (s *stateTable) update(jk, id string, c change) int {
	m := s.rows(jk)
	if c.retract {
		if m == nil {
			return 0
		}
		delete(m, id)
		if len(m) == 0 {
			s.del(jk)
			return 0
		}
		if !s.shared {
			s.put(jk, m)
		}
		return len(m)
	}
	if m == nil {
		m = map[string]change{}
		m[id] = change{rows: c.rows, keys: c.keys}
		s.put(jk, m)
		return 1
	}
	m[id] = change{rows: c.rows, keys: c.keys}
	if !s.shared {
		s.put(jk, m)
	}
	return len(m)
}

func (j *joinOp) push(c change, left bool) error {
	keys, slots := j.n.rkeys, j.n.right.slots
	if left {
		keys, slots = j.n.lkeys, j.n.left.slots
	}
	jk, ok, err := j.joinKey(c, keys)
	if err != nil {
		return err
	}
	id := rowID(c, slots)
	if left {
		if ok {
			j.lstate.update(jk, id, c)
		}
		var matches map[string]change
		if ok {
			matches = j.rstate.rows(jk)
		}
		if len(matches) == 0 {
			if j.n.leftJoin {
				return j.out.push(c) // NULL-extended
			}
			return nil
		}
		for _, r := range matches {
			if err := j.out.push(merge(c, r, c.retract)); err != nil {
				return err
			}
		}
		return nil
	}
	if !ok {
		return nil // a NULL join key matches no left row
	}
	before := len(j.rstate.rows(jk))
	after := j.rstate.update(jk, id, c)
	for _, l := range j.lstate.rows(jk) {
		if c.retract {
			if err := j.out.push(merge(l, c, true)); err != nil {
				return err
			}
			if j.n.leftJoin && before > 0 && after == 0 {
				if err := j.out.push(change{rows: l.rows, keys: l.keys}); err != nil {
					return err
				}
			}
			continue
		}
		if j.n.leftJoin && before == 0 && after > 0 {
			if err := j.out.push(change{rows: l.rows, keys: l.keys, retract: true}); err != nil {
				return err
			}
		}
		if err := j.out.push(merge(l, c, false)); err != nil {
			return err
		}
	}
	return nil
}

// projectOp computes the SELECT list of a query without GROUP BY; the
// result's key is its sources' record keys.
type projectOp struct {
	q     *Query
	outs  []*expr
	slots []int
	sink  *upsertSink
	x     evalCtx
	names [][]byte
}

func (p *projectOp) key(c change) []byte { return sourceKey(p.q.slots, p.slots, c) }

func (p *projectOp) push(c change) error {
	key := p.key(c)
	if c.retract {
		p.sink.put(key, nil)
		return nil
	}
	if p.names == nil {
		p.names = namePrefixes(p.q.Columns)
	}
	v, err := row(p.x.reuse(p.q, c), p.outs, p.names)
	if err != nil {
		return err
	}
	p.sink.put(key, v)
	return nil
}

// row is the JSON object of the SELECT list (names: namePrefixes).
func row(x *evalCtx, outs []*expr, names [][]byte) ([]byte, error) {
	b := make([]byte, 1, 16*len(outs))
	b[0] = '{'
	for i, e := range outs {
		v := e.eval(x)
		if x.err != nil {
			return nil, fmt.Errorf("%s: %w", e.text, x.err)
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, names[i]...)
		var err error
		if b, err = appendJSON(b, v); err != nil {
			return nil, fmt.Errorf("%s: %w", e.text, err)
		}
	}
	return append(b, '}'), nil
}

// group is one GROUP BY group: its key values, row count, accumulators and
// the value last written for it (nil: none).
type group struct {
	key     []byte // the output key (JSON)
	vals    []any
	rows    int64
	accs    []acc
	emitted []byte
	// tk is the group's state key, pending whether it changed since the
	// last flush (neither is state).
	tk      string
	pending bool
}

type aggOp struct {
	q      *Query
	n      *planNode
	groups *stateTable // group key → *group
	sink   *upsertSink
	x      evalCtx
	kb     []byte
	vals   []any
	names  [][]byte // result columns
	knames [][]byte // key columns
	// dirty are the groups changed since the last flush (Flink's
	// mini-batch bundle), in the order they first changed: flush writes
	// their results and stores them.
	// With the in-memory backend without TTL the table's value is the
	// group itself and dirty is unused.
	dirty map[string]*group
	pend  []*group
}

func (a *aggOp) push(c change) error {
	x := a.x.reuse(a.q, c)
	a.vals = a.vals[:0]
	kb := a.kb[:0]
	for _, g := range a.n.groups {
		v := g.eval(x)
		if x.err != nil {
			return fmt.Errorf("GROUP BY %s: %w", g.text, x.err)
		}
		a.vals = append(a.vals, v)
		kb = appendKey(kb, v)
	}
	a.kb = kb
	var g *group
	if !a.groups.shared {
		g = a.dirty[string(kb)]
	}
	if g == nil {
		if v, ok := a.groups.get(string(kb)); ok {
			g = v.(*group)
		} else {
			if c.retract {
				if a.groups.ttl > 0 {
					// the group's state expired: Flink ignores the
					// retraction (no accumulator is created for it)
					return nil
				}
				return fmt.Errorf("retraction of a row of group %v that has no rows", a.vals)
			}
			g = a.newGroup(append([]any(nil), a.vals...))
			g.tk = string(kb)
			if a.groups.shared {
				a.groups.put(g.tk, g)
			}
		}
	}
	if !g.pending {
		if g.tk == "" {
			g.tk = string(kb)
		}
		g.pending = true
		a.pend = append(a.pend, g)
		if !a.groups.shared {
			a.dirty[g.tk] = g
		}
	}
	for i, s := range a.n.aggs {
		var v any = int64(1)
		if !s.star {
			v = s.arg.eval(x)
			if x.err != nil {
				return fmt.Errorf("%s: %w", s.text, x.err)
			}
		}
		if err := g.accs[i].update(v, c.retract); err != nil {
			return fmt.Errorf("%s: %w", s.text, err)
		}
	}
	if c.retract {
		g.rows--
	} else {
		g.rows++
	}
	return nil
}

// flush writes the results of the groups changed since the last flush
// and stores them.
func (a *aggOp) flush() error {
	for _, g := range a.pend {
		g.pending = false
		if err := a.touch(g.tk, g); err != nil {
			return err
		}
	}
	clear(a.dirty)
	clear(a.pend)
	a.pend = a.pend[:0]
	return nil
}

func (a *aggOp) newGroup(vals []any) *group {
	if a.names == nil {
		a.names, a.knames = namePrefixes(a.q.Columns), namePrefixes(a.q.KeyColumns)
	}
	g := &group{vals: vals, accs: make([]acc, len(a.n.aggs))}
	g.key = a.key(g)
	for i, s := range a.n.aggs {
		g.accs[i] = newAcc(s.fn)
	}
	return g
}

// touch writes group k's new result (or its deletion) when it changed,
// and stores the group (nil: the group of a query without GROUP BY, made
// if it does not exist).
func (a *aggOp) touch(k string, g *group) error {
	if g == nil {
		if v, ok := a.groups.get(k); ok {
			g = v.(*group)
		} else {
			g = a.newGroup(nil)
		}
	}
	key := g.key
	if g.rows == 0 && len(a.n.groups) > 0 {
		a.groups.del(k)
		if g.emitted != nil {
			a.sink.put(key, nil)
		}
		return nil
	}
	defer a.groups.put(k, g)
	x := &a.x
	x.rows, x.slots, x.err = nil, a.q.slots, nil
	x.vals = append(x.vals[:0], g.vals...)
	for _, ac := range g.accs {
		x.vals = append(x.vals, ac.result())
	}
	if h := a.n.having; h != nil {
		v := h.eval(x)
		if x.err != nil {
			return fmt.Errorf("HAVING %s: %w", h.text, x.err)
		}
		if b, _ := v.(bool); !b {
			if g.emitted != nil {
				a.sink.put(key, nil)
				g.emitted = nil
			}
			return nil
		}
	}
	v, err := row(x, a.n.outs, a.names)
	if err != nil {
		return err
	}
	if g.emitted == nil || string(g.emitted) != string(v) {
		a.sink.put(key, v)
		g.emitted = v
	}
	return nil
}

func (a *aggOp) key(g *group) []byte {
	b := []byte{'{'}
	for i, v := range g.vals {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, a.knames[i]...)
		b, _ = appendJSON(b, v)
	}
	return append(b, '}')
}

// acc is an aggregate's accumulator under insertions and retractions.
type acc interface {
	update(v any, retract bool) error
	result() any
	// encode and decode are the accumulator's state in checkpoints.
	encode() (json.RawMessage, error)
	decode(json.RawMessage) error
}

func newAcc(fn string) acc {
	switch fn {
	case "count":
		return &countAcc{}
	case "count_distinct":
		return &distinctAcc{values: map[string]int64{}}
	case "sum":
		return &sumAcc{}
	case "avg":
		return &sumAcc{avg: true}
	case "min":
		return &extremumAcc{sign: -1, values: map[string]*counted{}}
	case "max":
		return &extremumAcc{sign: 1, values: map[string]*counted{}}
	}
	panic("aggregate " + fn)
}

// countAcc counts the non-NULL values.
type countAcc struct{ n int64 }

func (c *countAcc) update(v any, retract bool) error {
	if v == nil {
		return nil
	}
	if retract {
		c.n--
	} else {
		c.n++
	}
	return nil
}
func (c *countAcc) result() any { return c.n }

// distinctAcc is COUNT(DISTINCT x): a multiset of the non-NULL values.
type distinctAcc struct{ values map[string]int64 }

func (d *distinctAcc) update(v any, retract bool) error {
	if v == nil {
		return nil
	}
	var buf [32]byte
	kb := appendKey(buf[:0], v)
	if retract {
		n, ok := d.values[string(kb)]
		if !ok {
			return fmt.Errorf("retraction of %v, which is not in the group", v)
		}
		if n == 1 {
			delete(d.values, string(kb))
		} else {
			d.values[string(kb)] = n - 1
		}
		return nil
	}
	d.values[string(kb)]++
	return nil
}

func (d *distinctAcc) result() any { return int64(len(d.values)) }

// sumAcc is SUM (or AVG) of the non-NULL values: NULL when there are none.
// While every value is an int64, or a Decimal of one scale whose unscaled
// value fits an int64, the sum is an int64 (unscaled) without big.Int
// arithmetic; the first other value or overflow moves it to sum.
type sumAcc struct {
	sum any
	n   int64
	avg bool
	// fast is the sum while small: of int64s (scale -1) or of Decimals
	// of scale.
	fast   int64
	scale  int32
	inFast bool
}

func (s *sumAcc) update(v any, retract bool) error {
	if v == nil {
		return nil
	}
	if !job.IsNumber(v) {
		return fmt.Errorf("%v (%T) is not a number", v, v)
	}
	if s.n == 0 && s.sum == nil {
		s.inFast, s.fast, s.scale = true, 0, -1
		if d, ok := v.(job.Decimal); ok {
			s.scale = d.Scale
		}
	}
	if s.inFast {
		var u int64
		ok := false
		switch x := v.(type) {
		case int64:
			u, ok = x, s.scale == -1
		case job.Decimal:
			ok = x.Scale == s.scale && x.Unscaled.IsInt64()
			if ok {
				u = x.Unscaled.Int64()
			}
		}
		if retract {
			u = -u
		}
		if ok && u != math.MinInt64 {
			if r := s.fast + u; (r > s.fast) == (u > 0) || u == 0 {
				s.fast = r
				if retract {
					s.n--
				} else {
					s.n++
				}
				if s.n == 0 {
					s.fast = 0
				}
				return nil
			}
		}
		s.sum, s.inFast = s.fastValue(), false
	}
	if retract {
		s.sum = job.AddNumbers(s.sum, job.NegNumber(v))
		s.n--
	} else {
		s.sum = job.AddNumbers(s.sum, v)
		s.n++
	}
	if s.n == 0 {
		s.sum = nil
	}
	return nil
}

func (s *sumAcc) fastValue() any {
	if s.scale == -1 {
		return s.fast
	}
	return job.Decimal{Unscaled: big.NewInt(s.fast), Scale: s.scale}
}

func (s *sumAcc) result() any {
	if s.n == 0 {
		return nil
	}
	sum := s.sum
	if s.inFast {
		sum = s.fastValue()
	}
	if s.avg {
		return job.AvgNumbers(sum, s.n)
	}
	return sum
}

// extremumAcc is MIN or MAX over a multiset of the non-NULL values, so
// that retracting the extremum falls back to the next value. An entry
// whose count drops to 0 stays (dead) until the dead ones outnumber the
// live ones, so a value retracted and inserted again (an update) costs no
// allocation; values that are int64s, or Decimals of one scale with an
// int64 unscaled value, compare as int64s.
type extremumAcc struct {
	sign   int // -1 MIN, 1 MAX
	values map[string]*counted
	live   int      // entries with n > 0
	best   *counted // nil: recompute
}

type counted struct {
	v any
	n int64
	// fast: v is u at scale sc (intScale: an int64)
	u    int64
	sc   int32
	fast bool
}

// intScale marks the int64 form of an int64 (no Decimal has this scale in
// practice; one that has compares the slow way).
const intScale = math.MinInt32

func newCounted(v any) *counted {
	c := countedOf(v)
	return &c
}

// countedOf is v with its int64 form (a nil v has none).
func countedOf(v any) counted {
	c := counted{v: v}
	switch x := v.(type) {
	case int64:
		c.u, c.sc, c.fast = x, intScale, true
	case job.Decimal:
		if x.Unscaled.IsInt64() && x.Scale != intScale {
			c.u, c.sc, c.fast = x.Unscaled.Int64(), x.Scale, true
		}
	}
	return c
}

// cmp orders a and b: the int64 form when both have one of one scale.
func (a *counted) cmp(b *counted) (int, bool) {
	if a.fast && b.fast && a.sc == b.sc {
		switch {
		case a.u < b.u:
			return -1, true
		case a.u > b.u:
			return 1, true
		}
		return 0, true
	}
	return job.Compare(a.v, b.v)
}

func (e *extremumAcc) update(v any, retract bool) error {
	if v == nil {
		return nil
	}
	var buf [32]byte
	kb := appendKey(buf[:0], v)
	c := e.values[string(kb)] // no allocation for a lookup
	if retract {
		if c == nil || c.n == 0 {
			return fmt.Errorf("retraction of %v, which is not in the group", v)
		}
		if c.n--; c.n == 0 {
			e.live--
			if e.best == c {
				e.best = nil
			}
			if dead := len(e.values) - e.live; dead > 8 && dead > e.live {
				for k, x := range e.values {
					if x.n == 0 {
						delete(e.values, k)
					}
				}
			}
		}
		return nil
	}
	if c == nil {
		c = newCounted(v)
		e.values[string(kb)] = c
	}
	if c.n == 0 {
		e.live++
		if e.best != nil {
			n, ok := c.cmp(e.best)
			if !ok {
				return fmt.Errorf("cannot compare %v (%T) with %v (%T)", v, v, e.best.v, e.best.v)
			}
			if n*e.sign > 0 {
				e.best = c
			}
		} else if e.live == 1 {
			e.best = c
		}
	}
	c.n++
	return nil
}

func (e *extremumAcc) result() any {
	if e.live == 0 {
		return nil
	}
	if e.best == nil {
		for _, c := range e.values {
			if c.n == 0 {
				continue
			}
			if e.best == nil {
				e.best = c
				continue
			}
			if n, ok := c.cmp(e.best); ok && n*e.sign > 0 {
				e.best = c
			}
		}
	}
	return e.best.v
}

// upsertSink collects the result changes of a batch: the last value of
// each key.
type upsertSink struct {
	pending map[string]int
	out     []Output
}

func (s *upsertSink) put(key, value []byte) {
	if i, ok := s.pending[string(key)]; ok {
		s.out[i].Value = value
		return
	}
	s.pending[string(key)] = len(s.out)
	s.out = append(s.out, Output{Key: key, Value: value})
}

func (s *upsertSink) drain() []Output {
	out := s.out
	s.out = nil
	clear(s.pending)
	return out
}
