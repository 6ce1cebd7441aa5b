package integration

import "testing"

// DESIGN.md invariant 4 with exactly.once.source.support=enabled (KIP-618)
// against the EMBEDDED broker, SIGKILLed five times together with the
// worker: a read_committed consumer sees every row's change exactly once.
// Each kill can leave a transaction open or half-ended and, rarely, a
// segment index cut short; the broker's start-up recovery
// (broker/recovery.go, broker/index.go) ends the former
// as Kafka's coordinator would and repairs the latter. It was quarantined
// after one CI run saw "6507 rows, 6516 events, duplicated: [3375×2 …
// 5674×2]": transactions aborted at start were visible read_committed
// because an index cut by an earlier kill had misaligned kfake's
// in-transaction flags (reproduced by
// broker.TestEmbeddedBrokerRepairsIndexCutByCrash).
func TestExactlyOnceSourceSurvivesSIGKILL(t *testing.T) { testExactlyOnce(t, "", 5) }
