package sql

import (
	"context"
	bin "encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/flinklite"
	"github.com/connectd/connectd/flinklite/job"
)

// RunConfig configures Start.
type RunConfig struct {
	Brokers []string
	// ClientOpts are extra franz-go options (SASL, TLS) for every client.
	ClientOpts []kgo.Opt
	// OutputPartitions is the partition count of the output topic when
	// Start creates it (default 1).
	OutputPartitions int32
	// JobID names the job's Kafka transactional id and checkpoint marker
	// topic; Dir holds its checkpoints and state (Manager sets both).
	JobID string
	Dir   string
	// Config is the job's configuration (ParseConfig).
	Config map[string]string
	// LogSync, when set, makes what Kafka acknowledged durable (the
	// embedded broker's Sync), as flinklite.RunConfig.LogSync.
	LogSync func() error
}

// Job is a running query, a flinklite job: a Kafka source of the query's
// topics (read_committed), the Debezium changelog decoder, the query's
// operators (one flinklite.Operator whose state is in the job's
// StateBackend) and the upsert output topic written in Kafka
// transactions. Every checkpoint (execution.checkpointing.interval)
// commits the results so far together with the operators' state and the
// input offsets (flinklite's exactly-once protocol), so a restart resumes
// from the last checkpoint instead of re-reading the sources, and a
// read_committed reader of the output sees each result change once.
type Job struct {
	q      *Query
	env    *flinklite.Env
	cancel context.CancelFunc
	done   chan struct{}

	mu  sync.Mutex
	err error
}

// Start runs q (which must have a Sink) until Stop or an error, with its
// checkpoints and state under cfg.Dir and cfg.JobID its Kafka
// transactional id (the same across restarts of the job). The source
// topics must exist; the output topic is created (compacted) if it does
// not. Without a committed checkpoint the job reads its sources from the
// beginning; a result key the output topic holds that the replay does not
// write is then deleted (a tombstone) once the job has read its sources
// to where they ended at the start.
func Start(ctx context.Context, q *Query, cfg RunConfig) (*Job, error) {
	if q.Sink == "" {
		return nil, errors.New("sql: the query has no result table (CREATE TABLE name AS SELECT … or INSERT INTO name SELECT …)")
	}
	if cfg.Dir == "" || cfg.JobID == "" {
		return nil, errors.New("sql: RunConfig.Dir and JobID are required (the job's checkpoints and transactional id)")
	}
	settings, err := ParseConfig(cfg.Config)
	if err != nil {
		return nil, err
	}
	base := append([]kgo.Opt{kgo.SeedBrokers(cfg.Brokers...)}, cfg.ClientOpts...)
	adm, err := kgo.NewClient(base...)
	if err != nil {
		return nil, err
	}
	defer adm.Close()
	ad := kadm.NewClient(adm)
	td, err := ad.ListTopics(ctx, q.Topics()...)
	if err != nil {
		return nil, err
	}
	for _, t := range q.Topics() {
		if !td.Has(t) || td[t].Err != nil {
			return nil, fmt.Errorf("sql: source topic %s does not exist", t)
		}
	}
	parts := cfg.OutputPartitions
	if parts <= 0 {
		parts = 1
	}
	compact := "compact"
	if _, err := ad.CreateTopic(ctx, parts, -1, map[string]*string{"cleanup.policy": &compact}, q.Sink); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return nil, fmt.Errorf("sql: creating the output topic %s: %w", q.Sink, err)
	}
	op := &queryOp{q: q, pos: map[string]map[int32]int64{}}
	// What a previous run (or a deleted job of the same table) left in
	// the output topic, read_committed when the job first starts: the keys
	// it must write again or delete once it has replayed the sources to
	// where they ended then. Kept in <Dir>/stale.json: until the job's
	// first checkpoint commits, nothing it wrote is committed, so a start
	// without a committed checkpoint uses the same set; a restored
	// checkpoint replaces it with its own (none once its replay ended).
	if err := op.loadStale(ctx, base, ad, filepath.Join(cfg.Dir, "stale.json")); err != nil {
		return nil, err
	}
	var be flinklite.StateBackend
	var pebble *flinklite.PebbleStateBackend
	if settings.StateBackend == "rocksdb" {
		// a working copy, emptied on open: the state is the checkpoint's
		if pebble, err = flinklite.NewPebbleStateBackend(filepath.Join(cfg.Dir, "state")); err != nil {
			return nil, err
		}
		be = pebble
	} else {
		be = flinklite.NewMemoryStateBackend()
	}
	env := flinklite.NewEnv()
	op.p = q.newPipeline(&pipelineState{be: be, ttl: settings.StateTTL.Milliseconds(), now: func() int64 { return time.Now().UnixMilli() }}, "")
	op.be = be
	msgs, err := flinklite.FromKafka(ctx, env, cfg.Brokers, q.Topics(), cfg.ClientOpts...)
	if err != nil {
		if pebble != nil {
			pebble.Close()
		}
		return nil, err
	}
	// positions read, for the end of the replay (stale keys)
	msgs = flinklite.Map(msgs, func(m flinklite.Message) flinklite.Message {
		if op.stale != nil {
			if op.pos[m.Topic] == nil {
				op.pos[m.Topic] = map[int32]int64{}
			}
			op.pos[m.Topic][m.Partition] = m.Offset + 1
			op.read++
		}
		return m
	})
	conv := converters.NewJSONConverter()
	rows := flinklite.DebeziumChanges(msgs, func(st *connect.Struct, meta flinklite.ChangeMeta) (srcRow, error) {
		key, err := recordKey(conv, meta.Topic, meta.Key)
		if err != nil {
			return srcRow{}, err
		}
		return srcRow{Topic: meta.Topic, Key: key, Fields: structFields(st)}, nil
	})
	outs := flinklite.Apply[srcRow, Output](rows, "sql", op)
	flinklite.ToKafka(outs, q.Sink, func(c flinklite.Change[Output]) ([]byte, []byte, error) {
		return c.Value.Key, c.Value.Value, nil
	})
	ctx, cancel := context.WithCancel(ctx)
	j := &Job{q: q, env: env, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(j.done)
		err := env.Run(ctx, flinklite.RunConfig{
			JobID: cfg.JobID, Brokers: cfg.Brokers, ClientOpts: cfg.ClientOpts,
			CheckpointDir: filepath.Join(cfg.Dir, "checkpoints"), CheckpointInterval: settings.CheckpointInterval,
			LogSync: cfg.LogSync,
		})
		if pebble != nil {
			pebble.Close()
		}
		j.mu.Lock()
		j.err = err
		j.mu.Unlock()
	}()
	return j, nil
}

