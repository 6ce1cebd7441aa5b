package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// A restart requested on a worker that does not run the failed task
// reaches the worker that does, through a restart-connector-<c> record in
// the config topic (Kafka Connect's KIP-745 format: {"include-tasks":…,
// "only-failed":…}): two workers in one group on the embedded broker.
func TestRestartReachesTheOwningWorker(t *testing.T) {
	kafka := freeAddr(t)
	shared := &counterShared{startErr: errors.New("database is down")}
	group := []string{"group.id", "restart-test", "heartbeat.interval.ms", "300", "session.timeout.ms", "6000"}
	wa := startTestWorker(t, t.TempDir(), kafka, shared, append([]string{"listeners", "http://127.0.0.1:18091"}, group...)...)
	defer wa.Close()
	wb := startTestWorker(t, t.TempDir(), kafka, shared, append([]string{"listeners", "http://127.0.0.1:18092", "bootstrap.servers", kafka}, group...)...)
	defer wb.Close()
	ctx := context.Background()
	if _, err := wa.Herder.CreateConnector(ctx, "rs", map[string]string{"connector.class": "test.CounterSource", "topic": "restarted", "count": "7"}); err != nil {
		t.Fatal(err)
	}
	var owner string
	waitFor(t, func() bool {
		st, _ := wb.Herder.ConnectorStatus("rs")
		if len(st.Tasks) == 1 && st.Tasks[0].State == StateFailed {
			owner = st.Tasks[0].WorkerID
			return true
		}
		return false
	})
	other := wa
	if owner == wa.Herder.WorkerID() {
		other = wb
	}
	if owner == other.Herder.WorkerID() || (owner != wa.Herder.WorkerID() && owner != wb.Herder.WorkerID()) {
		t.Fatalf("task owner %q", owner)
	}
	// The other worker has read the FAILED status too (its status topic
	// reader may lag): it decides what onlyFailed restarts.
	waitFor(t, func() bool {
		st, _ := other.Herder.ConnectorStatus("rs")
		return len(st.Tasks) == 1 && st.Tasks[0].State == StateFailed
	})
	shared.mu.Lock()
	shared.startErr = nil
	shared.mu.Unlock()

	body, err := other.Herder.RestartConnectorAndTasks(ctx, "rs", true, true)
	if err != nil {
		t.Fatal(err)
	}
	// The 202 body: the RUNNING connector stays, the FAILED task restarts.
	if body.Connector.State != StateRunning || len(body.Tasks) != 1 || body.Tasks[0].State != StateRestarting {
		t.Fatalf("restart response %+v", body)
	}
	waitFor(t, func() bool {
		st, _ := other.Herder.ConnectorStatus("rs")
		return len(st.Tasks) == 1 && st.Tasks[0].State == StateRunning && st.Tasks[0].WorkerID == owner
	})
	consumeAll(t, kafka, "restarted", 7)

	// The record in the config topic has Kafka Connect's key and value.
	var found bool
	for _, r := range readTopic(t, kafka, "connect-configs") {
		if string(r.Key) == "restart-connector-rs" {
			var v map[string]any
			if err := json.Unmarshal(r.Value, &v); err != nil || v["include-tasks"] != true || v["only-failed"] != true || len(v) != 2 {
				t.Errorf("restart record %s: %v", r.Value, err)
			}
			found = true
		}
	}
	if !found {
		t.Error("no restart-connector-rs record in the config topic")
	}
}
