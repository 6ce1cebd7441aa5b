package runtime

import "testing"

// Acks out of order across a partition's records: the committable offset
// only covers the acknowledged prefix (Kafka Connect SubmittedRecords).
func TestSubmittedRecordsCommittablePrefix(t *testing.T) {
	s := newSubmittedRecords()
	p := map[string]any{"server": "a"}
	r1 := s.submit(p, map[string]any{"lsn": 1})
	r2 := s.submit(p, map[string]any{"lsn": 2})
	r3 := s.submit(p, map[string]any{"lsn": 3})
	s.ack(r2)
	if got := s.committableOffsets(); len(got) != 0 {
		t.Fatalf("nothing committable before r1 acked, got %v", got)
	}
	s.ack(r1)
	got := s.committableOffsets()
	if len(got) != 1 || got[0].offset["lsn"] != 2 {
		t.Fatalf("want lsn 2 committable, got %v", got)
	}
	if s.inFlight() != 1 {
		t.Fatalf("in flight = %d, want 1", s.inFlight())
	}
	if got := s.committableOffsets(); len(got) != 0 {
		t.Fatalf("committable offsets are taken once, got %v", got)
	}
	s.ack(r3)
	got = s.committableOffsets()
	if len(got) != 1 || got[0].offset["lsn"] != 3 {
		t.Fatalf("want lsn 3, got %v", got)
	}
}
