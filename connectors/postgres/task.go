package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/envelope"
	"github.com/connectd/connectd/connectors/internal/queue"
)

// Task reads one PostgreSQL database: an optional initial snapshot, then the
// pgoutput stream of the replication slot.
//
// Concurrency: Start opens the connections and starts one reader goroutine,
// which from then on owns both connections and is the only writer of the
// records channel (bounded by max.queue.size). Poll (worker goroutine) only
// receives from it. Commit (another worker goroutine) only raises the
// confirmed LSN atomically and wakes the reader, which sends the standby
// status update on its own connection.
type Task struct {
	cfg       *config
	partition map[string]any
	types     *typeMapper // type mapping under the configured modes; reader goroutine only
	now       func() time.Time

	conn    *pgx.Conn      // catalog, publication, snapshot
	repl    *pgconn.PgConn // replication protocol
	records chan *connect.SourceRecord
	bytes   *queue.Bytes      // max.queue.size.in.bytes (nil = no byte bound)
	done    chan struct{}     // closed when the reader goroutine returns
	failed  queue.ReaderError // why the reader goroutine ended
	cancel  context.CancelFunc

	streamStats streamStats // what pgoutput streaming did (stream_spool.go)
	sig         *signaller  // signal channels and incremental snapshot (signals.go); reader goroutine

	confirmed atomic.Int64                       // LSN the worker made durable (0 = none yet)
	wake      atomic.Pointer[context.CancelFunc] // interrupts the reader's receive

	log                 *slog.Logger
	progress            snapshotProgress
	progressLogInterval time.Duration // between snapshot progress log lines
	started             bool          // Start succeeded (Stop may drop the slot)
	beforeSnapshot      func()        // tests: runs when the snapshot starts, before any reader transaction
	lag                 slotLag       // the slot's lag in bytes, for Metrics (metrics.go)
	closeMu             sync.Mutex    // serialises closeConns

	headers []connect.Header // context headers of change events (extended.headers.enabled); nil = none
	hist    *relationHistory // catalog facts of the stream's schemas, kept for replays (relation_history.go); nil = none
	// drv says whether the last record queued was committed
	// (lsn.flush.mode=connector_and_driver, stream_ext.go).
	drv struct {
		sync.Mutex
		last      unsafe.Pointer // the SourceOffset map of the last record queued
		committed bool
	}
}

var _ connect.SourceTask = (*Task)(nil)

// NewTask returns an unstarted task.
func NewTask() *Task {
	return &Task{now: time.Now, progressLogInterval: 10 * time.Second}
}

// plan is what the reader goroutine does after Start.
type plan struct {
	snapshot     bool   // read the tables first
	snapshotName string // exported snapshot to read in ("" = a fresh REPEATABLE READ)
	snapshotLSN  int64  // source.lsn of snapshot records
	tempSlot     string // temporary slot that exported the snapshot, dropped after it
	stream       bool
	startLSN     int64
	resume       resumeFilter
	lastCommit   *int64
}

// connConfig is the configuration of a query connection: TLS per
// database.sslmode (and sslcert/sslkey/sslrootcert/sslpassword, as libpq's
// keywords, which pgx implements: allow and prefer fall back between plain
// and TLS), TCP keep-alive per database.tcpKeepAlive, statement_timeout per
// database.query.timeout.ms, and database.initial.statements run after
// connecting. replConfig derives the replication connection's from it.
func (t *Task) connConfig() (*pgx.ConnConfig, error) {
	c := t.cfg
	dsn := []string{"host=" + dsnValue(c.host), "port=" + strconv.Itoa(c.port), "sslmode=" + dsnValue(c.conn.sslMode)}
	for _, kv := range [][2]string{{"sslcert", c.conn.sslCert}, {"sslkey", c.conn.sslKey}, {"sslrootcert", c.conn.sslRootCert}, {"sslpassword", c.conn.sslPassword}} {
		if kv[1] != "" {
			dsn = append(dsn, kv[0]+"="+dsnValue(kv[1]))
		}
	}
	pc, err := pgx.ParseConfig(strings.Join(dsn, " "))
	if err != nil {
		return nil, fmt.Errorf("TLS settings (%s): %w", KeySSLMode, err)
	}
	pc.User, pc.Password, pc.Database = c.user, c.password, c.dbname
	pc.ConnectTimeout = 30 * time.Second
	if !c.conn.keepAlive {
		d := &net.Dialer{KeepAlive: -1} // database.tcpKeepAlive=false: no SO_KEEPALIVE
		pc.DialFunc = d.DialContext
	}
	// The same output settings on both connections, so snapshot (text
	// results) and pgoutput text values are identical.
	pc.RuntimeParams["DateStyle"] = "ISO, MDY"
	pc.RuntimeParams["IntervalStyle"] = "postgres"
	pc.RuntimeParams["TimeZone"] = "UTC"
	pc.RuntimeParams["extra_float_digits"] = "1"
	pc.RuntimeParams["bytea_output"] = "hex"
	// money text depends on lc_monetary (de_DE: "1.234,11 €", fr_FR:
	// "1 234,11 €"): every connection reads it under C ("$1,234.11"). The
	// query connection is opened without it and checks that C reads the
	// server's own lc_monetary amounts at the same scale (checkMoneyLocale).
	pc.RuntimeParams["lc_monetary"] = "C"
	pc.RuntimeParams["application_name"] = "connectd"
	pc.RuntimeParams["statement_timeout"] = strconv.Itoa(c.conn.queryTimeoutMs)
	if stmts := c.conn.initialStatements; len(stmts) > 0 {
		pc.AfterConnect = func(ctx context.Context, conn *pgconn.PgConn) error {
			for _, s := range stmts {
				if _, err := conn.Exec(ctx, s).ReadAll(); err != nil {
					return fmt.Errorf("%s: %q: %w", KeyInitialStatements, s, err)
				}
			}
			return nil
		}
	}
	return pc, nil
}

