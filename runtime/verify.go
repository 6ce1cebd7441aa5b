package runtime

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/transforms"
)

// connectd verify (issue 21): does what downstream holds equal the source?
//
// A verification reads the connector's source tables with the connector's
// own code (connect.CurrentReader: the snapshot's reading, without a slot),
// runs every row through the connector's transformation chain and
// converters, exactly as the live pipeline would, and compares the result
// with the latest state per key of the connector's topics (a compacted read
// of the change events: a delete, a tombstone or a rewritten delete
// (__deleted=true) removes the key). Values are compared field by field on
// what a consumer sees: the "after" image of a Debezium envelope (op,
// source, ts_ms, transaction and before are metadata of the change, not of
// the row), or the whole value of an unwrapped record minus the fields
// ExtractNewRecordState adds (named with its add.fields.prefix, "__" by
// default). A field that a record lacks counts as null: a row written before
// a column was added is equal when the source holds null there.
//
// Consistency while changes keep flowing: the source read and the topic read
// cannot be at one instant. A key that differs is therefore looked at again
// (rounds): after the topics stop growing for a moment (or a bounded wait),
// the source is read again and the topics from where the last round ended;
// only keys that differ in every round are reported, and a key whose source
// row changed between the last two rounds is reported as changing, not as
// different.
//
// Memory: a source row and a topic key take a hash each (about 100 bytes
// with the map overhead); buckets > 1 splits the keys into that many
// passes by a hash of the key, each pass reading the source and the topics
// again, so memory is divided by buckets at the cost of as many reads.

// VerifyOptions are the parameters of a verification.
type VerifyOptions struct {
	// Tables restricts the comparison to these tables (schema.table, or
	// db.table for MySQL) or topics; empty = every captured table.
	Tables []string `json:"tables,omitempty"`
	// Rounds is how many times differing keys are looked at (default 3).
	Rounds int `json:"rounds,omitempty"`
	// SettleMs is the longest wait for the topics to stop growing between
	// rounds (default 10000).
	SettleMs int `json:"settle_ms,omitempty"`
	// Buckets splits the keys into passes to bound memory (default 1).
	Buckets int `json:"buckets,omitempty"`
	// Examples is how many keys of each kind are shown per table (default 5).
	Examples int `json:"examples,omitempty"`
	// Against is what the source is compared with: "topic" (default, the
	// connector's topics), the name of a sink connector reading them (its
	// target tables; verify_sink.go), or the id of a SQL job reading them
	// (its result topic against its SELECT run on the source;
	// verify_job.go). A connector of that name is taken before a job.
	Against string `json:"against,omitempty"`
}

// VerifyResult is the state and the result of a verification, as the REST
// API shows it.
type VerifyResult struct {
	Connector string `json:"connector"`
	// State is RUNNING, CONSISTENT (nothing differs), DIFFERENT, or FAILED
	// (Error says why).
	State    string        `json:"state"`
	Error    string        `json:"error,omitempty"`
	Options  VerifyOptions `json:"options"`
	Started  time.Time     `json:"started"`
	Finished *time.Time    `json:"finished,omitempty"`
	// Phase tells what a running verification does now.
	Phase string `json:"phase,omitempty"`
	// SourceRowsRead and TopicRecordsRead count what was read in all rounds.
	SourceRowsRead   int64 `json:"source_rows_read"`
	TopicRecordsRead int64 `json:"topic_records_read"`
	Rounds           int   `json:"rounds"`
	// SourcePosition is where the last source read was consistent (the
	// connector's own offset fields, e.g. lsn); ConnectorOffsets is the
	// connector's committed offset read at the end: when it is behind the
	// source position, the topics may lack the newest changes.
	SourcePosition   map[string]any   `json:"source_position,omitempty"`
	ConnectorOffsets []map[string]any `json:"connector_offsets,omitempty"`
	// SinkLag (against a sink) is how many records of its topics the sink
	// had not committed when the last round compared.
	SinkLag int64 `json:"sink_lag,omitempty"`
	// Job (against a SQL job) is the job compared: its result topic is
	// the one table's Topic, its SELECT run on the source the SourceRows;
	// JobLag is how many records of its source topics the job had not
	// committed the results of when the last round compared.
	Job    string `json:"job,omitempty"`
	JobLag int64  `json:"job_lag,omitempty"`
	// Ignored names the value fields left out of the comparison.
	Ignored []string             `json:"ignored_fields,omitempty"`
	Tables  []*VerifyTableResult `json:"tables"`
}

