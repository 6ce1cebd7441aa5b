package sql

import (
	"fmt"
	"strings"
)

// Plan is the operator plan (EXPLAIN), from the sink down to the scans.
func (q *Query) Plan() string {
	var b strings.Builder
	if q.Sink != "" {
		fmt.Fprintf(&b, "UpsertKafkaSink(topic=%s, key=[%s], columns=[%s])\n", q.Sink, strings.Join(q.KeyColumns, ", "), strings.Join(q.Columns, ", "))
	} else {
		fmt.Fprintf(&b, "Changelog(key=[%s], columns=[%s])\n", strings.Join(q.KeyColumns, ", "), strings.Join(q.Columns, ", "))
	}
	if q.branches != nil {
		b.WriteString("  UnionAll(key=[branch, branch key])\n")
		for _, br := range q.branches {
			br.explain(&b, br.plan, 2)
		}
		return b.String()
	}
	q.explain(&b, q.plan, 1)
	return b.String()
}

func texts(es []*expr) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.text
	}
	return strings.Join(s, ", ")
}

func (q *Query) explain(b *strings.Builder, n *planNode, depth int) {
	ind := strings.Repeat("  ", depth)
	switch n.kind {
	case "project":
		fmt.Fprintf(b, "%sCalc(select=[%s])\n", ind, texts(n.outs))
	case "aggregate":
		aggs := make([]string, len(n.aggs))
		for i, a := range n.aggs {
			aggs[i] = a.text
		}
		fmt.Fprintf(b, "%sGroupAggregate(groupBy=[%s], aggs=[%s]", ind, texts(n.groups), strings.Join(aggs, ", "))
		if n.having != nil {
			fmt.Fprintf(b, ", having=[%s]", n.having.text)
		}
		fmt.Fprintf(b, ", select=[%s])\n", texts(n.outs))
	case "rank":
		r := n.rank
		fmt.Fprintf(b, "%sCalc(select=[%s]", ind, texts(r.outs))
		if len(r.preds) > 0 {
			fmt.Fprintf(b, ", where=[%s]", texts(r.preds))
		}
		b.WriteString(")\n")
		order := make([]string, len(r.order))
		for i, o := range r.order {
			order[i] = o.text + " ASC"
			if r.desc[i] {
				order[i] = o.text + " DESC"
			}
		}
		fmt.Fprintf(b, "%s  Rank(strategy=RetractStrategy, rankType=ROW_NUMBER, rankRange=[1..%d] (%s), partitionBy=[%s], orderBy=[%s], select=[%s, %s], outputRankNumber=%v, state=every row of each partition, sorted)\n",
			ind, r.n, r.cond, texts(r.part), strings.Join(order, ", "), texts(r.derived), r.rnName, r.rnOut)
		q.explain(b, n.in, depth+2)
		return
	case "filter":
		fmt.Fprintf(b, "%sFilter(condition=[%s])\n", ind, n.pred.text)
	case "join":
		kind := "InnerJoin"
		if n.leftJoin {
			kind = "LeftOuterJoin"
		}
		conds := make([]string, len(n.lkeys))
		for i := range n.lkeys {
			conds[i] = n.lkeys[i].text + " = " + n.rkeys[i].text
		}
		fmt.Fprintf(b, "%s%s(on=[%s], state=rows of each side by join key)\n", ind, kind, strings.Join(conds, " AND "))
	case "scan":
		s := q.slots[n.slot]
		fmt.Fprintf(b, "%sChangelogScan(table=%s, alias=%s, topic=%s, format=debezium-json)\n", ind, s.table, s.alias, s.topic)
		return
	}
	for _, c := range []*planNode{n.in, n.left, n.right} {
		if c != nil {
			q.explain(b, c, depth+1)
		}
	}
}
