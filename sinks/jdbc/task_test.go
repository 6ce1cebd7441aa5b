package jdbc

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"math/big"
	"strings"
	"sync"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
	"github.com/go-sql-driver/mysql"
)

// rowSchema mirrors what Debezium's PostgreSQL connector emits for
// CREATE TABLE t (id int PRIMARY KEY, name text, big text (TOASTed),
// d date, ts timestamp(6), tz timestamptz, amount numeric(10,2),
// v numeric, doc json, u uuid, raw bytea, ok boolean, f double precision)
// (19723 days = 2024-01-01) with the default decimal/time handling (Debezium PostgreSQL connector
// docs, "Data type mappings").
func rowSchema() (key, value, envelope *connect.Schema) {
	key = connect.StructSchema().Name("srv.public.t.Key").Field("id", connect.Prim(connect.Int32, false)).Build()
	vsd := connect.StructSchema().Name(dbzVariableScaleDecimal).Optional().
		Field("scale", connect.Prim(connect.Int32, false)).Field("value", connect.Prim(connect.Bytes, false)).Build()
	named := func(t connect.Type, name string) *connect.Schema {
		return connect.NewSchema(t).Name(name).Version(1).Optional().Build()
	}
	amount := connect.NewSchema(connect.Bytes).Name(connect.DecimalName).Version(1).Param("scale", "2").Param("connect.decimal.precision", "10").Optional().Build()
	value = connect.StructSchema().Name("srv.public.t.Value").Optional().
		Field("id", connect.Prim(connect.Int32, false)).
		Field("name", connect.Prim(connect.String, true)).
		Field("big", connect.Prim(connect.String, true)).
		Field("d", named(connect.Int32, dbzDate)).
		Field("ts", named(connect.Int64, dbzMicroTimestamp)).
		Field("tz", named(connect.String, dbzZonedTimestamp)).
		Field("amount", amount).
		Field("v", vsd).
		Field("doc", named(connect.String, dbzJSON)).
		Field("u", named(connect.String, dbzUUID)).
		Field("raw", connect.Prim(connect.Bytes, true)).
		Field("ok", connect.Prim(connect.Boolean, true)).
		Field("f", connect.Prim(connect.Float64, true)).Build()
	source := connect.StructSchema().Name("io.debezium.connector.postgresql.Source").
		Field("db", connect.Prim(connect.String, false)).Field("schema", connect.Prim(connect.String, false)).Field("table", connect.Prim(connect.String, false)).Build()
	envelope = connect.StructSchema().Name("srv.public.t.Envelope").Version(2).
		Field("before", value).Field("after", value).Field("source", source).
		Field("op", connect.Prim(connect.String, false)).Build()
	return
}

type rowVals struct {
	id   int32
	name string
	big  string
}