// VerifyTableResult is the comparison of one topic (one captured table).
type VerifyTableResult struct {
	Topic string `json:"topic,omitempty"`
	// SinkTable and SinkRows (against a sink): the target table and how
	// many rows it holds; SourceRows are then the rows the source's current
	// state leaves there, and Problem says why the table could not be
	// compared (e.g. it does not exist: every row is missing).
	SinkTable string `json:"sink_table,omitempty"`
	SinkRows  int64  `json:"sink_rows,omitempty"`
	Problem   string `json:"problem,omitempty"`
	// Table is the source table (schema.table / db.table) when the records
	// say it (their source block), else empty; against a SQL job, the
	// tables its SELECT reads on the source (comma-separated).
	Table      string          `json:"table,omitempty"`
	SourceRows int64           `json:"source_rows"`
	TopicKeys  int64           `json:"topic_keys"`
	Missing    int64           `json:"missing"`   // in the source, not in the topic
	Extra      int64           `json:"extra"`     // in the topic, not in the source
	Different  int64           `json:"different"` // in both, with other values
	Changing   int64           `json:"changing"`  // differed, and the source row changed between rounds
	Examples   []VerifyExample `json:"examples,omitempty"`
}

// VerifyExample is one differing key.
type VerifyExample struct {
	Kind string          `json:"kind"` // missing, extra, different, changing
	Key  json.RawMessage `json:"key"`
	// Columns are the fields whose values differ (kind different).
	Columns []string        `json:"columns,omitempty"`
	Source  json.RawMessage `json:"source,omitempty"`
	Topic   json.RawMessage `json:"topic,omitempty"`
	// Sink is the sink table's row (against a sink), its columns as text.
	Sink json.RawMessage `json:"sink,omitempty"`
}

// Verification states.
const (
	VerifyRunning    = "RUNNING"
	VerifyConsistent = "CONSISTENT"
	VerifyDifferent  = "DIFFERENT"
	VerifyFailed     = "FAILED"
)

// ErrVerifyRunning is returned when a verification of the connector runs.
var ErrVerifyRunning = errors.New("a verification of this connector is running")

type verifications struct {
	mu   sync.Mutex
	last map[string]*verifyRun
}

type verifyRun struct {
	mu  sync.Mutex
	res VerifyResult
}

func (r *verifyRun) update(f func(*VerifyResult)) {
	r.mu.Lock()
	f(&r.res)
	r.mu.Unlock()
}

func (r *verifyRun) snapshot() VerifyResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, _ := json.Marshal(r.res)
	var out VerifyResult
	_ = json.Unmarshal(b, &out)
	out.SourcePosition, out.ConnectorOffsets = r.res.SourcePosition, r.res.ConnectorOffsets
	return out
}

// StartVerify starts a verification of connector name in the background and
// returns its first state; VerifyStatus follows it.
func (h *Herder) StartVerify(name string, opts VerifyOptions) (VerifyResult, error) {
	if _, _, _, ok := h.snapshot(name); !ok {
		return VerifyResult{}, fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	h.verify.mu.Lock()
	if h.verify.last == nil {
		h.verify.last = map[string]*verifyRun{}
	}
	if r := h.verify.last[name]; r != nil && r.snapshot().State == VerifyRunning {
		h.verify.mu.Unlock()
		return r.snapshot(), ErrVerifyRunning
	}
	opts = opts.withDefaults()
	run := &verifyRun{res: VerifyResult{Connector: name, State: VerifyRunning, Options: opts, Started: time.Now().UTC(), Phase: "starting", Tables: []*VerifyTableResult{}}}
	h.verify.last[name] = run
	h.verify.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(h.ctx, 24*time.Hour)
		defer cancel()
		go func() { // the worker stopping ends the verification
			select {
			case <-h.stopCh:
				cancel()
			case <-ctx.Done():
			}
		}()
		err := h.runVerify(ctx, name, opts, run)
		now := time.Now().UTC()
		run.update(func(r *VerifyResult) {
			r.Finished, r.Phase = &now, ""
			switch {
			case err != nil:
				r.State, r.Error = VerifyFailed, err.Error()
			case r.differences() > 0:
				r.State = VerifyDifferent
			default:
				r.State = VerifyConsistent
			}
		})
		res := run.snapshot()
		h.metrics.Verified(name, res.State, res.differences(), now)
		h.log.Info("verification finished", "connector", name, "state", res.State, "differences", res.differences(), "err", res.Error)
	}()
	return run.snapshot(), nil
}

