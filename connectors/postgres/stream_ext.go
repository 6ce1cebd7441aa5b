package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strings"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/headers"
)

// Runtime of the streaming-side Debezium keys of config_stream.go: event
// processing failures, source.xmin, LSN flush modes, slot stream parameters,
// REPLICA IDENTITY autoset, failover slots and context headers.

// eventError marks an error of decoding or processing one replication
// message (event.processing.failure.handling.mode decides what it does).
type eventError struct{ err error }

func (e *eventError) Error() string { return e.err.Error() }
func (e *eventError) Unwrap() error { return e.err }

// eventFailed wraps err (nil stays nil) as a failure of the event being
// processed.
func eventFailed(err error) error {
	if err == nil {
		return nil
	}
	var ee *eventError
	if errors.As(err, &ee) {
		return err
	}
	return &eventError{err}
}

// tolerate applies event.processing.failure.handling.mode to err, returned
// by the processing of the message at lsn: an event failure is skipped
// (warn: logged with the LSN; ignore: at debug level) or, with fail, ends
// the task with the LSN in the message, as Debezium's
// EventProcessingFailureHandlingMode. Anything else (a lost connection, the
// task stopping) is returned as it is in every mode.
func (s *streamer) tolerate(ctx context.Context, err error, lsn int64) error {
	var ee *eventError
	if err == nil || !errors.As(err, &ee) {
		return err
	}
	t := s.t
	var ne net.Error
	if ctx.Err() != nil || t.conn == nil || t.conn.IsClosed() || errors.As(err, &ne) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return ee.err
	}
	at := pglogrepl.LSN(lsn).String()
	switch t.cfg.ext.failureMode {
	case failureWarn:
		t.log.Warn("skipping an event that cannot be processed ("+KeyEventProcessingFailureMode+"=warn)", "lsn", at, "error", ee.err)
		return nil
	case failureIgnore:
		t.log.Debug("skipping an event that cannot be processed ("+KeyEventProcessingFailureMode+"=ignore)", "lsn", at, "error", ee.err)
		return nil
	}
	return fmt.Errorf("postgres: cannot process the event at LSN %s (%s=fail; warn or ignore skip it): %w", at, KeyEventProcessingFailureMode, ee.err)
}

// slotXmin returns source.xmin: the slot's catalog_xmin, read again when
// xmin.fetch.interval.ms has elapsed since the last read (as Debezium's
// PostgresTaskContext.getSlotXmin); nil when the interval is 0 or the slot
// has none. The value is boxed once per read and shared by the events.
func (s *streamer) slotXmin(ctx context.Context) (any, error) {
	iv := s.t.cfg.ext.xminInterval
	if iv <= 0 {
		return nil, nil
	}
	if now := time.Now(); !now.Before(s.nextXmin) {
		var x *int64
		err := s.t.conn.QueryRow(ctx, `SELECT catalog_xmin::text::bigint FROM pg_replication_slots WHERE slot_name = $1`, s.t.cfg.slotName).Scan(&x)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("postgres: read catalog_xmin of slot %s (%s): %w", s.t.cfg.slotName, KeyXminFetchIntervalMs, err)
		}
		s.xmin = nil
		if x != nil {
			s.xmin = *x
		}
		s.nextXmin = now.Add(iv)
	}
	return s.xmin, nil
}

// flushPosition is the LSN sent as written/flushed/applied in standby status
// updates: the confirmed LSN, or 0 (InvalidXLogRecPtr, which the walsender
// ignores) with lsn.flush.mode=manual, so the slot never advances.
func (t *Task) flushPosition() int64 {
	if t.cfg.ext.flushMode == flushManual {
		return 0
	}
	return t.confirmed.Load()
}

// noteEmitted records r, which has an offset, as the last record the task
// queued (lsn.flush.mode=connector_and_driver).
func (t *Task) noteEmitted(r *connect.SourceRecord) {
	t.drv.Lock()
	t.drv.last, t.drv.committed = reflect.ValueOf(r.SourceOffset).UnsafePointer(), false
	t.drv.Unlock()
}

// noteCommitted records that off, committed by the worker, was the last
// record queued, if it was (lsn.flush.mode=connector_and_driver).
func (t *Task) noteCommitted(off map[string]any) {
	t.drv.Lock()
	if reflect.ValueOf(off).UnsafePointer() == t.drv.last {
		t.drv.committed = true
	}
	t.drv.Unlock()
}

// allCommitted reports whether every record the task queued was committed
// by the worker (or none was queued).
func (t *Task) allCommitted() bool {
	t.drv.Lock()
	defer t.drv.Unlock()
	return t.drv.last == nil || t.drv.committed
}

