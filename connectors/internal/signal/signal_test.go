package signal

import (
	"strings"
	"testing"
)

// Data shapes from the Debezium 3.6 documentation, "Sending signals to a
// Debezium connector" (execute-snapshot, stop-snapshot, log examples) and
// KafkaSignalChannel (value {"type", "data"}).

func TestParseExecuteSnapshot(t *testing.T) {
	ex, err := ParseExecuteSnapshot(`{"data-collections": ["schema1.table1", "schema1.table2"], "type": "INCREMENTAL",
		"additional-conditions": [{"data-collection": "schema1.table1", "filter": "color='blue'"}], "surrogate-key": "ts"}`)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Type != SnapshotIncremental || ex.SurrogateKey != "ts" || len(ex.DataCollections) != 2 {
		t.Fatalf("%+v", ex)
	}
	if !ex.Matches("schema1.table2") || ex.Matches("schema1.table22") || ex.Matches("xschema1.table1") {
		t.Fatal("data-collections must match the whole identifier")
	}
	if f := ex.FilterFor("schema1.table1"); f != "color='blue'" {
		t.Fatalf("filter %q", f)
	}
	if f := ex.FilterFor("schema1.table2"); f != "" {
		t.Fatalf("filter %q for a table without condition", f)
	}
	b, err := ParseExecuteSnapshot(`{"data-collections": ["s.t"], "type": "blocking"}`)
	if err != nil || b.Type != SnapshotBlocking {
		t.Fatalf("%+v %v", b, err)
	}
	d, err := ParseExecuteSnapshot(`{"data-collections": ["s.t"]}`)
	if err != nil || d.Type != SnapshotIncremental {
		t.Fatalf("type must default to incremental: %+v %v", d, err)
	}
	for _, bad := range []string{`{}`, `{"data-collections": []}`, `not json`, `{"data-collections": ["("]}`,
		`{"data-collections": ["s.t"], "type": "sideways"}`, `{"data-collections": ["s.t"], "additional-conditions": [{"filter": "a"}]}`} {
		if _, err := ParseExecuteSnapshot(bad); err == nil {
			t.Errorf("ParseExecuteSnapshot(%s) succeeded", bad)
		}
	}
}

func TestParseStopAndLog(t *testing.T) {
	st, err := ParseStopSnapshot(`{"data-collections": ["s.t"], "type": "incremental"}`)
	if err != nil || len(st.DataCollections) != 1 {
		t.Fatalf("%+v %v", st, err)
	}
	if st, err := ParseStopSnapshot(""); err != nil || len(st.DataCollections) != 0 {
		t.Fatalf("empty stop-snapshot data stops everything: %+v %v", st, err)
	}
	if _, err := ParseStopSnapshot(`{"type": "blocking"}`); err == nil {
		t.Fatal("a blocking snapshot cannot be stopped")
	}
	msg, err := ParseLog(`{"message": "Signal message at offset {}"}`)
	if err != nil || msg != "Signal message at offset {}" {
		t.Fatalf("%q %v", msg, err)
	}
}

func TestParseKafkaValue(t *testing.T) {
	s, err := parseKafkaValue([]byte(`{"type":"execute-snapshot","data": {"data-collections": ["s.t"], "type": "INCREMENTAL"}}`))
	if err != nil || s.Type != TypeExecuteSnapshot || !strings.Contains(s.Data, `"data-collections"`) {
		t.Fatalf("%+v %v", s, err)
	}
	if _, err := ParseExecuteSnapshot(s.Data); err != nil {
		t.Fatal(err)
	}
	s, err = parseKafkaValue([]byte(`{"type":"pause-snapshot"}`))
	if err != nil || s.Data != "" {
		t.Fatalf("%+v %v", s, err)
	}
	for _, bad := range []string{`nope`, `{"data": {}}`} {
		if _, err := parseKafkaValue([]byte(bad)); err == nil {
			t.Errorf("parseKafkaValue(%s) succeeded", bad)
		}
	}
}

func TestWindowData(t *testing.T) {
	// SignalMetadata.metadataString
	if got := WindowData("2024-01-01T00:00:00Z", ""); got != `{"openWindowTimestamp": "2024-01-01T00:00:00Z"}` {
		t.Fatal(got)
	}
	if got := WindowData("a", "b"); got != `{"openWindowTimestamp": "a", "closeWindowTimestamp": "b"}` {
		t.Fatal(got)
	}
}
