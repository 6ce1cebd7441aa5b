package jdbc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// postgresDialect writes with pgx: each op is one statement over unnest()
// of text arrays (one array per column), so a batch of n rows costs one
// round trip per table and column set instead of n:
//
//	INSERT INTO t (k, c) SELECT u.a1::integer, u.a2::text
//	  FROM unnest($1::text[], $2::text[]) AS u(a1, a2)
//	  ON CONFLICT (k) DO UPDATE SET c = EXCLUDED.c
type postgresDialect struct {
	cfg  *config
	conn *pgx.Conn
}

func openPostgres(ctx context.Context, cfg *config) (*postgresDialect, error) {
	pc, err := pgx.ParseConfig(cfg.dsn)
	if err != nil {
		return nil, err
	}
	if cfg.user != "" {
		pc.User = cfg.user
	}
	if cfg.password != "" {
		pc.Password = cfg.password
	}
	conn, err := pgx.ConnectConfig(ctx, pc)
	if err != nil {
		return nil, retriable(err)
	}
	return &postgresDialect{cfg: cfg, conn: conn}, nil
}

func (d *postgresDialect) close() { _ = d.conn.Close(context.Background()) }

func (d *postgresDialect) storedName(n string) string {
	if d.cfg.quote {
		return n
	}
	return strings.ToLower(n)
}

func (d *postgresDialect) ident(n string) string {
	return `"` + strings.ReplaceAll(d.storedName(n), `"`, `""`) + `"`
}

func (d *postgresDialect) columns(ctx context.Context, table string) (map[string]string, bool, error) {
	var exists bool
	if err := d.conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, d.ident(table)).Scan(&exists); err != nil {
		return nil, false, retriable(err)
	}
	if !exists {
		return nil, false, nil
	}
	rows, err := d.conn.Query(ctx, `SELECT a.attname, format_type(a.atttypid, a.atttypmod) FROM pg_attribute a
		WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped`, d.ident(table))
	if err != nil {
		return nil, false, retriable(err)
	}
	out, err := scanColumns(rows)
	if err != nil {
		return nil, false, err
	}
	return out, true, retriable(rows.Err())
}

// pgType maps a Connect schema to a PostgreSQL column type as Debezium's
// JDBC sink PostgreSQL dialect does (its "data type mapping" table).
func pgType(s *connect.Schema) string {
	switch s.Name {
	case dbzDate, connect.DateName:
		return "date"
	case dbzTime, connect.TimeName:
		return "time(3)"
	case dbzMicroTime, dbzNanoTime:
		return "time(6)"
	case dbzTimestamp, connect.TimestampName:
		return "timestamp(3)"
	case dbzMicroTimestamp, dbzNanoTimestamp:
		return "timestamp(6)"
	case dbzZonedTimestamp:
		return "timestamptz"
	case dbzZonedTime:
		return "timetz"
	case dbzMicroDuration:
		return "interval"
	case connect.DecimalName:
		sc, _ := s.Param("scale")
		if p, ok := s.Param("connect.decimal.precision"); ok {
			return fmt.Sprintf("numeric(%s,%s)", p, sc)
		}
		return "numeric"
	case dbzVariableScaleDecimal:
		return "numeric"
	case dbzJSON:
		return "json"
	case dbzUUID:
		return "uuid"
	case dbzXML:
		return "xml"
	}
	switch s.Type {
	case connect.Int8, connect.Int16:
		return "smallint"
	case connect.Int32:
		return "integer"
	case connect.Int64:
		return "bigint"
	case connect.Float32:
		return "real"
	case connect.Float64:
		return "double precision"
	case connect.Boolean:
		return "boolean"
	case connect.Bytes:
		return "bytea"
	}
	if s.Type == connect.Array && s.ValueSchema != nil {
		// a native array of the element's type, as Debezium's PostgreSQL
		// dialect (ArrayType); arrays of arrays, maps or structs stay JSON
		if e := pgType(s.ValueSchema); e != "text" || s.ValueSchema.Type == connect.String {
			if s.ValueSchema.Type != connect.Array && s.ValueSchema.Type != connect.Map && s.ValueSchema.Type != connect.StructT {
				return e + "[]"
			}
		}
	}
	return "text" // strings, enums, and maps/structs (and nested arrays) as JSON text
}

