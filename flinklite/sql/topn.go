package sql

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/opcode"

	"github.com/connectd/connectd/flinklite"
	"github.com/connectd/connectd/flinklite/job"
)

// rankSpec is a Top-N (Flink's Rank with ROW_NUMBER):
//
//	SELECT outs FROM (SELECT derived…, ROW_NUMBER() OVER (PARTITION BY part ORDER BY order) AS rn FROM … WHERE …) x
//	WHERE rn <= n AND preds
type rankSpec struct {
	part  []*expr // PARTITION BY, in the subquery's scope
	order []*expr // ORDER BY, in the subquery's scope
	desc  []bool
	n     int64 // rows kept per partition
	// derived are the subquery's other SELECT expressions, named
	// derivedNames (lowercase: the outer query's column lookup).
	derived      []*expr
	derivedNames []string
	rnName       string // the ROW_NUMBER alias as written
	// preds and outs are the outer WHERE (without the rank condition)
	// and SELECT list, over the subquery's row (outerSlots[0]).
	preds      []*expr
	outs       []*expr
	outerSlots []slot
	// rnOut: the outer SELECT uses rn, so the result's key is the
	// partition key and rn; else it is the source rows' record keys.
	rnOut bool
	// cond is the rank condition as written (EXPLAIN).
	cond string
}

// topNSource is the subquery of a Top-N outer SELECT, or nil.
func topNSource(s *ast.SelectStmt) (*ast.TableSource, *ast.SelectStmt) {
	if s.From == nil || s.From.TableRefs == nil || s.From.TableRefs.Right != nil {
		return nil, nil
	}
	ts, ok := s.From.TableRefs.Left.(*ast.TableSource)
	if !ok {
		return nil, nil
	}
	inner, ok := ts.Source.(*ast.SelectStmt)
	if !ok {
		return nil, nil
	}
	return ts, inner
}

// colRefs collects the column references of a node.
type colRefs struct{ cols []*ast.ColumnNameExpr }

func (v *colRefs) Enter(n ast.Node) (ast.Node, bool) {
	if c, ok := n.(*ast.ColumnNameExpr); ok {
		v.cols = append(v.cols, c)
	}
	return n, false
}
func (v *colRefs) Leave(n ast.Node) (ast.Node, bool) { return n, true }

func columnsOf(n ast.Node) []*ast.ColumnNameExpr {
	v := &colRefs{}
	n.Accept(v)
	return v.cols
}

// conjuncts splits a WHERE on its top-level ANDs.
func conjuncts(n ast.ExprNode) []ast.ExprNode {
	if p, ok := n.(*ast.ParenthesesExpr); ok {
		return conjuncts(p.Expr)
	}
	if b, ok := n.(*ast.BinaryOperationExpr); ok && b.Op == opcode.LogicAnd {
		return append(conjuncts(b.L), conjuncts(b.R)...)
	}
	return []ast.ExprNode{n}
}

