package sql

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser/ast"
	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	"github.com/pingcap/tidb/pkg/parser/test_driver"
	"github.com/pingcap/tidb/pkg/parser/types"

	"github.com/connectd/connectd/flinklite/job"
)

// evalCtx is what an expression reads: the row of each FROM slot (nil for
// the side a LEFT JOIN extends with NULLs) or, above an aggregate, the
// group's key values then its aggregate results. The first run-time
// error is kept in err.
type evalCtx struct {
	rows  []map[string]any
	slots []slot
	vals  []any
	err   error
}

func (c *evalCtx) fail(err error) any {
	if c.err == nil {
		c.err = err
	}
	return nil
}

// expr is a compiled expression.
type expr struct {
	text  string
	eval  func(*evalCtx) any
	slots map[int]bool // the FROM slots it reads
	// col and colAlias are set for a column reference.
	col, colAlias string
	key           string // identity, to match SELECT expressions to GROUP BY ones
	// groupRef is the GROUP BY expression this expression is (-1: none);
	// aggFree says the expression is exactly that group expression.
	groupRef int
	aggFree  bool
}

type scope interface{ aggregate() *aggScope }

type rowScope struct{ c *compiler }

func (rowScope) aggregate() *aggScope { return nil }

// aggScope compiles the expressions above a GROUP BY: group expressions
// and aggregate calls become references to the group's values.
type aggScope struct {
	rowScope
	groups []*expr
	aggs   []*aggSpec
}

func (a *aggScope) aggregate() *aggScope { return a }

// aggSpec is one aggregate call.
type aggSpec struct {
	fn   string // count, count_distinct, sum, avg, min, max
	star bool   // COUNT(*)
	arg  *expr
	text string
}

func (c *compiler) expr(n ast.ExprNode, sc scope) (*expr, error) {
	c.lastPos = n.OriginTextPosition()
	if a := sc.aggregate(); a != nil {
		if _, lit := n.(ast.ValueExpr); !lit {
			key := c.exprKey(n)
			for i, g := range a.groups {
				if g.key == key {
					idx := i
					return &expr{text: restore(n), key: key, groupRef: i, aggFree: true, col: g.col, colAlias: g.colAlias,
						eval: func(x *evalCtx) any { return x.vals[idx] }}, nil
				}
			}
		}
		switch x := n.(type) {
		case *ast.AggregateFuncExpr:
			return c.aggCall(x, a)
		case *ast.ColumnNameExpr:
			return nil, c.errAt(n.OriginTextPosition(), "column %s must appear in GROUP BY or be used in an aggregate function", restore(x))
		}
	} else if x, ok := n.(*ast.AggregateFuncExpr); ok {
		return nil, c.errAt(n.OriginTextPosition(), "aggregate function %s is not allowed here (WHERE, ON, GROUP BY or inside another aggregate)", strings.ToUpper(x.F))
	}
	e, err := c.exprNode(n, sc)
	if err != nil {
		return nil, err
	}
	if e.text == "" {
		e.text = restore(n)
	}
	if e.key == "" {
		e.key = c.exprKey(n)
	}
	if e.slots == nil {
		e.slots = map[int]bool{}
	}
	e.groupRef = -1
	return e, nil
}

// exprKey identifies an expression: a column by its resolved slot, others
// by their normalized text.
func (c *compiler) exprKey(n ast.ExprNode) string {
	if cn, ok := n.(*ast.ColumnNameExpr); ok {
		if i, err := c.resolve(cn); err == nil {
			return fmt.Sprintf("col:%d.%s", i, cn.Name.Name.L)
		}
	}
	return restore(n)
}

func (c *compiler) resolve(cn *ast.ColumnNameExpr) (int, error) {
	name := cn.Name
	if name.Schema.O != "" {
		return 0, c.errAt(cn.OriginTextPosition(), "unsupported: a schema-qualified column %s (qualify it with the table or its alias)", restore(cn))
	}
	if name.Table.O == "" {
		if len(c.slots) == 1 {
			return 0, nil
		}
		return 0, c.errAt(cn.OriginTextPosition(), "column %s must be qualified with its table or alias in a join (the columns of the source tables are known only at run time)", name.Name.O)
	}
	for i, s := range c.slots {
		if strings.EqualFold(s.alias, name.Table.O) {
			return i, nil
		}
	}
	return 0, c.errAt(cn.OriginTextPosition(), "unknown table %s in %s", name.Table.O, restore(cn))
}