// staleFile is stale.json.
type staleFile struct {
	Keys      []string                   `json:"keys"`
	StartEnds map[string]map[int32]int64 `json:"start_ends"`
}

func (o *queryOp) loadStale(ctx context.Context, base []kgo.Opt, ad *kadm.Client, path string) error {
	var f staleFile
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &f); err != nil {
			return fmt.Errorf("sql: %s: %w", path, err)
		}
	} else {
		live, err := liveKeys(ctx, base, ad, o.q.Sink)
		if err != nil {
			return err
		}
		for k := range live {
			f.Keys = append(f.Keys, k)
		}
		sort.Strings(f.Keys)
		ends, err := ad.ListEndOffsets(ctx, o.q.Topics()...)
		if err != nil {
			return err
		}
		f.StartEnds = map[string]map[int32]int64{}
		ends.Each(func(e kadm.ListedOffset) {
			if e.Err == nil && e.Offset > 0 {
				if f.StartEnds[e.Topic] == nil {
					f.StartEnds[e.Topic] = map[int32]int64{}
				}
				f.StartEnds[e.Topic][e.Partition] = e.Offset
			}
		})
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		b, _ := json.Marshal(f)
		if err := flinklite.WriteFileAtomic(path, b); err != nil {
			return err
		}
	}
	o.stale = make(map[string]bool, len(f.Keys))
	for _, k := range f.Keys {
		o.stale[k] = true
	}
	o.startEnds = f.StartEnds
	return nil
}

// srcRow is a decoded row image with its topic and record key; its JSON
// (the Debezium decoder's checkpointed last row per key) keeps the kind
// of every value (job.Row's).
type srcRow struct {
	Topic  string
	Key    string
	Fields map[string]any
}

func (r srcRow) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		T string  `json:"t"`
		K string  `json:"k"`
		R job.Row `json:"r"`
	}{r.Topic, r.Key, job.Row{Fields: r.Fields}})
}

