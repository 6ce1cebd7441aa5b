package broker

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/connectd/connectd/broker/brokertest"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The embedded broker's answers that Java clients depend on (issue 18),
// each as Apache Kafka 4.3 answers it; integration/broker_conformance_test.go
// compares them with a real Kafka 4.3 and runs Kafka's own tools.

func startProtocolTestBroker(t *testing.T, opts ...string) (*Broker, *kgo.Client) {
	t.Helper()
	cfg := map[string]string{}
	for i := 0; i+1 < len(opts); i += 2 {
		cfg[opts[i]] = opts[i+1]
	}
	logCfg, err := LogOptions(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Start(freeAddr(t), t.TempDir(), false, logCfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return b, cl
}

// F1: below v4, ApiVersions leaves out the supported features whose
// minimum is 0 (KAFKA-17011); kafka-clients 3.4-3.7 die on them. Kafka
// 4.3 answers v3 with metadata.version alone among the supported
// features (min 7) and v4 with every feature.
func TestEmbeddedBrokerApiVersionsV3LeavesOutFeaturesFromZero(t *testing.T) {
	b, _ := startProtocolTestBroker(t)
	features := func(v int16) map[string][2]int16 {
		req := kmsg.NewPtrApiVersionsRequest()
		req.Version = v
		req.ClientSoftwareName, req.ClientSoftwareVersion = "connectd-test", "1"
		resp := brokertest.Request(t, b.Addr(), req).(*kmsg.ApiVersionsResponse)
		if resp.ErrorCode != 0 {
			t.Fatalf("ApiVersions v%d: error %d", v, resp.ErrorCode)
		}
		m := make(map[string][2]int16)
		for _, f := range resp.SupportedFeatures {
			m[f.Name] = [2]int16{f.MinVersion, f.MaxVersion}
		}
		return m
	}
	v3 := features(3)
	for name, r := range v3 {
		if r[0] < 1 {
			t.Errorf("ApiVersions v3 supported feature %s has min %d: clients before KAFKA-17011 reject it", name, r[0])
		}
	}
	if mv, ok := v3["metadata.version"]; !ok || mv[0] != 7 {
		t.Errorf("ApiVersions v3 metadata.version = %v (present %v), want min 7 as Kafka 4.3", mv, ok)
	}
	v4 := features(4)
	for _, name := range []string{"metadata.version", "group.version", "transaction.version", "kraft.version"} {
		if _, ok := v4[name]; !ok {
			t.Errorf("ApiVersions v4 lacks supported feature %s: %v", name, v4)
		}
	}
	if r := v4["group.version"]; r[0] != 0 {
		t.Errorf("ApiVersions v4 group.version min = %d, want 0 as Kafka 4.3", r[0])
	}
}

// F2: DescribeTopicPartitions answers EligibleLeaderReplicas and
// LastKnownELR as empty arrays, not null: the Java Admin.describeTopics
// (3.8+) dereferences them.
func TestEmbeddedBrokerDescribeTopicPartitionsELRNotNull(t *testing.T) {
	b, cl := startProtocolTestBroker(t)
	ctx := context.Background()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 3, -1, nil, "dtp"); err != nil {
		t.Fatal(err)
	}
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
	rt.Topic = "dtp"
	req.Topics = append(req.Topics, rt)
	req.ResponsePartitionLimit = 2000
	resp := brokertest.Request(t, b.Addr(), req).(*kmsg.DescribeTopicPartitionsResponse)
	if len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) != 3 {
		t.Fatalf("DescribeTopicPartitions dtp: %+v", resp.Topics)
	}
	for _, p := range resp.Topics[0].Partitions {
		if p.EligibleLeaderReplicas == nil || p.LastKnownELR == nil {
			t.Errorf("partition %d: EligibleLeaderReplicas %v, LastKnownELR %v: null on the wire, Kafka answers []", p.Partition, p.EligibleLeaderReplicas, p.LastKnownELR)
		}
		if len(p.EligibleLeaderReplicas)+len(p.LastKnownELR) != 0 {
			t.Errorf("partition %d: ELR %v / last known %v, want empty on a single broker", p.Partition, p.EligibleLeaderReplicas, p.LastKnownELR)
		}
	}
}

