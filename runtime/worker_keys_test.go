package runtime

import "testing"

// TestWorkerConfigDefDocumentsEveryDefault: every key with a runtime default
// is in the worker's ConfigDef (and so in docs/reference/worker.md) with that
// default, and every key there has a doc.
func TestWorkerConfigDefDocumentsEveryDefault(t *testing.T) {
	d := WorkerConfigDef()
	for k, v := range workerDefaults {
		key := d.Key(k)
		if key == nil {
			t.Errorf("worker default %s is not in WorkerConfigDef", k)
			continue
		}
		if key.Default == nil || *key.Default != v {
			t.Errorf("%s: documented default %v, runtime default %q", k, key.Default, v)
		}
	}
	for _, k := range d.Keys() {
		if k.Doc == "" || k.Group == "" {
			t.Errorf("%s has no doc or group", k.Name)
		}
	}
}

// TestUnknownWorkerKeys: a key connectd does not read is named (the worker
// WARNs it); worker keys and prefixed families are not.
func TestUnknownWorkerKeys(t *testing.T) {
	got := UnknownWorkerKeys(WorkerConfig{"bootstrap.servers": "k:9092", "plugin.path": "/opt", "producer.linger.ms": "5",
		"embedded.kafka.ssl.keystore.location": "/k", "config.providers.file.class": "x", "rest.advertised.host.name": "h",
		"value.converter.schemas.enable": "false", "dashboard.sample.interval.ms": "1000"})
	if len(got) != 2 || got[0] != "plugin.path" || got[1] != "rest.advertised.host.name" {
		t.Fatalf("UnknownWorkerKeys = %v, want [plugin.path rest.advertised.host.name]", got)
	}
}
