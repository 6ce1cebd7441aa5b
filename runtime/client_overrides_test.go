package runtime

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

func validationErrors(t *testing.T, policy string, cfg map[string]string) map[string][]string {
	t.Helper()
	plugins := connect.NewPlugins()
	plugins.RegisterSource("test.CounterSource", func() connect.SourceConnector { return counterSource{&counterShared{}} })
	h := &Herder{cfg: WorkerConfig{"connector.client.config.override.policy": policy}, plugins: plugins}
	infos, err := h.ValidateConnectorConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, e := range infos.Messages() {
		out[e.Key] = append(out[e.Key], e.Message)
	}
	return out
}

// The three policies of Kafka Connect (KIP-458; messages of
// AbstractConnectorClientConfigOverridePolicy.validate, keys prefixed as
// AbstractHerder.prefixedConfigInfos does).
func TestClientOverridePolicies(t *testing.T) {
	base := map[string]string{"connector.class": "test.CounterSource", "topic": "t", "name": "c"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	errs := validationErrors(t, "None", with("producer.override.linger.ms", "10", "admin.override.request.timeout.ms", "5"))
	if got := errs["producer.override.linger.ms"]; len(got) != 1 || got[0] != "The 'None' policy does not allow 'linger.ms' to be overridden in the connector configuration." {
		t.Errorf("None, producer: %v", got)
	}
	if got := errs["admin.override.request.timeout.ms"]; len(got) != 1 || got[0] != "The 'None' policy does not allow 'request.timeout.ms' to be overridden in the connector configuration." {
		t.Errorf("None, admin: %v", got)
	}
	errs = validationErrors(t, "org.apache.kafka.connect.connector.policy.PrincipalConnectorClientConfigOverridePolicy",
		with("producer.override.linger.ms", "10", "admin.override.sasl.mechanism", "PLAIN"))
	if got := errs["producer.override.linger.ms"]; len(got) != 1 || got[0] != "The 'Principal' policy does not allow 'linger.ms' to be overridden in the connector configuration." {
		t.Errorf("Principal: %v", got)
	}
	if got := errs["admin.override.sasl.mechanism"]; len(got) != 0 {
		t.Errorf("Principal allows sasl.mechanism: %v", got)
	}
	// All (the default): values of the keys connectd applies are checked;
	// keys Kafka's producer would ignore are accepted.
	errs = validationErrors(t, "", with("producer.override.linger.ms", "soon", "producer.override.compression.type", "brotli",
		"producer.override.acks", "1", "producer.override.send.buffer.bytes", "131072", "producer.override.bootstrap.servers", "elsewhere:9092"))
	want := map[string]string{
		"producer.override.linger.ms":         "Invalid value soon for configuration linger.ms: Not a number of type LONG",
		"producer.override.compression.type":  "Invalid value brotli for configuration compression.type: String must be one of: none, gzip, snappy, lz4, zstd",
		"producer.override.bootstrap.servers": "connectd does not support overriding the producer's bootstrap.servers per connector",
	}
	for k, m := range want {
		if got := errs[k]; len(got) != 1 || got[0] != m {
			t.Errorf("All, %s: %v", k, got)
		}
	}
	if len(errs) != len(want) {
		t.Errorf("errors %v", errs)
	}
	if _, err := OverridePolicy(WorkerConfig{"connector.client.config.override.policy": "Some"}); err == nil {
		t.Error("an unknown policy was accepted")
	}
}

// recordBatch is the header of one stored record batch (Kafka's
// RecordBatch v2 layout).
type recordBatch struct {
	size       int   // bytes, header included
	codec      int16 // attributes & 7: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd
	numRecords int32
	control    bool // attributes bit 5: a transaction marker
}

// fetchBatches returns the record batches of every partition of topic as
// the broker stores them.
func fetchBatches(t *testing.T, broker, topic string) []recordBatch {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.MaxVersions(kversion.V3_0_0()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	td, err := kadm.NewClient(cl).ListTopics(ctx, topic)
	if err != nil || td.Error() != nil {
		t.Fatal(err, td.Error())
	}
	req := kmsg.NewPtrFetchRequest()
	req.MaxWaitMillis, req.MaxBytes = 100, 50<<20
	ft := kmsg.NewFetchRequestTopic()
	ft.Topic = topic
	for p := range td[topic].Partitions {
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.PartitionMaxBytes = p, 50<<20
		ft.Partitions = append(ft.Partitions, fp)
	}
	req.Topics = append(req.Topics, ft)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	var out []recordBatch
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			b := rp.RecordBatches
			for len(b) >= 61 {
				n := 12 + int(binary.BigEndian.Uint32(b[8:12]))
				attrs := int16(binary.BigEndian.Uint16(b[21:23]))
				out = append(out, recordBatch{size: n, codec: attrs & 7, control: attrs&0x20 != 0, numRecords: int32(binary.BigEndian.Uint32(b[57:61]))})
				b = b[n:]
			}
		}
	}
	return out
}

