package job

import (
	"testing"

	"github.com/connectd/connectd/flinklite"
)

// BenchmarkRepartitionRow is the per-row cost the repartition stage adds
// to a distributed job whose keyBy is not the input key: the row (the
// shop_orders row of the integration tests, 4 fields) encoded into its
// repartition record (key and value) and decoded by the window stage.
// The Kafka round trip itself is not included.
func BenchmarkRepartitionRow(b *testing.B) {
	s := &Spec{KeyBy: []string{"customer"}}
	enc := repartitionEncoder(s)
	env := flinklite.NewEnv()
	in := flinklite.NewInput[flinklite.Message](env, 1)
	rows := 0
	flinklite.Sink(fromRepartition(env, in.Stream()), func(flinklite.Change[Row]) { rows++ })
	row := Row{Fields: map[string]any{"id": 42.0, "customer": "c3", "amount": 417.0, "created_at": "2026-01-01T00:07:00Z"}, Time: 1767225620000}
	b.ReportAllocs()
	for b.Loop() {
		k, v, err := enc(flinklite.Change[Row]{Value: row})
		if err != nil {
			b.Fatal(err)
		}
		if err := in.Emit(0, flinklite.Message{Key: k, Value: v}); err != nil {
			b.Fatal(err)
		}
	}
	if rows != b.N {
		b.Fatalf("decoded %d rows of %d", rows, b.N)
	}
}
