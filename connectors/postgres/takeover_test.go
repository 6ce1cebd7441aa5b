package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/testenv"
	"github.com/connectd/connectd/offsets"
)

// storeReader reads a connector's offsets from the offsets topic store, as
// the worker does.
type storeReader struct {
	s    *offsets.KafkaStore
	name string
}

func (r storeReader) Offset(ctx context.Context, p map[string]any) (map[string]any, error) {
	return r.s.Get(ctx, r.name, p)
}

// walTx is one transaction read from the slot with
// pg_logical_slot_peek_binary_changes: its xid, the LSN of each change and
// the LSN of its commit message (the commit record's end), which are the
// WAL positions the walsender sends in XLogData.
type walTx struct {
	xid       int64
	changes   []int64
	commitEnd int64
	commitTS  time.Time
}

func peekTransactions(t *testing.T, pg *testenv.Postgres, db, slot, pub string) []walTx {
	t.Helper()
	c, err := pg.Connect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	rows, err := c.Query(context.Background(), `SELECT lsn, xid::text::bigint, data FROM pg_logical_slot_peek_binary_changes($1, NULL, NULL, 'proto_version', '1', 'publication_names', $2)`, slot, pub)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []walTx
	var cur *walTx
	for rows.Next() {
		var lsn pglogrepl.LSN
		var xid int64
		var data []byte
		if err := rows.Scan(&lsn, &xid, &data); err != nil {
			t.Fatal(err)
		}
		m, err := pglogrepl.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		switch m := m.(type) {
		case *pglogrepl.BeginMessage:
			cur = &walTx{xid: int64(m.Xid)}
		case *pglogrepl.InsertMessage, *pglogrepl.UpdateMessage, *pglogrepl.DeleteMessage:
			cur.changes = append(cur.changes, int64(lsn))
		case *pglogrepl.CommitMessage:
			if int64(m.TransactionEndLSN) != int64(lsn) {
				t.Fatalf("commit message at %s, end LSN %s", lsn, m.TransactionEndLSN)
			}
			cur.commitEnd, cur.commitTS = int64(lsn), m.CommitTime
			out = append(out, *cur)
			cur = nil
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTakeOverFromDebeziumOffset starts connectd on a slot a Debezium
// connector used, with the offset Debezium stored, and checks that it goes
// on exactly after the last delivered change: no loss, no replay.
//
// The offset is built as Debezium 3.6.1's PostgresOffsetContext writes it
// (testdata/debezium/pg_inventory_snapshot_stream.jsonl.offsets.jsonl): key
// ["<connector name>",{"server":"<topic.prefix>"}]; value lsn = lsn_proc =
// the LSN of the last change delivered, lsn_commit = the LSN of the last
// COMMIT received before it (PostgresStreamingChangeEventSource.commitMessage
// takes the commit message's XLogData position), txId = that change's
// transaction, ts_usec = its commit time; the slot is confirmed up to
// lsn_commit, as Debezium's commitOffset flushes lsn_commit.
func TestTakeOverFromDebeziumOffset(t *testing.T) {
	pg := testenv.PostgresT(t)
	setupShop(t, pg)
	exec(t, pg, "shop", `CREATE PUBLICATION dbz_publication FOR ALL TABLES`)
	exec(t, pg, "shop", `SELECT pg_create_logical_replication_slot('debezium', 'pgoutput')`)
	exec(t, pg, "shop", `INSERT INTO item VALUES (2, 'b')`)                                                  // tx1
	exec(t, pg, "shop", `BEGIN; INSERT INTO item VALUES (3, 'c'); INSERT INTO item VALUES (4, 'd'); COMMIT`) // tx2
	exec(t, pg, "shop", `UPDATE item SET name = 'x' WHERE id = 2`)                                           // tx3
	exec(t, pg, "shop", `INSERT INTO item VALUES (5, 'e')`)                                                  // tx4
	txs := peekTransactions(t, pg, "shop", "debezium", "dbz_publication")
	if len(txs) != 4 || len(txs[1].changes) != 2 {
		t.Fatalf("slot transactions = %+v", txs)
	}
	// Debezium confirmed the slot up to tx1's commit
	exec(t, pg, "shop", fmt.Sprintf(`SELECT pg_replication_slot_advance('debezium', '%s')`, pglogrepl.LSN(txs[0].commitEnd)))

	kf, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	store, err := offsets.OpenKafka(ctx, kf.ListenAddrs(), "connect-offsets", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	prod, err := kgo.NewClient(kgo.SeedBrokers(kf.ListenAddrs()...))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	cfg := baseConfig(pg, "shop")
	cfg["table.include.list"] = `public\.item`

	tx2 := txs[1]
	cases := []struct {
		name, value string
		want        string
	}{
		// exactly the fields listed for Debezium 3.6's streaming offset
		{"after tx2", fmt.Sprintf(`{"lsn_proc":%d,"lsn_commit":%d,"lsn":%d,"txId":%d,"ts_usec":%d}`,
			tx2.changes[1], txs[0].commitEnd, tx2.changes[1], tx2.xid, tx2.commitTS.UnixMicro()), "u:2 c:5"},
		// as the 3.6.1 capture writes it, with messageType
		{"after tx2 with messageType", fmt.Sprintf(`{"lsn_proc":%d,"messageType":"INSERT","lsn_commit":%d,"lsn":%d,"txId":%d,"ts_usec":%d}`,
			tx2.changes[1], txs[0].commitEnd, tx2.changes[1], tx2.xid, tx2.commitTS.UnixMicro()), "u:2 c:5"},
		// in the middle of tx2: its second change, then the rest
		{"inside tx2", fmt.Sprintf(`{"lsn_proc":%d,"messageType":"INSERT","lsn_commit":%d,"lsn":%d,"txId":%d,"ts_usec":%d}`,
			tx2.changes[0], txs[0].commitEnd, tx2.changes[0], tx2.xid, tx2.commitTS.UnixMicro()), "c:4 u:2 c:5"},
	}
	for _, tc := range cases {
		// the record Debezium's OffsetStorageWriter put in the offsets topic
		rec := &kgo.Record{Topic: "connect-offsets", Key: []byte(`["debezium-connector",{"server":"dbserver1"}]`), Value: []byte(tc.value)}
		if err := prod.ProduceSync(ctx, rec).FirstErr(); err != nil {
			t.Fatal(err)
		}
		task := NewTask()
		if err := task.Start(ctx, taskCtx{storeReader{store, "debezium-connector"}}, cfg); err != nil {
			t.Fatalf("%s: Start: %v", tc.name, err)
		}
		recs := pollN(t, task, len(strings.Fields(tc.want)))
		if got := ids(recs); got != tc.want {
			t.Errorf("%s: first events %s, want %s", tc.name, got, tc.want)
		}
		pollQuiet(t, task, 300*time.Millisecond)
		if got := slotFlush(t, pg, "shop"); got != txs[0].commitEnd {
			t.Errorf("%s: slot confirmed %d without a commit, want %d", tc.name, got, txs[0].commitEnd)
		}
		task.Stop()
	}
}
