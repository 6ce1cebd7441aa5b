package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/transforms"
)

// connectd verify CONNECTOR --against SINK_CONNECTOR: the source's
// current rows, through the source connector's chain and converters (the
// bytes its topics hold) and then the sink connector's converters and
// chain (the records its task receives), are handed to the sink task's
// connect.SinkVerifier, which compares its target with the rows they would
// leave there (the JDBC sink: scratch tables LIKE the targets, written by
// the sink's own code, compared in the database; sinks/jdbc/verify.go).
//
// Before each round the sink must have caught up: its consumer group's
// committed offsets reach the end of the topics it reads (waited for up to
// --settle; the lag left is reported). A round with differences is run
// again (up to --rounds) after the sink caught up again; the last round is
// reported. Run it when the sink is caught up: under a steady stream of
// changes a key changed between the source read and the sink's write shows
// as different.

const verifyBatch = 500

func (e *verifyEnv) againstSink(ctx context.Context, sinkName string) error {
	h := e.h
	connCfg, _, _, ok := h.snapshot(sinkName)
	if !ok {
		return fmt.Errorf("%w: --against %s is neither a connector nor a SQL job of this worker", ErrNotFound, sinkName)
	}
	class := connCfg["connector.class"]
	factory, _, ok := h.plugins.Sink(class)
	if !ok {
		return fmt.Errorf("--against %s: connector %s (%s) is not a sink connector", sinkName, sinkName, class)
	}
	taskCfgs, err := h.TaskConfigs(sinkName)
	if err != nil {
		return err
	}
	if len(taskCfgs) == 0 {
		return fmt.Errorf("sink connector %s has no tasks yet", sinkName)
	}
	sinkCfg, sinkConn, err := h.resolveTaskConfig(taskCfgs[0], connCfg)
	if err != nil {
		return err
	}
	verifier, ok := factory().NewTask().(connect.SinkVerifier)
	if !ok {
		return fmt.Errorf("--against %s: the %s sink cannot compare its target (only the JDBC sink can)", sinkName, class)
	}
	keyConv, err := newConverter(h.cfg, sinkCfg, true)
	if err != nil {
		return err
	}
	valConv, err := newConverter(h.cfg, sinkCfg, false)
	if err != nil {
		return err
	}
	keyRead, okk := keyConv.(connect.ToConnectConverter)
	valRead, okv := valConv.(connect.ToConnectConverter)
	if !okk || !okv {
		return fmt.Errorf("the converters of %s cannot read records", sinkName)
	}
	reads, err := sinkTopicFilter(sinkCfg)
	if err != nil {
		return err
	}
	adm := kadm.NewClient(e.consumer)
	for round := 1; round <= e.opts.Rounds; round++ {
		e.run.update(func(r *VerifyResult) {
			r.Rounds, r.Phase = round, fmt.Sprintf("round %d: waiting for sink %s to catch up", round, sinkName)
		})
		lag, err := e.sinkLag(ctx, adm, sinkName, reads)
		if err != nil {
			return err
		}
		e.run.update(func(r *VerifyResult) { r.SinkLag = lag })
		tables, err := e.sinkRound(ctx, verifier, sinkCfg, sinkConn, keyRead, valRead, reads)
		if err != nil {
			return err
		}
		differ := int64(0)
		var results []*VerifyTableResult
		for _, t := range tables {
			differ += t.Missing + t.Extra + t.Different
			tr := &VerifyTableResult{SinkTable: t.Table, SourceRows: t.Expected, SinkRows: t.Rows,
				Missing: t.Missing, Extra: t.Extra, Different: t.Different, Problem: t.Problem}
			for _, ex := range t.Examples {
				key, _ := json.Marshal(ex.Key)
				ve := VerifyExample{Kind: ex.Kind, Key: key, Columns: ex.Columns}
				if ex.Expected != nil {
					ve.Source, _ = json.Marshal(ex.Expected)
				}
				if ex.Actual != nil {
					ve.Sink, _ = json.Marshal(ex.Actual)
				}
				tr.Examples = append(tr.Examples, ve)
			}
			results = append(results, tr)
		}
		e.run.update(func(r *VerifyResult) { r.Tables = results })
		if differ == 0 {
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

// sinkRound writes the source's current rows into a verification of the
// sink and compares.
func (e *verifyEnv) sinkRound(ctx context.Context, verifier connect.SinkVerifier, sinkCfg, sinkConn map[string]string,
	keyRead, valRead connect.ToConnectConverter, reads func(string) bool) ([]connect.SinkVerifyTable, error) {
	e.run.update(func(r *VerifyResult) { r.Phase = "reading the source into the sink's comparison" })
	v, err := verifier.StartVerification(ctx, sinkCfg)
	if err != nil {
		return nil, fmt.Errorf("opening the sink's comparison: %w", err)
	}
	defer v.Close()
	srcChain, err := e.chain()
	if err != nil {
		return nil, err
	}
	defer srcChain.Close()
	sinkChain, err := transforms.NewChain(sinkConn)
	if err != nil {
		return nil, err
	}
	defer sinkChain.Close()
	var batch []*connect.SinkRecord
	offset := map[string]int64{}
	pos, err := e.reader().ReadCurrent(ctx, e.cfg, func(rec *connect.SourceRecord) error {
		e.run.update(func(r *VerifyResult) { r.SourceRowsRead++ })
		table := recordTable(rec)
		out, err := srcChain.Apply(rec)
		if err != nil {
			return fmt.Errorf("transforming a row of %s: %w", table, err)
		}
		if out == nil || !e.include(out.Topic, table) || !reads(out.Topic) {
			return nil
		}
		kb, err := e.keyConv.FromConnect(out.Topic, out.KeySchema, out.Key)
		if err != nil {
			return fmt.Errorf("converting the key of a row of %s: %w", table, err)
		}
		vb, err := e.valConv.FromConnect(out.Topic, out.ValueSchema, out.Value)
		if err != nil {
			return fmt.Errorf("converting a row of %s: %w", table, err)
		}
		sr := &connect.SinkRecord{Topic: out.Topic, Offset: offset[out.Topic]}
		offset[out.Topic]++
		if sr.KeySchema, sr.Key, err = keyRead.ToConnect(out.Topic, kb); err != nil {
			return fmt.Errorf("the sink's key converter on a row of %s: %w", table, err)
		}
		if sr.ValueSchema, sr.Value, err = valRead.ToConnect(out.Topic, vb); err != nil {
			return fmt.Errorf("the sink's value converter on a row of %s: %w", table, err)
		}
		if sinkChain.Len() > 0 {
			p := int32(0)
			t, err := sinkChain.Apply(&connect.SourceRecord{Topic: sr.Topic, Partition: &p, KeySchema: sr.KeySchema, Key: sr.Key,
				ValueSchema: sr.ValueSchema, Value: sr.Value})
			if err != nil {
				return fmt.Errorf("the sink's transforms on a row of %s: %w", table, err)
			}
			if t == nil {
				return nil
			}
			sr.Topic, sr.KeySchema, sr.Key, sr.ValueSchema, sr.Value = t.Topic, t.KeySchema, t.Key, t.ValueSchema, t.Value
		}
		batch = append(batch, sr)
		if len(batch) >= verifyBatch {
			err := v.Put(ctx, batch)
			batch = nil
			return err
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the source: %w", err)
	}
	if len(batch) > 0 {
		if err := v.Put(ctx, batch); err != nil {
			return nil, err
		}
	}
	e.run.update(func(r *VerifyResult) { r.SourcePosition, r.Phase = pos, "comparing the sink's tables" })
	return v.Compare(ctx, e.opts.Examples)
}

// sinkTopicFilter returns whether the sink reads a topic (topics or
// topics.regex).
func sinkTopicFilter(cfg map[string]string) (func(string) bool, error) {
	if re := strings.TrimSpace(cfg["topics.regex"]); re != "" {
		r, err := regexp.Compile("^(?:" + re + ")$")
		if err != nil {
			return nil, fmt.Errorf("topics.regex: %w", err)
		}
		return r.MatchString, nil
	}
	set := map[string]bool{}
	for _, t := range strings.Split(cfg["topics"], ",") {
		if t = strings.TrimSpace(t); t != "" {
			set[t] = true
		}
	}
	return func(t string) bool { return set[t] }, nil
}

// sinkLag waits up to the settle time for the sink's consumer group
// (connect-<name>) to commit the end of every partition of the topics it
// reads, and returns the records it had not committed then.
func (e *verifyEnv) sinkLag(ctx context.Context, adm *kadm.Client, sinkName string, reads func(string) bool) (int64, error) {
	deadline := time.Now().Add(time.Duration(e.opts.SettleMs) * time.Millisecond)
	for {
		topics, err := adm.ListTopics(ctx)
		if err != nil {
			return 0, err
		}
		var names []string
		for _, t := range topics.Names() {
			if reads(t) {
				names = append(names, t)
			}
		}
		sort.Strings(names)
		var lag int64
		if len(names) > 0 {
			ends, err := adm.ListEndOffsets(ctx, names...)
			if err != nil {
				return 0, err
			}
			committed, err := adm.FetchOffsets(ctx, "connect-"+sinkName)
			if errors.Is(err, kerr.GroupIDNotFound) {
				committed, err = kadm.OffsetResponses{}, nil // nothing committed yet
			}
			if err != nil {
				return 0, err
			}
			ends.Each(func(o kadm.ListedOffset) {
				c, ok := committed.Lookup(o.Topic, o.Partition)
				switch {
				case !ok || c.At < 0:
					lag += o.Offset
				case o.Offset > c.At:
					lag += o.Offset - c.At
				}
			})
		}
		if lag == 0 || time.Now().After(deadline) {
			return lag, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// pauseBetweenRounds waits a second before a round that runs again after
// differences (a change between the two reads shows in one round only).
func pauseBetweenRounds(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Second):
		return nil
	}
}