// F3: CreateTopics (v5+) answers the created topic's configs, every one
// with its value and a ConfigSource (the Java admin client fails the
// creation on -1), in name order, the set ones as DYNAMIC_TOPIC_CONFIG.
// A validate-only creation answers the same without creating the topic.
func TestEmbeddedBrokerCreateTopicsAnswersConfigs(t *testing.T) {
	b, cl := startProtocolTestBroker(t)
	ctx := context.Background()
	for _, validateOnly := range []bool{true, false} {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.ValidateOnly = validateOnly
		req.TimeoutMillis = 5000
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "created", 2, -1
		for k, v := range map[string]string{"cleanup.policy": "compact", "retention.ms": "1000"} {
			c := kmsg.NewCreateTopicsRequestTopicConfig()
			c.Name, c.Value = k, kmsg.StringPtr(v)
			rt.Configs = append(rt.Configs, c)
		}
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Version < 5 {
			t.Fatalf("CreateTopics answered at v%d, the test needs v5+", resp.Version)
		}
		got := resp.Topics[0]
		if got.ErrorCode != 0 || got.NumPartitions != 2 || got.ReplicationFactor != 1 {
			t.Fatalf("validateOnly=%v: %+v", validateOnly, got)
		}
		byName := make(map[string]kmsg.CreateTopicsResponseTopicConfig)
		var names []string
		for _, c := range got.Configs {
			byName[c.Name] = c
			names = append(names, c.Name)
			switch kmsg.ConfigSource(c.Source) {
			case kmsg.ConfigSourceDynamicTopicConfig, kmsg.ConfigSourceDynamicBrokerConfig, kmsg.ConfigSourceStaticBrokerConfig, kmsg.ConfigSourceDefaultConfig:
			default:
				t.Errorf("validateOnly=%v: config %s has source %d", validateOnly, c.Name, c.Source)
			}
			if c.Value == nil {
				t.Errorf("validateOnly=%v: config %s has a null value", validateOnly, c.Name)
			}
		}
		if !slices.IsSorted(names) {
			t.Errorf("validateOnly=%v: configs not in name order: %v", validateOnly, names)
		}
		want := map[string][2]string{
			"cleanup.policy":      {"compact", "1"},
			"retention.ms":        {"1000", "1"},
			"delete.retention.ms": {"86400000", "5"},
			"min.insync.replicas": {"1", "5"},
			// The broker's message.max.bytes (BatchMaxBytes),
			// under the topic config's name.
			"max.message.bytes": {strconv.Itoa(BatchMaxBytes), "2"},
		}
		for k, w := range want {
			c, ok := byName[k]
			if !ok || c.Value == nil || *c.Value != w[0] || strconv.Itoa(int(c.Source)) != w[1] {
				t.Errorf("validateOnly=%v: config %s = %+v, want value %s source %s", validateOnly, k, c, w[0], w[1])
			}
		}
		if _, ok := byName["message.max.bytes"]; ok {
			t.Errorf("validateOnly=%v: a broker config name among the topic's configs", validateOnly)
		}
		// Asked on a connection of its own: a kgo client answers a
		// repeated Metadata request from its cache.
		dreq := kmsg.NewPtrDescribeTopicPartitionsRequest()
		dt := kmsg.NewDescribeTopicPartitionsRequestTopic()
		dt.Topic = "created"
		dreq.Topics = append(dreq.Topics, dt)
		dreq.ResponsePartitionLimit = 100
		dresp := brokertest.Request(t, b.Addr(), dreq).(*kmsg.DescribeTopicPartitionsResponse)
		if exists := dresp.Topics[0].ErrorCode == 0; exists == validateOnly {
			t.Errorf("validateOnly=%v: topic exists afterwards: %v", validateOnly, exists)
		}
	}
}

