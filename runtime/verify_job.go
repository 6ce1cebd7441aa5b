package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/flinklite/sql"
)

// connectd verify CONNECTOR --against JOB: a streaming SQL job's result
// (flinklite/sql: its upsert topic read compacted) against the same SELECT
// run on the source database.
//
// The job's statement is rewritten for the source (sql.Query.SourceQuery:
// each FROM topic becomes the table the connector captures into it, the
// result key's expressions first) and run there by the connector's task
// (connect.SourceQuerier: one REPEATABLE READ transaction, which gives the
// position the rows are consistent with, a PostgreSQL LSN). Then verify
// waits, up to --settle each, for the connector to reach that position
// (its committed offset's lsn, or its topics that the job reads staying
// unchanged for a second when no change followed the read) and for the job
// to have committed the results of everything its source topics then held
// (its last checkpoint's input offsets at their end offsets; what is left
// is reported as job_lag); then it reads the result topic compacted (each
// key's last committed value, tombstones delete) and compares the two row
// sets keyed by the result's unique key, values column by column with
// numbers compared exactly (12.50 = 12.5). A round with differences is run
// again (up to --rounds) after a second: a change between the source read
// and the job's result shows in one round, a wrong result in every one;
// the last round is reported.
//
// What cannot be checked is an error naming it: a source connector that
// cannot run queries (only the PostgreSQL connector can), a connector
// whose transforms, column filters, masks or decimal.handling.mode make
// its topics differ from its tables (unfollowable), a UNION ALL job, a
// result column of a type whose Debezium encoding is not the database's
// value (dates, times, bytea, …), a SELECT the source database rejects
// (its error).

