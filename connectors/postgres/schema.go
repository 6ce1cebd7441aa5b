package postgres

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/envelope"
	"github.com/connectd/connectd/connectors/internal/relational"
)

// tableSchema is everything needed to turn a row of one table into a record:
// topic, key/value/envelope schemas and per-column conversions, as Debezium's
// TableSchemaBuilder builds them.
type tableSchema struct {
	table    *relational.Table
	topic    string
	key      *connect.Schema // nil for a table without primary key
	value    *connect.Schema // "<topic>.Value", optional
	envelope *connect.Schema
	cols     []colType // per table column; omitted ones have omit set
	fields   int       // number of value fields (columns not omitted)
	keyIdx   []int     // per key column: its index in convert's result
	// keyOnly are the key columns column.exclude.list leaves out of the
	// value: Debezium's key still has them (TableSchemaBuilder builds the
	// key from the table's key columns, unfiltered). convert appends
	// their values after the value fields.
	keyOnly []keyOnlyCol
}

// keyOnlyCol is a key column that is not a value field.
type keyOnlyCol struct {
	idx int // in the table's columns
	ct  colType
}

// newTableSchema maps every column with tm. Columns of a type Debezium does
// not know are left out of the value (include.unknown.datatypes=false).
func newTableSchema(prefix string, t *relational.Table, tm *typeMapper) *tableSchema {
	if tm == nil {
		tm = &typeMapper{h: defaultHandling}
	}
	ts := &tableSchema{table: t, topic: sanitizeTopic(prefix + "." + t.Schema + "." + t.Name)}
	// Schema names are the topic's, adjusted per schema.name.adjustment.mode.
	name := adjustSchemaName(tm.h.schemaNames, ts.topic)
	vb := connect.StructSchema().Name(name + ".Value").Optional()
	fieldOf := make([]int, len(t.Columns))
	keySchemas := make([]*connect.Schema, len(t.Columns)) // without column mappers, as Debezium's key
	excluded := make([]*colType, len(t.Columns))          // before column.exclude.list, for the key
	for i, c := range t.Columns {
		ct := tm.column(c)
		keySchemas[i] = withDoc(ct.schema, c.Comment)
		if tm.rules != nil && !ct.omit {
			id := t.Schema + "." + t.Name + "." + c.Name
			if tm.rules.Excluded(id) {
				unf := ct
				unf.schema = keySchemas[i]
				excluded[i] = &unf
				ct.omit = true
			} else {
				applyColumnRules(tm.rules, t.ID(), c, &ct)
			}
		}
		ct.schema = withDoc(ct.schema, c.Comment)
		ts.cols = append(ts.cols, ct)
		fieldOf[i] = -1
		if ct.omit {
			continue
		}
		fieldOf[i] = ts.fields
		ts.fields++
		vb.Field(c.Name, ct.schema)
	}
	ts.value = vb.Build()
	addKey := func(kb *connect.SchemaBuilder, i int) {
		switch {
		case fieldOf[i] >= 0:
			ts.keyIdx = append(ts.keyIdx, fieldOf[i])
		case excluded[i] != nil:
			ts.keyIdx = append(ts.keyIdx, ts.fields+len(ts.keyOnly))
			ts.keyOnly = append(ts.keyOnly, keyOnlyCol{idx: i, ct: *excluded[i]})
		default:
			return
		}
		kb.Field(t.Columns[i].Name, keySchemas[i])
	}
	cols := tm.rules.KeyColumns(t.ID())
	listed := false
	for _, c := range t.Columns {
		listed = listed || slices.Contains(cols, c.Name)
	}
	if listed {
		// message.key.columns: the listed columns, in table order.
		kb := connect.StructSchema().Name(name + ".Key")
		for i, c := range t.Columns {
			if slices.Contains(cols, c.Name) {
				addKey(kb, i)
			}
		}
		// a listed column the value leaves out (a type Debezium has no
		// converter for) is left out of the key too, as Debezium's
		// TableSchemaBuilder does: the key can be an empty struct
		ts.key = kb.Build()
	} else if len(t.PrimaryKey) > 0 {
		// no message.key.columns entry, or none of its columns in the
		// table (never there, renamed, dropped, or a generated column
		// pgoutput does not send): the primary key, as Debezium's
		// Key.CustomKeyMapper falls back
		kb := connect.StructSchema().Name(name + ".Key")
		for _, k := range t.PrimaryKey {
			for i, c := range t.Columns {
				if c.Name == k {
					addKey(kb, i)
				}
			}
		}
		ts.key = kb.Build()
	}
	ts.envelope = envelope.Schema(name, ts.value, sourceSchema)
	return ts
}