func mkRecords(t *testing.T) []*connect.SinkRecord {
	keyS, valS, envS := rowSchema()
	off := int64(0)
	mk := func(op string, r *rowVals, keyID int32) *connect.SinkRecord {
		off++
		k := connect.NewStruct(keyS).Put("id", keyID)
		rec := &connect.SinkRecord{Topic: "srv.public.t", Partition: 0, Offset: off, KeySchema: keyS, Key: k}
		if op == "tombstone" {
			return rec
		}
		src := connect.NewStruct(envS.Field("source").Schema).Put("db", "src").Put("schema", "public").Put("table", "t")
		env := connect.NewStruct(envS).Put("op", op).Put("source", src)
		if r != nil {
			row := connect.NewStruct(valS).Put("id", r.id).Put("name", r.name).Put("big", r.big).
				Put("d", int32(19723)).Put("ts", int64(1709212455123456)).Put("tz", "2024-02-29T07:44:15.123456Z").
				Put("amount", connect.Decimal{Unscaled: big.NewInt(-12345), Scale: 2}).
				Put("v", connect.NewStruct(valS.Field("v").Schema).Put("scale", int32(3)).Put("value", []byte{0x01, 0x00})).
				Put("doc", `{"a": 1}`).Put("u", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11").
				Put("raw", []byte{0, 0xff}).Put("ok", true).Put("f", 2.5)
			if op == "d" {
				env.Put("before", row)
			} else {
				env.Put("after", row)
			}
		}
		rec.ValueSchema, rec.Value = envS, env
		return rec
	}
	return []*connect.SinkRecord{
		mk("r", &rowVals{1, "one", "long-1"}, 1),
		mk("c", &rowVals{2, "two", "long-2"}, 2),
		mk("u", &rowVals{1, "one-b", unavailableValue}, 1), // TOASTed big not carried: keep long-1
		mk("c", &rowVals{3, "three", "long-3"}, 3),
		mk("d", &rowVals{2, "two", "long-2"}, 2),
		mk("tombstone", nil, 2),
		// a primary key change 3 -> 4, as Debezium emits it: delete, tombstone, create
		mk("d", &rowVals{3, "three", "long-3"}, 3),
		mk("tombstone", nil, 3),
		mk("c", &rowVals{4, "four", "long-3"}, 4),
	}
}

func sinkCfg(url string) map[string]string {
	return map[string]string{
		"connection.url": url, "insert.mode": "upsert", "delete.enabled": "true",
		"primary.key.mode": "record_key", "schema.evolution": "basic",
		"collection.name.format": "${source.schema}_${source.table}_copy", "batch.size": "2",
	}
}

// wantRows is what the target table must hold after mkRecords, whatever
// the batching (each record in its own Put, or all in one).
const wantRows = "1|one-b|long-1;4|four|long-3"

func runPuts(t *testing.T, cfg map[string]string, recs []*connect.SinkRecord, per int) {
	t.Helper()
	ctx := context.Background()
	task := &Task{}
	if err := task.Start(ctx, nil, cfg); err != nil {
		t.Fatal(err)
	}
	defer task.Stop()
	for i := 0; i < len(recs); i += per {
		if err := task.Put(ctx, recs[i:min(i+per, len(recs))]); err != nil {
			t.Fatalf("put: %v", err)
		}
	}
	if err := task.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestJdbcSinkPostgres writes Debezium envelopes (snapshot, create,
// update with an unavailable TOASTed column, delete + tombstone, a key
// change) into PostgreSQL, one record per Put and then all at once
// (collapsed per key), and twice (replay): the table ends the same. The
// rules come from Debezium's JDBC sink documentation: upsert by primary
// key, delete.enabled for op=d and tombstones, basic schema evolution,
// the unavailable value placeholder never overwriting a value.
func TestJdbcSinkPostgres(t *testing.T) {
	ctx := context.Background()
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(ctx, "target"); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("jdbc:postgresql://%s:%d/target?sslmode=disable", pg.Host, pg.Port)
	cfg := sinkCfg(url)
	cfg["connection.username"] = pg.User
	for _, per := range []int{1, 100, 100} { // the last one replays everything: idempotent
		runPuts(t, cfg, mkRecords(t), per)
		conn, err := pg.Connect(ctx, "target")
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := conn.QueryRow(ctx, `SELECT string_agg(id||'|'||name||'|'||big, ';' ORDER BY id) FROM public_t_copy`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != wantRows {
			t.Fatalf("per=%d: rows %q, want %q", per, got, wantRows)
		}
		// Type mapping: Debezium semantic types land in native columns.
		var typed string
		if err := conn.QueryRow(ctx, `SELECT d::text||' '||ts::text||' '||(tz AT TIME ZONE 'UTC')::text||' '||amount::text||' '||v::text||' '||doc::text||' '||u::text||' '||encode(raw,'hex')||' '||ok::text||' '||f::text FROM public_t_copy WHERE id=1`).Scan(&typed); err != nil {
			t.Fatal(err)
		}
		want := "2024-01-01 2024-02-29 13:14:15.123456 2024-02-29 07:44:15.123456 -123.45 0.256 {\"a\": 1} a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11 00ff true 2.5"
		if typed != want {
			t.Fatalf("typed values %q, want %q", typed, want)
		}
		var types string
		if err := conn.QueryRow(ctx, `SELECT string_agg(column_name||':'||data_type, ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_name='public_t_copy'`).Scan(&types); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(types, "d:date,ts:timestamp without time zone,tz:timestamp with time zone,amount:numeric,v:numeric,doc:json,u:uuid,raw:bytea,ok:boolean,f:double precision") {
			t.Fatalf("column types %s", types)
		}
		conn.Close(ctx)
	}
}

// TestJdbcSinkMariaDB: the same records into MariaDB (INSERT … ON
// DUPLICATE KEY UPDATE), with a ZonedTimestamp converted to
// use.time.zone for a DATETIME column.
func TestJdbcSinkMariaDB(t *testing.T) {
	ctx := context.Background()
	m := testenv.MariaDBT(t)
	if err := m.CreateDatabase(ctx, "target"); err != nil {
		t.Fatal(err)
	}
	cfg := sinkCfg(fmt.Sprintf("jdbc:mariadb://%s/target", m.Addr()))
	cfg["connection.username"], cfg["connection.password"] = m.User, m.Password
	cfg["use.time.zone"] = "Europe/Paris"
	for _, per := range []int{1, 100, 100} {
		runPuts(t, cfg, mkRecords(t), per)
		mc := mysql.NewConfig()
		mc.Net, mc.Addr, mc.User, mc.Passwd, mc.DBName = "tcp", m.Addr(), m.User, m.Password, "target"
		db, err := sql.Open("mysql", mc.FormatDSN())
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if err := db.QueryRow("SELECT GROUP_CONCAT(CONCAT(id,'|',name,'|',big) ORDER BY id SEPARATOR ';') FROM public_t_copy").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != wantRows {
			t.Fatalf("per=%d: rows %q, want %q", per, got, wantRows)
		}
		var typed string
		if err := db.QueryRow("SELECT CONCAT_WS(' ', d, ts, tz, amount, HEX(`raw`), ok, f, u) FROM public_t_copy WHERE id=1").Scan(&typed); err != nil {
			t.Fatal(err)
		}
		// tz 07:44:15.123456Z is 08:44:15.123456 in Paris (CET, UTC+1 on 29 Feb).
		want := "2024-01-01 2024-02-29 13:14:15.123456 2024-02-29 08:44:15.123456 -123.45 00FF 1 2.5 a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"
		if typed != want {
			t.Fatalf("typed values %q, want %q", typed, want)
		}
		db.Close()
	}

	// insert.mode=update (Debezium JDBC sink: "update" only changes rows
	// that exist): one multi-row UPDATE … JOIN per batch. Row 1 exists and
	// takes the batch's last values; rows 2 and 3 do not exist and stay
	// absent; typed values land as the upserts' did.
	mc := mysql.NewConfig()
	mc.Net, mc.Addr, mc.User, mc.Passwd, mc.DBName = "tcp", m.Addr(), m.User, m.Password, "target"
	db, err := sql.Open("mysql", mc.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{"CREATE TABLE upd LIKE public_t_copy", "INSERT INTO upd (id, name) VALUES (1, 'old')"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ucfg := maps.Clone(cfg)
	ucfg["insert.mode"], ucfg["collection.name.format"], ucfg["schema.evolution"] = "update", "upd", "none"
	runPuts(t, ucfg, mkRecords(t)[:4], 100)
	var got, typed, upserted string
	if err := db.QueryRow("SELECT GROUP_CONCAT(CONCAT(id,':',name,':',big) ORDER BY id) FROM upd").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != "1:one-b:long-1" {
		t.Fatalf("update: %s", got)
	}
	const typedCols = "CONCAT_WS(' ', d, ts, tz, amount, HEX(`raw`), ok, f, u)"
	if err := db.QueryRow("SELECT " + typedCols + " FROM upd WHERE id=1").Scan(&typed); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT " + typedCols + " FROM public_t_copy WHERE id=1").Scan(&upserted); err != nil {
		t.Fatal(err)
	}
	if typed != upserted {
		t.Fatalf("update typed values %q, upsert's %q", typed, upserted)
	}
}

// TestJdbcSinkConfigValidation: cross-key rules are per-field errors.
func TestJdbcSinkConfigValidation(t *testing.T) {
	errs := (&Connector{}).Validate(map[string]string{"connection.url": "jdbc:postgresql://h/db", "delete.enabled": "true", "insert.mode": "upsert"})
	keys := map[string]bool{}
	for _, e := range errs {
		keys[e.Key] = true
	}
	if !keys["delete.enabled"] || !keys["primary.key.mode"] {
		t.Fatalf("errors %v", errs)
	}
	if msgs := configDef.Validate(map[string]string{"connection.url": "http://x"}); len(msgs) == 0 {
		t.Fatal("a non-JDBC URL was accepted")
	}
}

// TestJdbcSinkModes covers the other documented modes on PostgreSQL:
// insert.mode=insert with primary.key.mode=none (every event appended),
// insert.mode=update (only existing rows change), primary.key.mode=kafka
// (__connect_topic/__connect_partition/__connect_offset as the key),
// primary.key.mode=record_value with primary.key.fields, and
// truncate.enabled (op=t empties the table, in order with the batch).
func TestJdbcSinkModes(t *testing.T) {
	ctx := context.Background()
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(ctx, "target"); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("jdbc:postgresql://%s:%d/target?sslmode=disable", pg.Host, pg.Port)
	conn, err := pg.Connect(ctx, "target")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	query := func(q string) string {
		var s *string
		if err := conn.QueryRow(ctx, q).Scan(&s); err != nil {
			t.Fatal(err)
		}
		if s == nil {
			return ""
		}
		return *s
	}
	recs := mkRecords(t)
	base := map[string]string{"connection.url": url, "connection.username": pg.User, "schema.evolution": "basic"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	// insert + none: the 6 events with an after image, appended.
	runPuts(t, with("insert.mode", "insert", "collection.name.format", "appended"), recs, 100)
	if got := query(`SELECT string_agg(id||':'||name, ',' ORDER BY id, name) FROM appended`); got != "1:one,1:one-b,2:two,3:three,4:four" {
		t.Fatalf("insert/none: %s", got)
	}
	// kafka: one row per Kafka record with an after image, keyed by its coordinates.
	runPuts(t, with("insert.mode", "upsert", "primary.key.mode", "kafka", "collection.name.format", "bykafka"), recs, 3)
	if got := query(`SELECT string_agg(__connect_topic||'/'||__connect_partition||'/'||__connect_offset||'='||id, ',' ORDER BY __connect_offset) FROM bykafka`); got != "srv.public.t/0/1=1,srv.public.t/0/2=2,srv.public.t/0/3=1,srv.public.t/0/4=3,srv.public.t/0/9=4" {
		t.Fatalf("kafka: %s", got)
	}
	// record_value on name: rows keyed by the value's name field.
	runPuts(t, with("insert.mode", "upsert", "primary.key.mode", "record_value", "primary.key.fields", "name", "collection.name.format", "byname"), recs, 100)
	if got := query(`SELECT string_agg(name||'='||id, ',' ORDER BY name) FROM byname`); got != "four=4,one=1,one-b=1,three=3,two=2" {
		t.Fatalf("record_value: %s", got)
	}
	// update: only rows that exist change (id 1 exists, id 9 does not).
	if _, err := conn.Exec(ctx, `CREATE TABLE upd (id integer PRIMARY KEY, name text, big text, d date, ts timestamp(6), tz timestamptz, amount numeric(10,2), v numeric, doc json, u uuid, raw bytea, ok boolean, f double precision); INSERT INTO upd (id, name) VALUES (1, 'old')`); err != nil {
		t.Fatal(err)
	}
	runPuts(t, with("insert.mode", "update", "primary.key.mode", "record_key", "collection.name.format", "upd", "schema.evolution", "none"), recs[:4], 100)
	if got := query(`SELECT string_agg(id||':'||name||':'||big, ',' ORDER BY id) FROM upd`); got != "1:one-b:long-1" {
		t.Fatalf("update: %s", got)
	}
	// truncate: the rows before op=t are gone, the ones after it stay.
	_, _, envS := rowSchema()
	trunc := &connect.SinkRecord{Topic: "srv.public.t", Offset: 100, ValueSchema: envS,
		Value: connect.NewStruct(envS).Put("op", "t").Put("source", connect.NewStruct(envS.Field("source").Schema).Put("db", "src").Put("schema", "public").Put("table", "t"))}
	batch := append(append(append([]*connect.SinkRecord{}, recs[:2]...), trunc), recs[3])
	runPuts(t, with("insert.mode", "upsert", "primary.key.mode", "record_key", "truncate.enabled", "true", "collection.name.format", "trunc"), batch, 100)
	if got := query(`SELECT string_agg(id||':'||name, ',' ORDER BY id) FROM trunc`); got != "3:three" {
		t.Fatalf("truncate: %s", got)
	}
	// schema.evolution=none and no table: a clear error.
	task := &Task{}
	if err := task.Start(ctx, nil, with("collection.name.format", "missing", "schema.evolution", "none")); err != nil {
		t.Fatal(err)
	}
	defer task.Stop()
	if err := task.Put(ctx, recs[:1]); err == nil || !strings.Contains(err.Error(), "table missing does not exist and schema.evolution=none") {
		t.Fatalf("missing table: %v", err)
	}
}

// TestJdbcSinkFlushWritesBatchAfterLostConnection: Put returns once its
// batch is handed to the write pipeline, so a batch whose write fails
// after Put returned nil must not be lost. The sink's connection is
// terminated (pg_terminate_backend, SQL state 57P01: retriable) between
// two Puts; the second batch's write fails, and Flush reconnects and
// writes it before returning nil (Kafka Connect's SinkTask contract:
// records passed to put are durable once flush returns, and only then
// are their offsets committed).
func TestJdbcSinkFlushWritesBatchAfterLostConnection(t *testing.T) {
	ctx := context.Background()
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(ctx, "target"); err != nil {
		t.Fatal(err)
	}
	cfg := sinkCfg(fmt.Sprintf("jdbc:postgresql://%s:%d/target?sslmode=disable", pg.Host, pg.Port))
	cfg["connection.username"] = pg.User
	recs := mkRecords(t)
	task := &Task{}
	if err := task.Start(ctx, nil, cfg); err != nil {
		t.Fatal(err)
	}
	defer task.Stop()
	if err := task.Put(ctx, recs[:4]); err != nil {
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
	var killed int
	if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = 'target' AND backend_type = 'client backend' AND pid <> pg_backend_pid()`).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	if killed != 1 {
		t.Fatalf("terminated %d sink connections, want 1", killed)
	}
	// The table is known (cached), so Put prepares and hands the batch
	// over without touching the dead connection.
	if err := task.Put(ctx, recs[4:]); err != nil {
		t.Fatalf("put after the connection was lost: %v", err)
	}
	if err := task.Flush(ctx); err != nil {
		t.Fatalf("flush: %v", err)
	}
	var got string
	if err := conn.QueryRow(ctx, `SELECT string_agg(id||'|'||name||'|'||big, ';' ORDER BY id) FROM public_t_copy`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != wantRows {
		t.Fatalf("rows %q, want %q", got, wantRows)
	}
	if len(task.unwritten) != 0 || task.inflight != nil {
		t.Fatalf("after flush: %d unwritten, in flight %v", len(task.unwritten), task.inflight != nil)
	}
}

// TestJdbcSinkFieldFilters: field.include.list / field.exclude.list as
// Debezium's FieldFilterFactory reads them (an entry <field> matches in
// every topic, <topic>:<field> in that topic only; key columns are always
// written), into PostgreSQL with schema.evolution=basic, so a filtered
// field is neither a column nor written.
func TestJdbcSinkFieldFilters(t *testing.T) {
	ctx := context.Background()
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(ctx, "target"); err != nil {
		t.Fatal(err)
	}
	conn, err := pg.Connect(ctx, "target")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	url := fmt.Sprintf("jdbc:postgresql://%s:%d/target?sslmode=disable", pg.Host, pg.Port)
	for _, c := range []struct {
		key, list, table, cols string
	}{
		// big everywhere, name only in another topic: name stays.
		{"field.exclude.list", "big, other.topic:name", "excl", "id,name,d,ts,tz,amount,v,doc,u,raw,ok,f"},
		{"field.include.list", "srv.public.t:name,f,other.topic:ok", "incl", "id,name,f"},
	} {
		cfg := sinkCfg(url)
		cfg["connection.username"] = pg.User
		cfg["collection.name.format"] = c.table
		cfg[c.key] = c.list
		runPuts(t, cfg, mkRecords(t), 100)
		var cols string
		if err := conn.QueryRow(ctx, `SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_name = $1`, c.table).Scan(&cols); err != nil {
			t.Fatal(err)
		}
		if cols != c.cols {
			t.Fatalf("%s=%s: columns %s, want %s", c.key, c.list, cols, c.cols)
		}
		var rows string
		if err := conn.QueryRow(ctx, `SELECT string_agg(id||'|'||name, ';' ORDER BY id) FROM `+c.table).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows != "1|one-b;4|four" {
			t.Fatalf("%s: rows %q", c.table, rows)
		}
	}
}

// TestJdbcSinkDebeziumKeysAccepted: keys of Debezium's
// JdbcSinkConnectorConfig that connectd accepts with their documented
// types and defaults (connection.pool.*: INT/LONG; the naming strategies:
// only Debezium's defaults), and the per-field errors for wrong values.
func TestJdbcSinkDebeziumKeysAccepted(t *testing.T) {
	base := map[string]string{"connection.url": "jdbc:postgresql://h/db"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	ok := with("connection.pool.min_size", "1", "connection.pool.max_size", "10", "connection.pool.acquire_increment", "2", "connection.pool.timeout", "600",
		"collection.naming.strategy", "io.debezium.sink.naming.DefaultCollectionNamingStrategy",
		"column.naming.strategy", "io.debezium.connector.jdbc.naming.DefaultColumnNamingStrategy",
		"table.naming.strategy", "io.debezium.connector.jdbc.naming.DefaultTableNamingStrategy", "field.include.list", "a,t:b")
	if errs := append(configDef.Validate(ok), validate(ok)...); len(errs) != 0 {
		t.Fatalf("valid Debezium keys refused: %v", errs)
	}
	for _, c := range []struct {
		cfg      map[string]string
		key, msg string
	}{
		{with("connection.pool.max_size", "many"), "connection.pool.max_size", "Not a number of type INT"},
		{with("connection.pool.min_size", "-1"), "connection.pool.min_size", "Value must be at least 0"},
		{with("collection.naming.strategy", "com.acme.Names"), "collection.naming.strategy", "Class com.acme.Names could not be found."},
		{with("column.naming.strategy", "com.acme.Cols"), "column.naming.strategy", "Class com.acme.Cols could not be found."},
		{with("field.include.list", "a", "field.exclude.list", "b"), "field.include.list", "Cannot define both field.exclude.list and field.include.list"},
	} {
		errs := append(configDef.Validate(c.cfg), validate(c.cfg)...)
		found := false
		for _, e := range errs {
			found = found || e.Key == c.key && strings.Contains(e.Message, c.msg)
		}
		if !found {
			t.Fatalf("%v: errors %v, want %s: %s", c.cfg, errs, c.key, c.msg)
		}
	}
}

// TestPostgresExecIsOneTransaction: the statements of one prepared
// transaction go as one pipeline ending in a single Sync, which
// PostgreSQL runs as one implicit transaction (protocol documentation,
// "Extended Query": an error rolls back everything since the last Sync).
// A failing second statement must leave the first one's row unwritten.
func TestPostgresExecIsOneTransaction(t *testing.T) {
	ctx := context.Background()
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(ctx, "target"); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseConfig(map[string]string{"connection.url": fmt.Sprintf("jdbc:postgresql://%s:%d/target?sslmode=disable", pg.Host, pg.Port),
		"connection.username": pg.User})
	if err != nil {
		t.Fatal(err)
	}
	d, err := openPostgres(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.close()
	if _, err := d.conn.Exec(ctx, `CREATE TABLE a (id int PRIMARY KEY); CREATE TABLE b (id int PRIMARY KEY, v int NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	err = d.exec(ctx, []pgStatement{
		{table: "a", sql: `INSERT INTO a VALUES (1)`},
		{table: "b", sql: `INSERT INTO b VALUES (1, NULL)`},
	})
	if err == nil || !strings.Contains(err.Error(), "table b") {
		t.Fatalf("exec error %v, want the NOT NULL violation of table b", err)
	}
	var n int
	if err := d.conn.QueryRow(ctx, `SELECT count(*) FROM a`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("table a has %d rows after the transaction failed", n)
	}
	// And a good transaction commits both, on the same connection.
	if err := d.exec(ctx, []pgStatement{{table: "a", sql: `INSERT INTO a VALUES (2)`}, {table: "b", sql: `INSERT INTO b VALUES (2, 3)`}}); err != nil {
		t.Fatal(err)
	}
	if err := d.conn.QueryRow(ctx, `SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM b)`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("%d rows after the committed transaction, want 2", n)
	}
}

// TestColsKeyReuse: plan's column set key is reused for rows of the same
// topic and row schema only when their columns are the same names.
func TestColsKeyReuse(t *testing.T) {
	_, valS, _ := rowSchema()
	cache := map[colsKeyID]string{}
	a := &change{topic: "t", row: valS, cols: []field{{name: "id"}, {name: "name"}}}
	b := &change{topic: "t", row: valS, cols: []field{{name: "name"}}}
	c := &change{topic: "t", row: valS, cols: []field{{name: "id"}, {name: "nam"}}}
	if k := colsKey(a, cache); k != "id\x00name\x00" {
		t.Fatalf("key %q", k)
	}
	if k := colsKey(b, cache); k != "name\x00" {
		t.Fatalf("different columns, same schema: key %q", k)
	}
	if k := colsKey(c, cache); k != "id\x00nam\x00" {
		t.Fatalf("key %q", k)
	}
	if !sameCols("id\x00name\x00", a.cols) || sameCols("id\x00name\x00", b.cols) || sameCols("id\x00name\x00", c.cols) || sameCols("", a.cols) {
		t.Fatal("sameCols")
	}
}

// TestPostgresConcurrentCreateTable: sink tasks of one connector
// (tasks.max > 1) create the same missing table and add the same missing
// column at the same time. PostgreSQL's IF NOT EXISTS does not make that
// safe (the loser can get 23505 on pg_type_typname_nsp_index, as CI saw in
// TestJdbcSinkAvroTwoTasks, or 42P07/42701): the loser must carry on with
// the table the winner made.
func TestPostgresConcurrentCreateTable(t *testing.T) {
	ctx := context.Background()
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(ctx, "target"); err != nil {
		t.Fatal(err)
	}
	cfg, err := parseConfig(map[string]string{"connection.url": fmt.Sprintf("jdbc:postgresql://%s:%d/target?sslmode=disable", pg.Host, pg.Port),
		"connection.username": pg.User})
	if err != nil {
		t.Fatal(err)
	}
	const tasks = 6
	ds := make([]*postgresDialect, tasks)
	for i := range ds {
		if ds[i], err = openPostgres(ctx, cfg); err != nil {
			t.Fatal(err)
		}
		defer ds[i].close()
	}
	key := []field{{name: "id", schema: connect.NewSchema(connect.Int32).Build()}}
	cols := []field{{name: "name", schema: connect.NewSchema(connect.String).Optional().Build()}}
	extra := []field{{name: "note", schema: connect.NewSchema(connect.String).Optional().Build()}}
	for round := 0; round < 20; round++ {
		table := fmt.Sprintf("t%d", round)
		var wg sync.WaitGroup
		errs := make([]error, tasks)
		start := make(chan struct{})
		for i, d := range ds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				if errs[i] = d.createTable(ctx, table, key, cols); errs[i] == nil {
					errs[i] = d.addColumns(ctx, table, extra)
				}
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d, task %d: %v", round, i, err)
			}
		}
		got, ok, err := ds[0].columns(ctx, table)
		if err != nil || !ok || len(got) != 3 {
			t.Fatalf("round %d: table %s columns %v exists %v err %v", round, table, got, ok, err)
		}
	}
}
