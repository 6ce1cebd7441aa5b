package job

import (
	"encoding/json"

	"github.com/connectd/connectd/flinklite"
)

// Acc is the accumulator of a spec's aggregates for one window and key:
// the row count (a window whose rows were all retracted is empty, and its
// result row is deleted) and one accumulator per aggregate.
type Acc struct {
	Rows int64    `json:"rows"`
	Aggs []aggAcc `json:"aggs"`
}

// aggAcc holds what any of the functions needs: N non-NULL values, their
// Sum, and for min, max and distinctCount the multiset of values (JSON of
// the value → occurrences), so that a retraction can remove one.
type aggAcc struct {
	N      int64            `json:"n,omitempty"`
	Sum    float64          `json:"sum,omitempty"`
	Values map[string]int64 `json:"values,omitempty"`
}

// Result is one window's aggregates: Rows and one value per aggregate, in
// the spec's order (nil for min/max/avg/sum of no value, as SQL).
type Result struct {
	Rows   int64 `json:"rows"`
	Values []any `json:"values"`
}

// specAggregate computes the spec's aggregates (Flink's retracting
// built-in aggregate functions: COUNT, SUM, MIN and MAX with retraction,
// AVG, COUNT DISTINCT).
type specAggregate struct{ aggs []AggregateSpec }

var _ flinklite.RetractingAggregateFunction[Row, Acc, Result] = specAggregate{}

func (a specAggregate) keepsValues(i int) bool {
	switch a.aggs[i].Function {
	case "min", "max", "distinctCount":
		return true
	}
	return false
}

func (a specAggregate) CreateAccumulator() Acc {
	acc := Acc{Aggs: make([]aggAcc, len(a.aggs))}
	for i := range a.aggs {
		if a.keepsValues(i) {
			acc.Aggs[i].Values = map[string]int64{}
		}
	}
	return acc
}

func (a specAggregate) Add(r Row, acc Acc) Acc { return a.fold(r, acc, 1) }

func (a specAggregate) Retract(r Row, acc Acc) Acc { return a.fold(r, acc, -1) }

func (a specAggregate) fold(r Row, acc Acc, sign int64) Acc {
	acc.Rows += sign
	for i, s := range a.aggs {
		if s.Field == "" { // count(*)
			acc.Aggs[i].N += sign
			continue
		}
		v := r.Fields[s.Field]
		if v == nil {
			continue
		}
		g := &acc.Aggs[i]
		g.N += sign
		if f, ok := v.(float64); ok && (s.Function == "sum" || s.Function == "avg") {
			g.Sum += float64(sign) * f
		}
		if a.keepsValues(i) {
			if g.Values == nil {
				g.Values = map[string]int64{}
			}
			k := valueKey(v)
			if g.Values[k] += sign; g.Values[k] <= 0 {
				delete(g.Values, k)
			}
		}
	}
	return acc
}

func valueKey(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (a specAggregate) GetResult(acc Acc) Result {
	res := Result{Rows: acc.Rows, Values: make([]any, len(a.aggs))}
	for i, s := range a.aggs {
		g := acc.Aggs[i]
		switch s.Function {
		case "count":
			res.Values[i] = float64(g.N)
		case "sum":
			if g.N > 0 {
				res.Values[i] = g.Sum
			}
		case "avg":
			if g.N > 0 {
				res.Values[i] = g.Sum / float64(g.N)
			}
		case "distinctCount":
			res.Values[i] = float64(len(g.Values))
		case "min", "max":
			var best any
			for k := range g.Values {
				var v any
				if json.Unmarshal([]byte(k), &v) != nil {
					continue
				}
				if best == nil {
					best = v
					continue
				}
				n, ok := compare(v, best)
				if ok && (s.Function == "min" && n < 0 || s.Function == "max" && n > 0) {
					best = v
				}
			}
			res.Values[i] = best
		}
	}
	return res
}

func (a specAggregate) Merge(x, y Acc) Acc {
	out := a.CreateAccumulator()
	out.Rows = x.Rows + y.Rows
	for i := range a.aggs {
		for _, src := range []aggAcc{x.Aggs[i], y.Aggs[i]} {
			out.Aggs[i].N += src.N
			out.Aggs[i].Sum += src.Sum
			for k, n := range src.Values {
				out.Aggs[i].Values[k] += n
			}
		}
	}
	return out
}
