// Package incsnap runs Debezium's incremental snapshot (the DBLog watermark
// algorithm of io.debezium.pipeline.source.snapshot.incremental.
// AbstractIncrementalSnapshotChangeEventSource and
// SignalBasedIncrementalSnapshotChangeEventSource) for any relational
// connector, which supplies the database side through Source.
//
// Algorithm, per chunk: insert a snapshot-window-open row into the signal
// table, read up to incremental.snapshot.chunk.size rows ordered by key after
// the previous chunk's last key (and at most the table's maximum key taken
// when the table's snapshot began) into the window buffer, insert a
// snapshot-window-close row. The connector's stream reads both rows back in
// commit order: between them (window open), every streamed change of the
// table removes its key from the buffer, since the streamed event is at
// least as new as the row read; at the close row the rows left in the buffer
// are emitted (op "r", source.snapshot "incremental") and the next chunk is
// read. So no emitted row is older than an event emitted before it.
//
// Concurrency: a Snapshotter belongs to the connector's stream reader; every
// method must be called from that one goroutine.
//
// Offsets: while a snapshot runs, every offset the connector writes carries
// Store's four keys, exactly as Debezium's AbstractIncrementalSnapshotContext.
// store: incremental_snapshot_primary_key (last key emitted) and
// incremental_snapshot_maximum_key (hex Java serializations of Object[], see
// EncodeKey), incremental_snapshot_collections (JSON list of the tables still
// to snapshot) and incremental_snapshot_correlation_id. Load restores them and
// Init, called when streaming starts, reads the next chunk: a restarted task
// resumes after the last key it emitted.
package incsnap

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connectors/internal/signal"
	"github.com/google/uuid"
)

// Offset keys, as AbstractIncrementalSnapshotContext (Debezium 3.6).
const (
	OffPrimaryKey    = "incremental_snapshot_primary_key"
	OffMaximumKey    = "incremental_snapshot_maximum_key"
	OffCollections   = "incremental_snapshot_collections"
	OffCorrelationID = "incremental_snapshot_correlation_id"

	collID        = "incremental_snapshot_collections_id"
	collCondition = "incremental_snapshot_collections_additional_condition"
	collSurrogate = "incremental_snapshot_collections_surrogate_key"
)

// DefaultChunkSize is incremental.snapshot.chunk.size's default.
const DefaultChunkSize = 1024

// Collection is a table queued for the snapshot: its id ("<schema>.<table>"),
// the additional condition (a SQL boolean expression, "" = none) and the
// surrogate key column ("" = the primary key).
type Collection struct {
	ID                  string
	AdditionalCondition string
	SurrogateKey        string
}

// Row is one row of a chunk.
type Row struct {
	Key   []any  // chunk key values, in key column order (int16, int32, int64, string, bool)
	Ident string // identity matched against streamed events (Snapshotter.Dedup)
	Value any    // the connector's row, handed back to Source.Emit
}

// Source is the database side of an incremental snapshot.
type Source interface {
	// MaxKey returns the largest chunk key of c's rows that satisfy its
	// condition, nil when there are none.
	MaxKey(ctx context.Context, c Collection) ([]any, error)
	// Chunk returns at most limit rows of c, in key order, with
	// after < key <= max (after nil = from the first row).
	Chunk(ctx context.Context, c Collection, after, max []any, limit int) ([]Row, error)
	// Watermark inserts (id, type, data) into the signal table and commits.
	Watermark(ctx context.Context, id, typ, data string) error
	// Emit queues the snapshot record of row. Store already returns the
	// offset state that includes row's key.
	Emit(ctx context.Context, c Collection, row Row) error
}

