package jdbc

import (
	"context"
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
	// apply runs ops in order in one transaction; types are the columns'
	// SQL types per table (from columns).
	apply(ctx context.Context, ops []tableOp, types map[string]map[string]string) error
	// storedName is how the database stores an identifier (PostgreSQL
	// folds unquoted names to lower case unless quote.identifiers).
	storedName(name string) string
	close()
}