// driverFlush confirms walEnd, the server's WAL position of a keepalive,
// with lsn.flush.mode=connector_and_driver when the stream is between
// transactions and every record queued was committed: nothing received
// before walEnd is then still to be delivered, as the pgjdbc driver's
// keepalive flush does for Debezium. It reports whether it moved the
// confirmed LSN.
func (s *streamer) driverFlush(walEnd int64) bool {
	t := s.t
	if t.cfg.ext.flushMode != flushConnectorAndDriver || s.dec.inTx || !t.allCommitted() {
		return false
	}
	for {
		cur := t.confirmed.Load()
		if walEnd <= cur {
			return false
		}
		if t.confirmed.CompareAndSwap(cur, walEnd) {
			return true
		}
	}
}

// streamArgs returns the pgoutput options of START_REPLICATION: own, then
// the slot.stream.params entries whose names own does not set (as
// Debezium, whose own options replace the user's of the same name).
func (t *Task) streamArgs(own []string) []string {
	names := map[string]bool{}
	for _, a := range own {
		n, _, _ := strings.Cut(a, " ")
		names[strings.ToLower(n)] = true
	}
	args := own
	for _, p := range t.cfg.ext.streamParams {
		if names[strings.ToLower(p[0])] {
			t.log.Warn("slot.stream.params: connectd sets this option itself; the configured value is not used", "option", p[0], "value", p[1])
			continue
		}
		args = append(args, pgx.Identifier{p[0]}.Sanitize()+" "+quoteLiteral(p[1]))
	}
	return args
}

// contextHeaders are Debezium's context headers of the task's change events
// (extended.headers.enabled), shared with the MySQL connector
// (connectors/internal/headers).
func contextHeaders(topicPrefix string, now time.Time) []connect.Header {
	return headers.Context("postgresql", topicPrefix, now)
}

// withHeaders adds the context headers to r unless it is a heartbeat or a
// transaction metadata record (Debezium's heartbeats and transaction events
// are not data change events and carry none).
func (t *Task) withHeaders(r *connect.SourceRecord) {
	if t.headers == nil || r.Topic == t.cfg.heartbeatTopic || r.Topic == t.cfg.txTopic {
		return
	}
	if len(r.Headers) == 0 {
		r.Headers = t.headers
		return
	}
	r.Headers = append(r.Headers[:len(r.Headers):len(r.Headers)], t.headers...)
}

// setReplicaIdentities applies replica.identity.autoset.values to the
// captured tables at start, as Debezium's
// PostgresReplicationConnection.initReplicaIdentity: for each table an entry
// matches, ALTER TABLE … REPLICA IDENTITY when the table's current identity
// differs. A table two entries match, or a failed ALTER, is logged as an
// error and left as it is (Debezium logs and goes on); a failure to list
// the tables fails the start.
func (t *Task) setReplicaIdentities(ctx context.Context) error {
	rules := t.cfg.ext.replicaAutoset
	if len(rules) == 0 {
		return nil
	}
	tables, err := listTables(ctx, t.conn, t.cfg)
	if err != nil {
		return fmt.Errorf("postgres: %s: list the captured tables: %w", KeyReplicaIdentityAutoset, err)
	}
	for _, tb := range tables {
		id := tb[0] + "." + tb[1]
		var match []replicaRule
		for _, r := range rules {
			if r.table.MatchString(id) {
				match = append(match, r)
			}
		}
		switch {
		case len(match) == 0:
			continue
		case len(match) > 1:
			t.log.Error(fmt.Sprintf("%s: more than one entry matches table %s; its replica identity is left as it is", KeyReplicaIdentityAutoset, id),
				"entries", fmt.Sprint(entries(match)))
			continue
		}
		r := match[0]
		cur, err := currentReplicaIdentity(ctx, t.conn, tb[0], tb[1])
		if err != nil {
			t.log.Error("cannot read the replica identity of a table", "table", id, "error", err)
			continue
		}
		if cur == r.clause() {
			t.log.Info("replica identity already set", "table", id, "replica_identity", cur)
			continue
		}
		stmt := "ALTER TABLE " + pgx.Identifier{tb[0], tb[1]}.Sanitize() + " REPLICA IDENTITY " + r.identity
		if r.identity == "INDEX" {
			stmt = "ALTER TABLE " + pgx.Identifier{tb[0], tb[1]}.Sanitize() + " REPLICA IDENTITY USING INDEX " + pgx.Identifier{r.index}.Sanitize()
		}
		if _, err := t.conn.Exec(ctx, stmt); err != nil {
			t.log.Error(fmt.Sprintf("%s: unable to update the replica identity of table %s", KeyReplicaIdentityAutoset, id), "statement", stmt, "error", err)
			continue
		}
		t.log.Info("replica identity set", "table", id, "replica_identity", r.clause(), "was", cur)
	}
	return nil
}

