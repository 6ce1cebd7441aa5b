package difftest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/connectd/connectd/connect"
)

// ReferenceFailure returns the last "Caused by:" of a Debezium engine
// failure in ref.Capture's log (the root cause) with the first two frames
// of its stack trace, where it was thrown ("java.lang.IllegalArgumentException
// at java.sql/java.sql.Date.valueOf(Date.java:141) at
// org.mariadb.jdbc.client.column.YearColumn.getDefaultText(YearColumn.java:83)"),
// so that a deviation can name the failure exactly; or "" when the engine
// did not fail.
func ReferenceFailure(log string) string {
	if !strings.Contains(log, "[capture] engine stopped with error") {
		return ""
	}
	cause := "engine stopped with error"
	lines := strings.Split(log, "\n")
	for i, l := range lines {
		c, ok := strings.CutPrefix(l, "Caused by: ")
		if !ok {
			continue
		}
		for k := i + 1; k < len(lines) && k <= i+2; k++ {
			f, ok := strings.CutPrefix(lines[k], "\tat ")
			if !ok {
				break
			}
			c += " at " + f
		}
		cause = c
	}
	return cause
}

// WriteRecords writes records in ref.Capture's formats (NAME and
// NAME.record-offsets.jsonl in dir), so that a run can be compared again
// without running it.
func WriteRecords(dir, name string, recs []Record) error {
	var rb, ob strings.Builder
	for _, r := range recs {
		rb.WriteString(r.Line() + "\n")
		ob.WriteString(`{"key":["connectd",` + JSONText(r.Partition) + `],"value":` + JSONText(r.Offset) + "}\n")
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(rb.String()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name+".record-offsets.jsonl"), []byte(ob.String()), 0o644)
}

// TaskCtx is a source task context without stored offsets.
type TaskCtx struct{}

func (TaskCtx) OffsetReader() connect.OffsetReader { return noOffsets{} }

type noOffsets struct{}

func (noOffsets) Offset(context.Context, map[string]any) (map[string]any, error) { return nil, nil }

// Collector polls a connectd task from one goroutine (Run) and keeps its
// records and the error that ended it.
type Collector struct {
	Task connect.SourceTask
	mu   sync.Mutex
	recs []*connect.SourceRecord
	last time.Time
	err  error
	done chan struct{}
}

// Run polls until ctx ends or Poll fails.
func (c *Collector) Run(ctx context.Context) {
	c.mu.Lock()
	c.done = make(chan struct{})
	c.last = time.Now()
	c.mu.Unlock()
	defer close(c.done)
	for ctx.Err() == nil {
		b, err := c.Task.Poll(ctx)
		if err != nil {
			if ctx.Err() == nil {
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
			}
			return
		}
		if len(b) > 0 {
			c.mu.Lock()
			c.recs = append(c.recs, b...)
			c.last = time.Now()
			c.mu.Unlock()
		}
	}
}

// Wait waits for Run to return.
func (c *Collector) Wait() {
	c.mu.Lock()
	d := c.done
	c.mu.Unlock()
	if d != nil {
		<-d
	}
}

// Records returns the records so far and the task's error.
func (c *Collector) Records() ([]*connect.SourceRecord, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*connect.SourceRecord(nil), c.recs...), c.err
}

// Quiet waits until no record arrived for d (at most max).
func (c *Collector) Quiet(ctx context.Context, d, max time.Duration) error {
	end := time.Now().Add(max)
	for {
		c.mu.Lock()
		last, err := c.last, c.err
		c.mu.Unlock()
		if err != nil {
			return fmt.Errorf("connectd poll: %w", err)
		}
		if time.Since(last) >= d {
			return nil
		}
		if time.Now().After(end) {
			return errors.New("connectd did not go quiet")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// PropertiesText writes a java.util.Properties file: backslashes doubled,
// non-ASCII as \uXXXX (Properties.load reads ISO-8859-1).
func PropertiesText(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(propEscape(k, true))
		b.WriteByte('=')
		b.WriteString(propEscape(m[k], false))
		b.WriteByte('\n')
	}
	return b.String()
}

func propEscape(s string, key bool) string {
	var b strings.Builder
	for i, c := range s {
		switch {
		case c == '\\':
			b.WriteString(`\\`)
		case c == ' ' && (key || i == 0):
			b.WriteString(`\ `)
		case key && (c == '=' || c == ':'):
			b.WriteByte('\\')
			b.WriteRune(c)
		case c > 0x7e || c < 0x20:
			for _, u := range utf16Units(c) {
				fmt.Fprintf(&b, `\u%04x`, u)
			}
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

func utf16Units(c rune) []uint16 {
	if c < 0x10000 {
		return []uint16{uint16(c)}
	}
	c -= 0x10000
	return []uint16{uint16(0xd800 + (c >> 10)), uint16(0xdc00 + (c & 0x3ff))}
}

// Stale returns the deviations that matched nothing although a seed they
// name (seeds(d)) ran: each must leave the list.
func Stale[D comparable](list []D, hits map[D]int, ran map[int64]bool, seeds func(D) []int64) []D {
	var out []D
	for _, d := range list {
		if hits[d] > 0 {
			continue
		}
		for _, s := range seeds(d) {
			if ran[s] {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// Seeds reads the seeds to run from the environment: PREFIX_SEED=a,b,c
// exactly those, PREFIX_SEEDS=N seeds 1..N, else ci.
func Seeds(prefix string, ci []int64) ([]int64, error) {
	if s := os.Getenv(prefix + "_SEED"); s != "" {
		var out []int64
		for _, f := range strings.Split(s, ",") {
			var n int64
			if _, err := fmt.Sscan(strings.TrimSpace(f), &n); err != nil {
				return nil, fmt.Errorf("%s_SEED: %v", prefix, err)
			}
			out = append(out, n)
		}
		return out, nil
	}
	if s := os.Getenv(prefix + "_SEEDS"); s != "" {
		var n, from int
		if a, b, ok := strings.Cut(s, "-"); ok {
			// a range a-b
			if _, err := fmt.Sscan(a, &from); err != nil {
				return nil, fmt.Errorf("%s_SEEDS=%q: want N or A-B", prefix, s)
			}
			s = b
		} else {
			from = 1
		}
		if _, err := fmt.Sscan(s, &n); err != nil || n < from || from < 1 {
			return nil, fmt.Errorf("%s_SEEDS=%q: want a positive number N or a range A-B", prefix, s)
		}
		var out []int64
		for i := from; i <= n; i++ {
			out = append(out, int64(i))
		}
		return out, nil
	}
	return ci, nil
}
