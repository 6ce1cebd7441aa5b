package postgres

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/queue"
)

var _ connect.CurrentReader = (*Task)(nil)

// ReadCurrent implements connect.CurrentReader for connectd verify: it reads
// every table the connector captures as the initial snapshot would (the same
// schemas, values, topics and keys, in one REPEATABLE READ transaction, without
// a replication slot) and gives each row's record to emit. The records'
// offsets carry the WAL position (lsn) the read is consistent with.
//
// Unlike the snapshot, it reads whole tables: snapshot.include.collection.list
// and snapshot.select.statement.overrides narrow what the connector's snapshot
// reads, not what its topics hold once it streams. Notifications are off.
// ReadCurrent uses a task of its own; the task is not started.
func (t *Task) ReadCurrent(ctx context.Context, cfgMap map[string]string, emit func(*connect.SourceRecord) error) (map[string]any, error) {
	cfg := make(map[string]string, len(cfgMap))
	for k, v := range cfgMap {
		cfg[k] = v
	}
	delete(cfg, KeySnapshotSelectOverrides)
	delete(cfg, "snapshot.include.collection.list")
	var err error
	if t.cfg, err = parseConfig(cfg); err != nil {
		return nil, err
	}
	t.cfg.snap.notifySink, t.cfg.snap.notifyLog = false, false
	if t.log == nil {
		t.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	t.partition = map[string]any{"server": t.cfg.topicPrefix}
	pc, err := t.connConfig()
	if err != nil {
		return nil, fmt.Errorf("postgres: connection config: %w", err)
	}
	addr := net.JoinHostPort(t.cfg.host, strconv.Itoa(t.cfg.port))
	if t.conn, err = pgx.ConnectConfig(ctx, pc); err != nil {
		return nil, fmt.Errorf("postgres: connect to %s database %q: %w", addr, t.cfg.dbname, err)
	}
	defer t.conn.Close(context.Background())
	t.types = &typeMapper{h: t.cfg.handling, reg: &typeRegistry{}, rules: t.cfg.rules, comments: t.cfg.ext.schemaComments}
	if err := t.types.reg.load(ctx, t.conn); err != nil {
		return nil, err
	}

	var pos map[string]any
	err = queue.Collect(ctx, func(ctx context.Context, records chan *connect.SourceRecord) error {
		t.records = records
		return t.snapshot(ctx, plan{snapshot: true})
	}, func(r *connect.SourceRecord) error {
		if r.SourceOffset != nil && pos == nil {
			if lsn, ok := r.SourceOffset["lsn"]; ok {
				pos = map[string]any{"lsn": lsn}
			}
		}
		return emit(r)
	})
	if err != nil {
		return nil, err
	}
	if pos == nil { // no rows: the position is the server's WAL position now
		var lsn string
		if err := t.conn.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsn); err == nil {
			pos = map[string]any{"lsn_text": lsn}
		}
	}
	return pos, nil
}
