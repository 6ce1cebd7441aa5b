package mysql

import (
	"errors"
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/columns"
	"github.com/connectd/connectd/connectors/internal/envelope"
)

// tableSchema turns rows of one table into records: topic, key/value/envelope
// schemas and per-column conversions, as Debezium's TableSchemaBuilder.
type tableSchema struct {
	table    *table
	topic    string
	key      *connect.Schema // nil without primary key
	value    *connect.Schema
	envelope *connect.Schema
	cols     []colType // per table column; kUnsupported ones are left out
	fields   int
	keyIdx   []int // per key field: its index in convert's result
	// keyOnly are the key columns column.exclude.list leaves out of the
	// value: Debezium's key still has them (TableSchemaBuilder builds the
	// key from the table's key columns, unfiltered; mariadiff seed 61).
	// convert appends their values after the value fields.
	keyOnly []keyOnlyCol
}

// keyOnlyCol is a key column that is not a value field.
type keyOnlyCol struct {
	idx int // in the table's columns
	ct  colType
}

func newTableSchema(prefix string, f flavor, t *table, m valueModes, rules *columns.Rules) *tableSchema {
	ts := &tableSchema{table: t, topic: sanitizeTopic(prefix + "." + t.Schema + "." + t.Name)}
	vb := connect.StructSchema().Name(ts.topic + ".Value").Optional()
	fieldOf := make([]int, len(t.cols))
	keySchemas := make([]*connect.Schema, len(t.cols)) // without column mappers, as Debezium's key
	unfiltered := make([]colType, len(t.cols))         // before column.exclude.list, for the key
	for i := range t.cols {
		c := &t.cols[i]
		ct := newColType(c, m)
		if m.tinyBool.applies(t.ID(), c) {
			ct = ct.asTinyIntBool()
		}
		keySchemas[i] = ct.schema
		unfiltered[i] = ct
		if ct.kind != kUnsupported && rules != nil {
			if rules.Excluded(t.ID() + "." + c.Name) {
				ct.kind = kUnsupported
			} else {
				mp := rules.Map(t.ID(), ct.schema, c.source())
				ct.schema, ct.post, ct.mask = mp.Schema, mp.Post, mp.Mask
			}
		}
		ts.cols = append(ts.cols, ct)
		fieldOf[i] = -1
		if ct.kind == kUnsupported {
			continue
		}
		fieldOf[i] = ts.fields
		ts.fields++
		vb.Field(c.Name, ct.schema)
	}
	ts.value = vb.Build()
	keyCols := rules.KeyColumns(t.ID()) // message.key.columns, in the order listed (Debezium's capture)
	if keyCols == nil || !hasAnyColumn(t, keyCols) {
		// none of the listed columns exists (renamed or dropped since):
		// the primary key, as Debezium's key mapper falls back to it
		// (mariadiff seed 121)
		keyCols = t.PrimaryKey
	}
	if len(keyCols) > 0 {
		kb := connect.StructSchema().Name(ts.topic + ".Key")
		for _, k := range keyCols {
			for i, c := range t.cols {
				if c.Name != k {
					continue
				}
				switch {
				case fieldOf[i] >= 0:
					ts.keyIdx = append(ts.keyIdx, fieldOf[i])
				case unfiltered[i].kind != kUnsupported:
					ts.keyIdx = append(ts.keyIdx, ts.fields+len(ts.keyOnly))
					ts.keyOnly = append(ts.keyOnly, keyOnlyCol{idx: i, ct: unfiltered[i]})
				default:
					continue
				}
				kb.Field(c.Name, keySchemas[i])
			}
		}
		if len(ts.keyIdx) > 0 {
			ts.key = kb.Build()
		}
	}
	ts.envelope = envelope.Schema(ts.topic, ts.value, sourceSchemas[f])
	return ts
}

// hasAnyColumn: t has a column named one of names.
func hasAnyColumn(t *table, names []string) bool {
	for _, n := range names {
		for i := range t.cols {
			if t.cols[i].Name == n {
				return true
			}
		}
	}
	return false
}

// convert converts one row (table column order) with conv, applied to
// non-null cells; null cells of NOT NULL columns become the default or the
// type's zero value.
func (ts *tableSchema) convert(n int, get func(i int) (any, bool), conv func(ct *colType, v any) (any, error)) ([]any, error) {
	if n != len(ts.cols) && n != len(ts.cols)+ts.table.hidden {
		return nil, fmt.Errorf("mysql: %s: row has %d columns, the table model %d (DDL not yet tracked?)", ts.table.ID(), n, len(ts.cols))
	}
	out := make([]any, ts.fields+len(ts.keyOnly))
	j := 0
	for i := range ts.cols {
		ct := &ts.cols[i]
		if ct.kind == kUnsupported {
			continue
		}
		if ct.mask != nil {
			out[j] = ct.mask // column.mask.with.N.chars: NULLs too
			j++
			continue
		}
		v, err := ts.cell(ct, i, get, conv)
		if err != nil {
			return nil, err
		}
		out[j] = v
		j++
	}
	for _, k := range ts.keyOnly {
		v, err := ts.cell(&k.ct, k.idx, get, conv)
		if err != nil {
			return nil, err
		}
		out[j] = v
		j++
	}
	return out, nil
}

// cell converts column i of a row with ct; a null in a NOT NULL column is
// the default or the type's zero value.
func (ts *tableSchema) cell(ct *colType, i int, get func(i int) (any, bool), conv func(ct *colType, v any) (any, error)) (any, error) {
	var out any
	v, null := get(i)
	if !null {
		x, err := conv(ct, v)
		switch {
		case errors.Is(err, errNoValue):
			null = true
		case err != nil:
			return nil, fmt.Errorf("mysql: %s.%s: %w", ts.table.ID(), ct.col.Name, err)
		default:
			out = ct.present(x)
			if ct.post != nil {
				out = ct.post(out)
			}
		}
	}
	if null && !ct.schema.Optional {
		if ct.schema.Default != nil {
			out = ct.schema.Default
		} else {
			out = ct.fallback
		}
	}
	return out, nil
}

// row wraps vals (as convert returns them: one per value field) in the
// table's value Struct; the Struct takes vals over.
func (ts *tableSchema) row(vals []any) *connect.Struct {
	if len(vals) == len(ts.value.Fields) {
		return &connect.Struct{Schema: ts.value, Values: vals}
	}
	st := connect.NewStruct(ts.value)
	copy(st.Values, vals)
	return st
}

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

func textConv(ct *colType, v any) (any, error)   { return ct.fromText(v.([]byte)) }
func binlogConv(ct *colType, v any) (any, error) { return ct.fromBinlog(v) }

// sanitizeTopic replaces what Kafka refuses in a topic name as Debezium's
// AbstractTopicNamingStrategy.sanitizedTopicName does: every UTF-16 code
// unit outside [a-zA-Z0-9._-] becomes "_" ("Größe" → "Gr__e", a space →
// "_", a character beyond the BMP → "__"). Schema names derive from the
// result. (The same rule as connectors/postgres.)
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
