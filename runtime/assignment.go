package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The group protocols of connectd workers (groupProtocols,
// assignment_cooperative.go) are ours, not Kafka Connect's: the group's
// protocol type is "connect" as Kafka Connect's (group.go), but the
// protocol names differ, so the broker refuses a Java worker joining a
// connectd group (INCONSISTENT_GROUP_PROTOCOL) and the other way round:
// Java and connectd workers cannot share one group.id.

// memberMetadata is what a worker sends in JoinGroup: where its REST API
// is, how far it has read the config topic, and what it runs now (so that
// the leader leaves running work where it is).
type memberMetadata struct {
	URL          string   `json:"url"`
	ConfigOffset int64    `json:"config_offset"`
	Connectors   []string `json:"connectors,omitempty"`
	Tasks        []TaskID `json:"tasks,omitempty"`
}

// assignment is what the leader sends each member in SyncGroup: the
// member's share of the work, and the whole map (who runs what, by REST
// URL) so that any worker can forward a request to the leader or to a
// task's worker.
//
// Under the incremental cooperative protocols (connect.protocol compatible
// or sessioned) it also carries, as Kafka Connect's ExtendedAssignment,
// what the member must stop (Revoked*: it stops them, then rejoins so that
// the next round can place them elsewhere), the delay after which the
// leader rebalances to place work lost with a departed member (DelayMs),
// and the work deliberately left unplaced this round (Held*: lost work
// waiting for that delay, revoked work waiting for the follow-up round).
type assignment struct {
	Version           int               `json:"version"`
	Protocol          string            `json:"protocol,omitempty"` // eager, compatible, sessioned ("" from earlier releases: eager)
	Leader            string            `json:"leader"`             // member id
	LeaderURL         string            `json:"leader_url"`
	Generation        int32             `json:"generation"`
	ConfigOffset      int64             `json:"config_offset"` // the leader's config topic position when it balanced
	Connectors        []string          `json:"connectors"`
	Tasks             []TaskID          `json:"tasks"`
	RevokedConnectors []string          `json:"revoked_connectors,omitempty"`
	RevokedTasks      []TaskID          `json:"revoked_tasks,omitempty"`
	DelayMs           int64             `json:"delay_ms,omitempty"`
	HeldConnectors    []string          `json:"held_connectors,omitempty"`
	HeldTasks         []TaskID          `json:"held_tasks,omitempty"`
	ConnOwners        map[string]string `json:"connector_owners"` // connector -> REST URL
	TaskOwners        map[string]string `json:"task_owners"`      // TaskID.String() -> REST URL
}

// owns reports whether a assigns the connector name to this worker, and
// which of its tasks.
func (a *assignment) owns(name string) (conn bool, tasks map[int]bool) {
	tasks = map[int]bool{}
	if a == nil {
		return false, tasks
	}
	for _, c := range a.Connectors {
		if c == name {
			conn = true
		}
	}
	for _, t := range a.Tasks {
		if t.Connector == name {
			tasks[t.Task] = true
		}
	}
	return conn, tasks
}

// covers reports whether a placed (or deliberately held) exactly the
// connectors and tasks of w.
func (a *assignment) covers(w groupWork) bool {
	if a == nil || len(a.ConnOwners)+len(a.HeldConnectors) != len(w.connectors) || len(a.TaskOwners)+len(a.HeldTasks) != len(w.tasks) {
		return false
	}
	for _, c := range w.connectors {
		if _, ok := a.ConnOwners[c]; !ok && !containsString(a.HeldConnectors, c) {
			return false
		}
	}
	for _, t := range w.tasks {
		if _, ok := a.TaskOwners[t.String()]; !ok && !containsTask(a.HeldTasks, t) {
			return false
		}
	}
	return true
}

// groupWork is everything the group runs: each configured connector and
// each task of its last committed task configs, sorted.
type groupWork struct {
	connectors []string
	tasks      []TaskID
}

type groupMemberInfo struct {
	id   string
	meta memberMetadata
}

// balance places w on members (in the coordinator's order). Work keeps the
// member that runs it, when that member is still in the group, so that a
// rebalance never runs one task on two workers at once (a PostgreSQL slot
// admits one reader); work without a live owner goes to the least loaded
// member, ties to the earlier member, which spreads a connector's tasks
// round-robin as Kafka Connect's eager assignor does.
func balance(members []groupMemberInfo, w groupWork, leader string, gen int32, configOffset int64) map[string]*assignment {
	out := map[string]*assignment{}
	urls := map[string]string{}
	load := map[string]int{}
	leaderURL := ""
	for _, m := range members {
		urls[m.id] = m.meta.URL
		if m.id == leader {
			leaderURL = m.meta.URL
		}
		out[m.id] = &assignment{Version: 1, Protocol: ProtocolEager, Leader: leader, Generation: gen, ConfigOffset: configOffset,
			Connectors: []string{}, Tasks: []TaskID{}}
	}
	wantConn := map[string]bool{}
	for _, c := range w.connectors {
		wantConn[c] = true
	}
	wantTask := map[TaskID]bool{}
	for _, t := range w.tasks {
		wantTask[t] = true
	}
	connOwner := map[string]string{}
	taskOwner := map[TaskID]string{}
	for _, m := range members {
		for _, c := range m.meta.Connectors {
			if wantConn[c] && connOwner[c] == "" {
				connOwner[c] = m.id
				load[m.id]++
			}
		}
		for _, t := range m.meta.Tasks {
			if wantTask[t] && taskOwner[t] == "" {
				taskOwner[t] = m.id
				load[m.id]++
			}
		}
	}
	leastLoaded := func() string {
		best := ""
		for _, m := range members {
			if best == "" || load[m.id] < load[best] {
				best = m.id
			}
		}
		load[best]++
		return best
	}
	for _, c := range w.connectors {
		if connOwner[c] == "" {
			connOwner[c] = leastLoaded()
		}
	}
	for _, t := range w.tasks {
		if taskOwner[t] == "" {
			taskOwner[t] = leastLoaded()
		}
	}
	conns, tasks := map[string]string{}, map[string]string{}
	for _, c := range w.connectors {
		out[connOwner[c]].Connectors = append(out[connOwner[c]].Connectors, c)
		conns[c] = urls[connOwner[c]]
	}
	for _, t := range w.tasks {
		out[taskOwner[t]].Tasks = append(out[taskOwner[t]].Tasks, t)
		tasks[t.String()] = urls[taskOwner[t]]
	}
	for _, a := range out {
		a.LeaderURL, a.ConnOwners, a.TaskOwners = leaderURL, conns, tasks
	}
	return out
}

// groupBalancer is the kgo.GroupBalancer of one connectd group protocol
// (name, one of groupProtocols). To franz-go every protocol is eager (the
// group consumes no partition, so nothing is revoked at its level); the
// cooperative protocols revoke connectors and tasks in the assignment.
type groupBalancer struct {
	h    *Herder
	name string
}

var _ kgo.GroupBalancer = (*groupBalancer)(nil)

func (b *groupBalancer) ProtocolName() string { return b.name }
func (b *groupBalancer) IsCooperative() bool  { return false }

// JoinGroupMetadata returns this worker's memberMetadata (JSON) as the
// user data of a consumer protocol subscription to the config topic: a
// Kafka 4 coordinator parses the metadata of protocol type "consumer" and
// stalls the join on anything else.
func (b *groupBalancer) JoinGroupMetadata(topics []string, _ map[string][]int32, gen int32) []byte {
	m := kmsg.NewConsumerMemberMetadata()
	m.Version = 1
	m.Topics = topics
	m.UserData = mustJSON(b.h.memberMetadata())
	m.Generation = gen
	return m.AppendTo(nil)
}

// ParseSyncAssignment keeps the worker's assignment for onAssigned; the
// group consumes no partition.
func (b *groupBalancer) ParseSyncAssignment(p []byte) (map[string][]int32, error) {
	ca := kmsg.NewConsumerMemberAssignment()
	if err := ca.ReadFrom(p); err != nil {
		return nil, fmt.Errorf("connectd group assignment: %w", err)
	}
	var a assignment
	if err := json.Unmarshal(ca.UserData, &a); err != nil {
		return nil, fmt.Errorf("connectd group assignment: %w", err)
	}
	b.h.mu.Lock()
	b.h.synced = &a
	b.h.mu.Unlock()
	return map[string][]int32{}, nil
}

// MemberBalancer parses the members' metadata (leader only).
func (b *groupBalancer) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	mb := &memberBalancer{h: b.h, protocol: protocolOf(b.name)}
	for _, m := range members {
		cm := kmsg.NewConsumerMemberMetadata()
		if err := cm.ReadFrom(m.ProtocolMetadata); err != nil {
			return nil, nil, fmt.Errorf("connectd group member %s metadata: %w", m.MemberID, err)
		}
		var meta memberMetadata
		if err := json.Unmarshal(cm.UserData, &meta); err != nil {
			return nil, nil, fmt.Errorf("connectd group member %s metadata: %w", m.MemberID, err)
		}
		mb.members = append(mb.members, groupMemberInfo{id: m.MemberID, meta: meta})
	}
	return mb, map[string]struct{}{b.h.configLog.Topic(): {}}, nil
}