// VerifyStatus returns the state of the last verification of name.
func (h *Herder) VerifyStatus(name string) (VerifyResult, error) {
	h.verify.mu.Lock()
	r := h.verify.last[name]
	h.verify.mu.Unlock()
	if r == nil {
		return VerifyResult{}, fmt.Errorf("%w: no verification of %s has run on this worker", ErrNotFound, name)
	}
	return r.snapshot(), nil
}

func (o VerifyOptions) withDefaults() VerifyOptions {
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	if o.SettleMs <= 0 {
		o.SettleMs = 10000
	}
	if o.Buckets <= 0 {
		o.Buckets = 1
	}
	if o.Examples <= 0 {
		o.Examples = 5
	}
	return o
}

func (r *VerifyResult) differences() int64 {
	var n int64
	for _, t := range r.Tables {
		n += t.Missing + t.Extra + t.Different
	}
	return n
}

// verifyEnv is what one verification works with.
type verifyEnv struct {
	h        *Herder
	name     string
	cfg      map[string]string // the task's resolved config
	reader   func() connect.CurrentReader
	task     func() connect.SourceTask // a fresh task of the connector
	conn     map[string]string         // the connector's resolved config (its transforms)
	chain    func() (*transforms.Chain, error)
	keyConv  connect.Converter
	valConv  connect.Converter
	keyRead  connect.ToConnectConverter
	valRead  connect.ToConnectConverter
	skip     map[string]bool // topics that hold no rows (heartbeats, transactions, schema changes)
	include  func(topic, table string) bool
	prefix   string // ExtractNewRecordState's add.fields.prefix
	opts     VerifyOptions
	run      *verifyRun
	consumer *kgo.Client
}

