package jdbc

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

var _ connect.SinkVerifier = (*Task)(nil)

// Verification compares a sink's target tables with what a set of records
// would leave in them (connectd verify --against SINK_CONNECTOR). The
// expected records (the source's current rows, through the source
// connector's and the sink's converters and transforms) are written by the
// sink's own code (describe, plan, the dialect's statements) into scratch
// tables made LIKE each target (same column types, same primary key), so
// both sides hold values converted the same way; the comparison then runs
// in the database: keys only in the scratch table are missing from the
// target, keys only in the target are extra, keys in both whose columns'
// text differs are different. The scratch tables (connectd_verify_<n>_<table>,
// UNLOGGED in PostgreSQL) are dropped by Close; the sink's user needs the
// CREATE privilege that schema.evolution=basic needs too.
type Verification struct {
	t      *Task
	prefix string
	// targets: target table → its scratch table, in first-seen order.
	targets map[string]*verifyTarget
	order   []string
}

type verifyTarget struct {
	scratch string
	exists  bool     // the target table exists
	key     []string // key column names as the sink resolved them
	rows    int64    // expected rows written to the scratch table
}

// StartVerification implements connect.SinkVerifier: a verification
// with the sink connector's task config cfg.
func (*Task) StartVerification(ctx context.Context, cfg map[string]string) (connect.SinkVerification, error) {
	c := make(map[string]string, len(cfg))
	for k, v := range cfg {
		c[k] = v
	}
	// Every expected record is a row that must be there: written as an
	// upsert when the sink has a key (an insert otherwise).
	if !strings.EqualFold(c["primary.key.mode"], PKModeNone) && c["primary.key.mode"] != "" {
		c["insert.mode"] = InsertModeUpsert
	}
	t := &Task{}
	if err := t.Start(ctx, nil, c); err != nil {
		return nil, err
	}
	return &Verification{t: t, prefix: fmt.Sprintf("connectd_verify_%d_", time.Now().UnixNano()%1000000),
		targets: map[string]*verifyTarget{}}, nil
}

// Put writes the expected rows of records into the scratch tables.
func (v *Verification) Put(ctx context.Context, records []*connect.SinkRecord) error {
	ops, err := v.t.ops(ctx, records)
	if err != nil {
		return err
	}
	var keep []tableOp
	for _, op := range ops {
		if op.kind == writeDelete || op.kind == writeTruncate {
			continue // the expected state is made of rows only
		}
		tg, err := v.target(ctx, op)
		if err != nil {
			return err
		}
		tg.rows += int64(len(op.rows))
		op.table = tg.scratch
		if op.kind == writeUpdate {
			op.kind = writeUpsert
		}
		keep = append(keep, op)
	}
	if len(keep) == 0 {
		return nil
	}
	if err := v.t.ensureTables(ctx, keep); err != nil {
		return err
	}
	tx, err := v.t.db.prepare(keep, v.t.tables)
	if err != nil {
		return err
	}
	return v.t.db.exec(ctx, tx)
}

// target returns the scratch table of op's target table, creating it on
// first sight: LIKE the target when it exists, else as the sink would
// create the target.
func (v *Verification) target(ctx context.Context, op tableOp) (*verifyTarget, error) {
	if tg := v.targets[op.table]; tg != nil {
		return tg, nil
	}
	scratch := v.prefix + op.table
	if len(scratch) > 63 {
		scratch = scratch[:63]
	}
	_, exists, err := v.t.db.columns(ctx, op.table)
	if err != nil {
		return nil, err
	}
	tg := &verifyTarget{scratch: scratch, exists: exists}
	for _, k := range op.key {
		tg.key = append(tg.key, v.t.db.storedName(k.name))
	}
	v.targets[op.table], v.order = tg, append(v.order, op.table)
	switch d := v.t.db.(type) {
	case *postgresDialect:
		if exists {
			_, err = d.conn.Exec(ctx, fmt.Sprintf("CREATE UNLOGGED TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)", d.ident(scratch), d.ident(op.table)))
		} else {
			err = d.createTable(ctx, scratch, op.key, fullColumns(op))
		}
	case *mysqlDialect:
		if exists {
			_, err = d.db.ExecContext(ctx, fmt.Sprintf("CREATE TABLE %s LIKE %s", d.ident(scratch), d.ident(op.table)))
		} else {
			err = d.createTable(ctx, scratch, op.key, fullColumns(op))
		}
	default:
		err = fmt.Errorf("verify: dialect %T has no scratch tables", v.t.db)
	}
	if err != nil {
		return nil, fmt.Errorf("verify: creating the scratch table %s for %s: %w", scratch, op.table, err)
	}
	return tg, nil
}

