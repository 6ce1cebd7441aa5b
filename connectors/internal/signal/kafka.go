package signal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// KafkaChannel reads signals from partition 0 of signal.kafka.topic, as
// Debezium 3.6's KafkaSignalChannel: a record is a signal when its key
// equals the connector's topic.prefix (others are skipped); its value is
// {"id": "<optional>", "type": "<signal type>", "data": {…}}. The consumer
// group signal.kafka.groupId keeps the position (the first start reads the
// topic from the beginning, auto.offset.reset=earliest). Debezium commits it
// when the connector stops; connectd commits after every fetch, so a crash
// does not replay processed signals.
type KafkaChannel struct {
	cl     *kgo.Client
	adm    *kadm.Client
	topic  string
	group  string
	key    string
	pollMs int
}

// OpenKafka connects to cfg.KafkaBrokers and positions the consumer after the
// group's committed offset. topicPrefix is the key signals must carry.
func OpenKafka(ctx context.Context, cfg Config, topicPrefix string) (*KafkaChannel, error) {
	start := kgo.NewOffset().AtStart()
	meta, err := kgo.NewClient(kgo.SeedBrokers(cfg.KafkaBrokers...))
	if err != nil {
		return nil, fmt.Errorf("signal: kafka channel client for %v: %w", cfg.KafkaBrokers, err)
	}
	adm := kadm.NewClient(meta)
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// A group that never committed (GROUP_ID_NOT_FOUND) reads from the start.
	offs, err := adm.FetchOffsets(fctx, cfg.KafkaGroupID)
	if err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		meta.Close()
		return nil, fmt.Errorf("signal: read committed offset of group %s: %w", cfg.KafkaGroupID, err)
	}
	if o, ok := offs.Lookup(cfg.KafkaTopic, 0); ok && o.Err == nil && o.At >= 0 {
		start = kgo.NewOffset().At(o.At)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(cfg.KafkaBrokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{cfg.KafkaTopic: {0: start}}))
	if err != nil {
		meta.Close()
		return nil, fmt.Errorf("signal: kafka channel consumer for %v: %w", cfg.KafkaBrokers, err)
	}
	poll := cfg.KafkaPollMs
	if poll <= 0 {
		poll = 100 // Debezium's 0 returns at once; the reader is not blocked here anyway
	}
	return &KafkaChannel{cl: cl, adm: adm, topic: cfg.KafkaTopic, group: cfg.KafkaGroupID, key: topicPrefix, pollMs: poll}, nil
}

// Run delivers signals in topic order until ctx is done. deliver must not
// block for long; the group offset is committed after deliver returned for
// every record of a fetch. A record that is not valid JSON is skipped, as
// Debezium logs and skips it. Run returns nil when ctx is done, or the
// error of a failed commit.
func (k *KafkaChannel) Run(ctx context.Context, deliver func(Signal)) error {
	for {
		pctx, cancel := context.WithTimeout(ctx, time.Duration(k.pollMs)*time.Millisecond)
		fs := k.cl.PollFetches(pctx)
		cancel()
		if ctx.Err() != nil {
			return nil
		}
		next := int64(-1)
		for _, r := range fs.Records() {
			next = r.Offset + 1
			if string(r.Key) != k.key {
				continue
			}
			s, err := parseKafkaValue(r.Value)
			if err != nil {
				continue
			}
			deliver(s)
		}
		if next >= 0 {
			var offs kadm.Offsets
			offs.Add(kadm.Offset{Topic: k.topic, Partition: 0, At: next, LeaderEpoch: -1})
			if _, err := k.adm.CommitOffsets(ctx, k.group, offs); err != nil && ctx.Err() == nil {
				return fmt.Errorf("signal: commit offset %d of %s to group %s: %w", next, k.topic, k.group, err)
			}
		}
	}
}

// parseKafkaValue decodes {"type": …, "data": …}; data may be an object
// (kept as its JSON text) or a string holding JSON.
func parseKafkaValue(b []byte) (Signal, error) {
	var v struct {
		ID   string          `json:"id"`
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return Signal{}, err
	}
	if v.Type == "" {
		return Signal{}, errors.New("signal: kafka signal without type")
	}
	s := Signal{ID: v.ID, Type: v.Type}
	if len(v.Data) > 0 && string(v.Data) != "null" {
		var str string
		if json.Unmarshal(v.Data, &str) == nil {
			s.Data = str
		} else {
			s.Data = string(v.Data)
		}
	}
	return s, nil
}

// Close releases the clients.
func (k *KafkaChannel) Close() {
	k.cl.Close()
	k.adm.Close()
}