// topN plans SELECT … FROM (SELECT …, ROW_NUMBER() OVER (…) AS rn FROM …) x WHERE rn <= N [AND …].
func (c *compiler) topN(q *Query, s *ast.SelectStmt, ts *ast.TableSource, inner *ast.SelectStmt) error {
	pos := s.OriginTextPosition()
	ipos := inner.OriginTextPosition()
	if ipos == 0 && len(inner.Fields.Fields) > 0 && inner.Fields.Fields[0].Expr != nil {
		ipos = inner.Fields.Fields[0].Expr.OriginTextPosition() // a subquery has no position of its own
	}
	const shape = "SELECT … FROM (SELECT …, ROW_NUMBER() OVER (PARTITION BY … ORDER BY …) AS rn FROM … [WHERE …]) [AS] x WHERE rn <= N [AND …]"
	switch {
	case s.GroupBy != nil || s.Having != nil:
		return c.errAt(pos, "unsupported: GROUP BY or HAVING over a subquery (a subquery in FROM is supported only as Top-N: %s)", shape)
	case inner.With != nil:
		return c.errAt(ipos, "unsupported: WITH (common table expressions)")
	case inner.Distinct:
		return c.errAt(ipos, "unsupported: SELECT DISTINCT")
	case inner.OrderBy != nil:
		return c.errAt(offsetOf(inner.OrderBy.Items[0].Expr, ipos), "unsupported: ORDER BY (a streaming result has no order)")
	case inner.Limit != nil:
		return c.errAt(ipos, "unsupported: LIMIT")
	case len(inner.WindowSpecs) > 0:
		return c.errAt(ipos, "unsupported: WINDOW clause (write the window in OVER (…))")
	case inner.GroupBy != nil || inner.Having != nil:
		return c.errAt(ipos, "unsupported: Top-N over a GROUP BY (the subquery must be a projection of its FROM)")
	case inner.Kind != ast.SelectStmtKindSelect || inner.From == nil:
		return c.errAt(ipos, "unsupported: a subquery without FROM")
	case inner.LockInfo != nil && inner.LockInfo.LockType != ast.SelectLockNone, inner.SelectIntoOpt != nil:
		return c.errAt(ipos, "unsupported: FOR UPDATE/SHARE or SELECT INTO")
	}
	for _, f := range s.Fields.Fields {
		if f.Expr != nil && containsAgg(f.Expr) {
			return c.errAt(offsetOf(f.Expr, pos), "unsupported: aggregates over a Top-N subquery")
		}
	}
	// The subquery's FROM and WHERE are planned as a query's.
	ic := &compiler{src: c.src, tables: c.tables}
	from, err := ic.from(inner.From.TableRefs, ipos)
	if err != nil {
		return err
	}
	node := from
	if inner.Where != nil {
		pred, err := ic.expr(inner.Where, rowScope{c: ic})
		if err != nil {
			return err
		}
		node = &planNode{kind: "filter", in: node, pred: pred, slots: node.slots}
	}
	// Its SELECT list: one ROW_NUMBER() OVER (…) AS rn and other
	// expressions.
	var win *ast.WindowFuncExpr
	var rnField *ast.SelectField
	var fields []*ast.SelectField
	for _, f := range inner.Fields.Fields {
		if w, ok := f.Expr.(*ast.WindowFuncExpr); ok {
			if win != nil {
				return c.errAt(offsetOf(f.Expr, ipos), "unsupported: more than one window function in a Top-N subquery")
			}
			win, rnField = w, f
			continue
		}
		fields = append(fields, f)
	}
	if win == nil {
		return c.errAt(ipos, "unsupported: a subquery in FROM other than Top-N (%s)", shape)
	}
	wpos := win.OriginTextPosition()
	switch name := strings.ToUpper(win.Name); {
	case name == "RANK" || name == "DENSE_RANK":
		return c.errAt(wpos, "unsupported: %s (only ROW_NUMBER: Top-N with ties is not supported)", name)
	case name != "ROW_NUMBER":
		return c.errAt(wpos, "unsupported: window function %s (only ROW_NUMBER, as Top-N)", name)
	case len(win.Args) > 0 || win.Distinct || win.IgnoreNull || win.FromLast:
		return c.errAt(wpos, "unsupported: ROW_NUMBER with arguments or modifiers")
	case win.Spec.Name.O != "" || win.Spec.Ref.O != "" || win.Spec.OnlyAlias:
		return c.errAt(wpos, "unsupported: a named window (write OVER (PARTITION BY … ORDER BY …))")
	case win.Spec.Frame != nil:
		return c.errAt(wpos, "unsupported: a window frame with ROW_NUMBER")
	case win.Spec.OrderBy == nil || len(win.Spec.OrderBy.Items) == 0:
		return c.errAt(wpos, "unsupported: ROW_NUMBER() OVER without ORDER BY (Top-N needs an order)")
	case rnField.AsName.O == "":
		return c.errAt(wpos, "ROW_NUMBER() OVER (…) needs an alias (… AS rn) for the outer WHERE rn <= N")
	}
	rs := &rankSpec{rnName: rnField.AsName.O}
	derived, names, err := ic.selectList(fields, rowScope{c: ic})
	if err != nil {
		return err
	}
	rs.derived = derived
	known := map[string]bool{}
	for i, n := range names {
		l := strings.ToLower(n)
		if known[l] || l == rnField.AsName.L {
			return c.errAt(offsetOf(fields[i].Expr, ipos), "duplicate column name %q in the subquery (give it another alias)", n)
		}
		known[l] = true
		rs.derivedNames = append(rs.derivedNames, l)
	}
	if win.Spec.PartitionBy != nil {
		for _, it := range win.Spec.PartitionBy.Items {
			_, pos := it.Expr.(*ast.PositionExpr)
			if _, ok := it.Expr.(ast.ValueExpr); ok || pos {
				return c.errAt(wpos, "unsupported: PARTITION BY a position or constant")
			}
			e, err := ic.expr(it.Expr, rowScope{c: ic})
			if err != nil {
				return err
			}
			rs.part = append(rs.part, e)
		}
	}
	for _, it := range win.Spec.OrderBy.Items {
		_, pos := it.Expr.(*ast.PositionExpr)
		if _, ok := it.Expr.(ast.ValueExpr); ok || pos {
			return c.errAt(wpos, "unsupported: ORDER BY a position or constant in OVER (…)")
		}
		if containsAgg(it.Expr) {
			return c.errAt(offsetOf(it.Expr, wpos), "unsupported: an aggregate in OVER (ORDER BY …)")
		}
		e, err := ic.expr(it.Expr, rowScope{c: ic})
		if err != nil {
			return err
		}
		rs.order = append(rs.order, e)
		rs.desc = append(rs.desc, it.Desc)
	}
	// The outer query reads the subquery's row: one slot whose columns
	// are the subquery's names and rn.
	alias := ts.AsName.O
	rs.outerSlots = []slot{{alias: alias, table: "(Top-N subquery)", topic: "(Top-N subquery)"}}
	oc := &compiler{src: c.src, slots: rs.outerSlots}
	isRN := func(n ast.ExprNode) bool {
		for {
			p, ok := n.(*ast.ParenthesesExpr)
			if !ok {
				break
			}
			n = p.Expr
		}
		cn, ok := n.(*ast.ColumnNameExpr)
		return ok && cn.Name.Name.L == rnField.AsName.L
	}
	usesRN := func(n ast.Node) bool {
		for _, cn := range columnsOf(n) {
			if cn.Name.Name.L == rnField.AsName.L {
				return true
			}
		}
		return false
	}
	// every outer column is one of the subquery's
	check := func(n ast.Node) error {
		for _, cn := range columnsOf(n) {
			if cn.Name.Schema.O != "" || (cn.Name.Table.O != "" && !strings.EqualFold(cn.Name.Table.O, alias)) {
				return c.errAt(cn.OriginTextPosition(), "unknown table in %s (the FROM of this query is the subquery %s)", restore(cn), alias)
			}
			if l := cn.Name.Name.L; !known[l] && l != rnField.AsName.L {
				return c.errAt(cn.OriginTextPosition(), "column %s is not a column of the subquery (its columns: %s, %s)", restore(cn), strings.Join(names, ", "), rs.rnName)
			}
		}
		return nil
	}
	for _, f := range s.Fields.Fields {
		if f.WildCard != nil {
			break // selectList's error
		}
		if err := check(f.Expr); err != nil {
			return err
		}
		if usesRN(f.Expr) {
			rs.rnOut = true
		}
	}
	if s.Where == nil {
		return c.errAt(pos, "unsupported: ROW_NUMBER() without WHERE %s <= N (Top-N keeps N rows per partition)", rs.rnName)
	}
	if err := check(s.Where); err != nil {
		return err
	}
	found := false
	for _, cj := range conjuncts(s.Where) {
		if !usesRN(cj) {
			e, err := oc.expr(cj, rowScope{c: oc})
			if err != nil {
				return err
			}
			rs.preds = append(rs.preds, e)
			continue
		}
		n, ok, err := c.rankCond(cj, isRN)
		if err != nil {
			return err
		}
		if !ok {
			return c.errAt(offsetOf(cj, pos), "unsupported condition on %s: %s (supported: one of %s <= N, %s < N, %s = 1, AND other conditions without %s)", rs.rnName, restore(cj), rs.rnName, rs.rnName, rs.rnName, rs.rnName)
		}
		if found {
			return c.errAt(offsetOf(cj, pos), "unsupported: more than one condition on %s", rs.rnName)
		}
		found = true
		rs.n, rs.cond = n, restore(cj)
	}
	if !found {
		return c.errAt(offsetOf(s.Where, pos), "unsupported: ROW_NUMBER() without WHERE %s <= N (Top-N keeps N rows per partition)", rs.rnName)
	}
	outs, onames, err := oc.selectList(s.Fields.Fields, rowScope{c: oc})
	if err != nil {
		return err
	}
	rs.outs = outs
	q.slots = ic.slots
	c.slots = ic.slots
	q.Columns = onames
	if rs.rnOut {
		q.KeyColumns = append(partitionNames(rs.part, derived, names), rs.rnName)
		for i, k := range q.KeyColumns[:len(rs.part)] {
			if strings.EqualFold(k, rs.rnName) {
				q.KeyColumns[i] = fmt.Sprintf("EXPR$p%d", i)
			}
		}
	} else {
		for _, i := range node.slots {
			q.KeyColumns = append(q.KeyColumns, ic.slots[i].alias)
		}
	}
	q.plan = &planNode{kind: "rank", in: node, rank: rs, slots: node.slots}
	return nil
}

