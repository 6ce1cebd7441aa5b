//go:build soak

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	"github.com/jackc/pgx/v5"
)

// The soak (issue 21, make soak DURATION=5m): a PostgreSQL and a MariaDB
// pipeline on the embedded broker under a steady write load, with faults at
// random times — SIGKILL of connectd (then a restart on the same data dir),
// crashes of PostgreSQL (immediate stop, recovery) and of MariaDB (SIGKILL,
// restart, crash recovery), and a TCP proxy between connectd and each
// database that resets every connection or stalls them for 2-8 s — with a JDBC sink copying each topic into the
// other database, and, at the end, the validators:
//   - no gaps: every value written for a key reached its topic (each row's v
//     goes 1, 2, 3, … across its inserts, updates and deletes, so a lost
//     change is a missing v);
//   - per-key order: the first time each v of a key is seen comes after the
//     first time of every smaller v (a replay after a SIGKILL may repeat
//     earlier values: at-least-once, counted as duplicates);
//   - connectd verify of both connectors is CONSISTENT, against their topics
//     and against the JDBC sinks' tables (verify --against).
//
// CONNECTD_SOAK_DURATION (default 2m) and CONNECTD_SOAK_SEED (default: the
// time) set the run; the seed and the fault log are printed, so a failure
// can be run again.
func TestSoak(t *testing.T) {
	dur := 2 * time.Minute
	if v := os.Getenv("CONNECTD_SOAK_DURATION"); v != "" {
		var err error
		if dur, err = time.ParseDuration(v); err != nil {
			t.Fatalf("CONNECTD_SOAK_DURATION: %v", err)
		}
	}
	seed := time.Now().UnixNano()
	if v := os.Getenv("CONNECTD_SOAK_SEED"); v != "" {
		seed, _ = strconv.ParseInt(v, 10, 64)
	}
	rng := rand.New(rand.NewSource(seed))
	t.Logf("soak: duration %s, seed %d (CONNECTD_SOAK_SEED=%d to run it again)", dur, seed, seed)
	ctx := context.Background()
	// What failed, printed again last of all (this cleanup runs after the
	// others, which print connectd's logs): CI keeps only the end of the
	// output.
	var problems []string
	report := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		problems = append(problems, msg)
		t.Error(msg)
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		shown := problems
		if len(shown) > 30 {
			shown = shown[:30]
		}
		t.Logf("soak FAILED (CONNECTD_SOAK_SEED=%d), %d problems, the first %d:\n%s", seed, len(problems), len(shown), strings.Join(shown, "\n"))
	})

	pg := startInventory(t)
	mustExec(t, pg, `CREATE TABLE inventory.soak (id int PRIMARY KEY, v bigint NOT NULL, pad text); INSERT INTO inventory.soak VALUES (100000, 1, 'sentinel')`)
	m := startMariaDB(t)
	mariaExec(t, m, `CREATE TABLE soak (id int PRIMARY KEY, v bigint NOT NULL, pad text); INSERT INTO soak VALUES (100000, 1, 'sentinel')`)
	// connectd reaches each database through a proxy that drops or stalls
	// its connections (faults below); the writers connect directly.
	pgProxy := startFaultProxy(t, fmt.Sprintf("%s:%d", pg.Host, pg.Port))
	mdProxy := startFaultProxy(t, m.Addr())
	via := func(cfg map[string]string, p *faultProxy) map[string]string {
		cfg["database.hostname"], cfg["database.port"] = p.host(), fmt.Sprint(p.port())
		return cfg
	}
	d := newDaemon(t)
	d.problemsOnly = true
	d.start()
	if code, b := d.do("POST", "/connectors", map[string]any{"name": "pgsoak", "config": via(pgConnector(pg, map[string]string{"table.include.list": "inventory.soak"}), pgProxy)}); code != 201 {
		t.Fatalf("create pgsoak: %d %s", code, b)
	}
	if code, b := d.do("POST", "/connectors", map[string]any{"name": "mdsoak", "config": via(mariaConnector(m, map[string]string{"table.include.list": "inventory.soak", "topic.prefix": "mdb"}), mdProxy)}); code != 201 {
		t.Fatalf("create mdsoak: %d %s", code, b)
	}
	d.waitTaskState("pgsoak", "RUNNING")
	d.waitTaskState("mdsoak", "RUNNING")
	// JDBC sinks, each into the other database (upserts and deletes by key),
	// checked at the end by connectd verify --against.
	if err := pg.CreateDatabase(ctx, "sinkdb"); err != nil {
		t.Fatal(err)
	}
	mariaExec(t, m, "CREATE DATABASE sinkdb")
	for name, cfg := range map[string]map[string]string{
		"pg2maria": jdbcSinkConfig(fmt.Sprintf("jdbc:mariadb://127.0.0.1:%d/sinkdb", mdProxy.port()), m.User, m.Password, "dbserver1.inventory.soak",
			map[string]string{"collection.name.format": "soak_from_pg"}),
		"maria2pg": jdbcSinkConfig(fmt.Sprintf("jdbc:postgresql://127.0.0.1:%d/sinkdb?sslmode=disable", pgProxy.port()), pg.User, "", "mdb.inventory.soak",
			map[string]string{"collection.name.format": "soak_from_maria"}),
	} {
		if code, b := d.do("POST", "/connectors", map[string]any{"name": name, "config": cfg}); code != 201 {
			t.Fatalf("create %s: %d %s", name, code, b)
		}
		d.waitTaskState(name, "RUNNING")
	}
	// The writers start after the snapshots (each reads one sentinel row,
	// its last record): a value overwritten before a snapshot reads its row
	// is, rightly, never an event, and the no-gaps validator counts every
	// value written.
	newConsumer(t, d.kafka, `^(dbserver1|mdb)\.inventory\.soak$`).until(2, 2*time.Minute)

	const keys = 300
	type keyLog struct {
		written []int64 // every v inserted or updated, in order (deletes carry none)
		deleted bool    // the row is gone now
	}
	type writer struct {
		name  string
		topic string
		logs  [keys]keyLog
		exec  func(k int, v int64, op string) error // op: insert, update, delete
		check func(k int) (v int64, ok bool, err error)
		n     atomic.Int64
	}
	pgConn := func() *pgx.Conn {
		c, err := pg.Connect(ctx, "inventory")
		if err != nil {
			return nil
		}
		return c
	}
	var pgc *pgx.Conn
	pgw := &writer{name: "postgres", topic: "dbserver1.inventory.soak"}
	pgw.exec = func(k int, v int64, op string) error {
		if pgc == nil || pgc.IsClosed() {
			if pgc = pgConn(); pgc == nil {
				return fmt.Errorf("postgres down")
			}
		}
		var err error
		switch op {
		case "insert":
			_, err = pgc.Exec(ctx, `INSERT INTO inventory.soak VALUES ($1, $2, repeat('p', $1))`, k, v)
		case "update":
			_, err = pgc.Exec(ctx, `UPDATE inventory.soak SET v = $2 WHERE id = $1`, k, v)
		case "delete":
			_, err = pgc.Exec(ctx, `DELETE FROM inventory.soak WHERE id = $1`, k)
		}
		if err != nil {
			pgc.Close(ctx)
			pgc = nil
		}
		return err
	}
	pgw.check = func(k int) (int64, bool, error) {
		if pgc == nil || pgc.IsClosed() {
			if pgc = pgConn(); pgc == nil {
				return 0, false, fmt.Errorf("postgres down")
			}
		}
		var v int64
		err := pgc.QueryRow(ctx, `SELECT v FROM inventory.soak WHERE id = $1`, k).Scan(&v)
		if err == pgx.ErrNoRows {
			return 0, false, nil
		}
		return v, err == nil, err
	}
	// The MariaDB connection is opened again after an error (the server
	// may have been crashed).
	var mc *client.Conn
	mdConn := func() error {
		if mc != nil {
			return nil
		}
		c, err := m.Connect(ctx, "inventory")
		if err != nil {
			return err
		}
		mc = c
		return nil
	}
	defer func() {
		if mc != nil {
			mc.Close()
		}
	}()
	mdw := &writer{name: "mariadb", topic: "mdb.inventory.soak"}
	mdw.exec = func(k int, v int64, op string) (err error) {
		if err := mdConn(); err != nil {
			return err
		}
		defer func() {
			if err != nil {
				mc.Close()
				mc = nil
			}
		}()
		switch op {
		case "insert":
			_, err = mc.Execute(`INSERT INTO soak VALUES (?, ?, REPEAT('p', ?))`, k, v, k)
		case "update":
			_, err = mc.Execute(`UPDATE soak SET v = ? WHERE id = ?`, v, k)
		case "delete":
			_, err = mc.Execute(`DELETE FROM soak WHERE id = ?`, k)
		}
		return err
	}
	mdw.check = func(k int) (int64, bool, error) {
		if err := mdConn(); err != nil {
			return 0, false, err
		}
		r, err := mc.Execute(`SELECT v FROM soak WHERE id = ?`, k)
		if err != nil {
			mc.Close()
			mc = nil
			return 0, false, err
		}
		if len(r.Values) == 0 {
			return 0, false, nil
		}
		v, _ := r.GetInt(0, 0)
		return v, true, nil
	}

	var stop atomic.Bool
	var wg sync.WaitGroup
	writeLoop := func(w *writer, seed int64) {
		defer wg.Done()
		r := rand.New(rand.NewSource(seed))
		exists := [keys]bool{}
		next := [keys]int64{}
		for !stop.Load() {
			k := r.Intn(keys)
			v := next[k] + 1
			op := "update"
			switch {
			case !exists[k]:
				op = "insert"
			case r.Intn(10) == 0:
				op = "delete"
			}
			if err := w.exec(k, v, op); err != nil {
				// The statement may have committed before the connection
				// broke: ask the database what it holds.
				time.Sleep(200 * time.Millisecond)
				got, ok, cerr := w.check(k)
				if cerr != nil {
					continue // still down; the same change is tried again later
				}
				applied := (op == "delete" && !ok) || (op != "delete" && ok && got == v)
				if !applied {
					continue
				}
			}
			exists[k] = op != "delete"
			w.logs[k].deleted = op == "delete"
			if op != "delete" { // a delete carries no new v
				next[k] = v
				w.logs[k].written = append(w.logs[k].written, v)
			}
			w.n.Add(1)
			time.Sleep(time.Duration(r.Intn(3)) * time.Millisecond)
		}
	}
	wg.Add(2)
	go writeLoop(pgw, rng.Int63())
	go writeLoop(mdw, rng.Int63())

	// Faults until the duration is over.
	faults := map[string]int{}
	var longestRecovery time.Duration
	end := time.Now().Add(dur)
	for time.Now().Before(end) {
		time.Sleep(time.Duration(2000+rng.Intn(6000)) * time.Millisecond)
		switch f := rng.Intn(10); {
		case f < 6:
			d.kill()
			faults["sigkill-connectd"]++
			t0 := time.Now()
			d.start()
			d.waitTaskState("pgsoak", "RUNNING")
			d.waitTaskState("mdsoak", "RUNNING")
			if r := time.Since(t0); r > longestRecovery {
				longestRecovery = r
			}
		case f == 7:
			// MariaDB killed (SIGKILL) and started again: crash recovery;
			// the connector and the pg2maria sink reconnect.
			if err := m.Crash(ctx); err != nil {
				report("crash mariadb: %v", err)
				t.FailNow()
			}
			faults["crash-mariadb"]++
		case f == 8:
			// every connection of connectd to both databases reset
			pgProxy.drop()
			mdProxy.drop()
			faults["drop-connections"]++
		case f == 9:
			// nothing passes either way for 2-8 s, connections kept
			st := time.Duration(2000+rng.Intn(6000)) * time.Millisecond
			pgProxy.stall(st)
			mdProxy.stall(st)
			faults["stall-connections"]++
		default:
			// A crash (immediate stop, then crash recovery). A fast
			// shutdown waits for every logical replication client to
			// confirm all it was sent, which the default
			// lsn.flush.mode=connector never does while idle (as
			// Debezium's): that is a separate case, not a soak fault.
			if err := pg.Crash(ctx); err != nil {
				report("crash postgres: %v", err)
				t.FailNow()
			}
			faults["crash-postgres"]++
		}
		t.Logf("soak: %s: faults %v, written postgres %d mariadb %d", time.Now().Format("15:04:05"), faults, pgw.n.Load(), mdw.n.Load())
	}
	stop.Store(true)
	wg.Wait()

	// Everything written must arrive: read both topics until each key's
	// last written v (or its delete) was seen.
	c := newConsumer(t, d.kafka, `^(dbserver1|mdb)\.inventory\.soak$`)
	type seen struct {
		first   map[int64]int // v → index of its first sighting
		order   []int64       // v in first-sighting order
		dups    int
		deleted bool
	}
	state := map[string]map[int]*seen{}
	done := func() bool {
		for _, w := range []*writer{pgw, mdw} {
			for k := 0; k < keys; k++ {
				l := w.logs[k]
				if len(l.written) == 0 {
					continue
				}
				s := state[w.topic][k]
				if s == nil {
					return false
				}
				last := l.written[len(l.written)-1]
				if _, ok := s.first[last]; !ok && !l.deleted {
					return false
				}
				if l.deleted && !s.deleted {
					return false
				}
			}
		}
		return true
	}
	deadline := time.Now().Add(5 * time.Minute)
	read := 0
	for !done() {
		if time.Now().After(deadline) {
			report("not every change arrived within 5 minutes of the end (read %d events)", read)
			t.FailNow()
		}
		for _, e := range c.drain(2 * time.Second)[read:] {
			read++
			if e.Key == nil {
				continue
			}
			k := int(e.Key["id"].(float64))
			if state[e.Topic] == nil {
				state[e.Topic] = map[int]*seen{}
			}
			s := state[e.Topic][k]
			if s == nil {
				s = &seen{first: map[int64]int{}}
				state[e.Topic][k] = s
			}
			if e.Tombstone {
				continue
			}
			if e.Op == "d" {
				s.deleted = true
				continue
			}
			v := int64(e.After["v"].(float64))
			s.deleted = false
			if _, ok := s.first[v]; ok {
				s.dups++
				continue
			}
			s.first[v] = len(s.order)
			s.order = append(s.order, v)
		}
	}
	// Validators: no gaps (every v written was seen), per-key order of
	// first sightings; duplicates are counted (at-least-once replays).
	var lost, dups, outOfOrder int
	for _, w := range []*writer{pgw, mdw} {
		for k := 0; k < keys; k++ {
			s := state[w.topic][k]
			for _, v := range w.logs[k].written {
				if s != nil {
					if _, ok := s.first[v]; ok {
						continue
					}
				}
				lost++
				report("%s key %d: v %d was written and never arrived", w.topic, k, v)
			}
			if s == nil {
				continue
			}
			dups += s.dups
			for i := 1; i < len(s.order); i++ {
				if s.order[i] < s.order[i-1] {
					outOfOrder++
					report("%s key %d: v %d first seen after v %d", w.topic, k, s.order[i], s.order[i-1])
				}
			}
		}
	}
	// Every task runs: a task the faults left FAILED (an error it should
	// have retried) is named with its trace.
	for _, name := range []string{"pgsoak", "mdsoak", "pg2maria", "maria2pg"} {
		code, b := d.do("GET", "/connectors/"+name+"/status", nil)
		var st struct {
			Connector struct{ State, Trace string }
			Tasks     []struct {
				ID           int
				State, Trace string
			}
		}
		if code != 200 || json.Unmarshal(b, &st) != nil {
			report("status of %s: %d %s", name, code, b)
			continue
		}
		if st.Connector.State != "RUNNING" {
			report("connector %s is %s: %s", name, st.Connector.State, st.Connector.Trace)
		}
		for _, tk := range st.Tasks {
			if tk.State != "RUNNING" {
				report("task %s-%d is %s: %s", name, tk.ID, tk.State, tk.Trace)
			}
		}
	}
	for _, name := range []string{"pgsoak", "mdsoak"} {
		out, errOut, code := runCLIFor(t, 5*time.Minute, "verify", name, "--url", d.rest, "--rounds", "3", "--settle", "3s")
		if code != 0 {
			report("connectd verify %s: exit %d\n%s\n%s", name, code, out, errOut)
		}
	}
	// The sinks' tables equal their sources.
	for _, v := range [][2]string{{"pgsoak", "pg2maria"}, {"mdsoak", "maria2pg"}} {
		out, errOut, code := runCLIFor(t, 5*time.Minute, "verify", v[0], "--against", v[1], "--url", d.rest, "--rounds", "3", "--settle", "60s")
		if code != 0 {
			report("connectd verify %s --against %s: exit %d\n%s\n%s", v[0], v[1], code, out, errOut)
		} else {
			t.Logf("verify %s --against %s:\n%s", v[0], v[1], out)
		}
	}
	t.Logf("soak figures: duration %s, faults %v, rows written postgres %d mariadb %d, events read %d, lost %d, duplicates (at-least-once replays) %d, out of order %d, longest recovery %s",
		dur, faults, pgw.n.Load(), mdw.n.Load(), read, lost, dups, outOfOrder, longestRecovery.Round(time.Millisecond))
}
