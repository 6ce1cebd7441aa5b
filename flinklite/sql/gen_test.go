package sql_test

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/connectd/connectd/flinklite/sql"
)

// genQuery makes a random query of the supported grammar that PostgreSQL
// runs with the same meaning: a single table, an inner join or a left
// join (either way round) of orders o and customers c, a random WHERE of
// comparisons, IS NULL, IN, BETWEEN, AND/OR/NOT; either a projection of
// random arithmetic, CASE, COALESCE, ABS, CAST expressions, or a GROUP
// BY of one or two columns with random aggregates and HAVING.
func genQuery(r *rand.Rand) string {
	g := &gen{r: r}
	var from string
	switch r.Intn(5) {
	case 0:
		from, g.tables = "orders o", "o"
	case 1:
		from, g.tables = "customers c", "c"
	case 2:
		from, g.tables = "orders o JOIN customers c ON o.customer_id = c.id", "oc"
	case 3:
		from, g.tables = "orders o LEFT JOIN customers c ON o.customer_id = c.id", "oc"
	default:
		from, g.tables = "customers c LEFT JOIN orders o ON c.id = o.customer_id", "oc"
	}
	var b strings.Builder
	agg := r.Intn(2) == 0
	var groups []string
	if agg {
		cands := g.groupCols()
		r.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
		groups = cands[:1+r.Intn(min(2, len(cands)))]
		if r.Intn(6) == 0 {
			groups = nil // a global aggregate
		}
	}
	b.WriteString("SELECT ")
	var fields []string
	if agg {
		for i, c := range groups {
			fields = append(fields, fmt.Sprintf("%s AS g%d", c, i))
		}
		for i := 0; i < 1+r.Intn(4); i++ {
			fields = append(fields, fmt.Sprintf("%s AS a%d", g.aggregate(), i))
		}
	} else {
		for i := 0; i < 1+r.Intn(4); i++ {
			fields = append(fields, fmt.Sprintf("%s AS e%d", g.value(2), i))
		}
	}
	b.WriteString(strings.Join(fields, ", "))
	b.WriteString(" FROM " + from)
	if r.Intn(3) > 0 {
		b.WriteString(" WHERE " + g.pred(2))
	}
	if agg {
		if len(groups) > 0 {
			b.WriteString(" GROUP BY " + strings.Join(groups, ", "))
		}
		if r.Intn(2) == 0 {
			b.WriteString(" HAVING " + g.havingPred())
		}
	}
	return b.String()
}

type gen struct {
	r      *rand.Rand
	tables string // "o", "c" or "oc"
}

func (g *gen) pick(xs ...string) string { return xs[g.r.Intn(len(xs))] }

func (g *gen) numCols() []string {
	var cs []string
	if strings.Contains(g.tables, "o") {
		cs = append(cs, "o.id", "o.customer_id", "o.amount", "o.amount")
	}
	if strings.Contains(g.tables, "c") {
		cs = append(cs, "c.id", "c.score", "c.score")
	}
	return cs
}

func (g *gen) groupCols() []string {
	var cs []string
	if strings.Contains(g.tables, "o") {
		cs = append(cs, "o.status", "o.customer_id")
	}
	if strings.Contains(g.tables, "c") {
		cs = append(cs, "c.region", "c.score")
	}
	return cs
}

func (g *gen) strPred() string {
	var ps []string
	if strings.Contains(g.tables, "o") {
		ps = append(ps, "o.status = 'new'", "o.status <> 'paid'", "o.status IN ('new', 'shipped')")
	}
	if strings.Contains(g.tables, "c") {
		ps = append(ps, "c.region = 'north'", "c.region IN ('south', 'east')", "c.region IS NULL")
	}
	return g.pick(ps...)
}

func (g *gen) lit() string {
	if g.r.Intn(2) == 0 {
		return fmt.Sprint(g.r.Intn(60))
	}
	return fmt.Sprintf("%d.%d", g.r.Intn(60), g.r.Intn(10))
}

