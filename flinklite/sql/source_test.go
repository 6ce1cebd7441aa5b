package sql_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/connectd/connectd/flinklite/sql"
)

// TestSourceQuery: a job's SELECT rewritten for the source database names
// the source tables (keeping the query's names as aliases), puts the key
// expressions first, writes MySQL's CAST types as PostgreSQL's (not inside
// strings), and builds the result key as the job's upsert topic does;
// UNION ALL and CAST AS UNSIGNED cannot be rewritten.
func TestSourceQuery(t *testing.T) {
	resolve := func(topic string) (sql.SourceTable, error) {
		parts := strings.Split(topic, ".")
		return sql.SourceTable{Schema: parts[1], Table: parts[2], Key: []string{"id"}}, nil
	}
	for _, c := range []struct {
		stmt, text string
		key        []any
		want       string
	}{
		{"CREATE TABLE t AS SELECT status AS s, COUNT(*) AS n FROM `pg.public.orders` WHERE amount > 1.5 AND status <> 'x' GROUP BY status",
			`SELECT "status" AS "__verify_key0","status" AS "s",COUNT(1) AS "n" FROM "public"."orders" AS "pg.public.orders" WHERE (("amount">1.5) AND ("status"!='x')) GROUP BY "status"`,
			[]any{"new"}, `{"s":"new"}`},
		{"CREATE TABLE t AS SELECT o.id AS oid, c.region AS r FROM `pg.public.orders` o LEFT JOIN `pg.public.customers` c ON o.customer_id = c.id",
			`SELECT "o"."id" AS "__verify_key0","c"."id" AS "__verify_key1","o"."id" AS "oid","c"."region" AS "r" FROM "public"."orders" AS "o" LEFT JOIN "public"."customers" AS "c" ON ("o"."customer_id"="c"."id")`,
			[]any{int64(1), nil}, `{"c":null,"o":{"id":1}}`},
		{"INSERT INTO t SELECT id, CAST(amount AS DECIMAL(12,1)) AS a FROM `pg.public.orders`",
			`SELECT "pg.public.orders"."id" AS "__verify_key0","id",CAST("amount" AS DECIMAL(12, 1)) AS "a" FROM "public"."orders" AS "pg.public.orders"`,
			[]any{int64(7)}, `{"id":7}`},
		{"CREATE TABLE t AS SELECT id, CAST(amount AS CHAR) AS a, CAST(id AS SIGNED) AS b, CAST(amount AS DOUBLE) AS c, 'x AS CHAR)' AS d FROM `pg.public.orders` WHERE status <> 'it''s'",
			`SELECT "pg.public.orders"."id" AS "__verify_key0","id",CAST("amount" AS TEXT) AS "a",CAST("id" AS BIGINT) AS "b",CAST("amount" AS DOUBLE PRECISION) AS "c",'x AS CHAR)' AS "d" FROM "public"."orders" AS "pg.public.orders" WHERE ("status"!='it''s')`,
			[]any{int64(7)}, `{"id":7}`},
		{"CREATE TABLE t AS SELECT COUNT(*) AS n FROM `pg.public.orders`",
			`SELECT COUNT(1) AS "n" FROM "public"."orders" AS "pg.public.orders"`, nil, `{}`},
	} {
		q, err := sql.Compile(c.stmt, nil)
		if err != nil {
			t.Fatal(err)
		}
		sq, err := q.SourceQuery(resolve)
		if err != nil {
			t.Fatalf("%s: %v", c.stmt, err)
		}
		if sq.Text != c.text {
			t.Errorf("%s:\n got %s\nwant %s", c.stmt, sq.Text, c.text)
		}
		if sq.KeyValues != len(c.key) {
			t.Errorf("%s: %d key values, want %d", c.stmt, sq.KeyValues, len(c.key))
		}
		k, _ := json.Marshal(sq.Key(append(c.key, "rest")))
		if string(k) != c.want {
			t.Errorf("%s: key %s, want %s", c.stmt, k, c.want)
		}
	}
	q, err := sql.Compile("CREATE TABLE t AS SELECT id, CAST(id AS UNSIGNED) AS u FROM `pg.public.a`", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.SourceQuery(resolve); !errors.Is(err, sql.ErrSourceQuery) || !strings.Contains(err.Error(), "UNSIGNED") {
		t.Errorf("CAST AS UNSIGNED: %v, want ErrSourceQuery naming it", err)
	}
	q, err = sql.Compile("CREATE TABLE t AS SELECT id AS k FROM `pg.public.a` UNION ALL SELECT id FROM `pg.public.b`", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.SourceQuery(resolve); !errors.Is(err, sql.ErrSourceQuery) || !strings.Contains(err.Error(), "UNION ALL") {
		t.Errorf("UNION ALL: %v, want ErrSourceQuery naming it", err)
	}
}
