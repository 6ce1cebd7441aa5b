package runtime

import (
	"sync"
	"testing"
	"unsafe"

	"github.com/connectd/connectd/connect"
)

// The free list of record buffers keeps at most its budget of capacity,
// drops buffers larger than maxRecordBuffer, and hands kept buffers back
// (with their capacity) before making new ones.
func TestBufferFreeListBudget(t *testing.T) {
	l := &bufferFreeList{mu: new(sync.Mutex), budget: 10 << 10}
	buf := func(c int) *[]byte { b := make([]byte, 0, c); return &b }
	for i := 0; i < 5; i++ {
		l.put(buf(4 << 10))
	}
	if len(l.bufs) != 2 || l.bytes != 8<<10 {
		t.Fatalf("kept %d buffers, %d bytes; want 2, 8192 (budget 10240)", len(l.bufs), l.bytes)
	}
	l.put(buf(maxRecordBuffer + 1))
	l.put(buf(0))
	if len(l.bufs) != 2 {
		t.Fatalf("kept an oversized or empty buffer: %d buffers", len(l.bufs))
	}
	for i := 0; i < 2; i++ {
		if p := l.get(); cap(*p) != 4<<10 || len(*p) != 0 {
			t.Fatalf("get %d: len %d cap %d, want a kept 4096-byte buffer", i, len(*p), cap(*p))
		}
	}
	if l.bytes != 0 {
		t.Fatalf("bytes %d after taking every buffer", l.bytes)
	}
	if p := l.get(); p == nil || cap(*p) != 0 {
		t.Fatal("an empty list must give a new empty buffer")
	}
}

// A record's Kafka headers are its connect headers, shared rather than
// copied (connectors give many records one header slice): same keys and
// values, same array, and none for a record without headers.
func TestKafkaHeadersShareTheRecordsHeaders(t *testing.T) {
	h := []connect.Header{{Key: "a", Value: []byte("1")}, {Key: "b", Value: nil}}
	got := kafkaHeaders(h)
	if len(got) != 2 || got[0].Key != "a" || string(got[0].Value) != "1" || got[1].Key != "b" || got[1].Value != nil {
		t.Fatalf("headers %+v", got)
	}
	if unsafe.Pointer(&got[0]) != unsafe.Pointer(&h[0]) {
		t.Fatal("the headers were copied")
	}
	if kafkaHeaders(nil) != nil {
		t.Fatal("no headers must give nil")
	}
}
