package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/relational"
)

// The relation history: a replayed event is the same record as the first
// time (issue 16).
//
// pgoutput's Relation message carries a table's columns, type OIDs and
// typmods, but not nullability, defaults, comments or the key: those are
// read from the catalog (pg_attribute, pg_attrdef, pg_index) when a
// relation's schema is built, and the catalog is today's, not the one of
// the WAL being decoded. A task killed after an ALTER TABLE … SET DEFAULT
// (or DROP DEFAULT, SET NOT NULL, ADD PRIMARY KEY) replays, from its
// committed offset, events it had emitted with the old default; reading the
// catalog again would give them the new one (Debezium does, and has the same
// problem). So the facts a schema was built from are kept:
//
//   - Every time the stream reads the catalog for a relation (its first
//     Relation message of a session, a change of columns, types or
//     typmods, a rename), the facts are recorded as a version of the
//     relation's history, keyed by the position of the rebuild in
//     processing order: the final LSN of the transaction, then the LSN of
//     the message before it in the transaction (relationReplay.position).
//     Processing order is commit order; change LSNs alone are not
//     monotonic in it, and a Relation message has no LSN of its own.
//   - The history of relation OID o is the offset of the source partition
//     {"server": <topic.prefix>, "relation_history": "<o>"} in the
//     connector's offset storage (connect-offsets), written through the
//     worker's connect.OffsetWriter and durable before any record built from
//     it is queued — not merely no later than the offsets of those records:
//     a record Kafka acknowledged before a SIGKILL is replayed whether or not
//     its offset was committed. It is listed and reset with the connector's
//     offsets (GET/DELETE /connectors/<name>/offsets); Debezium reads only
//     {"server": …} and ignores it. The value is {"versions": "<JSON>"}, a
//     string, since Kafka Connect offsets hold primitive values only.
//   - The partition {"server": …, "relation_history": "state"} says whether
//     the last run ended cleanly: {"clean": false} from the first change
//     streamed, {"clean": true} once a stop found every record it had queued
//     committed (and, after an unclean run, the confirmed LSN past the
//     replay below). After a clean end nothing is replayed and the stream
//     reads the catalog as it always did (so a default changed while the
//     connector was stopped shows, as in Debezium).
//   - After a run that did not end cleanly (a SIGKILL, a crash, a task
//     that could not commit), what it can have emitted lies in transactions
//     that commit before the server's WAL position W when the next run
//     begins. In those transactions a rebuild at key k uses, without reading
//     the catalog, the version recorded at exactly k (the previous run
//     rebuilt there), and the session's first rebuild of a relation
//     (pgoutput resends every relation once per session, at its first
//     change, where the previous run had none) uses the version in effect at
//     k, the last one before it: events after the committed offset come out
//     as they did. Other rebuilds, and every rebuild from W on, read the
//     catalog. A version whose columns differ from the message's is never
//     used.
//   - A type refresh (ALTER TYPE … ADD VALUE sends no Relation message)
//     rebuilds with the facts in use, not today's catalog.
//   - Versions superseded before the confirmed LSN are dropped when the
//     history is next written: a restart replays only transactions that
//     commit after it, and needs the version in effect there.
//
// Limits: a transaction that pgoutput streamed in progress in one run and
// sends whole in the other (streaming=on; it depends on
// logical_decoding_work_mem) may get its Relation messages at other
// positions; a rebuild there that is not the session's first then reads the
// catalog. A PATCH of the offsets that keeps the relation history of an
// older slot makes its versions apply to the new one while the columns
// agree; a reset (DELETE) removes it.
//
// Without an OffsetWriter (a worker that gives none, the in-package tests)
// the catalog is read as before.

// relationHistoryKey is the partition key of the relation history.
const relationHistoryKey = "relation_history"

// catalogFacts are a table's catalog facts as readCatalog reads them.
type catalogFacts struct {
	Columns    []factColumn `json:"columns"`
	PrimaryKey []string     `json:"key,omitempty"` // or the first unique index
}

// factColumn is one column of the catalog; Default is pg_get_expr's text
// ("" = none), converted when a schema is built from it.
type factColumn struct {
	Name     string `json:"name"`
	Position int    `json:"pos"`
	TypeName string `json:"type"`
	TypeOID  uint32 `json:"oid"`
	TypeMod  int32  `json:"mod"`
	Optional bool   `json:"optional"`
	Default  string `json:"default,omitempty"`
	Comment  string `json:"comment,omitempty"`
}

