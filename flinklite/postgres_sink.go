package flinklite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/connectd/connectd/sinks/jdbc"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// UpsertColumn is one column of an upsert row: its name, its value (nil
// for SQL NULL; other values are written as text — a fmt.Stringer such as
// an exact decimal by its String — so a string, number, bool or time.Time
// fits any column type that parses it) and the SQL type, in the target
// database's dialect, the table is created with.
type UpsertColumn struct {
	Name  string
	Value any
	Type  string
}

// UpsertRow is the row a result becomes in an upsert table: the primary
// key columns (for window results: window start, window end and the key
// fields) and the other columns. Delete removes the row of Key instead.
type UpsertRow struct {
	Key    []UpsertColumn
	Values []UpsertColumn
	Delete bool
}

// PostgresUpsertConfig names the table of ToPostgresUpsert.
type PostgresUpsertConfig struct {
	// URL is a libpq/pgx connection URL (postgres://user:pass@host:port/db).
	URL string
	// Table is the (unquoted, optionally schema-qualified) table name;
	// created with the first row's columns and Key as its primary key when
	// it does not exist.
	Table string
}

// upsertSink buffers the latest row per key between checkpoints and
// writes them in one transaction at each checkpoint, with an idempotent
// upsert (PostgreSQL's INSERT … ON CONFLICT (key) DO UPDATE, MySQL's
// INSERT … ON DUPLICATE KEY UPDATE; Flink's JDBC upsert sink,
// JdbcDynamicTableSink in upsert mode): replaying results after a restore
// writes the same rows again, so the table converges to the committed
// results (idempotent writes, at-least-once delivery).
type upsertSink[T any] struct {
	env     *Env
	table   string
	w       upsertWriter
	row     func(Change[T]) (UpsertRow, error)
	created bool
	order   []string
	pending map[string]UpsertRow
}

// upsertWriter is one database's side of upsertSink.
type upsertWriter interface {
	// write runs rows (distinct keys) in one transaction, creating the
	// table first (IF NOT EXISTS, with rows[0]'s columns) when create is
	// set. After an error the next write starts on a new connection.
	write(ctx context.Context, rows []UpsertRow, create bool) error
	close()
}

func newUpsertSink[T any](s *Stream[T], table string, w upsertWriter, row func(Change[T]) (UpsertRow, error)) {
	k := &upsertSink[T]{env: s.env, table: table, w: w, row: row, pending: map[string]UpsertRow{}}
	s.subscribe(k)
	s.env.syncSinks = append(s.env.syncSinks, k)
}

// ToPostgresUpsert writes s to a PostgreSQL table by idempotent upserts
// keyed on UpsertRow.Key, committed with each checkpoint of Env.Run (see
// upsertSink). row maps an element to its row; an error fails the job.
// Errors of the database (connection, SQL) fail the checkpoint and so the
// job, which restarts from its last checkpoint.
func ToPostgresUpsert[T any](s *Stream[T], cfg PostgresUpsertConfig, row func(Change[T]) (UpsertRow, error)) {
	newUpsertSink(s, cfg.Table, &postgresWriter{cfg: cfg}, row)
}

func (k *upsertSink[T]) processWatermark(int64) {}

func (k *upsertSink[T]) processElement(e element[T]) {
	var c Change[T]
	c.Value, c.Retract = e.v, e.retract
	r, err := k.row(c)
	if err != nil {
		k.env.fail(fmt.Errorf("flinklite: row for %s: %w", k.table, err))
		return
	}
	id := fmt.Sprint(columnValues(r.Key)...)
	if _, ok := k.pending[id]; !ok {
		k.order = append(k.order, id)
	}
	k.pending[id] = r
}

func columnValues(cs []UpsertColumn) []any {
	out := make([]any, 0, 2*len(cs))
	for _, c := range cs {
		out = append(out, c.Value, "\x00")
	}
	return out
}

func (k *upsertSink[T]) close() { k.w.close() }

func (k *upsertSink[T]) flush(ctx context.Context) error {
	if len(k.order) == 0 {
		return nil
	}
	rows := make([]UpsertRow, len(k.order))
	for i, id := range k.order {
		rows[i] = k.pending[id]
	}
	if err := k.w.write(ctx, rows, !k.created); err != nil {
		return fmt.Errorf("writing %s: %w", k.table, err)
	}
	if _, ok := tableTemplate(rows); ok {
		k.created = true // else only deletes ran: the table may not exist yet
	}
	k.order = k.order[:0]
	clear(k.pending)
	return nil
}

// tableTemplate is the first row that is not a delete: the columns a
// table is created with.
func tableTemplate(rows []UpsertRow) (UpsertRow, bool) {
	for _, r := range rows {
		if !r.Delete {
			return r, true
		}
	}
	return UpsertRow{}, false
}

