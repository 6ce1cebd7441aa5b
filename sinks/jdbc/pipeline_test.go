package jdbc

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
)

// changeRecord is a Debezium envelope (op c/u/d) or a tombstone (op
// "tombstone") for key id of rowSchema's table, with name and big set.
func changeRecord(off int64, op string, id int32, name string) *connect.SinkRecord {
	keyS, valS, envS := rowSchema()
	rec := &connect.SinkRecord{Topic: "srv.public.t", Offset: off, KeySchema: keyS, Key: connect.NewStruct(keyS).Put("id", id)}
	if op == "tombstone" {
		return rec
	}
	src := connect.NewStruct(envS.Field("source").Schema).Put("db", "src").Put("schema", "public").Put("table", "t")
	row := connect.NewStruct(valS).Put("id", id).Put("name", name).Put("big", "big-"+name)
	env := connect.NewStruct(envS).Put("op", op).Put("source", src)
	if op == "d" {
		env.Put("before", row)
	} else {
		env.Put("after", row)
	}
	rec.ValueSchema, rec.Value = envS, env
	return rec
}

// TestJdbcSinkGroupCommit: batches Put hands over while a transaction is
// being written queue behind it and are committed together by the writer
// (pipeline.go), in Put order: per key the last change of the last Put
// wins and a delete followed by a create leaves the created row, as when
// each Put is its own transaction (Debezium's JDBC sink: changes of a key
// applied in offset order). The first write is held by a table lock so
// that the queueing is observed deterministically; a Put finding the
// queue full (txRowsMax × batch.size rows) waits and gives up with its
// context. Kafka Connect commits offsets only after Flush, which must
// leave everything written.
func TestJdbcSinkGroupCommit(t *testing.T) {
	ctx := context.Background()
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(ctx, "target"); err != nil {
		t.Fatal(err)
	}
	cfg := sinkCfg(fmt.Sprintf("jdbc:postgresql://%s:%d/target?sslmode=disable", pg.Host, pg.Port))
	cfg["connection.username"] = pg.User
	task := &Task{}
	if err := task.Start(ctx, nil, cfg); err != nil {
		t.Fatal(err)
	}
	defer task.Stop()
	off := int64(0)
	rec := func(op string, id int32, name string) *connect.SinkRecord {
		off++
		return changeRecord(off, op, id, name)
	}
	// Create the table (schema.evolution=basic) so that later Puts need
	// no catalog query while the table is locked.
	if err := task.Put(ctx, []*connect.SinkRecord{rec("c", 1, "a")}); err != nil {
		t.Fatal(err)
	}
	if err := task.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := pg.Connect(ctx, "target")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	lock, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(ctx, `LOCK TABLE public_t_copy IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	puts := [][]*connect.SinkRecord{
		{rec("u", 1, "b"), rec("c", 2, "x")}, // written first: blocked by the lock
		{rec("u", 1, "c"), rec("c", 3, "y")},
		{rec("d", 1, "c"), rec("tombstone", 1, ""), rec("u", 3, "y2")},
		{rec("c", 1, "d"), rec("d", 2, "x"), rec("tombstone", 2, "")},
		{rec("u", 3, "y3"), rec("c", 4, "z")},
	}
	for i, p := range puts {
		if err := task.Put(ctx, p); err != nil {
			t.Fatalf("put %d: %v", i, err)
		}
	}
	f := task.inflight
	if f == nil {
		t.Fatal("no transaction in flight while the table is locked")
	}
	f.mu.Lock()
	queued, rows := len(f.queue), f.queued
	f.mu.Unlock()
	// Puts 2..5 after collapse per Put: 2 + 2 (delete of 1, upsert of 3) + 2 + 2 rows.
	if queued != 4 || rows != 8 {
		t.Fatalf("queued %d transactions of %d rows behind the locked write, want 4 of 8", queued, rows)
	}
	// batch.size=2: the queue holds at most txRowsMax*2 = 20 rows; fill
	// it, then one more Put must wait and give up with its context.
	for i := 0; i < 6; i++ {
		if err := task.Put(ctx, []*connect.SinkRecord{rec("u", 4, fmt.Sprintf("z%d", i)), rec("u", 3, fmt.Sprintf("y%d", i+4))}); err != nil {
			t.Fatalf("filling put %d: %v", i, err)
		}
	}
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err = task.Put(short, []*connect.SinkRecord{rec("u", 4, "never")})
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("put into a full queue: %v, want context.DeadlineExceeded", err)
	}
	if err := lock.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := task.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if task.inflight != nil || len(task.unwritten) != 0 {
		t.Fatalf("after flush: in flight %v, %d unwritten", task.inflight != nil, len(task.unwritten))
	}
	var got string
	if err := conn.QueryRow(ctx, `SELECT string_agg(id||'|'||name||'|'||big, ';' ORDER BY id) FROM public_t_copy`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	// Key 1: b, c, deleted, created as d. Key 2: created, deleted. Key 3
	// and 4: their last update of the filling Puts (the refused Put wrote
	// nothing).
	if want := "1|d|big-d;3|y9|big-y9;4|z5|big-z5"; got != want {
		t.Fatalf("rows %q, want %q", got, want)
	}
}
