package measure

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/testenv"
)

// Kafka is a real Apache Kafka broker started by StartKafka.
type Kafka struct {
	Addr string // 127.0.0.1:port of its PLAINTEXT client listener
	Dir  string // its log.dirs parent; kafka.log is written there
	Cmd  *exec.Cmd
	done chan struct{}
}

// StartKafka runs Apache Kafka (KRaft, one combined broker and
// controller; the Maven Central jars of scripts/kafka.sh, run from the
// repository root root) in a temp dir on free loopback ports, with the
// JVM options of Kafka's own start scripts, as a user would run it; topics get one
// partition and replication factor 1. It waits up to 90 s for the broker
// to answer metadata requests, then warms it up (warmUp).
func StartKafka(root string) (*Kafka, error) {
	out, err := exec.Command("bash", filepath.Join(root, "scripts/kafka.sh")).Output()
	if err != nil {
		return nil, fmt.Errorf("scripts/kafka.sh (run `make setup`): %w", err)
	}
	cp := filepath.Join(strings.TrimSpace(string(out)), "*")
	dir, err := os.MkdirTemp("", "connectd-bench-kafka-")
	if err != nil {
		return nil, err
	}
	port, _ := testenv.FreePort()
	ctrl, _ := testenv.FreePort()
	k := &Kafka{Addr: fmt.Sprintf("127.0.0.1:%d", port), Dir: dir, done: make(chan struct{})}
	props := fmt.Sprintf(`process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:%[2]d
listeners=PLAINTEXT://127.0.0.1:%[1]d,CONTROLLER://127.0.0.1:%[2]d
advertised.listeners=PLAINTEXT://127.0.0.1:%[1]d
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=%[3]s
num.partitions=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
`, port, ctrl, filepath.Join(dir, "data"))
	propsPath := filepath.Join(dir, "server.properties")
	if err := os.WriteFile(propsPath, []byte(props), 0o644); err != nil {
		return nil, err
	}
	uuid, err := exec.Command("java", "-cp", cp, "kafka.tools.StorageTool", "random-uuid").Output()
	if err != nil {
		return nil, fmt.Errorf("kafka-storage random-uuid: %w", err)
	}
	lines := strings.Split(strings.TrimSpace(string(uuid)), "\n")
	id := strings.TrimSpace(lines[len(lines)-1])
	if b, err := exec.Command("java", "-cp", cp, "kafka.tools.StorageTool", "format", "-t", id, "-c", propsPath).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("kafka-storage format: %v\n%s", err, b)
	}
	logf, err := os.Create(filepath.Join(dir, "kafka.log"))
	if err != nil {
		return nil, err
	}
	// kafka-server-start.sh's heap and kafka-run-class.sh's
	// KAFKA_JVM_PERFORMANCE_OPTS: the broker as Kafka's scripts run it.
	k.Cmd = exec.Command("java", "-Xmx1G", "-Xms1G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
		"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15",
		"-Djava.awt.headless=true", "-cp", cp, "kafka.Kafka", propsPath)
	k.Cmd.Stdout, k.Cmd.Stderr = logf, logf
	if err := k.Cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() { k.Cmd.Wait(); logf.Close(); close(k.done) }()
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.Addr))
	if err != nil {
		k.Stop()
		return nil, err
	}
	defer cl.Close()
	deadline := time.Now().Add(90 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		m, err := kadm.NewClient(cl).BrokerMetadata(ctx)
		cancel()
		if err == nil && len(m.Brokers) == 1 {
			if err := k.warmUp(); err != nil {
				k.Stop()
				return nil, err
			}
			return k, nil
		}
		select {
		case <-k.done:
			return nil, fmt.Errorf("Kafka exited at start; see %s", filepath.Join(dir, "kafka.log"))
		default:
		}
		if time.Now().After(deadline) {
			k.Stop()
			return nil, fmt.Errorf("Kafka did not come up on %s: %v; see %s", k.Addr, err, filepath.Join(dir, "kafka.log"))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// CPU returns the broker process's user+system CPU time so far (as
// Daemon.CPU).
func (k *Kafka) CPU() time.Duration { return procCPU(k.Cmd.Process.Pid) }

// PeakRSS returns the broker's peak RSS in MiB (as Daemon.PeakRSS).
func (k *Kafka) PeakRSS() float64 { return procPeakRSS(k.Cmd.Process.Pid) }

// Stop kills the broker, waits for it to exit and removes its directory.
func (k *Kafka) Stop() {
	k.Cmd.Process.Signal(syscall.SIGKILL)
	<-k.done
	os.RemoveAll(k.Dir)
}

// warmUp produces 90,000 records of 3.5 KB (about a JsonConverter change
// event), half uncompressed and half in snappy and lz4 batches, so that
// the broker's JIT has compiled its produce path before the first
// measurement (a broker of a real cluster is long warm): without it the
// first run into a fresh broker was up to twice as slow as the next ones.
func (k *Kafka) warmUp() error {
	value := []byte(strings.Repeat(`{"schema":{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"}]},`, 40))
	for _, codec := range []kgo.CompressionCodec{kgo.NoCompression(), kgo.SnappyCompression(), kgo.Lz4Compression()} {
		cl, err := kgo.NewClient(kgo.SeedBrokers(k.Addr), kgo.AllowAutoTopicCreation(), kgo.ProducerBatchCompression(codec))
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		var perr error
		for i := 0; i < 30_000; i++ {
			cl.Produce(ctx, &kgo.Record{Topic: "bench-warmup", Key: []byte(fmt.Sprint(i)), Value: value}, func(_ *kgo.Record, err error) {
				if err != nil && perr == nil {
					perr = err
				}
			})
		}
		err = cl.Flush(ctx)
		cancel()
		cl.Close()
		if err != nil {
			return fmt.Errorf("warming up Kafka: %w", err)
		}
		if perr != nil {
			return fmt.Errorf("warming up Kafka: %w", perr)
		}
	}
	return nil
}