// replConfig is the replication connection's configuration: pc's server,
// TLS and keep-alive, without the query connections' statement_timeout and
// initial statements (Debezium does not run database.initial.statements on
// the connection that reads the log).
func replConfig(pc *pgx.ConnConfig) *pgconn.Config {
	rc := pc.Config.Copy()
	delete(rc.RuntimeParams, "statement_timeout")
	rc.AfterConnect = nil
	rc.RuntimeParams["replication"] = "database"
	// A cancelled receive must only interrupt the read (deadline), not send a
	// CancelRequest to the walsender.
	rc.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	return rc
}

// dsnValue quotes v as a libpq keyword/value connection string value.
func dsnValue(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// Start connects, prepares the publication and slot, and starts the reader.
// An unreachable database fails Start with the cause in the message.
func (t *Task) Start(ctx context.Context, tc connect.SourceTaskContext, cfgMap map[string]string) (err error) {
	if t.cfg, err = parseConfig(cfgMap); err != nil {
		return err
	}
	if t.now == nil {
		t.now = time.Now
	}
	if t.progressLogInterval <= 0 {
		t.progressLogInterval = 10 * time.Second
	}
	t.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	if tl, ok := tc.(connect.TaskLogger); ok && tl.Logger() != nil {
		t.log = tl.Logger()
	}
	if t.cfg.snapshotModeDeprecated != "" {
		t.log.Warn("snapshot.mode="+t.cfg.snapshotModeDeprecated+" is deprecated (removed in Debezium 3); it is treated as no_data, use snapshot.mode=no_data",
			"snapshot.mode", t.cfg.snapshotModeDeprecated)
	}
	t.partition = map[string]any{"server": t.cfg.topicPrefix}
	t.hist = newRelationHistory(tc, t.cfg.topicPrefix)
	t.startLogs()
	t.records = make(chan *connect.SourceRecord, t.cfg.maxQueueSize)
	t.bytes = queue.NewBytes(t.cfg.snap.queueBytes)
	t.done = make(chan struct{})
	t.lag.SetReady()
	defer func() {
		if err != nil {
			t.closeConns()
			close(t.done)
		}
	}()

	pc, err := t.connConfig()
	if err != nil {
		return fmt.Errorf("postgres: connection config: %w", err)
	}
	addr := net.JoinHostPort(t.cfg.host, strconv.Itoa(t.cfg.port))
	qc := pc.Copy()
	delete(qc.RuntimeParams, "lc_monetary") // checkMoneyLocale reads the server's, then sets C
	if t.conn, err = pgx.ConnectConfig(ctx, qc); err != nil {
		return fmt.Errorf("postgres: connect to %s database %q: %w", addr, t.cfg.dbname, err)
	}
	if err := t.checkServer(ctx); err != nil {
		return err
	}
	moneyErr, err := t.checkMoneyLocale(ctx)
	if err != nil {
		return err
	}
	t.lag.cfg = pc.Copy()
	if t.repl, err = pgconn.ConnectConfig(ctx, replConfig(pc)); err != nil {
		return fmt.Errorf("postgres: open replication connection to %s: %w", addr, err)
	}

	var prev *offset
	if tc != nil && tc.OffsetReader() != nil {
		m, err := tc.OffsetReader().Offset(ctx, t.partition)
		if err != nil {
			return fmt.Errorf("postgres: read offset: %w", err)
		}
		if m != nil {
			o, err := parseOffset(m)
			if err != nil {
				return fmt.Errorf("postgres: stored offset for %v: %w", t.partition, err)
			}
			prev = &o
		}
	}
	t.types = &typeMapper{h: t.cfg.handling, reg: &typeRegistry{}, rules: t.cfg.rules, comments: t.cfg.ext.schemaComments, moneyErr: moneyErr}
	if err := t.types.reg.load(ctx, t.conn); err != nil {
		return err
	}
	if err := t.checkGuardrail(ctx); err != nil {
		return err
	}
	if err := t.initSignals(ctx, tc); err != nil {
		return err
	}
	if err := t.ensurePublication(ctx); err != nil {
		return err
	}
	if err := t.setReplicaIdentities(ctx); err != nil {
		return err
	}
	p, err := t.plan(ctx, prev)
	if err != nil {
		return err
	}
	t.log.Info("starting", "snapshot.mode", t.cfg.snapshotMode, "offset", prev != nil, "snapshot", p.snapshot, "stream", p.stream,
		"start_lsn", pglogrepl.LSN(p.startLSN).String(), "slot", t.cfg.slotName, "temporary_slot", p.tempSlot)
	rctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	t.started = true
	go t.run(rctx, p)
	return nil
}

// checkMoneyLocale compares the scale of money under the lc_monetary the
// server gives a session of this user and database (its frac_digits) with
// C's (2): money is an int64 count of the locale's smallest unit, so text
// read under C is the right amount only when both scales agree. The
// connection itself stays under C (connConfig). A different scale (ja_JP:
// 0) returns an error that every money value then fails with (moneyErr),
// naming the locale: never a value ×100 or ÷100. The query connection is
// opened without connConfig's lc_monetary=C, so it sees the server's
// setting (postgresql.conf, ALTER DATABASE / ROLE … SET), and is switched
// to C here.
func (t *Task) checkMoneyLocale(ctx context.Context) (moneyErr error, err error) {
	var locale string
	var scale int
	if err := t.conn.QueryRow(ctx, "SELECT current_setting('lc_monetary'), scale(1::int8::money::numeric)").Scan(&locale, &scale); err != nil {
		return nil, fmt.Errorf("postgres: read lc_monetary: %w", err)
	}
	if _, err := t.conn.Exec(ctx, "SET lc_monetary = 'C'"); err != nil {
		return nil, fmt.Errorf("postgres: SET lc_monetary = 'C': %w", err)
	}
	if scale != 2 {
		return fmt.Errorf("the server's lc_monetary %q counts money in units of 10^-%d, which connectd cannot read exactly (it reads money under lc_monetary=C, 2 fraction digits); cast the column to numeric in a view or use a locale with 2 fraction digits", locale, scale), nil
	}
	return nil, nil
}

// checkServer rejects a server or user that cannot do logical replication,
// with the fix in the message: wal_level must be logical, and the user
// needs the REPLICATION attribute (or superuser), as Debezium's
// PostgresConnector.validate checks.
func (t *Task) checkServer(ctx context.Context) error {
	var level string
	if err := t.conn.QueryRow(ctx, "SHOW wal_level").Scan(&level); err != nil {
		return fmt.Errorf("postgres: read wal_level: %w", err)
	}
	if level != "logical" {
		return fmt.Errorf("postgres: the server's wal_level is %q, but logical decoding needs wal_level=logical: set wal_level = logical in postgresql.conf (or ALTER SYSTEM SET wal_level = logical) and restart the server", level)
	}
	var user string
	var repl, super bool
	if err := t.conn.QueryRow(ctx, "SELECT current_user, rolreplication, rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&user, &repl, &super); err != nil {
		return fmt.Errorf("postgres: read the privileges of the connector's user: %w", err)
	}
	if !repl && !super {
		return fmt.Errorf("postgres: user %q does not have the REPLICATION privilege, which logical replication needs (Debezium: \"Postgres roles LOGIN and REPLICATION are not assigned to user\"): ALTER ROLE %s REPLICATION", user, sqlIdent(user))
	}
	return nil
}

// slotState is a row of pg_replication_slots.
type slotState struct {
	exists         bool
	plugin, db     string
	activePID      int32
	confirmedFlush int64
}

func (t *Task) readSlot(ctx context.Context) (slotState, error) {
	var s slotState
	var flush *pglogrepl.LSN
	err := t.conn.QueryRow(ctx, `SELECT COALESCE(plugin, ''), COALESCE(database, ''), COALESCE(active_pid, 0), confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = $1`,
		t.cfg.slotName).Scan(&s.plugin, &s.db, &s.activePID, &flush)
	if errors.Is(err, pgx.ErrNoRows) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("postgres: read pg_replication_slots: %w", err)
	}
	s.exists = true
	if flush != nil {
		s.confirmedFlush = int64(*flush)
	}
	return s, nil
}

