package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// Each job's state, lag, state size, records, late records and
// checkpoints are on /metrics (issue 19's job dashboard); the checkpoint
// age grows from the last completed one, and a job before its first
// checkpoint has no age or duration.
func TestJobMetrics(t *testing.T) {
	now := time.Date(2026, 12, 4, 3, 0, 0, 0, time.UTC)
	r := New(WithClock(func() time.Time { return now }))
	r.SetJobs(func() []JobState {
		return []JobState{
			{ID: "totals", Kind: "sql", State: "RUNNING", Restarts: 2, Lag: 1500, StateEntries: 42, RecordsIn: 1000,
				LateDropped: 3, LateSideOutput: 4, Checkpoints: 7, SlowCheckpoints: 1,
				LastCheckpoint: now.Add(-90 * time.Second), LastCheckpointDuration: 250 * time.Millisecond},
			{ID: "qty", Kind: "json", State: "RESTARTING"},
		}
	})
	want := `
# HELP connectd_job_last_checkpoint_age_seconds Time since the job's last completed checkpoint. Absent before the first; growing while checkpoints fail.
# TYPE connectd_job_last_checkpoint_age_seconds gauge
connectd_job_last_checkpoint_age_seconds{job="totals",kind="sql"} 90
# HELP connectd_job_records_lag Records the job's sources have not read yet, summed over its input partitions: Flink's Kafka source records-lag (Kafka's consumer lag).
# TYPE connectd_job_records_lag gauge
connectd_job_records_lag{job="qty",kind="json"} 0
connectd_job_records_lag{job="totals",kind="sql"} 1500
# HELP connectd_job_status 1 for the stream processing job's current state (RUNNING, RESTARTING, FAILED, …), as Flink's job status.
# TYPE connectd_job_status gauge
connectd_job_status{job="qty",kind="json",state="RESTARTING"} 1
connectd_job_status{job="totals",kind="sql",state="RUNNING"} 1
# HELP connectd_job_late_records_total Records later than a window's allowed lateness, by disposition (dropped: Flink's numLateRecordsDropped; side_output: sent to the late side output).
# TYPE connectd_job_late_records_total counter
connectd_job_late_records_total{disposition="dropped",job="qty",kind="json"} 0
connectd_job_late_records_total{disposition="dropped",job="totals",kind="sql"} 3
connectd_job_late_records_total{disposition="side_output",job="qty",kind="json"} 0
connectd_job_late_records_total{disposition="side_output",job="totals",kind="sql"} 4
`
	if err := testutil.GatherAndCompare(r.Gatherer(), strings.NewReader(want),
		"connectd_job_last_checkpoint_age_seconds", "connectd_job_records_lag", "connectd_job_status", "connectd_job_late_records_total"); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]float64{"connectd_job_restarts_total": 2, "connectd_job_state_entries": 42, "connectd_job_records_in_total": 1000,
		"connectd_job_checkpoints_total": 7, "connectd_job_slow_checkpoints_total": 1, "connectd_job_last_checkpoint_duration_seconds": 0.25} {
		mfs, err := r.Gatherer().Gather()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, mf := range mfs {
			if mf.GetName() != name {
				continue
			}
			for _, m := range mf.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "job" && l.GetValue() == "totals" {
						found = true
						got := m.GetGauge().GetValue() + m.GetCounter().GetValue()
						if got != v {
							t.Errorf("%s{job=totals} = %v, want %v", name, got, v)
						}
					}
				}
			}
		}
		if !found {
			t.Errorf("%s{job=totals} missing", name)
		}
	}
}