// cell is one column value as PostgreSQL text: null, unchanged TOAST
// (pgoutput 'u'), or text.
type cell struct {
	text      string
	null      bool
	unchanged bool
}

// convert converts text cells (in table column order) to Connect values.
// A NULL in a NOT NULL column (delete events carry only the key columns)
// becomes the column default, else the type's zero value, as Debezium's
// converters fall back.
func (ts *tableSchema) convert(cells []cell) ([]any, error) {
	out := make([]any, ts.fields+len(ts.keyOnly))
	if err := ts.convertInto(cells, out); err != nil {
		return nil, err
	}
	return out, nil
}

// convertRow is convert for a row that becomes the value struct of an
// event (rowOwning), allocated with its values in one object.
func (ts *tableSchema) convertRow(cells []cell) (*connect.Struct, []any, error) {
	if ts.fields != len(ts.value.Fields) || len(ts.keyOnly) > 0 {
		vals, err := ts.convert(cells)
		if err != nil {
			return nil, nil, err
		}
		return ts.rowOwning(vals), vals, nil
	}
	st := connect.NewStruct(ts.value)
	if err := ts.convertInto(cells, st.Values); err != nil {
		return nil, nil, err
	}
	return st, st.Values, nil
}

// convertInto is convert into out (ts.fields values, then the keyOnly
// columns' when out has room for them).
func (ts *tableSchema) convertInto(cells []cell, out []any) error {
	if len(cells) != len(ts.cols) {
		return fmt.Errorf("postgres: %s: row has %d columns, schema has %d", ts.table.ID(), len(cells), len(ts.cols))
	}
	j := 0
	for i, c := range cells {
		ct := &ts.cols[i]
		if ct.omit {
			continue
		}
		if ct.mask != nil {
			out[j] = ct.mask
			j++
			continue
		}
		v, err := ts.cellValue(ct, i, c)
		if err != nil {
			return err
		}
		out[j] = v
		j++
	}
	for _, k := range ts.keyOnly {
		if j >= len(out) {
			break
		}
		v, err := ts.cellValue(&k.ct, k.idx, cells[k.idx])
		if err != nil {
			return err
		}
		out[j] = v
		j++
	}
	return nil
}

// cellValue converts cell c of column i with ct. A NULL (or unchanged
// TOAST without a placeholder) in a NOT NULL column is the column default,
// else the type's zero value.
func (ts *tableSchema) cellValue(ct *colType, i int, c cell) (any, error) {
	switch {
	case c.unchanged && ct.unavailable != nil:
		// the placeholder goes through the column's mappers too
		// (column.truncate.to.4.chars: "__de"), as in Debezium
		if ct.post != nil {
			return ct.post(ct.unavailable), nil
		}
		return ct.unavailable, nil
	case c.null || c.unchanged:
		if ct.schema.Optional {
			return nil, nil
		}
		v := ct.schema.Default
		if v == nil {
			v = ct.fallback
		}
		if ct.post != nil && v != nil {
			// Debezium's column mapper converts the converter's result,
			// the default or fallback included (column.truncate.to.6.chars
			// cuts a delete's default placeholder; difftest seed 115)
			v = ct.post(v)
		}
		return v, nil
	}
	v, err := ct.fromText(c.text)
	if err != nil {
		return nil, fmt.Errorf("postgres: %s.%s: %w", ts.table.ID(), ts.table.Columns[i].Name, err)
	}
	if ct.post != nil {
		v = ct.post(v)
	}
	return v, nil
}

