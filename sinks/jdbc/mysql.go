package jdbc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/go-sql-driver/mysql"
)

// mysqlDialect writes to MySQL/MariaDB with go-sql-driver/mysql:
// multi-row INSERT … ON DUPLICATE KEY UPDATE c = VALUES(c) for upserts
// (at most batch.size rows and 65535 placeholders per statement),
// UPDATE t JOIN (SELECT … UNION ALL …) v ON keys SET … for
// insert.mode=update, and DELETE … WHERE (k…) IN ((…),…) for deletes.
type mysqlDialect struct {
	cfg *config
	db  *sql.DB
}

// mysqlDSN turns mysql://host:port/db?k=v into the driver's DSN.
func mysqlDSN(cfg *config) (string, error) {
	u, err := url.Parse(cfg.dsn)
	if err != nil {
		return "", err
	}
	mc := mysql.NewConfig()
	mc.Net, mc.Addr, mc.DBName = "tcp", u.Host, strings.TrimPrefix(u.Path, "/")
	if u.User != nil {
		mc.User = u.User.Username()
		mc.Passwd, _ = u.User.Password()
	}
	if cfg.user != "" {
		mc.User = cfg.user
	}
	if cfg.password != "" {
		mc.Passwd = cfg.password
	}
	if q := u.Query(); q.Get("user") != "" && mc.User == "" {
		mc.User = q.Get("user")
	}
	mc.InterpolateParams = true // one round trip per statement
	mc.Loc = time.UTC
	mc.Params = map[string]string{"time_zone": "'+00:00'"}
	return mc.FormatDSN(), nil
}

func openMySQL(ctx context.Context, cfg *config) (*mysqlDialect, error) {
	dsn, err := mysqlDSN(cfg)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, retriableMySQL(err)
	}
	return &mysqlDialect{cfg: cfg, db: db}, nil
}

func (d *mysqlDialect) close()                     { d.db.Close() }
func (d *mysqlDialect) storedName(n string) string { return n }
func (d *mysqlDialect) ident(n string) string      { return MySQLIdent(n) }

