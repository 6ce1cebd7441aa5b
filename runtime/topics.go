package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// topicCreator creates a topic before the first record is produced to it,
// with the broker's default partitions and replication factor, as Kafka
// Connect does with topic.creation.enable (KIP-158). Creating explicitly
// instead of relying on broker-side auto-creation also matters for the
// embedded broker: kfake persists topics made by CreateTopics at once, but
// auto-created ones only at a clean shutdown, so after a SIGKILL they would
// be forgotten.
type topicCreator struct {
	admin *kadm.Client
	mu    sync.Mutex
	known map[string]bool
}

func newTopicCreator(admin *kadm.Client) *topicCreator {
	return &topicCreator{admin: admin, known: map[string]bool{}}
}

// ensure creates topic unless it is known to exist, with the settings of
// its group in tc (KIP-158; nil = the broker's default partitions and
// replication factor); with tc.disabled (topic.creation.enable=false) it
// creates nothing. A topic that exists already is left as it is. Errors:
// the broker's, as Kafka Connect's "Task failed to create new topic".
func (tc *topicCreator) ensure(ctx context.Context, topic string, rules *topicCreation) error {
	tc.mu.Lock()
	ok := tc.known[topic]
	tc.mu.Unlock()
	if ok || (rules != nil && rules.disabled) {
		return nil
	}
	partitions, rf, configs := int32(-1), int16(-1), map[string]*string(nil)
	if rules != nil {
		g := rules.groupFor(topic)
		partitions, rf, configs = g.partitions, g.replicationFactor, g.configs
	}
	resp, err := tc.admin.CreateTopic(ctx, partitions, rf, configs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("Task failed to create new topic %s (partitions %d, replication factor %d, configs %s): %w", topic, partitions, rf, topicConfigsString(configs), err)
	}
	tc.mu.Lock()
	tc.known[topic] = true
	tc.mu.Unlock()
	return nil
}

func topicConfigsString(configs map[string]*string) string {
	m := make(map[string]string, len(configs))
	for k, v := range configs {
		m[k] = *v
	}
	return configString(m)
}