// table converts f as loadTable always did: defaults parsed with tm, whose
// type registry first learns any type it does not know.
func (f *catalogFacts) table(ctx context.Context, conn *pgx.Conn, tm *typeMapper, schema, name string) (*relational.Table, error) {
	t := &relational.Table{Schema: schema, Name: name, PrimaryKey: append([]string(nil), f.PrimaryKey...)}
	for _, fc := range f.Columns {
		t.Columns = append(t.Columns, relational.Column{Name: fc.Name, Position: fc.Position, TypeName: fc.TypeName,
			TypeOID: fc.TypeOID, TypeMod: fc.TypeMod, Optional: fc.Optional, Comment: fc.Comment})
	}
	if err := tm.ensureTypes(ctx, conn, t.Columns); err != nil {
		return nil, err
	}
	for i, fc := range f.Columns {
		if fc.Default != "" {
			t.Columns[i].Default = tm.parseDefault(t.Columns[i], fc.Default)
		}
	}
	return t, nil
}

// relShape is one column of a Relation message.
type relShape struct {
	Name    string `json:"name"`
	TypeOID uint32 `json:"oid"`
	TypeMod int32  `json:"mod"`
}

func shapeOf(rel *pglogrepl.RelationMessage) []relShape {
	out := make([]relShape, len(rel.Columns))
	for i, c := range rel.Columns {
		out[i] = relShape{Name: c.Name, TypeOID: c.DataType, TypeMod: c.TypeModifier}
	}
	return out
}

func sameRelShape(a, b []relShape) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// histKey is a position in processing order: the final LSN of the
// transaction (BEGIN's, the commit record's LSN), then the LSN in it.
type histKey struct{ commit, lsn int64 }

func (a histKey) less(b histKey) bool {
	return a.commit < b.commit || a.commit == b.commit && a.lsn < b.lsn
}

// relVersion is one version of a relation's history: the facts the schema
// of Relation messages of shape Shape was built from, from key on.
type relVersion struct {
	Commit int64        `json:"commit"`
	LSN    int64        `json:"lsn"`
	Shape  []relShape   `json:"shape"`
	Facts  catalogFacts `json:"facts"`
}

func (v *relVersion) key() histKey { return histKey{v.Commit, v.LSN} }

// relationHistory is the task's view of the stored history; the reader
// goroutine owns it (begin and finish run when it does not run).
type relationHistory struct {
	r      connect.OffsetReader
	w      connect.OffsetWriter
	server string
	// versions holds the histories read so far, each sorted by key.
	versions map[uint32][]relVersion
	// replayUntil: the previous run did not end cleanly, and what it may
	// have emitted lies in transactions that commit before this LSN (the
	// server's WAL position when this run began); there rebuilds take the
	// recorded versions. 0 = nothing to replay.
	replayUntil int64
	begun       bool
}

// newRelationHistory returns the history of the task, nil when the worker
// cannot store it (no connect.OffsetWriter).
func newRelationHistory(tc connect.SourceTaskContext, server string) *relationHistory {
	if tc == nil || tc.OffsetReader() == nil {
		return nil
	}
	w, ok := tc.(connect.OffsetWriter)
	if !ok {
		return nil
	}
	return &relationHistory{r: tc.OffsetReader(), w: w, server: server, versions: map[uint32][]relVersion{}}
}

func (h *relationHistory) partition(id string) map[string]any {
	return map[string]any{"server": h.server, relationHistoryKey: id}
}

