package registry

import (
	"encoding/json"
	"sort"

	"github.com/connectd/connectd/internal/kafkalog"
)

// version is one registered version of a subject.
type version struct {
	Subject string
	Version int
	ID      int
	Schema  string
	Deleted bool
}

type subject struct {
	versions map[int]*version
}

// sorted returns the versions in ascending order; with deleted=false the
// soft-deleted ones are left out.
func (s *subject) sorted(deleted bool) []*version {
	out := make([]*version, 0, len(s.versions))
	for _, v := range s.versions {
		if deleted || !v.Deleted {
			out = append(out, v)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	return out
}

// state is the registry's content as read from `_schemas`. It is changed
// only by apply, in topic order.
type state struct {
	subjects      map[string]*subject
	ids           map[int]string // id → schema text
	byText        map[string]int // schema text → id
	maxID         int
	globalCompat  string // "" = BACKWARD (default)
	subjectCompat map[string]string
	globalMode    string // "" = READWRITE
	subjectMode   map[string]string

	// keys tracks, per SCHEMA key, the offset of the last record applied
	// and of the last one refused as a conflict (see apply): a key whose
	// last record is a refused one needs a repair record (Registry.repair)
	// so that compaction, which keeps the last record of a key, keeps
	// the accepted value.
	keys    map[string]*keyState
	refused int // SCHEMA records refused as conflicts (tests)
}

type keyState struct {
	accepted int64 // offset of the last accepted record, -1 = none
	conflict int64 // offset of the last refused record, -1 = none
	value    []byte
}

func newState() *state {
	return &state{
		subjects: map[string]*subject{}, ids: map[int]string{}, byText: map[string]int{},
		subjectCompat: map[string]string{}, subjectMode: map[string]string{},
		keys: map[string]*keyState{},
	}
}

// apply folds one `_schemas` record (at offset) into the state. Unknown
// or malformed records are ignored, as Confluent's KafkaStoreReaderThread
// skips them.
//
// Several registries may write the topic at once without a leader
// (Confluent elects one; we write optimistically and read back), so a
// SCHEMA record that races another is refused here, the same way by every
// reader since they all read the same order: the first record in the
// topic wins (1) an id (another text under it, in any mode) and (2)
// outside IMPORT mode, a live (subject, version) (another id in it). The
// refused writer sees its record missing when it reads back and registers
// again. One schema text keeps one id without a rule of its own: a writer
// takes a new id only from a prefix of the topic in which the text has
// none, as max id + 1, so a second id for the same text would be an id an
// accepted record of that prefix already holds, refused by (1). (IMPORT
// mode may give a text a second id on purpose; byText keeps the first.
// A text rule would also misjudge imported records once compaction
// dropped the MODE record that allowed them.)
func (st *state) apply(key, value []byte, offset int64) {
	var k struct {
		KeyType string  `json:"keytype"`
		Subject *string `json:"subject"`
		Version int     `json:"version"`
	}
	if json.Unmarshal(key, &k) != nil {
		return
	}
	subj := ""
	if k.Subject != nil {
		subj = *k.Subject
	}
	switch k.KeyType {
	case keySchema:
		ks := st.keys[string(key)]
		if ks == nil {
			ks = &keyState{accepted: -1, conflict: -1}
			st.keys[string(key)] = ks
		}
		if !st.applySchema(subj, k.Version, value) {
			ks.conflict = offset
			st.refused++
			return
		}
		ks.accepted, ks.value = offset, value
	case keyConfig:
		var v configValue
		if value != nil {
			json.Unmarshal(value, &v)
		}
		if subj == "" {
			st.globalCompat = v.CompatibilityLevel
		} else if v.CompatibilityLevel == "" {
			delete(st.subjectCompat, subj)
		} else {
			st.subjectCompat[subj] = v.CompatibilityLevel
		}
	case keyMode:
		var v modeValue
		if value != nil {
			json.Unmarshal(value, &v)
		}
		if subj == "" {
			st.globalMode = v.Mode
		} else if v.Mode == "" {
			delete(st.subjectMode, subj)
		} else {
			st.subjectMode[subj] = v.Mode
		}
	case keyDeleteSubject:
		var v deleteSubjectValue
		if value == nil || json.Unmarshal(value, &v) != nil {
			return
		}
		if s := st.subjects[subj]; s != nil {
			for _, ver := range s.versions {
				if ver.Version <= v.Version {
					ver.Deleted = true
				}
			}
		}
	}
}

// applySchema applies a SCHEMA record and reports whether it was
// accepted (false: a conflict, see apply; malformed records count as
// accepted no-ops).
func (st *state) applySchema(subj string, ver int, value []byte) bool {
	if value == nil { // permanent delete
		if s := st.subjects[subj]; s != nil {
			delete(s.versions, ver)
			if len(s.versions) == 0 {
				delete(st.subjects, subj)
			}
		}
		st.gcIDs()
		return true
	}
	var v schemaValue
	if json.Unmarshal(value, &v) != nil || v.ID <= 0 {
		return true
	}
	if old, ok := st.ids[v.ID]; ok && old != v.Schema {
		return false // (1), also in IMPORT mode (Confluent: "Overwrite new schema with id N is not permitted.")
	}
	imported := st.mode(v.Subject) == "IMPORT"
	s := st.subjects[v.Subject]
	if s == nil {
		s = &subject{versions: map[int]*version{}}
		st.subjects[v.Subject] = s
	}
	if cur := s.versions[v.Version]; cur != nil && !cur.Deleted && cur.ID != v.ID && !imported {
		return false // (2)
	}
	s.versions[v.Version] = &version{Subject: v.Subject, Version: v.Version, ID: v.ID, Schema: v.Schema, Deleted: v.Deleted}
	st.ids[v.ID] = v.Schema
	if _, ok := st.byText[v.Schema]; !ok {
		st.byText[v.Schema] = v.ID
	}
	if v.ID > st.maxID {
		st.maxID = v.ID
	}
	return true
}

// repairs returns the records that make every SCHEMA key whose last
// record was refused end on its accepted value (a tombstone if none was
// ever accepted), so that compaction cannot resurrect a refused record.
func (st *state) repairs() []kafkalog.Record {
	var out []kafkalog.Record
	for k, ks := range st.keys {
		if ks.conflict > ks.accepted {
			out = append(out, kafkalog.Record{Key: []byte(k), Value: ks.value})
		}
	}
	return out
}

// gcIDs forgets ids no version refers to any more (after permanent
// deletes). maxID keeps its value so that an id is never reused.
func (st *state) gcIDs() {
	used := map[int]bool{}
	for _, s := range st.subjects {
		for _, v := range s.versions {
			used[v.ID] = true
		}
	}
	for id, text := range st.ids {
		if !used[id] {
			delete(st.ids, id)
			if st.byText[text] == id {
				delete(st.byText, text)
			}
		}
	}
}

func (st *state) compat(subj string) string {
	if c, ok := st.subjectCompat[subj]; ok && subj != "" {
		return c
	}
	if st.globalCompat != "" {
		return st.globalCompat
	}
	return "BACKWARD"
}

func (st *state) mode(subj string) string {
	if m, ok := st.subjectMode[subj]; ok && subj != "" {
		return m
	}
	if st.globalMode != "" {
		return st.globalMode
	}
	return "READWRITE"
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