// postgresWriter writes with pgx, one connection.
type postgresWriter struct {
	cfg  PostgresUpsertConfig
	conn *pgx.Conn
}

func (w *postgresWriter) close() {
	if w.conn != nil {
		_ = w.conn.Close(context.Background())
		w.conn = nil
	}
}

func (w *postgresWriter) write(ctx context.Context, rows []UpsertRow, create bool) error {
	if w.conn == nil {
		conn, err := pgx.Connect(ctx, w.cfg.URL)
		if err != nil {
			return fmt.Errorf("connecting: %w", err)
		}
		w.conn = conn
	}
	tmpl, hasRow := tableTemplate(rows)
	if create && hasRow {
		// Outside the upsert transaction: the instances of a scaled-out
		// job (RunScaledOut) create the table at once, and CREATE TABLE IF
		// NOT EXISTS is not concurrency-safe in PostgreSQL (the loser fails
		// with 23505 on pg_type_typname_nsp_index, 42710 on the row type or
		// 42P07): the winner's table is the one wanted.
		_, err := w.conn.Exec(ctx, createUpsertTableSQL(w.cfg.Table, tmpl))
		var pe *pgconn.PgError
		if err != nil && !(errors.As(err, &pe) && (pe.Code == "23505" || pe.Code == "42P07" || pe.Code == "42710")) {
			w.close()
			return fmt.Errorf("creating the table: %w", err)
		}
	}
	err := pgx.BeginFunc(ctx, w.conn, func(tx pgx.Tx) error {
		if create && !hasRow {
			// Only deletes, and the table may not exist: nothing to delete then.
			var exists bool
			if err := tx.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", quoteIdent(w.cfg.Table)).Scan(&exists); err != nil || !exists {
				return err
			}
		}
		for _, r := range rows {
			q, args := upsertSQL(w.cfg.Table, r)
			if _, err := tx.Exec(ctx, q, args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		// The connection may be broken: reconnect on the next attempt.
		w.close()
	}
	return err
}

func quoteIdent(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = pgx.Identifier{p}.Sanitize()
	}
	return strings.Join(parts, ".")
}

func sqlText(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return x
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case fmt.Stringer:
		return x.String()
	case float64:
		return formatNumber(x)
	}
	return fmt.Sprint(v)
}

// createUpsertTableSQL is CREATE TABLE IF NOT EXISTS with r's key columns
// as the primary key (jdbc.CreateTableSQL).
func createUpsertTableSQL(table string, r UpsertRow) string {
	var defs, pk []string
	for _, c := range r.Key {
		defs = append(defs, quoteIdent(c.Name)+" "+c.Type+" NOT NULL")
		pk = append(pk, quoteIdent(c.Name))
	}
	for _, c := range r.Values {
		defs = append(defs, quoteIdent(c.Name)+" "+c.Type)
	}
	return jdbc.CreateTableSQL(quoteIdent(table), defs, pk)
}

// upsertSQL is the statement writing r: DELETE by key, or INSERT … ON
// CONFLICT (key) DO UPDATE SET every other column.
func upsertSQL(table string, r UpsertRow) (string, []any) {
	var args []any
	if r.Delete {
		var conds []string
		for _, c := range r.Key {
			args = append(args, sqlText(c.Value))
			conds = append(conds, fmt.Sprintf("%s = $%d", quoteIdent(c.Name), len(args)))
		}
		return fmt.Sprintf("DELETE FROM %s WHERE %s", quoteIdent(table), strings.Join(conds, " AND ")), args
	}
	var cols, vals, pk, set []string
	for _, c := range r.Key {
		args = append(args, sqlText(c.Value))
		cols = append(cols, quoteIdent(c.Name))
		vals = append(vals, fmt.Sprintf("$%d", len(args)))
		pk = append(pk, quoteIdent(c.Name))
	}
	for _, c := range r.Values {
		args = append(args, sqlText(c.Value))
		cols = append(cols, quoteIdent(c.Name))
		vals = append(vals, fmt.Sprintf("$%d", len(args)))
		set = append(set, quoteIdent(c.Name)+" = EXCLUDED."+quoteIdent(c.Name))
	}
	conflict := "DO NOTHING"
	if len(set) > 0 {
		conflict = "DO UPDATE SET " + strings.Join(set, ", ")
	}
	return fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s) ON CONFLICT (%s) %s", quoteIdent(table),
		strings.Join(cols, ", "), strings.Join(vals, ", "), strings.Join(pk, ", "), conflict), args
}

// formatNumber writes f as PostgreSQL parses it into numeric, bigint or
// double precision: integral values without a fraction or exponent.
func formatNumber(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprintf("%v", f)
}