func (h *Herder) runVerify(ctx context.Context, name string, opts VerifyOptions, run *verifyRun) error {
	connCfg, _, _, ok := h.snapshot(name)
	if !ok {
		return fmt.Errorf("%w: %s", ErrNotFound, name)
	}
	taskCfgs, err := h.TaskConfigs(name)
	if err != nil {
		return err
	}
	if len(taskCfgs) == 0 {
		return fmt.Errorf("connector %s has no tasks yet", name)
	}
	if len(taskCfgs) > 1 {
		return fmt.Errorf("connector %s has %d tasks: verify reads sources of one task", name, len(taskCfgs))
	}
	cfg, resolvedConn, err := h.resolveTaskConfig(taskCfgs[0], connCfg)
	if err != nil {
		return err
	}
	class := connCfg["connector.class"]
	factory, _, ok := h.plugins.Source(class)
	if !ok {
		return fmt.Errorf("connector %s (%s) is not a source connector: verify compares a source connector's tables with its topics", name, class)
	}
	src := factory()
	if _, ok := src.NewTask().(connect.CurrentReader); !ok {
		return fmt.Errorf("connector class %s cannot read its tables for verify", class)
	}
	env := &verifyEnv{h: h, name: name, cfg: cfg, opts: opts, run: run,
		reader: func() connect.CurrentReader { return src.NewTask().(connect.CurrentReader) },
		chain:  func() (*transforms.Chain, error) { return transforms.NewChain(resolvedConn) },
		task:   func() connect.SourceTask { return src.NewTask() },
		conn:   resolvedConn,
	}
	if env.keyConv, err = newConverter(h.cfg, cfg, true); err != nil {
		return err
	}
	if env.valConv, err = newConverter(h.cfg, cfg, false); err != nil {
		return err
	}
	var okk, okv bool
	env.keyRead, okk = env.keyConv.(connect.ToConnectConverter)
	env.valRead, okv = env.valConv.(connect.ToConnectConverter)
	if !okk || !okv {
		return fmt.Errorf("the converters of %s cannot read records back", name)
	}
	env.prefix = "__"
	for k, v := range resolvedConn {
		if strings.HasPrefix(k, "transforms.") && strings.HasSuffix(k, ".add.fields.prefix") {
			env.prefix = v
		}
	}
	prefix := cfg["topic.prefix"]
	if prefix == "" {
		prefix = cfg["database.server.name"]
	}
	hb := cfg["topic.heartbeat.prefix"]
	if hb == "" {
		hb = "__debezium-heartbeat"
	}
	env.skip = map[string]bool{prefix: true, prefix + ".transaction": true, hb + "." + prefix: true}
	if t := cfg["topic.transaction"]; t != "" {
		env.skip[prefix+"."+t] = true
	}
	want := map[string]bool{}
	for _, t := range opts.Tables {
		want[strings.ToLower(t)] = true
	}
	env.include = func(topic, table string) bool {
		return len(want) == 0 || want[strings.ToLower(topic)] || (table != "" && want[strings.ToLower(table)])
	}
	env.consumer, err = kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(h.brokers...), kgo.WithLogger(kafkaClientLogger()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted())}, h.adminSec.opts()...)...)
	if err != nil {
		return err
	}
	defer env.consumer.Close()
	_, _, _, isConnector := h.snapshot(opts.Against)
	switch {
	case opts.Against != "" && opts.Against != "topic" && !isConnector && h.sqlJobs != nil && h.sqlJobs.Has(opts.Against):
		if err := env.againstJob(ctx, opts.Against); err != nil {
			return err
		}
	case opts.Against != "" && opts.Against != "topic":
		if err := env.againstSink(ctx, opts.Against); err != nil {
			return err
		}
	default:
		results := map[string]*VerifyTableResult{}
		for b := 0; b < opts.Buckets; b++ {
			if err := env.pass(ctx, b, results); err != nil {
				return err
			}
		}
	}
	offs, err := h.ConnectorOffsets(ctx, name)
	if err == nil {
		run.update(func(r *VerifyResult) {
			r.ConnectorOffsets = nil
			for _, o := range offs {
				r.ConnectorOffsets = append(r.ConnectorOffsets, o.Offset)
			}
		})
	}
	return nil
}

// verifyKey is one key's state on one side: the hash of its row, and on the
// topic side where its latest record is (for examples).
type verifyEntry struct {
	hash      [16]byte
	partition int32
	offset    int64
}

type sideState map[string]map[string]verifyEntry // topic → canonical key → entry

func (s sideState) put(topic, key string, e verifyEntry) {
	m := s[topic]
	if m == nil {
		m = map[string]verifyEntry{}
		s[topic] = m
	}
	m[key] = e
}