// Compare compares each target table with its scratch table, with up to
// examples differing keys of each kind.
func (v *Verification) Compare(ctx context.Context, examples int) ([]connect.SinkVerifyTable, error) {
	var out []connect.SinkVerifyTable
	for _, table := range v.order {
		tg := v.targets[table]
		res := connect.SinkVerifyTable{Table: table, Expected: tg.rows}
		if !tg.exists {
			res.Problem = "table " + table + " does not exist"
			res.Missing = tg.rows
			out = append(out, res)
			continue
		}
		if err := v.compare(ctx, table, tg, examples, &res); err != nil {
			return nil, fmt.Errorf("verify: comparing %s: %w", table, err)
		}
		out = append(out, res)
	}
	return out, nil
}

func (v *Verification) compare(ctx context.Context, table string, tg *verifyTarget, examples int, res *connect.SinkVerifyTable) error {
	cols, _, err := v.t.db.columns(ctx, table)
	if err != nil {
		return err
	}
	var names []string
	for c := range cols {
		names = append(names, c)
	}
	sort.Strings(names)
	key, err := v.primaryKey(ctx, table)
	if err != nil {
		return err
	}
	if len(key) == 0 {
		key = tg.key
	}
	if len(key) == 0 {
		return fmt.Errorf("the table has no primary key and the sink resolves none (primary.key.mode=none): rows cannot be matched")
	}
	// ident quotes a stored column name, tbl a table name as the sink does
	var ident, tbl func(string) string
	var text, differs func(alias, col string) string
	switch d := v.t.db.(type) {
	case *postgresDialect:
		ident, tbl = pgQuote, d.ident
		text = func(a, c string) string { return a + "." + pgQuote(c) + "::text" }
		differs = func(a, c string) string {
			return fmt.Sprintf("%s.%s::text IS DISTINCT FROM t.%s::text", a, pgQuote(c), pgQuote(c))
		}
	case *mysqlDialect:
		ident, tbl = d.ident, d.ident
		text = func(a, c string) string { return "CAST(" + a + "." + d.ident(c) + " AS CHAR)" }
		// binary: the default collations compare 'a' and 'A' as equal
		differs = func(a, c string) string {
			return fmt.Sprintf("NOT (CAST(%s.%s AS BINARY) <=> CAST(t.%s AS BINARY))", a, d.ident(c), d.ident(c))
		}
	}
	scratch, target := tbl(tg.scratch), tbl(table)
	var on, diff []string
	for _, k := range key {
		on = append(on, fmt.Sprintf("s.%s = t.%s", ident(k), ident(k)))
	}
	for _, c := range names {
		diff = append(diff, differs("s", c))
	}
	keyText := func(alias string) string {
		var l []string
		for _, k := range key {
			l = append(l, text(alias, k))
		}
		return strings.Join(l, ", ")
	}
	join := strings.Join(on, " AND ")
	if err := v.scalar(ctx, "SELECT count(*) FROM "+target, &res.Rows); err != nil {
		return err
	}
	kinds := []struct {
		kind  string
		n     *int64
		where string // over s (scratch) or t (target)
		alias string
	}{
		{"missing", &res.Missing, fmt.Sprintf("FROM %s s WHERE NOT EXISTS (SELECT 1 FROM %s t WHERE %s)", scratch, target, join), "s"},
		{"extra", &res.Extra, fmt.Sprintf("FROM %s t WHERE NOT EXISTS (SELECT 1 FROM %s s WHERE %s)", target, scratch, join), "t"},
		{"different", &res.Different, fmt.Sprintf("FROM %s s JOIN %s t ON %s WHERE %s", scratch, target, join, strings.Join(diff, " OR ")), "s"},
	}
	for _, k := range kinds {
		if err := v.scalar(ctx, "SELECT count(*) "+k.where, k.n); err != nil {
			return err
		}
		if *k.n == 0 || examples <= 0 {
			continue
		}
		keys, err := v.query(ctx, fmt.Sprintf("SELECT %s %s ORDER BY %s LIMIT %d", keyText(k.alias), k.where, keyText(k.alias), examples))
		if err != nil {
			return err
		}
		for _, kv := range keys {
			ex := connect.SinkVerifyExample{Kind: k.kind, Key: map[string]*string{}}
			var where []string
			for i, kc := range key {
				ex.Key[kc] = kv[i]
				if kv[i] == nil {
					where = append(where, "x."+ident(kc)+" IS NULL")
				} else {
					where = append(where, fmt.Sprintf("%s = %s", text("x", kc), v.lit(*kv[i])))
				}
			}
			row := func(tbl string) (map[string]*string, error) {
				var sel []string
				for _, c := range names {
					sel = append(sel, text("x", c))
				}
				rows, err := v.query(ctx, fmt.Sprintf("SELECT %s FROM %s x WHERE %s", strings.Join(sel, ", "), tbl, strings.Join(where, " AND ")))
				if err != nil || len(rows) == 0 {
					return nil, err
				}
				m := map[string]*string{}
				for i, c := range names {
					m[c] = rows[0][i]
				}
				return m, nil
			}
			if ex.Expected, err = row(scratch); err != nil {
				return err
			}
			if ex.Actual, err = row(target); err != nil {
				return err
			}
			if ex.Expected != nil && ex.Actual != nil {
				for _, c := range names {
					a, b := ex.Expected[c], ex.Actual[c]
					if (a == nil) != (b == nil) || a != nil && *a != *b {
						ex.Columns = append(ex.Columns, c)
					}
				}
			}
			res.Examples = append(res.Examples, ex)
		}
	}
	return nil
}