// value is a numeric expression.
func (g *gen) value(depth int) string {
	if depth == 0 || g.r.Intn(3) == 0 {
		if g.r.Intn(5) == 0 {
			return g.lit()
		}
		return g.pick(g.numCols()...)
	}
	switch g.r.Intn(8) {
	case 0:
		return fmt.Sprintf("(%s + %s)", g.value(depth-1), g.value(depth-1))
	case 1:
		return fmt.Sprintf("(%s - %s)", g.value(depth-1), g.value(depth-1))
	case 2:
		return fmt.Sprintf("(%s * %d)", g.value(depth-1), g.r.Intn(5)-1)
	case 3:
		return fmt.Sprintf("COALESCE(%s, %s)", g.value(depth-1), g.lit())
	case 4:
		return fmt.Sprintf("CASE WHEN %s THEN %s ELSE %s END", g.pred(depth-1), g.value(depth-1), g.value(depth-1))
	case 5:
		return fmt.Sprintf("ABS(%s)", g.value(depth-1))
	case 6:
		return fmt.Sprintf("CAST(%s AS DECIMAL(14,1))", g.value(depth-1))
	}
	return fmt.Sprintf("(-%s)", g.value(depth-1))
}

func (g *gen) pred(depth int) string {
	if depth == 0 || g.r.Intn(3) == 0 {
		switch g.r.Intn(5) {
		case 0:
			return g.strPred()
		case 1:
			return fmt.Sprintf("%s IS %sNULL", g.pick(g.numCols()...), g.pick("", "NOT "))
		case 2:
			lo := g.r.Intn(40)
			return fmt.Sprintf("%s BETWEEN %d AND %d", g.pick(g.numCols()...), lo, lo+g.r.Intn(40))
		}
		return fmt.Sprintf("%s %s %s", g.value(1), g.pick("=", "<>", "<", "<=", ">", ">="), g.lit())
	}
	switch g.r.Intn(3) {
	case 0:
		return fmt.Sprintf("(%s AND %s)", g.pred(depth-1), g.pred(depth-1))
	case 1:
		return fmt.Sprintf("(%s OR %s)", g.pred(depth-1), g.pred(depth-1))
	}
	return fmt.Sprintf("NOT (%s)", g.pred(depth-1))
}

func (g *gen) aggregate() string {
	switch g.r.Intn(8) {
	case 7:
		return fmt.Sprintf("COUNT(DISTINCT %s)", g.value(1))
	case 0:
		return "COUNT(*)"
	case 1:
		return fmt.Sprintf("COUNT(%s)", g.value(1))
	case 2:
		return fmt.Sprintf("SUM(%s)", g.value(1))
	case 3:
		return fmt.Sprintf("MIN(%s)", g.value(1))
	case 4:
		return fmt.Sprintf("MAX(%s)", g.value(1))
	case 5:
		return fmt.Sprintf("ROUND(AVG(%s), 2)", g.value(1))
	}
	if strings.Contains(g.tables, "o") {
		return g.pick("MIN(o.status)", "MAX(o.status)")
	}
	return g.pick("MIN(c.region)", "MAX(c.region)")
}

func (g *gen) havingPred() string {
	switch g.r.Intn(3) {
	case 0:
		return fmt.Sprintf("COUNT(*) > %d", g.r.Intn(4))
	case 1:
		return fmt.Sprintf("SUM(%s) IS NOT NULL", g.pick(g.numCols()...))
	}
	return fmt.Sprintf("(MAX(%s) > %s OR COUNT(*) = 1)", g.pick(g.numCols()...), g.lit())
}

