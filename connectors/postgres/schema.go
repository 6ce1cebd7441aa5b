package postgres

import (
	"fmt"

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
	keyIdx   []int     // value field index of each key column
}

// newTableSchema maps every column with tm. Columns of a type Debezium does
// not know are left out of the value (include.unknown.datatypes=false).
func newTableSchema(prefix string, t *relational.Table, tm *typeMapper) *tableSchema {
	if tm == nil {
		tm = &typeMapper{h: defaultHandling}
	}
	ts := &tableSchema{table: t, topic: prefix + "." + t.Schema + "." + t.Name}
	vb := connect.StructSchema().Name(ts.topic + ".Value").Optional()
	fieldOf := make([]int, len(t.Columns))
	for i, c := range t.Columns {
		ct := tm.column(c)
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
	if len(t.PrimaryKey) > 0 {
		kb := connect.StructSchema().Name(ts.topic + ".Key")
		for _, k := range t.PrimaryKey {
			for i, c := range t.Columns {
				if c.Name == k && fieldOf[i] >= 0 {
					ts.keyIdx = append(ts.keyIdx, fieldOf[i])
					kb.Field(c.Name, ts.cols[i].schema)
				}
			}
		}
		ts.key = kb.Build()
	}
	ts.envelope = envelope.Schema(ts.topic, ts.value, sourceSchema)
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
	if len(cells) != len(ts.cols) {
		return nil, fmt.Errorf("postgres: %s: row has %d columns, schema has %d", ts.table.ID(), len(cells), len(ts.cols))
	}
	out := make([]any, ts.fields)
	j := 0
	for i, c := range cells {
		ct := &ts.cols[i]
		if ct.omit {
			continue
		}
		switch {
		case c.unchanged && ct.stringy:
			out[j] = unavailableValue
		case c.unchanged && ct.bytesy:
			out[j] = []byte(unavailableValue)
		case c.null || c.unchanged:
			if !ct.schema.Optional {
				if ct.schema.Default != nil {
					out[j] = ct.schema.Default
				} else {
					out[j] = ct.fallback
				}
			}
		default:
			v, err := ct.fromText(c.text)
			if err != nil {
				return nil, fmt.Errorf("postgres: %s.%s: %w", ts.table.ID(), ts.table.Columns[i].Name, err)
			}
			out[j] = v
		}
		j++
	}
	return out, nil
}

func (ts *tableSchema) row(vals []any) *connect.Struct {
	st := connect.NewStruct(ts.value)
	copy(st.Values, vals)
	return st
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