// rankCond reads rn <= N, rn < N, rn = 1 (or N >= rn, N > rn, 1 = rn):
// the number of rows kept; ok false for another condition.
func (c *compiler) rankCond(n ast.ExprNode, isRN func(ast.ExprNode) bool) (int64, bool, error) {
	if p, ok := n.(*ast.ParenthesesExpr); ok {
		return c.rankCond(p.Expr, isRN)
	}
	b, ok := n.(*ast.BinaryOperationExpr)
	if !ok {
		return 0, false, nil
	}
	lit := func(e ast.ExprNode) (int64, bool) {
		v, ok := e.(ast.ValueExpr)
		if !ok {
			return 0, false
		}
		switch x := v.GetValue().(type) {
		case int64:
			return x, true
		case uint64:
			if x < 1<<62 {
				return int64(x), true
			}
		}
		return 0, false
	}
	op := b.Op
	v, isLit := lit(b.R)
	switch {
	case isRN(b.L) && isLit:
	case isRN(b.R):
		if v, isLit = lit(b.L); !isLit {
			return 0, false, nil
		}
		switch op { // N >= rn is rn <= N
		case opcode.GE:
			op = opcode.LE
		case opcode.GT:
			op = opcode.LT
		case opcode.EQ:
		default:
			return 0, false, nil
		}
	default:
		return 0, false, nil
	}
	var keep int64
	switch op {
	case opcode.LE:
		keep = v
	case opcode.LT:
		keep = v - 1
	case opcode.EQ:
		if v != 1 {
			return 0, false, c.errAt(n.OriginTextPosition(), "unsupported: %s (a rank range other than from 1; rn = 1 is deduplication)", restore(n))
		}
		keep = 1
	default:
		return 0, false, nil
	}
	if keep < 1 {
		return 0, false, c.errAt(n.OriginTextPosition(), "%s keeps no row", restore(n))
	}
	return keep, true, nil
}