// producer.override.compression.type and max.request.size reach the
// task's producer: the broker stores gzip batches for one connector,
// uncompressed ones for another (Kafka Connect's default, which the
// embedded broker's snappy default yields to) and batches of at most 512
// bytes for a third, where the worker's own producer writes snappy batches
// (the embedded broker's default, Herder.defaultCompression) of up to 100
// records.
func TestProducerOverridesReachTheTaskProducer(t *testing.T) {
	kafka := freeAddr(t)
	w := startTestWorker(t, t.TempDir(), kafka, &counterShared{})
	defer w.Close()
	ctx := context.Background()
	for name, extra := range map[string][2]string{
		"plain":   {},
		"gzipped": {"producer.override.compression.type", "gzip"},
		"none":    {"producer.override.compression.type", "none"},
		"small":   {"producer.override.max.request.size", "512"},
	} {
		cfg := map[string]string{"connector.class": "test.CounterSource", "topic": "ov-" + name, "count": "100",
			"producer.override.linger.ms": "20", "producer.override.send.buffer.bytes": "65536"}
		if extra[0] != "" {
			cfg[extra[0]] = extra[1]
		}
		if _, err := w.Herder.CreateConnector(ctx, name, cfg); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"plain", "gzipped", "none", "small"} {
		consumeAll(t, kafka, "ov-"+name, 100)
	}
	check := func(topic string, ok func(recordBatch) bool, what string) {
		t.Helper()
		bs := fetchBatches(t, kafka, topic)
		var total int32
		for _, b := range bs {
			total += b.numRecords
			if !ok(b) {
				t.Errorf("%s: batch %+v is not %s", topic, b, what)
			}
		}
		if total != 100 {
			t.Errorf("%s: %d records in %d batches", topic, total, len(bs))
		}
	}
	check("ov-gzipped", func(b recordBatch) bool { return b.codec == 1 }, "gzip")
	check("ov-none", func(b recordBatch) bool { return b.codec == 0 }, "uncompressed")
	check("ov-small", func(b recordBatch) bool { return b.size <= 512 }, "at most 512 bytes")
	// The control: the worker's producer compresses with snappy (embedded
	// broker) and does not split.
	check("ov-plain", func(b recordBatch) bool { return b.codec == 2 }, "snappy")
	if bs := fetchBatches(t, kafka, "ov-none"); bs[0].size <= 512 {
		t.Errorf("control batch of %d bytes: the 512-byte check above proves nothing", bs[0].size)
	}

	// A write the policy forbids is a 400 (ConfigInvalidError).
	w2 := startTestWorker(t, t.TempDir(), freeAddr(t), &counterShared{}, "connector.client.config.override.policy", "None")
	defer w2.Close()
	_, err := w2.Herder.CreateConnector(ctx, "forbidden", map[string]string{"connector.class": "test.CounterSource", "topic": "x", "producer.override.acks": "1"})
	var ci *ConfigInvalidError
	if !errors.As(err, &ci) || !strings.Contains(ci.Error(), "The 'None' policy does not allow 'acks' to be overridden in the connector configuration.") {
		t.Fatalf("policy None: %v", err)
	}
}

// Under exactly-once source support the overrides reach the task's
// transactional producer (gzip batches), and enable.idempotence=false is
// dropped, as Kafka Connect's exactlyOnceSourceTaskProducerConfigs
// overrides it (kgo would refuse a transactional producer without it).
func TestProducerOverridesUnderExactlyOnce(t *testing.T) {
	kafka := freeAddr(t)
	w := startTestWorker(t, t.TempDir(), kafka, &counterShared{}, "exactly.once.source.support", "enabled", "group.id", "eos-ov")
	defer w.Close()
	if _, err := w.Herder.CreateConnector(context.Background(), "eos", map[string]string{"connector.class": "test.CounterSource", "topic": "eos-gz", "count": "100",
		"producer.override.compression.type": "gzip", "producer.override.enable.idempotence": "false", "producer.override.linger.ms": "20"}); err != nil {
		t.Fatal(err)
	}
	consumeCommitted(t, kafka, "eos-gz", 100)
	var data int32
	for _, b := range fetchBatches(t, kafka, "eos-gz") {
		if b.control {
			continue // a transaction marker
		}
		data += b.numRecords
		if b.codec != 1 {
			t.Errorf("batch %+v is not gzip", b)
		}
	}
	if data != 100 {
		t.Errorf("%d records in data batches", data)
	}
}

// The tasks' producer holds at most defaultBufferMemory (8 MiB) of
// unacknowledged record bytes unless producer.override.buffer.memory
// says otherwise (Kafka's producer key; its default is 32 MiB). The bound
// is what keeps bench/postgres's peak RSS under 200 MB (issue 3): every
// buffered byte is live heap.
func TestProducerBufferMemory(t *testing.T) {
	w := startTestWorker(t, t.TempDir(), freeAddr(t), &counterShared{})
	defer w.Close()
	for _, c := range []struct {
		cfg  map[string]string
		want int64
	}{
		{map[string]string{}, 8 << 20},
		{map[string]string{ProducerOverridePrefix + "buffer.memory": "33554432"}, 32 << 20},
	} {
		over, _, err := producerOverrides(c.cfg)
		if err != nil {
			t.Fatal(err)
		}
		cl, err := kgo.NewClient(append(w.Herder.producerOpts(), over...)...)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := cl.OptValue(kgo.MaxBufferedBytes).(int64) // kgo keeps it as int64
		cl.Close()
		if got != c.want {
			t.Errorf("config %v: buffer.memory %v, want %d", c.cfg, got, c.want)
		}
	}
}