type memberBalancer struct {
	h        *Herder
	protocol string // connect.protocol mode of the chosen group protocol
	members  []groupMemberInfo
	info     kgo.BalanceInfo
}

var _ kgo.GroupMemberBalancerOrError = (*memberBalancer)(nil)
var _ kgo.GroupMemberBalancerInfo = (*memberBalancer)(nil)

func (m *memberBalancer) SetBalanceInfo(i kgo.BalanceInfo) { m.info = i }

func (m *memberBalancer) Balance(map[string]int32) kgo.IntoSyncAssignment { return nil }

// BalanceOrError reads the config topic to its end (so the leader is at
// least as far as every member), then places the work.
func (m *memberBalancer) BalanceOrError(map[string]int32) (kgo.IntoSyncAssignment, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.h.configLog.ReadToEnd(ctx); err != nil {
		return nil, err
	}
	w := m.h.work()
	var plan map[string]*assignment
	if m.protocol == ProtocolEager {
		plan = balance(m.members, w, m.info.LeaderID, m.info.Generation, m.h.configLog.Position(0))
	} else {
		m.h.mu.Lock()
		st, lastGen := m.h.coop, int32(-1)
		if m.h.asg != nil {
			lastGen = m.h.asg.Generation
		}
		m.h.mu.Unlock()
		var next *cooperativeState
		plan, next = balanceCooperative(m.members, w, st, lastGen, m.info.LeaderID, m.protocol, m.info.Generation,
			m.h.configLog.Position(0), time.Now(), m.h.maxDelay)
		m.h.mu.Lock()
		m.h.coop = next
		m.h.mu.Unlock()
		for id, a := range plan {
			if len(a.RevokedConnectors)+len(a.RevokedTasks) > 0 {
				m.h.log.Info("revoking for balance", "member", id, "connectors", a.RevokedConnectors, "tasks", fmt.Sprint(a.RevokedTasks))
			}
		}
		if a := plan[m.info.LeaderID]; a != nil && (len(a.HeldConnectors)+len(a.HeldTasks) > 0) {
			m.h.log.Info("holding the work of departed workers until the scheduled rebalance",
				"connectors", a.HeldConnectors, "tasks", fmt.Sprint(a.HeldTasks), "delay_ms", a.DelayMs)
		}
	}
	var out syncPlan
	for _, mem := range m.members {
		ca := kmsg.NewConsumerMemberAssignment()
		ca.UserData = mustJSON(plan[mem.id])
		out = append(out, kmsg.SyncGroupRequestGroupAssignment{MemberID: mem.id, MemberAssignment: ca.AppendTo(nil)})
	}
	m.h.log.Info("group balanced", "protocol", m.protocol, "generation", m.info.Generation, "members", len(m.members), "connectors", len(w.connectors), "tasks", len(w.tasks))
	return out, nil
}

