package runtime

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/kafkalog"
	"github.com/connectd/connectd/offsets"
)

// ---- connector configs: PUT/PATCH /connectors/{c}/config ----

// PutConnectorConfig creates name with cfg, or (with allowReplace) replaces
// its config, as Kafka Connect's DistributedHerder.putConnectorConfig:
// validation first (the same ConfigInfos as the validate endpoint), then the
// existence check. A new connector starts in initialState (STARTED when
// ""). Unless the connector is STOPPED, new task configs are written with
// the config, so running tasks restart with it. created reports whether the
// connector is new. Errors: ErrAlreadyExists, *ConfigInvalidError,
// *BadRequestError.
func (h *Herder) PutConnectorConfig(ctx context.Context, name string, cfg map[string]string, allowReplace bool, initialState string) (info ConnectorInfo, created bool, err error) {
	if strings.TrimSpace(name) == "" {
		return ConnectorInfo{}, false, &BadRequestError{Msg: "Connector name must not be empty"}
	}
	cfg = withName(cfg, name)
	if err := h.validateForWrite(cfg); err != nil {
		return ConnectorInfo{}, false, err
	}
	h.mu.Lock()
	st, exists := h.connectors[name]
	exists = exists && st.config != nil
	target := TargetStarted
	if exists {
		target = st.target
	}
	h.mu.Unlock()
	if exists && !allowReplace {
		return ConnectorInfo{}, false, fmt.Errorf("Connector %s already exists: %w", name, ErrAlreadyExists)
	}
	if !exists && initialState != "" {
		target = initialState
	}
	recs := []kafkalog.Record{{Key: []byte("connector-" + name), Value: mustJSON(map[string]any{"properties": cfg})}}
	if !exists {
		recs = append(recs, targetStateRecord(name, target))
	}
	if target != TargetStopped {
		tasks, err := h.taskConfigRecords(name, cfg)
		if err != nil {
			return ConnectorInfo{}, false, err
		}
		recs = append(recs, tasks...)
	}
	if err := h.writeConfig(ctx, recs); err != nil {
		return ConnectorInfo{}, false, err
	}
	info, err = h.ConnectorInfo(name)
	return info, !exists, err
}

// PatchConnectorConfig merges patch into name's config (a nil value removes
// the key, as ConnectUtils.patchConfig) and writes the result as
// PutConnectorConfig does. Errors: *NotFoundError, and PutConnectorConfig's.
func (h *Herder) PatchConnectorConfig(ctx context.Context, name string, patch map[string]*string) (ConnectorInfo, error) {
	info, err := h.ConnectorInfo(name)
	if err != nil {
		return ConnectorInfo{}, err
	}
	cfg := make(map[string]string, len(info.Config))
	for k, v := range info.Config {
		cfg[k] = v
	}
	for k, v := range patch {
		if v == nil {
			delete(cfg, k)
		} else {
			cfg[k] = *v
		}
	}
	info, _, err = h.PutConnectorConfig(ctx, name, cfg, true, "")
	return info, err
}

// taskConfigRecords asks the connector for its task configs and returns
// the task-<name>-<i> records followed by commit-<name>
// (KafkaConfigBackingStore.putTaskConfigs).
func (h *Herder) taskConfigRecords(name string, cfg map[string]string) ([]kafkalog.Record, error) {
	factory, _, _, ok := h.plugins.Connector(cfg["connector.class"])
	if !ok {
		return nil, &BadRequestError{Msg: "Failed to find any class that implements Connector and which name matches " + cfg["connector.class"]}
	}
	maxTasks := 1
	if v, ok := cfg["tasks.max"]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 1 {
			return nil, &ConfigInvalidError{Errors: []connect.ConfigError{{Key: "tasks.max", Message: fmt.Sprintf("Invalid value %s for configuration tasks.max: Value must be at least 1", v)}}}
		}
		maxTasks = n
	}
	// The connector splits the resolved config; the secrets are put back
	// as variables before the task configs are written (config providers).
	resolved, err := h.resolveConfig(cfg)
	if err != nil {
		return nil, err
	}
	taskCfgs, err := factory().TaskConfigs(resolved, maxTasks)
	if err != nil {
		return nil, err
	}
	taskCfgs = ReverseTransform(cfg, taskCfgs)
	var recs []kafkalog.Record
	for i, tc := range taskCfgs {
		recs = append(recs, kafkalog.Record{Key: []byte(fmt.Sprintf("task-%s-%d", name, i)), Value: mustJSON(map[string]any{"properties": tc})})
	}
	return append(recs, commitRecord(name, len(taskCfgs))), nil
}