func (c *compiler) aggCall(x *ast.AggregateFuncExpr, a *aggScope) (*expr, error) {
	pos := x.OriginTextPosition()
	fn := strings.ToLower(x.F)
	switch fn {
	case "count", "sum", "avg", "min", "max":
	default:
		return nil, c.errAt(pos, "unsupported aggregate function %s (supported: COUNT, SUM, AVG, MIN, MAX)", strings.ToUpper(x.F))
	}
	if x.Distinct && fn != "count" {
		return nil, c.errAt(pos, "unsupported: %s(DISTINCT …) (COUNT(DISTINCT x) is supported)", strings.ToUpper(fn))
	}
	if len(x.Args) != 1 || x.Order != nil {
		return nil, c.errAt(pos, "%s takes one argument", strings.ToUpper(fn))
	}
	spec := &aggSpec{fn: fn, text: restore(x)}
	if x.Distinct {
		spec.fn = "count_distinct"
	}
	for i, prev := range a.aggs { // the same call twice: one accumulator
		if prev.text == spec.text {
			idx := len(a.groups) + i
			return &expr{text: spec.text, key: spec.text, slots: map[int]bool{}, groupRef: -1, eval: func(x *evalCtx) any { return x.vals[idx] }}, nil
		}
	}
	if v, ok := x.Args[0].(ast.ValueExpr); ok && fn == "count" && !x.Distinct && v.GetValue() != nil {
		spec.star = true // COUNT(*) (the parser's 1) or COUNT(constant)
	} else {
		arg, err := c.expr(x.Args[0], a.rowScope)
		if err != nil {
			return nil, err
		}
		spec.arg = arg
	}
	a.aggs = append(a.aggs, spec)
	idx := len(a.groups) + len(a.aggs) - 1
	return &expr{text: spec.text, key: spec.text, slots: map[int]bool{}, groupRef: -1, eval: func(x *evalCtx) any { return x.vals[idx] }}, nil
}

func union(es ...*expr) map[int]bool {
	m := map[int]bool{}
	for _, e := range es {
		for s := range e.slots {
			m[s] = true
		}
	}
	return m
}