func (ts *tableSchema) row(vals []any) *connect.Struct {
	st := connect.NewStruct(ts.value)
	copy(st.Values, vals)
	return st
}

// rowOwning is row for a vals slice that nothing else keeps (convert's
// result): the struct takes it instead of a copy.
func (ts *tableSchema) rowOwning(vals []any) *connect.Struct {
	if len(vals) != len(ts.value.Fields) {
		return ts.row(vals)
	}
	return &connect.Struct{Schema: ts.value, Values: vals}
}

// rowOwningOrNil is rowOwning, with nil for nil vals (no old tuple).
func (ts *tableSchema) rowOwningOrNil(vals []any) *connect.Struct {
	if vals == nil {
		return nil
	}
	return ts.rowOwning(vals)
}

// keyOf returns the key struct, or nil for a table without primary key.
func (ts *tableSchema) keyOf(vals []any) *connect.Struct {
	if ts.key == nil {
		return nil
	}
	st := connect.NewStruct(ts.key)
	for j, i := range ts.keyIdx {
		st.Values[j] = vals[i]
	}
	return st
}

// envelopeOpField and envelopeTransactionField are the indexes of "op" and
// "transaction" in every envelope (envelope.Schema).
const (
	envelopeTransactionField = 3
	envelopeOpField          = 4
)

// sameKey reports whether two rows (value field order) have the same key
// column values, as Debezium compares the old and new key Structs.
func (ts *tableSchema) sameKey(a, b []any) bool {
	for _, i := range ts.keyIdx {
		if !reflect.DeepEqual(a[i], b[i]) {
			return false
		}
	}
	return true
}

// adjustSchemaName makes name a valid Avro full name per
// schema.name.adjustment.mode, as Debezium's SchemaNameAdjuster.validFullname,
// which walks UTF-16 code units (Java chars). avro (ReplacementFunction's
// defaults): the first unit must be a letter or '_', the others letters,
// digits, '_' or '.'; any other unit becomes '_'. avro_unicode
// (UnicodeReplacementFunction): '_' is invalid too, and an invalid unit
// becomes "_u" + its hex code, left-padded with "00" only when it has at
// most two digits (é → _u00e9, ā → _u101). none (or "") keeps name.
func adjustSchemaName(mode, name string) string {
	if mode != "avro" && mode != "avro_unicode" {
		return name
	}
	unicode := mode == "avro_unicode"
	var b strings.Builder
	for i, u := range utf16.Encode([]rune(name)) {
		letter := u >= 'A' && u <= 'Z' || u >= 'a' && u <= 'z' || u == '_' && !unicode
		if letter || i > 0 && (u == '.' || u >= '0' && u <= '9') {
			b.WriteRune(rune(u))
			continue
		}
		if !unicode {
			b.WriteByte('_')
			continue
		}
		hex := strconv.FormatInt(int64(u), 16)
		if len(hex) <= 2 {
			hex = "00" + hex
		}
		b.WriteString("_u" + hex)
	}
	return b.String()
}

// withDoc returns s with doc as its Doc (a copy: a type's schema may be
// shared), or s itself when doc is empty: include.schema.comments puts a
// column's comment into the doc of its field schema in the key and the
// value, after the column mappers, as Debezium's TableSchemaBuilder.addField.
func withDoc(s *connect.Schema, doc string) *connect.Schema {
	if doc == "" || s == nil {
		return s
	}
	c := *s
	c.Doc = doc
	return &c
}

// sanitizeTopic replaces what Kafka refuses in a topic name as Debezium's
// AbstractTopicNamingStrategy.sanitizedTopicName does: every UTF-16 code unit
// outside [a-zA-Z0-9._-] becomes "_" ("Größe" → "Gr__e", a space → "_", a
// character beyond the BMP → "__"). Schema names derive from the result.
func sanitizeTopic(name string) string {
	ok := true
	for i := 0; i < len(name); i++ {
		if !topicChar(name[i]) {
			ok = false
			break
		}
	}
	if ok {
		return name
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r < 0x80 && topicChar(byte(r)):
			b.WriteRune(r)
		case r > 0xFFFF:
			b.WriteString("__")
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

func topicChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}
