package transforms

import (
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

const kafkaDoc = "Kafka Connect 3.9 SMT reference (https://kafka.apache.org/39/documentation.html#connect_included_transformation)"

// smtInputs returns, from the Debezium inventory events: an unwrapped
// customers row (STRUCT key and value), a products row with nulls, a
// tombstone, and a schemaless record as JsonConverter with
// schemas.enable=false produces.
func smtInputs(t *testing.T) (row, nulls, tomb, schemaless *connect.SourceRecord) {
	inv := debeziumEvents(t, "pg_inventory_snapshot_stream.jsonl")
	unwrap := &ExtractNewRecordState{}
	if err := unwrap.Configure(map[string]string{"drop.tombstones": "false"}); err != nil {
		t.Fatal(err)
	}
	p := int32(2)
	row, _ = unwrap.Apply(pick(t, inv, "customers", "c"))
	row.Partition = &p
	nulls, _ = unwrap.Apply(inv[10])
	tomb = pick(t, inv, "customers", "tombstone")
	schemaless = &connect.SourceRecord{Topic: "orders", Timestamp: time.UnixMilli(1795946541581).UTC(),
		Key:   map[string]any{"id": int64(7)},
		Value: map[string]any{"id": int64(7), "amount": "12.50", "customer": map[string]any{"id": int64(1), "email": "a@b.c"}, "ts": int64(1795946541581)}}
	return
}

func TestKafkaSMTsGolden(t *testing.T) {
	row, nulls, tomb, sl := smtInputs(t)
	kc := "org.apache.kafka.connect.transforms."
	all := []*connect.SourceRecord{row, nulls, tomb, sl}
	runGolden(t, "kafka_smts", []goldenCase{
		{name: "RegexRouter", class: kc + "RegexRouter", cfg: map[string]string{"regex": `([^.]+)\.([^.]+)\.([^.]+)`, "replacement": "$3_cdc"}, in: all,
			doc: kafkaDoc + " RegexRouter: whole-topic match, Matcher.replaceFirst with $n; non-matching topics unchanged"},
		{name: "TimestampRouter", class: kc + "TimestampRouter", cfg: map[string]string{"topic.format": "${topic}-${timestamp}", "timestamp.format": "yyyy-MM-dd"}, in: []*connect.SourceRecord{row, sl},
			doc: kafkaDoc + " TimestampRouter: topic.format with ${topic}/${timestamp}, SimpleDateFormat in UTC"},
		{name: "ReplaceField$Value-include-renames", class: kc + "ReplaceField$Value", cfg: map[string]string{"include": "id,email,amount", "renames": "email:mail,amount:total"}, in: all,
			doc: kafkaDoc + " ReplaceField: include keeps only the listed fields, renames old:new; schemaless maps too; tombstones unchanged"},
		{name: "ReplaceField$Value-exclude", class: kc + "ReplaceField$Value", cfg: map[string]string{"exclude": "first_name,last_name"}, in: []*connect.SourceRecord{row},
			doc: kafkaDoc + " ReplaceField: exclude drops fields; the schema keeps name and version but not optional (SchemaUtil.copySchemaBasics)"},
		{name: "MaskField$Value", class: kc + "MaskField$Value", cfg: map[string]string{"fields": "email,id"}, in: []*connect.SourceRecord{row, tomb},
			doc: kafkaDoc + " MaskField: fields replaced by the empty value of their type"},
		{name: "MaskField$Value-replacement", class: kc + "MaskField$Value", cfg: map[string]string{"fields": "email", "replacement": "****"}, in: []*connect.SourceRecord{row},
			doc: kafkaDoc + " MaskField: replacement for string fields"},
		{name: "InsertField$Value", class: kc + "InsertField$Value", cfg: map[string]string{"topic.field": "src_topic!", "partition.field": "src_partition", "timestamp.field": "src_ts", "static.field": "origin", "static.value": "pg"}, in: all,
			doc: kafkaDoc + " InsertField: topic/partition/timestamp/static fields, '!' required, optional by default; schemaless maps; tombstones unchanged"},
		{name: "ValueToKey", class: kc + "ValueToKey", cfg: map[string]string{"fields": "id,email"}, in: []*connect.SourceRecord{row, sl},
			doc: kafkaDoc + " ValueToKey: key replaced by a struct (or map) of the listed value fields"},
		{name: "ValueToKey-tombstone", class: kc + "ValueToKey", cfg: map[string]string{"fields": "id"}, in: []*connect.SourceRecord{tomb}, wantErr: "Only Map objects supported",
			doc: kafkaDoc + " ValueToKey: a null value fails (Requirements.requireMap); guard with RecordIsTombstone"},
		{name: "ExtractField$Key", class: kc + "ExtractField$Key", cfg: map[string]string{"field": "id"}, in: []*connect.SourceRecord{row, tomb, sl},
			doc: kafkaDoc + " ExtractField: the key becomes the field, with its schema"},
		{name: "ExtractField$Value-V2", class: kc + "ExtractField$Value", cfg: map[string]string{"field": "customer.email", "field.syntax.version": "V2"}, in: []*connect.SourceRecord{sl},
			doc: kafkaDoc + " ExtractField with field.syntax.version=V2 (KIP-821): nested path"},
		{name: "HoistField$Value", class: kc + "HoistField$Value", cfg: map[string]string{"field": "row"}, in: []*connect.SourceRecord{row, sl},
			doc: kafkaDoc + " HoistField: wrap the value in a struct (or map) with one field"},
		{name: "Cast$Value", class: kc + "Cast$Value", cfg: map[string]string{"spec": "id:string,amount:float64,ts:int32"}, in: []*connect.SourceRecord{row, sl},
			doc: kafkaDoc + " Cast: field:type list; the default of a cast field is cast too"},
		{name: "Cast$Key-whole", class: kc + "Cast$Key", cfg: map[string]string{"spec": "string"}, in: []*connect.SourceRecord{{Topic: "orders", KeySchema: connect.Prim(connect.Int64, false), Key: int64(7)}},
			doc: kafkaDoc + " Cast: a single type casts the whole key"},
		{name: "TimestampConverter$Value-unix-to-string", class: kc + "TimestampConverter$Value", cfg: map[string]string{"field": "ts", "target.type": "string", "format": "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"}, in: []*connect.SourceRecord{sl},
			doc: kafkaDoc + " TimestampConverter: unix (ms) to string with a SimpleDateFormat pattern"},
		{name: "TimestampConverter$Value-to-Timestamp", class: kc + "TimestampConverter$Value", cfg: map[string]string{"field": "ts_ms", "target.type": "Timestamp"}, in: []*connect.SourceRecord{pick(t, debeziumEvents(t, "pg_inventory_snapshot_stream.jsonl"), "customers", "c")},
			doc: kafkaDoc + " TimestampConverter: int64 epoch ms to the Timestamp logical type, optionality kept"},
		{name: "Flatten$Value", class: kc + "Flatten$Value", cfg: map[string]string{"delimiter": "_"}, in: []*connect.SourceRecord{pick(t, debeziumEvents(t, "pg_inventory_snapshot_stream.jsonl"), "customers", "u"), sl},
			doc: kafkaDoc + " Flatten: nested structs become delimiter-joined fields, optional under an optional parent; schemaless maps"},
		{name: "SetSchemaMetadata$Value", class: kc + "SetSchemaMetadata$Value", cfg: map[string]string{"schema.name": "com.acme.Customer", "schema.version": "3"}, in: []*connect.SourceRecord{row, nulls},
			doc: kafkaDoc + " SetSchemaMetadata: schema name and version"},
		{name: "Filter", class: kc + "Filter", in: []*connect.SourceRecord{row},
			doc: kafkaDoc + " Filter: drops every record (used with a predicate)"},
		{name: "InsertHeader", class: kc + "InsertHeader", cfg: map[string]string{"header": "source", "value.literal": "connectd"}, in: []*connect.SourceRecord{row},
			doc: kafkaDoc + " InsertHeader: header with a literal value"},
		{name: "HeaderFrom$Value-move", class: kc + "HeaderFrom$Value", cfg: map[string]string{"fields": "id,email", "headers": "row_id,row_email", "operation": "move"}, in: []*connect.SourceRecord{row, sl, tomb},
			doc: kafkaDoc + " HeaderFrom: move fields to headers (removed from the value)"},
		{name: "HeaderFrom$Key-copy", class: kc + "HeaderFrom$Key", cfg: map[string]string{"fields": "id", "headers": "key_id", "operation": "copy"}, in: []*connect.SourceRecord{row},
			doc: kafkaDoc + " HeaderFrom: copy a key field to a header"},
	})
}

func TestDropHeadersAndPredicates(t *testing.T) {
	row, _, tomb, _ := smtInputs(t)
	row.Headers = []connect.Header{{Key: "a", Value: []byte("1")}, {Key: "b", Value: []byte("2")}, {Key: "a", Value: []byte("3")}}
	cfg := map[string]string{
		"transforms":                   "drop,filter",
		"transforms.drop.type":         "DropHeaders",
		"transforms.drop.headers":      "a",
		"transforms.filter.type":       "org.apache.kafka.connect.transforms.Filter",
		"transforms.filter.predicate":  "isTombstone",
		"predicates":                   "isTombstone,hasB,customers",
		"predicates.isTombstone.type":  "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
		"predicates.hasB.type":         "HasHeaderKey",
		"predicates.hasB.name":         "b",
		"predicates.customers.type":    "TopicNameMatches",
		"predicates.customers.pattern": `.*\.customers`,
	}
	c, err := NewChain(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out, err := c.Apply(row)
	if err != nil || out == nil || len(out.Headers) != 1 || out.Headers[0].Key != "b" || len(row.Headers) != 3 {
		t.Fatalf("DropHeaders: got %+v, %v (input headers %d)", out, err, len(row.Headers))
	}
	if out, err := c.Apply(tomb); out != nil || err != nil {
		t.Fatalf("Filter with RecordIsTombstone: got %+v, %v", out, err)
	}
	// Kafka Connect docs, "Predicates": negate=true inverts the predicate.
	cfg["transforms.filter.negate"] = "true"
	c2, _ := NewChain(cfg)
	if out, _ := c2.Apply(tomb); out == nil {
		t.Fatal("negated predicate dropped the tombstone")
	}
	for name, want := range map[string]bool{"hasB": true, "customers": true} {
		pl, _ := lookup(cfg["predicates."+name+".type"], connect.PluginPredicate)
		p := pl.newP()
		if err := p.Configure(subset(cfg, "predicates."+name+".")); err != nil {
			t.Fatal(err)
		}
		if got := p.Test(row); got != want {
			t.Errorf("%s: got %v", name, got)
		}
	}
}