// F4: ListGroups filters types and states case-insensitively, as Kafka:
// kafka-consumer-groups --list sends "Classic" (GroupType.toString()).
func TestEmbeddedBrokerListGroupsFiltersIgnoreCase(t *testing.T) {
	_, cl := startProtocolTestBroker(t)
	ctx := context.Background()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, -1, nil, "lg"); err != nil {
		t.Fatal(err)
	}
	// A classic group with committed offsets and no member: Empty.
	if _, err := adm.CommitOffsets(ctx, "lg-group", kadm.OffsetsFromRecords(kgo.Record{Topic: "lg", Partition: 0, Offset: 0})); err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ types, states []string }{
		{types: []string{"Classic"}},
		{types: []string{"classic"}},
		{types: []string{"CLASSIC", "Consumer"}},
		{states: []string{"empty"}},
		{types: []string{"Classic"}, states: []string{"Empty"}},
	} {
		req := kmsg.NewPtrListGroupsRequest()
		req.TypesFilter, req.StatesFilter = f.types, f.states
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Groups) != 1 || resp.Groups[0].Group != "lg-group" || resp.Groups[0].GroupType != "classic" {
			t.Errorf("ListGroups types %q states %q: %+v, want lg-group (classic)", f.types, f.states, resp.Groups)
		}
	}
	req := kmsg.NewPtrListGroupsRequest()
	req.TypesFilter = []string{"Consumer"}
	if resp, err := req.RequestWith(ctx, cl); err != nil || len(resp.Groups) != 0 {
		t.Errorf("ListGroups types Consumer: %+v %v, want none", resp, err)
	}
}