func (c *compiler) exprs(ns []ast.ExprNode, sc scope) ([]*expr, error) {
	out := make([]*expr, len(ns))
	for i, n := range ns {
		e, err := c.expr(n, sc)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

func (c *compiler) exprNode(n ast.ExprNode, sc scope) (*expr, error) {
	pos := n.OriginTextPosition()
	switch x := n.(type) {
	case *ast.ParenthesesExpr:
		return c.expr(x.Expr, sc)
	case *ast.ColumnNameExpr:
		i, err := c.resolve(x)
		if err != nil {
			return nil, err
		}
		col := x.Name.Name.L
		return &expr{col: x.Name.Name.O, colAlias: c.slots[i].alias, slots: map[int]bool{i: true}, eval: func(ctx *evalCtx) any {
			r := ctx.rows[i]
			if r == nil {
				return nil
			}
			v, ok := r[col]
			if !ok {
				if v, ok = r[x.Name.Name.O]; !ok {
					return ctx.fail(fmt.Errorf("table %s (topic %s) has no column %s", ctx.slots[i].alias, ctx.slots[i].topic, col))
				}
			}
			return v
		}}, nil
	case ast.ValueExpr:
		v, err := c.literal(x)
		if err != nil {
			return nil, err
		}
		return &expr{eval: func(*evalCtx) any { return v }}, nil
	case *ast.UnaryOperationExpr:
		v, err := c.expr(x.V, sc)
		if err != nil {
			return nil, err
		}
		switch x.Op {
		case opcode.Not, opcode.Not2:
			return &expr{slots: v.slots, eval: func(ctx *evalCtx) any {
				b, ok := truth(ctx, v.eval(ctx))
				if !ok {
					return nil
				}
				return !b
			}}, nil
		case opcode.Minus:
			return &expr{slots: v.slots, eval: func(ctx *evalCtx) any {
				a := v.eval(ctx)
				if a == nil {
					return nil
				}
				if !job.IsNumber(a) {
					return ctx.fail(fmt.Errorf("-%v: not a number", a))
				}
				return job.NegNumber(a)
			}}, nil
		case opcode.Plus:
			return v, nil
		}
		return nil, c.errAt(pos, "unsupported operator %s", x.Op)
	case *ast.BinaryOperationExpr:
		l, err := c.expr(x.L, sc)
		if err != nil {
			return nil, err
		}
		r, err := c.expr(x.R, sc)
		if err != nil {
			return nil, err
		}
		f, err := binary(x.Op)
		if err != nil {
			return nil, c.errAt(pos, "%v", err)
		}
		return &expr{slots: union(l, r), eval: func(ctx *evalCtx) any { return f(ctx, l, r) }}, nil
	case *ast.IsNullExpr:
		v, err := c.expr(x.Expr, sc)
		if err != nil {
			return nil, err
		}
		not := x.Not
		return &expr{slots: v.slots, eval: func(ctx *evalCtx) any { return (v.eval(ctx) == nil) != not }}, nil
	case *ast.IsTruthExpr:
		v, err := c.expr(x.Expr, sc)
		if err != nil {
			return nil, err
		}
		want, not := x.True != 0, x.Not
		return &expr{slots: v.slots, eval: func(ctx *evalCtx) any {
			b, ok := truth(ctx, v.eval(ctx))
			return (ok && b == want) != not
		}}, nil
	case *ast.PatternInExpr:
		if x.Sel != nil {
			return nil, c.errAt(pos, "unsupported: IN (subquery)")
		}
		v, err := c.expr(x.Expr, sc)
		if err != nil {
			return nil, err
		}
		list, err := c.exprs(x.List, sc)
		if err != nil {
			return nil, err
		}
		not := x.Not
		return &expr{slots: union(append(list, v)...), eval: func(ctx *evalCtx) any {
			a := v.eval(ctx)
			sawNull := a == nil
			for _, e := range list {
				b := e.eval(ctx)
				if b == nil || a == nil {
					sawNull = true
					continue
				}
				n, ok := cmp(ctx, a, b)
				if ok && n == 0 {
					return !not
				}
			}
			if sawNull {
				return nil
			}
			return not
		}}, nil
	case *ast.BetweenExpr:
		v, err := c.expr(x.Expr, sc)
		if err != nil {
			return nil, err
		}
		lo, err := c.expr(x.Left, sc)
		if err != nil {
			return nil, err
		}
		hi, err := c.expr(x.Right, sc)
		if err != nil {
			return nil, err
		}
		ge, _ := binary(opcode.GE)
		le, _ := binary(opcode.LE)
		and, _ := binary(opcode.LogicAnd)
		not := x.Not
		return &expr{slots: union(v, lo, hi), eval: func(ctx *evalCtx) any {
			a := &expr{eval: func(ctx *evalCtx) any { return ge(ctx, v, lo) }}
			b := &expr{eval: func(ctx *evalCtx) any { return le(ctx, v, hi) }}
			res := and(ctx, a, b)
			if t, ok := res.(bool); ok && not {
				return !t
			}
			return res
		}}, nil
	case *ast.CaseExpr:
		var value *expr
		var err error
		if x.Value != nil {
			if value, err = c.expr(x.Value, sc); err != nil {
				return nil, err
			}
		}
		type when struct{ cond, res *expr }
		var whens []when
		all := []*expr{}
		for _, w := range x.WhenClauses {
			cond, err := c.expr(w.Expr, sc)
			if err != nil {
				return nil, err
			}
			res, err := c.expr(w.Result, sc)
			if err != nil {
				return nil, err
			}
			whens = append(whens, when{cond, res})
			all = append(all, cond, res)
		}
		var els *expr
		if x.ElseClause != nil {
			if els, err = c.expr(x.ElseClause, sc); err != nil {
				return nil, err
			}
			all = append(all, els)
		}
		if value != nil {
			all = append(all, value)
		}
		return &expr{slots: union(all...), eval: func(ctx *evalCtx) any {
			var v any
			if value != nil {
				v = value.eval(ctx)
			}
			for _, w := range whens {
				cv := w.cond.eval(ctx)
				if value != nil {
					if v == nil || cv == nil {
						continue
					}
					if n, ok := cmp(ctx, v, cv); ok && n == 0 {
						return w.res.eval(ctx)
					}
					continue
				}
				if b, ok := truth(ctx, cv); ok && b {
					return w.res.eval(ctx)
				}
			}
			if els != nil {
				return els.eval(ctx)
			}
			return nil
		}}, nil
	case *ast.FuncCastExpr:
		v, err := c.expr(x.Expr, sc)
		if err != nil {
			return nil, err
		}
		f, err := castFunc(x.Tp)
		if err != nil {
			return nil, c.errAt(pos, "%v", err)
		}
		return &expr{slots: v.slots, eval: func(ctx *evalCtx) any {
			a := v.eval(ctx)
			if a == nil {
				return nil
			}
			r, err := f(a)
			if err != nil {
				return ctx.fail(err)
			}
			return r
		}}, nil
	case *ast.FuncCallExpr:
		return c.funcCall(x, sc)
	case *ast.AggregateFuncExpr:
		return nil, c.errAt(pos, "aggregate function %s is not allowed here", strings.ToUpper(x.F))
	case *ast.WindowFuncExpr:
		return nil, c.errAt(pos, "unsupported: window function %s … OVER here (ROW_NUMBER is supported as Top-N: SELECT … FROM (SELECT …, ROW_NUMBER() OVER (PARTITION BY … ORDER BY …) AS rn FROM …) x WHERE rn <= N)", strings.ToUpper(x.Name))
	case *ast.SubqueryExpr, *ast.ExistsSubqueryExpr, *ast.CompareSubqueryExpr:
		return nil, c.errAt(pos, "unsupported: subqueries")
	case *ast.PatternLikeOrIlikeExpr:
		return nil, c.errAt(pos, "unsupported: LIKE")
	}
	return nil, c.errAt(pos, "unsupported expression %s", restore(n))
}

func (c *compiler) literal(x ast.ValueExpr) (any, error) {
	v := x.GetValue()
	switch y := v.(type) {
	case nil, string:
		return y, nil
	case int64:
		if ve, ok := x.(*test_driver.ValueExpr); ok && ve.Type.GetFlag()&pmysql.IsBooleanFlag != 0 {
			return y != 0, nil
		}
		return y, nil
	case uint64:
		if y <= math.MaxInt64 {
			return int64(y), nil
		}
		return job.Decimal{Unscaled: new(big.Int).SetUint64(y)}, nil
	case float64:
		return y, nil
	case *test_driver.MyDecimal:
		d, ok := job.ParseDecimal(y.String())
		if !ok {
			return nil, c.errAt(x.OriginTextPosition(), "decimal literal %s", y.String())
		}
		return d, nil
	}
	return nil, c.errAt(x.OriginTextPosition(), "unsupported literal %v (%T)", v, v)
}

func (c *compiler) funcCall(x *ast.FuncCallExpr, sc scope) (*expr, error) {
	pos := x.OriginTextPosition()
	args, err := c.exprs(x.Args, sc)
	if err != nil {
		return nil, err
	}
	name := x.FnName.L
	nargs := func(lo, hi int) error {
		if len(args) < lo || len(args) > hi {
			return c.errAt(pos, "%s takes %d to %d arguments", strings.ToUpper(name), lo, hi)
		}
		return nil
	}
	var f func(ctx *evalCtx) any
	switch name {
	case "coalesce":
		if err := nargs(1, 1<<20); err != nil {
			return nil, err
		}
		f = func(ctx *evalCtx) any {
			for _, a := range args {
				if v := a.eval(ctx); v != nil {
					return v
				}
			}
			return nil
		}
	case "nullif":
		if err := nargs(2, 2); err != nil {
			return nil, err
		}
		f = func(ctx *evalCtx) any {
			a, b := args[0].eval(ctx), args[1].eval(ctx)
			if a != nil && b != nil {
				if n, ok := cmp(ctx, a, b); ok && n == 0 {
					return nil
				}
			}
			return a
		}
	case "abs":
		if err := nargs(1, 1); err != nil {
			return nil, err
		}
		f = func(ctx *evalCtx) any {
			a := args[0].eval(ctx)
			if a == nil {
				return nil
			}
			if n, ok := cmp(ctx, a, int64(0)); ok && n < 0 {
				return job.NegNumber(a)
			}
			return a
		}
	case "round":
		if err := nargs(1, 2); err != nil {
			return nil, err
		}
		f = func(ctx *evalCtx) any {
			a := args[0].eval(ctx)
			s := int64(0)
			if len(args) == 2 {
				sv := args[1].eval(ctx)
				if sv == nil {
					return nil
				}
				var ok bool
				if s, ok = sv.(int64); !ok || s < 0 || s > 100 {
					return ctx.fail(fmt.Errorf("ROUND: scale %v is not an integer in 0..100", sv))
				}
			}
			if a == nil {
				return nil
			}
			switch v := a.(type) {
			case int64:
				return v
			case float64:
				p := math.Pow(10, float64(s))
				return math.Round(v*p) / p
			case job.Decimal:
				return roundDecimal(v, int32(s))
			}
			return ctx.fail(fmt.Errorf("ROUND(%v): not a number", a))
		}
	case "lower", "upper":
		if err := nargs(1, 1); err != nil {
			return nil, err
		}
		up := name == "upper"
		f = func(ctx *evalCtx) any {
			a := args[0].eval(ctx)
			if a == nil {
				return nil
			}
			s, ok := a.(string)
			if !ok {
				return ctx.fail(fmt.Errorf("%s(%v): not a string", strings.ToUpper(name), a))
			}
			if up {
				return strings.ToUpper(s)
			}
			return strings.ToLower(s)
		}
	default:
		return nil, c.errAt(pos, "unsupported function %s (supported: COALESCE, NULLIF, ABS, ROUND, LOWER, UPPER, CAST)", strings.ToUpper(x.FnName.O))
	}
	return &expr{slots: union(args...), eval: f}, nil
}

// truth reads a boolean operand: nil is UNKNOWN (ok false).
func truth(ctx *evalCtx, v any) (bool, bool) {
	switch b := v.(type) {
	case nil:
		return false, false
	case bool:
		return b, true
	}
	ctx.fail(fmt.Errorf("%v (%T) is not a boolean", v, v))
	return false, false
}

// cmp compares two non-NULL values; values of different kinds are an
// error (as PostgreSQL's), not UNKNOWN.
func cmp(ctx *evalCtx, a, b any) (int, bool) {
	n, ok := job.Compare(a, b)
	if !ok {
		ctx.fail(fmt.Errorf("cannot compare %v (%T) with %v (%T)", a, a, b, b))
	}
	return n, ok
}

type binFunc func(ctx *evalCtx, l, r *expr) any

func binary(op opcode.Op) (binFunc, error) {
	switch op {
	case opcode.LogicAnd:
		return func(ctx *evalCtx, l, r *expr) any {
			a, aok := truth(ctx, l.eval(ctx))
			if aok && !a {
				return false
			}
			b, bok := truth(ctx, r.eval(ctx))
			switch {
			case bok && !b:
				return false
			case aok && bok:
				return true
			}
			return nil
		}, nil
	case opcode.LogicOr:
		return func(ctx *evalCtx, l, r *expr) any {
			a, aok := truth(ctx, l.eval(ctx))
			if aok && a {
				return true
			}
			b, bok := truth(ctx, r.eval(ctx))
			switch {
			case bok && b:
				return true
			case aok && bok:
				return false
			}
			return nil
		}, nil
	case opcode.EQ, opcode.NE, opcode.LT, opcode.LE, opcode.GT, opcode.GE:
		return func(ctx *evalCtx, l, r *expr) any {
			a, b := l.eval(ctx), r.eval(ctx)
			if a == nil || b == nil {
				return nil
			}
			n, ok := cmp(ctx, a, b)
			if !ok {
				return nil
			}
			switch op {
			case opcode.EQ:
				return n == 0
			case opcode.NE:
				return n != 0
			case opcode.LT:
				return n < 0
			case opcode.LE:
				return n <= 0
			case opcode.GT:
				return n > 0
			}
			return n >= 0
		}, nil
	case opcode.NullEQ:
		return func(ctx *evalCtx, l, r *expr) any {
			a, b := l.eval(ctx), r.eval(ctx)
			if a == nil || b == nil {
				return a == nil && b == nil
			}
			n, ok := cmp(ctx, a, b)
			return ok && n == 0
		}, nil
	case opcode.Plus, opcode.Minus, opcode.Mul, opcode.Div, opcode.IntDiv, opcode.Mod:
		return func(ctx *evalCtx, l, r *expr) any {
			a, b := l.eval(ctx), r.eval(ctx)
			if a == nil || b == nil {
				return nil
			}
			if !job.IsNumber(a) || !job.IsNumber(b) {
				return ctx.fail(fmt.Errorf("%v %s %v: not numbers", a, op, b))
			}
			v, err := arith(op, a, b)
			if err != nil {
				return ctx.fail(err)
			}
			return v
		}, nil
	}
	return nil, fmt.Errorf("unsupported operator %s", op)
}

var errUnsupportedDiv = errors.New("unsupported: / and % of non-integer values (the result's scale is not defined in this slice)")

func arith(op opcode.Op, a, b any) (any, error) {
	switch op {
	case opcode.Plus:
		return job.AddNumbers(a, b), nil
	case opcode.Minus:
		return job.AddNumbers(a, job.NegNumber(b)), nil
	case opcode.Mul:
		return mulNumbers(a, b), nil
	}
	x, xi := a.(int64)
	y, yi := b.(int64)
	if !xi || !yi {
		xf, xok := a.(float64)
		yf, yok := b.(float64)
		if (xok || yok) && op == opcode.Div {
			if !xok {
				xf = toFloat(a)
			}
			if !yok {
				yf = toFloat(b)
			}
			return xf / yf, nil
		}
		return nil, errUnsupportedDiv
	}
	if y == 0 {
		return nil, errors.New("division by zero")
	}
	if op == opcode.Mod {
		if y == -1 {
			return int64(0), nil
		}
		return x % y, nil
	}
	if x == math.MinInt64 && y == -1 {
		return job.NegNumber(x), nil
	}
	return x / y, nil // truncated, as SQL's integer division
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case job.Decimal:
		return x.Float()
	}
	return math.NaN()
}

// mulNumbers is a×b: int64 while it fits, a float64 with a float64, else
// the exact Decimal product.
func mulNumbers(a, b any) any {
	x, xi := a.(int64)
	y, yi := b.(int64)
	if xi && yi {
		hi, lo := bits.Mul64(absU(x), absU(y))
		if hi == 0 && lo <= math.MaxInt64 {
			p := int64(lo)
			if (x < 0) != (y < 0) {
				p = -p
			}
			return p
		}
	}
	_, xf := a.(float64)
	_, yf := b.(float64)
	if xf || yf {
		return toFloat(a) * toFloat(b)
	}
	d, _ := job.ToDecimal(a)
	e, _ := job.ToDecimal(b)
	return job.Decimal{Unscaled: new(big.Int).Mul(d.Unscaled, e.Unscaled), Scale: d.Scale + e.Scale}
}

func absU(x int64) uint64 {
	if x < 0 {
		return uint64(-(x + 1)) + 1
	}
	return uint64(x)
}

// roundDecimal rounds d half away from zero to scale s (PostgreSQL's
// numeric round, Flink's HALF_UP).
func roundDecimal(d job.Decimal, s int32) job.Decimal {
	if d.Scale <= s {
		return d.Rescale(s)
	}
	div := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale-s)), nil)
	q, r := new(big.Int).QuoRem(d.Unscaled, div, new(big.Int))
	if new(big.Int).Abs(new(big.Int).Lsh(r, 1)).Cmp(div) >= 0 {
		if d.Unscaled.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return job.Decimal{Unscaled: q, Scale: s}
}