func commitRecord(name string, tasks int) kafkalog.Record {
	return kafkalog.Record{Key: []byte("commit-" + name), Value: mustJSON(map[string]any{"tasks": tasks})}
}

// targetStateRecord is KafkaConfigBackingStore.putTargetState's record:
// "state" holds PAUSED for STOPPED, for workers older than KIP-875.
func targetStateRecord(name, target string) kafkalog.Record {
	v1 := target
	if target == TargetStopped {
		v1 = TargetPaused
	}
	return kafkalog.Record{Key: []byte("target-state-" + name), Value: mustJSON(map[string]any{"state": v1, "state.v2": target})}
}

func (h *Herder) writeConfig(ctx context.Context, recs []kafkalog.Record) error {
	if err := h.configLog.SendBatch(ctx, recs); err != nil {
		return err
	}
	return h.configLog.ReadToEnd(ctx)
}

// ---- target states: PUT /connectors/{c}/pause, /resume, /stop ----

func (h *Herder) snapshot(name string) (cfg map[string]string, target string, taskCount int, ok bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st, exists := h.connectors[name]
	if !exists || st.config == nil {
		return nil, "", 0, false
	}
	return st.config, st.target, st.taskCount, true
}

// PauseConnector writes target state PAUSED: tasks stay started but stop
// polling, statuses become PAUSED (AbstractHerder.pauseConnector). A
// STOPPED connector gets task configs again, its tasks start paused.
// Errors: *NotFoundError "Unknown connector <c>".
func (h *Herder) PauseConnector(ctx context.Context, name string) error {
	return h.setTarget(ctx, name, TargetPaused)
}

// ResumeConnector writes target state STARTED (AbstractHerder.resumeConnector);
// a STOPPED connector's tasks are configured again from its config.
func (h *Herder) ResumeConnector(ctx context.Context, name string) error {
	return h.setTarget(ctx, name, TargetStarted)
}

// StopConnector stops name's tasks and empties its task configs, then
// writes target state STOPPED (DistributedHerder.stopConnector, KIP-875).
func (h *Herder) StopConnector(ctx context.Context, name string) error {
	return h.setTarget(ctx, name, TargetStopped)
}

func (h *Herder) setTarget(ctx context.Context, name, target string) error {
	cfg, cur, taskCount, ok := h.snapshot(name)
	if !ok {
		return &NotFoundError{Connector: name, Msg: "Unknown connector " + name}
	}
	var recs []kafkalog.Record
	switch {
	case target == TargetStopped:
		// Task configs first: if we fail in between, a RUNNING connector
		// with zero tasks is healthy (DistributedHerder.stopConnector).
		recs = append(recs, commitRecord(name, 0))
	case cur == TargetStopped || taskCount <= 0:
		tasks, err := h.taskConfigRecords(name, cfg)
		if err != nil {
			return err
		}
		recs = append(recs, tasks...)
	}
	recs = append(recs, targetStateRecord(name, target))
	if err := h.writeConfig(ctx, recs); err != nil {
		return err
	}
	if target == TargetStopped {
		// Offsets may be altered as soon as the connector reads STOPPED:
		// make sure its tasks flushed their last offsets first.
		h.stopConnector(name)
	}
	return nil
}

// TargetState returns name's target state (STARTED, PAUSED, STOPPED).
func (h *Herder) TargetState(name string) (string, error) {
	_, t, _, ok := h.snapshot(name)
	if !ok {
		return "", &NotFoundError{Connector: name}
	}
	return t, nil
}

// ---- restarts ----

