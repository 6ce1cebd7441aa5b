package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// distJobInfo is the part of GET /jobs/{id} on a distributed worker the
// test reads.
type distJobInfo struct {
	jobInfo
	Restarts int `json:"restarts"`
	Metrics  struct {
		NumRecordsIn             int64
		NumLateRecordsDropped    int64
		NumLateRecordsSideOutput int64
	} `json:"metrics"`
	Distributed *struct {
		Worker           string `json:"worker"`
		RepartitionTopic string `json:"repartition_topic"`
		Partitions       []struct {
			Stage     string `json:"stage"`
			Topic     string `json:"topic"`
			Partition int32  `json:"partition"`
			Lag       int64  `json:"lag"`
		} `json:"partitions"`
		Workers []struct {
			Worker     string             `json:"worker"`
			Stage      string             `json:"stage"`
			Partitions map[string][]int32 `json:"partitions"`
		} `json:"workers"`
	} `json:"distributed"`
}

// Issue 9 end to end, scaled out: two connectd workers (one group.id) on
// a real Apache Kafka broker; PostgreSQL inventory.shop_orders → the
// PostgreSQL connector → a 4-partition topic keyed (and partitioned) by
// the order id → a job POSTed as JSON to one worker, keyed by customer
// (not the record key, so the job repartitions through
// "<job>.repartition"), with per-customer 5-minute tumbling sums and
// counts → a transactional Kafka topic and a PostgreSQL upsert table. Both
// workers run the job (the spec is read from the jobs topic), each a share
// of the partitions of both stages; one is SIGKILLed mid-run while rows
// change (updates move orders between customers and windows, deletes
// retract), and the survivor takes its partitions from their last
// committed checkpoints. Expected values come from SQL on the source
// table, as in TestFlinkliteJobSurvivesSIGKILL: the final upsert table
// equals the GROUP BY, and a read_committed consumer of the result topic
// sees every (window, customer, firing) once, its last result per window
// equal to the table.
func TestFlinkliteDistributedJobSurvivesSIGKILL(t *testing.T) {
	const session = 6 * time.Second
	ctx := context.Background()
	bootstrap := startKafka(t)
	pg := startInventory(t)
	mustExec(t, pg, `CREATE TABLE inventory.shop_orders (id int PRIMARY KEY, customer text NOT NULL, amount bigint NOT NULL, created_at timestamptz NOT NULL)`)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewSource(9))
	var ins []string
	for i := 1; i <= 300; i++ {
		ins = append(ins, fmt.Sprintf("(%d, 'c%d', %d, '%s')", i, rng.Intn(6), 1+rng.Intn(500), base.Add(time.Duration(i)*10*time.Second).Format(time.RFC3339)))
	}
	mustExec(t, pg, "INSERT INTO inventory.shop_orders VALUES "+strings.Join(ins, ","))

	// The connector's topic has 4 partitions (created before the
	// connector, which finds it): the order id's murmur2 spreads each
	// customer's orders over all of them.
	const topic = "dbserver1.inventory.shop_orders"
	admCl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap))
	if err != nil {
		t.Fatal(err)
	}
	defer admCl.Close()
	if _, err := kadm.NewClient(admCl).CreateTopic(ctx, 4, 1, nil, topic); err != nil {
		t.Fatal(err)
	}

	ws := make([]*daemon, 2)
	byID := map[string]*daemon{}
	for i := range ws {
		ws[i] = newDaemon(t)
		ws[i].args = []string{"-o", "bootstrap.servers=" + bootstrap, "-o", "group.id=flink-dist",
			"-o", "session.timeout.ms=6000", "-o", "heartbeat.interval.ms=1000", "-o", "scheduled.rebalance.max.delay.ms=0",
			"-o", "config.storage.topic=fd-configs", "-o", "offset.storage.topic=fd-offsets", "-o", "status.storage.topic=fd-status",
			"-o", "jobs.storage.topic=fd-jobs"}
		ws[i].start()
		byID[ws[i].rest[len("http://"):]] = ws[i]
	}
	if code, body := ws[0].do("POST", "/connectors", map[string]any{"name": "shop", "config": pgConnector(pg, map[string]string{"table.include.list": "inventory.shop_orders"})}); code != 201 {
		t.Fatalf("create connector: %d %s", code, body)
	}
	st := ws[0].waitTaskState("shop", "RUNNING")
	owner := byID[st.Tasks[0].WorkerID]
	if owner == nil {
		t.Fatalf("task runs on unknown worker %q", st.Tasks[0].WorkerID)
	}
	owner.waitSnapshotDone("shop")

	spec := map[string]any{
		"id":                "customer-totals",
		"source":            map[string]any{"topics": []string{topic}},
		"eventTime":         map[string]any{"field": "created_at"},
		"maxOutOfOrderness": "1s",
		"keyBy":             []string{"customer"},
		"window":            map[string]any{"type": "tumbling", "size": "5m"},
		"allowedLateness":   "24h",
		"lateOutput":        map[string]any{"topic": "customer_totals_late"},
		"aggregates":        []any{map[string]any{"function": "sum", "field": "amount", "as": "total"}, map[string]any{"function": "count"}},
		"sinks": map[string]any{
			"kafka": map[string]any{"topic": "customer_totals"},
			"jdbc": map[string]any{"connection.url": fmt.Sprintf("jdbc:postgresql://%s:%d/inventory", pg.Host, pg.Port),
				"connection.username": pg.User, "table": "inventory.customer_totals"},
		},
		"checkpoint": map[string]any{"interval": "300ms"},
	}
	// POSTed to worker 1, killed below: the spec outlives the worker that
	// received it.
	if code, body := ws[1].do("POST", "/jobs", spec); code != 201 {
		t.Fatalf("create job: %d %s", code, body)
	}
	if code, body := ws[0].do("POST", "/jobs", spec); code != 409 {
		t.Fatalf("create the job twice (on the other worker): %d %s", code, body)
	}
	info := func(d *daemon) distJobInfo {
		code, body := d.do("GET", "/jobs/customer-totals", nil)
		var ji distJobInfo
		if code != 200 || json.Unmarshal(body, &ji) != nil || ji.Distributed == nil {
			t.Fatalf("GET /jobs/customer-totals on %s: %d %s", d.rest, code, body)
		}
		return ji
	}
	waitJob := func(d *daemon, what string, ok func(distJobInfo) bool) distJobInfo {
		deadline := time.Now().Add(60 * time.Second)
		for {
			ji := info(d)
			if ok(ji) {
				return ji
			}
			if time.Now().After(deadline) {
				t.Fatalf("job on %s never %s: %+v %+v\n%s", d.rest, what, ji.jobInfo, ji.Distributed, d.log.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// Both workers run both stages' share: 4 source partitions
	// (repartition stage) and 4 repartition partitions (window stage)
	// split between them, and each worker lists the other.
	shared := func(ji distJobInfo) bool {
		return ji.State == "RUNNING" && len(ji.Distributed.Partitions) > 0 && len(ji.Distributed.Partitions) < 8 && len(ji.Distributed.Workers) == 4
	}
	// The two answers are read one after the other: a rebalance between
	// them (a worker's view of an older generation, seen under load) is
	// read again until both describe the same split.
	var before, other distJobInfo
	for split := time.Now().Add(60 * time.Second); ; {
		before = waitJob(ws[1], "shared and checkpointed", func(ji distJobInfo) bool { return shared(ji) && ji.LastCheckpoint != nil })
		other = waitJob(ws[0], "shared", shared)
		n := len(before.Distributed.Partitions) + len(other.Distributed.Partitions)
		if n == 8 {
			break
		}
		if time.Now().After(split) {
			t.Fatalf("the workers run %d partitions together, want 4 + 4: %+v %+v", n, before.Distributed, other.Distributed)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, ji := range []distJobInfo{before, other} {
		members := map[string]bool{}
		for _, w := range ji.Distributed.Workers {
			if byID[w.Worker] == nil {
				t.Fatalf("GET on %s lists worker %q, not a worker's REST host:port", ji.Distributed.Worker, w.Worker)
			}
			members[w.Stage+"@"+w.Worker] = true
		}
		if len(members) != 4 || byID[ji.Distributed.Worker] == nil {
			t.Fatalf("GET on %s lists %v, want both workers in both stages", ji.Distributed.Worker, ji.Distributed.Workers)
		}
	}
	rep := before.Distributed.RepartitionTopic
	if rep == "" || !strings.HasSuffix(rep, ".repartition") {
		t.Fatalf("keyBy customer differs from the record key id, yet no repartition topic: %+v", before.Distributed)
	}
	for _, p := range append(before.Distributed.Partitions, other.Distributed.Partitions...) {
		if (p.Stage == "repartition" && p.Topic != topic) || (p.Stage == "window" && p.Topic != rep) {
			t.Fatalf("partition %+v: the repartition stage reads %s, the window stage %s", p, topic, rep)
		}
	}

	orders := openShopOrders(ctx, t, pg, rng)
	exec, change := orders.exec, orders.change

	// The snapshot's windows fire before the rows change: the watermark
	// of every window partition (the minimum of the 4 source partitions'
	// watermarks forwarded through the repartition topic) passes 45 min,
	// the snapshot rows reaching 50 min. The changes are then late
	// updates of fired windows, which the restored window state serves.
	fired := base.Add(45 * time.Minute).UnixMilli()
	for _, d := range ws {
		waitJob(d, "fired the snapshot's windows", func(ji distJobInfo) bool { return ji.Watermark >= fired })
	}
	change(100)
	time.Sleep(150 * time.Millisecond) // some of the changes are processed, some not
	ws[1].kill()
	killed := time.Now()
	change(100) // while the survivor has not taken the killed worker's partitions yet
	waitJob(ws[0], "taken every partition", func(ji distJobInfo) bool {
		return ji.State == "RUNNING" && len(ji.Distributed.Partitions) == 8
	})
	failover := time.Since(killed)
	change(100)
	// Orders 3 hours on move the watermark of every source partition, so
	// of every repartition partition (their minimum, forwarded), past
	// every window: ids 1000-1039, which murmur2 spreads over the 4
	// source partitions. allowedLateness (24 h) keeps the windows, so the
	// changes of rows in fired windows update them (a late firing).
	for k := 0; k < 40; k++ {
		exec(`INSERT INTO inventory.shop_orders VALUES ($1, $2, 0, $3)`, 1000+k, fmt.Sprintf("flush%d", k), base.Add(3*time.Hour))
	}

	want := orders.sourceTotals(`customer NOT LIKE 'flush%'`)
	orders.waitUpsertTable(`customer NOT LIKE 'flush%'`, want, 60*time.Second, func() any { return info(ws[0]) })

	results, updates := checkCommittedWindowResults(ctx, t, bootstrap, want, func(c string) bool { return strings.HasPrefix(c, "flush") })
	if updates == 0 {
		t.Fatal("no late update was emitted: the changes did not reach fired windows, so the restored window state was not exercised")
	}
	final := info(ws[0])
	// Late rows go to the late output. Every row of the table is at or
	// after base and the watermark stays below base + 3 h (the flush
	// orders, minus maxOutOfOrderness), so with allowedLateness 24 h no
	// real row can be late: the late ones are replayed delete events (the
	// connector is at least once when its task's worker is the one
	// killed), whose row is gone from the shuffle's state, so the event's
	// before image (REPLICA IDENTITY DEFAULT: the key, defaults elsewhere,
	// created_at 1970) is retracted, from a window long cleaned up.
	lcl, err := kgo.NewClient(kgo.SeedBrokers(bootstrap), kgo.ConsumeTopics("customer_totals_late"),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer lcl.Close()
	lateRows := 0
	for quiet := time.Now(); time.Since(quiet) < 2*time.Second; {
		pctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		lcl.PollFetches(pctx).EachRecord(func(r *kgo.Record) {
			quiet = time.Now()
			lateRows++
			var v struct {
				EventTime int64 `json:"event_time"`
				Retract   bool  `json:"retract"`
			}
			if err := json.Unmarshal(r.Value, &v); err != nil {
				t.Fatalf("late row %s: %v", r.Value, err)
			}
			if !v.Retract || v.EventTime >= base.UnixMilli() {
				t.Errorf("late row %s: a real row (event time at or after %s) was late", r.Value, base)
			}
		})
		cancel()
	}
	if final.Metrics.NumLateRecordsDropped != 0 {
		t.Errorf("%d late rows dropped with a late output", final.Metrics.NumLateRecordsDropped)
	}
	t.Logf("%d windows equal SQL after a SIGKILL of one of 2 workers; its partitions moved %s after the kill (session.timeout.ms=%d); %d results read_committed (%d late updates), none duplicated; survivor: %d records in since it took them, %d late rows side-output (%d committed in the late topic, all replayed deletes' before images), %d restarts",
		len(want), failover.Round(10*time.Millisecond), session.Milliseconds(), results, updates, final.Metrics.NumRecordsIn, final.Metrics.NumLateRecordsSideOutput, lateRows, final.Restarts)

	if code, body := ws[0].do("DELETE", "/jobs/customer-totals", nil); code != 204 {
		t.Fatalf("DELETE: %d %s", code, body)
	}
	if code, _ := ws[0].do("GET", "/jobs/customer-totals", nil); code != 404 {
		t.Fatalf("GET after DELETE: %d", code)
	}
}