// begin reads how the previous run ended and stores that this one has not
// (yet) ended cleanly, before the stream queues the first record built
// from catalog facts (a change: it needs its relation's schema). A run that
// streams no change writes nothing.
//
// walLSN returns the server's current WAL position: after a run that did
// not end cleanly, every transaction it can have emitted commits before it.
func (h *relationHistory) begin(ctx context.Context, walLSN func(context.Context) (int64, error)) error {
	if h == nil || h.begun {
		return nil
	}
	m, err := h.r.Offset(ctx, h.partition("state"))
	if err != nil {
		return fmt.Errorf("postgres: read relation history state: %w", err)
	}
	if clean, _ := m["clean"].(bool); m != nil && !clean {
		if h.replayUntil, err = walLSN(ctx); err != nil {
			return fmt.Errorf("postgres: read the WAL position: %w", err)
		}
	}
	if err := h.w.WriteOffsets(ctx, []connect.PartitionOffset{{Partition: h.partition("state"), Offset: map[string]any{"clean": false}}}); err != nil {
		return fmt.Errorf("postgres: store relation history state: %w", err)
	}
	h.begun = true
	return nil
}

// finish stores that the run ended cleanly, so that a restart replays
// nothing: every record it queued was committed (allCommitted), and the
// confirmed LSN has passed what an unclean run before it may have emitted.
// A run that streamed no change leaves the state as it was.
func (h *relationHistory) finish(allCommitted bool, confirmed int64) error {
	if h == nil || !h.begun || !allCommitted || confirmed < h.replayUntil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return h.w.WriteOffsets(ctx, []connect.PartitionOffset{{Partition: h.partition("state"), Offset: map[string]any{"clean": true}}})
}

// load returns the history of relation oid.
func (h *relationHistory) load(ctx context.Context, oid uint32) ([]relVersion, error) {
	if vs, ok := h.versions[oid]; ok {
		return vs, nil
	}
	m, err := h.r.Offset(ctx, h.partition(strconv.FormatUint(uint64(oid), 10)))
	if err != nil {
		return nil, fmt.Errorf("postgres: read relation history of %d: %w", oid, err)
	}
	var vs []relVersion
	if m != nil {
		s, ok := m["versions"].(string)
		if !ok {
			return nil, fmt.Errorf("postgres: relation history of %d: no versions", oid)
		}
		if err := json.Unmarshal([]byte(s), &vs); err != nil {
			return nil, fmt.Errorf("postgres: relation history of %d: %w", oid, err)
		}
		sort.SliceStable(vs, func(i, j int) bool { return vs[i].key().less(vs[j].key()) })
	}
	h.versions[oid] = vs
	return vs, nil
}

// find returns the facts to build relation oid's schema from at key k for
// a Relation message of shape shape (nil: read the catalog). first says
// that this is the session's first rebuild of the relation.
func (h *relationHistory) find(ctx context.Context, oid uint32, k histKey, shape []relShape, first bool) (*catalogFacts, error) {
	if h == nil || k.commit >= h.replayUntil {
		// nothing to replay here: the previous run ended cleanly (or there
		// was none), or this transaction commits after all it can have
		// emitted
		return nil, nil
	}
	vs, err := h.load(ctx, oid)
	if err != nil {
		return nil, err
	}
	// the last version at or before k
	i := sort.Search(len(vs), func(i int) bool { return k.less(vs[i].key()) }) - 1
	if i < 0 || !sameRelShape(vs[i].Shape, shape) {
		return nil, nil
	}
	if vs[i].key() == k || first {
		return &vs[i].Facts, nil
	}
	return nil, nil
}

// record stores facts as relation oid's version at k, durably, dropping
// the versions superseded before confirmed (the LSN the worker made
// durable; 0 = none yet).
func (h *relationHistory) record(ctx context.Context, oid uint32, k histKey, shape []relShape, facts *catalogFacts, confirmed int64) error {
	if h == nil {
		return nil
	}
	vs, err := h.load(ctx, oid)
	if err != nil {
		return err
	}
	v := relVersion{Commit: k.commit, LSN: k.lsn, Shape: shape, Facts: *facts}
	out := make([]relVersion, 0, len(vs)+1)
	for _, o := range vs {
		if o.key() != k {
			out = append(out, o)
		}
	}
	out = append(out, v)
	sort.SliceStable(out, func(i, j int) bool { return out[i].key().less(out[j].key()) })
	// Transactions replayed after a restart commit at or after the
	// confirmed LSN: of the versions before it only the last one is needed.
	drop := 0
	for drop+1 < len(out) && out[drop+1].Commit < confirmed {
		drop++
	}
	out = out[drop:]
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	if err := h.w.WriteOffsets(ctx, []connect.PartitionOffset{{
		Partition: h.partition(strconv.FormatUint(uint64(oid), 10)), Offset: map[string]any{"versions": string(b)}}}); err != nil {
		return fmt.Errorf("postgres: store relation history of %d: %w", oid, err)
	}
	h.versions[oid] = out
	return nil
}

