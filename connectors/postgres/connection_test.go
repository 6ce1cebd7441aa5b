package postgres

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/connectd/connectd/internal/testenv"
)

// with returns a copy of base with the key/value pairs kv set.
func with(base map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(base)+len(kv)/2)
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// TestTLSConnections checks database.sslmode, sslrootcert, sslcert, sslkey
// and sslpassword (libpq's meanings, which Debezium passes to the JDBC
// driver) on a server whose pg_hba.conf accepts only TLS (hostssl), for
// both the query and the replication connections: a change streamed after
// Start proves the replication connection got through.
func TestTLSConnections(t *testing.T) {
	pg := testenv.PostgresT(t)
	ctx := context.Background()
	exec(t, pg, "postgres", `CREATE DATABASE tls`)
	exec(t, pg, "tls", `CREATE TABLE t (id int PRIMARY KEY)`)
	files, err := pg.EnableTLS(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	base := with(baseConfig(pg, "tls"), "snapshot.mode", "no_data", "table.include.list", "public.t")
	streams := func(name string, cfg map[string]string, id string) {
		t.Helper()
		task := startTask(t, with(cfg, "slot.name", name), &memOffsets{})
		c, err := pg.Connect(ctx, "tls")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close(ctx)
		// Both connections of the task are TLS (the walsender included).
		var plain, tls int
		if err := c.QueryRow(ctx, `SELECT count(*) FILTER (WHERE NOT s.ssl), count(*) FILTER (WHERE s.ssl) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.application_name = 'connectd'`).Scan(&plain, &tls); err != nil {
			t.Fatal(err)
		}
		if plain != 0 || tls < 2 {
			t.Errorf("%s: %d plain and %d TLS connections of the task, want 0 and >= 2 (query + replication)", name, plain, tls)
		}
		if _, err := c.Exec(ctx, `INSERT INTO t VALUES (`+id+`)`); err != nil {
			t.Fatal(err)
		}
		if got := ids(pollN(t, task, 1)); got != "c:"+id {
			t.Errorf("%s: streamed %s, want c:%s", name, got, id)
		}
		task.Stop()
	}

	// disable: plain TCP, refused by the hostssl-only pg_hba.conf.
	wantMsg(t, "sslmode=disable", startErr(t, with(base, "database.sslmode", "disable"), nil), "no pg_hba.conf entry", "no encryption")
	// prefer (Debezium's default) and require get TLS.
	streams("prefer", base, "1")
	streams("require", with(base, "database.sslmode", "require"), "2")
	// verify-ca: the server's certificate must chain to sslrootcert.
	wantMsg(t, "verify-ca without root", startErr(t, with(base, "database.sslmode", "verify-ca"), nil), "certificate")
	streams("verifyca", with(base, "database.sslmode", "verify-ca", "database.sslrootcert", files.CACert), "3")
	// verify-full: the certificate names only "localhost", not 127.0.0.1.
	wantMsg(t, "verify-full by IP", startErr(t, with(base, "database.sslmode", "verify-full", "database.sslrootcert", files.CACert), nil), "127.0.0.1")
	streams("verifyfull", with(base, "database.sslmode", "verify-full", "database.sslrootcert", files.CACert, "database.hostname", "localhost"), "4")

	// Client certificate authentication (hostssl … cert): without a
	// certificate the server refuses; with sslcert + the encrypted sslkey
	// and its sslpassword it accepts; a wrong password fails to decrypt.
	if files, err = pg.EnableTLS(ctx, true); err != nil {
		t.Fatal(err)
	}
	cert := with(base, "database.sslmode", "verify-ca", "database.sslrootcert", files.CACert)
	wantMsg(t, "no client certificate", startErr(t, cert, nil), "certificate")
	// A wrong password fails the decryption, or (legacy PEM encryption has
	// no integrity check: about 1 in 256 wrong passwords pass the padding
	// check) yields bytes that are no private key.
	if msg := startErr(t, with(cert, "database.sslcert", files.ClientCert, "database.sslkey", files.ClientKeyEncrypted, "database.sslpassword", "wrong"), nil); !strings.Contains(msg, "decrypt") && !strings.Contains(msg, "parse private key") {
		t.Errorf("wrong sslpassword: error %q says neither decrypt nor parse private key", msg)
	}
	streams("clientcert", with(cert, "database.sslcert", files.ClientCert, "database.sslkey", files.ClientKeyEncrypted, "database.sslpassword", files.ClientKeyPassword), "5")
}

// keepAliveOf reads SO_KEEPALIVE of a connection's socket.
func keepAliveOf(t *testing.T, c net.Conn) int {
	t.Helper()
	sc, ok := c.(syscall.Conn)
	if !ok {
		t.Fatalf("connection %T has no socket", c)
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var serr error
	if err := raw.Control(func(fd uintptr) { v, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_KEEPALIVE) }); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	return v
}

// TestSessionKeys checks database.initial.statements (Debezium: ';'
// separated, ";;" a literal ';', run on each query connection, not on the
// one reading the log), database.query.timeout.ms (statement_timeout of
// the query connections), database.tcpKeepAlive (SO_KEEPALIVE) and
// slot.max.retries/slot.retry.delay.ms (a slot released while the task
// retries is taken).
func TestSessionKeys(t *testing.T) {
	pg := testenv.PostgresT(t)
	ctx := context.Background()
	exec(t, pg, "postgres", `CREATE DATABASE shop`)
	exec(t, pg, "shop", `CREATE TABLE t (id int PRIMARY KEY)`)
	base := with(baseConfig(pg, "shop"), "snapshot.mode", "no_data", "table.include.list", "public.t")

	task := startTask(t, with(base, "slot.name", "sess",
		"database.initial.statements", "SET application_name = 'connectd;;init';SET lock_timeout = 1234;",
		"database.query.timeout.ms", "300", "database.tcpKeepAlive", "false"), &memOffsets{})
	c, err := pg.Connect(ctx, "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	waitSlotActive(t, pg, "sess")
	rows, err := c.Query(ctx, `SELECT backend_type, application_name FROM pg_stat_activity WHERE application_name LIKE 'connectd%' ORDER BY 1, 2`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var bt, app string
		rows.Scan(&bt, &app)
		got = append(got, bt+"="+app)
	}
	// The catalog connection and the lag metrics' connection ran the
	// statements; the walsender kept the connection's application_name.
	if s := strings.Join(got, " "); !strings.Contains(s, "client backend=connectd;init") || !strings.Contains(s, "walsender=connectd") || strings.Contains(s, "walsender=connectd;init") {
		t.Errorf("application_name of the task's backends: %s", s)
	}
	var lockTimeout, stmtTimeout string
	if err := task.conn.QueryRow(ctx, "SELECT current_setting('lock_timeout'), current_setting('statement_timeout')").Scan(&lockTimeout, &stmtTimeout); err != nil {
		t.Fatal(err)
	}
	if lockTimeout != "1234ms" || stmtTimeout != "300ms" {
		t.Errorf("lock_timeout %s (second initial statement), statement_timeout %s (database.query.timeout.ms=300)", lockTimeout, stmtTimeout)
	}
	_, err = task.conn.Exec(ctx, "SELECT pg_sleep(2)")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Errorf("a 2 s query with database.query.timeout.ms=300: %v, want SQLSTATE 57014 (statement timeout)", err)
	}
	if v := keepAliveOf(t, task.conn.PgConn().Conn()); v != 0 {
		t.Errorf("database.tcpKeepAlive=false: SO_KEEPALIVE=%d on the query connection", v)
	}
	if v := keepAliveOf(t, task.repl.Conn()); v != 0 {
		t.Errorf("database.tcpKeepAlive=false: SO_KEEPALIVE=%d on the replication connection", v)
	}
	task.Stop()

	// Default (true): keep-alive on both connections.
	task = startTask(t, with(base, "slot.name", "sess"), &memOffsets{})
	if a, b := keepAliveOf(t, task.conn.PgConn().Conn()), keepAliveOf(t, task.repl.Conn()); a == 0 || b == 0 {
		t.Errorf("database.tcpKeepAlive=true: SO_KEEPALIVE %d (query) %d (replication)", a, b)
	}
	task.Stop()

	// A client streams from the slot; it stops 600 ms later, within the
	// task's 20 retries 100 ms apart: Start then takes the slot.
	waitSlotReleased(t, pg, "sess")
	holder, err := pgconn.Connect(ctx, pg.DSN("shop")+"&replication=database")
	if err != nil {
		t.Fatal(err)
	}
	if err := pglogrepl.StartReplication(ctx, holder, "sess", 0, pglogrepl.StartReplicationOptions{PluginArgs: []string{"proto_version '1'", "publication_names 'dbz_publication'"}}); err != nil {
		t.Fatal(err)
	}
	waitSlotActive(t, pg, "sess")
	go func() {
		time.Sleep(600 * time.Millisecond)
		holder.Close(context.Background())
	}()
	began := time.Now()
	task = startTask(t, with(base, "slot.name", "sess", "slot.max.retries", "20", "slot.retry.delay.ms", "100"), &memOffsets{})
	if took := time.Since(began); took < 500*time.Millisecond {
		t.Errorf("Start took %v: it did not wait for the busy slot", took)
	}
	exec(t, pg, "shop", `INSERT INTO t VALUES (7)`)
	if got := ids(pollN(t, task, 1)); got != "c:7" {
		t.Errorf("after the slot was released: %s", got)
	}
}

// wantMsg fails t unless msg contains every part.
func wantMsg(t *testing.T, name, msg string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("%s: error %q lacks %q", name, msg, p)
		}
	}
}
