package sql

import (
	"context"
	"errors"
	"fmt"
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

// Job is a running query: it reads the source topics from the beginning
// (read_committed), runs the changes through the Pipeline and writes the
// results to the output topic (idempotent producer).
type Job struct {
	q      *Query
	cancel context.CancelFunc
	done   chan struct{}

	mu  sync.Mutex
	pos map[string]map[int32]int64 // next offset whose results are written
	err error
}

// Start runs q (which must have a Sink) until Stop or an error. The
// source topics must exist; the output topic is created (compacted) if it
// does not.
func Start(ctx context.Context, q *Query, cfg RunConfig) (*Job, error) {
	if q.Sink == "" {
		return nil, errors.New("sql: the query has no result table (CREATE TABLE name AS SELECT … or INSERT INTO name SELECT …)")
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
	// What a previous run left in the output topic: the keys this run
	// must write again or delete once it has replayed the sources as they
	// are now (a key the replay never writes is a row that no longer
	// exists; a tombstone removes it).
	stale, err := liveKeys(ctx, base, ad, q.Sink)
	if err != nil {
		return nil, err
	}
	ends, err := ad.ListEndOffsets(ctx, q.Topics()...)
	if err != nil {
		return nil, err
	}
	startEnds := map[string]map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			if startEnds[o.Topic] == nil {
				startEnds[o.Topic] = map[int32]int64{}
			}
			startEnds[o.Topic][o.Partition] = o.Offset
		}
	})
	cons, err := kgo.NewClient(append(base, kgo.ConsumeTopics(q.Topics()...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchIsolationLevel(kgo.ReadCommitted()))...)
	if err != nil {
		return nil, err
	}
	prod, err := kgo.NewClient(append(base, kgo.DefaultProduceTopic(q.Sink), kgo.ProducerLinger(0))...)
	if err != nil {
		cons.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	j := &Job{q: q, cancel: cancel, done: make(chan struct{}), pos: map[string]map[int32]int64{}}
	go func() {
		defer close(j.done)
		defer cons.Close()
		defer prod.Close()
		err := j.run(ctx, cons, prod, stale, startEnds)
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			err = nil
		}
		j.mu.Lock()
		j.err = err
		j.mu.Unlock()
	}()
	return j, nil
}

// srcRow is a decoded row image with its topic and record key.
type srcRow struct {
	topic, key string
	fields     map[string]any
}

func (j *Job) run(ctx context.Context, cons, prod *kgo.Client, stale map[string]bool, startEnds map[string]map[int32]int64) error {
	p := j.q.NewPipeline()
	env := flinklite.NewEnv()
	in := flinklite.NewInput[flinklite.Message](env, 1)
	conv := converters.NewJSONConverter()
	rows := flinklite.DebeziumChanges(in.Stream(), func(st *connect.Struct, meta flinklite.ChangeMeta) (srcRow, error) {
		key, err := recordKey(conv, meta.Topic, meta.Key)
		if err != nil {
			return srcRow{}, err
		}
		return srcRow{topic: meta.Topic, key: key, fields: structFields(st)}, nil
	})
	flinklite.Sink(rows, func(c flinklite.Change[srcRow]) {
		if err := p.Push(c.Value.topic, c.Value.key, c.Value.fields, c.Retract); err != nil {
			env.Fail(fmt.Errorf("sql: %s: %w", c.Value.topic, err))
		}
	})
	if err := p.Start(); err != nil {
		return err
	}
	write := func() error {
		outs, err := p.Drain()
		if err != nil {
			return err
		}
		if len(outs) == 0 {
			return nil
		}
		recs := make([]*kgo.Record, len(outs))
		for i, o := range outs {
			recs[i] = &kgo.Record{Key: o.Key, Value: o.Value}
			delete(stale, string(o.Key))
		}
		return prod.ProduceSync(ctx, recs...).FirstErr()
	}
	if err := write(); err != nil {
		return err
	}
	for {
		pctx, pcancel := context.WithTimeout(ctx, 200*time.Millisecond)
		fs := cons.PollFetches(pctx)
		pcancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && ferr == nil {
				ferr = fmt.Errorf("sql: fetching %s/%d: %w", t, p, err)
			}
		})
		if ferr != nil {
			return ferr
		}
		next := map[string]map[int32]int64{}
		var perr error
		fs.EachRecord(func(r *kgo.Record) {
			if perr != nil {
				return
			}
			perr = in.Emit(0, flinklite.Message{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: r.Key, Value: r.Value, Timestamp: r.Timestamp})
			if next[r.Topic] == nil {
				next[r.Topic] = map[int32]int64{}
			}
			next[r.Topic][r.Partition] = r.Offset + 1
		})
		if perr != nil {
			return perr
		}
		if err := write(); err != nil {
			return err
		}
		if stale != nil && caughtUp(startEnds, j.pos, next, fs.NumRecords() == 0) {
			// the replay is done: what it did not write is gone
			recs := make([]*kgo.Record, 0, len(stale))
			for k := range stale {
				recs = append(recs, &kgo.Record{Key: []byte(k)})
			}
			if err := prod.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				return err
			}
			stale = nil
		}
		j.mu.Lock()
		for t, ps := range next {
			if j.pos[t] == nil {
				j.pos[t] = map[int32]int64{}
			}
			for p, o := range ps {
				j.pos[t][p] = o
			}
		}
		j.mu.Unlock()
	}
}

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

// liveKeys reads topic to its end: the keys whose last record is not a
// tombstone.
func liveKeys(ctx context.Context, base []kgo.Opt, ad *kadm.Client, topic string) (map[string]bool, error) {
	ends, err := ad.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, err
	}
	pending := map[int32]int64{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err == nil && o.Offset > 0 {
			pending[o.Partition] = o.Offset
		}
	})
	live := map[string]bool{}
	if len(pending) == 0 {
		return live, nil
	}
	rd, err := kgo.NewClient(append(base, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))...)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
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
			if r.Value == nil {
				delete(live, string(r.Key))
			} else {
				live[string(r.Key)] = true
			}
			if end, ok := pending[r.Partition]; ok && r.Offset+1 >= end {
				delete(pending, r.Partition)
			}
		})
	}
	return live, nil
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

// Processed is the next offset of topic's partition whose changes' results
// are written to the output topic (0: none yet).
func (j *Job) Processed(topic string, partition int32) int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.pos[topic][partition]
}

// Err is the error the job stopped with, if any.
func (j *Job) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// Done is closed when the job has stopped.
func (j *Job) Done() <-chan struct{} { return j.done }

// Stop stops the job and returns its error, if any.
func (j *Job) Stop() error {
	j.cancel()
	<-j.done
	return j.Err()
}