// pass compares the keys of bucket b.
func (e *verifyEnv) pass(ctx context.Context, bucket int, results map[string]*VerifyTableResult) error {
	inBucket := func(key string) bool {
		if e.opts.Buckets == 1 {
			return true
		}
		f := fnv.New32a()
		f.Write([]byte(key))
		return int(f.Sum32()%uint32(e.opts.Buckets)) == bucket
	}
	tables := map[string]string{} // topic → source table
	var src sideState
	readSource := func(keep map[string]map[string]bool) (sideState, map[string]map[string][]byte, error) {
		e.run.update(func(r *VerifyResult) {
			r.Phase = fmt.Sprintf("reading the source (bucket %d of %d)", bucket+1, e.opts.Buckets)
		})
		out := sideState{}
		rows := map[string]map[string][]byte{}
		chain, err := e.chain()
		if err != nil {
			return nil, nil, err
		}
		defer chain.Close()
		pos, err := e.reader().ReadCurrent(ctx, e.cfg, func(rec *connect.SourceRecord) error {
			e.run.update(func(r *VerifyResult) { r.SourceRowsRead++ })
			table := recordTable(rec)
			out2, err := chain.Apply(rec)
			if err != nil {
				return fmt.Errorf("transforming a row of %s: %w", table, err)
			}
			if out2 == nil {
				return nil
			}
			if !e.include(out2.Topic, table) {
				return nil
			}
			kb, err := e.keyConv.FromConnect(out2.Topic, out2.KeySchema, out2.Key)
			if err != nil {
				return fmt.Errorf("converting the key of a row of %s: %w", table, err)
			}
			vb, err := e.valConv.FromConnect(out2.Topic, out2.ValueSchema, out2.Value)
			if err != nil {
				return fmt.Errorf("converting a row of %s: %w", table, err)
			}
			key, row, deleted, err := e.decode(out2.Topic, kb, vb)
			if err != nil {
				return err
			}
			if deleted || !inBucket(key) {
				return nil
			}
			tables[out2.Topic] = table
			out.put(out2.Topic, key, verifyEntry{hash: rowHash(row)})
			if keep != nil && keep[out2.Topic][key] {
				if rows[out2.Topic] == nil {
					rows[out2.Topic] = map[string][]byte{}
				}
				rows[out2.Topic][key] = rowJSON(row)
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("reading the source: %w", err)
		}
		e.run.update(func(r *VerifyResult) { r.SourcePosition = pos })
		return out, rows, nil
	}
	var err error
	if src, _, err = readSource(nil); err != nil {
		return err
	}
	// The topics: those the source rows go to, and those the connector
	// wrote (rows deleted since, tables dropped).
	topicSet := map[string]bool{}
	for t := range src {
		topicSet[t] = true
	}
	for _, t := range e.h.ActiveTopics(e.name) {
		if !e.skip[t] && e.include(t, "") {
			topicSet[t] = true
		}
	}
	var topics []string
	for t := range topicSet {
		topics = append(topics, t)
	}
	sort.Strings(topics)
	dst := sideState{}
	next := map[string]map[int32]int64{}
	if err := e.readTopics(ctx, topics, next, dst, inBucket); err != nil {
		return err
	}
	diff := compareSides(src, dst, nil)
	prevRows := map[string]map[string][]byte{}
	changing := map[string]map[string]bool{}
	for round := 2; round <= e.opts.Rounds && countKeys(diff) > 0; round++ {
		e.run.update(func(r *VerifyResult) { r.Phase = fmt.Sprintf("round %d: waiting for the topics to settle", round) })
		if err := e.settle(ctx, topics); err != nil {
			return err
		}
		src2, rows, err := readSource(diff)
		if err != nil {
			return err
		}
		// A differing key whose source row changed since the last round is
		// changing: the pipeline may not have caught up with it yet.
		for t, keys := range diff {
			for k := range keys {
				if a, b := src[t][k], src2[t][k]; a.hash != b.hash {
					if changing[t] == nil {
						changing[t] = map[string]bool{}
					}
					changing[t][k] = true
				} else if changing[t] != nil {
					delete(changing[t], k)
				}
			}
		}
		if err := e.readTopics(ctx, topics, next, dst, inBucket); err != nil {
			return err
		}
		src, prevRows = src2, rows
		diff = compareSides(src, dst, diff)
		e.run.update(func(r *VerifyResult) { r.Rounds = round })
	}
	e.run.update(func(r *VerifyResult) {
		if r.Rounds == 0 {
			r.Rounds = 1
		}
		r.Ignored = []string{"op", "source", "ts_ms", "ts_us", "ts_ns", "transaction", "before", e.prefix + "*"}
	})
	// The result of this bucket.
	all := map[string]bool{}
	for _, t := range topics {
		all[t] = true
	}
	for t := range src {
		all[t] = true
	}
	var names []string
	for t := range all {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		tr := results[t]
		if tr == nil {
			tr = &VerifyTableResult{Topic: t, Table: tables[t]}
			results[t] = tr
			e.run.update(func(r *VerifyResult) { r.Tables = append(r.Tables, tr) })
		}
		keys := make([]string, 0, len(diff[t]))
		for k := range diff[t] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var examples []VerifyExample
		e.run.update(func(r *VerifyResult) {
			tr.SourceRows += int64(len(src[t]))
			tr.TopicKeys += int64(len(dst[t]))
		})
		for _, k := range keys {
			_, inSrc := src[t][k]
			d, inDst := dst[t][k]
			kind := "different"
			switch {
			case changing[t][k]:
				kind = "changing"
			case !inDst:
				kind = "missing"
			case !inSrc:
				kind = "extra"
			}
			e.run.update(func(r *VerifyResult) {
				switch kind {
				case "changing":
					tr.Changing++
				case "missing":
					tr.Missing++
				case "extra":
					tr.Extra++
				default:
					tr.Different++
				}
			})
			if len(examples) >= e.opts.Examples*4 || countKind(examples, kind) >= e.opts.Examples {
				continue
			}
			ex := VerifyExample{Kind: kind, Key: json.RawMessage(k)}
			if inSrc {
				ex.Source = prevRows[t][k]
			}
			if inDst {
				if row, err := e.fetchRow(ctx, t, d); err == nil {
					ex.Topic = rowJSON(row)
					if ex.Source != nil {
						ex.Columns = differingColumns(ex.Source, ex.Topic)
					}
				}
			}
			examples = append(examples, ex)
		}
		e.run.update(func(r *VerifyResult) { tr.Examples = append(tr.Examples, examples...) })
	}
	return nil
}

func countKind(ex []VerifyExample, kind string) int {
	n := 0
	for _, e := range ex {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

func countKeys(d map[string]map[string]bool) int {
	n := 0
	for _, m := range d {
		n += len(m)
	}
	return n
}

// compareSides returns the keys that differ between src and dst, among only
// (nil = all keys).
func compareSides(src, dst sideState, only map[string]map[string]bool) map[string]map[string]bool {
	diff := map[string]map[string]bool{}
	add := func(t, k string) {
		if diff[t] == nil {
			diff[t] = map[string]bool{}
		}
		diff[t][k] = true
	}
	check := func(t, k string) {
		s, inSrc := src[t][k]
		d, inDst := dst[t][k]
		if inSrc != inDst || s.hash != d.hash {
			add(t, k)
		}
	}
	if only != nil {
		for t, keys := range only {
			for k := range keys {
				check(t, k)
			}
		}
		return diff
	}
	for t, keys := range src {
		for k := range keys {
			check(t, k)
		}
	}
	for t, keys := range dst {
		for k := range keys {
			if _, ok := src[t][k]; !ok {
				add(t, k)
			}
		}
	}
	return diff
}

// readTopics reads topics from next (where the last read ended; the start
// when absent) to their end offsets now, applying each record to dst.
func (e *verifyEnv) readTopics(ctx context.Context, topics []string, next map[string]map[int32]int64, dst sideState, inBucket func(string) bool) error {
	if len(topics) == 0 {
		return nil
	}
	e.run.update(func(r *VerifyResult) { r.Phase = "reading the topics" })
	adm := kadm.NewClient(e.consumer)
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("listing the end offsets of %v: %w", topics, err)
	}
	starts, err := adm.ListStartOffsets(ctx, topics...)
	if err != nil {
		return fmt.Errorf("listing the start offsets of %v: %w", topics, err)
	}
	want := map[string]map[int32]kgo.Offset{}
	remaining := map[string]map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil {
			return
		}
		from := next[o.Topic][o.Partition]
		if s, ok := starts.Lookup(o.Topic, o.Partition); ok && s.Err == nil && s.Offset > from {
			from = s.Offset
		}
		if from >= o.Offset {
			return
		}
		if want[o.Topic] == nil {
			want[o.Topic] = map[int32]kgo.Offset{}
			remaining[o.Topic] = map[int32]int64{}
		}
		want[o.Topic][o.Partition] = kgo.NewOffset().At(from)
		remaining[o.Topic][o.Partition] = o.Offset
	})
	if err := ends.Error(); err != nil {
		return fmt.Errorf("end offsets: %w", err)
	}
	if len(want) == 0 {
		return nil
	}
	e.consumer.AddConsumePartitions(want)
	defer func() {
		rm := map[string][]int32{}
		for t, ps := range want {
			for p := range ps {
				rm[t] = append(rm[t], p)
			}
		}
		e.consumer.RemoveConsumePartitions(rm)
	}()
	left := 0
	for _, ps := range remaining {
		left += len(ps)
	}
	for left > 0 {
		fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		fs := e.consumer.PollFetches(fctx)
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) {
				ferr = fmt.Errorf("reading %s[%d]: %w", t, p, err)
			}
		})
		if ferr != nil {
			return ferr
		}
		var recErr error
		fs.EachRecord(func(r *kgo.Record) {
			if recErr != nil {
				return
			}
			end, ok := remaining[r.Topic][r.Partition]
			if !ok || r.Offset >= end {
				return
			}
			if next[r.Topic] == nil {
				next[r.Topic] = map[int32]int64{}
			}
			next[r.Topic][r.Partition] = r.Offset + 1
			if r.Offset+1 >= end {
				delete(remaining[r.Topic], r.Partition)
				left--
			}
			e.run.update(func(res *VerifyResult) { res.TopicRecordsRead++ })
			if r.Key == nil {
				return // keyless records hold no row state
			}
			key, row, deleted, err := e.decode(r.Topic, r.Key, r.Value)
			if err != nil {
				recErr = fmt.Errorf("%s[%d] offset %d: %w", r.Topic, r.Partition, r.Offset, err)
				return
			}
			if !inBucket(key) {
				return
			}
			if deleted {
				delete(dst[r.Topic], key)
			} else {
				dst.put(r.Topic, key, verifyEntry{hash: rowHash(row), partition: r.Partition, offset: r.Offset})
			}
		})
		if recErr != nil {
			return recErr
		}
		// A read_committed fetch returns nothing for a partition whose last
		// offsets are transaction markers or aborted records: a poll that
		// brought nothing at all means what is left holds no row.
		if fs.NumRecords() == 0 {
			for _, ps := range remaining {
				left -= len(ps)
				clear(ps)
			}
		}
	}
	for t, ps := range want {
		for p := range ps {
			if end, ok := ends.Lookup(t, p); ok {
				if next[t] == nil {
					next[t] = map[int32]int64{}
				}
				next[t][p] = end.Offset
			}
		}
	}
	return nil
}

