package flinklite

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/cockroachdb/pebble"
)

// PebbleStateBackend keeps keyed state in a Pebble LSM store on disk (as
// Flink's EmbeddedRocksDBStateBackend), so that state can outgrow memory:
// values are codec-encoded bytes under the key "<table>\x00<key>".
//
// Each table has a write-back cache of decoded Go values (at most
// CacheEntries entries, as RocksDB's memtable and block cache in front of
// its files): Get and Put of a cached key neither read the store nor
// decode or encode; a Put marks the entry dirty. When the cache is full,
// its dirty entries are encoded and written in one batch and the cache is
// emptied; Range, Snapshot and Close write the dirty entries first. So a
// hot working set costs map lookups, and only state beyond the cache pays
// a Pebble read and a decode. Values held in the cache are shared with the
// caller, as in MemoryStateBackend. Writes skip the write-ahead log: the
// durable copy of the state is the checkpoint, and the store is emptied
// when opened, as Flink's RocksDB working directory is a local, disposable
// copy rebuilt from the checkpoint on restore.
//
// Snapshot writes the same canonical JSON as MemoryStateBackend (Flink's
// canonical savepoint format), so a checkpoint of either backend restores
// into the other; it reads the whole store (no incremental checkpoints).
// Errors of the store (disk full, I/O) panic inside StateTable methods,
// which have no error result; Snapshot and Restore return them.
type PebbleStateBackend struct {
	db     *pebble.DB
	dir    string
	tables map[string]*pebbleTable
	// CacheEntries bounds each table's write-back cache (entries); set it
	// before the first Table call. NewPebbleStateBackend sets 65536;
	// ≤ 0 disables the cache (every access reads and decodes).
	CacheEntries int
}

// cachedValue is one entry of a table's write-back cache; deleted marks a
// Delete not yet written to the store.
type cachedValue struct {
	v       any
	dirty   bool
	deleted bool
}

var _ StateBackend = (*PebbleStateBackend)(nil)

// NewPebbleStateBackend opens an empty store in dir (its previous content
// is removed). Close it when the job ends. Errors: dir's, Pebble's.
func NewPebbleStateBackend(dir string) (*PebbleStateBackend, error) {
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	// No WAL: the store is rebuilt from the checkpoint after a crash.
	db, err := pebble.Open(dir, &pebble.Options{DisableWAL: true})
	if err != nil {
		return nil, fmt.Errorf("flinklite: opening Pebble state in %s: %w", dir, err)
	}
	return &PebbleStateBackend{db: db, dir: dir, tables: map[string]*pebbleTable{}, CacheEntries: 1 << 16}, nil
}

// Close writes the cached state and closes the store (its files stay until
// the next open).
func (b *PebbleStateBackend) Close() error {
	for _, t := range b.tables {
		t.flush()
	}
	return b.db.Close()
}

type pebbleTable struct {
	db       *pebble.DB
	prefix   []byte
	codec    StateCodec
	n        int
	cache    map[string]cachedValue
	maxCache int
}

// flush writes the dirty cache entries to the store in one batch.
func (t *pebbleTable) flush() {
	batch := t.db.NewBatch()
	defer batch.Close()
	for k, c := range t.cache {
		if !c.dirty {
			continue
		}
		var err error
		if c.deleted {
			err = batch.Delete(t.key(k), nil)
			delete(t.cache, k)
		} else {
			var b []byte
			if b, err = t.codec.Encode(c.v); err != nil {
				panic(fmt.Errorf("flinklite: Pebble state encode: %w", err))
			}
			err = batch.Set(t.key(k), b, nil)
			t.cache[k] = cachedValue{v: c.v}
		}
		if err != nil {
			panic(fmt.Errorf("flinklite: Pebble state write: %w", err))
		}
	}
	if batch.Empty() {
		return
	}
	if err := batch.Commit(pebble.NoSync); err != nil {
		panic(fmt.Errorf("flinklite: Pebble state write: %w", err))
	}
}

// remember caches v for k, first writing and emptying a full cache.
func (t *pebbleTable) remember(k string, c cachedValue) {
	if _, ok := t.cache[k]; !ok && len(t.cache) >= t.maxCache {
		t.flush()
		clear(t.cache)
	}
	t.cache[k] = c
}

var _ StateTable = (*pebbleTable)(nil)

// Table implements StateBackend.
func (b *PebbleStateBackend) Table(name string, codec StateCodec) StateTable {
	t := b.tables[name]
	if t == nil {
		t = &pebbleTable{db: b.db, prefix: append([]byte(name), 0), codec: codec, cache: map[string]cachedValue{}, maxCache: b.CacheEntries}
		b.tables[name] = t
	}
	return t
}

func (t *pebbleTable) key(k string) []byte {
	return append(append(make([]byte, 0, len(t.prefix)+len(k)), t.prefix...), k...)
}

