package broker

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kfake"
)

// BatchMaxBytes is the embedded broker's message.max.bytes and the
// largest record batch the worker's producers make against it, in bytes
// (Kafka's default is 1,048,588; see runtime's Herder.defaultBatchMaxBytes
// for the measurements): half the fsyncs of 1 MB batches for about 20 MiB
// more peak RSS.
const BatchMaxBytes = 2 << 20

// logDefaults are the embedded broker's defaults of embeddedLogKeys that
// differ from kfake's: Kafka's log.cleaner.backoff.ms (15 s; kfake alone
// waits an hour).
var logDefaults = map[string]string{"log.cleaner.backoff.ms": "15000"}

// embeddedLogKeys are the Kafka broker configs of the embedded broker's
// log that the worker passes on from embedded.kafka.<key>: how often the
// log cleaner compacts the compacted topics (log.cleaner.backoff.ms, a
// partition is compacted once as many batches were written since its last
// compaction as it kept, min.cleanable.dirty.ratio 0.5) and deletes what
// is past retention, and the broker-wide retention of the topics that do
// not set retention.ms / retention.bytes themselves.
var embeddedLogKeys = []string{"log.cleaner.backoff.ms", "log.retention.ms", "log.retention.bytes"}

// LogOptions returns the kfake option with the embedded
// broker's log configs (embeddedLogKeys) that cfg sets. A value that is
// not an integer (below -1; for log.cleaner.backoff.ms, not positive) fails with
// its key.
func LogOptions(cfg map[string]string) (kfake.Opt, error) {
	set := make(map[string]string)
	for _, k := range embeddedLogKeys {
		v, ok := cfg[embeddedPrefix+k]
		if !ok {
			v = logDefaults[k]
		}
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		switch {
		case k == "log.cleaner.backoff.ms" && (err != nil || n <= 0):
			return nil, fmt.Errorf("worker config %s%s: %q is not a positive integer", embeddedPrefix, k, v)
		case err != nil || n < -1:
			return nil, fmt.Errorf("worker config %s%s: %q is not an integer >= -1 (-1: no limit)", embeddedPrefix, k, v)
		}
		set[k] = strconv.FormatInt(n, 10)
	}
	return kfake.BrokerConfigs(set), nil
}
