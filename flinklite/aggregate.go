package flinklite

// AggregateFunction folds the elements of a window into an accumulator, as
// Flink's AggregateFunction<IN, ACC, OUT>. Accumulators go into checkpoints
// as JSON, so A must round-trip through encoding/json. Add and Merge may
// modify and return their accumulator argument.
type AggregateFunction[T, A, O any] interface {
	CreateAccumulator() A
	Add(v T, acc A) A
	GetResult(acc A) O
	// Merge combines two accumulators (session windows merge theirs).
	Merge(a, b A) A
}

// RetractingAggregateFunction is an AggregateFunction that can take an
// element back out (Flink Table's AggregateFunction.retract), needed for
// retractions (Debezium updates and deletes). A retraction reaching an
// aggregate without Retract fails the job with ErrNotRetractable.
type RetractingAggregateFunction[T, A, O any] interface {
	AggregateFunction[T, A, O]
	Retract(v T, acc A) A
}

// Number is the constraint of the numeric aggregates.
type Number interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

type countAgg[T any] struct{}

// Count counts the elements of a window (Flink SQL COUNT(*)); retractions
// decrement it.
func Count[T any]() RetractingAggregateFunction[T, int64, int64] { return countAgg[T]{} }

func (countAgg[T]) CreateAccumulator() int64     { return 0 }
func (countAgg[T]) Add(_ T, acc int64) int64     { return acc + 1 }
func (countAgg[T]) Retract(_ T, acc int64) int64 { return acc - 1 }
func (countAgg[T]) GetResult(acc int64) int64    { return acc }
func (countAgg[T]) Merge(a, b int64) int64       { return a + b }

type sumAgg[T any, N Number] struct{ f func(T) N }

// Sum adds f(v) over a window (Flink SQL SUM); retractions subtract it.
func Sum[T any, N Number](f func(T) N) RetractingAggregateFunction[T, N, N] { return sumAgg[T, N]{f} }

func (sumAgg[T, N]) CreateAccumulator() N   { return 0 }
func (s sumAgg[T, N]) Add(v T, acc N) N     { return acc + s.f(v) }
func (s sumAgg[T, N]) Retract(v T, acc N) N { return acc - s.f(v) }
func (sumAgg[T, N]) GetResult(acc N) N      { return acc }
func (sumAgg[T, N]) Merge(a, b N) N         { return a + b }

// AvgAcc is the accumulator of Avg: a sum and a count.
type AvgAcc struct {
	Sum   float64 `json:"sum"`
	Count int64   `json:"count"`
}

type avgAgg[T any, N Number] struct{ f func(T) N }

// Avg is the mean of f(v) over a window (Flink SQL AVG, as float64); 0 for
// a window whose elements were all retracted. Retractions remove f(v).
func Avg[T any, N Number](f func(T) N) RetractingAggregateFunction[T, AvgAcc, float64] {
	return avgAgg[T, N]{f}
}

func (avgAgg[T, N]) CreateAccumulator() AvgAcc { return AvgAcc{} }
func (a avgAgg[T, N]) Add(v T, acc AvgAcc) AvgAcc {
	return AvgAcc{Sum: acc.Sum + float64(a.f(v)), Count: acc.Count + 1}
}
func (a avgAgg[T, N]) Retract(v T, acc AvgAcc) AvgAcc {
	return AvgAcc{Sum: acc.Sum - float64(a.f(v)), Count: acc.Count - 1}
}
func (avgAgg[T, N]) GetResult(acc AvgAcc) float64 {
	if acc.Count == 0 {
		return 0
	}
	return acc.Sum / float64(acc.Count)
}
func (avgAgg[T, N]) Merge(a, b AvgAcc) AvgAcc {
	return AvgAcc{Sum: a.Sum + b.Sum, Count: a.Count + b.Count}
}

// ExtremumAcc is the accumulator of Min and Max; Set is false for an empty
// window.
type ExtremumAcc[N Number] struct {
	Value N    `json:"value"`
	Set   bool `json:"set"`
}

type extremumAgg[T any, N Number] struct {
	f    func(T) N
	less bool
}

// Min is the smallest f(v) in a window (Flink SQL MIN; 0 for an empty
// window). It does not support retractions: use a KeyedProcess with
// MapState for a retractable minimum.
func Min[T any, N Number](f func(T) N) AggregateFunction[T, ExtremumAcc[N], N] {
	return extremumAgg[T, N]{f: f, less: true}
}

// Max is the largest f(v) in a window (Flink SQL MAX; 0 for an empty
// window). Not retractable, as Min.
func Max[T any, N Number](f func(T) N) AggregateFunction[T, ExtremumAcc[N], N] {
	return extremumAgg[T, N]{f: f}
}

func (extremumAgg[T, N]) CreateAccumulator() ExtremumAcc[N] { return ExtremumAcc[N]{} }
func (m extremumAgg[T, N]) Add(v T, acc ExtremumAcc[N]) ExtremumAcc[N] {
	return m.Merge(acc, ExtremumAcc[N]{Value: m.f(v), Set: true})
}
func (extremumAgg[T, N]) GetResult(acc ExtremumAcc[N]) N { return acc.Value }
func (m extremumAgg[T, N]) Merge(a, b ExtremumAcc[N]) ExtremumAcc[N] {
	switch {
	case !a.Set:
		return b
	case !b.Set:
		return a
	case m.less == (b.Value < a.Value):
		return b
	default:
		return a
	}
}

type distinctAgg[T any, D comparable] struct{ f func(T) D }

// DistinctCount is the number of distinct f(v) in a window (Flink SQL
// COUNT(DISTINCT …)). The accumulator counts each value's occurrences, so
// retractions are exact. D must be a string or integer type to be
// checkpointed (a JSON object key).
func DistinctCount[T any, D comparable](f func(T) D) RetractingAggregateFunction[T, map[D]int64, int64] {
	return distinctAgg[T, D]{f}
}

func (distinctAgg[T, D]) CreateAccumulator() map[D]int64 { return map[D]int64{} }
func (d distinctAgg[T, D]) Add(v T, acc map[D]int64) map[D]int64 {
	if acc == nil {
		acc = map[D]int64{}
	}
	acc[d.f(v)]++
	return acc
}
func (d distinctAgg[T, D]) Retract(v T, acc map[D]int64) map[D]int64 {
	k := d.f(v)
	if acc[k]--; acc[k] <= 0 {
		delete(acc, k)
	}
	return acc
}
func (distinctAgg[T, D]) GetResult(acc map[D]int64) int64 { return int64(len(acc)) }
func (distinctAgg[T, D]) Merge(a, b map[D]int64) map[D]int64 {
	if a == nil {
		a = map[D]int64{}
	}
	for k, n := range b {
		a[k] += n
	}
	return a
}
