package mysql

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gmysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/pingcap/tidb/pkg/parser"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/envelope"
	"github.com/connectd/connectd/connectors/internal/headers"
	"github.com/connectd/connectd/connectors/internal/queue"
)

// Task reads one server: an optional consistent snapshot, then the binlog.
//
// Concurrency: Start opens the client connection and starts one reader
// goroutine, which from then on owns the connection and the binlog syncer
// and is the only writer of the records channel (bounded by
// max.queue.size). Poll (worker goroutine) only receives from it. Commit has
// nothing to confirm upstream: a binlog position lives only in the worker's
// offset store.
type Task struct {
	dbCharsets map[string]string // database default charsets read while streaming (dbCharset)
	flavor     flavor
	cfg        *config
	partition  map[string]any
	now        func() time.Time

	conn    *client.Conn
	records chan *connect.SourceRecord
	done    chan struct{}
	failed  queue.ReaderError // why the reader goroutine ended
	cancel  context.CancelFunc

	schemas map[string]*tableSchema // by "db.table"; reader goroutine only
	catalog catalog                 // table structures as of the binlog position read; reader goroutine only
	parser  *parser.Parser          // DDL parser; reader goroutine only
	// lastSourceInfo / lastSource: the previous source block (Task.source);
	// reader goroutine only.
	lastSourceInfo sourceInfo
	lastSource     []any
	history        *schemaHistory // nil without schema.history.internal.kafka.topic
	log            *slog.Logger
	headers        []connect.Header // context headers of every record but heartbeats (extended.headers.enabled); nil = none
	lag            binlogLag        // binlog bytes behind the server, for Metrics (metrics.go)
}

var _ connect.SourceTask = (*Task)(nil)

func newTask(f flavor) *Task { return &Task{flavor: f, now: time.Now} }

// keepComments: whether column comments are in the table model (the field
// schemas' doc and the schema history's comment), as Debezium's DDL
// parser keeps them: MariaDbDatabaseSchema builds it with
// includeComments = include.schema.changes (default true),
// MySqlDatabaseSchema with include.schema.comments (default false, the
// only value connectd accepts).
func (t *Task) keepComments() bool {
	return t.flavor == flavorMariaDB && t.cfg.includeSchemaChanges
}

// stripComments drops tb's column comments when keepComments is false.
func (t *Task) stripComments(tb *table) {
	if tb == nil || t.keepComments() {
		return
	}
	for i := range tb.cols {
		tb.cols[i].comment = ""
	}
	tb.comment = ""
}

// plan is what the reader goroutine does after Start.
type plan struct {
	snapshot bool
	schema   bool // snapshot.mode=no_data: record the structures only
	stream   bool
	start    offset  // where streaming starts (and what it skips)
	at       *offset // snapshot.mode=recovery: record the structures at this stored offset
}

func (t *Task) connect(ctx context.Context) (*client.Conn, error) {
	addr := net.JoinHostPort(t.cfg.host, strconv.Itoa(t.cfg.port))
	c, err := client.ConnectWithContext(ctx, addr, t.cfg.user, t.cfg.password, "",
		time.Duration(t.cfg.connectTimeoutMs)*time.Millisecond, func(c *client.Conn) error {
			// The handshake's collation sets the session's character sets.
			// go-mysql's default (utf8mb4_0900_ai_ci, id 255) is unknown
			// to MariaDB, which then falls back to character_set_server
			// (latin1 by default), and SetCharset("utf8mb4") is a no-op on
			// a fresh connection (go-mysql believes it is utf8mb4
			// already): utf8mb4 text read in a snapshot came out as
			// latin1 ('h�llo'). utf8mb4_general_ci (id 45) is known to
			// MariaDB and MySQL.
			return c.SetCollation("utf8mb4_general_ci")
		})
	if err != nil {
		return nil, fmt.Errorf("mysql: connect to %s as %s: %w", addr, t.cfg.user, err)
	}
	// Every column's text in utf8mb4 whatever the server's defaults
	// (character_set_results; binary columns stay bytes).
	if _, err := c.Execute("SET NAMES utf8mb4"); err != nil {
		c.Close()
		return nil, fmt.Errorf("mysql: set names utf8mb4: %w", err)
	}
	// TIMESTAMP values are read and emitted in UTC in both phases.
	if _, err := c.Execute("SET time_zone = '+00:00'"); err != nil {
		c.Close()
		return nil, fmt.Errorf("mysql: set time_zone: %w", err)
	}
	return c, nil
}

