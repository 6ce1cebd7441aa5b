package postgres

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
)

// topicIDs renders records as "<table>:<op>:<id>" (table = topic without
// "dbserver1.public.").
func topicIDs(rs []*connect.SourceRecord) string {
	var out []string
	for _, r := range rs {
		v := r.Value.(*connect.Struct)
		row := v.Get("after")
		if row == nil {
			row = v.Get("before")
		}
		out = append(out, fmt.Sprintf("%s:%v:%v", strings.TrimPrefix(r.Topic, "dbserver1.public."), v.Get("op"), row.(*connect.Struct).Get("id")))
	}
	return strings.Join(out, " ")
}

// TestPartitionTopics captures a range-partitioned table under each way the
// publication can publish it, with partitions created and attached after the
// connector started.
//
// Expected values: PostgreSQL publishes a partition's changes under the
// partition (publish_via_partition_root = false, the default) or under the
// partitioned root table (true) — CREATE PUBLICATION docs; Debezium names the
// topic after the table of the Relation message, and since 3.2
// (DBZ-9158) its publish.via.partition.root key creates the publication WITH
// (publish_via_partition_root = true). The snapshot reads the same tables
// the stream names, once each (no root AND partitions into one topic).
func TestPartitionTopics(t *testing.T) {
	pg := testenv.PostgresT(t)
	ctx := context.Background()
	leaf := struct{ snap, stream string }{
		"orders_a:r:1 orders_b:r:150",
		"orders_a:c:2 orders_c:c:250 orders_d:c:350 orders_b:u:150",
	}
	root := struct{ snap, stream string }{
		"orders:r:1 orders:r:150",
		"orders:c:2 orders:c:250 orders:c:350 orders:u:150",
	}
	cases := []struct {
		name        string
		cfg         map[string]string
		publication string // created before the connector starts
		want        struct{ snap, stream string }
		wantViaRoot bool
	}{
		{name: "leaf_all_tables", want: leaf},
		{name: "leaf_filtered", cfg: map[string]string{"publication.autocreate.mode": "filtered", "table.include.list": `public\.orders.*`}, want: leaf},
		{name: "root_existing_publication", publication: "CREATE PUBLICATION dbz_publication FOR ALL TABLES WITH (publish_via_partition_root = true)", want: root, wantViaRoot: true},
		{name: "root_autocreate", cfg: map[string]string{"publish.via.partition.root": "true"}, want: root, wantViaRoot: true},
		{name: "root_filtered", cfg: map[string]string{"publication.autocreate.mode": "filtered", "table.include.list": `public\.orders`, "publish.via.partition.root": "true"}, want: root, wantViaRoot: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.name
			if err := pg.CreateDatabase(ctx, db); err != nil {
				t.Fatal(err)
			}
			exec(t, pg, db, `CREATE TABLE orders (id int PRIMARY KEY, note text) PARTITION BY RANGE (id);
				CREATE TABLE orders_a PARTITION OF orders FOR VALUES FROM (0) TO (100);
				CREATE TABLE orders_b PARTITION OF orders FOR VALUES FROM (100) TO (200);
				CREATE TABLE other (id int PRIMARY KEY);
				INSERT INTO orders VALUES (1, 'a'), (150, 'b');`)
			if tc.publication != "" {
				exec(t, pg, db, tc.publication)
			}
			cfg := baseConfig(pg, db)
			cfg["slot.name"] = db
			for k, v := range tc.cfg {
				cfg[k] = v
			}
			task := startTask(t, cfg, &memOffsets{})
			if got := topicIDs(pollN(t, task, 2)); got != tc.want.snap {
				t.Fatalf("snapshot = %s, want %s", got, tc.want.snap)
			}
			var viaRoot bool
			c, err := pg.Connect(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(ctx)
			if err := c.QueryRow(ctx, `SELECT pubviaroot FROM pg_publication WHERE pubname = 'dbz_publication'`).Scan(&viaRoot); err != nil {
				t.Fatal(err)
			}
			if viaRoot != tc.wantViaRoot {
				t.Fatalf("publication pubviaroot = %v, want %v", viaRoot, tc.wantViaRoot)
			}
			exec(t, pg, db, `INSERT INTO orders VALUES (2, 'c')`)
			// a partition created after the start, and a table attached as one
			exec(t, pg, db, `CREATE TABLE orders_c PARTITION OF orders FOR VALUES FROM (200) TO (300)`)
			exec(t, pg, db, `INSERT INTO orders VALUES (250, 'd')`)
			exec(t, pg, db, `CREATE TABLE orders_d (id int NOT NULL, note text)`)
			exec(t, pg, db, `ALTER TABLE orders ATTACH PARTITION orders_d FOR VALUES FROM (300) TO (400)`)
			exec(t, pg, db, `INSERT INTO orders VALUES (350, 'e'); INSERT INTO other VALUES (7)`)
			exec(t, pg, db, `UPDATE orders SET note = 'f' WHERE id = 150`)
			n := 4
			if tc.cfg["table.include.list"] == "" {
				n = 5 // other is captured too (all tables)
			}
			recs := pollN(t, task, n)
			if n == 5 {
				var kept []*connect.SourceRecord
				for _, r := range recs {
					if r.Topic != "dbserver1.public.other" {
						kept = append(kept, r)
					}
				}
				recs = kept
			}
			if got := topicIDs(recs); got != tc.want.stream {
				t.Fatalf("stream = %s, want %s", got, tc.want.stream)
			}
			for _, r := range recs {
				if r.KeySchema == nil || r.KeySchema.Name != r.Topic+".Key" {
					t.Fatalf("record on %s has key schema %v", r.Topic, r.KeySchema)
				}
			}
			pollQuiet(t, task, 300*time.Millisecond)
		})
	}
}
