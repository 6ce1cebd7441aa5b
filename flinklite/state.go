package flinklite

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// StateBackend holds the keyed state of one operator as named tables of
// (encoded key → value), as Flink's KeyedStateBackend. The in-memory
// backend keeps Go values (Flink's HashMapStateBackend); an LSM backend
// (Pebble, as Flink's EmbeddedRocksDBStateBackend) stores
// codec-encoded bytes and implements the same interface.
type StateBackend interface {
	// Table returns the table called name, creating it empty. codec turns
	// its values into bytes and back (used by snapshots, and by byte-level
	// backends on every access).
	Table(name string, codec StateCodec) StateTable
	// Snapshot returns every table's content; Restore replaces it.
	Snapshot() (json.RawMessage, error)
	Restore(json.RawMessage) error
}

// StateTable is one named keyed state: key → value. Keys are the
// operator's encoded keys (see KeyBy).
type StateTable interface {
	Get(key string) (any, bool)
	Put(key string, v any)
	Delete(key string)
	Len() int
	// Range calls f for every entry until f returns false.
	Range(f func(key string, v any) bool)
}

// StateCodec converts a table's values to bytes and back.
type StateCodec struct {
	Encode func(any) ([]byte, error)
	Decode func([]byte) (any, error)
}

func jsonCodec[V any]() StateCodec {
	return StateCodec{
		Encode: func(v any) ([]byte, error) { return json.Marshal(v) },
		Decode: func(b []byte) (any, error) {
			var v V
			err := json.Unmarshal(b, &v)
			return v, err
		},
	}
}

// MemoryStateBackend keeps state as Go values in maps.
type MemoryStateBackend struct {
	tables map[string]*memoryTable
}

// NewMemoryStateBackend returns an empty in-memory backend.
func NewMemoryStateBackend() *MemoryStateBackend {
	return &MemoryStateBackend{tables: map[string]*memoryTable{}}
}

var _ StateBackend = (*MemoryStateBackend)(nil)

type memoryTable struct {
	codec StateCodec
	m     map[string]any
}

func (t *memoryTable) Get(k string) (any, bool) { v, ok := t.m[k]; return v, ok }
func (t *memoryTable) Put(k string, v any)      { t.m[k] = v }
func (t *memoryTable) Delete(k string)          { delete(t.m, k) }
func (t *memoryTable) Len() int                 { return len(t.m) }
func (t *memoryTable) Range(f func(string, any) bool) {
	for k, v := range t.m {
		if !f(k, v) {
			return
		}
	}
}

// Table implements StateBackend.
func (b *MemoryStateBackend) Table(name string, codec StateCodec) StateTable {
	t := b.tables[name]
	if t == nil {
		t = &memoryTable{codec: codec, m: map[string]any{}}
		b.tables[name] = t
	}
	return t
}

// Snapshot implements StateBackend: {"table": {"key": value, …}, …} with
// keys sorted, so equal state gives equal bytes.
func (b *MemoryStateBackend) Snapshot() (json.RawMessage, error) {
	out := map[string]map[string]json.RawMessage{}
	for name, t := range b.tables {
		m := make(map[string]json.RawMessage, len(t.m))
		for k, v := range t.m {
			enc, err := t.codec.Encode(v)
			if err != nil {
				return nil, fmt.Errorf("state %s: %w", name, err)
			}
			m[k] = enc
		}
		out[name] = m
	}
	return json.Marshal(out) // encoding/json sorts map keys
}

// Restore implements StateBackend. Tables must have been created (by the
// state descriptors of the operator's Open) before Restore.
func (b *MemoryStateBackend) Restore(raw json.RawMessage) error {
	var in map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &in); err != nil {
		return err
	}
	for name, m := range in {
		t := b.tables[name]
		if t == nil {
			return fmt.Errorf("flinklite: checkpoint has state %q the operator does not declare", name)
		}
		for k, enc := range m {
			v, err := t.codec.Decode(enc)
			if err != nil {
				return fmt.Errorf("state %s: %w", name, err)
			}
			t.m[k] = v
		}
	}
	return nil
}

// TTLConfig is the time-to-live of keyed state, as Flink's StateTtlConfig
// with UpdateType.OnCreateAndWrite, StateVisibility.NeverReturnExpired and
// the processing-time characteristic: an entry expires TTL after its last
// write (Clock time), reads never see an expired entry, and expired
// entries are removed by a background cleanup on every Env.Tick so that
// state for keys that stop appearing does not grow without bound. Zero TTL
// means no expiry. TTL applies per key (for MapState, to the whole map of
// the key, not per map entry as in Flink).
type TTLConfig struct {
	TTL time.Duration
}

type ttlEntry[V any] struct {
	V   V     `json:"v"`
	Exp int64 `json:"exp,omitempty"` // unix ms, 0 = never
}

type expiry struct {
	key string
	exp int64
}

// ttlTable wraps a StateTable with expiry; its cleanup queue is ordered by
// expiry because the TTL is constant and the clock monotonic.
type ttlTable[V any] struct {
	rc    *RuntimeContext
	t     StateTable
	ttl   int64
	queue []expiry
	head  int
}

func newTTLTable[V any](rc *RuntimeContext, name string, cfg TTLConfig) *ttlTable[V] {
	tt := &ttlTable[V]{rc: rc, t: rc.backend.Table(name, jsonCodec[ttlEntry[V]]()), ttl: cfg.TTL.Milliseconds()}
	if tt.ttl > 0 {
		rc.cleanups = append(rc.cleanups, tt)
	}
	return tt
}

