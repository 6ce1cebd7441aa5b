package job

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/connectd/connectd/flinklite"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Session windows and the late side output from a spec: clicks of a user
// at 0, 20 and 40 ms with a 50 ms gap make one session [0, 90) (Flink's
// EventTimeSessionWindows: [first, last + gap), merged), closed when a
// click at 10 s moves the watermark past it; a click at 30 ms arriving
// after that is later than allowedLateness (0) and goes to the lateOutput
// topic, with its event time, instead of being dropped.
func TestSpecSessionWindowAndLateOutput(t *testing.T) {
	ctx, brokers := seededCluster(t, 1, "clicks", 20*time.Second)
	in, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic("clicks"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	produce := func(cs ...click) {
		for _, c := range cs {
			v, _ := json.Marshal(c)
			if err := in.ProduceSync(ctx, &kgo.Record{Value: v}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	spec, err := ParseSpec([]byte(`{"id": "sessions", "source": {"topics": ["clicks"], "format": "json"},
		"eventTime": {"field": "at"}, "keyBy": ["user"], "window": {"type": "session", "gap": "50ms"},
		"aggregates": [{"function": "count"}, {"function": "min", "field": "amount"}],
		"lateOutput": {"topic": "late"}, "sinks": {"kafka": {"topic": "sessions"}}, "checkpoint": {"interval": "50ms"}}`))
	if err != nil {
		t.Fatal(err)
	}
	env := flinklite.NewEnv()
	if err := Compile(ctx, env, spec, brokers); err != nil {
		t.Fatal(err)
	}
	jctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- env.Run(jctx, flinklite.RunConfig{JobID: "sessions", Brokers: brokers, CheckpointDir: t.TempDir(), CheckpointInterval: 50 * time.Millisecond})
	}()
	produce(click{User: "a", Amount: 5, At: 0}, click{User: "a", Amount: 3, At: 20}, click{User: "a", Amount: 8, At: 40}, click{User: "z", At: 10_000})

	first := func(topic string) *kgo.Record {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		for ctx.Err() == nil {
			var got *kgo.Record
			pctx, pcancel := context.WithTimeout(ctx, 300*time.Millisecond)
			cl.PollFetches(pctx).EachRecord(func(r *kgo.Record) {
				if got == nil {
					got = r
				}
			})
			pcancel()
			if got != nil {
				return got
			}
		}
		t.Fatalf("nothing committed to %s", topic)
		return nil
	}
	r := first("sessions")
	if k, v := string(r.Key), string(r.Value); k != `{"window_start":0,"window_end":90,"user":"a"}` ||
		v != `{"window_start":0,"window_end":90,"user":"a","count":3,"min_amount":3,"firing":0}` {
		t.Fatalf("session result %s → %s", k, v)
	}
	produce(click{User: "a", Amount: 1, At: 30})
	late := first("late")
	var lv map[string]any
	if err := json.Unmarshal(late.Value, &lv); err != nil {
		t.Fatal(err)
	}
	if lv["user"] != "a" || lv["event_time"] != 30.0 || lv["retract"] != false {
		t.Fatalf("late record %s", late.Value)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if m := env.Metrics(); m.NumLateRecordsSideOutput != 1 || m.NumLateRecordsDropped != 0 {
		t.Fatalf("late records: %+v", m)
	}
}
