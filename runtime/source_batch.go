package runtime

import (
	"context"
	"os"
	goruntime "runtime"
	"strconv"
	"sync"
	"time"

	"github.com/connectd/connectd/connect"
)

// parallelConvertMin is the smallest poll batch sendBatch converts on
// several goroutines; a smaller one is converted record by record on the
// poll goroutine (send), where starting goroutines would cost more than
// they save.
const parallelConvertMin = 64

// convertPart is how many records of a poll batch sendBatch converts
// together before handing them to the producer.
const convertPart = 256

// maxConvertWorkers bounds the goroutines converting one poll batch: the
// connector's decoding, the producer and the broker need cores too.
const maxConvertWorkers = 4

// convertWorkers is how many goroutines convert a poll batch (the poll
// goroutine included): half the cores the Go scheduler runs on, at most
// maxConvertWorkers; the other half is left to the connector's decoding,
// the producer and an embedded broker, which already keep about 1.5 cores
// busy on a 2-core machine. So on 2 cores conversion stays on the poll
// goroutine: bench/postgres there, alternating 1 and 2 workers (500k-row
// JSON snapshot and 100-row-transaction backlog, embedded broker, three
// pairs, load average 1.4-3.4 from other work) gave medians of 117k vs
// 101k rows/s (snapshot) and 89k vs 72k (stream) for 1 and 2, with the
// same CPU per row, though BenchmarkEncodeBatch converts 1.8x faster on 2
// goroutines. The environment variable CONNECTD_CONVERT_WORKERS sets it
// (a developer aid for such side-by-sides). Overridable in tests.
var convertWorkers = sync.OnceValue(func() int {
	if n, err := strconv.Atoi(os.Getenv("CONNECTD_CONVERT_WORKERS")); err == nil && n > 0 {
		return n
	}
	return max(1, min(goruntime.GOMAXPROCS(0)/2, maxConvertWorkers))
})

// batchSlot is one record of a poll batch in sendBatch.
type batchSlot struct {
	rec, out *connect.SourceRecord // as polled; after the transforms (nil: dropped)
	sourceTs int64
	s        *inflightRecord // out's pooled Kafka record, its key and value encoded into
	done     bool            // encoded (or failed: err)
	err      error
}

// sendBatch is send for each record of recs, in order, with the records'
// keys and values converted (the converters' serialisation, most of a
// record's cost on this side of the producer) on several goroutines at
// once. Everything that depends on order stays on the poll goroutine, in
// the order of recs: the transforms (they keep caches and are not safe for
// concurrent use), the metrics, the offsets' submission (a dropped
// record's offset commits only after those before it), topic creation and
// the handing to the producer, so per-key and per-partition order and the
// offset-commit invariant are those of send. The first record of each
// (topic, key schema, value schema) in the batch is converted before the
// others, in order, so that a converter that registers schemas
// (AvroConverter) registers them in the order of the records, as one
// goroutine would. An error stops the batch at its record, as send's: the
// records before it are produced, none after it.
func (w *workerSourceTask) sendBatch(ctx context.Context, recs []*connect.SourceRecord, now time.Time) error {
	slots := make([]batchSlot, 0, len(recs))
	var stopErr error
	for _, rec := range recs {
		ts := w.metrics.EventAt(rec, now)
		out, err := w.applyChain(rec)
		if err != nil {
			stopErr = err
			break
		}
		slots = append(slots, batchSlot{rec: rec, out: out, sourceTs: ts})
	}
	// A part at a time: its records reach the producer while the next
	// part is converted, rather than the whole poll batch (thousands of
	// records, megabytes) at once.
	for lo := 0; lo < len(slots); lo += convertPart {
		part := slots[lo:min(lo+convertPart, len(slots))]
		w.encodeBatch(part)
		for i := range part {
			sl := &part[i]
			if sl.out == nil {
				w.submitted.ack(w.submitted.submit(sl.rec.SourcePartition, sl.rec.SourceOffset))
				continue
			}
			s := sl.s
			sl.s = nil
			var err error
			if err = sl.err; err == nil {
				_, err = w.kafkaRecord(ctx, sl.out, &s.bufs, &s.kr, s.kr.Key, s.kr.Value)
			}
			if err != nil {
				*s = inflightRecord{}
				inflightRecords.Put(s)
				releaseSlots(part[i+1:])
				return err
			}
			w.produce(ctx, s, sl.out, sl.sourceTs)
		}
	}
	return stopErr
}

// encodeBatch takes a pooled record for each slot the transforms kept and
// encodes it: the first record of each (topic, key schema, value schema)
// first, in order, then the rest on convertWorkers goroutines, each a
// contiguous part of the batch.
func (w *workerSourceTask) encodeBatch(slots []batchSlot) {
	// The first record of each schema, in order (schema registration).
	type schemas struct {
		topic    string
		key, val *connect.Schema
	}
	var last schemas
	seen := map[schemas]bool{}
	for i := range slots {
		sl := &slots[i]
		if sl.out == nil {
			continue
		}
		sl.s = inflightRecords.Get().(*inflightRecord)
		k := schemas{sl.out.Topic, sl.out.KeySchema, sl.out.ValueSchema}
		if k == last {
			continue
		}
		last = k
		if !seen[k] {
			seen[k] = true
			w.encodeSlot(sl)
		}
	}
	// The rest, in parallel.
	n := min(convertWorkers(), len(slots))
	var wg sync.WaitGroup
	for j := 1; j < n; j++ {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			w.encodeSlots(slots[lo:hi])
		}(j*len(slots)/n, (j+1)*len(slots)/n)
	}
	w.encodeSlots(slots[:len(slots)/max(n, 1)])
	wg.Wait()
}

// encodeSlots encodes the slots not encoded yet.
func (w *workerSourceTask) encodeSlots(slots []batchSlot) {
	for i := range slots {
		if slots[i].out != nil && !slots[i].done {
			w.encodeSlot(&slots[i])
		}
	}
}

// encodeSlot converts the slot's record into its inflightRecord's buffers,
// leaving the key and value in its Kafka record.
func (w *workerSourceTask) encodeSlot(sl *batchSlot) {
	sl.done = true
	key, val, err := w.encode(sl.out, &sl.s.bufs)
	if err != nil {
		sl.err = err
		return
	}
	sl.s.kr.Key, sl.s.kr.Value = key, val
}

// releaseSlots gives back the pooled records (and buffers) of slots that
// will not be produced.
func releaseSlots(slots []batchSlot) {
	for i := range slots {
		if s := slots[i].s; s != nil {
			s.bufs.release()
			*s = inflightRecord{}
			inflightRecords.Put(s)
			slots[i].s = nil
		}
	}
}