// Snapshotter is the state of one connector's incremental snapshot.
type Snapshotter struct {
	src       Source
	chunkSize int
	now       func() time.Time
	logf      func(format string, args ...any)

	colls         []Collection // head = table being snapshotted
	lastKeySent   []any        // key of the last row emitted
	chunkEnd      []any        // key after which the next chunk starts
	maxKey        []any        // table's maximum key when its snapshot began
	correlationID *string

	chunkID    string // "" until a chunk is read
	openTs     time.Time
	windowOpen bool
	paused     bool
	window     []Row
	index      map[string]int // Ident → position in window
	removed    []bool

	rowsScanned int64 // rows of the current table read so far (for notifications)

	// Notify, when set, receives Debezium's incremental snapshot
	// notifications (IncrementalSnapshotNotificationService): the
	// snapshot's correlation id (the execute-snapshot signal's id, "" =
	// none), the type (STARTED, PAUSED, RESUMED, ABORTED, IN_PROGRESS,
	// TABLE_SCAN_COMPLETED, COMPLETED) and the additional data without
	// connector_name. An error ends the operation that notified.
	Notify func(ctx context.Context, id, typ string, data map[string]string) error
}

// notify calls Notify, when set.
func (s *Snapshotter) notify(ctx context.Context, typ string, data map[string]string) error {
	if s.Notify == nil {
		return nil
	}
	id := ""
	if s.correlationID != nil {
		id = *s.correlationID
	}
	return s.Notify(ctx, id, typ, data)
}

// collectionIDs is a notification's data_collections: the queued tables'
// ids joined by ',' (Debezium's LIST_DELIMITER).
func collectionIDs(colls []Collection) string {
	ids := make([]string, len(colls))
	for i, c := range colls {
		ids[i] = c.ID
	}
	return strings.Join(ids, ",")
}

// keyString renders a chunk key as Debezium's notifications do: its values
// joined by ','.
func keyString(k []any) string {
	parts := make([]string, len(k))
	for i, v := range k {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ",")
}

