package runtime

import (
	"context"
	"testing"
)

// A worker boolean reads "true"/"false" in any case and refuses anything
// else with Kafka's ConfigDef message for a BOOLEAN ("Invalid value … for
// configuration …: Expected value to be either true or false",
// org.apache.kafka.common.config.ConfigDef.parseType): a typo in
// embedded.kafka.sync.writes must not silently turn fsync off.
func TestWorkerConfigBool(t *testing.T) {
	for v, want := range map[string]bool{"true": true, "TRUE": true, " false ": false, "False": false} {
		got, err := WorkerConfig{"embedded.kafka.sync.writes": v}.Bool("embedded.kafka.sync.writes")
		if err != nil || got != want {
			t.Fatalf("%q: %v, %v; want %v", v, got, err, want)
		}
	}
	if got, err := (WorkerConfig{}).Bool("embedded.kafka.sync.writes"); err != nil || got {
		t.Fatalf("default: %v, %v; want false (workerDefaults)", got, err)
	}
	const msg = "Invalid value yes for configuration embedded.kafka.sync.writes: Expected value to be either true or false"
	if _, err := (WorkerConfig{"embedded.kafka.sync.writes": "yes"}).Bool("embedded.kafka.sync.writes"); err == nil || err.Error() != msg {
		t.Fatalf("yes: %v; want %q", err, msg)
	}
	w, err := StartWorker(context.Background(), WorkerConfig{"embedded.kafka.sync.writes": "1", "data.dir": t.TempDir(),
		"embedded.kafka.listener": "127.0.0.1:0", "listeners": "http://127.0.0.1:0", "schema.registry.listener": ""}, nil, nil)
	if err == nil {
		w.Close()
		t.Fatal("a worker started with embedded.kafka.sync.writes=1")
	}
	if err.Error() != "Invalid value 1 for configuration embedded.kafka.sync.writes: Expected value to be either true or false" {
		t.Fatalf("start: %v", err)
	}
}
