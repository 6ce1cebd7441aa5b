package runtime

import (
	"encoding/json"
	"reflect"
	"sync"
	"unsafe"
)

// submittedRecords tracks records handed to the producer, per source
// partition in submission order, as Kafka Connect's SubmittedRecords: the
// committable offset of a partition is the offset of the last record such
// that it and every record submitted before it were acknowledged.
type submittedRecords struct {
	mu      sync.Mutex
	byPart  map[string]*partitionQueue
	pending int

	// Connectors usually pass the same partition map with every record:
	// remember the last one so that its key is not re-encoded per record.
	lastPart unsafe.Pointer
	lastQ    *partitionQueue
}

type partitionQueue struct {
	partition map[string]any
	queue     []*submittedRecord
	// committable is the newest offset not yet taken by committable().
	committable map[string]any
	has         bool
}

type submittedRecord struct {
	q      *partitionQueue
	offset map[string]any
	acked  bool
}

func newSubmittedRecords() *submittedRecords {
	return &submittedRecords{byPart: map[string]*partitionQueue{}}
}

func partitionKey(p map[string]any) string {
	b, _ := json.Marshal(p)
	return string(b)
}

// submit registers a record; call ack on the result when Kafka acknowledged it.
func (s *submittedRecords) submit(partition, offset map[string]any) *submittedRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	ptr := reflect.ValueOf(partition).UnsafePointer()
	q := s.lastQ
	if q == nil || ptr != s.lastPart {
		k := partitionKey(partition)
		q = s.byPart[k]
		if q == nil {
			q = &partitionQueue{partition: partition}
			s.byPart[k] = q
		}
		s.lastPart, s.lastQ = ptr, q
	}
	r := &submittedRecord{q: q, offset: offset}
	q.queue = append(q.queue, r)
	s.pending++
	return r
}

// ack marks r acknowledged and advances its partition's committable offset
// over the acknowledged prefix of the queue.
func (s *submittedRecords) ack(r *submittedRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r.acked = true
	q := r.q
	i := 0
	for ; i < len(q.queue) && q.queue[i].acked; i++ {
		if q.queue[i].offset != nil {
			q.committable = q.queue[i].offset
			q.has = true
		}
	}
	s.pending -= i
	q.queue = q.queue[i:]
}

// committableOffsets returns, per partition, the newest offset whose
// records are all acknowledged, and clears it.
func (s *submittedRecords) committableOffsets() []partitionOffset {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []partitionOffset
	for _, q := range s.byPart {
		if q.has {
			out = append(out, partitionOffset{partition: q.partition, offset: q.committable})
			q.has = false
		}
	}
	return out
}

// inFlight returns the number of records not yet acknowledged in order.
func (s *submittedRecords) inFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending
}

type partitionOffset struct {
	partition map[string]any
	offset    map[string]any
}
