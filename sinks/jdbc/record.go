package jdbc

import (
	"bytes"
	"crypto/md5"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/connectd/connectd/connect"
)

type opKind int

const (
	opUpsert   opKind = iota // c, r, u and flattened rows (insert.mode decides the statement)
	opDelete                 // op=d, tombstones
	opTruncate               // op=t
)

// field is one column of a change: its name, Connect schema and value.
type field struct {
	name   string
	schema *connect.Schema
	value  any
	// unavailable: the value is Debezium's unavailable value placeholder;
	// the column is left out of the write.
	unavailable bool
}

// change is a SinkRecord resolved against the config, as Debezium's
// JdbcSinkRecord: the table, the operation, the primary key fields and
// the other columns.
type change struct {
	table string
	op    opKind
	key   []field
	cols  []field
	// topic and row (the value's row schema) let plan reuse the column
	// set key of rows with the same schema.
	topic string
	row   *connect.Schema
}

// keyString identifies the change's row within its table.
func (c *change) keyString() string {
	if len(c.key) == 1 { // the common case: one key column
		switch v := c.key[0].value.(type) {
		case string:
			return v
		case int32:
			return strconv.FormatInt(int64(v), 10)
		case int64:
			return strconv.FormatInt(v, 10)
		}
	}
	var b strings.Builder
	for _, k := range c.key {
		fmt.Fprintf(&b, "%v\x00", k.value)
	}
	return b.String()
}

// describe resolves r; it returns nil for a record the sink ignores (a
// tombstone or delete with delete.enabled=false, op=t with
// truncate.enabled=false, Debezium's transaction and heartbeat records).
//
// topicTables remembers the table each topic's last envelope resolved
// to: a tombstone has no source block, so ${source.*} formats resolve it
// to its topic's table.
func describe(cfg *config, r *connect.SinkRecord, topicTables map[string]string) (*change, error) {
	c := &change{op: opUpsert}
	var row *connect.Struct
	var source *connect.Struct
	switch v := r.Value.(type) {
	case nil:
		if !cfg.deleteEnabled {
			return nil, nil
		}
		c.op = opDelete
	case *connect.Struct:
		if isEnvelope(r.ValueSchema) {
			source, _ = v.Get("source").(*connect.Struct)
			op, _ := v.Get("op").(string)
			switch op {
			case "c", "r", "u":
				row, _ = v.Get("after").(*connect.Struct)
				if row == nil {
					return nil, fmt.Errorf("change event with op=%s has no after value (topic %s, partition %d, offset %d)", op, r.Topic, r.Partition, r.Offset)
				}
			case "d":
				if !cfg.deleteEnabled {
					return nil, nil
				}
				c.op = opDelete
			case "t":
				if !cfg.truncateEnabled {
					return nil, nil
				}
				c.op = opTruncate
			default: // "m" (logical decoding messages) and the like
				return nil, nil
			}
		} else {
			row = v
		}
	default:
		return nil, fmt.Errorf("the JDBC sink needs a struct value with a schema, got %T (topic %s, partition %d, offset %d); use a converter with schemas", r.Value, r.Topic, r.Partition, r.Offset)
	}
	var err error
	if !cfg.nameBySource {
		// collection.name.format without ${source.*}: the topic decides.
		var ok bool
		if c.table, ok = topicTables[r.Topic]; !ok {
			c.table, err = tableName(cfg, r.Topic, nil)
		}
	} else {
		c.table, err = tableName(cfg, r.Topic, source)
	}
	if err != nil {
		known, ok := topicTables[r.Topic]
		if source != nil || !ok {
			return nil, err
		}
		c.table = known
	}
	if topicTables != nil && topicTables[r.Topic] != c.table {
		topicTables[r.Topic] = c.table
	}
	if c.op == opTruncate {
		return c, nil
	}
	if err := c.resolveKey(cfg, r, row); err != nil {
		return nil, err
	}
	if c.op == opDelete {
		if len(c.key) == 0 {
			return nil, fmt.Errorf("cannot delete without a record key (topic %s, partition %d, offset %d)", r.Topic, r.Partition, r.Offset)
		}
		return c, nil
	}
	c.topic, c.row = r.Topic, row.Schema
	c.cols = make([]field, 0, len(row.Schema.Fields))
	for i, f := range row.Schema.Fields {
		if c.isKeyColumn(f.Name) || !cfg.writesField(r.Topic, f.Name) {
			continue
		}
		c.cols = append(c.cols, field{name: f.Name, schema: f.Schema, value: row.Values[i], unavailable: isUnavailable(row.Values[i])})
	}
	return c, nil
}

func (c *change) isKeyColumn(name string) bool {
	for _, k := range c.key {
		if k.name == name {
			return true
		}
	}
	return false
}

// isEnvelope recognises a Debezium change event value: a struct named
// <topic>.Envelope, or one with op, source and after fields.
func isEnvelope(s *connect.Schema) bool {
	if s == nil || s.Type != connect.StructT {
		return false
	}
	if strings.HasSuffix(s.Name, ".Envelope") {
		return true
	}
	return s.Field("op") != nil && s.Field("source") != nil && s.Field("after") != nil
}

