package jdbc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/connectd/connectd/connect"
)

// Task is the JDBC sink task: Put resolves each record (describe),
// collapses the batch per key (collapse), creates or widens tables under
// schema.evolution=basic, and writes the batch in one transaction
// (shared with the batches queued with it, pipeline.go).
type Task struct {
	cfg      *config
	db       dialect
	reporter connect.ErrantRecordReporter
	log      *slog.Logger
	// tables caches the columns of each table written so far (stored
	// name → SQL type).
	tables map[string]map[string]string
	// topicTables: topic → table of its last change event (record.go).
	topicTables map[string]string

	// writeCtx bounds the transaction in flight; Stop cancels it.
	writeCtx    context.Context
	cancelWrite context.CancelFunc
	// inflight is the writer goroutine (pipeline.go): the transaction
	// being written and the batches queued behind it; nil when the
	// connection is idle.
	inflight *inflightTx
	// unwritten are transactions of batches Put accepted whose write
	// failed with a retriable error; written again, in order, before
	// anything else.
	unwritten []preparedTx
}

var _ connect.SinkTask = (*Task)(nil)

// Start parses the config and connects. Errors: an invalid config; a
// connection failure (as *connect.RetriableError).
func (t *Task) Start(ctx context.Context, tc connect.SinkTaskContext, cfg map[string]string) error {
	c, err := parseConfig(cfg)
	if err != nil {
		return err
	}
	t.cfg, t.tables, t.log = c, map[string]map[string]string{}, slog.Default()
	t.topicTables = map[string]string{}
	t.writeCtx, t.cancelWrite = context.WithCancel(context.Background())
	if tc != nil {
		t.reporter = tc.ErrantRecordReporter()
		if l, ok := tc.(connect.TaskLogger); ok {
			t.log = l.Logger()
		}
	}
	return t.connect(ctx)
}

func (t *Task) connect(ctx context.Context) error {
	var err error
	switch t.cfg.dialect {
	case "postgresql":
		t.db, err = openPostgres(ctx, t.cfg)
	default:
		t.db, err = openMySQL(ctx, t.cfg)
	}
	if err != nil {
		t.db = nil
	}
	return err
}

// Put prepares records as one transaction and hands it to the write
// pipeline (pipeline.go): queued behind the transaction being written
// (committed with the other batches queued there), or, when nothing is
// being written or the queue is full, written once the previous
// transaction committed; Flush waits for it. A record that cannot be resolved (no key for a delete, a value
// without schema) goes to the errant record reporter (dead letter queue
// under errors.tolerance=all) or fails the task. Errors:
// *connect.RetriableError for a lost connection or a deadlock, in this
// batch's schema changes or in the previous batch's write (the runtime
// hands the same records again; the previous batch is kept and written
// first); other database errors fail the task.
func (t *Task) Put(ctx context.Context, records []*connect.SinkRecord) error {
	if t.inflight == nil {
		if t.db == nil {
			if err := t.connect(ctx); err != nil {
				return err
			}
		}
		if err := t.writeUnwritten(ctx); err != nil {
			return err
		}
	}
	ops, err := t.ops(ctx, records)
	if err != nil {
		return err
	}
	if len(ops) == 0 {
		return nil
	}
	if err := t.ensureTables(ctx, ops); err != nil {
		return t.failed(err)
	}
	tx, err := t.db.prepare(ops, t.tables)
	if err != nil {
		return err
	}
	rows := 0
	for _, op := range ops {
		rows += len(op.rows)
	}
	if queued, err := t.enqueue(ctx, tx, rows); err != nil || queued {
		return err
	}
	if err := t.await(ctx); err != nil {
		return err
	}
	t.write(tx)
	return nil
}

// ops resolves records (describe; errant ones go to the reporter),
// collapses them per key between truncates, and plans the statements.
func (t *Task) ops(ctx context.Context, records []*connect.SinkRecord) ([]tableOp, error) {
	var segs [][]*change
	var cur []*change
	for _, r := range records {
		c, err := describe(t.cfg, r, t.topicTables)
		if err != nil {
			if t.reporter == nil {
				return nil, err
			}
			if rerr := t.reporter.Report(ctx, r, err); rerr != nil {
				return nil, rerr
			}
			continue
		}
		if c == nil {
			continue
		}
		if c.op == opTruncate {
			segs = append(segs, cur, []*change{c})
			cur = nil
			continue
		}
		cur = append(cur, c)
	}
	segs = append(segs, cur)
	var ops []tableOp
	for _, seg := range segs {
		if len(seg) == 1 && seg[0].op == opTruncate {
			ops = append(ops, tableOp{table: seg[0].table, kind: writeTruncate})
			continue
		}
		ops = append(ops, t.plan(collapse(seg))...)
	}
	return ops, nil
}

// failed drops the connection after a retriable error so that the next
// Put reconnects. No transaction is in flight when it runs.
func (t *Task) failed(err error) error {
	var re *connect.RetriableError
	if errors.As(err, &re) && t.db != nil {
		t.db.close()
		t.db = nil
	}
	return err
}

