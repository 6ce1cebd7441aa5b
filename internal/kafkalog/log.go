// Package kafkalog is Kafka Connect's KafkaBasedLog: a compacted topic read
// from the beginning into memory, kept up to date by a tailing consumer,
// and written through an idempotent producer that waits for acks=all.
// The config, status and offset stores are built on it, so that the embedded
// broker and a real cluster share one code path and several workers share
// state.
package kafkalog

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Record is one key/value read from the log. A nil Value is a tombstone.
type Record struct {
	Key, Value []byte
	Partition  int32
	Offset     int64
}

// Log is one compacted topic.
type Log struct {
	topic    string
	producer *kgo.Client
	consumer *kgo.Client
	admin    *kadm.Client
	onRecord func(Record)
	// readCommitted: consume with isolation.level=read_committed and count
	// "the end" as the last stable offset.
	readCommitted bool

	mu       sync.Mutex
	read     map[int32]int64 // next offset to read per partition
	readCond *sync.Cond

	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// TopicSpec says how to create the topic when it is missing.
type TopicSpec struct {
	Partitions        int32
	ReplicationFactor int16 // -1 = broker default
	// ReadCommitted reads only committed transactional records and makes
	// ReadToEnd wait for the last stable offset, not the high watermark
	// (KafkaBasedLog's consumer with isolation.level=read_committed, which
	// Kafka Connect uses for the offsets topic under exactly-once source
	// support, where offsets are written inside the tasks' transactions).
	ReadCommitted bool
}

// Open creates the topic (compacted) if missing, reads it to the end calling
// onRecord for each record in order, then keeps tailing it in the
// background. onRecord is called from one goroutine at a time.
func Open(ctx context.Context, brokers []string, topic string, spec TopicSpec, onRecord func(Record), opts ...kgo.Opt) (*Log, error) {
	base := append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)
	producer, err := kgo.NewClient(append(base,
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerLinger(0),
		kgo.RecordPartitioner(kgo.StickyKeyPartitioner(nil)),
	)...)
	if err != nil {
		return nil, err
	}
	admin := kadm.NewClient(producer)
	if err := ensureTopic(ctx, admin, topic, spec); err != nil {
		producer.Close()
		return nil, err
	}
	copts := append(base,
		kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchMaxWait(200*time.Millisecond),
		// Transaction markers occupy offsets: the tail sees them so that
		// its position passes them, as a Java consumer's position does.
		kgo.KeepControlRecords(),
	)
	if spec.ReadCommitted {
		copts = append(copts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	consumer, err := kgo.NewClient(copts...)
	if err != nil {
		producer.Close()
		return nil, err
	}
	l := &Log{topic: topic, producer: producer, consumer: consumer, admin: admin, onRecord: onRecord, readCommitted: spec.ReadCommitted, read: map[int32]int64{}, done: make(chan struct{})}
	l.readCond = sync.NewCond(&l.mu)
	tctx, cancel := context.WithCancel(context.Background())
	l.cancel = cancel
	go l.tail(tctx)
	if err := l.ReadToEnd(ctx); err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// unknownTopicRetry bounds how long ReadToEnd retries the end offsets of
// a topic the brokers do not know yet.
const unknownTopicRetry = 30 * time.Second

func ensureTopic(ctx context.Context, admin *kadm.Client, topic string, spec TopicSpec) error {
	rf := spec.ReplicationFactor
	if rf == 0 {
		rf = -1
	}
	cleanup := "compact"
	resp, err := admin.CreateTopic(ctx, spec.Partitions, rf, map[string]*string{"cleanup.policy": &cleanup}, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("kafkalog: create topic %s: %w", topic, err)
	}
	return nil
}

func (l *Log) tail(ctx context.Context) {
	defer close(l.done)
	for {
		fetches := l.consumer.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		if errs := fetches.Errors(); len(errs) > 0 {
			for _, e := range errs {
				if errors.Is(e.Err, context.Canceled) {
					return
				}
			}
			// Transient fetch errors are retried by the client; keep polling.
		}
		fetches.EachRecord(func(r *kgo.Record) {
			if !r.Attrs.IsControl() {
				l.onRecord(Record{Key: r.Key, Value: r.Value, Partition: r.Partition, Offset: r.Offset})
			}
			l.mu.Lock()
			l.read[r.Partition] = r.Offset + 1
			l.readCond.Broadcast()
			l.mu.Unlock()
		})
	}
}

// ReadToEnd blocks until every record that was in the topic when it was
// called has been passed to onRecord (KafkaBasedLog#readToEnd).
func (l *Log) ReadToEnd(ctx context.Context) error {
	list := l.admin.ListEndOffsets
	if l.readCommitted {
		list = l.admin.ListCommittedOffsets
	}
	// A topic just created may not be known to every broker yet (topic
	// creation is asynchronous in Kafka): UNKNOWN_TOPIC_OR_PARTITION is
	// retried for a while, as KafkaBasedLog's TopicAdmin.retryEndOffsets
	// does.
	var ends kadm.ListedOffsets
	for wait := time.Now().Add(unknownTopicRetry); ; {
		var err error
		ends, err = list(ctx, l.topic)
		if err == nil {
			err = ends.Error()
		}
		if err == nil {
			break
		}
		if !errors.Is(err, kerr.UnknownTopicOrPartition) || time.Now().After(wait) || ctx.Err() != nil {
			return fmt.Errorf("kafkalog: end offsets of %s: %w", l.topic, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	want := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
		}
	})
	stop := context.AfterFunc(ctx, func() {
		l.mu.Lock()
		l.readCond.Broadcast()
		l.mu.Unlock()
	})
	defer stop()
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		caught := true
		for p, end := range want {
			if l.read[p] < end {
				caught = false
				break
			}
		}
		if caught {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("kafkalog: read %s to end: %w", l.topic, err)
		}
		l.readCond.Wait()
	}
}

// Position returns the next offset to read in partition: every record
// before it has been passed to onRecord.
func (l *Log) Position(partition int32) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.read[partition]
}

// Topic returns the topic's name.
func (l *Log) Topic() string { return l.topic }

// Send writes key/value and returns once the broker acknowledged it with
// acks=all. A nil value writes a tombstone.
func (l *Log) Send(ctx context.Context, key, value []byte) error {
	res := l.producer.ProduceSync(ctx, &kgo.Record{Topic: l.topic, Key: key, Value: value})
	if err := res.FirstErr(); err != nil {
		return fmt.Errorf("kafkalog: write to %s: %w", l.topic, err)
	}
	return nil
}

// SendBatch writes records and returns once all were acknowledged.
func (l *Log) SendBatch(ctx context.Context, recs []Record) error {
	krs := make([]*kgo.Record, len(recs))
	for i, r := range recs {
		krs[i] = &kgo.Record{Topic: l.topic, Key: r.Key, Value: r.Value}
	}
	if err := l.producer.ProduceSync(ctx, krs...).FirstErr(); err != nil {
		return fmt.Errorf("kafkalog: write to %s: %w", l.topic, err)
	}
	return nil
}

// Close stops tailing and closes the clients.
func (l *Log) Close() {
	l.cancel()
	<-l.done
	l.consumer.Close()
	l.producer.Close()
}
