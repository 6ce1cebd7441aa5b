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
//     worker, or a generation not above the writer's; connectd also
//     lets a write through when that worker is not a group member, see
//     safeWriteAllowedLocked). RUNNING, PAUSED, STOPPED and RESTARTING
//     are always written (put), as there.

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
// may write state for key, by the writing rule above, with one addition
// of connectd's: a later generation's status whose writer is not a
// member of the group in this worker's latest assignment does not block
// (a group whose generation started over, e.g. this worker's own earlier
// run under another REST address, or one whose members all left: Kafka
// forgets an empty group without offsets, and its generation restarts at
// 1). h.mu is held.
func (h *Herder) safeWriteAllowedLocked(key, state string, gen int) bool {
	if state != StateFailed && state != StateUnassigned {
		return true
	}
	cur, ok := h.statuses[key]
	if !ok || cur.WorkerID == h.workerID || cur.Generation <= gen {
		return true
	}
	return !h.isMemberLocked(cur.WorkerID)
}

// isMemberLocked tells whether workerID (host:port) runs a connector or
// task in the latest assignment. h.mu is held.
func (h *Herder) isMemberLocked(workerID string) bool {
	if h.asg == nil {
		return false
	}
	same := func(url string) bool {
		_, hostPort, ok := strings.Cut(url, "://")
		return ok && hostPort == workerID
	}
	for _, u := range h.asg.ConnOwners {
		if same(u) {
			return true
		}
	}
	for _, u := range h.asg.TaskOwners {
		if same(u) {
			return true
		}
	}
	return false
}
