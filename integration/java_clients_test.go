package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/broker"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Java clients against the embedded broker (issue 18): Kafka 4.3's own
// command-line tools and the Java admin, producer and consumer of
// kafka-clients 3.4, 3.7 and 4.3, each run against the embedded broker
// and against a real Apache Kafka 4.3; the tools' output must be the same
// on both (node ids and topic ids masked).

// kafkaJars returns the output of scripts/kafka.sh with args (a directory
// of jars, fetched once by make setup).
func kafkaJars(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("bash", append([]string{"../scripts/kafka.sh"}, args...)...).Output()
	if err != nil {
		t.Fatalf("scripts/kafka.sh %s (run `make setup`): %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// startEmbeddedBrokerForJava starts the embedded broker as the worker does
// (its default log configs), on a free port.
func startEmbeddedBrokerForJava(t *testing.T) string {
	t.Helper()
	b, err := broker.Start(freeAddr(t), t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b.Addr()
}

// startKafkaLikeEmbedded starts a real Kafka 4.3 whose broker configs
// match the embedded broker's where they show in the tools' output.
func startKafkaLikeEmbedded(t *testing.T) string {
	t.Helper()
	return startKafkaWith(t, kafkaListenerOpts{props: "message.max.bytes=" + strconv.Itoa(broker.BatchMaxBytes) + "\n"})
}

// runJava runs class with cp; stdin may be empty. It fails the test on a
// non-zero exit, with the output.
func runJava(t *testing.T, cp, stdin, class string, args ...string) string {
	t.Helper()
	cmd := exec.Command("java", append([]string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto", "-cp", cp, class}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", class, strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("%s %s: no exit in 2 minutes\nstdout:\n%s\nstderr:\n%s", class, strings.Join(args, " "), stdout.String(), stderr.String())
	}
	return stdout.String()
}

var (
	// Node ids (the embedded broker is node 0, the test's Kafka node 1)
	// and topic ids differ by construction.
	toolNodeIDs  = regexp.MustCompile(`\b(Leader|Replicas|Isr|Elr|LastKnownElr): [0-9,]+`)
	toolTopicIDs = regexp.MustCompile(`TopicId: \S+`)
)

// The tools' known differences between the embedded broker and Kafka
// 4.3, each masked by normalizeToolOutput, with its reason:
//   - kafka-topics --describe "Configs:" lists: Kafka's KRaft controller
//     sets min.insync.replicas=1 as a cluster-wide dynamic default
//     (DYNAMIC_DEFAULT_BROKER_CONFIG), which the tool shows; the embedded
//     broker has the same value as its static default, which it does not.
//     And the order: Kafka lists a topic's configs in its internal map
//     order, the embedded broker by name. The entry is dropped and the
//     lists sorted.
//   - kafka-configs --describe synonyms: Kafka names a default by its
//     broker config (log.cleanup.policy) and lists the topic's own value
//     among the synonyms; the embedded broker names the topic config and
//     lists only what it overrides. The synonyms are dropped: the
//     configs, values and sensitivity are compared.
var (
	toolConfigsList = regexp.MustCompile(`Configs: (\S*)`)
	toolSynonyms    = regexp.MustCompile(` synonyms=\{[^}]*\}`)
)

func normalizeToolOutput(s string) string {
	s = toolNodeIDs.ReplaceAllString(s, "$1: <node>")
	s = toolTopicIDs.ReplaceAllString(s, "TopicId: <id>")
	s = toolConfigsList.ReplaceAllStringFunc(s, func(m string) string {
		var kept []string
		for _, c := range strings.Split(strings.TrimPrefix(m, "Configs: "), ",") {
			if c != "min.insync.replicas=1" {
				kept = append(kept, c)
			}
		}
		slices.Sort(kept)
		return "Configs: " + strings.Join(kept, ",")
	})
	return toolSynonyms.ReplaceAllString(s, "")
}

// The same Kafka 4.3 tool invocations against the embedded broker and a
// real Kafka 4.3 succeed on both with the same output (after
// normalizeToolOutput): kafka-topics create (with a config) / describe /
// alter / list / delete, kafka-console-producer and -consumer (keys, a
// group), kafka-consumer-groups list / describe / reset-offsets / delete,
// kafka-get-offsets and kafka-configs describe / alter. Before issue 18's
// fixes create reported failure (F3), describe threw a
// NullPointerException (F2) and --list printed nothing (F4).
func TestKafkaToolsSameOnEmbeddedBrokerAndKafka(t *testing.T) {
	cp := filepath.Join(kafkaJars(t), "*") + string(os.PathListSeparator) + filepath.Join(kafkaJars(t, "tools"), "*")
	const (
		topicCmd   = "org.apache.kafka.tools.TopicCommand"
		groupCmd   = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
		producer   = "org.apache.kafka.tools.ConsoleProducer"
		consumer   = "org.apache.kafka.tools.consumer.ConsoleConsumer"
		getOffsets = "org.apache.kafka.tools.GetOffsetShell"
		configCmd  = "kafka.admin.ConfigCommand"
	)
	type step struct {
		name   string
		stdin  string
		class  string
		args   []string
		sorted bool // lines in any order (a consumer reading several partitions)
	}
	steps := []step{
		{name: "create", class: topicCmd, args: []string{"--create", "--topic", "jt", "--partitions", "3", "--config", "cleanup.policy=compact"}},
		{name: "describe", class: topicCmd, args: []string{"--describe", "--topic", "jt"}},
		{name: "produce", stdin: "k1:v1\nk2:v2\nk3:v3\nk4:v4\n", class: producer, args: []string{"--topic", "jt", "--reader-property", "parse.key=true", "--reader-property", "key.separator=:"}},
		{name: "consume", class: consumer, sorted: true, args: []string{"--topic", "jt", "--group", "jg", "--from-beginning", "--max-messages", "4", "--formatter-property", "print.key=true", "--formatter-property", "print.partition=true"}},
		{name: "groups list", class: groupCmd, args: []string{"--list"}},
		{name: "groups list classic", class: groupCmd, args: []string{"--list", "--type", "classic"}},
		{name: "groups describe", class: groupCmd, args: []string{"--describe", "--group", "jg"}},
		{name: "get offsets", class: getOffsets, args: []string{"--topic", "jt"}},
		{name: "reset offsets", class: groupCmd, args: []string{"--reset-offsets", "--group", "jg", "--topic", "jt", "--to-earliest", "--execute"}},
		{name: "groups describe after reset", class: groupCmd, args: []string{"--describe", "--group", "jg", "--offsets"}},
		{name: "alter partitions", class: topicCmd, args: []string{"--alter", "--topic", "jt", "--partitions", "4"}},
		{name: "configs alter", class: configCmd, args: []string{"--alter", "--entity-type", "topics", "--entity-name", "jt", "--add-config", "retention.ms=86400000"}},
		{name: "configs describe", class: configCmd, args: []string{"--describe", "--entity-type", "topics", "--entity-name", "jt"}},
		{name: "describe after alter", class: topicCmd, args: []string{"--describe", "--topic", "jt"}},
		{name: "groups delete", class: groupCmd, args: []string{"--delete", "--group", "jg"}},
		{name: "delete", class: topicCmd, args: []string{"--delete", "--topic", "jt"}},
	}
	run := func(addr string) []string {
		var outs []string
		for _, s := range steps {
			args := append([]string{"--bootstrap-server", addr}, s.args...)
			out := normalizeToolOutput(runJava(t, cp, s.stdin, s.class, args...))
			if s.sorted {
				lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
				slices.Sort(lines)
				out = strings.Join(lines, "\n") + "\n"
			}
			outs = append(outs, out)
		}
		return outs
	}
	embedded := run(startEmbeddedBrokerForJava(t))
	kafka := run(startKafkaLikeEmbedded(t))
	for i, s := range steps {
		if embedded[i] != kafka[i] {
			t.Errorf("%s: the embedded broker's output differs from Kafka 4.3's\nembedded:\n%s\nkafka:\n%s", s.name, embedded[i], kafka[i])
		}
	}
	// What must be there in any case, so that an empty output on both
	// sides cannot pass.
	for i, want := range map[int]string{
		0: "Created topic jt.",
		1: "PartitionCount: 3",
		3: "Partition:",
		4: "jg",
		6: "jg              jt",
		7: "jt:0:",
	} {
		if !strings.Contains(embedded[i], want) {
			t.Errorf("%s: output lacks %q:\n%s", steps[i].name, want, embedded[i])
		}
	}
	if t.Failed() {
		return
	}
	t.Logf("%d Kafka tool invocations, the same output on the embedded broker and Kafka 4.3", len(steps))
}

// javaClientProbe is a Java program on the admin, producer and consumer
// API of every kafka-clients since 3.0: it creates a topic, describes it
// (Admin.describeTopics: Metadata before 3.8, DescribeTopicPartitions
// since), produces 10 keyed records, reads them back in a group and
// commits, and lists and describes the group. It prints what it saw.
const javaClientProbe = `
import java.time.Duration;
import java.util.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.serialization.*;

public class Probe {
  public static void main(String[] a) throws Exception {
    String bs = a[0], topic = a[1];
    Properties p = new Properties();
    p.put("bootstrap.servers", bs);
    try (Admin admin = Admin.create(p)) {
      admin.createTopics(List.of(new NewTopic(topic, 2, (short) 1).configs(Map.of("cleanup.policy", "compact")))).all().get();
      TopicDescription d = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
      System.out.println("describe " + d.name() + " partitions=" + d.partitions().size() + " isr=" + d.partitions().get(0).isr().size());
      Properties pp = new Properties();
      pp.putAll(p);
      pp.put("key.serializer", StringSerializer.class.getName());
      pp.put("value.serializer", StringSerializer.class.getName());
      pp.put("enable.idempotence", "true");
      pp.put("acks", "all");
      try (KafkaProducer<String, String> pr = new KafkaProducer<>(pp)) {
        for (int i = 0; i < 10; i++) pr.send(new ProducerRecord<>(topic, "k" + i, "v" + i)).get();
      }
      Properties cp = new Properties();
      cp.putAll(p);
      cp.put("key.deserializer", StringDeserializer.class.getName());
      cp.put("value.deserializer", StringDeserializer.class.getName());
      cp.put("group.id", topic + "-group");
      cp.put("auto.offset.reset", "earliest");
      cp.put("enable.auto.commit", "false");
      TreeSet<String> got = new TreeSet<>();
      try (KafkaConsumer<String, String> c = new KafkaConsumer<>(cp)) {
        c.subscribe(List.of(topic));
        long deadline = System.currentTimeMillis() + 60000;
        while (got.size() < 10 && System.currentTimeMillis() < deadline) {
          for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(500))) got.add(r.key() + "=" + r.value());
        }
        c.commitSync();
      }
      System.out.println("consumed " + got);
      Collection<ConsumerGroupListing> groups = admin.listConsumerGroups().all().get();
      for (ConsumerGroupListing g : groups) System.out.println("group " + g.groupId());
      ConsumerGroupDescription gd = admin.describeConsumerGroups(List.of(topic + "-group")).all().get().get(topic + "-group");
      System.out.println("group state " + gd.state());
      Map<org.apache.kafka.common.TopicPartition, OffsetAndMetadata> offs = admin.listConsumerGroupOffsets(topic + "-group").partitionsToOffsetAndMetadata().get();
      long sum = 0;
      for (OffsetAndMetadata o : offs.values()) sum += o.offset();
      System.out.println("committed " + sum);
    }
  }
}
`

// The Java clients of kafka-clients 3.4.1 (Flink 1.20's Kafka connector),
// 3.7.2 and 4.3.0 work against the embedded broker as against Kafka 4.3:
// the same output from javaClientProbe. 3.4 and 3.7 died in the network
// thread on ApiVersions (F1, "Expected minValue >= 1"), 4.3 on
// describeTopics (F2).
func TestJavaClientsSameOnEmbeddedBrokerAndKafka(t *testing.T) {
	embedded := startEmbeddedBrokerForJava(t)
	kafka := startKafkaLikeEmbedded(t)
	src := filepath.Join(t.TempDir(), "Probe.java")
	if err := os.WriteFile(src, []byte(javaClientProbe), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"3.4.1", "3.7.2", "4.3.0"} {
		t.Run(v, func(t *testing.T) {
			jars := filepath.Join(kafkaJars(t), "*")
			if v != "4.3.0" {
				jars = filepath.Join(kafkaJars(t, "clients", v), "*")
			}
			classes := t.TempDir()
			if out, err := exec.Command("javac", "-d", classes, "-cp", jars, src).CombinedOutput(); err != nil {
				t.Fatalf("javac against kafka-clients %s: %v\n%s", v, err, out)
			}
			cp := classes + string(os.PathListSeparator) + jars
			topic := "probe-" + strings.ReplaceAll(v, ".", "-")
			got := runJava(t, cp, "", "Probe", embedded, topic)
			want := runJava(t, cp, "", "Probe", kafka, topic)
			if got != want {
				t.Errorf("kafka-clients %s: the embedded broker's answers differ from Kafka 4.3's\nembedded:\n%s\nkafka:\n%s", v, got, want)
			}
			for _, line := range []string{"describe " + topic + " partitions=2 isr=1", "consumed [k0=v0, k1=v1, k2=v2, k3=v3, k4=v4, k5=v5, k6=v6, k7=v7, k8=v8, k9=v9]", "group state Empty", "committed 10"} {
				if !strings.Contains(got, line+"\n") {
					t.Errorf("kafka-clients %s against the embedded broker: no line %q in\n%s", v, line, got)
				}
			}
		})
	}
}

// A stock Kafka Connect 4.3 distributed worker (connect-runtime, from the
// tools' jars, with the FileStream connectors) runs against the embedded
// broker: it creates its internal topics (which failed on F3), joins its
// group, runs a FileStreamSourceConnector, and its records arrive. The
// worker has exactly-once source support (exactly.once.source.support=
// enabled, KIP-618: zombie fencing, the task's records and offsets in
// one transaction, the leader's transactional config writes) and the
// connector creates its topic by KIP-158 (topic.creation.default.*:
// partitions and a topic config).
func TestKafkaConnectWorkerOnEmbeddedBroker(t *testing.T) {
	broker := startEmbeddedBrokerForJava(t)
	fileJars, err := filepath.Glob(filepath.Join(kafkaJars(t, "connect-file"), "connect-file-*.jar"))
	if err != nil || len(fileJars) != 1 {
		t.Fatalf("connect-file jar: %v %v", fileJars, err)
	}
	cp := strings.Join([]string{filepath.Join(kafkaJars(t), "*"), filepath.Join(kafkaJars(t, "tools"), "*"), fileJars[0]}, string(os.PathListSeparator))
	dir := t.TempDir()
	rest := freeAddr(t)
	props := fmt.Sprintf(`bootstrap.servers=%s
group.id=stock-connect
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
config.storage.topic=stock-configs
offset.storage.topic=stock-offsets
status.storage.topic=stock-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
offset.flush.interval.ms=500
exactly.once.source.support=enabled
listeners=http://%s
`, broker, rest)
	propsPath := filepath.Join(dir, "worker.properties")
	input := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(propsPath, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(input, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	log := &syncBuffer{}
	cmd := exec.Command("java", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", cp, "org.apache.kafka.connect.cli.ConnectDistributed", propsPath)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("Kafka Connect log:\n%s", log.String())
		}
	})
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + rest + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	waitFor := func(what string, ok func() bool) {
		deadline := time.Now().Add(90 * time.Second)
		for !ok() {
			select {
			case <-exited:
				t.Fatalf("Kafka Connect exited waiting for %s", what)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("Kafka Connect: no %s in 90 s", what)
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	waitFor("REST API", func() bool { code, body := get("/connectors"); return code == 200 && body == "[]" })
	body := fmt.Sprintf(`{"name":"file","config":{"connector.class":"org.apache.kafka.connect.file.FileStreamSourceConnector","file":%q,"topic":"file-out","tasks.max":"1",
		"exactly.once.support":"required","transaction.boundary":"poll",
		"topic.creation.default.replication.factor":"-1","topic.creation.default.partitions":"3","topic.creation.default.retention.ms":"3600000"}}`, input)
	resp, err := http.Post("http://"+rest+"/connectors", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 201 {
		t.Fatalf("POST /connectors: %d", resp.StatusCode)
	}
	waitFor("RUNNING connector and task", func() bool {
		_, st := get("/connectors/file/status")
		return strings.Count(st, `"state":"RUNNING"`) == 2
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics("file-out"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var got []string
	for len(got) < 3 && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { got = append(got, string(r.Value)) })
	}
	slices.Sort(got) // three partitions
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("file-out (read committed): %q, want the file's lines a, b, c", got)
	}
	adm := kadm.NewClient(cl)
	// KIP-158: the topic as topic.creation.default.* says.
	td, err := adm.ListTopics(ctx, "file-out")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(td["file-out"].Partitions); n != 3 {
		t.Errorf("file-out: %d partitions, want 3 (topic.creation.default.partitions)", n)
	}
	rc, err := adm.DescribeTopicConfigs(ctx, "file-out")
	if err != nil {
		t.Fatal(err)
	}
	if c, err := rc.On("file-out", nil); err != nil || !slices.ContainsFunc(c.Configs, func(c kadm.Config) bool {
		return c.Key == "retention.ms" && c.MaybeValue() == "3600000" && c.Source == kmsg.ConfigSourceDynamicTopicConfig
	}) {
		t.Errorf("file-out: no retention.ms=3600000 topic config (topic.creation.default.retention.ms): %+v %v", c.Configs, err)
	}
	// KIP-618: the task's transactional id (<group>-<connector>-<task>)
	// and the leader's, with completed transactions.
	txns, err := adm.ListTransactions(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"stock-connect-file-0", "connect-cluster-stock-connect"} {
		if tx, ok := txns[id]; !ok || (tx.State != "CompleteCommit" && tx.State != "Ongoing" && tx.State != "Empty") {
			t.Errorf("transactional id %s: %+v (listed: %v)", id, tx, txns.TransactionalIDs())
		}
	}
	if tx := txns["stock-connect-file-0"]; tx.State != "CompleteCommit" {
		t.Errorf("the task's transactions: state %q, want CompleteCommit (its records were committed)", tx.State)
	}
	groups, err := adm.DescribeGroups(ctx, "stock-connect")
	if err != nil {
		t.Fatal(err)
	}
	if g := groups["stock-connect"]; g.ProtocolType != "connect" || g.State != "Stable" {
		t.Errorf("group stock-connect: type %q state %q, want a stable connect group", g.ProtocolType, g.State)
	}
}

// normalizeToolTable masks the columns named in masked of a tool's
// table output (a header line, then rows; columns padded with spaces)
// and joins the fields with one space (the padding follows the masked
// values' widths).
func normalizeToolTable(out string, masked ...string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) == 0 {
		return out
	}
	header := strings.Fields(lines[0])
	var b strings.Builder
	b.WriteString(strings.Join(header, " ") + "\n")
	var rows []string
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		for i := range f {
			if i < len(header) && slices.Contains(masked, header[i]) {
				f[i] = "<" + header[i] + ">"
			}
		}
		rows = append(rows, strings.Join(f, " "))
	}
	slices.Sort(rows)
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
	return b.String()
}

// Before the fix kfake answered Empty for a completed transaction
// (Kafka: CompleteCommit / CompleteAbort) and listed only producers in a
// transaction in describe-producers (Kafka: every producer with state on
// the partition).
//
// Kafka 4.3's kafka-transactions (list, describe, describe-producers,
// find-hanging) and the console consumer's isolation levels against the
// embedded broker and Kafka 4.3, on the same transactions (franz-go
// transactional producers: one committed, one aborted, one left open
// while the tools run, then committed): the same output (producer ids,
// epochs, coordinator ids and times masked).
func TestKafkaTransactionToolsSameOnEmbeddedBrokerAndKafka(t *testing.T) {
	cp := filepath.Join(kafkaJars(t), "*") + string(os.PathListSeparator) + filepath.Join(kafkaJars(t, "tools"), "*")
	const (
		topicCmd = "org.apache.kafka.tools.TopicCommand"
		txnCmd   = "org.apache.kafka.tools.TransactionsCommand"
		consumer = "org.apache.kafka.tools.consumer.ConsoleConsumer"
	)
	masked := []string{"Coordinator", "CoordinatorId", "ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch",
		"CurrentTransactionStartTimeMs", "TransactionDurationMs", "LastTimestamp"}
	type step struct {
		name  string
		class string
		args  []string
		table bool
	}
	consume := func(level string, n int) []string {
		return []string{"--topic", "tx", "--from-beginning", "--isolation-level", level, "--max-messages", strconv.Itoa(n),
			"--formatter-property", "print.key=true", "--timeout-ms", "20000"}
	}
	during := []step{
		{name: "list", class: txnCmd, args: []string{"list"}, table: true},
		{name: "describe committed", class: txnCmd, args: []string{"describe", "--transactional-id", "tx-committed"}, table: true},
		{name: "describe aborted", class: txnCmd, args: []string{"describe", "--transactional-id", "tx-aborted"}, table: true},
		{name: "describe open", class: txnCmd, args: []string{"describe", "--transactional-id", "tx-open"}, table: true},
		{name: "describe-producers", class: txnCmd, args: []string{"describe-producers", "--topic", "tx", "--partition", "0"}, table: true},
		{name: "find-hanging", class: txnCmd, args: []string{"find-hanging", "--topic", "tx"}, table: true},
		{name: "consume read_committed", class: consumer, args: consume("read_committed", 3)},
		{name: "consume read_uncommitted", class: consumer, args: consume("read_uncommitted", 6)},
	}
	after := []step{
		{name: "describe open after commit", class: txnCmd, args: []string{"describe", "--transactional-id", "tx-open"}, table: true},
		{name: "list after commit", class: txnCmd, args: []string{"list"}, table: true},
		{name: "consume read_committed after commit", class: consumer, args: consume("read_committed", 4)},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	txn := func(addr, id string, recs ...string) *kgo.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.TransactionalID(id), kgo.TransactionTimeout(5*time.Minute), kgo.DefaultProduceTopic("tx"))
		if err != nil {
			t.Fatal(err)
		}
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, kv := range recs {
			k, v, _ := strings.Cut(kv, ":")
			if err := cl.ProduceSync(ctx, &kgo.Record{Key: []byte(k), Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		return cl
	}
	run := func(addr string) []string {
		runJava(t, cp, "", topicCmd, "--bootstrap-server", addr, "--create", "--topic", "tx", "--partitions", "1")
		for _, tx := range []struct {
			id     string
			commit kgo.TransactionEndTry
			recs   []string
		}{{"tx-committed", kgo.TryCommit, []string{"c1:1", "c2:2", "c3:3"}}, {"tx-aborted", kgo.TryAbort, []string{"a1:1", "a2:2"}}} {
			cl := txn(addr, tx.id, tx.recs...)
			if err := cl.EndTransaction(ctx, tx.commit); err != nil {
				t.Fatal(err)
			}
			cl.Close()
		}
		open := txn(addr, "tx-open", "o1:1")
		defer open.Close()
		var outs []string
		exec := func(steps []step) {
			for _, s := range steps {
				out := runJava(t, cp, "", s.class, append([]string{"--bootstrap-server", addr}, s.args...)...)
				if s.table {
					out = normalizeToolTable(out, masked...)
				} else {
					lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
					slices.Sort(lines)
					out = strings.Join(lines, "\n") + "\n"
				}
				outs = append(outs, out)
			}
		}
		exec(during)
		if err := open.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
		exec(after)
		return outs
	}
	embedded := run(startEmbeddedBrokerForJava(t))
	kafka := run(startKafkaLikeEmbedded(t))
	steps := append(append([]step{}, during...), after...)
	for i, s := range steps {
		if embedded[i] != kafka[i] {
			t.Errorf("%s: the embedded broker's output differs from Kafka 4.3's\nembedded:\n%s\nkafka:\n%s", s.name, embedded[i], kafka[i])
		}
	}
	t.Logf("%d kafka-transactions / console consumer invocations compared", len(steps))
	for i, want := range map[int]string{0: "tx-open", 3: "Ongoing", 6: "c3\t3", 7: "a2\t2", 8: "CompleteCommit", 10: "o1\t1"} {
		if !strings.Contains(embedded[i], want) {
			t.Errorf("%s: output lacks %q:\n%s", steps[i].name, want, embedded[i])
		}
	}
}
