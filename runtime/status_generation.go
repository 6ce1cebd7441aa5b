package runtime

import "strings"

// Generation-aware status records, as Kafka Connect 4's
// KafkaStatusBackingStore. Every status record carries the group
// generation its writer had (putStatus); two rules use it so that a
// worker that lost its work (a zombie, or one slow to see a rebalance)
// cannot hide the status the new owner wrote:
//
//   - Reading (readTaskStatus): an UNASSIGNED task record is ignored when
//     the task's known status is RUNNING from the same or a later
//     generation ("Ignoring stale status … in favour of more upto date
//     status").
//   - Writing (putSafe, used for FAILED and UNASSIGNED: the statuses a
//     worker writes as it fails or lets go of work): the record is not
//     written when the known status was written by another worker in a
//     later generation (CacheEntry.canWriteSafely: no status, the same
//     worker, or a generation not above the writer's). RUNNING, PAUSED,
//     STOPPED and RESTARTING are always written (put), as there.

// staleStatusLocked tells whether the record in for key is stale against
// the status known now, by the reading rule above. h.mu is held.
func (h *Herder) staleStatusLocked(key string, in Status) bool {
	if !strings.HasPrefix(key, "status-task-") || in.State != StateUnassigned {
		return false
	}
	cur, ok := h.statuses[key]
	return ok && cur.State == StateRunning && cur.Generation >= in.Generation
}

// safeWriteAllowedLocked tells whether this worker, in generation gen,
// may write state for key, by the writing rule above. h.mu is held.
func (h *Herder) safeWriteAllowedLocked(key, state string, gen int) bool {
	if state != StateFailed && state != StateUnassigned {
		return true
	}
	cur, ok := h.statuses[key]
	return !ok || cur.WorkerID == h.workerID || cur.Generation <= gen
}
