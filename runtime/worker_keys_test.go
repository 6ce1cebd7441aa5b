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