// settle waits until the end offsets of topics stay the same for a second,
// at most SettleMs.
func (e *verifyEnv) settle(ctx context.Context, topics []string) error {
	adm := kadm.NewClient(e.consumer)
	deadline := time.Now().Add(time.Duration(e.opts.SettleMs) * time.Millisecond)
	var prev string
	for time.Now().Before(deadline) {
		ends, err := adm.ListEndOffsets(ctx, topics...)
		if err != nil {
			return err
		}
		var b strings.Builder
		ends.Each(func(o kadm.ListedOffset) { fmt.Fprintf(&b, "%s/%d/%d;", o.Topic, o.Partition, o.Offset) })
		cur := b.String()
		if cur == prev {
			return nil
		}
		prev = cur
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return nil
}

// fetchRow reads the record at d in topic again (for an example).
func (e *verifyEnv) fetchRow(ctx context.Context, topic string, d verifyEntry) (map[string]any, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(e.h.brokers...), kgo.WithLogger(kafkaClientLogger()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {d.partition: kgo.NewOffset().At(d.offset)}})}, e.h.adminSec.opts()...)...)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(fctx)
		if fctx.Err() != nil {
			return nil, fctx.Err()
		}
		var row map[string]any
		var rerr error
		found := false
		fs.EachRecord(func(r *kgo.Record) {
			if found || r.Offset != d.offset {
				return
			}
			found = true
			_, row, _, rerr = e.decode(topic, r.Key, r.Value)
		})
		if found {
			return row, rerr
		}
	}
}