// castFunc is CAST(… AS tp) of a non-NULL value.
func castFunc(tp *types.FieldType) (func(any) (any, error), error) {
	switch tp.GetType() {
	case pmysql.TypeNewDecimal:
		flen, dec := tp.GetFlen(), tp.GetDecimal()
		if flen == types.UnspecifiedLength {
			flen = 10
		}
		if dec == types.UnspecifiedLength {
			dec = 0
		}
		limit := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(flen)), nil)
		return func(v any) (any, error) {
			var d job.Decimal
			var ok bool
			if s, isStr := v.(string); isStr {
				d, ok = job.ParseDecimal(strings.TrimSpace(s))
			} else {
				d, ok = job.ToDecimal(v)
			}
			if !ok {
				return nil, fmt.Errorf("CAST(%v AS DECIMAL): not a number", v)
			}
			r := roundDecimal(d, int32(dec))
			if new(big.Int).Abs(r.Unscaled).Cmp(limit) >= 0 {
				return nil, fmt.Errorf("CAST(%v AS DECIMAL(%d,%d)): numeric field overflow", v, flen, dec)
			}
			return r, nil
		}, nil
	case pmysql.TypeLonglong:
		unsigned := tp.GetFlag()&pmysql.UnsignedFlag != 0
		return func(v any) (any, error) {
			var r any
			switch x := v.(type) {
			case int64:
				r = x
			case float64:
				r = job.JSONNumber(strconv.FormatFloat(math.Round(x), 'f', 0, 64))
			case job.Decimal:
				d := roundDecimal(x, 0)
				if !d.Unscaled.IsInt64() {
					return nil, fmt.Errorf("CAST(%v AS SIGNED): out of range", v)
				}
				r = d.Unscaled.Int64()
			case string:
				n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
				if err != nil {
					return nil, fmt.Errorf("CAST(%q AS SIGNED): %w", x, err)
				}
				r = n
			case bool:
				if x {
					r = int64(1)
				} else {
					r = int64(0)
				}
			}
			n, ok := r.(int64)
			if !ok {
				return nil, fmt.Errorf("CAST(%v AS SIGNED): out of range", v)
			}
			if unsigned && n < 0 {
				return nil, fmt.Errorf("CAST(%v AS UNSIGNED): negative", v)
			}
			return n, nil
		}, nil
	case pmysql.TypeVarString, pmysql.TypeString, pmysql.TypeVarchar:
		if tp.GetFlen() != types.UnspecifiedLength {
			return nil, errors.New("unsupported: CAST AS CHAR(n) (use CAST(x AS CHAR))")
		}
		return func(v any) (any, error) {
			switch x := v.(type) {
			case string:
				return x, nil
			case int64:
				return strconv.FormatInt(x, 10), nil
			case job.Decimal:
				return x.String(), nil
			case float64:
				return strconv.FormatFloat(x, 'g', -1, 64), nil
			case bool:
				return strconv.FormatBool(x), nil
			}
			return fmt.Sprint(v), nil
		}, nil
	case pmysql.TypeDouble, pmysql.TypeFloat:
		return func(v any) (any, error) {
			switch x := v.(type) {
			case string:
				return strconv.ParseFloat(strings.TrimSpace(x), 64)
			case bool:
				return nil, fmt.Errorf("CAST(%v AS DOUBLE)", v)
			}
			return toFloat(v), nil
		}, nil
	}
	return nil, fmt.Errorf("unsupported: CAST to %s (supported: DECIMAL(p,s), SIGNED, UNSIGNED, CHAR, DOUBLE)", tp.String())
}

