package integration

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestJdbcSinkAvroTwoTasks: PostgreSQL → PostgresConnector with key and
// value AvroConverter (the daemon's embedded schema registry) → a topic
// of 3 partitions (Kafka Connect's topic.creation.default.*, KIP-158) →
// JdbcSinkConnector reading Avro with tasks.max=2 → a second database.
// Kafka Connect gives each sink task its own consumer in the group
// connect-<connector>, so the range assignor splits the 3 partitions over
// the 2 tasks (WorkerSinkTask, ConsumerConfig partition.assignment.strategy);
// Debezium's PostgreSQL connector keys each event by primary key, so all
// changes of a row are in one partition and the target converges to the
// source row for row, numeric and timestamp(6) columns included (Debezium
// JDBC sink "data type mapping": Decimal → numeric, MicroTimestamp →
// timestamp).
func TestJdbcSinkAvroTwoTasks(t *testing.T) {
	ctx := context.Background()
	pg := startInventory(t)
	mustExec(t, pg, `CREATE TABLE inventory.items (id int PRIMARY KEY, name text NOT NULL, qty int NOT NULL, price numeric(10,2) NOT NULL, ts timestamp(6), note text)`)
	mustExec(t, pg, `INSERT INTO inventory.items SELECT g, 'item-'||g, g % 7, g * 1.25, timestamp '2024-02-29 13:14:15.123456' + g * interval '1 second', CASE WHEN g % 3 = 0 THEN NULL ELSE 'n'||g END FROM generate_series(1, 100) g`)
	if err := pg.CreateDatabase(ctx, "target"); err != nil {
		t.Fatal(err)
	}
	d := newDaemon(t)
	d.start()
	reg := "http://" + d.schemaRegistry
	avro := map[string]string{
		"key.converter": "io.confluent.connect.avro.AvroConverter", "key.converter.schema.registry.url": reg,
		"value.converter": "io.confluent.connect.avro.AvroConverter", "value.converter.schema.registry.url": reg,
	}
	srcCfg := pgConnector(pg, map[string]string{"table.include.list": "inventory.items",
		"topic.creation.default.partitions": "3", "topic.creation.default.replication.factor": "1"})
	sinkCfg := jdbcSinkConfig(fmt.Sprintf("jdbc:postgresql://%s:%d/target?sslmode=disable", pg.Host, pg.Port), pg.User, "", "dbserver1.inventory.items",
		map[string]string{"tasks.max": "2"})
	for k, v := range avro {
		srcCfg[k], sinkCfg[k] = v, v
	}
	for _, c := range []struct {
		name string
		cfg  map[string]string
	}{{"src", srcCfg}, {"sink", sinkCfg}} {
		if code, body := d.do("POST", "/connectors", map[string]any{"name": c.name, "config": c.cfg}); code != 201 {
			t.Fatalf("create %s: %d %s", c.name, code, body)
		}
	}
	d.waitTaskState("src", "RUNNING")

	// Streamed changes: inserts, updates, deletes and primary key changes.
	conn, err := pg.Connect(ctx, "inventory")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	rng := rand.New(rand.NewSource(11))
	next := 101
	for tx := 0; tx < 20; tx++ {
		var b strings.Builder
		b.WriteString("BEGIN;")
		for j := 0; j < 15; j++ {
			id := 1 + rng.Intn(next-1)
			switch r := rng.Intn(10); {
			case r < 4:
				fmt.Fprintf(&b, "INSERT INTO inventory.items VALUES (%d, 'new-%d', %d, %d.%02d, now()::timestamp(6), NULL);", next, next, rng.Intn(50), rng.Intn(1000), rng.Intn(100))
				next++
			case r < 8:
				fmt.Fprintf(&b, "UPDATE inventory.items SET qty = qty + 1, price = price + 0.01, note = 'u%d', ts = ts + interval '1.5 seconds' WHERE id = %d;", rng.Intn(1000), id)
			case r < 9:
				fmt.Fprintf(&b, "DELETE FROM inventory.items WHERE id = %d;", id)
			default:
				fmt.Fprintf(&b, "UPDATE inventory.items SET id = %d WHERE id = %d;", next, id)
				next++
			}
		}
		b.WriteString("COMMIT;")
		if _, err := conn.Exec(ctx, b.String()); err != nil {
			t.Fatal(err)
		}
	}

	const rowQuery = `SELECT id||'|'||name||'|'||qty||'|'||price::text||'|'||coalesce(ts::text,'<null>')||'|'||coalesce(note,'<null>') FROM %s`
	read := func(db, table string) []string {
		c, err := pg.Connect(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		rows, err := c.Query(ctx, fmt.Sprintf(rowQuery, table))
		if err != nil {
			return []string{err.Error()}
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		sort.Strings(out)
		return out
	}
	source := read("inventory", "inventory.items")
	want := strings.Join(source, "\n")
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := read("target", "items")
		if strings.Join(got, "\n") == want {
			break
		}
		if time.Now().After(deadline) {
			jdbcSinkDiagnose(t, d, "dbserver1.inventory.items", got, source)
			t.Fatalf("target did not converge: source %d rows, target %d\nsink status %+v", len(source), len(got), d.status("sink"))
		}
		time.Sleep(300 * time.Millisecond)
	}

	// Both sink tasks run, each as one member of connect-sink owning part
	// of the topic's 3 partitions, and the changes really are spread.
	st := d.status("sink")
	if len(st.Tasks) != 2 || st.Tasks[0].State != "RUNNING" || st.Tasks[1].State != "RUNNING" {
		t.Fatalf("sink status %+v", st)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(d.kafka))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	// The group may still be rebalancing: the sink's consumers can join
	// before the source creates the topic and rejoin once their metadata
	// shows it. Wait for a stable generation.
	var owner map[int32]string
	var last string
	for wait := time.Now().Add(20 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		groups, err := adm.DescribeGroups(ctx, "connect-sink")
		if err != nil {
			t.Fatal(err)
		}
		g := groups["connect-sink"]
		owner = map[int32]string{}
		perMember := map[string]int{}
		split := g.State == "Stable" && len(g.Members) == 2
		for _, m := range g.Members {
			ca, ok := m.Assigned.AsConsumer()
			if !ok {
				split = false
				continue
			}
			for _, at := range ca.Topics {
				for _, p := range at.Partitions {
					if prev, dup := owner[p]; dup {
						t.Fatalf("partition %d assigned to %s and %s", p, prev, m.ClientID)
					}
					owner[p] = m.ClientID
					perMember[m.ClientID]++
				}
			}
		}
		split = split && len(owner) == 3 && len(perMember) == 2
		if split {
			break
		}
		last = fmt.Sprintf("state %s, %d members, partitions %v", g.State, len(g.Members), owner)
		if time.Now().After(wait) {
			t.Fatalf("group connect-sink never split the 3 partitions over 2 tasks: %s", last)
		}
	}
	ends, err := adm.ListEndOffsets(ctx, "dbserver1.inventory.items")
	if err != nil {
		t.Fatal(err)
	}
	nonEmpty := 0
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			nonEmpty++
		}
	})
	if nonEmpty != 3 {
		t.Fatalf("%d of 3 partitions hold records", nonEmpty)
	}
	// The sink read Avro: both subjects are registered by the source.
	if code, body := registryGet(t, d, "/subjects"); code != 200 || !strings.Contains(body, "dbserver1.inventory.items-value") || !strings.Contains(body, "dbserver1.inventory.items-key") {
		t.Fatalf("registry subjects: %d %s", code, body)
	}
	t.Logf("converged: %d rows; partitions by task: %v", len(source), owner)
}
