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

// ensure creates topic unless it is known to exist.
func (tc *topicCreator) ensure(ctx context.Context, topic string) error {
	tc.mu.Lock()
	ok := tc.known[topic]
	tc.mu.Unlock()
	if ok {
		return nil
	}
	resp, err := tc.admin.CreateTopic(ctx, -1, -1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("creating topic %s: %w", topic, err)
	}
	tc.mu.Lock()
	tc.known[topic] = true
	tc.mu.Unlock()
	return nil
}