// appendKey appends an identity of v for grouping and join keys: equal
// numbers of any kind (1, 1.0, 1.00) have one key.
func appendKey(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, 'N', 0)
	case string:
		b = append(b, 's')
		b = strconv.AppendInt(b, int64(len(x)), 10)
		b = append(b, ':')
		return append(b, x...)
	case bool:
		if x {
			return append(b, 'T', 0)
		}
		return append(b, 'F', 0)
	case int64:
		b = append(b, 'n')
		b = strconv.AppendInt(b, x, 10)
		return append(b, 0)
	case float64:
		if d, ok := job.ToDecimal(x); ok {
			return appendKey(b, d)
		}
		b = append(b, 'f')
		b = strconv.AppendFloat(b, x, 'g', -1, 64)
		return append(b, 0)
	case job.Decimal:
		if x.Unscaled.IsInt64() && x.Scale >= 0 { // no big.Int arithmetic
			u, sc := x.Unscaled.Int64(), x.Scale
			for sc > 0 && u%10 == 0 {
				u /= 10
				sc--
			}
			if sc == 0 || u == 0 {
				return appendKey(b, u)
			}
			b = append(b, 'n')
			b = job.Decimal{Unscaled: big.NewInt(u), Scale: sc}.AppendString(b)
			return append(b, 0)
		}
		d := x.Canonical()
		if d.Scale == 0 && d.Unscaled.IsInt64() {
			return appendKey(b, d.Unscaled.Int64())
		}
		b = append(b, 'n')
		b = append(b, d.String()...)
		return append(b, 0)
	}
	return append(append(b, 'x'), fmt.Sprint(v)...)
}

// appendJSON appends v as JSON: numbers with their exact digits.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v has no JSON number", x)
		}
		return strconv.AppendFloat(b, x, 'g', -1, 64), nil
	case job.Decimal:
		return x.AppendString(b), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case string:
		return appendJSONString(b, x), nil
	}
	j, err := json.Marshal(v)
	return append(b, j...), err
}

// appendJSONString appends s as a JSON string (printable ASCII as it is).
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			j, _ := json.Marshal(s)
			return append(b, j...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