// checkSlot reads the slot and rejects one this task cannot stream from:
// another plugin, another database, or in use by another backend. A slot
// in use is waited for, as Debezium's slot.max.retries × slot.retry.delay.ms
// (a task that just stopped takes a moment to release it): the slot is
// checked again every 100 ms (or every slot.retry.delay.ms if shorter), and
// when it is still active after the last retry, the error names the PID
// that holds it.
func (t *Task) checkSlot(ctx context.Context) (slotState, error) {
	c := t.cfg
	wait := time.Duration(c.conn.slotMaxRetries) * c.conn.slotRetryDelay
	deadline := time.Now().Add(wait)
	poll := min(100*time.Millisecond, max(c.conn.slotRetryDelay, time.Millisecond))
	logged := false
	for {
		s, err := t.readSlot(ctx)
		if err != nil || !s.exists {
			return s, err
		}
		if s.plugin == "" {
			return s, fmt.Errorf("postgres: replication slot %q is a physical slot; connectd needs a logical pgoutput slot: set another slot.name", c.slotName)
		}
		if s.plugin != "pgoutput" {
			return s, fmt.Errorf("postgres: replication slot %q uses the %s plugin, but connectd decodes only pgoutput (plugin.name=pgoutput): drop the slot or set another slot.name", c.slotName, s.plugin)
		}
		if s.db != c.dbname {
			return s, fmt.Errorf("postgres: replication slot %q belongs to database %q, not %q (database.dbname): set another slot.name", c.slotName, s.db, c.dbname)
		}
		if s.activePID == 0 || s.activePID == int32(t.repl.PID()) {
			return s, nil
		}
		if !time.Now().Before(deadline) {
			return s, fmt.Errorf("postgres: replication slot %q is active for PID %d (still after %d retries %v apart, slot.max.retries/slot.retry.delay.ms): another connector or client is streaming from it; when several connectors capture the same database server, give each its own slot.name",
				c.slotName, s.activePID, c.conn.slotMaxRetries, c.conn.slotRetryDelay)
		}
		if !logged {
			t.log.Info("replication slot in use by another connection; waiting for it", "slot", c.slotName, "active_pid", s.activePID, "wait", wait)
			logged = true
		}
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// plan decides, per snapshot.mode, whether the tables are snapshotted and
// whether the slot is streamed, and creates the slot if needed. As
// Debezium: with a stored offset of a completed snapshot (or of streaming)
// the task streams from it; an offset of a snapshot that did not complete
// means the snapshot is redone; when_needed (and configuration_based with
// snapshot.on.data.error) also snapshots when the slot no longer has the
// offset's position.
func (t *Task) plan(ctx context.Context, prev *offset) (plan, error) {
	c := t.cfg
	slot, err := t.checkSlot(ctx)
	if err != nil {
		return plan{}, err
	}
	sn := c.snapshotter
	offsetExists := prev != nil
	inProgress := prev != nil && prev.snapshotInProgress()
	snap := sn.snapshotData(offsetExists, inProgress)
	stream := sn.streams()
	if offsetExists && !inProgress && !snap {
		start, _ := prev.confirmLSN()
		// The slot has the offset's changes only if it has not confirmed
		// past them (PostgreSQL silently starts at confirmed_flush_lsn when
		// asked for an earlier position).
		available := slot.exists && start >= slot.confirmedFlush
		if slot.exists && !available && c.ext.flushMode == flushConnectorAndDriver {
			// lsn.flush.mode=connector_and_driver confirms keepalive
			// positions past the last offset when nothing was pending
			// (stream_ext.go driverFlush): a slot ahead of the offset lost
			// nothing.
			available = true
		}
		if !available && sn.snapshotOnDataError() {
			t.log.Info("the stored offset's position is no longer available in the replication slot; taking a new snapshot",
				"slot", c.slotName, "slot_exists", slot.exists, "offset_lsn", pglogrepl.LSN(start).String(), "confirmed_flush_lsn", pglogrepl.LSN(slot.confirmedFlush).String())
			snap = true
		} else {
			if !stream {
				return plan{}, nil
			}
			if !slot.exists {
				// The slot vanished (dropped by hand, failover): recreate it and go
				// on from its new consistent point. Changes committed between the
				// stored offset and now are lost — Debezium behaves the same.
				t.log.Warn("replication slot missing; recreating it: changes between the stored offset and now are lost", "slot", c.slotName, "offset_lsn", pglogrepl.LSN(start).String())
				if _, err := t.createSlot(ctx, c.slotName, false, false); err != nil {
					return plan{}, err
				}
			} else if !available {
				t.log.Warn("the replication slot has confirmed changes past the stored offset; they are not streamed again", "slot", c.slotName,
					"offset_lsn", pglogrepl.LSN(start).String(), "confirmed_flush_lsn", pglogrepl.LSN(slot.confirmedFlush).String())
			}
			return plan{stream: true, startLSN: start, resume: newResumeFilter(prev), lastCommit: prev.lsnCommit}, nil
		}
	}
	if !snap {
		if !stream {
			return plan{}, nil
		}
		if slot.exists {
			return plan{stream: true, startLSN: slot.confirmedFlush}, nil
		}
		res, err := t.createSlot(ctx, c.slotName, false, false)
		if err != nil {
			return plan{}, err
		}
		lsn, _ := pglogrepl.ParseLSN(res.ConsistentPoint)
		return plan{stream: true, startLSN: int64(lsn)}, nil
	}
	if !stream {
		// Nothing will be streamed: no slot is needed. The snapshot runs in a
		// plain REPEATABLE READ transaction; source.lsn is the current WAL
		// position.
		return plan{snapshot: true}, nil
	}
	p := plan{snapshot: true, stream: true}
	var res pglogrepl.CreateReplicationSlotResult
	if slot.exists {
		// Keep the slot (its position may matter to others, and dropping it
		// is not ours to decide): a temporary slot exports a snapshot at its
		// consistent point C.
		p.tempSlot = fmt.Sprintf("connectd_snapshot_%d", t.repl.PID())
		res, err = t.createSlot(ctx, p.tempSlot, true, true)
	} else {
		res, err = t.createSlot(ctx, c.slotName, true, false)
	}
	if err != nil {
		return plan{}, err
	}
	lsn, err := pglogrepl.ParseLSN(res.ConsistentPoint)
	if err != nil {
		return plan{}, fmt.Errorf("postgres: slot consistent point %q: %w", res.ConsistentPoint, err)
	}
	p.snapshotName, p.snapshotLSN, p.startLSN = res.SnapshotName, int64(lsn), int64(lsn)
	if slot.exists {
		p.startLSN = snapshotStreamStart(slot.confirmedFlush, int64(lsn))
		if prev != nil && !inProgress {
			// A stored offset (of the stream or of a completed snapshot)
			// the slot still has: the changes before it are in Kafka, so
			// the stream resumes there (fewer changes delivered twice),
			// skipping what it had delivered.
			if start, ok := prev.confirmLSN(); ok && start >= p.startLSN && start < int64(lsn) {
				p.startLSN, p.resume, p.lastCommit = start, newResumeFilter(prev), prev.lsnCommit
			}
		}
		// The snapshot's offsets carry the stream's start, so that a
		// restart after the completed snapshot streams from there too.
		p.snapshotLSN = p.startLSN
		if p.startLSN < int64(lsn) {
			t.log.Info("the kept replication slot has not confirmed the changes before the snapshot; they are streamed again after it (at-least-once: a change already in Kafka may be delivered twice, none is lost)",
				"slot", c.slotName, "confirmed_flush_lsn", pglogrepl.LSN(slot.confirmedFlush).String(), "stream_start_lsn", pglogrepl.LSN(p.startLSN).String(), "snapshot_lsn", pglogrepl.LSN(lsn).String())
		}
	}
	return p, nil
}

// snapshotStreamStart returns where the kept slot is streamed after a
// snapshot exported by a temporary slot at consistentPoint: the kept slot's
// confirmed_flush_lsn (confirmed; 0 when unknown) when it is before the
// consistent point, else the consistent point.
//
// Starting at the consistent point would make the snapshot→stream handoff
// exact (invariant 2), but it loses changes (invariant 1): the slot confirms
// a position only after every record up to it is in Kafka with its offset
// stored, so changes after confirmed_flush_lsn may have been emitted by the
// run that died (its offsets not yet flushed, the reason this start has
// no usable offset and snapshots again). A row that run inserted and that
// was deleted before the consistent point is absent from the snapshot, and
// PostgreSQL skips every transaction committed before the requested start
// (SnapBuildXactNeedsSkip), so its delete would never be emitted and the
// row would stay in every sink (integration TestJdbcSinkConvergesAfterSIGKILL).
// Streaming from confirmed_flush_lsn emits those changes again after the
// snapshot; sinks converge since the stream reaches the same state.
// Debezium's PostgresSnapshotChangeEventSource.getTransactionStartLsn does
// the same for an existing slot when the snapshotter's
// shouldStreamEventsStartingFromSnapshot is false ("Allow streaming to
// resume from where streaming stopped last rather than where the current
// snapshot starts"); its default streams from pg_current_wal_lsn() at the
// snapshot, which has the loss above, and invariant 1 rules that out.
func snapshotStreamStart(confirmedFlush, consistentPoint int64) int64 {
	if confirmedFlush > 0 && confirmedFlush < consistentPoint {
		return confirmedFlush
	}
	return consistentPoint
}

// createSlot creates the logical slot (pgoutput) on the replication
// connection; with export the snapshot stays usable until the next command
// on that connection.
func (t *Task) createSlot(ctx context.Context, name string, export, temporary bool) (pglogrepl.CreateReplicationSlotResult, error) {
	action := "NOEXPORT_SNAPSHOT"
	if export {
		action = "EXPORT_SNAPSHOT"
	}
	if name == t.cfg.slotName && !temporary {
		failover, err := t.failoverSlot(ctx)
		if err != nil {
			return pglogrepl.CreateReplicationSlotResult{}, err
		}
		if failover {
			return t.createSlotFailover(ctx, name, export)
		}
	}
	res, err := pglogrepl.CreateReplicationSlot(ctx, t.repl, name, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{SnapshotAction: action, Mode: pglogrepl.LogicalReplication, Temporary: temporary})
	if err != nil {
		return res, fmt.Errorf("postgres: create replication slot %s: %w", name, err)
	}
	return res, nil
}

// ensurePublication creates the publication per publication.autocreate.mode
// when it does not exist (WITH publish_via_partition_root when
// publish.via.partition.root is set), and records the publication's
// effective publish_via_partition_root in cfg.viaRoot: the server decides
// under which table a partition's changes are published.
func (t *Task) ensurePublication(ctx context.Context) error {
	c := t.cfg
	var viaRoot []bool
	rows, err := t.conn.Query(ctx, `SELECT pubviaroot FROM pg_publication WHERE pubname = $1`, c.publicationName)
	if err == nil {
		viaRoot, err = pgx.CollectRows(rows, pgx.RowTo[bool])
	}
	if err != nil {
		return fmt.Errorf("postgres: read pg_publication: %w", err)
	}
	if len(viaRoot) > 0 {
		c.viaRoot = viaRoot[0]
		return t.checkPublicationTables(ctx)
	}
	name := pgx.Identifier{c.publicationName}.Sanitize()
	var stmt string
	switch c.publicationAutocreate {
	case "disabled":
		return fmt.Errorf("postgres: publication %q does not exist and publication.autocreate.mode=disabled: create it (CREATE PUBLICATION %s FOR TABLE …) or set publication.autocreate.mode=all_tables or filtered", c.publicationName, name)
	case "filtered":
		tables, err := publicationTables(ctx, t.conn, c)
		if err != nil {
			return err
		}
		if len(tables) == 0 {
			return fmt.Errorf("postgres: publication.autocreate.mode=filtered but table.include.list matches no table")
		}
		tables = withSignalTable(tables, c.signals)
		stmt = "CREATE PUBLICATION " + name + " FOR TABLE "
		for i, tb := range tables {
			if i > 0 {
				stmt += ", "
			}
			stmt += pgx.Identifier{tb[0], tb[1]}.Sanitize()
		}
	default:
		stmt = "CREATE PUBLICATION " + name + " FOR ALL TABLES"
	}
	var with []string
	if c.publish != "" {
		with = append(with, "publish = "+quoteLiteral(c.publish))
	}
	if c.viaRoot {
		with = append(with, "publish_via_partition_root = true")
	}
	if len(with) > 0 {
		stmt += " WITH (" + strings.Join(with, ", ") + ")"
	}
	if _, err := t.conn.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("postgres: %s: %w", stmt, err)
	}
	return nil
}

// checkPublicationTables compares an existing publication with the captured
// tables. A table the publication lacks would silently never be streamed:
// with publication.autocreate.mode=filtered the table is added (as Debezium
// alters a filtered publication); otherwise Start fails naming the tables.
func (t *Task) checkPublicationTables(ctx context.Context) error {
	c := t.cfg
	var all bool
	if err := t.conn.QueryRow(ctx, `SELECT puballtables FROM pg_publication WHERE pubname = $1`, c.publicationName).Scan(&all); err != nil {
		return fmt.Errorf("postgres: read publication %s: %w", c.publicationName, err)
	}
	if all {
		return nil
	}
	tables, err := listTables(ctx, t.conn, c)
	if err != nil {
		return err
	}
	rows, err := t.conn.Query(ctx, `SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = $1`, c.publicationName)
	if err != nil {
		return fmt.Errorf("postgres: read pg_publication_tables: %w", err)
	}
	in := map[[2]string]bool{}
	for rows.Next() {
		var sch, tb string
		if err := rows.Scan(&sch, &tb); err != nil {
			rows.Close()
			return err
		}
		in[[2]string{sch, tb}] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: read pg_publication_tables: %w", err)
	}
	var missing, idents, shown []string
	for _, tb := range tables {
		if !in[tb] {
			missing = append(missing, tb[0]+"."+tb[1])
			idents = append(idents, pgx.Identifier{tb[0], tb[1]}.Sanitize())
			shown = append(shown, sqlIdent(tb[0])+"."+sqlIdent(tb[1]))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	name := pgx.Identifier{c.publicationName}.Sanitize()
	if c.publicationAutocreate == "filtered" {
		stmt := "ALTER PUBLICATION " + name + " ADD TABLE " + joinComma(idents)
		if _, err := t.conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("postgres: %s: %w", stmt, err)
		}
		t.log.Info("added captured tables to the publication", "publication", c.publicationName, "tables", missing)
		return nil
	}
	return fmt.Errorf("postgres: publication %q does not include the captured tables %s, whose changes would never be streamed: ALTER PUBLICATION %s ADD TABLE %s (or narrow table.include.list)",
		c.publicationName, strings.Join(missing, ", "), sqlIdent(c.publicationName), joinComma(shown))
}

var plainIdent = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// sqlIdent quotes an identifier for SQL shown to users only when it needs
// quotes.
func sqlIdent(s string) string {
	if plainIdent.MatchString(s) {
		return s
	}
	return pgx.Identifier{s}.Sanitize()
}

// dropSlot drops the replication slot (slot.drop.on.stop) once the
// replication connection is closed and the server has released it.
func (t *Task) dropSlot() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for {
		_, err := t.conn.Exec(ctx, `SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = $1`, t.cfg.slotName)
		if err == nil {
			t.log.Info("replication slot dropped (slot.drop.on.stop)", "slot", t.cfg.slotName)
			return nil
		}
		var pe *pgconn.PgError
		// 55006 object_in_use: the walsender has not exited yet.
		if !errors.As(err, &pe) || pe.Code != "55006" || ctx.Err() != nil {
			return fmt.Errorf("postgres: drop replication slot %s (slot.drop.on.stop): %w", t.cfg.slotName, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// run is the reader goroutine.
func (t *Task) run(ctx context.Context, p plan) {
	defer close(t.done)
	lagCtx, stopLag := context.WithCancel(ctx)
	lagDone := t.startSlotLag(lagCtx, p)
	defer func() { stopLag(); <-lagDone }()
	err := func() error {
		if p.snapshot {
			// snapshot.delay.ms: the slot's exported snapshot stays valid
			// meanwhile (the replication connection is idle).
			if err := t.delay(ctx, KeySnapshotDelayMs, t.cfg.conn.snapshotDelay); err != nil {
				return err
			}
			if err := t.snapshot(ctx, p); err != nil {
				t.notifyAborted(ctx)
				return err
			}
		} else if t.notifying() {
			// Debezium's notifySkipped: no initial snapshot this start.
			if err := t.notify(ctx, initialSnapshotNotification(notifSkipped, nil), nil, nil); err != nil {
				return err
			}
		}
		if p.tempSlot != "" {
			if err := pglogrepl.DropReplicationSlot(ctx, t.repl, p.tempSlot, pglogrepl.DropReplicationSlotOptions{}); err != nil {
				return fmt.Errorf("postgres: drop temporary slot %s: %w", p.tempSlot, err)
			}
		}
		if p.stream {
			if err := t.delay(ctx, KeyStreamingDelayMs, t.cfg.conn.streamingDelay); err != nil {
				return err
			}
			return t.stream(ctx, p)
		}
		return nil
	}()
	t.failed.Set(ctx, err)
}

// delay waits d (snapshot.delay.ms, streaming.delay.ms, as Debezium's
// ChangeEventSourceCoordinator) unless ctx ends first.
func (t *Task) delay(ctx context.Context, key string, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t.log.Info("waiting before the next phase", key, d.Milliseconds())
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// emit queues a record, blocking while the queue is full (max.queue.size
// records, or max.queue.size.in.bytes bytes). keepalive, when set, is
// called periodically while blocked so the server does not time the
// replication connection out.
func (t *Task) emit(ctx context.Context, r *connect.SourceRecord, keepalive func() error) error {
	if err := t.sig.storeOffset(r); err != nil {
		return err
	}
	t.withHeaders(r)
	if (t.cfg.ext.flushMode == flushConnectorAndDriver || t.hist != nil) && r.SourceOffset != nil {
		// A record without an offset (a notification) is never committed
		// by the worker: it must not stand for "the last record queued".
		t.noteEmitted(r)
	}
	if t.bytes != nil {
		if err := t.bytes.Reserve(ctx, queue.Size(r), time.Duration(t.cfg.statusUpdateIntervalMs)*time.Millisecond, keepalive); err != nil {
			return err
		}
	}
	select {
	case t.records <- r:
		return nil
	default:
	}
	tick := time.NewTicker(time.Duration(t.cfg.statusUpdateIntervalMs) * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case t.records <- r:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if keepalive != nil {
				if err := keepalive(); err != nil {
					return err
				}
			}
		}
	}
}

// Poll returns up to max.batch.size records, waiting at most poll.interval.ms
// for the first one. A reader error is returned once the records queued
// before it were polled.
func (t *Task) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	batch, err := queue.Poll(ctx, t.records, t.done, t.failed.Err, time.Duration(t.cfg.pollIntervalMs)*time.Millisecond, t.cfg.maxBatchSize)
	t.bytes.Release(len(batch))
	return batch, err
}

// Commit records that offset (and every record before it) is acknowledged
// by Kafka and durably stored, and has the reader confirm it to the server.
func (t *Task) Commit(ctx context.Context, partition, off map[string]any) error {
	if off == nil {
		return nil
	}
	o, err := parseOffset(off)
	if err != nil {
		return fmt.Errorf("postgres: commit: %w", err)
	}
	if t.cfg.ext.flushMode == flushConnectorAndDriver || t.hist != nil {
		t.noteCommitted(off)
	}
	lsn, ok := o.confirmLSN()
	if !ok {
		return nil
	}
	for {
		cur := t.confirmed.Load()
		if lsn <= cur || t.confirmed.CompareAndSwap(cur, lsn) {
			break
		}
	}
	if w := t.wake.Load(); w != nil {
		(*w)()
	}
	return nil
}

// Stop ends the reader and closes the connections. Safe after a failed Start.
func (t *Task) Stop() error {
	if t.cancel != nil {
		t.cancel()
		if w := t.wake.Load(); w != nil {
			(*w)()
		}
	}
	if t.done != nil {
		// executor.shutdown.timeout.ms (t.cfg is set: done is made after
		// the configuration was parsed).
		wait := t.cfg.snap.shutdownWait
		select {
		case <-t.done:
		case <-time.After(wait):
			// The reader still owns the connections: they are closed once
			// it returns, not under it.
			go func() {
				<-t.done
				t.closeConns()
			}()
			t.log.Warn("the reader did not stop in time; its connections are closed when it does", KeyExecutorShutdownTimeoutMs, wait.Milliseconds())
			return fmt.Errorf("postgres: reader did not stop within %v (%s)", wait, KeyExecutorShutdownTimeoutMs)
		}
	}
	var err error
	t.closeMu.Lock() // the late cleanup of an earlier timed-out Stop may run
	if t.started && t.cfg.slotDropOnStop && t.conn != nil && t.failed.Err() == nil {
		// As Debezium's slot.drop.on.stop: only on a clean stop (not after the
		// reader failed), after the replication connection is gone.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if t.repl != nil {
			t.repl.Close(ctx)
			t.repl = nil
		}
		cancel()
		err = t.dropSlot()
	}
	t.closeMu.Unlock()
	t.closeConns()
	// The reader has returned: whether a restart replays anything
	// (relation_history.go).
	if herr := t.hist.finish(t.allCommitted(), t.confirmed.Load()); herr != nil && err == nil {
		t.log.Warn("storing the relation history state", "err", herr)
	}
	return err
}

func (t *Task) closeConns() {
	// Stop after a shutdown timeout and the reader's late cleanup may both
	// get here.
	t.closeMu.Lock()
	defer t.closeMu.Unlock()
	t.sig.close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if t.conn != nil {
		t.conn.Close(ctx)
		t.conn = nil
	}
	if t.repl != nil {
		t.repl.Close(ctx)
		t.repl = nil
	}
}

// record builds the SourceRecord of one change.
func (t *Task) record(ts *tableSchema, op string, before, after []any, src sourceInfo, off offset) *connect.SourceRecord {
	var b, a *connect.Struct
	if before != nil {
		b = ts.row(before)
	}
	if after != nil {
		a = ts.row(after)
	}
	keyVals := after
	if keyVals == nil {
		keyVals = before
	}
	return t.recordOf(ts, op, b, a, keyVals, src.build(), off.toMap())
}

// recordOf builds the SourceRecord of one change from its before and after
// rows (either may be nil), the values its key is taken from (in value
// field order), its source block and its source offset. The record owns
// none of them exclusively: callers that share source or offset between
// records must not change them afterwards.
func (t *Task) recordOf(ts *tableSchema, op string, before, after *connect.Struct, keyVals []any, source *connect.Struct, offset map[string]any) *connect.SourceRecord {
	r := &connect.SourceRecord{
		SourcePartition: t.partition,
		SourceOffset:    offset,
		Topic:           ts.topic,
		ValueSchema:     ts.envelope,
		Value:           envelope.Value(ts.envelope, op, before, after, source, t.now()),
	}
	if ts.key != nil {
		r.KeySchema, r.Key = ts.key, ts.keyOf(keyVals)
	}
	return r
}