func entries(rs []replicaRule) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.entry
	}
	return out
}

// currentReplicaIdentity returns a table's REPLICA IDENTITY as the clause
// that sets it: DEFAULT, FULL, NOTHING or USING INDEX <name>.
func currentReplicaIdentity(ctx context.Context, conn *pgx.Conn, schema, name string) (string, error) {
	var ident string
	var index *string
	err := conn.QueryRow(ctx, `
SELECT c.relreplident::text,
       (SELECT ic.relname FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid WHERE i.indrelid = c.oid AND i.indisreplident)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = $1 AND c.relname = $2`, schema, name).Scan(&ident, &index)
	if err != nil {
		return "", err
	}
	switch ident {
	case "d":
		return "DEFAULT", nil
	case "f":
		return "FULL", nil
	case "n":
		return "NOTHING", nil
	case "i":
		if index != nil {
			return "USING INDEX " + sqlIdent(*index), nil
		}
	}
	return ident, nil
}

// failoverSlot reports whether the kept slot is created as a failover slot:
// slot.failover on a PostgreSQL 17+ primary (as Debezium's
// PostgresReplicationConnection.useFailOverSlot; otherwise an ordinary slot
// is created, with a warning).
func (t *Task) failoverSlot(ctx context.Context) (bool, error) {
	if !t.cfg.ext.failover {
		return false, nil
	}
	if major, _, _ := strings.Cut(t.repl.ParameterStatus("server_version"), "."); atoiOr0(major) < 17 {
		t.log.Warn("slot.failover=true, but failover slots need PostgreSQL 17 or later: the replication slot is created as an ordinary slot, which a promoted standby will not have",
			"slot", t.cfg.slotName, "server_version", t.repl.ParameterStatus("server_version"))
		return false, nil
	}
	var standby bool
	if err := t.conn.QueryRow(ctx, "SELECT pg_is_in_recovery()").Scan(&standby); err != nil {
		return false, fmt.Errorf("postgres: %s: is the server a standby: %w", KeySlotFailover, err)
	}
	if standby {
		t.log.Warn("slot.failover=true, but the server is a standby: the replication slot is created as an ordinary slot", "slot", t.cfg.slotName)
		return false, nil
	}
	return true, nil
}

// createSlotFailover creates the kept slot with the FAILOVER option
// (PostgreSQL 17's option list syntax of CREATE_REPLICATION_SLOT).
func (t *Task) createSlotFailover(ctx context.Context, name string, export bool) (pglogrepl.CreateReplicationSlotResult, error) {
	snap := "'nothing'"
	if export {
		snap = "'export'"
	}
	sql := fmt.Sprintf("CREATE_REPLICATION_SLOT %s LOGICAL pgoutput (FAILOVER true, SNAPSHOT %s)", pgx.Identifier{name}.Sanitize(), snap)
	res, err := pglogrepl.ParseCreateReplicationSlot(t.repl.Exec(ctx, sql))
	if err != nil {
		return res, fmt.Errorf("postgres: create failover replication slot %s (%s): %w", name, KeySlotFailover, err)
	}
	t.log.Info("created a failover replication slot (slot.failover)", "slot", name)
	return res, nil
}

// startLogs sets the context headers and logs what the streaming keys
// decided, as Debezium logs them at start.
func (t *Task) startLogs() {
	e := t.cfg.ext
	if e.extendedHeaders {
		t.headers = contextHeaders(t.cfg.topicPrefix, time.Now())
	}
	if e.flushDeprecated {
		t.log.Warn("flush.lsn.source is deprecated; use lsn.flush.mode", "lsn.flush.mode", e.flushMode)
	}
	switch e.flushMode {
	case flushManual:
		t.log.Warn("lsn.flush.mode=manual: the task never confirms positions to the replication slot, so the server keeps all WAL from the slot's confirmed_flush_lsn until something else advances it",
			"slot", t.cfg.slotName)
	case flushConnectorAndDriver:
		t.log.Info("lsn.flush.mode=connector_and_driver: when idle with everything delivered, the task also confirms the server's WAL position from keepalives", "slot", t.cfg.slotName)
	}
	for _, b := range e.badParams {
		t.log.Warn("slot.stream.params: entry is not name=value; it is ignored", "entry", b)
	}
}
