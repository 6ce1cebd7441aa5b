package flinklite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/connectd/connectd/sinks/jdbc"
	_ "github.com/go-sql-driver/mysql" // database/sql driver "mysql"
)

// MySQLUpsertConfig names the table of ToMySQLUpsert.
type MySQLUpsertConfig struct {
	// DSN is a go-sql-driver/mysql DSN (jdbc.DriverDSN makes one from a
	// JDBC URL); the session should be in UTC (time_zone='+00:00'), as
	// time.Time values are written as UTC DATETIME.
	DSN string
	// Table is the (unquoted, optionally database-qualified) table name;
	// created with the first row's columns and Key as its primary key when
	// it does not exist.
	Table string
}

// ToMySQLUpsert writes s to a MySQL or MariaDB table by idempotent
// upserts keyed on UpsertRow.Key (INSERT … ON DUPLICATE KEY UPDATE, the
// JDBC sink connector's SQL: jdbc.MySQLUpsertSQL, jdbc.MySQLDeleteSQL),
// committed with each checkpoint of Env.Run, as ToPostgresUpsert. Column
// types are MySQL's (UpsertColumn.Type). Errors of the database fail the
// checkpoint and so the job, which restarts from its last checkpoint.
func ToMySQLUpsert[T any](s *Stream[T], cfg MySQLUpsertConfig, row func(Change[T]) (UpsertRow, error)) {
	newUpsertSink(s, cfg.Table, &mysqlWriter{cfg: cfg}, row)
}

// mysqlWriter writes with database/sql, one connection.
type mysqlWriter struct {
	cfg MySQLUpsertConfig
	db  *sql.DB
}

func (w *mysqlWriter) close() {
	if w.db != nil {
		w.db.Close()
		w.db = nil
	}
}

// mysqlTable quotes a possibly database-qualified table name.
func mysqlTable(name string) string {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		parts[i] = jdbc.MySQLIdent(p)
	}
	return strings.Join(parts, ".")
}

// mysqlArg is the driver argument of a column value: time.Time in UTC,
// a fmt.Stringer (an exact decimal) as its text, which MySQL converts to
// the column's DECIMAL without a float in between; others as they are.
func mysqlArg(v any) any {
	switch x := v.(type) {
	case time.Time:
		return x.UTC()
	case fmt.Stringer:
		return x.String()
	}
	return v
}

// maxPlaceholders is MySQL's limit of placeholders in one statement.
const maxPlaceholders = 65535

func (w *mysqlWriter) write(ctx context.Context, rows []UpsertRow, create bool) (err error) {
	if w.db == nil {
		db, err := sql.Open("mysql", w.cfg.DSN)
		if err != nil {
			return fmt.Errorf("connecting: %w", err)
		}
		db.SetMaxOpenConns(1)
		w.db = db
	}
	defer func() {
		if err != nil {
			w.close() // the connection may be broken: a new one next time
		}
	}()
	table := mysqlTable(w.cfg.Table)
	if tmpl, ok := tableTemplate(rows); create && ok {
		// DDL commits implicitly in MySQL: before the transaction.
		var defs, pk []string
		for i, c := range tmpl.Key {
			defs = append(defs, jdbc.MySQLIdent(c.Name)+" "+widestDecimal(rows, i, true)+" NOT NULL")
			pk = append(pk, jdbc.MySQLIdent(c.Name))
		}
		for i, c := range tmpl.Values {
			defs = append(defs, jdbc.MySQLIdent(c.Name)+" "+widestDecimal(rows, i, false)+" NULL")
		}
		if _, err := w.db.ExecContext(ctx, jdbc.CreateTableSQL(table, defs, pk)); err != nil {
			return fmt.Errorf("creating the table: %w", err)
		}
	} else if create {
		// Only deletes, and the table may not exist: nothing to delete then.
		db, name, ok := strings.Cut(w.cfg.Table, ".")
		if !ok {
			db, name = "", w.cfg.Table
		}
		var n int
		if err := w.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = COALESCE(NULLIF(?, ''), DATABASE()) AND TABLE_NAME = ?", db, name).Scan(&n); err != nil || n == 0 {
			return err
		}
	}
	tx, err := w.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// The keys of rows are distinct (the sink keeps the last row of each),
	// so deletes and upserts may run as two batches.
	var dels, ups []UpsertRow
	for _, r := range rows {
		if r.Delete {
			dels = append(dels, r)
		} else {
			ups = append(ups, r)
		}
	}
	if err := execChunks(ctx, tx, dels, func(r UpsertRow) []UpsertColumn { return r.Key }, func(names []string, n int) string {
		return jdbc.MySQLDeleteSQL(table, names, n)
	}); err != nil {
		return err
	}
	if err := execChunks(ctx, tx, ups, func(r UpsertRow) []UpsertColumn { return append(append([]UpsertColumn(nil), r.Key...), r.Values...) },
		func(names []string, n int) string { return jdbc.MySQLUpsertSQL(table, names, len(ups[0].Key), n) }); err != nil {
		return err
	}
	return tx.Commit()
}

// execChunks runs rows (of the same columns) as multi-row statements of
// at most maxPlaceholders placeholders.
func execChunks(ctx context.Context, tx *sql.Tx, rows []UpsertRow, cols func(UpsertRow) []UpsertColumn, stmt func(names []string, n int) string) error {
	if len(rows) == 0 {
		return nil
	}
	first := cols(rows[0])
	names := make([]string, len(first))
	for i, c := range first {
		names[i] = c.Name
	}
	per := maxPlaceholders / max(len(names), 1)
	for start := 0; start < len(rows); start += per {
		chunk := rows[start:min(start+per, len(rows))]
		args := make([]any, 0, len(chunk)*len(names))
		for _, r := range chunk {
			cs := cols(r)
			if len(cs) != len(names) {
				return fmt.Errorf("a row has %d columns, the first %d", len(cs), len(names))
			}
			for _, c := range cs {
				args = append(args, mysqlArg(c.Value))
			}
		}
		if _, err := tx.ExecContext(ctx, stmt(names, len(chunk)), args...); err != nil {
			return err
		}
	}
	return nil
}

// widestDecimal is the type of column i (of Key or Values) of the first
// row, or, when the rows give it as decimal(p,s), decimal(p, the largest s
// of the rows): a MySQL DECIMAL column has one scale, and decimals of
// variable scale (Debezium's VariableScaleDecimal) would be rounded to the
// first row's. A value of a larger scale in a later checkpoint is rounded
// by MySQL to the column's scale.
func widestDecimal(rows []UpsertRow, i int, key bool) string {
	col := func(r UpsertRow) (UpsertColumn, bool) {
		cs := r.Values
		if key {
			cs = r.Key
		}
		if i >= len(cs) || r.Delete {
			return UpsertColumn{}, false
		}
		return cs[i], true
	}
	tmpl, _ := tableTemplate(rows)
	first, _ := col(tmpl)
	var p, s int
	if n, _ := fmt.Sscanf(first.Type, "decimal(%d,%d)", &p, &s); n != 2 {
		return first.Type
	}
	for _, r := range rows {
		c, ok := col(r)
		var p2, s2 int
		if ok {
			if n, _ := fmt.Sscanf(c.Type, "decimal(%d,%d)", &p2, &s2); n == 2 && s2 > s {
				s = s2
			}
		}
	}
	return fmt.Sprintf("decimal(%d,%d)", p, s)
}
