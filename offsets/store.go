// Package offsets stores source offsets in Kafka Connect's format: in the
// offsets topic, the key is the JSON array [connectorName, sourcePartition]
// and the value the JSON object of the source offset, both written as
// JsonConverter with schemas.enable=false writes them
// (org.apache.kafka.connect.storage.OffsetStorageWriter). A null value
// deletes the offset (KIP-875). Because the format is Kafka Connect's, a
// user can move a Debezium connector between Kafka Connect and connectd.
package offsets

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/connectd/connectd/internal/javamap"
	"github.com/connectd/connectd/internal/kafkalog"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Entry is one source partition's offset to store. A nil Offset deletes it.
type Entry struct {
	Connector string
	Partition map[string]any
	Offset    map[string]any
}

// Store reads and writes source offsets.
type Store interface {
	// Get returns the offset of partition for connector, or nil.
	Get(ctx context.Context, connector string, partition map[string]any) (map[string]any, error)
	// Put stores entries; when it returns nil they are durable (acks=all).
	Put(ctx context.Context, entries []Entry) error
	// Partitions returns every stored partition of connector with its offset.
	Partitions(connector string) []Entry
}

// Key returns the offsets-topic key for connector and partition:
// ["connector",{"k":"v"}] in compact JSON.
func Key(connector string, partition map[string]any) ([]byte, error) {
	return marshal([]any{connector, partition})
}