// partitionNames names the partition keys in the output key as
// groupNames names group keys.
func partitionNames(part, derived []*expr, names []string) []string {
	res := make([]string, len(part))
	seen := map[string]int{}
	for i, p := range part {
		name := ""
		for j, d := range derived {
			if d.key == p.key {
				name = names[j]
				break
			}
		}
		if name == "" && p.col != "" {
			name = p.col
		}
		if name == "" {
			name = fmt.Sprintf("EXPR$p%d", i)
		}
		res[i] = name
		seen[strings.ToLower(name)]++
	}
	for i, p := range part {
		if seen[strings.ToLower(res[i])] > 1 {
			if p.col != "" && p.colAlias != "" {
				res[i] = p.colAlias + "." + p.col
			} else {
				res[i] = fmt.Sprintf("EXPR$p%d", i)
			}
		}
	}
	return res
}

// rankOp is Flink's retractable Top-N (RetractableTopNFunction) with
// ROW_NUMBER: per partition it keeps every row of the partition, sorted
// by the ORDER BY (a retracted row of the top N is replaced by the next
// one), and at each flush (the mini-batch, as aggOp's) writes the changes
// of the top N rows of the partitions changed since the last one.
type rankOp struct {
	q     *Query
	r     *rankSpec
	parts *stateTable // partition key → *partition
	sink  *upsertSink
	slots []int
	x     evalCtx
	ox    evalCtx
	kb    []byte
	names [][]byte // result columns
	// knames are the key's columns (rnOut: the partition's and rn).
	knames [][]byte
	dirty  map[string]*partition
	pend   []*partition
	// dels and puts are a flush's outputs: every deletion goes to the
	// sink before any insertion, so a row that moved between
	// partitions in a batch (the same key without rn) ends inserted.
	dels, puts []Output
	now        []emitted
}