// Start connects, checks the binlog settings, reads the stored offset and
// starts the reader. An unreachable server fails Start with the cause.
func (t *Task) Start(ctx context.Context, tc connect.SourceTaskContext, cfgMap map[string]string) (err error) {
	if t.cfg, err = parseConfig(t.flavor, cfgMap); err != nil {
		return err
	}
	if t.now == nil {
		t.now = time.Now
	}
	t.partition = map[string]any{"server": t.cfg.topicPrefix}
	t.records = make(chan *connect.SourceRecord, t.cfg.maxQueueSize)
	t.done = make(chan struct{})
	t.lag.SetReady()
	t.schemas = map[string]*tableSchema{}
	if t.cfg.extendedHeaders {
		t.headers = headers.Context(t.flavor.connector(), t.cfg.topicPrefix, t.now())
	}
	t.catalog = catalog{}
	t.parser = parser.New()
	t.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	if tl, ok := tc.(connect.TaskLogger); ok && tl.Logger() != nil {
		t.log = tl.Logger()
	}
	for _, k := range noEffectKeysSet(cfgMap) {
		t.log.Warn("Debezium configuration key is accepted but has no effect in connectd", "key", k, "value", cfgMap[k])
	}
	defer func() {
		if err != nil {
			t.history.close()
			t.history = nil
			if t.conn != nil {
				t.conn.Close()
				t.conn = nil
			}
			close(t.done)
		}
	}()
	if t.conn, err = t.connect(ctx); err != nil {
		return err
	}
	if err := t.checkServer(); err != nil {
		return err
	}
	var prev *offset
	if tc != nil && tc.OffsetReader() != nil {
		m, err := tc.OffsetReader().Offset(ctx, t.partition)
		if err != nil {
			return fmt.Errorf("mysql: read offset: %w", err)
		}
		if m != nil {
			o, err := parseOffset(m)
			if err != nil {
				return fmt.Errorf("mysql: stored offset for %v: %w", t.partition, err)
			}
			prev = &o
		}
	}
	if t.cfg.historyTopic != "" {
		brokers := t.cfg.historyBrokers
		var kafkaOpts []kgo.Opt
		if len(brokers) == 0 {
			// The worker's brokers, with its security settings.
			if wi, ok := tc.(connect.WorkerInfoProvider); ok {
				brokers, kafkaOpts = wi.WorkerInfo().BootstrapServers, wi.WorkerInfo().KafkaClientOpts
			}
		}
		if len(brokers) == 0 {
			return fmt.Errorf("mysql: %s is set but neither %s nor the worker gives Kafka brokers", KeyHistoryTopic, KeyHistoryBootstrap)
		}
		if t.history, err = openHistory(ctx, brokers, kafkaOpts, t.cfg.historyTopic, t.cfg.topicPrefix); err != nil {
			return err
		}
	}
	if alias := t.cfg.snapshotModeAlias; alias != "" {
		t.log.Warn("snapshot.mode=" + alias + " is deprecated; use snapshot.mode=" + t.cfg.snapshotMode)
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

// checkServer fails clearly when the binlog cannot give row events with
// full images.
func (t *Task) checkServer() error {
	r, err := t.conn.Execute("SELECT @@log_bin, @@binlog_format, @@binlog_row_image")
	if err != nil {
		return fmt.Errorf("mysql: read binlog settings: %w", err)
	}
	logBin, _ := r.GetString(0, 0)
	format, _ := r.GetString(0, 1)
	image, _ := r.GetString(0, 2)
	switch {
	case logBin != "1" && logBin != "ON":
		return errors.New("mysql: the binary log is disabled; start the server with log_bin")
	case format != "ROW":
		return fmt.Errorf("mysql: binlog_format is %s; the connector needs binlog_format=ROW", format)
	case image != "FULL":
		return fmt.Errorf("mysql: binlog_row_image is %s; the connector needs binlog_row_image=FULL", image)
	}
	return nil
}

// showBinlogStatus runs SHOW MASTER STATUS, or SHOW BINARY LOG STATUS
// where the server has no SHOW MASTER STATUS (MySQL 8.4 removed it;
// MySQL 8.2+ has the new name, MariaDB and MySQL up to 8.3 the old one),
// as Debezium's BinlogConnectorConnection picks by server version. The
// first is tried first; a syntax error (1064) falls back to the second.
func showBinlogStatus(exec func(q string, args ...any) (*gmysql.Result, error)) (*gmysql.Result, error) {
	r, err := exec("SHOW MASTER STATUS")
	var me *gmysql.MyError
	if errors.As(err, &me) && me.Code == gmysql.ER_PARSE_ERROR {
		return exec("SHOW BINARY LOG STATUS")
	}
	return r, err
}

// binlogPosition reads the current binlog file/position and GTID set.
func (t *Task) binlogPosition() (offset, error) {
	r, err := showBinlogStatus(t.conn.Execute)
	if err != nil {
		return offset{}, fmt.Errorf("mysql: SHOW MASTER STATUS (needs REPLICATION CLIENT): %w", err)
	}
	if len(r.Values) == 0 {
		return offset{}, errors.New("mysql: SHOW MASTER STATUS returned nothing: the binary log is disabled")
	}
	var o offset
	o.file, _ = r.GetString(0, 0)
	pos, _ := r.GetUint(0, 1)
	o.pos = int64(pos)
	q := "SELECT @@gtid_executed"
	if t.flavor == flavorMariaDB {
		q = "SELECT @@gtid_binlog_pos"
	}
	if g, err := t.conn.Execute(q); err == nil {
		o.gtids, _ = g.GetString(0, 0)
		o.gtids = t.cfg.filterGTIDs(o.gtids)
	}
	return o, nil
}

// run is the reader goroutine.
func (t *Task) run(ctx context.Context, p plan) {
	defer close(t.done)
	lagCtx, stopLag := context.WithCancel(ctx)
	lagDone := t.startBinlogLag(lagCtx, p)
	defer func() { stopLag(); <-lagDone }()
	err := func() error {
		start := p.start
		if p.snapshot || p.schema {
			pos, err := t.snapshot(ctx, p.snapshot, p.at)
			if err != nil {
				return err
			}
			if p.at == nil {
				start = pos
			}
		}
		if p.stream {
			return t.stream(ctx, start)
		}
		return nil
	}()
	t.failed.Set(ctx, err)
}

// emit queues a record, blocking while the queue is full (max.queue.size).
func (t *Task) emit(ctx context.Context, r *connect.SourceRecord) error {
	if t.headers != nil && r.Topic != t.cfg.heartbeatTopic {
		r.Headers = headers.With(r.Headers, t.headers)
	}
	select {
	case t.records <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Poll returns up to max.batch.size records, waiting at most
// poll.interval.ms for the first one. A reader error is returned once the
// records queued before it were polled.
func (t *Task) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	return queue.Poll(ctx, t.records, t.done, t.failed.Err, time.Duration(t.cfg.pollIntervalMs)*time.Millisecond, t.cfg.maxBatchSize)
}

// Commit is told that offset is acknowledged and durably stored. MySQL and
// MariaDB keep no position for the connector, so there is nothing to
// confirm (DESIGN.md invariant 1 holds because a restart reads the stored
// offset only).
func (t *Task) Commit(ctx context.Context, partition, off map[string]any) error {
	t.committed(off) // for the lag in bytes (metrics.go)
	return nil
}

// Stop ends the reader and closes the connections. Safe after a failed Start.
func (t *Task) Stop() error {
	if t.cancel != nil {
		t.cancel()
	}
	if t.done != nil {
		select {
		case <-t.done:
		case <-time.After(30 * time.Second):
			return errors.New("mysql: reader did not stop within 30s")
		}
	}
	if t.conn != nil {
		t.conn.Close()
		t.conn = nil
	}
	t.history.close()
	t.history = nil
	return nil
}

// source builds a record's source block. The rows of one binlog event (or
// of one snapshot table) differ only in row, so the boxed values of the
// previous block are copied when everything else is the same (in a CPU
// profile of bench/mysql's backlog, building it boxed 12 values per row:
// ~5% of connectd's CPU).
func (t *Task) source(s sourceInfo) *connect.Struct {
	row := s.row
	s.row = 0
	if t.lastSource == nil || s != t.lastSourceInfo {
		t.lastSource, t.lastSourceInfo = s.build(t.flavor).Values, s
	}
	vals := make([]any, len(t.lastSource))
	copy(vals, t.lastSource)
	vals[sourceRowField] = row
	return &connect.Struct{Schema: sourceSchemas[t.flavor], Values: vals}
}

// record builds the SourceRecord of one change.
func (t *Task) record(ts *tableSchema, op string, before, after []any, src sourceInfo, off map[string]any) *connect.SourceRecord {
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
		SourceOffset:    off,
		Topic:           ts.topic,
		ValueSchema:     ts.envelope,
		Value:           envelope.Value(ts.envelope, op, b, a, t.source(src), t.now()),
	}
	if ts.key != nil {
		r.KeySchema, r.Key = ts.key, ts.keyOf(keyVals)
	}
	return r
}

// tableSchema returns the schema of db.table from the catalog; a table the
// catalog does not know (no schema history) is read from
// information_schema on first use.
func (t *Task) tableSchema(conn *client.Conn, db, name string) (*tableSchema, error) {
	id := db + "." + name
	if ts, ok := t.schemas[id]; ok {
		return ts, nil
	}
	tb, ok := t.catalog[id]
	if !ok {
		var err error
		if tb, err = loadTable(conn, db, name); err != nil {
			return nil, err
		}
		t.stripComments(tb)
		t.catalog[id] = tb
	}
	ts := newTableSchema(t.cfg.topicPrefix, t.flavor, tb, t.cfg.modes, t.cfg.rules)
	t.schemas[id] = ts
	return ts, nil
}
