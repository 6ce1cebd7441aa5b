package integration

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// startKafka runs a real Apache Kafka broker (KRaft, combined broker and
// controller, Maven Central jars cached by scripts/kafka.sh) on free
// loopback ports in a temp dir, and returns its bootstrap address. It
// fails the test, never skips it, when the broker cannot start.
func startKafka(t *testing.T) string {
	t.Helper()
	return startKafkaWith(t, kafkaListenerOpts{})
}

// kafkaListenerOpts secures the broker's client listener: protocol
// (SASL_PLAINTEXT; empty = PLAINTEXT), extra server.properties lines, the
// kafka-storage format arguments that add SCRAM users, and the client
// options the readiness check needs.
type kafkaListenerOpts struct {
	protocol   string
	props      string
	formatArgs []string
	clientOpts []kgo.Opt
}

func startKafkaWith(t *testing.T, o kafkaListenerOpts) string {
	t.Helper()
	proto := o.protocol
	if proto == "" {
		proto = "PLAINTEXT"
	}
	out, err := exec.Command("bash", "../scripts/kafka.sh").Output()
	if err != nil {
		t.Fatalf("scripts/kafka.sh (run `make setup`): %v", err)
	}
	lib := strings.TrimSpace(string(out))
	cp := filepath.Join(lib, "*")
	dir := t.TempDir()
	addr, ctrl := freeAddr(t), freeAddr(t)
	props := fmt.Sprintf(`process.roles=broker,controller
node.id=1
controller.quorum.voters=1@%[2]s
listeners=CLIENT://%[1]s,CONTROLLER://%[2]s,INTERNAL://%[5]s
advertised.listeners=CLIENT://%[1]s,INTERNAL://%[5]s
controller.listener.names=CONTROLLER
listener.security.protocol.map=CLIENT:%[4]s,CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT
inter.broker.listener.name=INTERNAL
log.dirs=%[3]s
num.partitions=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
`, addr, ctrl, filepath.Join(dir, "data"), proto, freeAddr(t)) + o.props
	propsPath := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(propsPath, []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	uuid, err := exec.Command("java", "-cp", cp, "kafka.tools.StorageTool", "random-uuid").Output()
	if err != nil {
		t.Fatalf("kafka-storage random-uuid: %v", err)
	}
	id := strings.TrimSpace(string(uuid[strings.LastIndexByte(strings.TrimSpace(string(uuid)), '\n')+1:]))
	if b, err := exec.Command("java", append([]string{"-cp", cp, "kafka.tools.StorageTool", "format", "-t", id, "-c", propsPath}, o.formatArgs...)...).CombinedOutput(); err != nil {
		t.Fatalf("kafka-storage format: %v\n%s", err, b)
	}
	log := &syncBuffer{}
	cmd := exec.Command("java", "-Xms256m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", cp, "kafka.Kafka", propsPath)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting Kafka: %v", err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("Kafka log:\n%s", log.String())
		}
	})
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr)}, o.clientOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		m, err := kadm.NewClient(cl).BrokerMetadata(ctx)
		cancel()
		if err == nil && len(m.Brokers) == 1 {
			return addr
		}
		select {
		case <-exited:
			t.Fatalf("Kafka exited at start:\n%s", log.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("Kafka did not come up on %s: %v\n%s", addr, err, log.String())
		}
		time.Sleep(250 * time.Millisecond)
	}
}
