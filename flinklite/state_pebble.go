package flinklite

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/cockroachdb/pebble"
)

// PebbleStateBackend keeps keyed state in a Pebble LSM store on disk (as
// Flink's EmbeddedRocksDBStateBackend), so that state can outgrow memory:
// values are codec-encoded bytes under the key "<table>\x00<key>", and
// every Get decodes them (slower than MemoryStateBackend, bounded by the
// block cache instead of the heap). Writes skip the write-ahead log: the
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
	return &PebbleStateBackend{db: db, dir: dir, tables: map[string]*pebbleTable{}}, nil
}

// Close closes the store (its files stay until the next open).
func (b *PebbleStateBackend) Close() error { return b.db.Close() }

type pebbleTable struct {
	db     *pebble.DB
	prefix []byte
	codec  StateCodec
	n      int
}

var _ StateTable = (*pebbleTable)(nil)

// Table implements StateBackend.
func (b *PebbleStateBackend) Table(name string, codec StateCodec) StateTable {
	t := b.tables[name]
	if t == nil {
		t = &pebbleTable{db: b.db, prefix: append([]byte(name), 0), codec: codec}
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
	b, ok := t.raw(k)
	if !ok {
		return nil, false
	}
	v, err := t.codec.Decode(b)
	if err != nil {
		panic(fmt.Errorf("flinklite: Pebble state decode: %w", err))
	}
	return v, true
}

// Put implements StateTable.
func (t *pebbleTable) Put(k string, v any) {
	b, err := t.codec.Encode(v)
	if err != nil {
		panic(fmt.Errorf("flinklite: Pebble state encode: %w", err))
	}
	if _, ok := t.raw(k); !ok {
		t.n++
	}
	if err := t.db.Set(t.key(k), b, pebble.NoSync); err != nil {
		panic(fmt.Errorf("flinklite: Pebble state write: %w", err))
	}
}

// Delete implements StateTable.
func (t *pebbleTable) Delete(k string) {
	if _, ok := t.raw(k); !ok {
		return
	}
	t.n--
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
