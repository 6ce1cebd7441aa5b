package queue

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

// TestBytesBound checks the byte bound's protocol: reservations wait while
// the reserved bytes would exceed the bound, a release (in queue order)
// wakes the producer, a record larger than the bound is admitted alone,
// keepalive runs while waiting, and ctx ends a wait.
func TestBytesBound(t *testing.T) {
	if NewBytes(0) != nil {
		t.Fatal("max.queue.size.in.bytes=0 must mean no byte bound (nil)")
	}
	var unbounded *Bytes
	if err := unbounded.Reserve(context.Background(), 1<<40, 0, nil); err != nil || unbounded.Used() != 0 {
		t.Fatalf("nil bound: %v %d", err, unbounded.Used())
	}
	b := NewBytes(100)
	ctx := context.Background()
	for _, n := range []int64{60, 30} {
		if err := b.Reserve(ctx, n, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	if b.Used() != 90 {
		t.Fatalf("used %d, want 90", b.Used())
	}
	got := make(chan error, 1)
	ticks := 0
	go func() {
		got <- b.Reserve(ctx, 50, time.Millisecond, func() error { ticks++; return nil })
	}()
	select {
	case err := <-got:
		t.Fatalf("a reservation over the bound returned at once: %v (used %d)", err, b.Used())
	case <-time.After(50 * time.Millisecond):
	}
	b.Release(1) // the 60-byte record was polled: 30 + 50 fit
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if ticks == 0 {
		t.Error("keepalive never ran while the producer waited")
	}
	if b.Used() != 80 {
		t.Fatalf("used %d, want 80 (30 + 50)", b.Used())
	}
	b.Release(2)
	if b.Used() != 0 {
		t.Fatalf("used %d after releasing everything", b.Used())
	}
	if err := b.Reserve(ctx, 500, 0, nil); err != nil || b.Used() != 500 {
		t.Fatalf("an oversized record into an empty queue: %v, used %d", err, b.Used())
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := b.Reserve(cctx, 1, 0, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait past ctx: %v", err)
	}
	kerr := errors.New("connection lost")
	if err := b.Reserve(ctx, 1, time.Millisecond, func() error { return kerr }); err != kerr {
		t.Fatalf("keepalive error: %v", err)
	}
}

// TestSize checks that the estimate grows with the record's contents.
func TestSize(t *testing.T) {
	s := connect.StructSchema().Field("v", connect.Prim(connect.String, true)).Build()
	small := &connect.SourceRecord{Topic: "t", Value: &connect.Struct{Schema: s, Values: []any{"x"}}, SourceOffset: map[string]any{"lsn": int64(1)}}
	big := &connect.SourceRecord{Topic: "t", Value: &connect.Struct{Schema: s, Values: []any{string(make([]byte, 1000))}}, SourceOffset: map[string]any{"lsn": int64(1)}}
	if d := Size(big) - Size(small); d != 999 {
		t.Fatalf("Size(big) - Size(small) = %d, want 999 (the string's extra bytes)", d)
	}
}