// partition is one PARTITION BY partition: its key values, its rows in
// ORDER BY order and what was last written for its top N (output key →
// value).
type partition struct {
	vals    []any
	rows    []rankRow
	emitted []emitted
	// tk is the state key, pending whether it changed since the last
	// flush (neither is state).
	tk      string
	pending bool
}

// emitted is a result row last written for a partition.
type emitted struct {
	key   string
	value []byte
}

// rankRow is one source row of a partition: its identity (the JSON of its
// sources' record keys, the result's key without rn), its ORDER BY values
// (with their int64 form, as MIN/MAX's) and the subquery's row (lowercase
// names).
type rankRow struct {
	id   string
	sort []counted
	row  map[string]any
	// out is the result row last computed for the row (nil: filtered
	// out) at rank outRank, valid when computed is set (not state: a
	// row never changes, an update is a retraction and an insertion, and
	// its result depends only on rn, when the SELECT list uses it).
	out      []byte
	outRank  int64
	computed bool
}

// cmpRows orders a before b (<0): the ORDER BY values, NULL the smallest
// (first ascending, last descending), then the identities' bytes.
func (o *rankOp) cmpRows(a, b *rankRow) (int, error) {
	for i, d := range o.r.desc {
		va, vb := a.sort[i].v, b.sort[i].v
		n := 0
		switch {
		case va == nil && vb == nil:
		case va == nil:
			n = -1
		case vb == nil:
			n = 1
		default:
			var ok bool
			if n, ok = a.sort[i].cmp(&b.sort[i]); !ok {
				return 0, fmt.Errorf("ORDER BY %s: cannot compare %v (%T) with %v (%T)", o.r.order[i].text, va, va, vb, vb)
			}
		}
		if d {
			n = -n
		}
		if n != 0 {
			return n, nil
		}
	}
	return strings.Compare(a.id, b.id), nil
}

// search is the index of the first row of p not before r.
func (o *rankOp) search(p *partition, r *rankRow) (int, error) {
	var err error
	i := sort.Search(len(p.rows), func(i int) bool {
		n, e := o.cmpRows(&p.rows[i], r)
		if e != nil && err == nil {
			err = e
		}
		return n >= 0
	})
	return i, err
}

func (o *rankOp) push(c change) error {
	x := o.x.reuse(o.q, c)
	kb := o.kb[:0]
	var vals []any
	for _, e := range o.r.part {
		v := e.eval(x)
		if x.err != nil {
			return fmt.Errorf("PARTITION BY %s: %w", e.text, x.err)
		}
		vals = append(vals, v)
		kb = appendKey(kb, v)
	}
	o.kb = kb
	r := rankRow{id: string(sourceKey(o.q.slots, o.slots, c)), sort: make([]counted, len(o.r.order))}
	for i, e := range o.r.order {
		r.sort[i] = countedOf(e.eval(x))
		if x.err != nil {
			return fmt.Errorf("ORDER BY %s: %w", e.text, x.err)
		}
	}
	var p *partition
	if !o.parts.shared {
		p = o.dirty[string(kb)]
	}
	if p == nil {
		if v, ok := o.parts.get(string(kb)); ok {
			p = v.(*partition)
		} else {
			if c.retract {
				if o.parts.ttl > 0 {
					return nil // the partition's state expired: Flink ignores the retraction
				}
				return fmt.Errorf("retraction of a row of partition %v that has no rows", vals)
			}
			p = &partition{vals: vals, tk: string(kb)}
			if o.parts.shared {
				o.parts.put(p.tk, p)
			}
		}
	}
	if !p.pending {
		if p.tk == "" {
			p.tk = string(kb)
		}
		p.pending = true
		o.pend = append(o.pend, p)
		if !o.parts.shared {
			o.dirty[p.tk] = p
		}
	}
	i, err := o.search(p, &r)
	if err != nil {
		return err
	}
	if c.retract {
		if i == len(p.rows) || p.rows[i].id != r.id {
			// the row's ORDER BY values are not those it was inserted
			// with (they cannot be, the retraction is of the row
			// inserted): look for it by identity
			i = -1
			for j := range p.rows {
				if p.rows[j].id == r.id {
					i = j
					break
				}
			}
			if i < 0 {
				if o.parts.ttl > 0 {
					return nil
				}
				return fmt.Errorf("retraction of row %s of partition %v, which the partition does not have", r.id, vals)
			}
		}
		p.rows = append(p.rows[:i], p.rows[i+1:]...)
		return nil
	}
	if i < len(p.rows) && p.rows[i].id == r.id {
		return fmt.Errorf("row %s inserted twice in partition %v without a retraction", r.id, vals)
	}
	r.row = make(map[string]any, len(o.r.derived)+1)
	for j, e := range o.r.derived {
		v := e.eval(x)
		if x.err != nil {
			return fmt.Errorf("%s: %w", e.text, x.err)
		}
		r.row[o.r.derivedNames[j]] = v
	}
	p.rows = append(p.rows, rankRow{})
	copy(p.rows[i+1:], p.rows[i:])
	p.rows[i] = r
	return nil
}