// RestartConnectorAndTasks restarts name as Kafka Connect's
// restartConnectorAndTasks with a RestartRequest(onlyFailed, includeTasks):
// the connector when !onlyFailed or it FAILED, and with includeTasks the
// tasks that (with onlyFailed) FAILED, wherever they run. It writes a
// restart-connector-<name> record to the config topic (restart.go) so
// that every worker restarts its share, restarts this worker's share at
// once, and returns the status with RESTARTING for each restarted part
// (the 202 body). Errors: *NotFoundError "Unknown connector: <c>".
func (h *Herder) RestartConnectorAndTasks(ctx context.Context, name string, includeTasks, onlyFailed bool) (ConnectorStatus, error) {
	if _, _, _, ok := h.snapshot(name); !ok {
		return ConnectorStatus{}, &NotFoundError{Connector: name, Msg: "Unknown connector: " + name}
	}
	st, err := h.ConnectorStatus(name)
	if err != nil {
		return ConnectorStatus{}, err
	}
	before := st
	before.Tasks = append([]TaskStatus(nil), st.Tasks...)
	restartConn, tasks := restartPlan(st, includeTasks, onlyFailed)
	planned := map[int]bool{}
	for _, t := range tasks {
		planned[t] = true
	}
	for i, t := range st.Tasks {
		if planned[t.ID] {
			st.Tasks[i].State, st.Tasks[i].Trace = StateRestarting, ""
		}
	}
	if restartConn {
		st.Connector.State, st.Connector.Trace = StateRestarting, ""
	}
	if err := h.writeRestartRequest(ctx, name, includeTasks, onlyFailed); err != nil {
		return ConnectorStatus{}, err
	}
	h.restartOwned(name, before, includeTasks, onlyFailed)
	return st, nil
}

// RestartConnectorOnly restarts the connector instance alone (POST
// /connectors/{c}/restart without parameters), on the worker that runs
// it. Errors: *NotFoundError.
func (h *Herder) RestartConnectorOnly(ctx context.Context, name string) error {
	_, err := h.RestartConnectorAndTasks(ctx, name, false, false)
	return err
}

func (h *Herder) doRestart(name string, connector bool, tasks []int) {
	h.mu.Lock()
	rc := h.running[name]
	h.mu.Unlock()
	if rc == nil || rc.conn == nil {
		// Not running (or the class was missing): start from scratch.
		h.stopConnector(name)
		h.mu.Lock()
		h.enqueue(name)
		h.mu.Unlock()
		return
	}
	for _, t := range tasks {
		_ = h.restartTask(name, t)
	}
	if connector && rc.ownsConn {
		_, target, _, _ := h.snapshot(name)
		state := StateRunning
		switch target {
		case TargetPaused:
			state = StatePaused
		case TargetStopped:
			state = StateStopped
		}
		h.putStatus(connectorStatusKey(name), state, "")
	}
}

// RestartTask stops task id and starts it again with its config
// (DistributedHerder.restartTask). Errors: *NotFoundError
// "Unknown connector: <c>" or "Unknown task: <c>-<n>".
func (h *Herder) RestartTask(ctx context.Context, id TaskID) error {
	_, _, count, ok := h.snapshot(id.Connector)
	if !ok {
		return &NotFoundError{Connector: id.Connector, Msg: "Unknown connector: " + id.Connector}
	}
	if id.Task < 0 || id.Task >= count {
		return &NotFoundError{Connector: id.Connector, Msg: "Unknown task: " + id.String()}
	}
	return h.restartTask(id.Connector, id.Task)
}

func (h *Herder) restartTask(name string, task int) error {
	h.mu.Lock()
	rc := h.running[name]
	var rt *runningTask
	if rc != nil {
		for _, t := range rc.tasks {
			if t.id.Task == task {
				rt = t
			}
		}
	}
	h.mu.Unlock()
	if rc == nil || rc.conn == nil || rt == nil {
		h.mu.Lock()
		h.enqueue(name)
		h.mu.Unlock()
		return nil
	}
	rt.cancel()
	<-rt.done
	h.startTask(rc, rt.id, rc.conn, rt.cfg)
	return nil
}

// TaskStatus returns one task's status (AbstractHerder.taskStatus).
// Errors: *NotFoundError "No status found for task <c>-<n>".
func (h *Herder) TaskStatus(id TaskID) (TaskStatus, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.statuses[taskStatusKey(id)]
	if !ok {
		return TaskStatus{}, &NotFoundError{Connector: id.Connector, Msg: "No status found for task " + id.String()}
	}
	return TaskStatus{ID: id.Task, Status: s}, nil
}

// TaskConfigs returns the committed config of each of name's tasks.
func (h *Herder) TaskConfigs(name string) ([]map[string]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st, ok := h.connectors[name]
	if !ok || st.config == nil {
		return nil, &NotFoundError{Connector: name}
	}
	out := []map[string]string{}
	for i := 0; i < st.taskCount; i++ {
		out = append(out, st.taskConfigs[i])
	}
	return out, nil
}

// ---- offsets (KIP-875) ----