func (d *postgresDialect) columnDef(f field, inKey bool) string {
	def := d.ident(f.name) + " " + pgType(f.schema)
	if inKey || !f.schema.Optional {
		def += " NOT NULL"
	}
	return def
}

func (d *postgresDialect) createTable(ctx context.Context, table string, key, cols []field) error {
	_, err := d.conn.Exec(ctx, createTableSQL(table, key, cols, d.ident, d.columnDef))
	if lostDDLRace(err) {
		return nil // another task created it; the caller reads its columns
	}
	return retriable(err)
}

func (d *postgresDialect) addColumns(ctx context.Context, table string, cols []field) error {
	for _, c := range cols {
		_, err := d.conn.Exec(ctx, fmt.Sprintf("ALTER TABLE %s ADD COLUMN IF NOT EXISTS %s %s", d.ident(table), d.ident(c.name), pgType(c.schema)))
		if err != nil && !lostDDLRace(err) {
			return retriable(err)
		}
	}
	return nil
}

// lostDDLRace reports whether err is PostgreSQL refusing a CREATE TABLE /
// ADD COLUMN IF NOT EXISTS because a concurrent transaction (another sink
// task of the same connector, tasks.max > 1) created the same table or
// column first: IF NOT EXISTS checks before the catalog insert, so the
// loser gets duplicate_table (42P07), duplicate_column (42701),
// duplicate_object (42710: the table's row type) or a unique
// violation (23505) on the catalog's name index (pg_type_typname_nsp_index,
// pg_class_relname_nsp_index, pg_attribute_relid_attnam_index). CI saw
// 23505 on pg_type_typname_nsp_index with two sink tasks.
func lostDDLRace(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "42P07", "42701", "42710":
		return true
	case "23505":
		switch pe.ConstraintName {
		case "pg_type_typname_nsp_index", "pg_class_relname_nsp_index", "pg_attribute_relid_attnam_index":
			return true
		}
	}
	return false
}

// castExpr reads text expression e as a value of SQL type t.
func castExpr(e, t string) string {
	if t == "bytea" {
		return "decode(" + e + ", 'hex')"
	}
	return e + "::" + t
}

// pgStatement is one prepared statement of a transaction.
type pgStatement struct {
	table string
	sql   string
	args  []any
}

func (d *postgresDialect) prepare(ops []tableOp, types map[string]map[string]string) (preparedTx, error) {
	stmts := make([]pgStatement, 0, len(ops))
	for _, op := range ops {
		sql, args, err := d.statement(op, types[op.table])
		if err != nil {
			return nil, err
		}
		stmts = append(stmts, pgStatement{table: op.table, sql: sql, args: args})
	}
	return stmts, nil
}

func (d *postgresDialect) merge(txs []preparedTx) preparedTx {
	if len(txs) == 1 {
		return txs[0]
	}
	var out []pgStatement
	for _, tx := range txs {
		out = append(out, tx.([]pgStatement)...)
	}
	return out
}

// exec sends the transaction's statements as one pipeline (pgx.Batch:
// Bind/Execute for each, then a single Sync), one round trip instead of
// BEGIN, the statements and COMMIT one after another. PostgreSQL runs the
// messages before a Sync as one implicit transaction: the first error
// rolls all of them back, and the transaction is committed when the
// Sync's ReadyForQuery arrives, which Close waits for ("Pipelining" and
// "Extended Query" in the PostgreSQL protocol documentation).
func (d *postgresDialect) exec(ctx context.Context, p preparedTx) error {
	stmts := p.([]pgStatement)
	b := &pgx.Batch{}
	for _, s := range stmts {
		b.Queue(s.sql, s.args...)
	}
	br := d.conn.SendBatch(ctx, b)
	for _, s := range stmts {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return retriable(fmt.Errorf("table %s: %w", s.table, err))
		}
	}
	return retriable(br.Close())
}