// flush writes the top N changes of the partitions changed since the last
// flush and stores them.
func (o *rankOp) flush() error {
	if o.names == nil {
		o.names, o.knames = namePrefixes(o.q.Columns), namePrefixes(o.q.KeyColumns)
	}
	o.dels, o.puts = o.dels[:0], o.puts[:0]
	rnKey := strings.ToLower(o.r.rnName)
	for _, p := range o.pend {
		p.pending = false
		now := o.now[:0]
		for i := 0; i < len(p.rows) && int64(i) < o.r.n; i++ {
			r := &p.rows[i]
			rn := int64(i + 1)
			if !r.computed || (o.r.rnOut && r.outRank != rn) {
				out, err := o.result(r, rn, rnKey)
				if err != nil {
					return err
				}
				r.out, r.outRank, r.computed = out, rn, true
			}
			if r.out == nil {
				continue
			}
			v := r.out
			key := r.id
			if o.r.rnOut {
				key = string(o.key(p.vals, int64(i+1)))
			}
			now = append(now, emitted{key, v})
		}
		// the differences with what was written: by position first (an
		// unchanged rank), else by key (an index when there are many)
		oldIdx, newIdx := indexEmitted(p.emitted), indexEmitted(now)
		for j, e := range now {
			if k := findEmitted(p.emitted, oldIdx, j, e.key); k < 0 || string(p.emitted[k].value) != string(e.value) {
				o.puts = append(o.puts, Output{Key: []byte(e.key), Value: e.value})
			}
		}
		for j, e := range p.emitted {
			if findEmitted(now, newIdx, j, e.key) < 0 {
				o.dels = append(o.dels, Output{Key: []byte(e.key)})
			}
		}
		p.emitted = append(p.emitted[:0], now...)
		o.now = now[:0]
		if len(p.rows) == 0 {
			o.parts.del(p.tk)
		} else {
			o.parts.put(p.tk, p)
		}
	}
	// deletions first (in key order: the same output for the same input)
	sort.Slice(o.dels, func(i, j int) bool { return string(o.dels[i].Key) < string(o.dels[j].Key) })
	for _, d := range o.dels {
		o.sink.put(d.Key, nil)
	}
	for _, u := range o.puts {
		o.sink.put(u.Key, u.Value)
	}
	clear(o.dirty)
	clear(o.pend)
	o.pend = o.pend[:0]
	return nil
}

// result is the outer query's row for r at rank rn (nil: its WHERE
// filters it out).
func (o *rankOp) result(r *rankRow, rn int64, rnKey string) ([]byte, error) {
	r.row[rnKey] = rn
	ctx := &o.ox
	ctx.rows, ctx.slots, ctx.vals, ctx.err = ctx.rows[:0], o.r.outerSlots, ctx.vals[:0], nil
	ctx.rows = append(ctx.rows, r.row)
	for _, pr := range o.r.preds {
		v := pr.eval(ctx)
		if ctx.err != nil {
			return nil, fmt.Errorf("WHERE %s: %w", pr.text, ctx.err)
		}
		b, ok := v.(bool)
		if v != nil && !ok {
			return nil, fmt.Errorf("WHERE %s: %v is not a boolean", pr.text, v)
		}
		if !b {
			return nil, nil
		}
	}
	return row(ctx, o.r.outs, o.names)
}