// ConnectorOffsets returns every source partition of name with its offset
// from the offsets topic, sorted by partition JSON. Errors: *NotFoundError.
func (h *Herder) ConnectorOffsets(ctx context.Context, name string) ([]connect.PartitionOffset, error) {
	cfg, _, _, ok := h.snapshot(name)
	if !ok {
		return nil, &NotFoundError{Connector: name}
	}
	if _, _, sink, _ := h.plugins.Connector(cfg["connector.class"]); sink {
		return h.sinkConnectorOffsets(ctx, name) // sink_herder.go
	}
	if err := h.store.ReadToEnd(ctx); err != nil {
		return nil, err
	}
	es := h.store.Partitions(name)
	out := make([]connect.PartitionOffset, 0, len(es))
	for _, e := range es {
		out = append(out, connect.PartitionOffset{Partition: e.Partition, Offset: e.Offset})
	}
	sort.Slice(out, func(i, j int) bool { return partitionKey(out[i].Partition) < partitionKey(out[j].Partition) })
	return out, nil
}

// Messages of Worker.modifySourceConnectorOffsets for a connector that does
// not manage its offsets itself (SourceConnector.alterOffsets returns false)
// and for one that does.
const (
	msgOffsetsAltered       = "The Connect framework-managed offsets for this connector have been altered successfully. However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses."
	msgOffsetsAlteredByConn = "The offsets for this connector have been altered successfully"
	msgOffsetsReset         = "The Connect framework-managed offsets for this connector have been reset successfully. However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses."
	msgOffsetsResetByConn   = "The offsets for this connector have been reset successfully"
)

// AlterConnectorOffsets writes offsets (a nil Offset deletes the
// partition's) for a STOPPED connector; its tasks read them when they start
// again. Errors: *NotFoundError, *BadRequestError when not STOPPED.
func (h *Herder) AlterConnectorOffsets(ctx context.Context, name string, offs []connect.PartitionOffset) (string, error) {
	for _, o := range offs {
		if o.Partition == nil {
			return "", &BadRequestError{Msg: "Source partitions may not be null"}
		}
	}
	return h.modifyOffsets(ctx, name, offs, false)
}

// ResetConnectorOffsets deletes every offset of a STOPPED connector (a
// tombstone per source partition), so that it starts over (a Debezium
// connector with snapshot.mode=initial snapshots again). Errors: as
// AlterConnectorOffsets.
func (h *Herder) ResetConnectorOffsets(ctx context.Context, name string) (string, error) {
	return h.modifyOffsets(ctx, name, nil, true)
}

func (h *Herder) modifyOffsets(ctx context.Context, name string, offs []connect.PartitionOffset, reset bool) (string, error) {
	cfg, target, count, ok := h.snapshot(name)
	if !ok {
		return "", &NotFoundError{Connector: name}
	}
	if target != TargetStopped || count != 0 {
		return "", &BadRequestError{Msg: "Connectors must be in the STOPPED state before their offsets can be modified. This can be done " +
			"for the specified connector by issuing a 'PUT' request to the '/connectors/" + name + "/stop' endpoint"}
	}
	h.stopConnector(name) // no task may flush after our write
	if reset {
		cur, err := h.ConnectorOffsets(ctx, name)
		if err != nil {
			return "", err
		}
		for _, o := range cur {
			offs = append(offs, connect.PartitionOffset{Partition: o.Partition})
		}
	}
	byConnector := false
	if f, _, ok := h.plugins.Source(cfg["connector.class"]); ok {
		if alt, ok := f().(connect.OffsetAlterer); ok {
			resolved, err := h.resolveConfig(cfg)
			if err != nil {
				return "", err
			}
			done, err := alt.AlterOffsets(resolved, offs)
			if err != nil {
				return "", err
			}
			byConnector = done
		}
	}
	entries := make([]offsetsEntry, 0, len(offs))
	for _, o := range offs {
		entries = append(entries, offsetsEntry{Connector: name, Partition: o.Partition, Offset: o.Offset})
	}
	if len(entries) > 0 {
		if err := h.store.Put(ctx, entries); err != nil {
			return "", err
		}
	}
	switch {
	case reset && byConnector:
		return msgOffsetsResetByConn, nil
	case reset:
		return msgOffsetsReset, nil
	case byConnector:
		return msgOffsetsAlteredByConn, nil
	}
	return msgOffsetsAltered, nil
}

type offsetsEntry = offsets.Entry