// plan groups collapsed changes into statements: per table, deletes and
// writes with the same column set, in batch.size chunks. After collapse
// a key occurs once, so the order between groups does not matter.
func (t *Task) plan(changes []*change) []tableOp {
	type gk struct {
		table string
		kind  writeKind
		cols  string
	}
	groups := map[gk]*tableOp{}
	var order []gk
	keys := map[colsKeyID]string{}
	for _, c := range changes {
		k := gk{table: c.table}
		op := tableOp{table: c.table, key: c.key}
		if c.op == opDelete {
			k.kind, op.kind = writeDelete, writeDelete
		} else {
			switch t.cfg.insertMode {
			case InsertModeUpsert:
				op.kind = writeUpsert
			case InsertModeUpdate:
				op.kind = writeUpdate
			default:
				op.kind = writeInsert
			}
			if len(c.key) == 0 {
				op.kind = writeInsert
			}
			k.kind = op.kind
			// Rows whose columns are all available share the group of
			// their table; a row with unavailable columns writes only the
			// others, in a group of its own column set.
			partial := false
			for _, f := range c.cols {
				partial = partial || f.unavailable
			}
			if partial {
				var names []string
				kept := make([]field, 0, len(c.cols))
				for _, f := range c.cols {
					if !f.unavailable {
						kept = append(kept, f)
						names = append(names, f.name)
					}
				}
				c.cols = kept
				k.cols = "\x00partial\x00" + strings.Join(names, "\x00")
			} else {
				k.cols = colsKey(c, keys)
			}
			op.cols = c.cols
		}
		g, ok := groups[k]
		if !ok {
			g = &op
			groups[k] = g
			order = append(order, k)
		}
		g.rows = append(g.rows, c)
	}
	var out []tableOp
	for _, k := range order {
		g := groups[k]
		for start := 0; start < len(g.rows); start += t.cfg.batchSize {
			part := *g
			part.rows = g.rows[start:min(start+t.cfg.batchSize, len(g.rows))]
			out = append(out, part)
		}
	}
	return out
}

// colsKeyID identifies rows whose written columns are the same: same
// topic (field filters are per topic) and same row schema.
type colsKeyID struct {
	topic string
	row   *connect.Schema
}

// colsKey is the names of c's columns, NUL-separated, built once per
// topic and row schema (cache) and checked against c's columns on reuse
// (the key columns left out can differ with the record key's schema).
func colsKey(c *change, cache map[colsKeyID]string) string {
	id := colsKeyID{topic: c.topic, row: c.row}
	if k, ok := cache[id]; ok && c.row != nil && sameCols(k, c.cols) {
		return k
	}
	var sb strings.Builder
	for _, f := range c.cols {
		sb.WriteString(f.name)
		sb.WriteByte(0)
	}
	cache[id] = sb.String()
	return cache[id]
}

// sameCols says whether key (colsKey's form) names exactly cols.
func sameCols(key string, cols []field) bool {
	pos := 0
	for _, f := range cols {
		end := pos + len(f.name)
		if end >= len(key) || key[pos:end] != f.name || key[end] != 0 {
			return false
		}
		pos = end + 1
	}
	return pos == len(key)
}

// ensureTables loads the columns of each table of ops; under
// schema.evolution=basic it creates missing tables and adds missing
// columns (Debezium's basic schema evolution), otherwise a missing table
// or column is an error. It waits for the transaction in flight before
// its first query: the connection is not shared.
func (t *Task) ensureTables(ctx context.Context, ops []tableOp) error {
	for _, op := range ops {
		cols, ok := t.tables[op.table]
		if !ok {
			if err := t.await(ctx); err != nil {
				return err
			}
			var exists bool
			var err error
			cols, exists, err = t.db.columns(ctx, op.table)
			if err != nil {
				return err
			}
			if !exists {
				if op.kind == writeTruncate || op.kind == writeDelete {
					continue // nothing to remove from a table that does not exist
				}
				if !t.cfg.evolve {
					return fmt.Errorf("table %s does not exist and schema.evolution=none", op.table)
				}
				all := fullColumns(op)
				if err := t.db.createTable(ctx, op.table, op.key, all); err != nil {
					return err
				}
				t.log.Info("created table", "table", op.table)
				if cols, _, err = t.db.columns(ctx, op.table); err != nil {
					return err
				}
			}
			t.tables[op.table] = cols
		}
		var missing []field
		for _, f := range append(append([]field(nil), op.key...), fullColumns(op)...) {
			if _, ok := cols[t.db.storedName(f.name)]; !ok {
				missing = append(missing, f)
			}
		}
		if len(missing) == 0 {
			continue
		}
		if !t.cfg.evolve {
			return fmt.Errorf("table %s has no column %s and schema.evolution=none", op.table, missing[0].name)
		}
		if err := t.await(ctx); err != nil {
			return err
		}
		if err := t.db.addColumns(ctx, op.table, missing); err != nil {
			return err
		}
		fresh, _, err := t.db.columns(ctx, op.table)
		if err != nil {
			return err
		}
		t.tables[op.table] = fresh
	}
	return nil
}

// fullColumns are the columns a write of op touches, plus for a create
// the columns left out because their value was unavailable (they are in
// the row's schema all the same).
func fullColumns(op tableOp) []field {
	seen := map[string]bool{}
	var out []field
	for _, c := range op.rows {
		for _, f := range c.cols {
			if !seen[f.name] {
				seen[f.name] = true
				out = append(out, f)
			}
		}
	}
	return out
}

// Stop abandons the transaction in flight (rolled back; its records were
// not flushed, so their offsets are not committed) and closes the
// connection.
func (t *Task) Stop() error {
	if t.cancelWrite != nil {
		t.cancelWrite()
	}
	if t.inflight != nil {
		<-t.inflight.done
		t.inflight = nil
	}
	if t.db != nil {
		t.db.close()
		t.db = nil
	}
	return nil
}
