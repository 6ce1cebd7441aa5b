// Package relational is the table model shared by the relational connectors:
// a table id, its columns with their database type, nullability and default,
// and its primary key, as io.debezium.relational.Table.
package relational

import "strings"

// Column is one column of a table, in table order.
type Column struct {
	Name     string
	Position int    // 1-based, as the database numbers it
	TypeName string // database type name, e.g. "int4", "numeric", "varchar"
	TypeOID  uint32 // PostgreSQL type OID (0 for other databases)
	TypeMod  int32  // PostgreSQL atttypmod (-1 = none)
	Optional bool   // nullable
	// Default is the column default converted to the column's Connect value,
	// or nil when there is none or it is not a constant Debezium can evaluate.
	Default any
	// Comment is the column's comment (PostgreSQL: COMMENT ON COLUMN), read
	// only when include.schema.comments is set; "" = none.
	Comment string
}

// Table is a table's structure.
type Table struct {
	Schema     string // database schema (PostgreSQL) or database (MySQL)
	Name       string
	Columns    []Column
	PrimaryKey []string // column names, in key order
}

// ID returns "schema.table", the form include/exclude lists match against.
func (t *Table) ID() string { return t.Schema + "." + t.Name }

// Column returns the column called name, or nil.
func (t *Table) Column(name string) *Column {
	for i := range t.Columns {
		if t.Columns[i].Name == name {
			return &t.Columns[i]
		}
	}
	return nil
}

// IsKey reports whether name is a primary-key column.
func (t *Table) IsKey(name string) bool {
	for _, k := range t.PrimaryKey {
		if k == name {
			return true
		}
	}
	return false
}

// SameColumns reports whether a and b have the same column names and types
// in the same order.
func SameColumns(a, b []Column) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].TypeOID != b[i].TypeOID || a[i].TypeMod != b[i].TypeMod ||
			!strings.EqualFold(a[i].TypeName, b[i].TypeName) {
			return false
		}
	}
	return true
}
