package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/internal/kafkalog"
	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Topic is the default storage topic, as Confluent's kafkastore.topic.
const Topic = "_schemas"

// store is where records go: the `_schemas` topic (kafkalog) or, in tests,
// memory. Every record reaches state.apply through it, in order.
type store interface {
	Send(ctx context.Context, key, value []byte) error
	ReadToEnd(ctx context.Context) error
	Close()
}

// Registry is the schema registry: state read from the store, and the
// operations of Confluent's REST API. Methods return *Error for the
// failures the API reports with an error_code.
type Registry struct {
	mu      sync.RWMutex
	st      *state
	store   store
	writeMu sync.Mutex // one writer at a time in this process
}

// Open reads topic (created compacted with one partition if missing) to
// the end, then keeps tailing it; it returns once the registry can answer.
func Open(ctx context.Context, brokers []string, topic string, opts ...kgo.Opt) (*Registry, error) {
	r := &Registry{st: newState()}
	l, err := kafkalog.Open(ctx, brokers, topic, kafkalog.TopicSpec{Partitions: 1, ReplicationFactor: -1}, r.onRecord, opts...)
	if err != nil {
		return nil, fmt.Errorf("registry: %w", err)
	}
	r.store = l
	// Heal what a writer that died between a refused write and its
	// repair left behind (see state.apply).
	if err := r.repair(ctx); err != nil {
		l.Close()
		return nil, fmt.Errorf("registry: %w", err)
	}
	return r, nil
}

// NewInMemory returns a registry whose records live in memory only (tests).
func NewInMemory() *Registry {
	r := &Registry{st: newState()}
	r.store = &memStore{apply: r.onRecord}
	return r
}

// Close stops tailing the topic.
func (r *Registry) Close() { r.store.Close() }

func (r *Registry) onRecord(rec kafkalog.Record) {
	r.mu.Lock()
	r.st.apply(rec.Key, rec.Value, rec.Offset)
	r.mu.Unlock()
}

type memStore struct {
	mu    sync.Mutex
	apply func(kafkalog.Record)
	n     int64
	Log   []kafkalog.Record
}

func (m *memStore) Send(_ context.Context, key, value []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	rec := kafkalog.Record{Key: key, Value: value, Offset: m.n}
	m.n++
	m.Log = append(m.Log, rec)
	m.apply(rec)
	return nil
}
func (m *memStore) ReadToEnd(context.Context) error { return nil }
func (m *memStore) Close()                          {}

// write sends records and waits until they are read back into the state,
// then repairs the keys a refused record was the last of.
func (r *Registry) write(ctx context.Context, recs ...kafkalog.Record) error {
	for _, rec := range recs {
		if err := r.store.Send(ctx, rec.Key, rec.Value); err != nil {
			return errStore(err)
		}
	}
	if err := r.store.ReadToEnd(ctx); err != nil {
		return errStore(err)
	}
	if err := r.repair(ctx); err != nil {
		return errStore(err)
	}
	return nil
}

// repair rewrites the accepted value of every SCHEMA key whose last record
// in the topic was refused as a conflict (state.apply), so that log
// compaction, which keeps the last record of a key, keeps what every
// reader accepted. Any registry on the topic may do it; the rewrites are
// identical, so doing it twice is harmless.
func (r *Registry) repair(ctx context.Context) error {
	for i := 0; i < 10; i++ {
		r.mu.RLock()
		recs := r.st.repairs()
		r.mu.RUnlock()
		if len(recs) == 0 {
			return nil
		}
		for _, rec := range recs {
			if err := r.store.Send(ctx, rec.Key, rec.Value); err != nil {
				return err
			}
		}
		if err := r.store.ReadToEnd(ctx); err != nil {
			return err
		}
	}
	return nil
}

// normalize returns the text stored for a schema: the JSON compacted
// (Confluent stores Avro's Schema.toString(), which is compact too), and
// the parsed schema. Invalid schemas give 42201.
func normalize(text string) (string, avro.Schema, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(text)); err != nil {
		// A bare primitive name such as string is valid Avro too.
		b.Reset()
		b.WriteString(strings.TrimSpace(text))
	}
	s, err := parseSchema(b.String())
	if err != nil {
		return "", nil, errInvalidSchema(fmt.Sprintf("Invalid schema %s, details: %v", text, err))
	}
	return b.String(), s, nil
}

