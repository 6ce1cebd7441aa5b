package integration

import (
	"context"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
	"github.com/jackc/pgx/v5"
)

const inventorySQL = "../internal/demo/inventory.sql"

// step is one expected event for a key: op and the after image (nil for
// deletes); a delete is followed by a tombstone.
type step struct {
	Op    string
	After map[string]any
}

// model is the expected state and per-key event history of the three
// inventory tables, maintained alongside the SQL the test runs.
type model struct {
	rows    map[string]map[int64]map[string]any // table -> id -> row
	history map[string][]step                   // "topic|id" -> steps
	events  int
}

func newModel() *model {
	return &model{rows: map[string]map[int64]map[string]any{"customers": {}, "products": {}, "orders": {}}, history: map[string][]step{}}
}

func hkey(table string, id int64) string { return fmt.Sprintf("dbserver1.inventory.%s|%d", table, id) }

func (m *model) record(table string, id int64, op string, row map[string]any) {
	m.history[hkey(table, id)] = append(m.history[hkey(table, id)], step{Op: op, After: row})
	m.events++
	if op == "d" {
		m.events++ // tombstone
		delete(m.rows[table], id)
	} else {
		m.rows[table][id] = row
	}
}

func (m *model) snapshot(ctx context.Context, t *testing.T, conn *pgx.Conn) {
	rows, _ := conn.Query(ctx, `SELECT id, first_name, last_name, email FROM inventory.customers`)
	for rows.Next() {
		var id int64
		var f, l, e string
		rows.Scan(&id, &f, &l, &e)
		m.record("customers", id, "r", map[string]any{"id": float64(id), "first_name": f, "last_name": l, "email": e})
	}
	rows, _ = conn.Query(ctx, `SELECT id, name, description, weight FROM inventory.products`)
	for rows.Next() {
		var id int64
		var n string
		var d *string
		var w *float64
		rows.Scan(&id, &n, &d, &w)
		m.record("products", id, "r", productRow(id, n, d, w))
	}
	rows, _ = conn.Query(ctx, `SELECT id, (order_date - date '1970-01-01'), purchaser, quantity, product_id FROM inventory.orders`)
	for rows.Next() {
		var id, days, pur, q, prod int64
		rows.Scan(&id, &days, &pur, &q, &prod)
		m.record("orders", id, "r", orderRow(id, days, pur, q, prod))
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
}

func productRow(id int64, name string, desc *string, w *float64) map[string]any {
	r := map[string]any{"id": float64(id), "name": name, "description": nil, "weight": nil}
	if desc != nil {
		r["description"] = *desc
	}
	if w != nil {
		r["weight"] = *w
	}
	return r
}

func orderRow(id, days, pur, q, prod int64) map[string]any {
	return map[string]any{"id": float64(id), "order_date": float64(days), "purchaser": float64(pur), "quantity": float64(q), "product_id": float64(prod)}
}

func anyID(rng *rand.Rand, m map[int64]map[string]any) (int64, bool) {
	if len(m) == 0 {
		return 0, false
	}
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids[rng.Intn(len(ids))], true
}

// mutate runs n random inserts/updates/deletes over the three tables in
// transactions of 1-5 statements, recording the expected events.
func (m *model) mutate(ctx context.Context, t *testing.T, conn *pgx.Conn, rng *rand.Rand, n int) {
	t.Helper()
	done := 0
	for done < n {
		tx, err := conn.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		size := 1 + rng.Intn(5)
		type pending struct {
			table string
			id    int64
			op    string
			row   map[string]any
		}
		var batch []pending
		for i := 0; i < size && done < n; i++ {
			done++
			switch k := rng.Intn(9); {
			case k < 2 || len(m.rows["customers"]) < 3: // insert customer
				var id int64
				f, l := fmt.Sprintf("F%d", done), fmt.Sprintf("L%d", rng.Intn(1000))
				e := fmt.Sprintf("c%d@example.com", done)
				if err := tx.QueryRow(ctx, `INSERT INTO inventory.customers (first_name,last_name,email) VALUES ($1,$2,$3) RETURNING id`, f, l, e).Scan(&id); err != nil {
					t.Fatal(err)
				}
				batch = append(batch, pending{"customers", id, "c", map[string]any{"id": float64(id), "first_name": f, "last_name": l, "email": e}})
			case k < 4: // update customer email
				id, _ := anyID(rng, m.rows["customers"])
				row := copyRow(m.rows["customers"][id])
				for _, p := range batch {
					if p.table == "customers" && p.id == id && p.op != "d" {
						row = copyRow(p.row)
					}
				}
				row["email"] = fmt.Sprintf("u%d@example.org", done)
				if _, err := tx.Exec(ctx, `UPDATE inventory.customers SET email=$1 WHERE id=$2`, row["email"], id); err != nil {
					t.Fatal(err)
				}
				batch = append(batch, pending{"customers", id, "u", row})
			case k < 5: // insert product
				var id int64
				name := fmt.Sprintf("p%d", done)
				w := float64(rng.Intn(10000)) / 8
				if err := tx.QueryRow(ctx, `INSERT INTO inventory.products (name,description,weight) VALUES ($1,NULL,$2) RETURNING id`, name, w).Scan(&id); err != nil {
					t.Fatal(err)
				}
				batch = append(batch, pending{"products", id, "c", productRow(id, name, nil, &w)})
			case k < 6: // update product weight
				id, _ := anyID(rng, m.rows["products"])
				row := copyRow(m.rows["products"][id])
				for _, p := range batch {
					if p.table == "products" && p.id == id {
						row = copyRow(p.row)
					}
				}
				row["weight"] = float64(rng.Intn(10000)) / 4
				if _, err := tx.Exec(ctx, `UPDATE inventory.products SET weight=$1 WHERE id=$2`, row["weight"], id); err != nil {
					t.Fatal(err)
				}
				batch = append(batch, pending{"products", id, "u", row})
			case k < 8: // insert order
				cid, _ := anyID(rng, m.rows["customers"])
				pid, _ := anyID(rng, m.rows["products"])
				var id, days int64
				q := int64(1 + rng.Intn(9))
				if err := tx.QueryRow(ctx, `INSERT INTO inventory.orders (order_date,purchaser,quantity,product_id) VALUES (date '2024-01-01' + $1::int, $2,$3,$4) RETURNING id, order_date - date '1970-01-01'`, rng.Intn(300), cid, q, pid).Scan(&id, &days); err != nil {
					t.Fatal(err)
				}
				batch = append(batch, pending{"orders", id, "c", orderRow(id, days, cid, q, pid)})
			default: // delete an order
				id, ok := anyID(rng, m.rows["orders"])
				if !ok {
					continue
				}
				gone := false
				for _, p := range batch {
					gone = gone || (p.table == "orders" && p.id == id && p.op == "d")
				}
				if gone {
					continue
				}
				if _, err := tx.Exec(ctx, `DELETE FROM inventory.orders WHERE id=$1`, id); err != nil {
					t.Fatal(err)
				}
				batch = append(batch, pending{"orders", id, "d", nil})
			}
		}
		if err := tx.Commit(ctx); err != nil {
			t.Fatal(err)
		}
		for _, p := range batch {
			m.record(p.table, p.id, p.op, p.row)
		}
	}
}

func copyRow(r map[string]any) map[string]any {
	out := make(map[string]any, len(r))
	for k, v := range r {
		out[k] = v
	}
	return out
}

// observed groups events by topic and key id into steps; a tombstone must
// directly follow its delete.
func observed(t *testing.T, evs []event) map[string][]step {
	t.Helper()
	out := map[string][]step{}
	lastOp := map[string]string{}
	for _, e := range evs {
		k := fmt.Sprintf("%s|%v", e.Topic, e.Key["id"])
		if e.Tombstone {
			if lastOp[k] != "d" {
				t.Fatalf("tombstone for %s not preceded by its delete", k)
			}
			lastOp[k] = "tombstone"
			continue
		}
		if lastOp[k] == "d" {
			t.Fatalf("delete of %s not followed by a tombstone", k)
		}
		lastOp[k] = e.Op
		out[k] = append(out[k], step{Op: e.Op, After: e.After})
	}
	return out
}

func compareHistories(t *testing.T, want, got map[string][]step) {
	t.Helper()
	bad := 0
	for k, w := range want {
		if !reflect.DeepEqual(w, got[k]) {
			bad++
			if bad <= 5 {
				t.Errorf("key %s:\n got  %v\n want %v", k, got[k], w)
			}
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("unexpected events for key %s: %v", k, got[k])
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d keys differ", bad, len(want))
	}
}

// startInventory starts PostgreSQL with the demo's inventory schema.
func startInventory(t *testing.T) *testenv.Postgres {
	t.Helper()
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(context.Background(), "inventory"); err != nil {
		t.Fatal(err)
	}
	mustExec(t, pg, readFile(t, inventorySQL))
	return pg
}

// Snapshot of 3 tables, then 1,000 mixed changes in multi-statement
// transactions: per key, the exact sequence of events (op, after image,
// delete + tombstone), with the snapshot's records first.
func TestSnapshotThenStreamingExactSequence(t *testing.T) {
	testSnapshotThenStreaming(t, startInventory(t))
}

// testSnapshotThenStreaming runs TestSnapshotThenStreamingExactSequence
// against pg, a server with the inventory database (a local process or a
// container).
func testSnapshotThenStreaming(t *testing.T, pg *testenv.Postgres) {
	ctx := context.Background()
	d := newDaemon(t)
	d.start()
	code, body := d.do("POST", "/connectors", map[string]any{"name": "inv", "config": pgConnector(pg, nil)})
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	conn, err := pg.Connect(ctx, "inventory")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	m := newModel()
	m.snapshot(ctx, t, conn)
	c := newConsumer(t, d.kafka, `^dbserver1\.inventory\.`)
	snap := c.until(m.events, 60*time.Second)
	markers := map[string]int{}
	for _, e := range snap {
		if e.Op != "r" {
			t.Fatalf("snapshot event with op %q: %s", e.Op, e.Raw)
		}
		markers[fmt.Sprint(e.Source["snapshot"])]++
	}
	if markers["first"] != 1 || markers["last"] != 1 {
		t.Fatalf("snapshot markers %v: want exactly one first and one last", markers)
	}

	m.mutate(ctx, t, conn, rand.New(rand.NewSource(42)), 1000)
	all := c.until(m.events, 120*time.Second)
	if extra := c.drain(2 * time.Second); len(extra) != m.events {
		t.Fatalf("%d events, want exactly %d", len(extra), m.events)
	}
	compareHistories(t, m.history, observed(t, all))
	for _, e := range all[len(snap):] {
		if !e.Tombstone && e.Source["snapshot"] != "false" {
			t.Fatalf("streamed event with source.snapshot=%v", e.Source["snapshot"])
		}
	}
	d.stop()
}
