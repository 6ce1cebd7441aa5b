package runtime

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Status records carry their writer's group generation, and a stale one
// loses as in Kafka Connect 4.3's KafkaStatusBackingStore (readTaskStatus
// and CacheEntry.canWriteSafely, read from connect-runtime-4.3.0.jar): an
// UNASSIGNED task record older than the RUNNING one is ignored; a FAILED
// status is not written over another worker's status from a later
// generation, while RUNNING always is.
func TestStatusRecordsAreGenerationAware(t *testing.T) {
	dir, kafka := t.TempDir(), freeAddr(t)
	w := startTestWorker(t, dir, kafka, &counterShared{})
	defer w.Close()
	h := w.Herder
	ctx := context.Background()
	if _, err := h.CreateConnector(ctx, "counter", map[string]string{"connector.class": "test.CounterSource", "topic": "gen", "count": "5"}); err != nil {
		t.Fatal(err)
	}
	taskKey := taskStatusKey(TaskID{"counter", 0})
	status := func(key string) Status {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.statuses[key]
	}
	waitFor(t, func() bool { return status(taskKey).State == StateRunning })
	running := status(taskKey)
	if running.Generation < 1 || running.WorkerID != h.workerID {
		t.Fatalf("our RUNNING status %+v: no generation", running)
	}
	// The record as written to the topic carries generation and version.
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafka), kgo.DefaultProduceTopic("connect-status"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(key string, v map[string]any) {
		t.Helper()
		b, _ := json.Marshal(v)
		if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(key), Value: b}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	// sync waits until the herder read a record produced after the
	// previous ones (per key partitioning differs, so wait on every
	// partition's end through the status log).
	sync := func() {
		t.Helper()
		c, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := h.statusLog.ReadToEnd(c); err != nil {
			t.Fatal(err)
		}
	}

	// A zombie's UNASSIGNED from an older generation is ignored.
	produce(taskKey, map[string]any{"state": "UNASSIGNED", "trace": nil, "worker_id": "zombie:8083", "generation": running.Generation - 1})
	sync()
	if got := status(taskKey); got.State != StateRunning || got.WorkerID != h.workerID {
		t.Fatalf("stale UNASSIGNED applied: %+v", got)
	}
	// One from the same generation too (the RUNNING one's is not older).
	produce(taskKey, map[string]any{"state": "UNASSIGNED", "trace": nil, "worker_id": "zombie:8083", "generation": running.Generation})
	sync()
	if got := status(taskKey); got.State != StateRunning {
		t.Fatalf("same-generation UNASSIGNED applied: %+v", got)
	}
	// A later generation's UNASSIGNED wins.
	produce(taskKey, map[string]any{"state": "UNASSIGNED", "trace": nil, "worker_id": "other:8083", "generation": running.Generation + 3})
	sync()
	if got := status(taskKey); got.State != StateUnassigned || got.WorkerID != "other:8083" || got.Generation != running.Generation+3 {
		t.Fatalf("newer UNASSIGNED not applied: %+v", got)
	}
	// Any other state is applied whatever its generation (readTaskStatus
	// filters UNASSIGNED only).
	produce(taskKey, map[string]any{"state": "RUNNING", "trace": nil, "worker_id": "other:8083", "generation": running.Generation + 4})
	sync()

	// Writing: our FAILED (generation running.Generation) is not written
	// over other:8083's later RUNNING while other:8083 is a member (it
	// owns a task in the assignment) ...
	h.mu.Lock()
	h.asg.TaskOwners["other-0"] = "http://other:8083"
	h.mu.Unlock()
	h.putStatus(taskKey, StateFailed, "boom")
	sync()
	if got := status(taskKey); got.State != StateRunning || got.WorkerID != "other:8083" {
		t.Fatalf("FAILED written over a later generation's status: %+v", got)
	}
	// ... nor sent to the topic: a fresh reader sees other's record last.
	last := lastStatusRecord(t, kafka, taskKey)
	if last["worker_id"] != "other:8083" || last["state"] != "RUNNING" {
		t.Fatalf("last record in the topic: %v", last)
	}
	h.mu.Lock()
	delete(h.asg.TaskOwners, "other-0") // the placement as the group made it
	h.mu.Unlock()
	// A RUNNING write (put, not putSafe) always goes through.
	h.putStatus(taskKey, StateRunning, "")
	sync()
	if got := status(taskKey); got.State != StateRunning || got.WorkerID != h.workerID {
		t.Fatalf("RUNNING not written: %+v", got)
	}
	last = lastStatusRecord(t, kafka, taskKey)
	if last["worker_id"] != h.workerID || last["generation"] != float64(running.Generation) || last["version"] != "test" {
		t.Fatalf("our record: %v", last)
	}
	// Now the latest status is ours again: FAILED is written.
	h.putStatus(taskKey, StateFailed, "boom")
	if got := status(taskKey); got.State != StateFailed || got.Trace != "boom" {
		t.Fatalf("FAILED over our own status: %+v", got)
	}
	// A later generation's status from a worker that is no member (a
	// group whose generation started over) does not block FAILED.
	produce(taskKey, map[string]any{"state": "RUNNING", "trace": nil, "worker_id": "gone:8083", "generation": running.Generation + 9})
	sync()
	h.putStatus(taskKey, StateFailed, "boom again")
	sync()
	if got := status(taskKey); got.State != StateFailed || got.WorkerID != h.workerID || got.Trace != "boom again" {
		t.Fatalf("FAILED blocked by a non-member's status: %+v", got)
	}
}

// lastStatusRecord reads the status topic from the start and returns the
// last value under key.
func lastStatusRecord(t *testing.T, kafka, key string) map[string]any {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafka), kgo.ConsumeTopics("connect-status"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var last map[string]any
	for ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) {
			if string(r.Key) == key {
				last = nil
				json.Unmarshal(r.Value, &last)
			}
		})
	}
	return last
}