// againstJob compares the SQL job jobID with the source.
func (e *verifyEnv) againstJob(ctx context.Context, jobID string) error {
	h := e.h
	q, err := h.sqlJobs.Query(jobID)
	if err != nil {
		return err
	}
	querier, ok := e.task().(connect.SourceQuerier)
	if !ok {
		return fmt.Errorf("--against %s: connector class %s cannot run the job's query on its database (only the PostgreSQL connector can)", jobID, e.cfg["connector.class"])
	}
	if len(e.opts.Tables) > 0 {
		return fmt.Errorf("--against %s: --table does not apply to a SQL job (its result is one table)", jobID)
	}
	if why := e.unfollowable(); why != "" {
		return fmt.Errorf("--against %s: %s: verify cannot follow it from the job's SELECT on the source", jobID, why)
	}
	e.run.update(func(r *VerifyResult) { r.Job, r.Phase = jobID, "rewriting the job's query for the source" })
	var sourceTables []string
	sq, err := q.SourceQuery(func(topic string) (sql.SourceTable, error) {
		schema, table, key, err := querier.SourceTable(ctx, e.cfg, topic)
		if err != nil {
			return sql.SourceTable{}, fmt.Errorf("--against %s: the job's source %s: %w", jobID, topic, err)
		}
		sourceTables = append(sourceTables, schema+"."+table)
		return sql.SourceTable{Schema: schema, Table: table, Key: key}, nil
	})
	if err != nil {
		return fmt.Errorf("--against %s: %w", jobID, err)
	}
	topics := q.Topics()
	sort.Strings(topics)
	adm := kadm.NewClient(e.consumer)
	for round := 1; round <= e.opts.Rounds; round++ {
		e.run.update(func(r *VerifyResult) {
			r.Rounds, r.Phase = round, fmt.Sprintf("round %d: running the job's query on the source", round)
		})
		src := map[string]jobRow{}
		pos, err := querier.QuerySource(ctx, e.cfg, sq.Text, func(vals []any) error {
			e.run.update(func(r *VerifyResult) { r.SourceRowsRead++ })
			kb, err := json.Marshal(sq.Key(vals))
			if err != nil {
				return err
			}
			row := make(map[string]any, len(sq.Columns))
			for i, c := range sq.Columns {
				row[c] = vals[sq.KeyValues+i]
			}
			vb, err := json.Marshal(row)
			if err != nil {
				return err
			}
			r, err := newJobRow(kb, vb)
			if err != nil {
				return err
			}
			if _, dup := src[r.key]; dup {
				return fmt.Errorf("the source returned key %s twice: the job's result key is not unique on the source", kb)
			}
			src[r.key] = r
			return nil
		})
		if err != nil {
			return fmt.Errorf("--against %s: the source database cannot run the job's query (%s): %w", jobID, sq.Text, err)
		}
		e.run.update(func(r *VerifyResult) {
			r.SourcePosition, r.Phase = pos, fmt.Sprintf("round %d: waiting for connector %s to reach the source position", round, e.name)
		})
		if err := e.connectorAt(ctx, adm, pos, topics); err != nil {
			return err
		}
		e.run.update(func(r *VerifyResult) { r.Phase = fmt.Sprintf("round %d: waiting for job %s to catch up", round, jobID) })
		lag, err := e.jobLag(ctx, adm, jobID, topics)
		if err != nil {
			return err
		}
		e.run.update(func(r *VerifyResult) {
			r.JobLag, r.Phase = lag, fmt.Sprintf("round %d: reading the result topic %s", round, q.Sink)
		})
		rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		vals, err := sql.ReadUpsertTopic(rctx, h.brokers, q.Sink, h.adminSec.opts()...)
		cancel()
		if err != nil {
			return fmt.Errorf("--against %s: reading the result topic %s: %w", jobID, q.Sink, err)
		}
		dst := make(map[string]jobRow, len(vals))
		for k, v := range vals {
			e.run.update(func(r *VerifyResult) { r.TopicRecordsRead++ })
			r, err := newJobRow([]byte(k), v)
			if err != nil {
				return fmt.Errorf("--against %s: result topic %s key %s: %w", jobID, q.Sink, k, err)
			}
			dst[r.key] = r
		}
		tr := compareJobRows(src, dst, e.opts.Examples)
		tr.Topic, tr.Table = q.Sink, strings.Join(sourceTables, ", ")
		e.run.update(func(r *VerifyResult) {
			r.Tables = []*VerifyTableResult{tr}
			r.Ignored = nil
		})
		if tr.Missing+tr.Extra+tr.Different == 0 {
			return nil
		}
		if round < e.opts.Rounds {
			if err := pauseBetweenRounds(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// unfollowable says what of the connector's configuration makes its
// topics hold other rows or values than its tables (the job computes on
// the topics; the source query sees the tables), or "": a transformation
// other than one that only adds or drops headers, a column filter, mask or
// truncation, decimal.handling.mode other than precise.
func (e *verifyEnv) unfollowable() string {
	for _, name := range strings.Split(e.conn["transforms"], ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		switch typ := e.conn["transforms."+name+".type"]; typ {
		case "org.apache.kafka.connect.transforms.InsertHeader", "org.apache.kafka.connect.transforms.DropHeaders":
		default:
			return fmt.Sprintf("the connector's transform %s (%s) changes the records its topics hold", name, typ)
		}
	}
	var keys []string
	for k, v := range e.conn {
		if strings.TrimSpace(v) == "" {
			continue
		}
		if k == "column.include.list" || k == "column.exclude.list" || strings.HasPrefix(k, "column.mask.") || strings.HasPrefix(k, "column.truncate.") {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		sort.Strings(keys)
		return fmt.Sprintf("the connector's %s changes the columns its topics hold", strings.Join(keys, ", "))
	}
	if m := strings.TrimSpace(e.conn["decimal.handling.mode"]); m != "" && m != "precise" {
		return "the connector's decimal.handling.mode=" + m + " writes numeric columns as other values than the database's"
	}
	return ""
}

// connectorAt waits up to the settle time for the connector's committed
// offset to reach pos's lsn; a connector that has nothing after it to
// stream keeps an older offset, so the topics staying unchanged for a
// second also ends the wait.
func (e *verifyEnv) connectorAt(ctx context.Context, adm *kadm.Client, pos map[string]any, topics []string) error {
	want, ok := offsetNumber(pos["lsn"])
	deadline := time.Now().Add(time.Duration(e.opts.SettleMs) * time.Millisecond)
	var prev string
	stable := time.Time{}
	for {
		if ok {
			if offs, err := e.h.ConnectorOffsets(ctx, e.name); err == nil {
				for _, o := range offs {
					if at, isNum := offsetNumber(o.Offset["lsn"]); isNum && at >= want {
						return nil
					}
				}
			}
		}
		ends, err := adm.ListEndOffsets(ctx, topics...)
		if err != nil {
			return err
		}
		var b strings.Builder
		ends.Each(func(o kadm.ListedOffset) { fmt.Fprintf(&b, "%s/%d/%d;", o.Topic, o.Partition, o.Offset) })
		switch cur := b.String(); {
		case cur != prev:
			prev, stable = cur, time.Now()
		case time.Since(stable) >= time.Second:
			return nil
		}
		if time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func offsetNumber(v any) (uint64, bool) {
	switch x := v.(type) {
	case uint64:
		return x, true
	case int64:
		return uint64(x), x >= 0
	case int:
		return uint64(x), x >= 0
	case float64:
		return uint64(x), x >= 0
	case json.Number:
		n, err := strconv.ParseUint(x.String(), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// jobLag waits up to the settle time for job id's last checkpoint to have
// read its source topics to their end offsets now, and returns how many
// records it had not then. A partition whose offsets after the job's are
// only transaction markers or aborted records (an exactly-once source's)
// is caught up: the job's checkpoint stops after the last record it read.
// Errors: the job stopped or was deleted.
func (e *verifyEnv) jobLag(ctx context.Context, adm *kadm.Client, id string, topics []string) (int64, error) {
	ends, err := adm.ListEndOffsets(ctx, topics...)
	if err != nil {
		return 0, err
	}
	if err := ends.Error(); err != nil {
		return 0, fmt.Errorf("end offsets of %v: %w", topics, err)
	}
	deadline := time.Now().Add(time.Duration(e.opts.SettleMs) * time.Millisecond)
	noRecords := map[string]bool{} // topic/partition/from: nothing committed after from
	lastLag, since := int64(-2), time.Now()
	for {
		job := e.h.sqlJobs.Running(id)
		lag := int64(-1)
		type behind struct {
			topic    string
			p        int32
			from, to int64
		}
		var lagging []behind
		if job != nil {
			lag = 0
			ends.Each(func(o kadm.ListedOffset) {
				at := job.Processed(o.Topic, o.Partition)
				if at >= o.Offset || noRecords[fmt.Sprintf("%s/%d/%d", o.Topic, o.Partition, at)] {
					return
				}
				lag += o.Offset - at
				lagging = append(lagging, behind{o.Topic, o.Partition, at, o.Offset})
			})
		}
		if lag == 0 {
			return 0, nil
		}
		if lag != lastLag {
			lastLag, since = lag, time.Now()
		} else if lag > 0 && time.Since(since) >= time.Second {
			// No progress for a second: are the offsets left records at all?
			for _, b := range lagging {
				has, err := e.committedRecords(ctx, b.topic, b.p, b.from, b.to)
				if err != nil {
					return 0, err
				}
				if !has {
					noRecords[fmt.Sprintf("%s/%d/%d", b.topic, b.p, b.from)] = true
				}
			}
			since = time.Now()
			continue
		}
		if time.Now().After(deadline) {
			if lag < 0 {
				info, err := e.h.sqlJobs.Get(id)
				if err != nil {
					return 0, fmt.Errorf("--against %s: %w", id, err)
				}
				return 0, fmt.Errorf("--against %s: the job is not running (%s): %s", id, info.State, info.Trace)
			}
			return lag, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// committedRecords says whether topic's partition holds a committed record
// at an offset in [from, to): a read_committed fetch from from skips
// transaction markers and aborted records.
func (e *verifyEnv) committedRecords(ctx context.Context, topic string, p int32, from, to int64) (bool, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(e.h.brokers...), kgo.WithLogger(kafkaClientLogger()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {p: kgo.NewOffset().At(from)}})}, e.h.adminSec.opts()...)...)
	if err != nil {
		return false, err
	}
	defer cl.Close()
	fctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for {
		fs := cl.PollFetches(fctx)
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if fctx.Err() != nil {
			return false, nil // nothing committed to read before to
		}
		found := false
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset >= from && r.Offset < to {
				found = true
			}
		})
		if found {
			return true, nil
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("reading %s[%d]: %w", t, p, err) })
		if ferr != nil {
			return false, ferr
		}
	}
}

// jobRow is one result row: its key and value as the JSON shown, and
// canonical (object keys sorted, numbers exact rationals) to compare.
type jobRow struct {
	key        string // canonical
	keyJSON    json.RawMessage
	row        json.RawMessage
	canonical  string
	canonByCol map[string]string
}

func newJobRow(key, value []byte) (jobRow, error) {
	k, err := decodeExact(key)
	if err != nil {
		return jobRow{}, fmt.Errorf("key: %w", err)
	}
	v, err := decodeExact(value)
	if err != nil {
		return jobRow{}, fmt.Errorf("value: %w", err)
	}
	r := jobRow{key: exactJSON(k), keyJSON: json.RawMessage(key), row: json.RawMessage(value), canonical: exactJSON(v)}
	if m, ok := v.(map[string]any); ok {
		r.canonByCol = make(map[string]string, len(m))
		for c, x := range m {
			r.canonByCol[c] = exactJSON(x)
		}
	}
	return r, nil
}

func decodeExact(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// exactJSON is v as canonical text: object keys sorted, numbers as exact
// rationals (12.50 and 12.5 are one number, 1e2 and 100 too).
func exactJSON(v any) string {
	var b strings.Builder
	var write func(v any)
	write = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				kb, _ := json.Marshal(k)
				b.Write(kb)
				b.WriteByte(':')
				write(x[k])
			}
			b.WriteByte('}')
		case []any:
			b.WriteByte('[')
			for i, e := range x {
				if i > 0 {
					b.WriteByte(',')
				}
				write(e)
			}
			b.WriteByte(']')
		case json.Number:
			if r, ok := new(big.Rat).SetString(x.String()); ok {
				b.WriteString("n:" + r.RatString())
			} else {
				b.WriteString("n:" + x.String())
			}
		default:
			j, _ := json.Marshal(x)
			b.Write(j)
		}
	}
	write(v)
	return b.String()
}

// compareJobRows compares the source's rows (src) with the result topic's
// (dst), by canonical key.
func compareJobRows(src, dst map[string]jobRow, examples int) *VerifyTableResult {
	tr := &VerifyTableResult{SourceRows: int64(len(src)), TopicKeys: int64(len(dst))}
	var keys []string
	for k := range src {
		keys = append(keys, k)
	}
	for k := range dst {
		if _, ok := src[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	shown := map[string]int{}
	for _, k := range keys {
		s, inSrc := src[k]
		d, inDst := dst[k]
		ex := VerifyExample{}
		switch {
		case !inDst:
			tr.Missing++
			ex = VerifyExample{Kind: "missing", Key: s.keyJSON, Source: s.row}
		case !inSrc:
			tr.Extra++
			ex = VerifyExample{Kind: "extra", Key: d.keyJSON, Topic: d.row}
		case s.canonical != d.canonical:
			tr.Different++
			ex = VerifyExample{Kind: "different", Key: d.keyJSON, Source: s.row, Topic: d.row, Columns: differingJobColumns(s, d)}
		default:
			continue
		}
		if shown[ex.Kind] < examples {
			shown[ex.Kind]++
			tr.Examples = append(tr.Examples, ex)
		}
	}
	return tr
}

func differingJobColumns(a, b jobRow) []string {
	var out []string
	for c, v := range a.canonByCol {
		if w, ok := b.canonByCol[c]; !ok || w != v {
			out = append(out, c)
		}
	}
	for c := range b.canonByCol {
		if _, ok := a.canonByCol[c]; !ok {
			out = append(out, c)
		}
	}
	sort.Strings(out)
	return out
}
