package sql

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Settings are a job's parsed configuration.
type Settings struct {
	// StateTTL is table.exec.state.ttl: idle state (not written for at
	// least this long) is removed; 0 keeps state forever (Flink's default).
	StateTTL time.Duration
	// StateBackend is state.backend.type: "hashmap" (in memory) or
	// "rocksdb" (Pebble on disk, the default of SQL jobs here).
	StateBackend string
	// CheckpointInterval is execution.checkpointing.interval (default 1 s):
	// how often results are committed.
	CheckpointInterval time.Duration
}

// ParseConfig checks a job's configuration, Flink's keys:
// table.exec.state.ttl, state.backend.type (hashmap, rocksdb) and
// execution.checkpointing.interval, durations in Flink's form ("1 h",
// "30 min", "10s", "500 ms"; a plain number is milliseconds). An unknown
// key is an error (never silently ignored).
func ParseConfig(c map[string]string) (Settings, error) {
	s := Settings{StateBackend: "rocksdb", CheckpointInterval: time.Second}
	for k, v := range c {
		switch k {
		case "table.exec.state.ttl":
			d, err := ParseDuration(v)
			if err != nil {
				return s, fmt.Errorf("sql: %s: %w", k, err)
			}
			s.StateTTL = d
		case "execution.checkpointing.interval":
			d, err := ParseDuration(v)
			if err != nil || d <= 0 {
				return s, fmt.Errorf("sql: %s: %q is not a positive duration", k, v)
			}
			s.CheckpointInterval = d
		case "state.backend.type", "state.backend":
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "hashmap", "memory":
				s.StateBackend = "hashmap"
			case "rocksdb", "pebble":
				s.StateBackend = "rocksdb"
			default:
				return s, fmt.Errorf("sql: %s: %q (hashmap or rocksdb)", k, v)
			}
		default:
			return s, fmt.Errorf("sql: unsupported configuration key %q (supported: table.exec.state.ttl, state.backend.type, execution.checkpointing.interval)", k)
		}
	}
	return s, nil
}

var durationRE = regexp.MustCompile(`^([0-9]+)\s*([a-zµ]*)$`)

// ParseDuration reads a duration as Flink's TimeUtils.parseDuration: a
// number and a unit (d, day(s); h, hour(s); min, m, minute(s); s, sec(s),
// second(s); ms, milli(s), millisecond(s); us, µs, micro(s); ns, nano(s));
// without a unit, milliseconds.
func ParseDuration(v string) (time.Duration, error) {
	m := durationRE.FindStringSubmatch(strings.ToLower(strings.TrimSpace(v)))
	if m == nil {
		return 0, fmt.Errorf("%q is not a duration (e.g. \"1 h\", \"30 min\", \"10 s\")", v)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", v, err)
	}
	var unit time.Duration
	switch m[2] {
	case "", "ms", "milli", "millis", "millisecond", "milliseconds":
		unit = time.Millisecond
	case "d", "day", "days":
		unit = 24 * time.Hour
	case "h", "hour", "hours":
		unit = time.Hour
	case "min", "m", "minute", "minutes":
		unit = time.Minute
	case "s", "sec", "secs", "second", "seconds":
		unit = time.Second
	case "us", "µs", "micro", "micros", "microsecond", "microseconds":
		unit = time.Microsecond
	case "ns", "nano", "nanos", "nanosecond", "nanoseconds":
		unit = time.Nanosecond
	default:
		return 0, fmt.Errorf("%q: unknown unit %q", v, m[2])
	}
	return time.Duration(n) * unit, nil
}

// cleanupJob removes what a deleted job keeps in Kafka: its checkpoint
// marker topic (its output topic stays, as a Flink sink's).
func cleanupJob(ctx context.Context, cfg RunConfig) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(cfg.Brokers...)}, cfg.ClientOpts...)...)
	if err != nil {
		return
	}
	defer cl.Close()
	_, _ = kadm.NewClient(cl).DeleteTopics(ctx, cfg.JobID+".checkpoints")
}
