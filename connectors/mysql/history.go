package mysql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connectors/internal/relational"
)

// historyRecord is one record of the schema history topic, field for field
// as Debezium's HistoryRecord (io.debezium.relational.history).
type historyRecord struct {
	Source       map[string]any    `json:"source"`
	Position     map[string]any    `json:"position"`
	TsMs         int64             `json:"ts_ms"`
	DatabaseName string            `json:"databaseName"`
	DDL          string            `json:"ddl"`
	TableChanges []jsonTableChange `json:"tableChanges"`
}

// jsonTableChange is Debezium's JsonTableChangeSerializer layout.
type jsonTableChange struct {
	Type       string     `json:"type"`
	ID         string     `json:"id"`
	PreviousID string     `json:"previousId,omitempty"`
	Table      *jsonTable `json:"table,omitempty"`
	Comment    **string   `json:"comment,omitempty"` // set (to null) with a table
}

type jsonTable struct {
	DefaultCharsetName    *string      `json:"defaultCharsetName"`
	PrimaryKeyColumnNames []string     `json:"primaryKeyColumnNames"`
	Columns               []jsonColumn `json:"columns"`
	Attributes            []any        `json:"attributes"`
}

type jsonColumn struct {
	Name                   string   `json:"name"`
	JdbcType               int      `json:"jdbcType"`
	TypeName               string   `json:"typeName"`
	TypeExpression         string   `json:"typeExpression"`
	CharsetName            *string  `json:"charsetName"`
	Length                 *int     `json:"length,omitempty"`
	Scale                  *int     `json:"scale,omitempty"`
	Position               int      `json:"position"`
	Optional               bool     `json:"optional"`
	AutoIncremented        bool     `json:"autoIncremented"`
	Generated              bool     `json:"generated"`
	Comment                *string  `json:"comment"`
	HasDefaultValue        bool     `json:"hasDefaultValue"`
	DefaultValueExpression *string  `json:"defaultValueExpression,omitempty"`
	EnumValues             []string `json:"enumValues"`
}

// jdbcTypes are java.sql.Types of each data type, as Debezium's MySQL DDL
// parser assigns them.
var jdbcTypes = map[string]int{
	"tinyint": 5, "smallint": 5, "mediumint": 4, "int": 4, "integer": 4, "bigint": -5, "decimal": 3, "numeric": 2,
	"float": 6, "double": 8, "real": 8, "char": 1, "varchar": 12, "tinytext": 12, "text": 12, "mediumtext": 12,
	"longtext": 12, "json": 1111, "date": 91, "datetime": 93, "timestamp": 2014, "time": 92, "year": 4, "enum": 1,
	"set": 1, "bit": -7, "binary": -2, "varbinary": -3, "tinyblob": 2004, "blob": 2004, "mediumblob": 2004, "longblob": 2004,
	// spatial types are java.sql.Types.OTHER (mariadb_types_default.jsonl)
	"geometry": 1111, "point": 1111, "linestring": 1111, "polygon": 1111, "multipoint": 1111, "multilinestring": 1111,
	"multipolygon": 1111, "geometrycollection": 1111, "geomcollection": 1111,
	// MariaDB UUID is java.sql.Types.OTHER in Debezium's MariaDbAntlrDdlParser
	// (UuidDataTypeContext); INET6/INET4 have no entry there, connectd uses
	// OTHER as well
	"uuid": 1111, "inet6": 1111, "inet4": 1111,
	// a column declared BOOLEAN/BOOL in DDL text (java.sql.Types.BOOLEAN)
	"boolean": 16,
}

func intp(n int) *int { return &n }

// dbzColumn is what Debezium's table model says of a column.
type dbzColumn struct {
	typeName   string
	jdbcType   int
	charset    *string
	length     *int
	scale      *int
	defaultExp *string // nil = none or NULL
	hasDefault bool
	enumValues []string
	comment    *string
}

func dbzColumnOf(c *column) dbzColumn {
	d := dbzColumn{typeName: strings.ToUpper(c.dataType), jdbcType: jdbcTypes[c.dataType]}
	if c.unsigned {
		d.typeName += " UNSIGNED"
	}
	if c.zerofill {
		d.typeName += " ZEROFILL"
	}
	if c.charset != "" {
		cs := c.charset
		d.charset = &cs
	}
	if n := c.dbzLength(); n > 0 {
		d.length = intp(n)
	}
	if c.dataType == "decimal" || c.dataType == "numeric" || c.floatMD || c.doubleMD {
		d.scale = intp(c.scale)
	}
	for _, o := range c.options {
		d.enumValues = append(d.enumValues, "'"+strings.ReplaceAll(o, "'", "''")+"'")
	}
	if c.defaultSQL != nil {
		d.hasDefault = true
		if v := *c.defaultSQL; v != "NULL" {
			if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
				// the literal's text, escapes kept ('it''s' → it''s), as
				// Debezium's parser keeps it
				v = v[1 : len(v)-1]
			}
			d.defaultExp = &v
		}
	}
	if c.comment != "" {
		cm := c.comment
		d.comment = &cm
	}
	return d
}

