package integration

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// Non-Java clients on the embedded broker (issue 18): librdkafka (Python
// confluent-kafka) and the pure-Python kafka-python run the same
// operations (testdata/python_clients.py: admin create/describe/delete,
// idempotent and transactional producers, a read_committed group
// consumer, group list/describe/offsets/delete, watermarks) against the
// embedded broker and a real Kafka 4.3; what they print must be the same.
// scripts/setup.sh installs both (PyPI).
func TestPythonClientsSameOnEmbeddedBrokerAndKafka(t *testing.T) {
	embedded := startEmbeddedBrokerForJava(t)
	kafka := startKafkaLikeEmbedded(t)
	run := func(t *testing.T, client, addr, topic string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "python3", "testdata/python_clients.py", client, addr, topic)
		var stderr strings.Builder
		cmd.Stderr = &stderr // the clients' logs
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s against %s: %v\n%s\n%s", client, addr, err, out, stderr.String())
		}
		return string(out)
	}
	for _, client := range []string{"confluent", "kafka-python"} {
		t.Run(client, func(t *testing.T) {
			topic := "py-" + client
			got, want := run(t, client, embedded, topic), run(t, client, kafka, topic)
			if got != want {
				t.Errorf("%s: the embedded broker's answers differ from Kafka 4.3's\nembedded:\n%s\nkafka:\n%s", client, got, want)
			}
			for _, line := range []string{"created " + topic, "config cleanup.policy compact retention.ms 86400000", "partitions 3",
				"t1=committed", "groups ['" + topic + "-group']", "deleted " + topic} {
				if !strings.Contains(got, line) {
					t.Errorf("%s on the embedded broker: no %q in\n%s", client, line, got)
				}
			}
			if strings.Contains(got, "aborted") {
				t.Errorf("%s on the embedded broker: read_committed consumer read the aborted record:\n%s", client, got)
			}
			t.Logf("%s: %d lines the same on the embedded broker and Kafka 4.3", client, strings.Count(got, "\n"))
		})
	}
}
