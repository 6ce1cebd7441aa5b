package measure

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/connectd/connectd/internal/testenv"
)

// StartKafkaConnect runs a real Kafka Connect 4.3 distributed worker with
// the real Debezium 3.6.1 PostgreSQL connector on its plugin.path (the
// Maven Central jars reference/connect/capture.sh fetches into
// reference/connect/target; scripts/setup.sh test fetches them), on
// data directory dir, against the Kafka at bootstrap, as a user runs it:
// the JVM options of Kafka's connect-distributed.sh (-Xms256M -Xmx2G, G1)
// and the JsonConverter with schemas. Its group.id and its config, offset
// and status topics are named after dir, as StartOn's, so a restart on
// the same dir finds its connectors again. It waits up to 3 minutes for
// the worker to have joined its group (GET /connectors answering 200).
// The Daemon's Registry is empty: the bench runs Debezium with JSON only.
func StartKafkaConnect(root, dir, bootstrap string) (*Daemon, error) {
	ref := filepath.Join(root, "reference/connect/target")
	if _, err := os.Stat(filepath.Join(ref, ".complete")); err != nil {
		return nil, fmt.Errorf("Kafka Connect and Debezium jars missing in %s (run `make setup`, or BUILD_ONLY=1 reference/connect/capture.sh): %w", ref, err)
	}
	restPort, _ := testenv.FreePort()
	d := &Daemon{REST: fmt.Sprintf("http://127.0.0.1:%d", restPort), Kafka: bootstrap, Dir: dir, done: make(chan struct{})}
	g := filepath.Base(dir)
	props := fmt.Sprintf(`bootstrap.servers=%s
group.id=%[2]s
key.converter=org.apache.kafka.connect.json.JsonConverter
value.converter=org.apache.kafka.connect.json.JsonConverter
config.storage.topic=%[2]s-configs
offset.storage.topic=%[2]s-offsets
status.storage.topic=%[2]s-status
config.storage.replication.factor=1
offset.storage.replication.factor=1
status.storage.replication.factor=1
offset.flush.interval.ms=1000
listeners=%[3]s
plugin.path=%[4]s
`, bootstrap, g, d.REST, filepath.Join(ref, "plugins"))
	propsPath := filepath.Join(dir, "connect-distributed.properties")
	if err := os.WriteFile(propsPath, []byte(props), 0o644); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(filepath.Join(dir, "connect.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	// KAFKA_HEAP_OPTS and KAFKA_JVM_PERFORMANCE_OPTS as connect-distributed.sh
	// and kafka-run-class.sh set them.
	d.Cmd = exec.Command("java", "-Xms256M", "-Xmx2G", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
		"-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-XX:MaxInlineLevel=15",
		"-Djava.awt.headless=true", "-cp", filepath.Join(ref, "lib", "*"), "org.apache.kafka.connect.cli.ConnectDistributed", propsPath)
	d.Cmd.Stdout, d.Cmd.Stderr = logf, logf
	if err := d.Cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() { d.Cmd.Wait(); logf.Close(); close(d.done) }()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-d.done:
			return nil, fmt.Errorf("Kafka Connect exited at start; see %s", filepath.Join(dir, "connect.log"))
		default:
		}
		if resp, err := http.Get(d.REST + "/connectors"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return d, nil
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	d.Stop()
	return nil, fmt.Errorf("Kafka Connect did not come up in 3 minutes; see %s", filepath.Join(dir, "connect.log"))
}
