package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

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
	done    chan struct{} // closed when the reader goroutine returns
	errMu   sync.Mutex
	err     error
	cancel  context.CancelFunc

	sig *signaller // signal channels and incremental snapshot (signals.go); reader goroutine

	confirmed atomic.Int64                       // LSN the worker made durable (0 = none yet)
	wake      atomic.Pointer[context.CancelFunc] // interrupts the reader's receive
}

var _ connect.SourceTask = (*Task)(nil)

// NewTask returns an unstarted task.
func NewTask() *Task { return &Task{now: time.Now} }

// plan is what the reader goroutine does after Start.
type plan struct {
	snapshot     bool   // read the tables first
	snapshotName string // exported snapshot to read in ("" = a fresh REPEATABLE READ)
	snapshotLSN  int64  // source.lsn of snapshot records
	stream       bool
	startLSN     int64
	resume       resumeFilter
	lastCommit   *int64
}

func (t *Task) connConfig() (*pgx.ConnConfig, error) {
	c := t.cfg
	pc, err := pgx.ParseConfig("")
	if err != nil {
		return nil, err
	}
	pc.Host, pc.Port, pc.User, pc.Password, pc.Database = c.host, uint16(c.port), c.user, c.password, c.dbname
	pc.TLSConfig = nil
	pc.Fallbacks = nil
	pc.ConnectTimeout = 30 * time.Second
	// The same output settings on both connections, so snapshot (text
	// results) and pgoutput text values are identical.
	pc.RuntimeParams["DateStyle"] = "ISO, MDY"
	pc.RuntimeParams["IntervalStyle"] = "postgres"
	pc.RuntimeParams["TimeZone"] = "UTC"
	pc.RuntimeParams["extra_float_digits"] = "1"
	pc.RuntimeParams["bytea_output"] = "hex"
	pc.RuntimeParams["application_name"] = "connectd"
	return pc, nil
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
	t.partition = map[string]any{"server": t.cfg.topicPrefix}
	t.records = make(chan *connect.SourceRecord, t.cfg.maxQueueSize)
	t.done = make(chan struct{})
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
	if t.conn, err = pgx.ConnectConfig(ctx, pc); err != nil {
		return fmt.Errorf("postgres: connect to %s database %q: %w", addr, t.cfg.dbname, err)
	}
	rc := pc.Config.Copy()
	rc.RuntimeParams["replication"] = "database"
	// A cancelled receive must only interrupt the read (deadline), not send a
	// CancelRequest to the walsender.
	rc.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.DeadlineContextWatcherHandler{Conn: c.Conn()}
	}
	if t.repl, err = pgconn.ConnectConfig(ctx, rc); err != nil {
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
	t.types = &typeMapper{h: t.cfg.handling, reg: &typeRegistry{}, rules: t.cfg.rules}
	if err := t.types.reg.load(ctx, t.conn); err != nil {
		return err
	}
	if err := t.initSignals(ctx, tc); err != nil {
		return err
	}
	if err := t.ensurePublication(ctx); err != nil {
		return err
	}
	p, err := t.plan(ctx, prev)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithCancel(context.Background())
	t.cancel = cancel
	go t.run(rctx, p)
	return nil
}

// plan decides between snapshot and stream and creates the slot if needed.
func (t *Task) plan(ctx context.Context, prev *offset) (plan, error) {
	c := t.cfg
	slotExists, err := t.slotExists(ctx)
	if err != nil {
		return plan{}, err
	}
	if prev != nil && !prev.snapshotInProgress() {
		start, _ := prev.confirmLSN()
		if !slotExists {
			// The slot vanished (dropped by hand, failover): recreate it and go
			// on from its new consistent point. Changes committed between the
			// stored offset and now are lost — Debezium behaves the same.
			if _, err := t.createSlot(ctx, false); err != nil {
				return plan{}, err
			}
		}
		if c.snapshotMode == SnapshotInitialOnly {
			return plan{}, nil
		}
		return plan{stream: true, startLSN: start, resume: newResumeFilter(prev), lastCommit: prev.lsnCommit}, nil
	}
	switch c.snapshotMode {
	case SnapshotInitialOnly:
		// No slot: nothing will be streamed. Read in a plain REPEATABLE READ
		// transaction; source.lsn is the current WAL position.
		return plan{snapshot: true}, nil
	case SnapshotNoData:
		if slotExists {
			var lsn pglogrepl.LSN
			if err := t.conn.QueryRow(ctx, `SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = $1`, c.slotName).Scan(&lsn); err != nil {
				return plan{}, fmt.Errorf("postgres: read slot %s: %w", c.slotName, err)
			}
			return plan{stream: true, startLSN: int64(lsn)}, nil
		}
		res, err := t.createSlot(ctx, false)
		if err != nil {
			return plan{}, err
		}
		lsn, _ := pglogrepl.ParseLSN(res.ConsistentPoint)
		return plan{stream: true, startLSN: int64(lsn)}, nil
	default: // initial
		if slotExists {
			// No committed offset (or an unfinished snapshot): nothing was
			// ever confirmed from this slot, so recreate it to get an exported
			// snapshot and an exact snapshot→stream handoff.
			if _, err := t.conn.Exec(ctx, `SELECT pg_drop_replication_slot($1)`, c.slotName); err != nil {
				return plan{}, fmt.Errorf("postgres: drop stale slot %s: %w", c.slotName, err)
			}
		}
		res, err := t.createSlot(ctx, true)
		if err != nil {
			return plan{}, err
		}
		lsn, err := pglogrepl.ParseLSN(res.ConsistentPoint)
		if err != nil {
			return plan{}, fmt.Errorf("postgres: slot consistent point %q: %w", res.ConsistentPoint, err)
		}
		return plan{snapshot: true, snapshotName: res.SnapshotName, snapshotLSN: int64(lsn), stream: true, startLSN: int64(lsn)}, nil
	}
}

