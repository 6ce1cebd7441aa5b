package postgres

import (
	"github.com/connectd/connectd/connectors/internal/columns"
	"github.com/connectd/connectd/connectors/internal/relational"
)

// Column-level configuration (column.include.list / column.exclude.list,
// message.key.columns, column.mask.*, column.truncate.*,
// column.propagate.source.type, datatype.propagate.source.type) is shared
// with the MySQL connector: connectors/internal/columns. What is PostgreSQL's
// own is the source length/scale of a column.

type columnRules = columns.Rules

var (
	parseColumnRules = columns.Parse
	compileList      = columns.CompileList
)

// Column configuration keys with a fixed name.
const (
	KeyColumnIncludeList       = columns.KeyColumnIncludeList
	KeyColumnExcludeList       = columns.KeyColumnExcludeList
	KeyMessageKeyColumns       = columns.KeyMessageKeyColumns
	KeyColumnPropagateType     = columns.KeyColumnPropagateType
	KeySchemaIncludeList       = "schema.include.list"
	KeySchemaExcludeList       = "schema.exclude.list"
	KeyTableExcludeList        = "table.exclude.list"
	KeyMessagePrefixIncludeLst = "message.prefix.include.list"
	KeyMessagePrefixExcludeLst = "message.prefix.exclude.list"
)

// applyColumnRules sets a column's value mapper, mask and schema parameters
// from r (columns.Rules.Map), with the source length/scale pgjdbc reports.
func applyColumnRules(r *columnRules, tableID string, c relational.Column, ct *colType) {
	src := columns.Source{Name: c.Name, TypeName: c.TypeName, Length: -1, Comment: c.Comment, NotChar: notCharType(c.TypeOID)}
	if l, sc, ok := sourceLengthScale(c); ok {
		src.Length, src.Scale = l, &sc
	}
	m := r.Map(tableID, ct.schema, src)
	ct.schema = m.Schema
	if m.Post != nil {
		ct.post = m.Post
	}
	if m.Mask != nil {
		ct.mask = m.Mask
	}
}

// notCharType: a built-in type whose pgjdbc type is not a character type
// (text, varchar, bpchar and name are VARCHAR/CHAR, "char" CHAR).
// Enums and domains (OIDs past the built-in ones) count as character types,
// as before.
func notCharType(oid uint32) bool {
	switch oid {
	case oidText, oidVarchar, oidBPChar, oidName, oidChar:
		return false
	}
	return oid != 0 && oid < 16384
}

// sourceLengthScale is a column's length and scale as Debezium reads them
// (pgjdbc metadata / typmod) for varchar(n), char(n) and numeric(p,s).
func sourceLengthScale(c relational.Column) (length, scale int, ok bool) {
	switch c.TypeOID {
	case oidVarchar, oidBPChar:
		if c.TypeMod >= 4 {
			return int(c.TypeMod - 4), 0, true
		}
	case oidNumeric:
		if p, s, ok := numericPrecisionScale(c.TypeMod); ok {
			return p, s, true
		}
	}
	return 0, 0, false
}