func (tt *ttlTable[V]) get() (V, bool) {
	var zero V
	raw, ok := tt.t.Get(tt.rc.key)
	if !ok {
		return zero, false
	}
	e := raw.(ttlEntry[V])
	if e.Exp != 0 && e.Exp <= tt.rc.now() {
		tt.t.Delete(tt.rc.key)
		tt.rc.env.metrics.StateEntriesExpired++
		return zero, false
	}
	return e.V, true
}

func (tt *ttlTable[V]) put(v V) {
	e := ttlEntry[V]{V: v}
	if tt.ttl > 0 {
		e.Exp = tt.rc.now() + tt.ttl
		tt.queue = append(tt.queue, expiry{tt.rc.key, e.Exp})
	}
	tt.t.Put(tt.rc.key, e)
}

func (tt *ttlTable[V]) clear() { tt.t.Delete(tt.rc.key) }

func (tt *ttlTable[V]) cleanup(now int64) {
	for tt.head < len(tt.queue) && tt.queue[tt.head].exp <= now {
		q := tt.queue[tt.head]
		tt.head++
		if raw, ok := tt.t.Get(q.key); ok && raw.(ttlEntry[V]).Exp <= now {
			tt.t.Delete(q.key)
			tt.rc.env.metrics.StateEntriesExpired++
		}
	}
	if tt.head > 1024 && tt.head*2 > len(tt.queue) {
		tt.queue = append(tt.queue[:0], tt.queue[tt.head:]...)
		tt.head = 0
	}
}

// rebuildQueue refills the cleanup queue after a restore.
func (tt *ttlTable[V]) rebuildQueue() {
	tt.queue, tt.head = tt.queue[:0], 0
	tt.t.Range(func(k string, v any) bool {
		if e := v.(ttlEntry[V]); e.Exp != 0 {
			tt.queue = append(tt.queue, expiry{k, e.Exp})
		}
		return true
	})
	sort.Slice(tt.queue, func(i, j int) bool { return tt.queue[i].exp < tt.queue[j].exp })
}

type cleaner interface {
	cleanup(now int64)
	rebuildQueue()
}

// ValueState is one value per key (Flink's ValueState).
type ValueState[V any] struct{ t *ttlTable[V] }

// NewValueState declares a value state called name; call it from Open.
func NewValueState[V any](rc *RuntimeContext, name string, ttl TTLConfig) *ValueState[V] {
	return &ValueState[V]{t: newTTLTable[V](rc, name, ttl)}
}

// Value returns the current key's value and whether it is set (and not
// expired).
func (s *ValueState[V]) Value() (V, bool) { return s.t.get() }

// Update sets the current key's value (and restarts its TTL).
func (s *ValueState[V]) Update(v V) { s.t.put(v) }

// Clear removes the current key's value.
func (s *ValueState[V]) Clear() { s.t.clear() }

// ListState is a list per key (Flink's ListState).
type ListState[V any] struct{ t *ttlTable[[]V] }

// NewListState declares a list state called name; call it from Open.
func NewListState[V any](rc *RuntimeContext, name string, ttl TTLConfig) *ListState[V] {
	return &ListState[V]{t: newTTLTable[[]V](rc, name, ttl)}
}

// Get returns the current key's list (nil if none).
func (s *ListState[V]) Get() []V { l, _ := s.t.get(); return l }

// Add appends v to the current key's list.
func (s *ListState[V]) Add(v V) { l, _ := s.t.get(); s.t.put(append(l, v)) }

// Update replaces the current key's list.
func (s *ListState[V]) Update(l []V) { s.t.put(l) }

// Clear removes the current key's list.
func (s *ListState[V]) Clear() { s.t.clear() }

// MapState is a map per key (Flink's MapState). UK must be a string or
// integer type to be checkpointed.
type MapState[UK comparable, UV any] struct{ t *ttlTable[map[UK]UV] }

// NewMapState declares a map state called name; call it from Open.
func NewMapState[UK comparable, UV any](rc *RuntimeContext, name string, ttl TTLConfig) *MapState[UK, UV] {
	return &MapState[UK, UV]{t: newTTLTable[map[UK]UV](rc, name, ttl)}
}

// Get returns the current key's value for uk.
func (s *MapState[UK, UV]) Get(uk UK) (UV, bool) {
	m, _ := s.t.get()
	v, ok := m[uk]
	return v, ok
}

// Put sets uk to v for the current key.
func (s *MapState[UK, UV]) Put(uk UK, v UV) {
	m, _ := s.t.get()
	if m == nil {
		m = map[UK]UV{}
	}
	m[uk] = v
	s.t.put(m)
}

// Remove deletes uk for the current key.
func (s *MapState[UK, UV]) Remove(uk UK) {
	m, ok := s.t.get()
	if !ok {
		return
	}
	delete(m, uk)
	if len(m) == 0 {
		s.t.clear()
		return
	}
	s.t.put(m)
}

// Entries returns the current key's map (do not modify it).
func (s *MapState[UK, UV]) Entries() map[UK]UV { m, _ := s.t.get(); return m }

// Clear removes the current key's map.
func (s *MapState[UK, UV]) Clear() { s.t.clear() }