// The log cleaner runs every embedded.kafka.log.cleaner.backoff.ms:
// a compacted topic keeps the latest record of each key, a topic past
// its retention.ms loses its records, and a compact-only topic keeps its
// records however old (Kafka deletes by time only under cleanup.policy
// delete).
func TestEmbeddedBrokerCompactsAndDeletes(t *testing.T) {
	_, cl := startProtocolTestBroker(t, "embedded.kafka.log.cleaner.backoff.ms", "100")
	ctx := context.Background()
	adm := kadm.NewClient(cl)
	compact := "compact"
	for topic, cfg := range map[string]map[string]*string{
		"compacted":     {"cleanup.policy": &compact},
		"compacted-old": {"cleanup.policy": &compact, "retention.ms": kmsg.StringPtr("1")},
		"expiring":      {"retention.ms": kmsg.StringPtr("1")},
	} {
		if _, err := adm.CreateTopic(ctx, 1, -1, cfg, topic); err != nil {
			t.Fatal(err)
		}
	}
	// One batch per record (ProduceSync of one record each).
	for i := range 10 {
		for _, topic := range []string{"compacted", "compacted-old", "expiring"} {
			r := &kgo.Record{Topic: topic, Key: []byte("k" + strconv.Itoa(i%2)), Value: []byte(strconv.Itoa(i))}
			if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	read := func(topic string) []string {
		c, err := kgo.NewClient(kgo.SeedBrokers(cl.OptValue(kgo.SeedBrokers).([]string)...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxWait(200*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ends, err := adm.ListEndOffsets(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		end := ends[topic][0].Offset
		var out []string
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		for {
			fs := c.PollFetches(pctx)
			if pctx.Err() != nil {
				return out
			}
			done := false
			fs.EachRecord(func(r *kgo.Record) {
				out = append(out, string(r.Key)+"="+string(r.Value))
				done = done || r.Offset == end-1
			})
			if done {
				return out
			}
		}
	}
	// The latest record of each key, and the last batch, which the
	// cleaner keeps as it is (Kafka keeps the whole active segment).
	latest := []string{"k1=7", "k0=8", "k1=9"}
	deadline := time.Now().Add(20 * time.Second)
	for {
		starts, err := adm.ListStartOffsets(ctx, "expiring")
		if err != nil {
			t.Fatal(err)
		}
		got := read("compacted")
		if starts["expiring"][0].Offset == 10 && slices.Equal(got, latest) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s: compacted reads %v (want %v), expiring starts at %d (want 10)", got, latest, starts["expiring"][0].Offset)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := read("compacted-old"); !slices.Equal(got, latest) {
		t.Errorf("compact-only topic with retention.ms=1 reads %v, want the latest of each key %v", got, latest)
	}
}

func TestEmbeddedBrokerLogConfigKeys(t *testing.T) {
	for _, bad := range []map[string]string{
		{"embedded.kafka.log.cleaner.backoff.ms": "0"},
		{"embedded.kafka.log.cleaner.backoff.ms": "soon"},
		{"embedded.kafka.log.retention.ms": "-2"},
		{"embedded.kafka.log.retention.bytes": "1GB"},
	} {
		if _, err := LogOptions(bad); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
	if _, err := LogOptions(map[string]string{"embedded.kafka.log.retention.ms": "-1", "embedded.kafka.log.retention.bytes": "1073741824"}); err != nil {
		t.Error(err)
	}
}

// Found by kafka-transactions (integration
// TestKafkaTransactionToolsSameOnEmbeddedBrokerAndKafka): a completed
// transaction is CompleteCommit / CompleteAbort in DescribeTransactions
// and ListTransactions until the next one starts (kfake answered Empty),
// and DescribeProducers lists every producer that wrote to the partition,
// not only those in a transaction, each with the last sequence (-1 after
// the KIP-890 epoch bump of its transaction's end), as Kafka 4.3 does.
func TestEmbeddedBrokerTransactionStatesAsKafka(t *testing.T) {
	b, cl := startProtocolTestBroker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "txs"); err != nil {
		t.Fatal(err)
	}
	produce := func(id string, end kgo.TransactionEndTry) {
		p, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.TransactionalID(id), kgo.DefaultProduceTopic("txs"))
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if err := p.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte(id)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := p.EndTransaction(ctx, end); err != nil {
			t.Fatal(err)
		}
	}
	produce("committed", kgo.TryCommit)
	produce("aborted", kgo.TryAbort)
	idem, err := kgo.NewClient(kgo.SeedBrokers(b.Addr()), kgo.DefaultProduceTopic("txs"))
	if err != nil {
		t.Fatal(err)
	}
	defer idem.Close()
	if err := idem.ProduceSync(ctx, &kgo.Record{Value: []byte("idempotent")}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	described, err := adm.DescribeTransactions(ctx, "committed", "aborted")
	if err != nil {
		t.Fatal(err)
	}
	listed, err := adm.ListTransactions(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{"committed": "CompleteCommit", "aborted": "CompleteAbort"} {
		if got := described[id].State; got != want {
			t.Errorf("DescribeTransactions %s: state %q, want %q", id, got, want)
		}
		if got := listed[id].State; got != want {
			t.Errorf("ListTransactions %s: state %q, want %q", id, got, want)
		}
	}
	producers, err := adm.DescribeProducers(ctx, kadm.TopicsSet{"txs": {0: {}}})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int32
	producers.EachProducer(func(p kadm.DescribedProducer) {
		seqs = append(seqs, p.LastSequence)
		if p.CurrentTxnStartOffset != -1 {
			t.Errorf("producer %d: transaction start offset %d with no transaction open", p.ProducerID, p.CurrentTxnStartOffset)
		}
	})
	slices.Sort(seqs)
	// The two transactional producers' epochs were bumped by their
	// EndTxn (-1); the idempotent one's last batch had sequence 0.
	if !slices.Equal(seqs, []int32{-1, -1, 0}) {
		t.Errorf("DescribeProducers: last sequences %v, want [-1 -1 0] (two ended transactions, one idempotent producer)", seqs)
	}
}
