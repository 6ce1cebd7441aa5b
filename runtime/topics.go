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
	// known holds the topics created or found (topic → struct{}): a
	// sync.Map, as every record of every source task looks its topic up
	// and only the first record of a topic stores (bench/mysql: the mutex
	// it replaces was 3-4% of the streaming CPU profile).
	known sync.Map
}

func newTopicCreator(admin *kadm.Client) *topicCreator {
	return &topicCreator{admin: admin}
}

// ensure creates topic unless it is known to exist, with the settings of
// its group in tc (KIP-158; nil = the broker's default partitions and
// replication factor); with tc.disabled (topic.creation.enable=false) it
// creates nothing. A topic that exists already is left as it is. Errors:
// the broker's, as Kafka Connect's "Task failed to create new topic".
func (tc *topicCreator) ensure(ctx context.Context, topic string, rules *topicCreation) error {
	if _, ok := tc.known.Load(topic); ok || (rules != nil && rules.disabled) {
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
	tc.known.Store(topic, struct{}{})
	return nil
}

func topicConfigsString(configs map[string]*string) string {
	m := make(map[string]string, len(configs))
	for k, v := range configs {
		m[k] = *v
	}
	return configString(m)
}