// SchemaRef is one version of a subject, as the API returns it.
type SchemaRef struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
	ID      int    `json:"id"`
	Schema  string `json:"schema"`
}

// Register registers schema under subject (POST /subjects/{s}/versions):
// the id of an identical non-deleted version if there is one, else a new
// version after the compatibility check (409 when it fails), with the id
// the same text has under any subject, or a new id.
func (r *Registry) Register(ctx context.Context, subj, schema string) (int, error) {
	return r.RegisterAs(ctx, subj, schema, -1, -1)
}

// RegisterAs is Register with the explicit "id" and "version" of the
// request body (-1: not given), as Confluent's KafkaSchemaRegistry.register:
//   - the schema already registered under subj (not deleted) with the same
//     or no id gives its id, whatever the mode;
//   - READONLY / READONLY_OVERRIDE mode: 42205 "Subject s is in read-only
//     mode"; an id or version outside IMPORT mode: 42205 "Subject s is not
//     in import mode"; neither, in IMPORT mode: 42205 "Subject s is not in
//     read-write mode";
//   - IMPORT mode keeps the id and the version (an existing version is
//     overwritten), skips the compatibility check, and refuses an id that
//     another schema has: 42205 "Overwrite new schema with id N is not
//     permitted.".
//
// Ids are allocated without a leader: the record is written, read back,
// and written again with the next free id if another registry's record
// came first (state.apply decides, the same way for every reader).
func (r *Registry) RegisterAs(ctx context.Context, subj, schema string, wantID, wantVersion int) (int, error) {
	text, parsed, err := normalize(schema)
	if err != nil {
		return 0, err
	}
	if wantVersion <= 0 {
		wantVersion = -1 // Confluent: only a version > 0 counts as given
	}
	if wantID < 0 {
		wantID = -1 // Confluent: only an id >= 0 counts as given
	}
	if wantID == 0 {
		return 0, &Error{http.StatusUnprocessableEntity, CodeOperationNotPermitted, fmt.Sprintf("Schema id %d is not supported: ids start at 1", wantID)}
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	if err := r.store.ReadToEnd(ctx); err != nil {
		return 0, errStore(err)
	}
	for attempt := 0; attempt < 50; attempt++ {
		r.mu.RLock()
		var live []*version
		next := 1
		if s := r.st.subjects[subj]; s != nil {
			for _, v := range s.sorted(true) {
				if v.Version >= next {
					next = v.Version + 1
				}
			}
			live = s.sorted(false)
		}
		for _, v := range live {
			if v.Schema == text && (wantID < 0 || wantID == v.ID) {
				r.mu.RUnlock()
				return v.ID, nil
			}
		}
		mode := r.st.mode(subj)
		level := r.st.compat(subj)
		id, known := r.st.byText[text]
		if !known {
			id = r.st.maxID + 1
		}
		overwrite := false
		if wantID >= 0 {
			old, taken := r.st.ids[wantID]
			overwrite = taken && old != text
			id = wantID
		}
		r.mu.RUnlock()
		switch {
		case mode == "READONLY" || mode == "READONLY_OVERRIDE":
			return 0, errReadOnly(subj)
		case (wantID >= 0 || wantVersion > 0) && mode != "IMPORT":
			return 0, errNotImportMode(subj)
		case wantID < 0 && wantVersion < 0 && mode != "READWRITE":
			return 0, errNotReadWriteMode(subj)
		case overwrite:
			return 0, errOverwriteID(wantID)
		}
		if wantVersion > 0 {
			next = wantVersion
		}
		if mode != "IMPORT" {
			var prev []avro.Schema
			for _, v := range live {
				p, err := parseSchema(v.Schema)
				if err != nil {
					continue
				}
				prev = append(prev, p)
			}
			if msgs := checkCompat(level, parsed, prev); len(msgs) > 0 {
				return 0, errIncompatible(subj, "["+strings.Join(msgs, ", ")+"]")
			}
		}
		val := marshal(schemaValue{Subject: subj, Version: next, ID: id, Schema: text})
		if err := r.write(ctx, kafkalog.Record{Key: schemaKeyBytes(subj, next), Value: val}); err != nil {
			return 0, err
		}
		// Another registry may have written the same key, id or text
		// at the same time: the topic decides; retry if we lost.
		r.mu.RLock()
		var got *version
		if s := r.st.subjects[subj]; s != nil {
			got = s.versions[next]
		}
		r.mu.RUnlock()
		if got != nil && got.ID == id && got.Schema == text {
			return id, nil
		}
		if wantID >= 0 {
			// The requested id went to another schema meanwhile.
			r.mu.RLock()
			old, taken := r.st.ids[wantID]
			r.mu.RUnlock()
			if taken && old != text {
				return 0, errOverwriteID(wantID)
			}
		}
		time.Sleep(time.Duration(rand.IntN(5)+1) * time.Millisecond)
	}
	return 0, errStore(errors.New("could not register the schema after 50 attempts (concurrent writers)"))
}

// Lookup finds schema under subject (POST /subjects/{s}): 40401 when the
// subject has no versions, 40403 when none has this schema.
func (r *Registry) Lookup(subj, schema string, deleted bool) (SchemaRef, error) {
	text, _, err := normalize(schema)
	if err != nil {
		return SchemaRef{}, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	s := r.st.subjects[subj]
	if s == nil || len(s.sorted(deleted)) == 0 {
		return SchemaRef{}, errSubjectNotFound(subj)
	}
	vs := s.sorted(deleted)
	for i := len(vs) - 1; i >= 0; i-- {
		if vs[i].Schema == text {
			return ref(vs[i]), nil
		}
	}
	return SchemaRef{}, errSchemaNotFound()
}

func ref(v *version) SchemaRef {
	return SchemaRef{Subject: v.Subject, Version: v.Version, ID: v.ID, Schema: v.Schema}
}

// Subjects lists the subjects with at least one (non-deleted unless
// deleted) version, sorted.
func (r *Registry) Subjects(deleted bool) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := []string{}
	for name, s := range r.st.subjects {
		if len(s.sorted(deleted)) > 0 {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Versions lists a subject's version numbers (40401 when there are none).
func (r *Registry) Versions(subj string, deleted bool) ([]int, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s := r.st.subjects[subj]
	if s == nil || len(s.sorted(deleted)) == 0 {
		return nil, errSubjectNotFound(subj)
	}
	out := []int{}
	for _, v := range s.sorted(deleted) {
		out = append(out, v.Version)
	}
	return out, nil
}

// Version returns one version; v = -1 is "latest".
func (r *Registry) Version(subj string, v int, deleted bool) (SchemaRef, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s := r.st.subjects[subj]
	if s == nil || len(s.sorted(true)) == 0 {
		return SchemaRef{}, errSubjectNotFound(subj)
	}
	vs := s.sorted(deleted)
	if v == -1 {
		if len(vs) == 0 {
			return SchemaRef{}, errSubjectNotFound(subj)
		}
		return ref(vs[len(vs)-1]), nil
	}
	ver := s.versions[v]
	if ver == nil || (ver.Deleted && !deleted) {
		return SchemaRef{}, errVersionNotFound(v)
	}
	return ref(ver), nil
}

// SchemaByID returns the text of schema id (40403 when unknown).
func (r *Registry) SchemaByID(id int) (string, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.st.ids[id]
	if !ok {
		return "", errSchemaIDNotFound(id)
	}
	return t, nil
}

// SubjectVersion is one (subject, version) that uses a schema id.
type SubjectVersion struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// IDUsages lists the (subject, version) pairs using schema id.
func (r *Registry) IDUsages(id int, deleted bool) ([]SubjectVersion, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if _, ok := r.st.ids[id]; !ok {
		return nil, errSchemaIDNotFound(id)
	}
	out := []SubjectVersion{}
	for _, name := range sortedKeys(r.st.subjects) {
		for _, v := range r.st.subjects[name].sorted(deleted) {
			if v.ID == id {
				out = append(out, SubjectVersion{name, v.Version})
			}
		}
	}
	return out, nil
}

// checkWritable refuses deletes in READONLY mode (42205), as Confluent's
// deleteSubject and deleteSchemaVersion.
func (r *Registry) checkWritable(subj string) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if m := r.st.mode(subj); m == "READONLY" || m == "READONLY_OVERRIDE" {
		return errReadOnly(subj)
	}
	return nil
}

// DeleteSubject soft-deletes every version of subj, or with permanent
// removes the (already soft-deleted) versions; it returns the versions.
func (r *Registry) DeleteSubject(ctx context.Context, subj string, permanent bool) ([]int, error) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	if err := r.checkWritable(subj); err != nil {
		return nil, err
	}
	r.mu.RLock()
	s := r.st.subjects[subj]
	var all, live []*version
	if s != nil {
		all, live = s.sorted(true), s.sorted(false)
	}
	_, hasCompat := r.st.subjectCompat[subj]
	_, hasMode := r.st.subjectMode[subj]
	r.mu.RUnlock()
	if len(all) == 0 {
		return nil, errSubjectNotFound(subj)
	}
	var recs []kafkalog.Record
	var out []int
	if permanent {
		if len(live) > 0 {
			return nil, errSubjectNotSoftDeleted(subj)
		}
		for _, v := range all {
			out = append(out, v.Version)
			recs = append(recs, kafkalog.Record{Key: schemaKeyBytes(subj, v.Version)})
		}
	} else {
		if len(live) == 0 {
			return nil, errSubjectSoftDeleted(subj)
		}
		for _, v := range live {
			out = append(out, v.Version)
		}
		recs = append(recs, kafkalog.Record{
			Key:   subjectKeyBytes(keyDeleteSubject, subj),
			Value: marshal(deleteSubjectValue{Subject: subj, Version: all[len(all)-1].Version}),
		})
		// Soft-deleted versions are also written as such, so that the
		// state survives compaction of the DELETE_SUBJECT record.
		for _, v := range live {
			recs = append(recs, kafkalog.Record{Key: schemaKeyBytes(subj, v.Version),
				Value: marshal(schemaValue{Subject: subj, Version: v.Version, ID: v.ID, Schema: v.Schema, Deleted: true})})
		}
		if hasCompat {
			recs = append(recs, kafkalog.Record{Key: subjectKeyBytes(keyConfig, subj)})
		}
		if hasMode {
			recs = append(recs, kafkalog.Record{Key: subjectKeyBytes(keyMode, subj)})
		}
	}
	if err := r.write(ctx, recs...); err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteVersion soft-deletes one version (v = -1: latest), or with
// permanent removes an already soft-deleted one; it returns the version.
func (r *Registry) DeleteVersion(ctx context.Context, subj string, v int, permanent bool) (int, error) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	if err := r.checkWritable(subj); err != nil {
		return 0, err
	}
	r.mu.RLock()
	s := r.st.subjects[subj]
	var ver *version
	if s != nil {
		if v == -1 {
			vs := s.sorted(permanent)
			if len(vs) > 0 {
				ver = vs[len(vs)-1]
			}
		} else {
			ver = s.versions[v]
		}
	}
	var cp version
	if ver != nil {
		cp = *ver
	}
	r.mu.RUnlock()
	if s == nil {
		return 0, errSubjectNotFound(subj)
	}
	if ver == nil {
		return 0, errVersionNotFound(v)
	}
	var rec kafkalog.Record
	switch {
	case permanent && !cp.Deleted:
		return 0, errVersionNotSoftDeleted(subj, cp.Version)
	case permanent:
		rec = kafkalog.Record{Key: schemaKeyBytes(subj, cp.Version)}
	case cp.Deleted:
		return 0, errVersionSoftDeleted(subj, cp.Version)
	default:
		rec = kafkalog.Record{Key: schemaKeyBytes(subj, cp.Version),
			Value: marshal(schemaValue{Subject: subj, Version: cp.Version, ID: cp.ID, Schema: cp.Schema, Deleted: true})}
	}
	if err := r.write(ctx, rec); err != nil {
		return 0, err
	}
	return cp.Version, nil
}

// CheckCompatibility tests schema against version v of subj (-1: latest;
// 0: every version, as POST /compatibility/subjects/{s}/versions). It
// returns the failure messages (empty = compatible).
func (r *Registry) CheckCompatibility(subj string, v int, schema string) ([]string, error) {
	_, parsed, err := normalize(schema)
	if err != nil {
		return nil, err
	}
	r.mu.RLock()
	level := r.st.compat(subj)
	s := r.st.subjects[subj]
	var against []*version
	if s != nil {
		live := s.sorted(false)
		switch {
		case v == 0:
			against = live
		case v == -1:
			if len(live) > 0 {
				against = live[len(live)-1:]
			}
		default:
			if ver := s.versions[v]; ver != nil && !ver.Deleted {
				against = []*version{ver}
			}
		}
	}
	r.mu.RUnlock()
	if v > 0 && len(against) == 0 {
		if s == nil {
			return nil, errSubjectNotFound(subj)
		}
		return nil, errVersionNotFound(v)
	}
	var prev []avro.Schema
	for _, ver := range against {
		if p, err := parseSchema(ver.Schema); err == nil {
			prev = append(prev, p)
		}
	}
	if v == 0 && !strings.HasSuffix(level, "_TRANSITIVE") && level != "NONE" {
		level += "_TRANSITIVE"
	}
	return checkCompat(level, parsed, prev), nil
}

// Compatibility returns the level of subj ("" = global); with
// defaultToGlobal=false a subject without its own level gives 40408.
func (r *Registry) Compatibility(subj string, defaultToGlobal bool) (string, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if subj != "" && !defaultToGlobal {
		c, ok := r.st.subjectCompat[subj]
		if !ok {
			return "", errSubjectCompatNotConfigured(subj)
		}
		return c, nil
	}
	return r.st.compat(subj), nil
}

// SetCompatibility sets the level of subj ("" = global); level is
// case-insensitive (42203 when unknown).
func (r *Registry) SetCompatibility(ctx context.Context, subj, level string) (string, error) {
	level = strings.ToUpper(strings.TrimSpace(level))
	if !compatLevels[level] {
		return "", errInvalidCompatibility()
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	err := r.write(ctx, kafkalog.Record{Key: subjectKeyBytes(keyConfig, subj), Value: marshal(configValue{Subject: subj, CompatibilityLevel: level})})
	return level, err
}

// DeleteCompatibility removes the level of subj ("" = global, back to
// BACKWARD) and returns the level it had.
func (r *Registry) DeleteCompatibility(ctx context.Context, subj string) (string, error) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.mu.RLock()
	old := r.st.compat(subj)
	_, has := r.st.subjectCompat[subj]
	_, known := r.st.subjects[subj]
	r.mu.RUnlock()
	if subj != "" && !has {
		if !known {
			return "", errSubjectNotFound(subj)
		}
		return "", errSubjectCompatNotConfigured(subj)
	}
	return old, r.write(ctx, kafkalog.Record{Key: subjectKeyBytes(keyConfig, subj)})
}

// Modes accepted by PUT /mode, as Confluent's Mode enum.
var modes = map[string]bool{"READWRITE": true, "READONLY": true, "READONLY_OVERRIDE": true, "IMPORT": true}

// Mode returns the mode of subj ("" = global).
func (r *Registry) Mode(subj string, defaultToGlobal bool) (string, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if subj != "" && !defaultToGlobal {
		m, ok := r.st.subjectMode[subj]
		if !ok {
			return "", errSubjectModeNotConfigured(subj)
		}
		return m, nil
	}
	return r.st.mode(subj), nil
}

// SetMode sets the mode of subj ("" = global); 42204 when unknown. As
// Confluent's KafkaSchemaRegistry.setMode, switching to IMPORT needs the
// scope (every subject for "", else subj) to have no live version unless
// force: 42205 "Cannot import since found existing subjects".
func (r *Registry) SetMode(ctx context.Context, subj, mode string, force bool) (string, error) {
	mode = strings.ToUpper(strings.TrimSpace(mode))
	if !modes[mode] {
		return "", errInvalidMode()
	}
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	if err := r.store.ReadToEnd(ctx); err != nil {
		return "", errStore(err)
	}
	if mode == "IMPORT" && !force {
		r.mu.RLock()
		cur := r.st.mode(subj)
		occupied := false
		for name, s := range r.st.subjects {
			if (subj == "" || name == subj) && len(s.sorted(false)) > 0 {
				occupied = true
			}
		}
		r.mu.RUnlock()
		if cur != "IMPORT" && occupied {
			return "", errCannotImport()
		}
	}
	return mode, r.write(ctx, kafkalog.Record{Key: subjectKeyBytes(keyMode, subj), Value: marshal(modeValue{Subject: subj, Mode: mode})})
}
