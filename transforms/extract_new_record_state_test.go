package transforms

import (
	"testing"

	"github.com/connectd/connectd/connect"
)

const enrsDoc = "Debezium 3.6 New Record State Extraction (https://debezium.io/documentation/reference/stable/transformations/event-flattening.html)"

func TestExtractNewRecordStateGolden(t *testing.T) {
	inv := debeziumEvents(t, "pg_inventory_snapshot_stream.jsonl")
	trunc := debeziumEvents(t, "pg_truncate.jsonl")
	var truncate *connect.SourceRecord
	for _, r := range trunc {
		if st, ok := r.Value.(*connect.Struct); ok && st.Get("op") == "t" {
			truncate = r
			break
		}
	}
	// The delete/tombstone pair and the other operations of customers.
	stream := []*connect.SourceRecord{
		pick(t, inv, "customers", "r"), pick(t, inv, "customers", "c"), pick(t, inv, "customers", "u"),
		pick(t, inv, "customers", "d"), pick(t, inv, "customers", "tombstone"),
	}
	const class = "io.debezium.transforms.ExtractNewRecordState"
	heartbeatSchema := connect.StructSchema().Name("io.debezium.connector.common.Heartbeat").Version(1).
		Field("ts_ms", connect.Prim(connect.Int64, false)).Build()
	heartbeat := &connect.SourceRecord{Topic: "__debezium-heartbeat.dbserver1", ValueSchema: heartbeatSchema,
		Value: connect.NewStruct(heartbeatSchema).Put("ts_ms", int64(1795946541581))}
	runGolden(t, "extract_new_record_state", []goldenCase{
		{name: "default", class: class, in: stream,
			doc: enrsDoc + " #event-flattening-behavior and #extract-new-record-state-delete-tombstone-handling-mode (default tombstone: the delete keeps a null value, the tombstone is dropped)"},
		{name: "mode-drop", class: class, cfg: map[string]string{"delete.tombstone.handling.mode": "drop"}, in: stream,
			doc: enrsDoc + " #extract-new-record-state-delete-tombstone-handling-mode: drop removes the delete event and its tombstone"},
		{name: "mode-rewrite", class: class, cfg: map[string]string{"delete.tombstone.handling.mode": "rewrite"}, in: stream,
			doc: enrsDoc + " #extract-new-record-state-delete-tombstone-handling-mode: rewrite adds __deleted (true for deletes, false otherwise) and drops tombstones"},
		{name: "mode-rewrite-with-tombstone", class: class, cfg: map[string]string{"delete.tombstone.handling.mode": "rewrite-with-tombstone", "add.headers": "op"}, in: stream,
			doc: enrsDoc + " #extract-new-record-state-delete-tombstone-handling-mode: rewrite-with-tombstone keeps the tombstone; #extract-new-record-state-add-headers: a tombstone gets __op=d"},
		{name: "mode-delete-to-tombstone", class: class, cfg: map[string]string{"delete.tombstone.handling.mode": "delete-to-tombstone"}, in: stream,
			doc: enrsDoc + " #extract-new-record-state-delete-tombstone-handling-mode: delete-to-tombstone turns the delete into a tombstone and drops the original tombstone"},
		{name: "legacy-delete-handling-rewrite-keep-tombstones", class: class, cfg: map[string]string{"delete.handling.mode": "rewrite", "drop.tombstones": "false"}, in: stream,
			doc: "Debezium 2.x New Record State Extraction (https://debezium.io/documentation/reference/2.7/transformations/event-flattening.html) delete.handling.mode=rewrite, drop.tombstones=false; removed in 3.2, accepted with their old meaning"},
		{name: "legacy-drop-tombstones-false", class: class, cfg: map[string]string{"drop.tombstones": "false"}, in: stream,
			doc: "Debezium 2.x New Record State Extraction #extract-new-record-state-drop-tombstones: delete.handling.mode=none (default) gives a null value, the tombstone is kept"},
		{name: "add-fields", class: class, cfg: map[string]string{"add.fields": "op,table,lsn,source.ts_ms,ts_ms:event_ts"}, in: stream[:4],
			doc: enrsDoc + " #extract-new-record-state-add-fields: __op, __table, __lsn, __source_ts_ms, and the renamed __event_ts; added fields are optional"},
		{name: "add-fields-prefix-rewrite", class: class, cfg: map[string]string{"add.fields": "op,source.snapshot", "add.fields.prefix": "meta_", "delete.tombstone.handling.mode": "rewrite"}, in: stream,
			doc: enrsDoc + " #extract-new-record-state-add-fields-prefix and #extract-new-record-state-delete-tombstone-handling-mode: added fields come before __deleted"},
		{name: "add-headers", class: class, cfg: map[string]string{"add.headers": "op,table,source.lsn,snapshot", "add.headers.prefix": "dbz."}, in: stream[:4],
			doc: enrsDoc + " #extract-new-record-state-add-headers and #extract-new-record-state-add-headers-prefix (values serialised by the default SimpleHeaderConverter)"},
		{name: "route-by-field", class: class, cfg: map[string]string{"route.by.field": "last_name", "delete.tombstone.handling.mode": "rewrite"}, in: stream,
			doc: enrsDoc + " #extract-new-record-state-route-by-field (deletes route by the before state)"},
		{name: "truncate-and-non-envelope", class: class, in: []*connect.SourceRecord{truncate, heartbeat},
			doc: enrsDoc + " #event-flattening-behavior: truncate events are dropped; records that are not change events (heartbeats, schema changes) pass through unchanged"},
		{name: "snapshot-products-null-columns", class: class, in: []*connect.SourceRecord{inv[10], pick(t, inv, "products", "u")},
			doc: enrsDoc + " #event-flattening-behavior: read and update events become the after state, null columns stay null"},
	})
}

func TestExtractNewRecordStateConfigErrors(t *testing.T) {
	for cfg, key := range map[string]string{
		"delete.tombstone.handling.mode=bogus": "delete.tombstone.handling.mode",
		"delete.handling.mode=bogus":           "delete.handling.mode",
		"drop.tombstones=maybe":                "drop.tombstones",
		"add.fields=a:b:c":                     "add.fields",
	} {
		k, v, _ := cut(cfg, "=")
		err := (&ExtractNewRecordState{}).Configure(map[string]string{k: v})
		ce, ok := err.(ConfigErrors)
		if !ok || len(ce) != 1 || ce[0].Key != key {
			t.Errorf("%s: got %v, want one error on %s", cfg, err, key)
		}
	}
}

func cut(s, sep string) (string, string, bool) {
	for i := 0; i+len(sep) <= len(s); i++ {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}