// relationReplay is the stream's per-session state of the history.
type relationReplay struct {
	finalLSN int64                    // final LSN of the transaction being applied (its BEGIN's)
	lastLSN  int64                    // LSN of the transaction's last message other than a Relation (0 = none yet)
	key      histKey                  // where a rebuild now happens
	rebuilt  map[uint32]bool          // relations rebuilt in this session
	inUse    map[uint32]*catalogFacts // the facts of each relation's current schema
}

// position moves the rebuild key to the message it: the transaction's final
// LSN and the LSN of the message before it in the transaction other than a
// Relation message (0 = none). A Relation message carries no LSN of its own
// (pgoutput sends it with 0), and the change it precedes is rebuilt at the
// same key, so that a relation is rebuilt at most once per key; the BEGIN's
// own LSN is not used, as a transaction streamed in progress in one run and
// decoded at its commit in another gets another one.
func (r *relationReplay) position(it walItem) {
	switch it.kind {
	case itemBegin:
		r.finalLSN, r.lastLSN = it.finalLSN, 0
		r.key = histKey{it.finalLSN, 0}
	case itemRelation:
		r.key = histKey{r.finalLSN, r.lastLSN}
	default:
		r.key = histKey{r.finalLSN, r.lastLSN}
		r.lastLSN = it.lsn
	}
}

// catalogOf returns the catalog facts to build rel's schema from: the
// relation history's (see above), else the catalog's, which are then
// recorded. reuse keeps the facts of the relation's current schema (a type
// refresh).
func (s *streamer) catalogOf(ctx context.Context, rel *pglogrepl.RelationMessage, reuse bool) (*catalogFacts, error) {
	rr := &s.relHist
	if err := s.t.hist.begin(ctx, s.walLSN); err != nil {
		return nil, err
	}
	if rr.rebuilt == nil {
		rr.rebuilt, rr.inUse = map[uint32]bool{}, map[uint32]*catalogFacts{}
	}
	if f := rr.inUse[rel.RelationID]; reuse && f != nil {
		return f, nil
	}
	first := !rr.rebuilt[rel.RelationID]
	rr.rebuilt[rel.RelationID] = true
	k, shape := rr.key, shapeOf(rel)
	f, err := s.t.hist.find(ctx, rel.RelationID, k, shape, first)
	if err != nil {
		return nil, err
	}
	if f == nil {
		if f, err = s.readRelationCatalog(ctx, rel); err != nil {
			return nil, err
		}
		if err := s.t.hist.record(ctx, rel.RelationID, k, shape, f, s.t.confirmed.Load()); err != nil {
			return nil, err
		}
	}
	rr.inUse[rel.RelationID] = f
	return f, nil
}

// readRelationCatalog reads the catalog facts of rel's table, by the
// Relation message's name, as Debezium reads them, once the transaction
// being applied is visible. A table renamed again since this WAL was
// written is read by its OID (the relation ID), which still names it:
// Debezium finds nothing then and makes every column optional with no key,
// an accident of timing.
func (s *streamer) readRelationCatalog(ctx context.Context, rel *pglogrepl.RelationMessage) (*catalogFacts, error) {
	if err := waitVisible(ctx, s.t.conn, s.xid); err != nil {
		return nil, err
	}
	f, err := readCatalog(ctx, s.t.conn, s.t.types, rel.Namespace, rel.RelationName)
	if errors.Is(err, errTableNotFound) {
		ns, n, ok, err2 := currentName(ctx, s.t.conn, rel.RelationID)
		if err2 != nil {
			return nil, err2
		}
		if ok {
			f, err = readCatalog(ctx, s.t.conn, s.t.types, ns, n)
		}
	}
	return f, err
}

// walLSN returns pg_current_wal_lsn().
func (s *streamer) walLSN(ctx context.Context) (int64, error) {
	var lsn int64
	err := s.t.conn.QueryRow(ctx, `SELECT (pg_current_wal_lsn() - '0/0')::bigint`).Scan(&lsn)
	return lsn, err
}