func (r *srcRow) UnmarshalJSON(b []byte) error {
	var w struct {
		T string  `json:"t"`
		K string  `json:"k"`
		R job.Row `json:"r"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	r.Topic, r.Key, r.Fields = w.T, w.K, w.R.Fields
	if r.Fields == nil {
		r.Fields = map[string]any{}
	}
	return nil
}

// queryOp runs the Pipeline as a flinklite operator: changes in, result
// changes out at every tick (a mini-batch, before every checkpoint).
type queryOp struct {
	q       *Query
	p       *Pipeline
	be      flinklite.StateBackend
	started bool
	// stale are the output keys of a previous run not yet written by a
	// replay from the beginning, startEnds where the sources ended when
	// it started, pos how far it read (nil stale: none to delete).
	stale     map[string]bool
	startEnds map[string]map[int32]int64
	pos       map[string]map[int32]int64
	read      int64 // messages read, so a tick knows whether a poll found any
	lastRead  int64
}

// queryState is queryOp's checkpoint.
type queryState struct {
	State     json.RawMessage            `json:"state"`
	Stale     []string                   `json:"stale,omitempty"`
	StartEnds map[string]map[int32]int64 `json:"start_ends,omitempty"`
	Pos       map[string]map[int32]int64 `json:"pos,omitempty"`
}

func (o *queryOp) start() error {
	if o.started {
		return nil
	}
	o.started = true
	return o.p.Start()
}

func (o *queryOp) ProcessElement(c flinklite.Change[srcRow], _ func(Output, bool)) error {
	if err := o.start(); err != nil {
		return err
	}
	if err := o.p.Push(c.Value.Topic, c.Value.Key, c.Value.Fields, c.Retract); err != nil {
		return fmt.Errorf("sql: %s: %w", c.Value.Topic, err)
	}
	return nil
}

func (o *queryOp) OnTick(now time.Time, emit func(Output, bool)) error {
	if err := o.start(); err != nil {
		return err
	}
	outs, err := o.p.Drain()
	if err != nil {
		return err
	}
	for _, out := range outs {
		if o.stale != nil {
			delete(o.stale, string(out.Key))
		}
		emit(out, false)
	}
	idle := o.read == o.lastRead
	o.lastRead = o.read
	if o.stale != nil && caughtUp(o.startEnds, o.pos, nil, idle) {
		// the replay is done: what it did not write is gone
		keys := make([]string, 0, len(o.stale))
		for k := range o.stale {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			emit(Output{Key: []byte(k)}, false)
		}
		o.stale, o.startEnds, o.pos = nil, nil, nil
	}
	o.p.expire(now.UnixMilli())
	return nil
}

func (o *queryOp) Snapshot() (json.RawMessage, error) {
	st, err := o.be.Snapshot()
	if err != nil {
		return nil, err
	}
	w := queryState{State: st}
	if o.stale != nil {
		w.Stale = make([]string, 0, len(o.stale))
		for k := range o.stale {
			w.Stale = append(w.Stale, k)
		}
		sort.Strings(w.Stale)
		w.StartEnds, w.Pos = o.startEnds, o.pos
		if w.Pos == nil {
			w.Pos = map[string]map[int32]int64{}
		}
	}
	return json.Marshal(w)
}

func (o *queryOp) Restore(b json.RawMessage) error {
	var w queryState
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	if err := o.be.Restore(w.State); err != nil {
		return err
	}
	o.p.restored()
	o.started = true
	o.stale, o.startEnds, o.pos = nil, nil, map[string]map[int32]int64{}
	if w.Pos != nil {
		o.stale = map[string]bool{}
		for _, k := range w.Stale {
			o.stale[k] = true
		}
		o.startEnds, o.pos = w.StartEnds, w.Pos
	}
	return nil
}

func (o *queryOp) StateSize() int { return o.p.stateSize() }

// caughtUp says whether the job has read its sources to where they ended
// when it started: every partition's position (pos, updated by next) at
// its start end offset, or, after a poll that found nothing, one short of
// it (a transaction marker ends the partition).
func caughtUp(startEnds, pos, next map[string]map[int32]int64, idle bool) bool {
	for t, ps := range startEnds {
		for p, end := range ps {
			at, ok := next[t][p]
			if !ok {
				at = pos[t][p]
			}
			if at < end && !(idle && at > 0 && at >= end-1) {
				return false
			}
		}
	}
	return true
}

// liveKeys reads topic's committed records: the keys whose last record
// is not a tombstone.
func liveKeys(ctx context.Context, base []kgo.Opt, _ *kadm.Client, topic string) (map[string]bool, error) {
	t, err := readUpsert(ctx, base, topic)
	if err != nil {
		return nil, err
	}
	live := make(map[string]bool, len(t))
	for k := range t {
		live[k] = true
	}
	return live, nil
}

// ReadUpsertTopic reads an upsert topic (a job's output) to its last
// stable offset and returns its committed content compacted: each key's
// last value, tombstoned keys removed. Records of aborted transactions
// (a killed run's) do not count.
func ReadUpsertTopic(ctx context.Context, brokers []string, topic string, opts ...kgo.Opt) (map[string][]byte, error) {
	return readUpsert(ctx, append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...), topic)
}

// readUpsert reads read_uncommitted with the control records, keeping a
// transaction's records until its commit marker (dropped at an abort), so
// that it knows when it has read every offset up to the last stable one:
// a read_committed consumer never sees the offsets of aborted records
// and markers.
func readUpsert(ctx context.Context, base []kgo.Opt, topic string) (map[string][]byte, error) {
	cl, err := kgo.NewClient(base...)
	if err != nil {
		return nil, err
	}
	ends, err := kadm.NewClient(cl).ListCommittedOffsets(ctx, topic)
	cl.Close()
	if err != nil {
		return nil, err
	}
	pending := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			pending[o.Partition] = o.Offset
		}
	})
	out := map[string][]byte{}
	if len(pending) == 0 {
		return out, nil
	}
	rd, err := kgo.NewClient(append(base, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()), kgo.KeepControlRecords())...)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	apply := func(r *kgo.Record) {
		if r.Value == nil {
			delete(out, string(r.Key))
		} else {
			out[string(r.Key)] = r.Value
		}
	}
	open := map[int64][]*kgo.Record{} // producer id → its open transaction's records
	for len(pending) > 0 {
		fs := rd.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("sql: reading %s/%d: %w", t, p, err) })
		if ferr != nil {
			return nil, ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			end, ok := pending[r.Partition]
			if !ok || r.Offset >= end {
				return
			}
			switch {
			case r.Attrs.IsControl():
				// control record key: version int16, type int16 (0 abort, 1 commit)
				if len(r.Key) >= 4 && bin.BigEndian.Uint16(r.Key[2:4]) == 1 {
					for _, x := range open[r.ProducerID] {
						apply(x)
					}
				}
				delete(open, r.ProducerID)
			case r.Attrs.IsTransactional():
				open[r.ProducerID] = append(open[r.ProducerID], r)
			default:
				apply(r)
			}
			if r.Offset+1 >= end {
				delete(pending, r.Partition)
			}
		})
	}
	return out, nil
}

// recordKey is the JSON of a record key's columns ({"id":1}), numbers
// exact.
func recordKey(conv *converters.JSONConverter, topic string, key []byte) (string, error) {
	if key == nil {
		return "null", nil
	}
	_, v, err := conv.ToConnect(topic, key)
	if err != nil {
		return "", fmt.Errorf("record key: %w", err)
	}
	st, ok := v.(*connect.Struct)
	if !ok {
		b, err := appendJSON(nil, job.Normalize(v, ""))
		return string(b), err
	}
	b := []byte{'{'}
	for i, f := range st.Schema.Fields {
		if i > 0 {
			b = append(b, ',')
		}
		b, _ = appendJSON(b, f.Name)
		b = append(b, ':')
		name := ""
		if f.Schema != nil {
			name = f.Schema.Name
		}
		if b, err = appendJSON(b, job.Normalize(st.Get(f.Name), name)); err != nil {
			return "", err
		}
	}
	return string(append(b, '}')), nil
}

func structFields(st *connect.Struct) map[string]any {
	m := make(map[string]any, len(st.Schema.Fields))
	for _, f := range st.Schema.Fields {
		name := ""
		if f.Schema != nil {
			name = f.Schema.Name
		}
		m[f.Name] = job.Normalize(st.Get(f.Name), name)
	}
	return m
}

// Processed is the next offset of topic's partition whose changes'
// results are committed to the output topic (0: none yet): the input
// offsets of the job's last checkpoint.
func (j *Job) Processed(topic string, partition int32) int64 {
	c := j.env.Status().LastCheckpoint
	if c == nil {
		return 0
	}
	return c.Offsets[topic][partition]
}

// Status is the job's flinklite status (checkpoints, lag, state entries).
func (j *Job) Status() flinklite.JobStatus { return j.env.Status() }

// Err is the error the job stopped with, if any.
func (j *Job) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// Done is closed when the job has stopped.
func (j *Job) Done() <-chan struct{} { return j.done }

// Stop stops the job with a final checkpoint and returns its error, if
// any.
func (j *Job) Stop() error {
	j.cancel()
	<-j.done
	return j.Err()
}

// Kill stops the job as if its process died (flinklite.Env.Abandon): no
// final checkpoint and no commit; the job started again with the same
// JobID and Dir resumes from its last committed checkpoint, and what the
// killed run wrote after it is aborted. For recovery tests.
func (j *Job) Kill() {
	j.env.Abandon()
	j.cancel()
	<-j.done
}