// lit quotes s as an SQL string literal of the task's database
// (backslashes are escapes in MariaDB's default sql_mode).
func (v *Verification) lit(s string) string {
	if _, ok := v.t.db.(*mysqlDialect); ok {
		s = strings.ReplaceAll(s, `\`, `\\`)
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// pgQuote quotes a name as PostgreSQL stores it (no case folding).
func pgQuote(n string) string { return `"` + strings.ReplaceAll(n, `"`, `""`) + `"` }

// primaryKey returns the target table's primary key columns (stored names).
func (v *Verification) primaryKey(ctx context.Context, table string) ([]string, error) {
	var rows [][]*string
	var err error
	switch d := v.t.db.(type) {
	case *postgresDialect:
		rows, err = v.query(ctx, fmt.Sprintf(`SELECT a.attname::text FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
			WHERE i.indrelid = to_regclass(%s) AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)`, v.lit(d.ident(table))))
	case *mysqlDialect:
		rows, err = v.query(ctx, fmt.Sprintf(`SELECT COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE
			WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = %s AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY ORDINAL_POSITION`, v.lit(table)))
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, r := range rows {
		if r[0] != nil {
			out = append(out, *r[0])
		}
	}
	return out, nil
}

func (v *Verification) scalar(ctx context.Context, q string, n *int64) error {
	rows, err := v.query(ctx, q)
	if err != nil {
		return err
	}
	if len(rows) != 1 || rows[0][0] == nil {
		return fmt.Errorf("%s: no count", q)
	}
	_, err = fmt.Sscan(*rows[0][0], n)
	return err
}

// query runs q and returns every row's columns as text (nil for NULL).
func (v *Verification) query(ctx context.Context, q string) ([][]*string, error) {
	var out [][]*string
	switch d := v.t.db.(type) {
	case *postgresDialect:
		rows, err := d.conn.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				return nil, err
			}
			r := make([]*string, len(vals))
			for i, x := range vals {
				if x != nil {
					s := fmt.Sprint(x)
					r[i] = &s
				}
			}
			out = append(out, r)
		}
		return out, rows.Err()
	case *mysqlDialect:
		rows, err := d.db.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		cols, err := rows.Columns()
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			vals := make([]sql.NullString, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				return nil, err
			}
			r := make([]*string, len(cols))
			for i, x := range vals {
				if x.Valid {
					s := x.String
					r[i] = &s
				}
			}
			out = append(out, r)
		}
		return out, rows.Err()
	}
	return nil, fmt.Errorf("verify: dialect %T", v.t.db)
}

// Close drops the scratch tables and closes the connection.
func (v *Verification) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var first error
	for _, table := range v.order {
		q := "DROP TABLE IF EXISTS "
		switch d := v.t.db.(type) {
		case *postgresDialect:
			q += d.ident(v.targets[table].scratch)
			if _, err := d.conn.Exec(ctx, q); err != nil && first == nil {
				first = err
			}
		case *mysqlDialect:
			q += d.ident(v.targets[table].scratch)
			if _, err := d.db.ExecContext(ctx, q); err != nil && first == nil {
				first = err
			}
		}
	}
	if err := v.t.Stop(); err != nil && first == nil {
		first = err
	}
	return first
}
