package runtime

import (
	"strings"
	"testing"
)

// The dashboard.* worker properties are read into the registry's
// thresholds; a bad value is rejected naming its key.
func TestNewMetricsConfig(t *testing.T) {
	cfg := WorkerConfig{ConfigLagThresholdBytes: "1024", ConfigSampleIntervalMs: "250"}
	r, err := newMetrics(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Summary().Thresholds.LagBytes; got != 1024 {
		t.Fatalf("lag threshold %d", got)
	}
	for _, key := range []string{ConfigLagThresholdBytes, ConfigLagThresholdMs, ConfigLagThresholdEvents, ConfigLagGrowthMs, ConfigSampleIntervalMs} {
		_, err := newMetrics(WorkerConfig{key: "-3"})
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=-3: %v", key, err)
		}
	}
}
