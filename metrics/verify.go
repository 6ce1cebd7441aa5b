package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// verifyMetrics are the results of connectd verify (runtime/verify.go), per
// connector: the last verification's differences (missing + extra +
// different keys), whether it was consistent, and when it finished.
type verifyMetrics struct {
	differences *prometheus.GaugeVec
	consistent  *prometheus.GaugeVec
	finished    *prometheus.GaugeVec
}

func newVerifyMetrics() *verifyMetrics {
	return &verifyMetrics{
		differences: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "connectd_verify_differences",
			Help: "Keys that differed between the source and the topics in the last connectd verify of the connector (missing + extra + different)."}, []string{"connector"}),
		consistent: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "connectd_verify_consistent",
			Help: "1 when the last connectd verify of the connector found no difference, 0 when it found some or failed."}, []string{"connector"}),
		finished: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "connectd_verify_last_finished_timestamp_seconds",
			Help: "When the last connectd verify of the connector finished (Unix seconds)."}, []string{"connector"}),
	}
}

// Verified records the result of a verification of connector: state is
// CONSISTENT, DIFFERENT or FAILED.
func (r *Registry) Verified(connector, state string, differences int64, at time.Time) {
	if r == nil || r.verify == nil {
		return
	}
	r.verify.differences.WithLabelValues(connector).Set(float64(differences))
	ok := 0.0
	if state == "CONSISTENT" {
		ok = 1
	}
	r.verify.consistent.WithLabelValues(connector).Set(ok)
	r.verify.finished.WithLabelValues(connector).Set(float64(at.Unix()))
}