func (d *postgresDialect) statement(op tableOp, types map[string]string) (string, []any, error) {
	t := d.ident(op.table)
	if op.kind == writeTruncate {
		return "TRUNCATE TABLE " + t, nil, nil
	}
	fields := append(append([]field(nil), op.key...), op.cols...)
	if op.kind == writeDelete {
		fields = op.key
	}
	args := make([]any, len(fields))
	nk := len(op.key)
	alias := make([]string, len(fields))
	params := make([]string, len(fields))
	exprs := make([]string, len(fields))
	names := make([]string, len(fields))
	for i, f := range fields {
		typ := types[d.storedName(f.name)]
		if typ == "" {
			return "", nil, fmt.Errorf("table %s has no column %s", op.table, d.storedName(f.name))
		}
		alias[i] = "a" + itoa(i+1)
		if arr, arrType, ok := typedColumn(op.rows, i, nk, typ); ok {
			args[i] = arr
			params[i] = "$" + itoa(i+1) + "::" + arrType
			exprs[i] = "u." + alias[i] + "::" + typ
		} else {
			arr, err := textColumn(op.rows, i, nk, op.table, f.name, typ)
			if err != nil {
				return "", nil, err
			}
			args[i] = arr
			params[i] = "$" + itoa(i+1) + "::text[]"
			exprs[i] = castExpr("u."+alias[i], typ)
		}
		names[i] = d.ident(f.name)
	}
	from := fmt.Sprintf("unnest(%s) AS u(%s)", strings.Join(params, ", "), strings.Join(alias, ", "))
	var where []string
	for i := 0; i < nk; i++ {
		where = append(where, fmt.Sprintf("%s.%s = %s", t, names[i], exprs[i]))
	}
	switch op.kind {
	case writeDelete:
		return fmt.Sprintf("DELETE FROM %s USING %s WHERE %s", t, from, strings.Join(where, " AND ")), args, nil
	case writeUpdate:
		var set []string
		for i := nk; i < len(fields); i++ {
			set = append(set, fmt.Sprintf("%s = %s", names[i], exprs[i]))
		}
		if len(set) == 0 {
			return "SELECT 1", nil, nil
		}
		return fmt.Sprintf("UPDATE %s SET %s FROM %s WHERE %s", t, strings.Join(set, ", "), from, strings.Join(where, " AND ")), args, nil
	}
	sql := fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM %s", t, strings.Join(names, ", "), strings.Join(exprs, ", "), from)
	if op.kind == writeUpsert && nk > 0 {
		var set []string
		for i := nk; i < len(fields); i++ {
			set = append(set, fmt.Sprintf("%s = EXCLUDED.%s", names[i], names[i]))
		}
		if len(set) == 0 {
			sql += fmt.Sprintf(" ON CONFLICT (%s) DO NOTHING", strings.Join(names[:nk], ", "))
		} else {
			sql += fmt.Sprintf(" ON CONFLICT (%s) DO UPDATE SET %s", strings.Join(names[:nk], ", "), strings.Join(set, ", "))
		}
	}
	return sql, args, nil
}

// retriable wraps errors a new connection or a later attempt may cure
// (retriableBy): network errors, a closed connection and PostgreSQL's
// connection exception (08), serialization failure / deadlock (40),
// insufficient resources (53) and operator intervention (57) classes.
func retriable(err error) error {
	return retriableBy(err, func(err error) (retry, known bool) {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			switch pe.Code[:2] {
			case "08", "40", "53", "57":
				return true, true
			}
			return false, true
		}
		if pgconn.SafeToRetry(err) || errors.Is(err, net.ErrClosed) || strings.Contains(err.Error(), "conn closed") {
			return true, true
		}
		return false, false
	})
}