func (t *Task) slotExists(ctx context.Context) (bool, error) {
	var n int
	err := t.conn.QueryRow(ctx, `SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1`, t.cfg.slotName).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("postgres: read pg_replication_slots: %w", err)
	}
	return n > 0, nil
}

// createSlot creates the logical slot (pgoutput) on the replication
// connection; with export the snapshot stays usable until the next command
// on that connection.
func (t *Task) createSlot(ctx context.Context, export bool) (pglogrepl.CreateReplicationSlotResult, error) {
	action := "NOEXPORT_SNAPSHOT"
	if export {
		action = "EXPORT_SNAPSHOT"
	}
	res, err := pglogrepl.CreateReplicationSlot(ctx, t.repl, t.cfg.slotName, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{SnapshotAction: action, Mode: pglogrepl.LogicalReplication})
	if err != nil {
		return res, fmt.Errorf("postgres: create replication slot %s: %w", t.cfg.slotName, err)
	}
	return res, nil
}

// ensurePublication creates the publication per publication.autocreate.mode
// when it does not exist.
func (t *Task) ensurePublication(ctx context.Context) error {
	c := t.cfg
	var n int
	if err := t.conn.QueryRow(ctx, `SELECT count(*) FROM pg_publication WHERE pubname = $1`, c.publicationName).Scan(&n); err != nil {
		return fmt.Errorf("postgres: read pg_publication: %w", err)
	}
	if n > 0 {
		return nil
	}
	name := pgx.Identifier{c.publicationName}.Sanitize()
	var stmt string
	switch c.publicationAutocreate {
	case "disabled":
		return fmt.Errorf("postgres: publication %s does not exist and publication.autocreate.mode=disabled", c.publicationName)
	case "filtered":
		tables, err := listTables(ctx, t.conn, c)
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
	if c.publish != "" {
		stmt += " WITH (publish = " + quoteLiteral(c.publish) + ")"
	}
	if _, err := t.conn.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("postgres: %s: %w", stmt, err)
	}
	return nil
}

// run is the reader goroutine.
func (t *Task) run(ctx context.Context, p plan) {
	defer close(t.done)
	err := func() error {
		if p.snapshot {
			if err := t.snapshot(ctx, p); err != nil {
				return err
			}
		}
		if p.stream {
			return t.stream(ctx, p)
		}
		return nil
	}()
	if err != nil && ctx.Err() == nil {
		t.errMu.Lock()
		t.err = err
		t.errMu.Unlock()
	}
}

// emit queues a record, blocking while the queue is full (max.queue.size).
// keepalive, when set, is called periodically while blocked so the server
// does not time the replication connection out.
func (t *Task) emit(ctx context.Context, r *connect.SourceRecord, keepalive func() error) error {
	if err := t.sig.storeOffset(r); err != nil {
		return err
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
	return queue.Poll(ctx, t.records, t.done, t.readerErr, time.Duration(t.cfg.pollIntervalMs)*time.Millisecond, t.cfg.maxBatchSize)
}

func (t *Task) readerErr() error {
	t.errMu.Lock()
	defer t.errMu.Unlock()
	return t.err
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
		select {
		case <-t.done:
		case <-time.After(30 * time.Second):
			return errors.New("postgres: reader did not stop within 30s")
		}
	}
	t.closeConns()
	return nil
}

func (t *Task) closeConns() {
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
	now := t.now()
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
	r := &connect.SourceRecord{
		SourcePartition: t.partition,
		SourceOffset:    off.toMap(),
		Topic:           ts.topic,
		ValueSchema:     ts.envelope,
		Value:           envelope.Value(ts.envelope, op, b, a, src.build(), now),
	}
	if ts.key != nil {
		r.KeySchema, r.Key = ts.key, ts.keyOf(keyVals)
	}
	return r
}