func (t *pebbleTable) raw(k string) ([]byte, bool) {
	v, closer, err := t.db.Get(t.key(k))
	if err == pebble.ErrNotFound {
		return nil, false
	}
	if err != nil {
		panic(fmt.Errorf("flinklite: Pebble state read: %w", err))
	}
	out := append([]byte(nil), v...)
	closer.Close()
	return out, true
}

// Get implements StateTable.
func (t *pebbleTable) Get(k string) (any, bool) {
	if c, ok := t.cache[k]; ok {
		return c.v, !c.deleted
	}
	b, ok := t.raw(k)
	if !ok {
		return nil, false
	}
	v, err := t.codec.Decode(b)
	if err != nil {
		panic(fmt.Errorf("flinklite: Pebble state decode: %w", err))
	}
	if t.maxCache > 0 {
		t.remember(k, cachedValue{v: v})
	}
	return v, true
}

// exists reports whether k has a value, cached or stored.
func (t *pebbleTable) exists(k string) bool {
	if c, ok := t.cache[k]; ok {
		return !c.deleted
	}
	_, ok := t.raw(k)
	return ok
}

// Put implements StateTable.
func (t *pebbleTable) Put(k string, v any) {
	if !t.exists(k) {
		t.n++
	}
	if t.maxCache > 0 {
		t.remember(k, cachedValue{v: v, dirty: true})
		return
	}
	b, err := t.codec.Encode(v)
	if err != nil {
		panic(fmt.Errorf("flinklite: Pebble state encode: %w", err))
	}
	if err := t.db.Set(t.key(k), b, pebble.NoSync); err != nil {
		panic(fmt.Errorf("flinklite: Pebble state write: %w", err))
	}
}

// Delete implements StateTable.
func (t *pebbleTable) Delete(k string) {
	if !t.exists(k) {
		return
	}
	t.n--
	if t.maxCache > 0 {
		t.remember(k, cachedValue{dirty: true, deleted: true})
		return
	}
	if err := t.db.Delete(t.key(k), pebble.NoSync); err != nil {
		panic(fmt.Errorf("flinklite: Pebble state delete: %w", err))
	}
}

// Len implements StateTable (a counter kept by Put and Delete).
func (t *pebbleTable) Len() int { return t.n }

func (t *pebbleTable) bounds() *pebble.IterOptions {
	upper := append([]byte(nil), t.prefix...)
	upper[len(upper)-1] = 1 // name\x01: just past every name\x00…
	return &pebble.IterOptions{LowerBound: t.prefix, UpperBound: upper}
}

// Range implements StateTable, in key order. f must not write the table.
func (t *pebbleTable) Range(f func(string, any) bool) {
	t.flush()
	it, err := t.db.NewIter(t.bounds())
	if err != nil {
		panic(fmt.Errorf("flinklite: Pebble state scan: %w", err))
	}
	defer it.Close()
	for it.First(); it.Valid(); it.Next() {
		v, err := t.codec.Decode(it.Value())
		if err != nil {
			panic(fmt.Errorf("flinklite: Pebble state decode: %w", err))
		}
		if !f(string(it.Key()[len(t.prefix):]), v) {
			return
		}
	}
}

// Snapshot implements StateBackend with MemoryStateBackend's format.
func (b *PebbleStateBackend) Snapshot() (json.RawMessage, error) {
	out := map[string]map[string]json.RawMessage{}
	for name, t := range b.tables {
		t.flush()
		m := make(map[string]json.RawMessage, t.n)
		it, err := b.db.NewIter(t.bounds())
		if err != nil {
			return nil, err
		}
		for it.First(); it.Valid(); it.Next() {
			m[string(it.Key()[len(t.prefix):])] = append(json.RawMessage(nil), it.Value()...)
		}
		if err := it.Close(); err != nil {
			return nil, fmt.Errorf("state %s: %w", name, err)
		}
		out[name] = m
	}
	return json.Marshal(out)
}

// Restore implements StateBackend: each table of raw replaces the table's
// content. Tables must have been created before Restore.
func (b *PebbleStateBackend) Restore(raw json.RawMessage) error {
	var in map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &in); err != nil {
		return err
	}
	for name, m := range in {
		t := b.tables[name]
		if t == nil {
			return fmt.Errorf("flinklite: checkpoint has state %q the operator does not declare", name)
		}
		clear(t.cache)
		o := t.bounds()
		batch := b.db.NewBatch()
		if err := batch.DeleteRange(o.LowerBound, o.UpperBound, nil); err != nil {
			return err
		}
		for k, enc := range m {
			if _, err := t.codec.Decode(enc); err != nil {
				return fmt.Errorf("state %s: %w", name, err)
			}
			if err := batch.Set(t.key(k), enc, nil); err != nil {
				return err
			}
		}
		if err := batch.Commit(pebble.NoSync); err != nil {
			return fmt.Errorf("state %s: %w", name, err)
		}
		t.n = len(m)
	}
	return nil
}