// New returns an idle Snapshotter reading chunks of chunkSize rows from src.
// logf receives informational messages (nil = none).
func New(src Source, chunkSize int, logf func(string, ...any)) *Snapshotter {
	if chunkSize <= 0 {
		chunkSize = DefaultChunkSize
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Snapshotter{src: src, chunkSize: chunkSize, now: time.Now, logf: logf}
}

// Running reports whether tables remain to be snapshotted.
func (s *Snapshotter) Running() bool { return len(s.colls) > 0 }

// Paused reports whether a pause-snapshot signal stopped chunk reading.
func (s *Snapshotter) Paused() bool { return s.paused }

// Current returns the table being snapshotted ("" when idle).
func (s *Snapshotter) Current() string {
	if len(s.colls) == 0 {
		return ""
	}
	return s.colls[0].ID
}

// Store adds the snapshot state to off (a connector offset) while a snapshot
// runs; it fails only for a key value EncodeKey cannot store.
func (s *Snapshotter) Store(off map[string]any) error {
	if !s.Running() {
		return nil
	}
	pk, err := encodeOrNull(s.lastKeySent)
	if err != nil {
		return err
	}
	mk, err := encodeOrNull(s.maxKey)
	if err != nil {
		return err
	}
	off[OffPrimaryKey], off[OffMaximumKey] = pk, mk
	off[OffCollections] = s.collectionsJSON()
	if s.correlationID != nil {
		off[OffCorrelationID] = *s.correlationID
	} else {
		off[OffCorrelationID] = nil
	}
	return nil
}

// nullKey is Java's serialization of a null Object[] (writeObject(null)).
const nullKey = "aced000570"

func encodeOrNull(k []any) (string, error) {
	if k == nil {
		return nullKey, nil
	}
	return EncodeKey(k)
}

// collectionsJSON renders the queue as Jackson writes Debezium's
// List<LinkedHashMap<String,String>>: no spaces, keys in insertion order, an
// absent surrogate key as null, no HTML escaping of <, > and &.
func (s *Snapshotter) collectionsJSON() string {
	var b strings.Builder
	b.WriteByte('[')
	str := func(v string) {
		var q strings.Builder
		e := json.NewEncoder(&q)
		e.SetEscapeHTML(false)
		e.Encode(v)
		b.WriteString(strings.TrimSuffix(q.String(), "\n"))
	}
	for i, c := range s.colls {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"` + collID + `":`)
		str(c.ID)
		b.WriteString(`,"` + collCondition + `":`)
		str(c.AdditionalCondition)
		b.WriteString(`,"` + collSurrogate + `":`)
		if c.SurrogateKey == "" {
			b.WriteString("null")
		} else {
			str(c.SurrogateKey)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String()
}

// Load restores the state stored in a connector offset (no snapshot keys =
// idle), as AbstractIncrementalSnapshotContext.init: the next chunk starts
// after the last key emitted.
func (s *Snapshotter) Load(off map[string]any) error {
	*s = Snapshotter{src: s.src, chunkSize: s.chunkSize, now: s.now, logf: s.logf}
	str := func(k string) string { v, _ := off[k].(string); return v }
	if v := str(OffPrimaryKey); v != "" {
		k, err := DecodeKey(v)
		if err != nil {
			return fmt.Errorf("incsnap: offset %s: %w", OffPrimaryKey, err)
		}
		s.chunkEnd = k
	}
	if v := str(OffMaximumKey); v != "" {
		k, err := DecodeKey(v)
		if err != nil {
			return fmt.Errorf("incsnap: offset %s: %w", OffMaximumKey, err)
		}
		s.maxKey = k
	}
	if v := str(OffCollections); v != "" {
		var list []map[string]*string
		if err := json.Unmarshal([]byte(v), &list); err != nil {
			return fmt.Errorf("incsnap: offset %s %q: %w", OffCollections, v, err)
		}
		for _, m := range list {
			c := Collection{}
			if p := m[collID]; p != nil {
				c.ID = *p
			}
			if p := m[collCondition]; p != nil {
				c.AdditionalCondition = *p
			}
			if p := m[collSurrogate]; p != nil {
				c.SurrogateKey = *p
			}
			if c.ID == "" {
				return fmt.Errorf("incsnap: offset %s %q: entry without %s", OffCollections, v, collID)
			}
			s.colls = append(s.colls, c)
		}
	}
	if v, ok := off[OffCorrelationID].(string); ok {
		s.correlationID = &v
	}
	return nil
}

// Init reads the next chunk of a snapshot restored by Load. Call it once
// streaming has started (the watermark rows must be read back).
func (s *Snapshotter) Init(ctx context.Context) error {
	if !s.Running() {
		return nil
	}
	s.logf("incremental snapshot in progress (%s), reading a new chunk on start", s.Current())
	return s.readChunk(ctx)
}

// Add queues tables (from the execute-snapshot signal with id signalID,
// already expanded to table ids) and, if no snapshot was running, reads the
// first chunk. Tables already queued are not added twice. The signal id
// becomes incremental_snapshot_correlation_id ("" = null), as in Debezium.
func (s *Snapshotter) Add(ctx context.Context, signalID string, colls []Collection) error {
	start := !s.Running()
	s.correlationID = nil
	if signalID != "" {
		s.correlationID = &signalID
	}
	for _, c := range colls {
		dup := false
		for _, q := range s.colls {
			dup = dup || q.ID == c.ID
		}
		if !dup {
			s.colls = append(s.colls, c)
		}
	}
	if !start || !s.Running() {
		return nil
	}
	s.resetChunk()
	s.logf("incremental snapshot started: %s", s.collectionsJSON())
	if err := s.notify(ctx, "STARTED", map[string]string{"data_collections": collectionIDs(s.colls)}); err != nil {
		return err
	}
	return s.readChunk(ctx)
}

// Stop handles stop-snapshot: with no patterns the whole snapshot ends;
// otherwise the matching queued tables are removed, and if the current table
// is one of them the snapshot moves to the next table. Rows of the open
// window are dropped, not emitted: they were not confirmed by the close
// watermark yet.
func (s *Snapshotter) Stop(ctx context.Context, patterns []string) error {
	if !s.Running() {
		return nil
	}
	if len(patterns) == 0 {
		s.logf("incremental snapshot stopped")
		err := s.notify(ctx, "ABORTED", map[string]string{})
		s.colls = nil
		s.clearWindow()
		s.resetChunk()
		s.correlationID = nil
		return err
	}
	current := false
	var keep, stopped []Collection
	for i, c := range s.colls {
		match := false
		for _, p := range patterns {
			re, err := regexp.Compile(`^(?:` + p + `)$`)
			if err == nil && re.MatchString(c.ID) {
				match = true
			}
		}
		if match {
			current = current || i == 0
			s.logf("incremental snapshot of %s stopped", c.ID)
			stopped = append(stopped, c)
			continue
		}
		keep = append(keep, c)
	}
	if len(stopped) > 0 {
		if err := s.notify(ctx, "ABORTED", map[string]string{"data_collections": collectionIDs(stopped)}); err != nil {
			return err
		}
	}
	s.colls = keep
	if current {
		s.clearWindow()
		s.resetChunk()
		return s.readChunk(ctx)
	}
	return nil
}

// Pause handles pause-snapshot: the chunk in flight completes, no new chunk
// is read until Resume.
func (s *Snapshotter) Pause(ctx context.Context) error {
	if s.Running() {
		s.logf("incremental snapshot paused")
		s.paused = true
		return s.notify(ctx, "PAUSED", map[string]string{"data_collections": collectionIDs(s.colls)})
	}
	return nil
}

// Resume handles resume-snapshot: the chunk in flight (if any) is dropped and
// reading restarts after the last key emitted, as Debezium's
// resumeSnapshot + revertChunk.
func (s *Snapshotter) Resume(ctx context.Context) error {
	if !s.paused {
		return nil
	}
	s.logf("incremental snapshot resumed")
	s.paused = false
	if err := s.notify(ctx, "RESUMED", map[string]string{"data_collections": collectionIDs(s.colls)}); err != nil {
		return err
	}
	s.clearWindow()
	s.chunkEnd = s.lastKeySent
	s.windowOpen = false
	return s.readChunk(ctx)
}

// OpenWindow handles a snapshot-window-open row with id read from the
// stream. Ids of other chunks (replayed after a restart) are ignored.
func (s *Snapshotter) OpenWindow(id string) {
	if s.expected(id) {
		s.windowOpen = true
	}
}

// CloseWindow handles a snapshot-window-close row (or, with the
// insert_delete watermarking strategy, the delete of the open row): it emits
// the rows left in the window and reads the next chunk.
func (s *Snapshotter) CloseWindow(ctx context.Context, id string) error {
	if !s.expected(id) || !s.windowOpen {
		return nil
	}
	s.windowOpen = false
	if len(s.colls) > 0 {
		c := s.colls[0]
		for i, r := range s.window {
			if s.removed[i] {
				continue
			}
			s.lastKeySent = r.Key
			if err := s.src.Emit(ctx, c, r); err != nil {
				return err
			}
		}
	}
	s.clearWindow()
	return s.readChunk(ctx)
}

func (s *Snapshotter) expected(id string) bool {
	return s.chunkID != "" && strings.HasPrefix(id, s.chunkID)
}

// Dedup is called for every streamed change of table id with row identity
// ident (the same identity Source gives Row.Ident): inside an open window
// the buffered row of that key is superseded by the streamed event.
func (s *Snapshotter) Dedup(id, ident string) {
	if !s.windowOpen || len(s.window) == 0 || len(s.colls) == 0 || s.colls[0].ID != id {
		return
	}
	if i, ok := s.index[ident]; ok {
		s.removed[i] = true
	}
}

// WindowOpen reports whether streamed changes are being deduplicated.
func (s *Snapshotter) WindowOpen() bool { return s.windowOpen }

func (s *Snapshotter) clearWindow() {
	s.window, s.index, s.removed = nil, nil, nil
}

func (s *Snapshotter) resetChunk() {
	s.lastKeySent, s.chunkEnd, s.maxKey = nil, nil, nil
	s.rowsScanned = 0
}

// tableDone sends the current table's TABLE_SCAN_COMPLETED notification
// (status SUCCEEDED, or EMPTY when no row satisfied its condition).
func (s *Snapshotter) tableDone(ctx context.Context, status string) error {
	return s.notify(ctx, "TABLE_SCAN_COMPLETED", map[string]string{
		"data_collections": collectionIDs(s.colls), "scanned_collection": s.colls[0].ID,
		"total_rows_scanned": strconv.FormatInt(s.rowsScanned, 10), "status": status})
}

// readChunk opens a window, fills it with the next non-empty chunk (moving
// past finished tables), and closes it.
func (s *Snapshotter) readChunk(ctx context.Context) error {
	if !s.Running() || s.paused {
		return nil
	}
	s.chunkID = newChunkID()
	s.openTs = s.now()
	if err := s.src.Watermark(ctx, s.chunkID+"-open", signal.TypeWindowOpen, signal.WindowData(isoTime(s.openTs), "")); err != nil {
		return err
	}
	for s.Running() {
		c := s.colls[0]
		if s.maxKey == nil {
			mk, err := s.src.MaxKey(ctx, c)
			if err != nil {
				return err
			}
			if mk == nil {
				s.logf("incremental snapshot: %s has no rows to snapshot", c.ID)
				if err := s.tableDone(ctx, "EMPTY"); err != nil {
					return err
				}
				s.nextCollection()
				continue
			}
			s.maxKey = mk
		}
		rows, err := s.src.Chunk(ctx, c, s.chunkEnd, s.maxKey, s.chunkSize)
		if err != nil {
			return err
		}
		if len(rows) == 0 {
			s.logf("incremental snapshot of %s finished", c.ID)
			if err := s.tableDone(ctx, "SUCCEEDED"); err != nil {
				return err
			}
			s.nextCollection()
			continue
		}
		s.window = rows
		s.index = make(map[string]int, len(rows))
		s.removed = make([]bool, len(rows))
		for i, r := range rows {
			s.index[r.Ident] = i
		}
		s.chunkEnd = rows[len(rows)-1].Key
		s.rowsScanned += int64(len(rows))
		err = s.notify(ctx, "IN_PROGRESS", map[string]string{
			"data_collections": collectionIDs(s.colls), "current_collection_in_progress": c.ID,
			"maximum_key": keyString(s.maxKey), "last_processed_key": keyString(s.chunkEnd)})
		if err != nil {
			return err
		}
		break
	}
	if !s.Running() {
		s.logf("incremental snapshot completed")
		if err := s.notify(ctx, "COMPLETED", map[string]string{}); err != nil {
			return err
		}
		s.correlationID = nil
	}
	return s.src.Watermark(ctx, s.chunkID+"-close", signal.TypeWindowClose, signal.WindowData(isoTime(s.openTs), isoTime(s.now())))
}

func (s *Snapshotter) nextCollection() {
	s.colls = s.colls[1:]
	s.resetChunk()
}

// isoTime formats t as java.time.Instant.toString does: the fraction in
// groups of three digits (none, ms, µs or ns).
func isoTime(t time.Time) string {
	t = t.UTC()
	ns := t.Nanosecond()
	switch {
	case ns == 0:
		return t.Format("2006-01-02T15:04:05Z")
	case ns%1e6 == 0:
		return t.Format("2006-01-02T15:04:05.000Z")
	case ns%1e3 == 0:
		return t.Format("2006-01-02T15:04:05.000000Z")
	}
	return t.Format("2006-01-02T15:04:05.000000000Z")
}

// newChunkID returns a random UUID (version 4), as UUID.randomUUID.
func newChunkID() string { return uuid.NewString() }