// genTopN makes a random Top-N query: over a single table or a join as
// genQuery's, a subquery of random expressions and ROW_NUMBER() OVER
// (PARTITION BY 0-2 columns ORDER BY 1-2 random keys ASC/DESC), with a
// random WHERE inside; outside rn <= N, rn < N or rn = 1, sometimes AND a
// condition on the subquery's columns, and rn in the SELECT list or not.
// The ORDER BY keys are never NULL (COALESCE: PostgreSQL sorts NULL as
// the largest value, connectd as the smallest) and end with the primary
// key of every table, so the order has no ties and PostgreSQL's result is
// the one connectd's must be.
func genTopN(r *rand.Rand) string {
	g := &gen{r: r}
	var from string
	switch r.Intn(5) {
	case 0, 1:
		from, g.tables = "orders o", "o"
	case 2:
		from, g.tables = "customers c", "c"
	case 3:
		from, g.tables = "orders o JOIN customers c ON o.customer_id = c.id", "oc"
	default:
		from, g.tables = g.pick("orders o LEFT JOIN customers c ON o.customer_id = c.id", "customers c LEFT JOIN orders o ON c.id = o.customer_id"), "oc"
	}
	var fields, names []string
	for i := 0; i < 1+r.Intn(3); i++ {
		fields = append(fields, fmt.Sprintf("%s AS v%d", g.value(2), i))
		names = append(names, fmt.Sprintf("v%d", i))
	}
	cands := g.groupCols()
	r.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	part := cands[:r.Intn(3)]
	for i, p := range part {
		if r.Intn(2) == 0 { // the partition key in the result
			fields = append(fields, fmt.Sprintf("%s AS p%d", p, i))
			names = append(names, fmt.Sprintf("p%d", i))
		}
	}
	var sortKeys []string
	if strings.Contains(g.tables, "o") {
		sortKeys = append(sortKeys, "COALESCE(o.amount, -1)", "COALESCE(o.status, '')", "COALESCE(o.customer_id, 0)")
	}
	if strings.Contains(g.tables, "c") {
		sortKeys = append(sortKeys, "COALESCE(c.score, -1)", "COALESCE(c.region, '')")
	}
	sortKeys = append(sortKeys, fmt.Sprintf("COALESCE(%s, -100)", g.value(1)))
	var order []string
	for i := 0; i < 1+r.Intn(2); i++ {
		order = append(order, g.pick(sortKeys...)+g.pick("", " ASC", " DESC"))
	}
	for _, t := range g.tables {
		order = append(order, fmt.Sprintf("COALESCE(%c.id, -1)%s", t, g.pick("", " DESC")))
	}
	over := "ORDER BY " + strings.Join(order, ", ")
	if len(part) > 0 {
		over = "PARTITION BY " + strings.Join(part, ", ") + " " + over
	}
	var b strings.Builder
	fmt.Fprintf(&b, "SELECT %s, ROW_NUMBER() OVER (%s) AS rn FROM %s", strings.Join(fields, ", "), over, from)
	if r.Intn(3) == 0 {
		b.WriteString(" WHERE " + g.pred(1))
	}
	inner := b.String()
	var outs []string
	for _, n := range names {
		if r.Intn(3) > 0 {
			outs = append(outs, n)
		}
	}
	if len(outs) == 0 || r.Intn(4) == 0 {
		outs = append(outs, fmt.Sprintf("(%s + 1) AS w", names[0]))
	}
	if r.Intn(2) == 0 {
		outs = append(outs, g.pick("rn", "rn", "rn * 10 AS rn10"))
	}
	cond := g.pick(fmt.Sprintf("rn <= %d", 1+r.Intn(4)), fmt.Sprintf("rn < %d", 2+r.Intn(3)), "rn = 1", fmt.Sprintf("%d >= rn", 1+r.Intn(3)))
	if r.Intn(3) == 0 {
		cond += fmt.Sprintf(" AND %s", g.pick(names[0]+" IS NOT NULL", fmt.Sprintf("%s > %s", names[0], g.lit()), fmt.Sprintf("(%s < %s OR %s IS NULL)", names[0], g.lit(), names[0])))
	}
	return fmt.Sprintf("SELECT %s FROM (%s) AS x WHERE %s", strings.Join(outs, ", "), inner, cond)
}

// Every generated query compiles (the generator stays inside the
// supported grammar).
func TestGeneratedQueriesCompile(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		q := genQuery(r)
		if _, err := sql.Compile("CREATE TABLE x AS "+q, nil); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		q = genTopN(r)
		if _, err := sql.Compile("CREATE TABLE x AS "+q, nil); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