// indexEmitted indexes es by key when a linear search would be slow.
func indexEmitted(es []emitted) map[string]int {
	if len(es) <= 16 {
		return nil
	}
	m := make(map[string]int, len(es))
	for i, e := range es {
		m[e.key] = i
	}
	return m
}

// findEmitted is the index of key in es (-1: none): at j, else by idx
// or a linear search.
func findEmitted(es []emitted, idx map[string]int, j int, key string) int {
	if j < len(es) && es[j].key == key {
		return j
	}
	if idx != nil {
		if k, ok := idx[key]; ok {
			return k
		}
		return -1
	}
	for k := range es {
		if es[k].key == key {
			return k
		}
	}
	return -1
}

// key is the result key with rn: {"<partition col>":v,…,"rn":n}.
func (o *rankOp) key(vals []any, rn int64) []byte {
	b := []byte{'{'}
	for i, v := range vals {
		b = append(b, o.knames[i]...)
		b, _ = appendJSON(b, v)
		b = append(b, ',')
	}
	b = append(b, o.knames[len(vals)]...)
	b, _ = appendJSON(b, rn)
	return append(b, '}')
}

// sourceKey is the result key of a row without GROUP BY: its sources'
// record keys (the one source's key, or {"alias": key | null, …}).
func sourceKey(slots []slot, of []int, c change) []byte {
	if len(of) == 1 {
		return []byte(c.keys[of[0]])
	}
	b := []byte{'{'}
	for i, s := range of {
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = appendJSON(b, slots[s].alias)
		b = append(b, ':')
		if k := c.keys[s]; k != "" {
			b = append(b, k...)
		} else {
			b = append(b, "null"...)
		}
	}
	return append(b, '}')
}

// partitionWire is a Top-N partition in a checkpoint.
type partitionWire struct {
	Vals    string        `json:"v"` // job.EncodeValues
	Rows    []rankRowWire `json:"r"`
	Emitted [][2]string   `json:"e"` // [key, value]
}

type rankRowWire struct {
	ID   string   `json:"i"`
	Sort string   `json:"s"` // job.EncodeValues
	Row  *job.Row `json:"d"`
}

// partitionCodec encodes a Top-N's partitions.
func (o *rankOp) partitionCodec() flinklite.StateCodec {
	return flinklite.StateCodec{
		Encode: func(v any) ([]byte, error) {
			p := v.(*partition)
			w := partitionWire{Vals: job.EncodeValues(p.vals), Rows: make([]rankRowWire, len(p.rows)), Emitted: make([][2]string, len(p.emitted))}
			sv := make([]any, len(o.r.order))
			for i, r := range p.rows {
				for j := range r.sort {
					sv[j] = r.sort[j].v
				}
				w.Rows[i] = rankRowWire{ID: r.id, Sort: job.EncodeValues(sv), Row: &job.Row{Fields: r.row}}
			}
			for i, e := range p.emitted {
				w.Emitted[i] = [2]string{e.key, string(e.value)}
			}
			return json.Marshal(w)
		},
		Decode: func(b []byte) (any, error) {
			var w partitionWire
			if err := json.Unmarshal(b, &w); err != nil {
				return nil, err
			}
			vals, err := job.DecodeValues(w.Vals)
			if err != nil {
				return nil, err
			}
			if len(vals) != len(o.r.part) {
				return nil, fmt.Errorf("a Top-N partition of %d keys, the query has %d", len(vals), len(o.r.part))
			}
			if len(vals) == 0 {
				vals = nil
			}
			p := &partition{vals: vals, rows: make([]rankRow, len(w.Rows)), emitted: make([]emitted, len(w.Emitted))}
			for i, rw := range w.Rows {
				s, err := job.DecodeValues(rw.Sort)
				if err != nil {
					return nil, err
				}
				if len(s) != len(o.r.order) {
					return nil, fmt.Errorf("a Top-N row of %d ORDER BY values, the query has %d", len(s), len(o.r.order))
				}
				r := rankRow{id: rw.ID, sort: make([]counted, len(s))}
				for j, v := range s {
					r.sort[j] = countedOf(v)
				}
				if rw.Row != nil {
					r.row = rw.Row.Fields
				}
				if r.row == nil {
					r.row = map[string]any{}
				}
				p.rows[i] = r
			}
			for i, e := range w.Emitted {
				p.emitted[i] = emitted{key: e[0], value: []byte(e[1])}
			}
			return p, nil
		},
	}
}
