package registry

import (
	"encoding/json"
	"sort"
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
}

func newState() *state {
	return &state{
		subjects: map[string]*subject{}, ids: map[int]string{}, byText: map[string]int{},
		subjectCompat: map[string]string{}, subjectMode: map[string]string{},
	}
}

// apply folds one `_schemas` record into the state. Unknown or malformed
// records are ignored, as Confluent's KafkaStoreReaderThread skips them.
func (st *state) apply(key, value []byte) {
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
		if value == nil { // permanent delete
			if s := st.subjects[subj]; s != nil {
				delete(s.versions, k.Version)
				if len(s.versions) == 0 {
					delete(st.subjects, subj)
				}
			}
			st.gcIDs()
			return
		}
		var v schemaValue
		if json.Unmarshal(value, &v) != nil || v.ID <= 0 {
			return
		}
		if old, ok := st.ids[v.ID]; ok && old != v.Schema {
			// A concurrent writer took this id for another text first;
			// the first one seen keeps it and this version is not visible
			// (its writer notices and registers again).
			return
		}
		s := st.subjects[v.Subject]
		if s == nil {
			s = &subject{versions: map[int]*version{}}
			st.subjects[v.Subject] = s
		}
		s.versions[v.Version] = &version{Subject: v.Subject, Version: v.Version, ID: v.ID, Schema: v.Schema, Deleted: v.Deleted}
		st.ids[v.ID] = v.Schema
		if _, ok := st.byText[v.Schema]; !ok {
			st.byText[v.Schema] = v.ID
		}
		if v.ID > st.maxID {
			st.maxID = v.ID
		}
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