// tableChangeJSON renders a change as Debezium's tableChanges entry.
func tableChangeJSON(ch tableChange) jsonTableChange {
	j := jsonTableChange{Type: ch.typ, ID: strconv.Quote(ch.db) + "." + strconv.Quote(ch.name), PreviousID: ch.previous}
	if ch.table == nil {
		return j
	}
	cs := charsetOr(ch.table.charset)
	jt := &jsonTable{DefaultCharsetName: &cs, PrimaryKeyColumnNames: append([]string{}, ch.table.PrimaryKey...), Attributes: []any{}}
	if ch.table.hidden > 0 {
		jt.Attributes = append(jt.Attributes, map[string]any{"name": attrHiddenColumns, "value": strconv.Itoa(ch.table.hidden)})
	}
	for i := range ch.table.cols {
		c := &ch.table.cols[i]
		d := dbzColumnOf(c)
		jc := jsonColumn{Name: c.Name, JdbcType: d.jdbcType, TypeName: d.typeName, TypeExpression: d.typeName,
			CharsetName: d.charset, Length: d.length, Scale: d.scale, Position: c.Position, Optional: c.Optional,
			AutoIncremented: c.autoInc, Generated: c.autoInc, Comment: d.comment, HasDefaultValue: d.hasDefault,
			DefaultValueExpression: d.defaultExp, EnumValues: append([]string{}, d.enumValues...)}
		jt.Columns = append(jt.Columns, jc)
	}
	j.Table = jt
	j.Comment = new(*string)
	if ch.table.comment != "" {
		cm := ch.table.comment
		*j.Comment = &cm
	}
	return j
}

// attrHiddenColumns is the table attribute (Debezium's tableChanges
// "attributes": name/value pairs) in which connectd keeps table.hidden,
// the implicit row_start/row_end columns of a system-versioned MariaDB
// table. Debezium's MySQL/MariaDB connectors write no attributes and ignore
// unknown ones.
const attrHiddenColumns = "connectd.hidden.columns"

// tableOf is the inverse of tableChangeJSON: the table model a history
// record's structure describes.
func tableOf(db, name string, jt *jsonTable) *table {
	t := &table{Table: relational.Table{Schema: db, Name: name, PrimaryKey: jt.PrimaryKeyColumnNames}}
	if jt.DefaultCharsetName != nil {
		t.charset = *jt.DefaultCharsetName
	}
	for _, a := range jt.Attributes {
		if m, ok := a.(map[string]any); ok && m["name"] == attrHiddenColumns {
			if v, ok := m["value"].(string); ok {
				t.hidden, _ = strconv.Atoi(v)
			}
		}
	}
	for _, jc := range jt.Columns {
		var c column
		c.Name, c.Position, c.Optional, c.autoInc = jc.Name, jc.Position, jc.Optional, jc.AutoIncremented
		if jc.CharsetName != nil {
			c.charset = *jc.CharsetName
		}
		if jc.Comment != nil {
			c.comment = *jc.Comment
		}
		tn := strings.ToLower(jc.TypeName)
		c.unsigned = strings.Contains(tn, " unsigned")
		c.zerofill = strings.Contains(tn, " zerofill")
		c.dataType, _, _ = strings.Cut(tn, " ")
		c.TypeName, c.columnType = c.dataType, tn
		n := 0
		if jc.Length != nil {
			n = *jc.Length
		}
		switch c.dataType {
		case "float":
			if jc.Scale != nil {
				c.floatMD, c.precision, c.scale = true, n, *jc.Scale
			}
		case "double":
			if jc.Scale != nil {
				c.doubleMD, c.precision, c.scale = true, n, *jc.Scale
			}
		case "decimal", "numeric":
			c.precision = n
			if jc.Scale != nil {
				c.scale = *jc.Scale
			}
		case "bit":
			c.precision = max(n, 1)
		case "datetime", "timestamp", "time":
			c.fsp = n
		case "char", "binary", "varchar", "varbinary":
			c.length, c.charLength = n, n
		case "tinyint", "smallint", "mediumint", "int", "integer", "bigint", "year":
			c.width = n
		case "enum", "set":
			c.options = parseOptions("(" + strings.Join(jc.EnumValues, ",") + ")")
		}
		if jc.HasDefaultValue {
			d := "NULL"
			if jc.DefaultValueExpression != nil {
				d = *jc.DefaultValueExpression
			}
			c.defaultSQL = &d
		}
		t.cols = append(t.cols, c)
	}
	t.finish()
	return t
}

// schemaHistory is the schema history topic
// (schema.history.internal.kafka.topic): one partition, every DDL with the
// binlog position it was read at and the structures it left.
type schemaHistory struct {
	topic  string
	server string
	cl     *kgo.Client
	opts   []kgo.Opt // security options (TLS, SASL), for the reader too
}

