package runtime

import (
	"testing"
	"unsafe"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
)

// The free list of record buffers keeps at most its budget of capacity,
// drops buffers larger than maxRecordBuffer, and hands kept buffers back
// (with their capacity) before making new ones.
func TestBufferFreeListBudget(t *testing.T) {
	l := &bufferFreeList{budget: 10 << 10}
	buf := func(c int) *[]byte { b := make([]byte, 0, c); return &b }
	for i := 0; i < 5; i++ {
		l.push(buf(4 << 10))
	}
	if len(l.bufs) != 2 || l.bytes != 8<<10 {
		t.Fatalf("kept %d buffers, %d bytes; want 2, 8192 (budget 10240)", len(l.bufs), l.bytes)
	}
	l.push(buf(maxRecordBuffer + 1))
	l.push(buf(0))
	l.push(nil)
	if len(l.bufs) != 2 {
		t.Fatalf("kept an oversized, empty or nil buffer: %d buffers", len(l.bufs))
	}
	for i := 0; i < 2; i++ {
		if p := l.pop(); cap(*p) != 4<<10 || len(*p) != 0 {
			t.Fatalf("pop %d: len %d cap %d, want a kept 4096-byte buffer", i, len(*p), cap(*p))
		}
	}
	if l.bytes != 0 {
		t.Fatalf("bytes %d after taking every buffer", l.bytes)
	}
	if l.pop() != nil {
		t.Fatal("an empty list must give nil")
	}
}

// take gives a record buffers only for converters that append, new ones
// when the pool is empty; release gives them back for the next record.
func TestRecordBuffersTakeAndRelease(t *testing.T) {
	json, plain := converters.NewJSONConverter(), converters.NewAvroConverter()
	var b recordBuffers
	b.take(plain, plain)
	if b.key != nil || b.value != nil {
		t.Fatal("buffers for converters that cannot append (AvroConverter)")
	}
	b.take(json, json)
	if b.key == nil || b.value == nil {
		t.Fatal("no buffers for JsonConverter")
	}
	*b.value = append(*b.value, make([]byte, 1000)...)
	v := b.value
	b.release()
	if b.key != nil || b.value != nil {
		t.Fatal("release must clear the record's buffers")
	}
	var c recordBuffers
	c.take(json, json)
	if c.value != v {
		t.Fatal("the released value buffer was not handed out again")
	}
	c.release()
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
