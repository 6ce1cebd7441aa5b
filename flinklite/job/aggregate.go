package job

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/connectd/connectd/flinklite"
)

// Acc is the accumulator of a spec's aggregates for one window and key:
// the row count (a window whose rows were all retracted is empty, and its
// result row is deleted) and one accumulator per aggregate.
type Acc struct {
	Rows int64    `json:"rows"`
	Aggs []aggAcc `json:"aggs"`
}

// aggAcc holds what any of the functions needs: N non-NULL values, the
// Sum of the numeric ones (nil, int64, Decimal or float64: addNumbers, so
// that sums of integers and decimals are exact), and for min, max and
// distinctCount the multiset of values (appendValue's encoding of the
// value → occurrences), so that a retraction can remove one.
type aggAcc struct {
	N      int64
	Sum    any
	Values map[string]int64
}

type aggAccJSON struct {
	N      int64            `json:"n,omitempty"`
	Sum    json.RawMessage  `json:"sum,omitempty"`
	Values map[string]int64 `json:"values,omitempty"`
}

// MarshalJSON writes {"n", "sum", "values"}, the sum in appendValue's
// encoding (its kind kept across a checkpoint).
func (g aggAcc) MarshalJSON() ([]byte, error) {
	w := aggAccJSON{N: g.N, Values: g.Values}
	if g.Sum != nil {
		b, err := appendValue(nil, g.Sum)
		if err != nil {
			return nil, err
		}
		w.Sum = b
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads MarshalJSON's form (a float sum of an earlier
// version's checkpoint reads as an int64 when integral).
func (g *aggAcc) UnmarshalJSON(b []byte) error {
	var w aggAccJSON
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	g.N, g.Values, g.Sum = w.N, w.Values, nil
	if len(w.Sum) > 0 {
		v, err := decodeValue(w.Sum)
		if err != nil {
			return fmt.Errorf("sum: %w", err)
		}
		g.Sum = v
	}
	return nil
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
		if isNumber(v) && (s.Function == "sum" || s.Function == "avg") {
			if sign < 0 {
				v = negNumber(v)
			}
			g.Sum = addNumbers(g.Sum, v)
		}
		if g.N == 0 {
			g.Sum = nil // every value retracted: no float residue stays
		}
		if a.keepsValues(i) {
			if g.Values == nil {
				g.Values = map[string]int64{}
			}
			k := valueKey(r.Fields[s.Field], s.Function == "distinctCount")
			if g.Values[k] += sign; g.Values[k] <= 0 {
				delete(g.Values, k)
			}
		}
	}
	return acc
}

// valueKey is v's key in a multiset: appendValue's encoding, a Decimal
// without trailing zeros for distinctCount (1.50 and 1.5 are one value).
func valueKey(v any, canonical bool) string {
	if d, ok := v.(Decimal); ok && canonical {
		v = d.canonical()
	}
	b, err := appendValue(nil, v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func (a specAggregate) GetResult(acc Acc) Result {
	res := Result{Rows: acc.Rows, Values: make([]any, len(a.aggs))}
	for i, s := range a.aggs {
		g := acc.Aggs[i]
		switch s.Function {
		case "count":
			res.Values[i] = g.N
		case "sum":
			if g.N > 0 {
				res.Values[i] = g.Sum
			}
		case "avg":
			if g.N > 0 {
				res.Values[i] = avgNumbers(g.Sum, g.N)
			}
		case "distinctCount":
			res.Values[i] = int64(len(g.Values))
		case "min", "max":
			// Keys in order, so that among equal values (1.5 and 1.50)
			// the result does not depend on the map's order: the
			// larger scale wins, as a DECIMAL column keeps its scale.
			keys := make([]string, 0, len(g.Values))
			for k := range g.Values {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			var best any
			for _, k := range keys {
				v, err := decodeValue([]byte(k))
				if err != nil {
					continue
				}
				if best == nil {
					best = v
					continue
				}
				n, ok := compare(v, best)
				if !ok {
					continue
				}
				if s.Function == "min" && n < 0 || s.Function == "max" && n > 0 {
					best = v
				} else if d, isDec := v.(Decimal); isDec && n == 0 {
					if b, ok := best.(Decimal); ok && d.Scale > b.Scale {
						best = v
					}
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
			out.Aggs[i].Sum = addNumbers(out.Aggs[i].Sum, src.Sum)
			for k, n := range src.Values {
				out.Aggs[i].Values[k] += n
			}
		}
	}
	return out
}