func (d *mysqlDialect) columns(ctx context.Context, table string) (map[string]string, bool, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?`, table)
	if err != nil {
		return nil, false, retriableMySQL(err)
	}
	defer rows.Close()
	out, err := scanColumns(rows)
	if err != nil {
		return nil, false, err
	}
	return out, len(out) > 0, retriableMySQL(rows.Err())
}

// mysqlType maps a Connect schema to a MySQL column type as Debezium's
// JDBC sink MySQL dialect does; key columns get bounded types
// (varchar(255), varbinary(255)) because MySQL cannot index TEXT/BLOB
// without a prefix length.
func mysqlType(s *connect.Schema, inKey bool) string {
	switch s.Name {
	case dbzDate, connect.DateName:
		return "date"
	case dbzTime, connect.TimeName:
		return "time(3)"
	case dbzMicroTime, dbzNanoTime, dbzZonedTime:
		return "time(6)"
	case dbzTimestamp, connect.TimestampName:
		return "datetime(3)"
	case dbzMicroTimestamp, dbzNanoTimestamp, dbzZonedTimestamp:
		return "datetime(6)"
	case dbzMicroDuration:
		return "bigint"
	case connect.DecimalName:
		sc, _ := s.Param("scale")
		p, ok := s.Param("connect.decimal.precision")
		if !ok {
			p = "65"
		}
		return fmt.Sprintf("decimal(%s,%s)", p, sc)
	case dbzVariableScaleDecimal:
		return "double"
	case dbzJSON:
		return "json"
	case dbzUUID:
		return "varchar(36)"
	}
	switch s.Type {
	case connect.Int8:
		return "tinyint"
	case connect.Int16:
		return "smallint"
	case connect.Int32:
		return "int"
	case connect.Int64:
		return "bigint"
	case connect.Float32:
		return "float"
	case connect.Float64:
		return "double"
	case connect.Boolean:
		return "boolean"
	case connect.Bytes:
		if inKey {
			return "varbinary(255)"
		}
		return "longblob"
	}
	if inKey {
		return "varchar(255)"
	}
	return "longtext"
}

// columnDef is f's column definition: key columns NOT NULL with bounded
// types, others NOT NULL or NULL as the schema's optionality says.
func (d *mysqlDialect) columnDef(f field, inKey bool) string {
	def := d.ident(f.name) + " " + mysqlType(f.schema, inKey)
	if inKey || !f.schema.Optional {
		return def + " NOT NULL"
	}
	return def + " NULL"
}

func (d *mysqlDialect) createTable(ctx context.Context, table string, key, cols []field) error {
	_, err := d.db.ExecContext(ctx, createTableSQL(table, key, cols, d.ident, d.columnDef))
	return retriableMySQL(err)
}

func (d *mysqlDialect) addColumns(ctx context.Context, table string, cols []field) error {
	for _, c := range cols {
		if _, err := d.db.ExecContext(ctx, fmt.Sprintf("ALTER TABLE %s ADD COLUMN IF NOT EXISTS %s %s NULL", d.ident(table), d.ident(c.name), mysqlType(c.schema, false))); err != nil {
			return retriableMySQL(err)
		}
	}
	return nil
}

// mysqlValue is the driver argument for v: bytes stay bytes, booleans,
// integers and floats keep their Go type, ZonedTimestamp is converted to
// use.time.zone (DATETIME has no zone), anything else is textValue's text.
func (d *mysqlDialect) mysqlValue(s *connect.Schema, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	if s.Name == "" || s.Name == dbzEnum || s.Name == dbzBits {
		switch x := v.(type) {
		case []byte, bool, float32, float64, string:
			return x, nil
		}
		if n, ok := asInt(v); ok {
			return n, nil
		}
	}
	switch s.Name {
	case dbzZonedTimestamp:
		str, _ := v.(string)
		t, err := time.Parse(time.RFC3339Nano, str)
		if err != nil {
			return nil, fmt.Errorf("ZonedTimestamp %q: %w", str, err)
		}
		return t.In(d.cfg.zone).Format("2006-01-02 15:04:05.999999"), nil
	case dbzMicroDuration:
		n, _ := asInt(v)
		return n, nil
	}
	s2, ok, err := textValue(s, v)
	if err != nil || !ok {
		return nil, err
	}
	return s2, nil
}

// prepare keeps the ops: MySQL statements are built row by row in exec.
func (d *mysqlDialect) prepare(ops []tableOp, _ map[string]map[string]string) (preparedTx, error) {
	return ops, nil
}

func (d *mysqlDialect) merge(txs []preparedTx) preparedTx {
	if len(txs) == 1 {
		return txs[0]
	}
	var out []tableOp
	for _, tx := range txs {
		out = append(out, tx.([]tableOp)...)
	}
	return out
}

func (d *mysqlDialect) exec(ctx context.Context, p preparedTx) error {
	ops := p.([]tableOp)
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return retriableMySQL(err)
	}
	defer tx.Rollback()
	for _, op := range ops {
		if err := d.applyOp(ctx, tx, op); err != nil {
			return retriableMySQL(fmt.Errorf("table %s: %w", op.table, err))
		}
	}
	return retriableMySQL(tx.Commit())
}

func (d *mysqlDialect) applyOp(ctx context.Context, tx *sql.Tx, op tableOp) error {
	t := d.ident(op.table)
	if op.kind == writeTruncate {
		// TRUNCATE would commit the transaction implicitly in MySQL.
		_, err := tx.ExecContext(ctx, "DELETE FROM "+t)
		return err
	}
	fields := append(append([]field(nil), op.key...), op.cols...)
	if op.kind == writeDelete {
		fields = op.key
	}
	names := make([]string, len(fields))
	rawNames := make([]string, len(fields))
	for i, f := range fields {
		names[i], rawNames[i] = d.ident(f.name), f.name
	}
	rowArgs := func(c *change) ([]any, error) {
		vals := append(append([]field(nil), c.key...), c.cols...)
		out := make([]any, len(fields))
		for i := range fields {
			v, err := d.mysqlValue(vals[i].schema, vals[i].value)
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", fields[i].name, err)
			}
			out[i] = v
		}
		return out, nil
	}
	nk := len(op.key)
	if op.kind == writeUpdate {
		var set, where []string
		for i := nk; i < len(fields); i++ {
			set = append(set, names[i]+" = ?")
		}
		for i := 0; i < nk; i++ {
			where = append(where, names[i]+" = ?")
		}
		if len(set) == 0 {
			return nil
		}
		// One multi-table UPDATE per chunk, joined with a derived table of
		// the rows (SELECT ? AS k, ? AS c UNION ALL SELECT ?, ? …): rows
		// whose key does not exist change nothing, as a plain UPDATE. After
		// collapse a key occurs once per batch, so the join matches each
		// target row at most once (MySQL would apply one of several
		// matches, unspecified which).
		first := make([]string, len(fields))
		for i := range fields {
			first[i] = "? AS " + names[i]
		}
		rest := "SELECT " + strings.TrimSuffix(strings.Repeat("?, ", len(fields)), ", ")
		for i := range set {
			set[i] = "t." + names[nk+i] + " = v." + names[nk+i]
		}
		for i := range where {
			where[i] = "t." + names[i] + " = v." + names[i]
		}
		per := 65535 / max(len(fields), 1)
		for start := 0; start < len(op.rows); start += per {
			rows := op.rows[start:min(start+per, len(op.rows))]
			sel := make([]string, len(rows))
			var args []any
			for i, c := range rows {
				a, err := rowArgs(c)
				if err != nil {
					return err
				}
				args = append(args, a...)
				sel[i] = rest
			}
			sel[0] = "SELECT " + strings.Join(first, ", ")
			q := fmt.Sprintf("UPDATE %s AS t JOIN (%s) AS v ON %s SET %s", t, strings.Join(sel, " UNION ALL "),
				strings.Join(where, " AND "), strings.Join(set, ", "))
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return err
			}
		}
		return nil
	}
	per := 65535 / max(len(fields), 1)
	for start := 0; start < len(op.rows); start += per {
		rows := op.rows[start:min(start+per, len(op.rows))]
		var args []any
		for _, c := range rows {
			a, err := rowArgs(c)
			if err != nil {
				return err
			}
			args = append(args, a...)
		}
		var q string
		switch op.kind {
		case writeDelete:
			q = MySQLDeleteSQL(t, rawNames, len(rows))
		case writeUpsert:
			q = MySQLUpsertSQL(t, rawNames, nk, len(rows))
		default:
			q = MySQLUpsertSQL(t, rawNames, 0, len(rows)) // plain INSERT
		}
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return err
		}
	}
	return nil
}

// retriableMySQL wraps network errors, a bad connection and the server
// errors a restart, a dropped connection or contention give (retriableBy):
// deadlock (1213), lock wait timeout (1205), server gone (2006, 2013),
// too many connections (1040), shutdown in progress (1053), aborted
// connection (1152, 1184), a network read or write error on the server's
// side (1158-1161), connection killed (1927) and the client interaction
// timeout (4031). A server shutting down or restarting answers with 1053
// or 1927 before its connections close.
func retriableMySQL(err error) error {
	return retriableBy(err, func(err error) (retry, known bool) {
		var me *mysql.MySQLError
		if errors.As(err, &me) {
			switch me.Number {
			case 1040, 1053, 1152, 1158, 1159, 1160, 1161, 1184, 1205, 1213, 1927, 2006, 2013, 4031:
				return true, true
			}
			return false, true
		}
		if errors.Is(err, mysql.ErrInvalidConn) || errors.Is(err, sql.ErrConnDone) || strings.Contains(err.Error(), "bad connection") {
			return true, true
		}
		return false, false
	})
}
