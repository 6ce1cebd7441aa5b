package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
)

// startErr starts a task that must fail and returns its error message (what
// the worker puts in the task's /status trace).
func startErr(t *testing.T, cfg map[string]string, tune func(*Task)) string {
	t.Helper()
	task := NewTask()
	if tune != nil {
		tune(task)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := task.Start(ctx, taskCtx{&memOffsets{}}, cfg)
	if err == nil {
		task.Stop()
		t.Fatalf("Start succeeded, want an error")
	}
	if serr := task.Stop(); serr != nil {
		t.Errorf("Stop after failed Start: %v", serr)
	}
	return err.Error()
}

// waitSlotActive waits (up to 20 s) until pg_replication_slots shows the
// slot held by a walsender.
func waitSlotActive(t *testing.T, pg *testenv.Postgres, name string) {
	t.Helper()
	waitSlot(t, pg, name, true)
}

// waitSlotReleased waits until no walsender holds the slot: the server
// ends a walsender only after its client's connection closed, so right
// after Task.Stop the slot can still be active (SQLSTATE 55006 for the
// next client).
func waitSlotReleased(t *testing.T, pg *testenv.Postgres, name string) {
	t.Helper()
	waitSlot(t, pg, name, false)
}

func waitSlot(t *testing.T, pg *testenv.Postgres, name string, want bool) {
	t.Helper()
	c, err := pg.Connect(context.Background(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	for deadline := time.Now().Add(20 * time.Second); ; {
		var active bool
		if err := c.QueryRow(context.Background(), `SELECT coalesce(bool_or(active), false) FROM pg_replication_slots WHERE slot_name = $1`, name).Scan(&active); err != nil {
			t.Fatal(err)
		}
		if active == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot %s: active=%v after 20 s, want %v", name, active, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func countSlots(t *testing.T, pg *testenv.Postgres, name string) int {
	t.Helper()
	c, err := pg.Connect(context.Background(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	var n int
	if err := c.QueryRow(context.Background(), `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`, name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSlotAndPublicationLifecycle checks slot and publication reuse,
// slot.drop.on.stop, and the message of each start failure a user can fix
// (Debezium's PostgresConnector.validate and replication connection checks
// fail on the same conditions).
func TestSlotAndPublicationLifecycle(t *testing.T) {
	pg := testenv.PostgresT(t)
	setupShop(t, pg)
	base := baseConfig(pg, "shop")
	cfg := func(kv ...string) map[string]string {
		c := map[string]string{}
		for k, v := range base {
			c[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			c[kv[i]] = kv[i+1]
		}
		return c
	}
	wantMsg := func(name, msg string, parts ...string) {
		t.Helper()
		for _, p := range parts {
			if !strings.Contains(msg, p) {
				t.Errorf("%s: error %q lacks %q", name, msg, p)
			}
		}
	}

	// plugin.name other than pgoutput
	wantMsg("plugin.name", startErr(t, cfg("plugin.name", "decoderbufs"), nil),
		"plugin.name", "decoderbufs is not supported by connectd; set plugin.name=pgoutput")
	// an existing slot made by another plugin
	exec(t, pg, "shop", `SELECT pg_create_logical_replication_slot('other_plugin', 'test_decoding')`)
	wantMsg("slot plugin", startErr(t, cfg("slot.name", "other_plugin"), nil),
		`replication slot "other_plugin" uses the test_decoding plugin`, "pgoutput")

	exec(t, pg, "shop", `SELECT pg_create_physical_replication_slot('physical')`)
	wantMsg("physical slot", startErr(t, cfg("slot.name", "physical"), nil), `replication slot "physical" is a physical slot`)

	// a user without REPLICATION
	exec(t, pg, "shop", `CREATE ROLE norepl LOGIN; GRANT SELECT ON ALL TABLES IN SCHEMA public TO norepl`)
	wantMsg("no REPLICATION", startErr(t, cfg("database.user", "norepl"), nil),
		`user "norepl" does not have the REPLICATION privilege`, "ALTER ROLE norepl REPLICATION")

	// a publication that misses a captured table, autocreate disabled
	exec(t, pg, "shop", `CREATE PUBLICATION partial FOR TABLE item`)
	wantMsg("publication", startErr(t, cfg("publication.name", "partial", "publication.autocreate.mode", "disabled", "slot.name", "pubcheck"), nil),
		`publication "partial" does not include the captured tables public.log`, `ALTER PUBLICATION partial ADD TABLE public.log`)
	if countSlots(t, pg, "pubcheck") != 0 {
		t.Errorf("a slot was created although the publication check failed")
	}
	wantMsg("no publication", startErr(t, cfg("publication.name", "nopub", "publication.autocreate.mode", "disabled"), nil),
		`publication "nopub" does not exist and publication.autocreate.mode=disabled`)
	// filtered: the existing publication is completed instead
	task := startTask(t, cfg("publication.name", "partial", "publication.autocreate.mode", "filtered", "slot.name", "filtered", "snapshot.mode", "no_data"), &memOffsets{})
	exec(t, pg, "shop", `INSERT INTO log VALUES ('x')`)
	if got := pollN(t, task, 1)[0].Topic; got != "dbserver1.public.log" {
		t.Errorf("filtered publication: got %s", got)
	}
	task.Stop()

	// the slot is reused, and held by a running task: a second one fails
	// with the PID that holds it
	first := startTask(t, cfg("slot.name", "shared", "snapshot.mode", "no_data"), &memOffsets{})
	// START_REPLICATION runs in the first task's reader goroutine after
	// Start returns: wait until the server shows the slot active.
	waitSlotActive(t, pg, "shared")
	// slot.max.retries=3 × slot.retry.delay.ms=100: Start waits about
	// 300 ms, then fails with the holder's PID (Debezium's
	// "Failed to start replication stream … slot … is active for PID").
	began := time.Now()
	msg := startErr(t, cfg("slot.name", "shared", "snapshot.mode", "no_data", "slot.max.retries", "3", "slot.retry.delay.ms", "100"), nil)
	wantMsg("slot active", msg, `replication slot "shared" is active for PID`, "after 3 retries 100ms apart", "slot.name")
	if took := time.Since(began); took < 300*time.Millisecond {
		t.Errorf("slot in use: Start failed after %v, before slot.max.retries × slot.retry.delay.ms = 300ms", took)
	}
	first.Stop()
	second := startTask(t, cfg("slot.name", "shared", "snapshot.mode", "no_data"), &memOffsets{}) // released by Stop: reused
	exec(t, pg, "shop", `INSERT INTO item VALUES (20, 'reuse')`)
	if got := ids(pollN(t, second, 1)); got != "c:20" {
		t.Errorf("reused slot: %s", got)
	}
	second.Stop()
	if countSlots(t, pg, "shared") != 1 {
		t.Errorf("slot dropped on stop without slot.drop.on.stop")
	}

	// slot.drop.on.stop (Debezium: drop the slot when the connector stops orderly)
	drop := startTask(t, cfg("slot.name", "dropme", "snapshot.mode", "no_data", "slot.drop.on.stop", "true"), &memOffsets{})
	if countSlots(t, pg, "dropme") != 1 {
		t.Fatalf("slot dropme not created")
	}
	if err := drop.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if countSlots(t, pg, "dropme") != 0 {
		t.Errorf("slot.drop.on.stop=true: slot still exists after Stop")
	}

	// wal_level below logical (last: needs a restart without logical slots)
	exec(t, pg, "shop", `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots`)
	exec(t, pg, "shop", `ALTER SYSTEM SET wal_level = replica`)
	if err := pg.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantMsg("wal_level", startErr(t, cfg(), nil), `the server's wal_level is "replica"`, "wal_level = logical")
}
