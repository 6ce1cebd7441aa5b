package runtime

import (
	"context"
	"encoding/json"
)

// Restart requests across workers (Kafka Connect KIP-745): the worker that
// serves POST /connectors/{c}/restart writes a restart-connector-<c>
// record {"include-tasks": bool, "only-failed": bool} to the config topic
// (KafkaConfigBackingStore.putRestartRequest); every worker reading it
// restarts the parts of the connector it runs, choosing them from the
// statuses as the request says (DistributedHerder.processRestartRequests,
// buildRestartPlan). Requests already in the topic when a worker starts
// are not acted on.

const restartRecordPrefix = "restart-connector-"

type restartRequestValue struct {
	IncludeTasks bool `json:"include-tasks"`
	OnlyFailed   bool `json:"only-failed"`
}

// restartPlan returns what a restart request restarts, given the current
// statuses: the connector unless onlyFailed and it is not FAILED; with
// includeTasks the tasks (only the FAILED ones with onlyFailed).
func restartPlan(st ConnectorStatus, includeTasks, onlyFailed bool) (conn bool, tasks []int) {
	conn = !onlyFailed || st.Connector.State == StateFailed
	if includeTasks {
		for _, t := range st.Tasks {
			if !onlyFailed || t.State == StateFailed {
				tasks = append(tasks, t.ID)
			}
		}
	}
	return conn, tasks
}

// writeRestartRequest writes name's restart record and reads the config
// topic up to it; this worker will skip the record when it reads it back,
// since it acts on its share itself.
func (h *Herder) writeRestartRequest(ctx context.Context, name string, includeTasks, onlyFailed bool) error {
	h.mu.Lock()
	if h.selfRestarts == nil {
		h.selfRestarts = map[string]int{}
	}
	h.selfRestarts[name]++
	h.mu.Unlock()
	rec := []byte(restartRecordPrefix + name)
	if err := h.configLog.Send(ctx, rec, mustJSON(restartRequestValue{IncludeTasks: includeTasks, OnlyFailed: onlyFailed})); err != nil {
		h.mu.Lock()
		h.selfRestarts[name]--
		h.mu.Unlock()
		return err
	}
	return h.configLog.ReadToEnd(ctx)
}

// applyRestartRecord handles a restart record read from the config topic.
// Callers hold h.mu.
func (h *Herder) applyRestartRecord(name string, value []byte) {
	if !h.configStarted || value == nil {
		return
	}
	if h.selfRestarts[name] > 0 {
		h.selfRestarts[name]--
		return
	}
	var v restartRequestValue
	if json.Unmarshal(value, &v) != nil {
		return
	}
	go func() {
		st, err := h.ConnectorStatus(name)
		if err != nil {
			return
		}
		h.restartOwned(name, st, v.IncludeTasks, v.OnlyFailed)
	}()
}

// restartOwned restarts the parts of name's restart plan (from st) that
// the group assigned to this worker: RESTARTING is written for each at
// once, the restart itself runs in the background (the status becomes
// RUNNING, PAUSED or FAILED again as the task starts).
func (h *Herder) restartOwned(name string, st ConnectorStatus, includeTasks, onlyFailed bool) {
	restartConn, tasks := restartPlan(st, includeTasks, onlyFailed)
	h.mu.Lock()
	ownConn, mine := h.asg.owns(name)
	h.mu.Unlock()
	restartConn = restartConn && ownConn
	var local []int
	for _, t := range tasks {
		if mine[t] {
			local = append(local, t)
		}
	}
	if restartConn {
		h.putStatus(connectorStatusKey(name), StateRestarting, "")
	}
	for _, t := range local {
		h.putStatus(taskStatusKey(TaskID{name, t}), StateRestarting, "")
	}
	if restartConn || len(local) > 0 {
		go h.doRestart(name, restartConn, local)
	}
}
