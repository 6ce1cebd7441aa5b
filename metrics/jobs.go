package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// JobState is one stream processing job (a SQL job or a JSON job spec) as
// the job metrics show it: Flink's job and checkpoint metrics under
// connectd's names.
type JobState struct {
	ID    string
	Kind  string // "sql" or "json"
	State string // RUNNING, FAILED, RESTARTING, …
	// Restarts counts the job's restarts after a failure.
	Restarts int
	// Lag is the records its sources have not read yet (Kafka's consumer
	// lag summed over its input partitions); StateEntries its keyed state.
	Lag          int64
	StateEntries int
	// RecordsIn counts the records its sources emitted in the current run;
	// LateDropped and LateSideOutput the late records dropped and sent to
	// a late side output.
	RecordsIn, LateDropped, LateSideOutput int64
	// Checkpoints counts completed checkpoints of the current run,
	// SlowCheckpoints those longer than the interval; LastCheckpoint is
	// when the last one completed (zero before the first) and
	// LastCheckpointDuration how long it took.
	Checkpoints, SlowCheckpoints int64
	LastCheckpoint               time.Time
	LastCheckpointDuration       time.Duration
}

// JobsFunc lists the worker's jobs.
type JobsFunc func() []JobState

// SetJobs gives the jobs the connectd_job_* metrics describe.
func (r *Registry) SetJobs(f JobsFunc) {
	r.mu.Lock()
	r.jobs = f
	r.mu.Unlock()
}

func (r *Registry) jobStates() []JobState {
	r.mu.Lock()
	f := r.jobs
	r.mu.Unlock()
	if f == nil {
		return nil
	}
	return f()
}

var (
	jl = []string{"job", "kind"}

	dJobStatus    = desc("connectd_job_status", "1 for the stream processing job's current state (RUNNING, RESTARTING, FAILED, …), as Flink's job status.", "job", "kind", "state")
	dJobRestarts  = desc("connectd_job_restarts_total", "Restarts of the job after a failure: Flink's numRestarts.", jl...)
	dJobLag       = desc("connectd_job_records_lag", "Records the job's sources have not read yet, summed over its input partitions: Flink's Kafka source records-lag (Kafka's consumer lag).", jl...)
	dJobState     = desc("connectd_job_state_entries", "Keyed-state entries of the job (join sides, groups, windows, rows kept for retractions).", jl...)
	dJobIn        = desc("connectd_job_records_in_total", "Records the job's sources emitted in its current run: Flink's numRecordsIn.", jl...)
	dJobLate      = desc("connectd_job_late_records_total", "Records later than a window's allowed lateness, by disposition (dropped: Flink's numLateRecordsDropped; side_output: sent to the late side output).", "job", "kind", "disposition")
	dJobCkpts     = desc("connectd_job_checkpoints_total", "Checkpoints the job completed in its current run: Flink's numberOfCompletedCheckpoints.", jl...)
	dJobSlowCkpts = desc("connectd_job_slow_checkpoints_total", "Checkpoints that took longer than the checkpoint interval.", jl...)
	dJobCkptDur   = desc("connectd_job_last_checkpoint_duration_seconds", "How long the job's last checkpoint took: Flink's lastCheckpointDuration / 1000. Absent before the first.", jl...)
	dJobCkptAge   = desc("connectd_job_last_checkpoint_age_seconds", "Time since the job's last completed checkpoint. Absent before the first; growing while checkpoints fail.", jl...)
)

var jobDescs = []*prometheus.Desc{dJobStatus, dJobRestarts, dJobLag, dJobState, dJobIn, dJobLate, dJobCkpts, dJobSlowCkpts, dJobCkptDur, dJobCkptAge}

// collectJobs writes the connectd_job_* metrics of every job.
func (c collector) collectJobs(ch chan<- prometheus.Metric) {
	now := c.r.now()
	for _, j := range c.r.jobStates() {
		lv := []string{j.ID, j.Kind}
		counter := func(d *prometheus.Desc, v int64, extra ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), append(lv[:2:2], extra...)...)
		}
		gauge := func(d *prometheus.Desc, v float64) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
		}
		ch <- prometheus.MustNewConstMetric(dJobStatus, prometheus.GaugeValue, 1, j.ID, j.Kind, j.State)
		counter(dJobRestarts, int64(j.Restarts))
		gauge(dJobLag, float64(j.Lag))
		gauge(dJobState, float64(j.StateEntries))
		counter(dJobIn, j.RecordsIn)
		counter(dJobLate, j.LateDropped, "dropped")
		counter(dJobLate, j.LateSideOutput, "side_output")
		counter(dJobCkpts, j.Checkpoints)
		counter(dJobSlowCkpts, j.SlowCheckpoints)
		if !j.LastCheckpoint.IsZero() {
			gauge(dJobCkptDur, j.LastCheckpointDuration.Seconds())
			gauge(dJobCkptAge, now.Sub(j.LastCheckpoint).Seconds())
		}
	}
}