type syncPlan []kmsg.SyncGroupRequestGroupAssignment

func (p syncPlan) IntoSyncAssignment() []kmsg.SyncGroupRequestGroupAssignment { return p }

// work returns every connector with a config and every committed task.
func (h *Herder) work() groupWork {
	h.mu.Lock()
	defer h.mu.Unlock()
	var w groupWork
	for name, st := range h.connectors {
		if st.config == nil {
			continue
		}
		w.connectors = append(w.connectors, name)
		for i := 0; i < st.taskCount; i++ {
			w.tasks = append(w.tasks, TaskID{Connector: name, Task: i})
		}
	}
	sort.Strings(w.connectors)
	sort.Slice(w.tasks, func(i, j int) bool {
		if w.tasks[i].Connector != w.tasks[j].Connector {
			return w.tasks[i].Connector < w.tasks[j].Connector
		}
		return w.tasks[i].Task < w.tasks[j].Task
	})
	return w
}

// memberMetadata is this worker's JoinGroup metadata: its current
// assignment is what it runs.
func (h *Herder) memberMetadata() memberMetadata {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := memberMetadata{URL: h.restURL, ConfigOffset: h.configLog.Position(0)}
	if h.asg != nil {
		m.Connectors, m.Tasks = h.asg.Connectors, h.asg.Tasks
	}
	return m
}