func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := encode(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// encode writes v as compact JSON; a map's keys come in the order
// JsonConverter iterates the java.util.HashMap Debezium builds (see
// insertionOrder), so the bytes are Kafka Connect's.
func encode(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case map[string]any:
		b.WriteByte('{')
		for i, k := range javamap.Order(insertionOrder(x)) {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encode(b, k); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := encode(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encode(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	}
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

// debeziumPutOrder ranks the offset keys in the order Debezium 3.6 puts
// them into a new HashMap: PostgresOffsetContext.getOffset (ts_usec, txId,
// lsn, xmin, snapshot keys, lsn_proc, lsn_commit, messageType),
// MySqlOffsetContext/BinlogOffsetContext (the MySQL and MariaDB keys), then
// TransactionContext.store (transaction_id, then one count per collection)
// and the incremental snapshot context's keys. Only keys that share a
// bucket depend on it; the golden test over every Debezium capture checks
// it.
var debeziumPutOrder = map[string]int{}

func init() {
	for i, k := range []string{
		// PostgreSQL
		"ts_usec", "txId", "lsn", "xmin", "snapshot", "last_snapshot_record", "snapshot_completed",
		"lsn_proc", "lsn_commit", "messageType",
		// MySQL / MariaDB
		"ts_sec", "file", "pos", "gtids", "row", "server_id", "event",
		// transaction metadata, incremental snapshots
		"transaction_id",
	} {
		debeziumPutOrder[k] = i + 1
	}
}

const collectionOrderPrefix = "transaction_data_collection_order_" // txmeta.OffsetCollectionOrderPrefix

// insertionOrder returns m's keys in the order Debezium puts them (other
// keys after, in name order). The per-collection counts of a transaction
// come in the order of TransactionContext's own HashMap of the collections.
func insertionOrder(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	var colls []string
	for k := range m {
		if c, ok := strings.CutPrefix(k, collectionOrderPrefix); ok {
			colls = append(colls, c)
			continue
		}
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := debeziumPutOrder[keys[i]], debeziumPutOrder[keys[j]]
		if ri == 0 || rj == 0 {
			if ri != rj {
				return ri != 0
			}
			return keys[i] < keys[j]
		}
		return ri < rj
	})
	if len(colls) == 0 {
		return keys
	}
	sort.Strings(colls)
	var out []string
	for _, k := range keys {
		if debeziumPutOrder[k] == 0 && colls != nil {
			out = appendCollections(out, colls)
			colls = nil
		}
		out = append(out, k)
		if k == "transaction_id" {
			out = appendCollections(out, colls)
			colls = nil
		}
	}
	return appendCollections(out, colls)
}

func appendCollections(out, colls []string) []string {
	for _, c := range javamap.Order(colls) {
		out = append(out, collectionOrderPrefix+c)
	}
	return out
}

// KafkaStore is a Store over the offsets topic.
type KafkaStore struct {
	log *kafkalog.Log

	mu   sync.RWMutex
	data map[string][]byte // key JSON -> value JSON
}

var _ Store = (*KafkaStore)(nil)

// OpenKafka opens (creating if missing) the offsets topic and reads it.
func OpenKafka(ctx context.Context, brokers []string, topic string, partitions int32, rf int16, opts ...kgo.Opt) (*KafkaStore, error) {
	s := &KafkaStore{data: map[string][]byte{}}
	// read_committed: under exactly-once source support, offsets are
	// written inside the tasks' transactions; an aborted one must not count.
	l, err := kafkalog.Open(ctx, brokers, topic, kafkalog.TopicSpec{Partitions: partitions, ReplicationFactor: rf, ReadCommitted: true}, s.apply, opts...)
	if err != nil {
		return nil, err
	}
	s.log = l
	return s, nil
}

func (s *KafkaStore) apply(r kafkalog.Record) {
	k, err := canonical(r.Key)
	if err != nil {
		return // not an offset key; Kafka Connect logs and skips these too
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.Value == nil {
		delete(s.data, k)
		return
	}
	s.data[k] = r.Value
}

// canonical re-encodes a key so that keys written by other implementations
// (other map orders or spacing) compare equal.
func canonical(key []byte) (string, error) {
	var v []any
	if err := json.Unmarshal(key, &v); err != nil || len(v) != 2 {
		return "", fmt.Errorf("offsets: bad key %q", key)
	}
	b, err := marshal(v)
	return string(b), err
}

// Get implements Store.
func (s *KafkaStore) Get(ctx context.Context, connector string, partition map[string]any) (map[string]any, error) {
	if err := s.log.ReadToEnd(ctx); err != nil {
		return nil, err
	}
	k, err := Key(connector, partition)
	if err != nil {
		return nil, err
	}
	ck, err := canonical(k)
	if err != nil {
		return nil, err
	}
	s.mu.RLock()
	v, ok := s.data[ck]
	s.mu.RUnlock()
	if !ok {
		return nil, nil
	}
	var off map[string]any
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if err := dec.Decode(&off); err != nil {
		return nil, fmt.Errorf("offsets: bad value for %s: %w", k, err)
	}
	return normalize(off), nil
}

// Record returns the offsets-topic key and value of e (a nil value for a
// nil Offset), as OffsetStorageWriter serialises them.
func Record(e Entry) (key, value []byte, err error) {
	if key, err = Key(e.Connector, e.Partition); err != nil {
		return nil, nil, err
	}
	if e.Offset != nil {
		if value, err = marshal(e.Offset); err != nil {
			return nil, nil, err
		}
	}
	return key, value, nil
}

// Topic returns the offsets topic's name (exactly-once source tasks write
// their offsets to it in their own transactions).
func (s *KafkaStore) Topic() string { return s.log.Topic() }

// Put implements Store.
func (s *KafkaStore) Put(ctx context.Context, entries []Entry) error {
	recs := make([]kafkalog.Record, 0, len(entries))
	for _, e := range entries {
		k, v, err := Record(e)
		if err != nil {
			return err
		}
		recs = append(recs, kafkalog.Record{Key: k, Value: v})
	}
	if err := s.log.SendBatch(ctx, recs); err != nil {
		return err
	}
	for _, r := range recs {
		s.apply(r)
	}
	return nil
}

// Partitions implements Store.
func (s *KafkaStore) Partitions(connector string) []Entry {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []Entry
	for k, v := range s.data {
		var key []any
		if json.Unmarshal([]byte(k), &key) != nil || len(key) != 2 || key[0] != connector {
			continue
		}
		p, _ := key[1].(map[string]any)
		var off map[string]any
		d := json.NewDecoder(bytes.NewReader(v))
		d.UseNumber()
		if d.Decode(&off) != nil {
			continue
		}
		out = append(out, Entry{Connector: connector, Partition: p, Offset: normalize(off)})
	}
	return out
}

// Close closes the underlying log.
func (s *KafkaStore) Close() { s.log.Close() }

// normalize turns JSON numbers into int64 when integral, else float64, so
// that tasks see the types they wrote.
func normalize(m map[string]any) map[string]any {
	for k, v := range m {
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				m[k] = i
			} else if f, err := n.Float64(); err == nil {
				m[k] = f
			}
		}
	}
	return m
}

// ReadToEnd waits until every offset written before the call has been read
// (so that Partitions sees writes by other workers).
func (s *KafkaStore) ReadToEnd(ctx context.Context) error { return s.log.ReadToEnd(ctx) }