// decode reads a record's key and value with the connector's converters and
// returns the canonical key, the row a consumer sees (nil for a delete), and
// whether the record deletes its key.
//
// Both sides go through decode (the source rows as the converters' bytes), so
// any deterministic reading compares them right: JsonConverter bytes are read
// as plain JSON (the payload of a schema+payload envelope), which is several
// times faster than building Connect schemas per record; other converters'
// (Avro) through ToConnect.
func (e *verifyEnv) decode(topic string, kb, vb []byte) (string, map[string]any, bool, error) {
	k, err := e.read(e.keyRead, topic, kb)
	if err != nil {
		return "", nil, false, fmt.Errorf("reading a key of %s: %w", topic, err)
	}
	key := string(canonJSON(k))
	if vb == nil {
		return key, nil, true, nil // tombstone
	}
	v, err := e.read(e.valRead, topic, vb)
	if err != nil {
		return "", nil, false, fmt.Errorf("reading a value of %s: %w", topic, err)
	}
	val, ok := v.(map[string]any)
	if !ok {
		return key, map[string]any{"": v}, false, nil
	}
	if op, isEnv := val["op"].(string); isEnv {
		if _, hasAfter := val["after"]; hasAfter {
			if op == "d" {
				return key, nil, true, nil
			}
			after, _ := val["after"].(map[string]any)
			if after == nil {
				return key, nil, true, nil
			}
			return key, dropNulls(after), false, nil
		}
	}
	row := map[string]any{}
	for f, x := range val {
		if e.prefix != "" && strings.HasPrefix(f, e.prefix) {
			if f == e.prefix+"deleted" && (x == "true" || x == true) {
				return key, nil, true, nil
			}
			continue
		}
		row[f] = x
	}
	return key, dropNulls(row), false, nil
}

