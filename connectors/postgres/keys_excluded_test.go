package postgres

import (
	"context"
	"fmt"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
)

// TestExcludedKeyColumnStaysInKey: a key column that column.exclude.list
// leaves out of the value is still in the key (a primary key column and a
// message.key.columns column), as Debezium's TableSchemaBuilder builds the
// key from the table's key columns unfiltered; and message.key.columns
// naming no column the table has any more (renamed) falls back to the
// primary key, as Debezium's key mapper does (found by mariadiff seeds 61
// and 121; the code is the same in both connectors).
func TestExcludedKeyColumnStaysInKey(t *testing.T) {
	pg := testenv.PostgresT(t)
	ctx := context.Background()
	const db = "exclkey"
	if err := pg.CreateDatabase(ctx, db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dropScenarioDB(t, pg, db) })
	exec(t, pg, db, "CREATE TABLE k (u text NOT NULL, n int);\nINSERT INTO k VALUES ('a', 1), ('b', 2);\n"+
		"CREATE TABLE p (id int PRIMARY KEY, v int);\nINSERT INTO p VALUES (7, 1);\n"+
		"CREATE TABLE q (id int PRIMARY KEY, c int);\n")
	cfg := baseConfig(pg, db)
	cfg["slot.name"], cfg["publication.name"] = "exclkey", "exclkey"
	cfg["column.exclude.list"] = `public\.k\.u,public\.p\.id`
	cfg["message.key.columns"] = "public.k:u;public.q:c"
	task := startTask(t, cfg, &memOffsets{})
	rs := pollN(t, task, 3)
	exec(t, pg, db, "INSERT INTO k VALUES ('c', 3);\nUPDATE p SET v = 2 WHERE id = 7;\nINSERT INTO q VALUES (1, 10);\n"+
		"ALTER TABLE q RENAME COLUMN c TO d;\nINSERT INTO q VALUES (2, 20);\n")
	rs = append(rs, pollN(t, task, 4)...)
	var got []string
	for _, r := range rs {
		k, ok := r.Key.(*connect.Struct)
		if !ok {
			t.Fatalf("%s: no key (%v)", r.Topic, r.Key)
		}
		if after := r.Value.(*connect.Struct).Get("after").(*connect.Struct); after.Schema.Field("u") != nil || after.Schema.Field("id") != nil && r.Topic == "dbserver1.public.p" {
			t.Errorf("%s: the excluded column is in the value: %v", r.Topic, after)
		}
		got = append(got, fmt.Sprintf("%s %s=%v", r.Topic, k.Schema.Fields[0].Name, k.Values[0]))
	}
	want := []string{"dbserver1.public.k u=a", "dbserver1.public.k u=b", "dbserver1.public.p id=7",
		"dbserver1.public.k u=c", "dbserver1.public.p id=7", "dbserver1.public.q c=10", "dbserver1.public.q id=2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("keys\n got %v\nwant %v", got, want)
	}
}
