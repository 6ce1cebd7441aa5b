package sql

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // literal values (ast.ValueExpr)
)

// Error is a statement the package cannot run: a syntax error or
// something unsupported, at a line and column (1-based) of the text.
type Error struct {
	Line, Column int
	Msg          string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d column %d: %s", e.Line, e.Column, e.Msg) }

// Tables resolves a table name of a FROM clause to its Debezium topic; ok
// false leaves the name as the topic.
type Tables func(name string) (topic string, ok bool)

// TableMap is a Tables of fixed names.
func TableMap(m map[string]string) Tables {
	return func(name string) (string, bool) { t, ok := m[name]; return t, ok }
}

// Query is a compiled statement.
type Query struct {
	// SQL is the statement's text.
	SQL string
	// Sink is the output topic (CREATE TABLE name AS / INSERT INTO name);
	// "" for a plain SELECT.
	Sink string
	// Explain is set for EXPLAIN <statement>: the caller prints Plan.
	Explain bool
	// Columns are the result's column names, in SELECT order.
	Columns []string
	// KeyColumns name the result's unique key (the GROUP BY columns, or
	// the aliases of the sources whose record keys make it).
	KeyColumns []string

	slots []slot
	plan  *planNode
	// branches are the queries of a UNION ALL (plan is nil).
	branches []*Query
}

// Topics are the source topics the query reads.
func (q *Query) Topics() []string {
	var ts []string
	seen := map[string]bool{}
	for _, s := range q.slots {
		if !seen[s.topic] {
			seen[s.topic] = true
			ts = append(ts, s.topic)
		}
	}
	return ts
}

// slot is one table of the FROM clause.
type slot struct {
	alias, table, topic string
}

// Compile parses one statement (a trailing semicolon is allowed) and
// plans it.
func Compile(text string, tables Tables) (*Query, error) {
	stmts, _, err := parser.New().Parse(text, "", "")
	if err != nil {
		return nil, parseError(text, err)
	}
	if len(stmts) != 1 {
		return nil, &Error{Line: 1, Column: 1, Msg: fmt.Sprintf("expected one statement, got %d", len(stmts))}
	}
	c := &compiler{src: text, tables: tables}
	q := &Query{SQL: text}
	stmt := stmts[0]
	if ex, ok := stmt.(*ast.ExplainStmt); ok {
		if ex.Analyze {
			return nil, c.errAt(ex.OriginTextPosition(), "unsupported: EXPLAIN ANALYZE")
		}
		q.Explain = true
		stmt = ex.Stmt
	}
	var sel ast.ResultSetNode
	switch s := stmt.(type) {
	case *ast.SelectStmt:
		sel = s
	case *ast.SetOprStmt:
		sel = s
	case *ast.CreateTableStmt:
		if s.Select == nil || len(s.Cols) > 0 || len(s.Constraints) > 0 || len(s.Options) > 0 || s.ReferTable != nil {
			return nil, c.errAt(s.OriginTextPosition(), "unsupported: CREATE TABLE without AS SELECT, or with columns or options (a result table is CREATE TABLE name AS SELECT …)")
		}
		q.Sink = tableName(s.Table)
		sel = s.Select
	case *ast.InsertStmt:
		if s.Select == nil || s.IsReplace || len(s.Columns) > 0 || len(s.OnDuplicate) > 0 {
			return nil, c.errAt(s.OriginTextPosition(), "unsupported: INSERT other than INSERT INTO name SELECT … (no VALUES, column list, REPLACE or ON DUPLICATE KEY)")
		}
		tn, ok := s.Table.TableRefs.Left.(*ast.TableSource)
		if !ok || s.Table.TableRefs.Right != nil {
			return nil, c.errAt(s.OriginTextPosition(), "unsupported: INSERT INTO a join")
		}
		name, ok := tn.Source.(*ast.TableName)
		if !ok {
			return nil, c.errAt(s.OriginTextPosition(), "unsupported: INSERT INTO a subquery")
		}
		q.Sink = tableName(name)
		sel = s.Select
	default:
		return nil, c.errAt(stmt.OriginTextPosition(), "unsupported statement %T (supported: SELECT, CREATE TABLE … AS SELECT, INSERT INTO … SELECT, EXPLAIN)", stmt)
	}
	if u, ok := sel.(*ast.SetOprStmt); ok {
		if err := c.unionAll(q, u); err != nil {
			return nil, err
		}
		return q, nil
	}
	s, ok := sel.(*ast.SelectStmt)
	if !ok {
		return nil, c.errAt(stmt.OriginTextPosition(), "unsupported: %s", describe(sel))
	}
	if err := c.selectStmt(q, s); err != nil {
		return nil, err
	}
	return q, nil
}

// unionAll plans SELECT … UNION ALL SELECT …: each branch is a query of
// its own; the result's key is the branch's index and the branch's key
// ({"union":1,"key":{"status":"new"}}), so the branches' rows never
// collide.
func (c *compiler) unionAll(q *Query, u *ast.SetOprStmt) error {
	pos := u.OriginTextPosition()
	if u.OrderBy != nil || u.Limit != nil || u.With != nil || u.SelectList.OrderBy != nil || u.SelectList.Limit != nil {
		return c.errAt(pos, "unsupported: ORDER BY, LIMIT or WITH on a UNION")
	}
	for i, n := range u.SelectList.Selects {
		s, ok := n.(*ast.SelectStmt)
		if !ok {
			return c.errAt(pos, "unsupported: a parenthesized set operation inside UNION ALL")
		}
		bpos := s.OriginTextPosition()
		if len(s.Fields.Fields) > 0 && s.Fields.Fields[0].Expr != nil {
			bpos = s.Fields.Fields[0].Expr.OriginTextPosition() // the branch's first column
		}
		if i > 0 && (s.AfterSetOperator == nil || *s.AfterSetOperator != ast.UnionAll) {
			op := "UNION"
			if s.AfterSetOperator != nil {
				op = s.AfterSetOperator.String()
			}
			return c.errAt(bpos, "unsupported: %s (only UNION ALL: UNION's deduplication is not supported yet)", strings.ToUpper(op))
		}
		bc := &compiler{src: c.src, tables: c.tables}
		b := &Query{SQL: q.SQL}
		if err := bc.selectStmt(b, s); err != nil {
			return err
		}
		if i > 0 {
			if len(b.Columns) != len(q.branches[0].Columns) {
				return c.errAt(bpos, "UNION ALL branch %d has %d columns, the first has %d", i+1, len(b.Columns), len(q.branches[0].Columns))
			}
			b.Columns = q.branches[0].Columns // the first branch names the columns
		}
		q.branches = append(q.branches, b)
		q.slots = append(q.slots, b.slots...)
	}
	q.Columns = q.branches[0].Columns
	q.KeyColumns = []string{"union", "key"}
	return nil
}

func tableName(t *ast.TableName) string {
	if t.Schema.O != "" {
		return t.Schema.O + "." + t.Name.O
	}
	return t.Name.O
}

func describe(n ast.Node) string {
	switch n.(type) {
	case *ast.SetOprStmt:
		return "a set operation (UNION/INTERSECT/EXCEPT)"
	}
	return fmt.Sprintf("%T", n)
}

var parseErrPos = regexp.MustCompile(`line (\d+) column (\d+) near "((?s).*)"\s*$`)

// parseError is the TiDB parser's error ("line 1 column 11 near "FROM"",
// the column after the token it stopped at) as an *Error at the start of
// that token.
func parseError(src string, err error) error {
	msg := strings.TrimSpace(err.Error())
	m := parseErrPos.FindStringSubmatch(msg)
	if m == nil {
		return &Error{Line: 1, Column: 1, Msg: "syntax error: " + msg}
	}
	e := &Error{Msg: fmt.Sprintf("syntax error near %q", m[3])}
	if m[3] == "" {
		e.Msg = "syntax error at the end of the statement"
	}
	if strings.HasSuffix(src, m[3]) {
		p := (&compiler{src: src}).errAt(len(src)-len(m[3]), "")
		e.Line, e.Column = p.Line, p.Column
		return e
	}
	e.Line, _ = strconv.Atoi(m[1])
	e.Column, _ = strconv.Atoi(m[2])
	return e
}

type compiler struct {
	src    string
	tables Tables
	slots  []slot
	// lastPos is the offset of the last expression seen: the position of
	// an error on a node that has none of its own.
	lastPos int
}

func (c *compiler) errAt(off int, f string, args ...any) *Error {
	if off < 0 || off > len(c.src) {
		off = 0
	}
	line, col := 1, 1
	for _, r := range c.src[:off] {
		if r == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return &Error{Line: line, Column: col, Msg: fmt.Sprintf(f, args...)}
}

// restore is n's SQL text, normalized by the parser.
func restore(n ast.Node) string {
	var b strings.Builder
	if err := n.Restore(format.NewRestoreCtx(format.RestoreStringSingleQuotes|format.RestoreKeyWordUppercase|format.RestoreNameBackQuotes, &b)); err != nil {
		return fmt.Sprintf("%T", n)
	}
	return b.String()
}

// planNode is one operator of the plan.
type planNode struct {
	kind string // scan, join, filter, project, aggregate, rank
	// scan
	slot int
	// join
	left, right *planNode
	leftJoin    bool
	lkeys       []*expr
	rkeys       []*expr
	// filter
	in   *planNode
	pred *expr
	// project and aggregate
	outs   []*expr
	groups []*expr
	aggs   []*aggSpec
	having *expr
	// rank is a Top-N's (kind rank)
	rank *rankSpec
	// slots are the FROM slots the node's rows carry.
	slots []int
}

func (c *compiler) selectStmt(q *Query, s *ast.SelectStmt) error {
	pos := s.OriginTextPosition()
	switch {
	case s.With != nil:
		return c.errAt(pos, "unsupported: WITH (common table expressions)")
	case s.Distinct:
		return c.errAt(pos, "unsupported: SELECT DISTINCT")
	case s.OrderBy != nil:
		return c.errAt(offsetOf(s.OrderBy.Items[0].Expr, pos), "unsupported: ORDER BY (a streaming result has no order)")
	case s.Limit != nil:
		return c.errAt(pos, "unsupported: LIMIT")
	case len(s.WindowSpecs) > 0:
		return c.errAt(pos, "unsupported: WINDOW clause")
	case s.LockInfo != nil && s.LockInfo.LockType != ast.SelectLockNone:
		return c.errAt(pos, "unsupported: FOR UPDATE/SHARE")
	case s.SelectIntoOpt != nil:
		return c.errAt(pos, "unsupported: SELECT INTO")
	case s.Kind != ast.SelectStmtKindSelect:
		return c.errAt(pos, "unsupported: VALUES/TABLE statements")
	case s.From == nil:
		return c.errAt(pos, "unsupported: SELECT without FROM")
	case s.GroupBy != nil && s.GroupBy.Rollup:
		return c.errAt(pos, "unsupported: WITH ROLLUP")
	}
	if ts, inner := topNSource(s); inner != nil {
		return c.topN(q, s, ts, inner)
	}
	from, err := c.from(s.From.TableRefs, pos)
	if err != nil {
		return err
	}
	q.slots = c.slots
	node := from
	if s.Where != nil {
		pred, err := c.expr(s.Where, rowScope{c: c})
		if err != nil {
			return err
		}
		node = &planNode{kind: "filter", in: node, pred: pred, slots: node.slots}
	}
	hasAgg := s.GroupBy != nil || s.Having != nil
	for _, f := range s.Fields.Fields {
		if f.Expr != nil && containsAgg(f.Expr) {
			hasAgg = true
		}
	}
	if !hasAgg {
		outs, names, err := c.selectList(s.Fields.Fields, rowScope{c: c})
		if err != nil {
			return err
		}
		q.Columns = names
		for _, i := range node.slots {
			q.KeyColumns = append(q.KeyColumns, c.slots[i].alias)
		}
		q.plan = &planNode{kind: "project", in: node, outs: outs, slots: node.slots}
		return nil
	}
	agg := &aggScope{rowScope: rowScope{c: c}}
	var groups []*expr
	if s.GroupBy != nil {
		for _, it := range s.GroupBy.Items {
			if v, ok := it.Expr.(ast.ValueExpr); ok {
				return c.errAt(offsetOf(it.Expr, pos), "unsupported: GROUP BY a position or constant (%v)", v.GetValue())
			}
			g, err := c.expr(it.Expr, rowScope{c: c})
			if err != nil {
				return err
			}
			groups = append(groups, g)
		}
	}
	agg.groups = groups
	outs, names, err := c.selectList(s.Fields.Fields, agg)
	if err != nil {
		return err
	}
	var having *expr
	if s.Having != nil {
		if having, err = c.expr(s.Having.Expr, agg); err != nil {
			return err
		}
	}
	q.Columns = names
	q.KeyColumns = groupNames(groups, s.Fields.Fields, outs, names)
	q.plan = &planNode{kind: "aggregate", in: node, groups: groups, aggs: agg.aggs, outs: outs, having: having, slots: node.slots}
	return nil
}

// groupNames names the group keys in the output key: the name of the
// SELECT field computing the same expression, else the column's name,
// else EXPR$g<i>; repeated names get the table alias.
func groupNames(groups []*expr, fields []*ast.SelectField, outs []*expr, names []string) []string {
	res := make([]string, len(groups))
	seen := map[string]int{}
	for i, g := range groups {
		name := ""
		for j, o := range outs {
			if o.groupRef == i && o.aggFree {
				name = names[j]
				break
			}
		}
		if name == "" && g.col != "" {
			name = g.col
		}
		if name == "" {
			name = fmt.Sprintf("EXPR$g%d", i)
		}
		res[i] = name
		seen[name]++
	}
	for i, g := range groups {
		if seen[res[i]] > 1 && g.col != "" && g.colAlias != "" {
			res[i] = g.colAlias + "." + g.col
		}
	}
	return res
}

func offsetOf(n ast.ExprNode, fallback int) int {
	if n == nil {
		return fallback
	}
	return n.OriginTextPosition()
}

func (c *compiler) selectList(fields []*ast.SelectField, sc scope) ([]*expr, []string, error) {
	var outs []*expr
	var names []string
	for i, f := range fields {
		if f.WildCard != nil {
			return nil, nil, c.errAt(c.lastPos, "unsupported: * in the SELECT list (name the columns: the result's columns must be known when the query is planned)")
		}
		e, err := c.expr(f.Expr, sc)
		if err != nil {
			return nil, nil, err
		}
		name := f.AsName.O
		if name == "" {
			if cn, ok := f.Expr.(*ast.ColumnNameExpr); ok {
				name = cn.Name.Name.O
			} else {
				name = fmt.Sprintf("EXPR$%d", i)
			}
		}
		for _, n := range names {
			if n == name {
				return nil, nil, c.errAt(offsetOf(f.Expr, 0), "duplicate result column name %q (give it an alias)", name)
			}
		}
		outs = append(outs, e)
		names = append(names, name)
	}
	return outs, names, nil
}

// from plans the FROM clause.
func (c *compiler) from(n ast.ResultSetNode, pos int) (*planNode, error) {
	switch x := n.(type) {
	case *ast.TableSource:
		tn, ok := x.Source.(*ast.TableName)
		if !ok {
			return nil, c.errAt(pos, "unsupported: a subquery in FROM (other than a Top-N's, alone in FROM)")
		}
		if strings.EqualFold(x.AsName.O, "full") {
			// the MySQL grammar reads "a FULL JOIN b" as "a AS full JOIN b"
			return nil, c.errAt(pos, "unsupported: FULL JOIN")
		}
		if tn.AsOf != nil {
			return nil, c.errAt(pos, "unsupported: AS OF (temporal joins)")
		}
		name := tableName(tn)
		topic := name
		if c.tables != nil {
			if t, ok := c.tables(name); ok {
				topic = t
			}
		}
		alias := x.AsName.O
		if alias == "" {
			alias = tn.Name.O
		}
		for _, s := range c.slots {
			if strings.EqualFold(s.alias, alias) {
				return nil, c.errAt(pos, "table name %q appears twice in FROM (give one an alias)", alias)
			}
		}
		c.slots = append(c.slots, slot{alias: alias, table: name, topic: topic})
		i := len(c.slots) - 1
		return &planNode{kind: "scan", slot: i, slots: []int{i}}, nil
	case *ast.Join:
		if x.Right == nil {
			return c.from(x.Left, pos)
		}
		if x.NaturalJoin || len(x.Using) > 0 {
			return nil, c.errAt(pos, "unsupported: NATURAL JOIN and USING (write ON a.x = b.x)")
		}
		left, err := c.from(x.Left, pos)
		if err != nil {
			return nil, err
		}
		right, err := c.from(x.Right, pos)
		if err != nil {
			return nil, err
		}
		if x.On == nil {
			return nil, c.errAt(pos, "unsupported: a join without ON (cross join)")
		}
		leftJoin := false
		switch x.Tp {
		case ast.CrossJoin: // [INNER] JOIN … ON
		case ast.LeftJoin:
			leftJoin = true
		case ast.RightJoin:
			leftJoin = true
			left, right = right, left
		default:
			return nil, c.errAt(pos, "unsupported join type")
		}
		j := &planNode{kind: "join", left: left, right: right, leftJoin: leftJoin, slots: append(append([]int(nil), left.slots...), right.slots...)}
		if err := c.joinKeys(j, x.On.Expr); err != nil {
			return nil, err
		}
		return j, nil
	}
	return nil, c.errAt(pos, "unsupported FROM item %T", n)
}

// joinKeys splits an ON condition into equalities of a left-side and a
// right-side expression.
func (c *compiler) joinKeys(j *planNode, on ast.ExprNode) error {
	if p, ok := on.(*ast.ParenthesesExpr); ok {
		return c.joinKeys(j, p.Expr)
	}
	b, ok := on.(*ast.BinaryOperationExpr)
	if ok && b.Op.String() == "and" {
		if err := c.joinKeys(j, b.L); err != nil {
			return err
		}
		return c.joinKeys(j, b.R)
	}
	if !ok || b.Op.String() != "eq" {
		return c.errAt(offsetOf(on, 0), "unsupported join condition %s: ON must be equalities of a column expression of each side joined by AND", restore(on))
	}
	l, err := c.expr(b.L, rowScope{c: c})
	if err != nil {
		return err
	}
	r, err := c.expr(b.R, rowScope{c: c})
	if err != nil {
		return err
	}
	in := func(e *expr, slots []int) bool {
		if len(e.slots) == 0 {
			return false
		}
		for s := range e.slots {
			found := false
			for _, x := range slots {
				found = found || x == s
			}
			if !found {
				return false
			}
		}
		return true
	}
	switch {
	case in(l, j.left.slots) && in(r, j.right.slots):
	case in(r, j.left.slots) && in(l, j.right.slots):
		l, r = r, l
	default:
		return c.errAt(offsetOf(on, 0), "unsupported join condition %s: each side of = must use the columns of one side of the join", restore(on))
	}
	j.lkeys = append(j.lkeys, l)
	j.rkeys = append(j.rkeys, r)
	return nil
}

func containsAgg(n ast.Node) bool {
	f := &aggFinder{}
	n.Accept(f)
	return f.found
}

type aggFinder struct{ found bool }

func (f *aggFinder) Enter(n ast.Node) (ast.Node, bool) {
	if _, ok := n.(*ast.AggregateFuncExpr); ok {
		f.found = true
		return n, true
	}
	return n, false
}
func (f *aggFinder) Leave(n ast.Node) (ast.Node, bool) { return n, true }

// Statement is one statement of a script: its text (with the comments
// before it) and where that text starts.
type Statement struct {
	Text string
	// Line and Column (1-based) are where the statement starts in the
	// script.
	Line, Column int
}

// Split cuts a script of statements separated by semicolons into its
// statements (with the TiDB parser, so a semicolon in a string or a
// comment does not cut). A syntax error is an *Error at its position in
// the script.
func Split(script string) ([]Statement, error) {
	stmts, _, err := parser.New().Parse(script, "", "")
	if err != nil {
		return nil, parseError(script, err)
	}
	c := &compiler{src: script}
	var out []Statement
	from := 0
	for _, s := range stmts {
		text := strings.TrimSpace(s.Text())
		text = strings.TrimSpace(strings.TrimSuffix(text, ";"))
		off := strings.Index(script[from:], text)
		if off < 0 {
			off = 0
		} else {
			off += from
			from = off + len(text)
		}
		e := c.errAt(off, "")
		out = append(out, Statement{Text: text, Line: e.Line, Column: e.Column})
	}
	return out, nil
}
