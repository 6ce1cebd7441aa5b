package runtime

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/connectd/connectd/internal/kafkalog"
)

// Topic status records, as Kafka Connect's KafkaStatusBackingStore writes
// them for KIP-558 active topics: key "status-topic-<topic>:connector-<connector>",
// value {"topic":{"name":...,"connector":...,"task":N,"discoverTimestamp":ms}},
// a tombstone on reset.
const (
	topicStatusPrefix    = "status-topic-"
	topicStatusSeparator = ":connector-"
)

type topicStatus struct {
	Name              string `json:"name"`
	Connector         string `json:"connector"`
	Task              int    `json:"task"`
	DiscoverTimestamp int64  `json:"discoverTimestamp"`
}

func topicStatusKey(connector, topic string) string {
	return topicStatusPrefix + topic + topicStatusSeparator + connector
}

// applyTopicStatus reads one topic status record. Callers hold h.mu.
func (h *Herder) applyTopicStatus(key string, value []byte) {
	rest := strings.TrimPrefix(key, topicStatusPrefix)
	i := strings.Index(rest, topicStatusSeparator)
	if i <= 0 || i+len(topicStatusSeparator) >= len(rest) {
		return
	}
	topic, connector := rest[:i], rest[i+len(topicStatusSeparator):]
	if value == nil {
		delete(h.active[connector], topic)
		return
	}
	var v struct {
		Topic topicStatus `json:"topic"`
	}
	if json.Unmarshal(value, &v) != nil {
		return
	}
	if h.active[connector] == nil {
		h.active[connector] = map[string]topicStatus{}
	}
	h.active[connector][topic] = v.Topic
}

// recordActiveTopic stores that task id produced to topic, unless the
// connector's topic is known already (WorkerSourceTask.recordActiveTopic).
func (h *Herder) recordActiveTopic(id TaskID, topic string) {
	h.mu.Lock()
	if _, ok := h.active[id.Connector][topic]; ok {
		h.mu.Unlock()
		return
	}
	ts := topicStatus{Name: topic, Connector: id.Connector, Task: id.Task, DiscoverTimestamp: time.Now().UnixMilli()}
	if h.active[id.Connector] == nil {
		h.active[id.Connector] = map[string]topicStatus{}
	}
	h.active[id.Connector][topic] = ts
	h.mu.Unlock()
	// Called from the producer's ack callback: write without blocking it.
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := h.statusLog.Send(ctx, []byte(topicStatusKey(id.Connector, topic)), mustJSON(map[string]any{"topic": ts})); err != nil {
			h.log.Warn("writing topic status", "connector", id.Connector, "topic", topic, "err", err)
		}
	}()
}

// ActiveTopics returns the topics connector has produced to since the last
// reset, sorted (GET /connectors/{c}/topics). As Kafka Connect's
// AbstractHerder.connectorActiveTopics, an unknown connector has none.
func (h *Herder) ActiveTopics(connector string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := []string{}
	for t := range h.active[connector] {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// ResetActiveTopics forgets connector's active topics by writing a
// tombstone per topic (PUT /connectors/{c}/topics/reset).
func (h *Herder) ResetActiveTopics(ctx context.Context, connector string) error {
	topics := h.ActiveTopics(connector)
	if len(topics) == 0 {
		return nil
	}
	recs := make([]kafkalog.Record, len(topics))
	for i, t := range topics {
		recs[i] = kafkalog.Record{Key: []byte(topicStatusKey(connector, t))}
	}
	if err := h.statusLog.SendBatch(ctx, recs); err != nil {
		return err
	}
	return h.statusLog.ReadToEnd(ctx)
}
