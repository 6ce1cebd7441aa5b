package integration

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// Distributed mode: three workers with one group.id on a real Apache
// Kafka broker (KRaft) share a PostgreSQL connector. The connector is
// created on a worker that is not the leader (the request is forwarded);
// the worker running the task is SIGKILLed while rows stream in; the task
// moves to a surviving worker within the session timeout (plus the
// rebalance and the task's start) and every row arrives (at-least-once:
// a row may repeat only as a replay after the kill). A pause sent to a
// worker that does not run the task reaches the one that does, and every
// worker answers the same status.
//
// The workers rebalance incrementally (connect.protocol=sessioned, the
// default) with scheduled.rebalance.max.delay.ms=0: with Kafka Connect's
// default of 300000 the killed worker's task would be held unassigned for
// up to 5 minutes in case the worker comes back (KIP-415), as
// runtime.TestCooperativeRebalanceHoldsDepartedWorkersTasks checks; 0
// reassigns it in the rebalance that follows the session expiry
// (KAFKA-15693), which is the bound this test asserts.
func TestDistributedFailover(t *testing.T) {
	const session = 6 * time.Second
	ctx := context.Background()
	bootstrap := startKafka(t)
	pg := startInventory(t)
	mustExec(t, pg, `CREATE TABLE inventory.counters (id int PRIMARY KEY, v int NOT NULL)`)

	ws := make([]*daemon, 3)
	byID := map[string]*daemon{}
	for i := range ws {
		ws[i] = newDaemon(t)
		ws[i].args = []string{"-o", "bootstrap.servers=" + bootstrap, "-o", "group.id=dist-test",
			"-o", "session.timeout.ms=6000", "-o", "heartbeat.interval.ms=1000", "-o", "scheduled.rebalance.max.delay.ms=0",
			"-o", "config.storage.topic=dist-configs", "-o", "offset.storage.topic=dist-offsets", "-o", "status.storage.topic=dist-status"}
		ws[i].start() // returns once the worker holds its first assignment
		byID[ws[i].rest[len("http://"):]] = ws[i]
	}
	// The first member to join leads; create on the last one.
	cfg := pgConnector(pg, map[string]string{"table.include.list": "inventory.counters"})
	if code, body := ws[2].do("POST", "/connectors", map[string]any{"name": "inv", "config": cfg}); code != 201 {
		t.Fatalf("create on a follower: %d %s", code, body)
	}
	st := ws[1].waitTaskState("inv", "RUNNING")
	owner := byID[st.Tasks[0].WorkerID]
	if owner == nil {
		t.Fatalf("task runs on unknown worker %q", st.Tasks[0].WorkerID)
	}
	var others []*daemon
	for _, w := range ws {
		if w != owner {
			others = append(others, w)
		}
	}

	// A pause sent to a worker that does not run the task reaches the one
	// that does (through the leader and the config topic).
	if code, body := others[0].do("PUT", "/connectors/inv/pause", nil); code != 202 {
		t.Fatalf("pause: %d %s", code, body)
	}
	others[1].waitTaskState("inv", "PAUSED")
	if code, body := others[1].do("PUT", "/connectors/inv/resume", nil); code != 202 {
		t.Fatalf("resume: %d %s", code, body)
	}
	others[0].waitTaskState("inv", "RUNNING")

	conn, err := pg.Connect(ctx, "inventory")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	stopWriter := startCounterWriter(ctx, t, conn, 2*time.Millisecond)

	time.Sleep(2 * time.Second)
	owner.kill()
	killed := time.Now()
	var moved connectorStatus
	for {
		moved = others[0].status("inv")
		if len(moved.Tasks) == 1 && moved.Tasks[0].State == "RUNNING" && moved.Tasks[0].WorkerID != st.Tasks[0].WorkerID {
			break
		}
		if time.Since(killed) > 3*session {
			t.Fatalf("task did not move within %s: %+v", 3*session, moved)
		}
		time.Sleep(100 * time.Millisecond)
	}
	failover := time.Since(killed)
	t.Logf("task moved from %s to %s %s after the SIGKILL (session.timeout.ms=%d)", st.Tasks[0].WorkerID, moved.Tasks[0].WorkerID, failover.Round(10*time.Millisecond), session.Milliseconds())
	if failover > session+5*time.Second {
		t.Errorf("failover took %s, more than session.timeout.ms + 5 s", failover)
	}
	time.Sleep(time.Second)
	total := stopWriter()

	// Every row arrives.
	cl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics("dbserver1.inventory.counters"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	seen := map[int]int{}
	events := 0
	deadline := time.Now().Add(30 * time.Second)
	for len(seen) < total {
		if time.Now().After(deadline) {
			t.Fatalf("saw %d of %d rows (%d events)", len(seen), total, events)
		}
		pollRowIDs(ctx, t, cl, func(id int, _ *kgo.Record) {
			seen[id]++
			events++
		})
	}
	t.Logf("%d rows, %d events (%d replayed after the kill)", total, events, events-total)

	// Every surviving worker answers the same status.
	a, b := others[0].status("inv"), others[1].status("inv")
	if a.Connector.State != "RUNNING" || len(a.Tasks) != 1 || len(b.Tasks) != 1 ||
		a.Connector.State != b.Connector.State || a.Tasks[0] != b.Tasks[0] {
		t.Fatalf("statuses disagree: %+v vs %+v", a, b)
	}
	for _, w := range others {
		w.stop()
	}
}
