package runtime

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// describeTopic returns topic's partition count and the configs set on it
// (DescribeConfigs entries whose source is the topic itself).
func describeTopic(t *testing.T, broker, topic string) (int, map[string]string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	td, err := adm.ListTopics(ctx, topic)
	if err != nil || td[topic].Err != nil {
		t.Fatalf("list %s: %v %v", topic, err, td[topic].Err)
	}
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("describe configs %s: %v %v", topic, err, rc.Err)
	}
	set := map[string]string{}
	for _, c := range rc.Configs {
		if c.Source.String() == "DYNAMIC_TOPIC_CONFIG" && c.Value != nil {
			set[c.Key] = *c.Value
		}
	}
	return len(td[topic].Partitions), set
}

// Topics are created with the partitions and topic configs of the first
// matching topic.creation group, else of the default group (KIP-158,
// Kafka Connect's TopicCreation.findFirstGroup); an existing topic is left
// as it is.
func TestTopicCreationGroups(t *testing.T) {
	kafka := freeAddr(t)
	w := startTestWorker(t, t.TempDir(), kafka, &counterShared{})
	defer w.Close()
	ctx := context.Background()
	// A topic that exists before the connector writes to it.
	pre, err := kgo.NewClient(kgo.SeedBrokers(kafka))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kadm.NewClient(pre).CreateTopic(ctx, 1, -1, nil, "tc.comp.existing"); err != nil {
		t.Fatal(err)
	}
	pre.Close()
	rules := map[string]string{
		"topic.creation.groups":                     "compacted,never",
		"topic.creation.default.replication.factor": "1",
		"topic.creation.default.partitions":         "3",
		"topic.creation.default.retention.ms":       "3600000",
		"topic.creation.default.include":            "ignored-for-the-default-group",
		"topic.creation.compacted.include":          `tc\.comp.*, other\..*`,
		"topic.creation.compacted.exclude":          `.*\.skip`,
		"topic.creation.compacted.partitions":       "2",
		"topic.creation.compacted.cleanup.policy":   "compact",
		"topic.creation.compacted.compression.type": "lz4",
		"topic.creation.never.include":              "",
		"topic.creation.never.partitions":           "7",
	}
	for _, topic := range []string{"tc.comp.customers", "tc.comp.skip", "tc.plain", "tc.comp.existing"} {
		cfg := map[string]string{"connector.class": "test.CounterSource", "topic": topic, "count": "3"}
		for k, v := range rules {
			cfg[k] = v
		}
		if _, err := w.Herder.CreateConnector(ctx, "c-"+topic, cfg); err != nil {
			t.Fatal(err)
		}
		consumeAll(t, kafka, topic, 3)
	}
	for topic, want := range map[string]struct {
		partitions int
		configs    map[string]string
	}{
		"tc.comp.customers": {2, map[string]string{"cleanup.policy": "compact", "compression.type": "lz4"}},
		"tc.comp.skip":      {3, map[string]string{"retention.ms": "3600000"}}, // excluded: the default group
		"tc.plain":          {3, map[string]string{"retention.ms": "3600000"}},
		"tc.comp.existing":  {1, map[string]string{}},
	} {
		n, cfgs := describeTopic(t, kafka, topic)
		if n != want.partitions {
			t.Errorf("%s: %d partitions, want %d", topic, n, want.partitions)
		}
		if len(cfgs) != len(want.configs) {
			t.Errorf("%s: configs %v, want %v", topic, cfgs, want.configs)
		}
		for k, v := range want.configs {
			if cfgs[k] != v {
				t.Errorf("%s: %s=%q, want %q", topic, k, cfgs[k], v)
			}
		}
	}
}

// The default group's replication factor and partitions are required once
// a connector uses topic creation, and must be -1 or at least 1
// (TopicCreationConfig's validators, messages as ConfigDef's).
func TestTopicCreationValidation(t *testing.T) {
	errs := validationErrors(t, "", map[string]string{"connector.class": "test.CounterSource", "topic": "t", "name": "c",
		"topic.creation.default.partitions": "0", "topic.creation.groups": "g", "topic.creation.g.include": "(", "topic.creation.g.replication.factor": "-2"})
	want := map[string]string{
		"topic.creation.default.replication.factor": `Missing required configuration "topic.creation.default.replication.factor" which has no default value.`,
		"topic.creation.default.partitions":         "Invalid value 0 for configuration topic.creation.default.partitions: Value must be -1 or at least 1",
		"topic.creation.g.replication.factor":       "Invalid value -2 for configuration topic.creation.g.replication.factor: Value must be -1 or at least 1",
		"topic.creation.g.include":                  "Invalid value ( for configuration topic.creation.g.include: error parsing regexp: missing closing ): `^(?:()$`",
	}
	for k, m := range want {
		if got := errs[k]; len(got) != 1 || got[0] != m {
			t.Errorf("%s: %q, want %q", k, got, m)
		}
	}
	if len(errs) != len(want) {
		t.Errorf("errors %v", errs)
	}
	// Without any topic.creation.* key there is nothing to require.
	if errs := validationErrors(t, "", map[string]string{"connector.class": "test.CounterSource", "topic": "t", "name": "c"}); len(errs) != 0 {
		t.Errorf("no topic creation: %v", errs)
	}
	// With the worker's topic.creation.enable=false the keys are ignored.
	rules, err := topicCreationOf(WorkerConfig{"topic.creation.enable": "false"}, map[string]string{"topic.creation.default.partitions": "0"})
	if err != nil || rules == nil || !rules.disabled {
		t.Errorf("disabled: %+v %v", rules, err)
	}
}

// The validate response lists the topic creation keys under the groups
// ConfigDef.embed gives them in Kafka Connect (SourceConnectorConfig
// .embedDefaultGroup and .enrich).
func TestTopicCreationValidateGroups(t *testing.T) {
	plugins := connect.NewPlugins()
	plugins.RegisterSource("test.CounterSource", func() connect.SourceConnector { return counterSource{&counterShared{}} })
	h := &Herder{cfg: WorkerConfig{}, plugins: plugins}
	infos, err := h.ValidateConnectorConfig(map[string]string{"connector.class": "test.CounterSource", "topic": "t", "name": "c",
		"topic.creation.default.partitions": "1", "topic.creation.default.replication.factor": "1", "topic.creation.groups": "g"})
	if err != nil || infos.ErrorCount != 0 {
		t.Fatalf("%+v %v", infos.Messages(), err)
	}
	groups := strings.Join(infos.Groups, "|")
	if !strings.Contains(groups, "|default: default|Topic Creation: g: Topic Creation: g") {
		t.Errorf("groups %s", groups)
	}
	for _, c := range infos.Configs {
		if c.Definition != nil && c.Definition.Name == "topic.creation.g.partitions" {
			if c.Value.Value == nil || *c.Value.Value != "1" || c.Definition.OrderInGroup != 3 {
				t.Errorf("topic.creation.g.partitions: value %v order %d (the default group's value, order 3)", c.Value.Value, c.Definition.OrderInGroup)
			}
			return
		}
	}
	t.Error("no topic.creation.g.partitions in the response")
}
