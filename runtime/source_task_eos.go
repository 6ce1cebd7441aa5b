package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/offsets"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Exactly-once source support (KIP-618, worker exactly.once.source.support
// =enabled): each task has its own transactional producer whose
// transactional.id is <group.id>-<connector>-<task>, as Kafka Connect's
// ExactlyOnceWorkerSourceTask. Every batch returned by one Poll
// (transaction.boundary=poll, Kafka Connect's default) is written in one
// transaction together with the batch's last offset per source partition,
// produced to the offsets topic in Kafka Connect's format. A
// read_committed consumer therefore sees a record exactly when its offset
// is stored, and a restarted task resumes right after the last committed
// batch. SourceTask.Commit is called only after the transaction committed.

// txnTimeout is the producer's transaction.timeout.ms (Kafka's default
// 60000): a transaction left open by a dead worker is aborted after it,
// unless a new instance of the task fences it first.
const txnTimeout = 60 * time.Second

// transactionalID is Kafka Connect's
// Worker.taskTransactionalId(groupId, connector, task).
func transactionalID(groupID string, id TaskID) string {
	return fmt.Sprintf("%s-%s-%d", groupID, id.Connector, id.Task)
}

// fence initialises the transactional producer before the task reads its
// offsets: InitProducerId bumps the epoch of the transactional.id, which
// fences any zombie instance of this task (an older worker that still
// runs it) and aborts its open transaction, so that no write of the
// zombie can land after the offsets are read.
func (w *workerSourceTask) fence(ctx context.Context) error {
	if _, _, err := w.txn.ProducerID(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return &TaskError{Task: w.id, Stage: StageTaskStart, Err: fmt.Errorf("initializing the transactional producer %s: %w", w.id, err)}
	}
	return nil
}

// pollTransactional is the poll loop under exactly-once source support.
func (w *workerSourceTask) pollTransactional(ctx context.Context) error {
	for {
		if ctx.Err() != nil {
			return nil
		}
		if w.gate != nil {
			if err := w.gate.wait(ctx); err != nil {
				return nil
			}
		}
		recs, err := w.task.Poll(ctx)
		if err != nil {
			if ctx.Err() != nil && errors.Is(err, context.Canceled) {
				return nil
			}
			return &TaskError{Task: w.id, Stage: StageTaskPoll, Err: err}
		}
		w.metrics.Polled(len(recs))
		if len(recs) == 0 {
			continue
		}
		if err := w.commitTransaction(ctx, recs); err != nil {
			if ctx.Err() != nil {
				return nil // stopping: the aborted batch is polled again on restart
			}
			return err
		}
	}
}

// commitTransaction writes recs and their offsets in one transaction and,
// once it committed, tells the task.
func (w *workerSourceTask) commitTransaction(ctx context.Context, recs []*connect.SourceRecord) error {
	if err := w.txn.BeginTransaction(); err != nil {
		return &TaskError{Task: w.id, Stage: StageKafkaProduce, Err: fmt.Errorf("beginning a transaction: %w", err)}
	}
	var (
		mu       sync.Mutex
		firstErr error
	)
	promise := func(r *kgo.Record, err error) {
		if err != nil {
			mu.Lock()
			if firstErr == nil {
				firstErr = w.produceError(r.Topic, err)
			}
			mu.Unlock()
		}
	}
	// The last offset per source partition, in order of first appearance.
	var order []string
	last := map[string]offsets.Entry{}
	topics := map[string]bool{}
	var sourceTs []int64 // of the produced records, for metrics once committed
	for _, rec := range recs {
		ts := w.metrics.Event(rec)
		out, err := w.transform(rec)
		if err != nil {
			w.abort()
			return err
		}
		if out != nil { // a dropped record still moves its partition's offset
			kr, err := w.toKafka(ctx, out, nil, nil)
			if err != nil {
				w.abort()
				return err
			}
			w.txn.Produce(ctx, kr, promise)
			topics[out.Topic] = true
			sourceTs = append(sourceTs, ts)
		}
		if rec.SourcePartition == nil {
			continue
		}
		k := partitionKey(rec.SourcePartition)
		if _, ok := last[k]; !ok {
			order = append(order, k)
		}
		last[k] = offsets.Entry{Connector: w.id.Connector, Partition: rec.SourcePartition, Offset: rec.SourceOffset}
	}
	for _, k := range order {
		key, val, err := offsets.Record(last[k])
		if err != nil {
			w.abort()
			return &TaskError{Task: w.id, Stage: StageKafkaProduce, Err: fmt.Errorf("serialising an offset: %w", err)}
		}
		w.txn.Produce(ctx, &kgo.Record{Topic: w.offsetsTopic, Key: key, Value: val}, promise)
	}
	flushErr := w.txn.Flush(ctx)
	mu.Lock()
	err := firstErr
	mu.Unlock()
	if err == nil {
		err = flushErr
	}
	if err != nil {
		w.abort()
		return &TaskError{Task: w.id, Stage: StageKafkaProduce, Err: err}
	}
	// The transaction's records and offsets durable before its commit
	// marker (an embedded broker that does not fsync each batch,
	// EmbeddedBroker.Sync): a machine crash must not keep the marker and
	// lose records it commits.
	if err := w.syncLog(); err != nil {
		w.abort()
		return &TaskError{Task: w.id, Stage: StageKafkaProduce, Err: err}
	}
	ectx, cancel := context.WithTimeout(context.Background(), w.flushTO+txnTimeout)
	defer cancel()
	if err := w.txn.EndTransaction(ectx, kgo.TryCommit); err != nil {
		w.abort()
		return &TaskError{Task: w.id, Stage: StageKafkaProduce, Err: fmt.Errorf("committing the transaction of %d record(s): %w", len(recs), err)}
	}
	// And the marker before the position is confirmed upstream: a
	// transaction left without its marker is aborted at restart
	// (broker/recovery.go).
	if err := w.syncLog(); err != nil {
		return &TaskError{Task: w.id, Stage: StageKafkaProduce, Err: err}
	}
	w.progressed.Store(true)
	w.metrics.OffsetCommit(nil)
	for _, ts := range sourceTs {
		w.metrics.Written(ts)
	}
	for t := range topics {
		w.recordActiveTopic(t)
	}
	for _, k := range order {
		e := last[k]
		// The records up to this offset and the offset itself are committed
		// in one transaction: only now may the task confirm the position
		// upstream (invariant 1).
		if err := w.task.Commit(ctx, e.Partition, e.Offset); err != nil {
			w.log.Warn("task commit", "task", w.id, "err", err)
		}
	}
	return nil
}

// abort ends the open transaction without committing it (records and
// offsets are discarded together; the batch is polled again on restart).
func (w *workerSourceTask) abort() {
	ctx, cancel := context.WithTimeout(context.Background(), w.flushTO)
	defer cancel()
	if err := w.txn.AbortBufferedRecords(ctx); err != nil {
		w.log.Warn("aborting buffered records", "task", w.id, "err", err)
	}
	if err := w.txn.EndTransaction(ctx, kgo.TryAbort); err != nil {
		w.log.Warn("aborting the transaction", "task", w.id, "err", err)
	}
}
