// Package signal holds Debezium's signalling, shared by the relational
// connectors: the signal types and their data (io.debezium.pipeline.signal.
// actions), the connector configuration keys of the signal channels
// (CommonConnectorConfig: signal.*), and the Kafka signal channel
// (io.debezium.pipeline.signal.channels.KafkaSignalChannel).
//
// The source channel (an INSERT into signal.data.collection, read back from
// the change stream) lives in each connector, which sees the change: it
// builds a Signal from the inserted row's three columns (id, type, data).
package signal

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// Signal types, as the NAME constants of Debezium 3.6's signal actions.
const (
	TypeExecuteSnapshot = "execute-snapshot"      // ExecuteSnapshot
	TypeStopSnapshot    = "stop-snapshot"         // StopSnapshot
	TypePauseSnapshot   = "pause-snapshot"        // PauseIncrementalSnapshot
	TypeResumeSnapshot  = "resume-snapshot"       // ResumeIncrementalSnapshot
	TypeLog             = "log"                   // Log
	TypeWindowOpen      = "snapshot-window-open"  // OpenIncrementalSnapshotWindow (watermark)
	TypeWindowClose     = "snapshot-window-close" // CloseIncrementalSnapshotWindow (watermark)
)

// Snapshot types of execute-snapshot / stop-snapshot ("type" in data).
const (
	SnapshotIncremental = "incremental"
	SnapshotBlocking    = "blocking"
)

// Channel names of signal.enabled.channels.
const (
	ChannelSource = "source"
	ChannelKafka  = "kafka"
)

// Signal is one signal record: an arbitrary unique id, the signal type and
// its JSON data ("" when the data column is NULL), as Debezium's
// SignalRecord.
type Signal struct {
	ID   string
	Type string
	Data string
}

// Condition is one entry of execute-snapshot's additional-conditions: the
// WHERE clause fragment Filter applies to the tables whose "<schema>.<table>"
// matches DataCollection (an anchored regular expression).
type Condition struct {
	DataCollection *regexp.Regexp
	Filter         string
}

// ExecuteSnapshot is the data of an execute-snapshot signal.
type ExecuteSnapshot struct {
	DataCollections []*regexp.Regexp // anchored patterns of the tables to snapshot
	Type            string           // SnapshotIncremental or SnapshotBlocking
	Conditions      []Condition
	SurrogateKey    string // column to chunk by instead of the primary key ("" = primary key)
}

// FilterFor returns the filter of the first condition matching id ("" when
// none), as Debezium's AbstractIncrementalSnapshotContext.buildDataCollection.
func (e ExecuteSnapshot) FilterFor(id string) string {
	for _, c := range e.Conditions {
		if c.DataCollection.MatchString(id) {
			return c.Filter
		}
	}
	return ""
}

// Matches reports whether id ("<schema>.<table>") is one of the requested
// data collections.
func (e ExecuteSnapshot) Matches(id string) bool {
	for _, re := range e.DataCollections {
		if re.MatchString(id) {
			return true
		}
	}
	return false
}

// anchored compiles a data-collection pattern the way Debezium matches it
// (Pattern.matcher(id).matches(): the whole identifier).
func anchored(p string) (*regexp.Regexp, error) {
	re, err := regexp.Compile(`^(?:` + strings.TrimSpace(p) + `)$`)
	if err != nil {
		return nil, fmt.Errorf("signal: invalid data collection pattern %q: %w", p, err)
	}
	return re, nil
}

// ParseExecuteSnapshot decodes execute-snapshot data:
//
//	{"data-collections": ["public.t", "public.o.*"], "type": "incremental"|"blocking",
//	 "additional-conditions": [{"data-collection": "public.t", "filter": "a > 1"}],
//	 "surrogate-key": "col"}
//
// type defaults to incremental (case-insensitive); data-collections must not
// be empty. Errors name the offending field.
func ParseExecuteSnapshot(data string) (ExecuteSnapshot, error) {
	var raw struct {
		DataCollections      []string `json:"data-collections"`
		Type                 string   `json:"type"`
		AdditionalConditions []struct {
			DataCollection string `json:"data-collection"`
			Filter         string `json:"filter"`
		} `json:"additional-conditions"`
		SurrogateKey string `json:"surrogate-key"`
	}
	var out ExecuteSnapshot
	if err := json.Unmarshal([]byte(data), &raw); err != nil {
		return out, fmt.Errorf("signal: execute-snapshot data %q: %w", data, err)
	}
	if len(raw.DataCollections) == 0 {
		return out, fmt.Errorf("signal: execute-snapshot data %q: data-collections is empty", data)
	}
	for _, p := range raw.DataCollections {
		re, err := anchored(p)
		if err != nil {
			return out, err
		}
		out.DataCollections = append(out.DataCollections, re)
	}
	switch t := strings.ToLower(strings.TrimSpace(raw.Type)); t {
	case "", SnapshotIncremental:
		out.Type = SnapshotIncremental
	case SnapshotBlocking:
		out.Type = SnapshotBlocking
	default:
		return out, fmt.Errorf("signal: execute-snapshot type %q: must be incremental or blocking", raw.Type)
	}
	for _, c := range raw.AdditionalConditions {
		if c.DataCollection == "" {
			return out, fmt.Errorf("signal: execute-snapshot additional-conditions: data-collection is empty")
		}
		re, err := anchored(c.DataCollection)
		if err != nil {
			return out, err
		}
		out.Conditions = append(out.Conditions, Condition{DataCollection: re, Filter: c.Filter})
	}
	out.SurrogateKey = strings.TrimSpace(raw.SurrogateKey)
	return out, nil
}

// StopSnapshot is the data of a stop-snapshot signal: the patterns of the
// tables to remove from the running snapshot (none = stop it entirely).
type StopSnapshot struct {
	DataCollections []string
	Type            string
}

// ParseStopSnapshot decodes {"data-collections": [...], "type": "incremental"};
// empty data stops the whole snapshot.
func ParseStopSnapshot(data string) (StopSnapshot, error) {
	var raw struct {
		DataCollections []string `json:"data-collections"`
		Type            string   `json:"type"`
	}
	out := StopSnapshot{Type: SnapshotIncremental}
	if strings.TrimSpace(data) == "" {
		return out, nil
	}
	if err := json.Unmarshal([]byte(data), &raw); err != nil {
		return out, fmt.Errorf("signal: stop-snapshot data %q: %w", data, err)
	}
	for _, p := range raw.DataCollections {
		if _, err := anchored(p); err != nil {
			return out, err
		}
	}
	out.DataCollections = raw.DataCollections
	if t := strings.ToLower(strings.TrimSpace(raw.Type)); t != "" {
		if t != SnapshotIncremental {
			return out, fmt.Errorf("signal: stop-snapshot type %q: only incremental can be stopped", raw.Type)
		}
	}
	return out, nil
}

// ParseLog returns the "message" of a log signal's data.
func ParseLog(data string) (string, error) {
	var raw struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal([]byte(data), &raw); err != nil {
		return "", fmt.Errorf("signal: log data %q: %w", data, err)
	}
	return raw.Message, nil
}

// WindowData is the data column of the watermark rows Debezium's
// SignalBasedIncrementalSnapshotChangeEventSource inserts
// (SignalMetadata.metadataString): {"openWindowTimestamp": "<ISO-8601>"} for
// the open row, with "closeWindowTimestamp" added for the close row.
func WindowData(open, close string) string {
	if close == "" {
		return `{"openWindowTimestamp": "` + open + `"}`
	}
	return `{"openWindowTimestamp": "` + open + `", "closeWindowTimestamp": "` + close + `"}`
}
