package jdbc

import (
	"context"
	"errors"
	"net"

	"github.com/connectd/connectd/connect"
)

// writeKind is the statement an op runs.
type writeKind int

const (
	writeUpsert writeKind = iota // insert.mode=upsert
	writeInsert                  // insert.mode=insert
	writeUpdate                  // insert.mode=update
	writeDelete
	writeTruncate
)

// tableOp is one statement (or a few, when chunked by batch.size) over
// rows of one table that share the same written columns.
type tableOp struct {
	table string
	kind  writeKind
	key   []field // names and schemas of the key columns (values unused)
	cols  []field // names and schemas of the written non-key columns
	rows  []*change
}

// dialect is what the task needs from a database. Errors that a retry
// may cure (lost connection) are wrapped in *connect.RetriableError.
type dialect interface {
	// columns returns the table's columns (name as stored → SQL type) and
	// whether the table exists.
	columns(ctx context.Context, table string) (map[string]string, bool, error)
	// createTable creates table with key as primary key (none when empty).
	createTable(ctx context.Context, table string, key, cols []field) error
	// addColumns adds nullable columns (schema.evolution=basic).
	addColumns(ctx context.Context, table string, cols []field) error
	// prepare turns ops into one transaction's statements without
	// touching the connection (it runs while the previous transaction is
	// being written); types are the columns' SQL types per table (from
	// columns). Errors: a value the column cannot take.
	prepare(ops []tableOp, types map[string]map[string]string) (preparedTx, error)
	// merge joins prepared transactions into one that runs their
	// statements in order (the write pipeline's group commit).
	merge(txs []preparedTx) preparedTx
	// exec runs a prepared transaction: all its statements in order, then
	// COMMIT. A prepared transaction stays valid after a reconnect.
	exec(ctx context.Context, tx preparedTx) error
	// storedName is how the database stores an identifier (PostgreSQL
	// folds unquoted names to lower case unless quote.identifiers).
	storedName(name string) string
	close()
}

// preparedTx is one transaction as a dialect prepared it (prepare): SQL
// text and arguments for PostgreSQL, the table ops for MySQL.
type preparedTx any

// createTableSQL is CREATE TABLE IF NOT EXISTS table with key's columns
// first and as the PRIMARY KEY (none when key is empty), then cols; ident
// quotes a name and columnDef is one column's definition (name, type,
// nullability) in the dialect's SQL.
func createTableSQL(table string, key, cols []field, ident func(string) string, columnDef func(f field, inKey bool) string) string {
	var defs, pk []string
	for _, k := range key {
		defs = append(defs, columnDef(k, true))
		pk = append(pk, ident(k.name))
	}
	for _, c := range cols {
		defs = append(defs, columnDef(c, false))
	}
	return CreateTableSQL(ident(table), defs, pk)
}

// columnRows is the part of *sql.Rows and pgx.Rows that scanColumns reads.
type columnRows interface {
	Next() bool
	Scan(dest ...any) error
}

// scanColumns reads rows of (column name, SQL type) into a map; the
// caller checks the rows' Err.
func scanColumns(rows columnRows) (map[string]string, error) {
	out := map[string]string{}
	for rows.Next() {
		var n, t string
		if err := rows.Scan(&n, &t); err != nil {
			return nil, err
		}
		out[n] = t
	}
	return out, nil
}

// retriableBy wraps err in *connect.RetriableError when a new connection
// or a later attempt may cure it. byDatabase classifies the database's own
// errors (SQL state or error number, the driver's lost-connection
// errors): known says it decided, retry what. Errors it does not know are
// retriable when they are network errors (net.Error). nil stays nil and
// an error already retriable is returned as it is.
func retriableBy(err error, byDatabase func(error) (retry, known bool)) error {
	if err == nil {
		return nil
	}
	var re *connect.RetriableError
	if errors.As(err, &re) {
		return err
	}
	retry, known := byDatabase(err)
	if !known {
		var ne net.Error
		retry = errors.As(err, &ne)
	}
	if retry {
		return &connect.RetriableError{Err: err}
	}
	return err
}