// isUnavailable says whether v is Debezium's unavailable value
// placeholder (strings; bytes holding the placeholder's UTF-8).
func isUnavailable(v any) bool {
	switch x := v.(type) {
	case string:
		return x == unavailableValue
	case []byte:
		return bytes.Equal(x, []byte(unavailableValue))
	case []any:
		// Debezium's placeholders of arrays (UnchangedToastedPlaceholder):
		// [placeholder] (text, json, bytea elements), [the name-based UUID
		// of the placeholder's bytes] (uuid[]), and the placeholder's bytes
		// as numbers (integer[], bigint[], date[])
		if len(x) == 1 && (isUnavailable(x[0]) || x[0] == unavailableUUID) {
			return true
		}
		if len(x) != len(unavailableValue) {
			return false
		}
		for i, e := range x {
			if n, ok := asInt(e); !ok || n != int64(unavailableValue[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// unavailableUUID is java.util.UUID.nameUUIDFromBytes of the placeholder,
// the element of Debezium's uuid[] placeholder.
var unavailableUUID = func() string {
	h := md5.Sum([]byte(unavailableValue))
	h[6] = h[6]&0x0f | 0x30 // version 3
	h[8] = h[8]&0x3f | 0x80 // IETF variant
	return uuid.UUID(h).String()
}()

func (c *change) resolveKey(cfg *config, r *connect.SinkRecord, row *connect.Struct) error {
	switch cfg.pkMode {
	case PKModeNone:
		return nil
	case PKModeKafka:
		c.key = []field{
			{name: kafkaTopicColumn, schema: connect.Prim(connect.String, false), value: r.Topic},
			{name: kafkaPartitionColumn, schema: connect.Prim(connect.Int32, false), value: r.Partition},
			{name: kafkaOffsetColumn, schema: connect.Prim(connect.Int64, false), value: r.Offset},
		}
		return nil
	case PKModeRecordKey:
		switch k := r.Key.(type) {
		case nil:
			return fmt.Errorf("primary.key.mode=record_key but the record has no key (topic %s, partition %d, offset %d)", r.Topic, r.Partition, r.Offset)
		case *connect.Struct:
			want := cfg.pkFields
			if len(want) == 0 {
				for _, f := range k.Schema.Fields {
					want = append(want, f.Name)
				}
			}
			for _, n := range want {
				f := k.Schema.Field(n)
				if f == nil {
					return fmt.Errorf("primary key field %s is not in the record key (topic %s)", n, r.Topic)
				}
				c.key = append(c.key, field{name: n, schema: f.Schema, value: k.Values[f.Index]})
			}
		default:
			if len(cfg.pkFields) != 1 || r.KeySchema == nil {
				return fmt.Errorf("a primitive record key needs exactly one primary.key.fields name and a key schema (topic %s)", r.Topic)
			}
			c.key = []field{{name: cfg.pkFields[0], schema: r.KeySchema, value: k}}
		}
	case PKModeRecordValue:
		if row == nil {
			return nil // a delete: record_value cannot delete (delete.enabled needs record_key)
		}
		for _, n := range cfg.pkFields {
			f := row.Schema.Field(n)
			if f == nil {
				return fmt.Errorf("primary key field %s is not in the record value (topic %s)", n, r.Topic)
			}
			c.key = append(c.key, field{name: n, schema: f.Schema, value: row.Values[f.Index]})
		}
	}
	return nil
}

// tableName applies collection.name.format, then Debezium's
// DefaultCollectionNamingStrategy: dots become underscores.
func tableName(cfg *config, topic string, source *connect.Struct) (string, error) {
	name := cfg.nameFormat
	name = strings.ReplaceAll(name, "${topic}", topic)
	for _, f := range []string{"db", "schema", "table"} {
		ph := "${source." + f + "}"
		if !strings.Contains(name, ph) {
			continue
		}
		var v string
		if source != nil {
			v, _ = source.Get(f).(string)
		}
		if v == "" {
			return "", fmt.Errorf("collection.name.format %s: the record of topic %s has no source.%s", cfg.nameFormat, topic, f)
		}
		name = strings.ReplaceAll(name, ph, v)
	}
	return strings.ReplaceAll(name, ".", "_"), nil
}

// collapse applies Debezium's batch reduction: per table and key the last
// change wins, keeping the key's first position in the batch; a column
// the last change carries as unavailable takes the last real value seen
// for the key in the batch. Changes without a key (primary.key.mode=none,
// insert.mode=insert) are kept as they are.
func collapse(changes []*change) []*change {
	out := make([]*change, 0, len(changes))
	// A single key column of a comparable type (the common case) is
	// looked up as it is; other keys as their string form.
	type rowID struct {
		table string
		key   any
	}
	at := make(map[rowID]int, len(changes))
	for _, c := range changes {
		if len(c.key) == 0 {
			out = append(out, c)
			continue
		}
		id := rowID{table: c.table}
		switch v := c.key[0].value.(type) {
		case string, int8, int16, int32, int64, bool:
			if len(c.key) == 1 {
				id.key = v
				break
			}
			id.key = c.keyString()
		default:
			id.key = c.keyString()
		}
		i, seen := at[id]
		if !seen {
			at[id] = len(out)
			out = append(out, c)
			continue
		}
		prev := out[i]
		if c.op == opUpsert && prev.op == opUpsert {
			for j := range c.cols {
				if !c.cols[j].unavailable {
					continue
				}
				for _, p := range prev.cols {
					if p.name == c.cols[j].name && !p.unavailable {
						c.cols[j] = p
						break
					}
				}
			}
		}
		out[i] = c
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