// read decodes b with conv into JSON-like values (plainValue).
func (e *verifyEnv) read(conv connect.ToConnectConverter, topic string, b []byte) (any, error) {
	if b == nil {
		return nil, nil
	}
	if _, ok := conv.(*converters.JSONConverter); ok {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if m, ok := v.(map[string]any); ok && len(m) == 2 {
			if p, ok := m["payload"]; ok {
				if _, ok := m["schema"]; ok {
					return p, nil
				}
			}
		}
		return v, nil
	}
	_, v, err := conv.ToConnect(topic, b)
	if err != nil {
		return nil, err
	}
	return plainValue(v), nil
}

func dropNulls(m map[string]any) map[string]any {
	for k, v := range m {
		if v == nil {
			delete(m, k)
		}
	}
	return m
}

// plainValue turns Connect data into JSON-able values: structs into maps of
// their fields, bytes into base64, decimals into their decimal text.
func plainValue(v any) any {
	switch x := v.(type) {
	case *connect.Struct:
		if x == nil {
			return nil
		}
		m := make(map[string]any, len(x.Schema.Fields))
		for _, f := range x.Schema.Fields {
			m[f.Name] = plainValue(x.Get(f.Name))
		}
		return m
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = plainValue(e)
		}
		return m
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = plainValue(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainValue(e)
		}
		return out
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case connect.Decimal:
		if x.Unscaled == nil {
			return nil
		}
		return fmt.Sprintf("%se-%d", x.Unscaled.String(), x.Scale)
	case *connect.Decimal:
		if x == nil {
			return nil
		}
		return plainValue(*x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case float32:
		return float64(x)
	default:
		return v
	}
}

// canonJSON is v as JSON with sorted keys (encoding/json sorts map keys).
func canonJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(fmt.Sprintf("%q", fmt.Sprint(v)))
	}
	return b
}

func rowJSON(row map[string]any) []byte {
	if row == nil {
		return nil
	}
	return canonJSON(row)
}

func rowHash(row map[string]any) [16]byte {
	s := sha256.Sum256(canonJSON(row))
	var h [16]byte
	copy(h[:], s[:16])
	return h
}

// differingColumns names the fields whose values differ between two rows
// (JSON objects; a field missing on one side counts as null).
func differingColumns(a, b []byte) []string {
	var x, y map[string]json.RawMessage
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	for k, v := range x {
		seen[k] = true
		if string(y[k]) != string(v) {
			out = append(out, k)
		}
	}
	for k := range y {
		if !seen[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// recordTable is schema.table (or db.table) from a change record's source
// block, or "".
func recordTable(r *connect.SourceRecord) string {
	st, ok := r.Value.(*connect.Struct)
	if !ok || st == nil || st.Schema.Field("source") == nil {
		return ""
	}
	src, ok := st.Get("source").(*connect.Struct)
	if !ok || src == nil {
		return ""
	}
	table, _ := src.Get("table").(string)
	if src.Schema.Field("schema") != nil {
		if s, _ := src.Get("schema").(string); s != "" {
			return s + "." + table
		}
	}
	if src.Schema.Field("db") != nil {
		if d, _ := src.Get("db").(string); d != "" {
			return d + "." + table
		}
	}
	return table
}