// openHistory connects to brokers (with the security options opts, the
// worker's when its brokers are used) and creates topic (one partition,
// infinite retention, as Debezium's KafkaSchemaHistory) when missing.
func openHistory(ctx context.Context, brokers []string, opts []kgo.Opt, topic, server string) (*schemaHistory, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("mysql: schema history client for %v: %w", brokers, err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	inf := "-1"
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, 1, -1, map[string]*string{
		"cleanup.policy": strPtr("delete"), "retention.ms": &inf, "retention.bytes": &inf,
	}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		cl.Close()
		return nil, fmt.Errorf("mysql: create schema history topic %s: %w", topic, err)
	}
	return &schemaHistory{topic: topic, server: server, cl: cl, opts: opts}, nil
}

func strPtr(s string) *string { return &s }

func (h *schemaHistory) close() {
	if h != nil {
		h.cl.Close()
	}
}

// store writes one record and waits for Kafka's acknowledgement: a DDL is
// in the history before any event decoded with its result is emitted.
func (h *schemaHistory) store(ctx context.Context, pos offset, db, ddl string, changes []tableChange, now time.Time) error {
	rec := historyRecord{Source: map[string]any{"server": h.server}, Position: pos.toMap(), TsMs: now.UnixMilli(),
		DatabaseName: db, DDL: ddl, TableChanges: []jsonTableChange{}}
	for _, ch := range changes {
		rec.TableChanges = append(rec.TableChanges, tableChangeJSON(ch))
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := h.cl.ProduceSync(ctx, &kgo.Record{Topic: h.topic, Partition: 0, Value: b}).FirstErr(); err != nil {
		return fmt.Errorf("mysql: write schema history topic %s: %w", h.topic, err)
	}
	return nil
}

// recover reads the whole topic and applies, in order, the table
// structures of every record at or before upTo. It returns how many
// records it applied.
func (h *schemaHistory) recover(ctx context.Context, upTo offset, cat catalog) (int, error) {
	ends, err := kadm.NewClient(h.cl).ListEndOffsets(ctx, h.topic)
	if err != nil {
		return 0, fmt.Errorf("mysql: schema history topic %s: %w", h.topic, err)
	}
	end, ok := ends.Lookup(h.topic, 0)
	if !ok || end.Err != nil || end.Offset == 0 {
		return 0, nil
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(h.cl.OptValue(kgo.SeedBrokers).([]string)...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{h.topic: {0: kgo.NewOffset().AtStart()}})}, h.opts...)...)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	applied := 0
	for next := int64(0); next < end.Offset; {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return applied, fmt.Errorf("mysql: read schema history topic %s: %w", h.topic, err)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return applied, fmt.Errorf("mysql: read schema history topic %s: %w", h.topic, ferr)
		}
		for _, r := range fs.Records() {
			next = r.Offset + 1
			var rec historyRecord
			if err := json.Unmarshal(r.Value, &rec); err != nil {
				return applied, fmt.Errorf("mysql: schema history record %d: %w", r.Offset, err)
			}
			pos, err := parseOffset(rec.Position)
			if err != nil {
				return applied, fmt.Errorf("mysql: schema history record %d: %w", r.Offset, err)
			}
			if !pos.atOrBefore(upTo) {
				continue
			}
			for _, id := range renamedFrom(rec.DDL, rec.DatabaseName) {
				delete(cat, id)
			}
			for _, ch := range rec.TableChanges {
				db, name, ok := splitTableID(ch.ID)
				if !ok {
					return applied, fmt.Errorf("mysql: schema history record %d: table id %q", r.Offset, ch.ID)
				}
				switch {
				case ch.Type == "DROP":
					delete(cat, db+"."+name)
				case ch.Table != nil:
					tb := tableOf(db, name, ch.Table)
					if ch.Comment != nil && *ch.Comment != nil {
						tb.comment = **ch.Comment
					}
					cat[db+"."+name] = tb
				}
			}
			applied++
		}
	}
	return applied, nil
}

// splitTableID splits "\"db\".\"table\"".
func splitTableID(id string) (string, string, bool) {
	db, rest, ok := strings.Cut(id, `"."`)
	if !ok || !strings.HasPrefix(db, `"`) || !strings.HasSuffix(rest, `"`) {
		return "", "", false
	}
	return db[1:], rest[:len(rest)-1], true
}

// atOrBefore reports whether binlog position o is at or before p (file,
// then position, then events within the transaction).
func (o offset) atOrBefore(p offset) bool {
	if o.file != p.file {
		return binlogIndex(o.file) < binlogIndex(p.file)
	}
	if o.pos != p.pos {
		return o.pos < p.pos
	}
	return o.event <= p.event
}

// binlogIndex is the numeric suffix of a binlog file name (mysql-bin.000042 → 42).
func binlogIndex(f string) int64 {
	n, _ := strconv.ParseInt(f[strings.LastIndexByte(f, '.')+1:], 10, 64)
	return n
}
