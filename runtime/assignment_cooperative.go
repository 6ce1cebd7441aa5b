package runtime

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Rebalancing protocols of the worker key connect.protocol, as Kafka
// Connect's (KIP-415, KIP-507). eager stops every connector and task of
// every worker at each rebalance and places all the work again
// round-robin; compatible and sessioned rebalance incrementally
// (IncrementalCooperativeAssignor): only what moves is stopped. sessioned
// is Kafka Connect's default since 2.4; its difference from compatible
// there is a session key signing internal REST requests, which connectd
// workers do not send, so here both run the same assignor.
const (
	ProtocolEager      = "eager"
	ProtocolCompatible = "compatible"
	ProtocolSessioned  = "sessioned"
)

// groupProtocols maps connect.protocol to the group protocols the worker
// offers in JoinGroup, most preferred first: the coordinator picks the
// first one every member offers, so a group mixing modes falls back to
// the most basic one, as Kafka Connect's "default"/"compatible"/
// "sessioned" protocols do. The eager protocol keeps the name of the
// earlier connectd releases so that they can share a group during a
// rolling upgrade.
var groupProtocols = map[string][]string{
	ProtocolEager:      {"connectd-v1"},
	ProtocolCompatible: {"connectd-compatible", "connectd-v1"},
	ProtocolSessioned:  {"connectd-sessioned", "connectd-compatible", "connectd-v1"},
}

// protocolOf returns the connect.protocol mode of a group protocol name.
func protocolOf(groupProtocol string) string {
	switch groupProtocol {
	case "connectd-sessioned":
		return ProtocolSessioned
	case "connectd-compatible":
		return ProtocolCompatible
	}
	return ProtocolEager
}

// rebalanceSettings reads connect.protocol (eager, compatible or
// sessioned, case-insensitive) and scheduled.rebalance.max.delay.ms (ms,
// >= 0) from the worker config. Errors name the key and its valid values.
func rebalanceSettings(cfg WorkerConfig) (protocol string, maxDelay time.Duration, err error) {
	protocol = strings.ToLower(strings.TrimSpace(cfg.Get("connect.protocol")))
	if _, ok := groupProtocols[protocol]; !ok {
		return "", 0, fmt.Errorf("worker config connect.protocol: %q is not one of eager, compatible, sessioned", cfg.Get("connect.protocol"))
	}
	ms, err := cfg.Int("scheduled.rebalance.max.delay.ms")
	if err != nil {
		return "", 0, err
	}
	if ms < 0 {
		return "", 0, fmt.Errorf("worker config scheduled.rebalance.max.delay.ms: %d is negative (0 disables the delay)", ms)
	}
	return protocol, time.Duration(ms) * time.Millisecond, nil
}

// cooperativeState is what the leader remembers between incremental
// cooperative rounds (IncrementalCooperativeAssignor's previousAssignment,
// previousMembers, scheduledRebalance and candidateWorkersForReassignment).
// It is valid only for the generation that produced it: a new leader, or
// a leader whose last round did not complete, starts over from what the
// members report.
type cooperativeState struct {
	generation  int32
	prevConns   map[string]bool
	prevTasks   map[TaskID]bool
	prevMembers map[string]bool
	// scheduled is when work lost with a departed member is reassigned
	// (zero: no delayed rebalance pending).
	scheduled  time.Time
	candidates map[string]bool
}

// memberLoad is one member's connectors and tasks during a round.
type memberLoad struct {
	id    string
	conns []string
	tasks []TaskID
}

// balanceCooperative is Kafka Connect's incremental cooperative assignment
// (KIP-415) over members (in the coordinator's order), the configured work
// w and the leader's memory st of the previous round (nil or stale: none).
// lastGen is the generation of the leader's last applied assignment, gen
// the one being formed, now the leader's clock, maxDelay
// scheduled.rebalance.max.delay.ms.
//
//   - Work a member runs stays with it. Work only the previous round placed
//     belonged to a member that left ("lost"): when maxDelay is 0 it is
//     placed again at once (KAFKA-15693); otherwise it is held unassigned
//     until now+maxDelay, and the assignment carries the remaining delay
//     after which the leader rebalances. When that time comes, the lost
//     work goes round-robin to the members that joined empty meanwhile
//     (the departed worker back after a restart), else to the least loaded.
//   - New work goes to the least loaded members, connectors and tasks
//     counted apart.
//   - When no delay is pending and some members run nothing, members above
//     the ceiling of the new average give up the excess (Revoked*): they
//     stop it and rejoin, and the next round places it on the least loaded.
//     A task thus never runs on two members at once.
//
// It returns each member's assignment and the new leader memory.
func balanceCooperative(members []groupMemberInfo, w groupWork, st *cooperativeState, lastGen int32,
	leader, protocol string, gen int32, configOffset int64, now time.Time, maxDelay time.Duration) (map[string]*assignment, *cooperativeState) {
	if st == nil || st.generation != lastGen {
		st = &cooperativeState{prevMembers: map[string]bool{}}
	}
	if st.prevConns == nil {
		st.prevConns, st.prevTasks = map[string]bool{}, map[TaskID]bool{}
	}
	if st.candidates == nil {
		st.candidates = map[string]bool{}
	}
	wantConn, wantTask := map[string]bool{}, map[TaskID]bool{}
	for _, c := range w.connectors {
		wantConn[c] = true
	}
	for _, t := range w.tasks {
		wantTask[t] = true
	}

	// Active work: what members run now, deleted work left out (its
	// owner stops it when it reads the config topic). A connector or task
	// two members claim stays with the first and is revoked from the rest.
	loads := make([]*memberLoad, len(members))
	byID := map[string]*memberLoad{}
	revokedConns, revokedTasks := map[string][]string{}, map[string][]TaskID{}
	activeConn, activeTask := map[string]bool{}, map[TaskID]bool{}
	urls := map[string]string{}
	leaderURL := ""
	for i, m := range members {
		l := &memberLoad{id: m.id}
		loads[i], byID[m.id], urls[m.id] = l, l, m.meta.URL
		if m.id == leader {
			leaderURL = m.meta.URL
		}
		for _, c := range m.meta.Connectors {
			switch {
			case !wantConn[c]:
			case activeConn[c]:
				revokedConns[m.id] = append(revokedConns[m.id], c)
			default:
				activeConn[c] = true
				l.conns = append(l.conns, c)
			}
		}
		for _, t := range m.meta.Tasks {
			switch {
			case !wantTask[t]:
			case activeTask[t]:
				revokedTasks[m.id] = append(revokedTasks[m.id], t)
			default:
				activeTask[t] = true
				l.tasks = append(l.tasks, t)
			}
		}
	}

	// Lost: placed last round, still configured, run by nobody. New:
	// configured, neither placed last round nor run.
	var lostConns, newConns []string
	var lostTasks, newTasks []TaskID
	for _, c := range w.connectors {
		switch {
		case activeConn[c]:
		case st.prevConns[c]:
			lostConns = append(lostConns, c)
		default:
			newConns = append(newConns, c)
		}
	}
	for _, t := range w.tasks {
		switch {
		case activeTask[t]:
		case st.prevTasks[t]:
			lostTasks = append(lostTasks, t)
		default:
			newTasks = append(newTasks, t)
		}
	}

	// handleLostAssignments.
	var delay time.Duration
	var heldConns []string
	var heldTasks []TaskID
	allPrevPresent := true
	present := map[string]bool{}
	for _, m := range members {
		present[m.id] = true
	}
	for id := range st.prevMembers {
		if !present[id] {
			allPrevPresent = false
		}
	}
	resetDelay := func() {
		st.scheduled = time.Time{}
		st.candidates = map[string]bool{}
	}
	switch {
	case len(lostConns) == 0 && len(lostTasks) == 0:
		resetDelay()
	case maxDelay == 0 || (st.scheduled.IsZero() && allPrevPresent):
		// No delay configured, or nobody left: members missed their
		// last assignment; place the work again as new.
		newConns, newTasks = append(newConns, lostConns...), append(newTasks, lostTasks...)
		resetDelay()
	case !st.scheduled.IsZero() && !now.Before(st.scheduled):
		var cands []*memberLoad
		for _, l := range loads {
			if st.candidates[l.id] {
				cands = append(cands, l)
			}
		}
		if len(cands) == 0 {
			newConns, newTasks = append(newConns, lostConns...), append(newTasks, lostTasks...)
		} else {
			for i, c := range lostConns {
				cands[i%len(cands)].conns = append(cands[i%len(cands)].conns, c)
			}
			for i, t := range lostTasks {
				cands[i%len(cands)].tasks = append(cands[i%len(cands)].tasks, t)
			}
		}
		resetDelay()
	default:
		for _, l := range loads {
			if len(l.conns) == 0 && len(l.tasks) == 0 {
				st.candidates[l.id] = true
			}
		}
		if st.scheduled.IsZero() {
			delay = maxDelay
		} else {
			delay = min(st.scheduled.Sub(now), maxDelay)
		}
		st.scheduled = now.Add(delay)
		heldConns, heldTasks = lostConns, lostTasks
	}

	// performTaskRevocation: only when no delay is pending, and only when
	// some members run nothing while others run something.
	if delay == 0 {
		revokeForBalance(loads, len(w.connectors), len(w.tasks), revokedConns, revokedTasks)
	}

	// New work to the least loaded (revoked work still counts as load this
	// round, as in Kafka Connect; it is placed in the next round).
	for _, c := range newConns {
		best := loads[0]
		for _, l := range loads[1:] {
			if len(l.conns) < len(best.conns) {
				best = l
			}
		}
		best.conns = append(best.conns, c)
	}
	for _, t := range newTasks {
		best := loads[0]
		for _, l := range loads[1:] {
			if len(l.tasks) < len(best.tasks) {
				best = l
			}
		}
		best.tasks = append(best.tasks, t)
	}

	// Drop the revoked work from what the members keep; it waits for the
	// follow-up round, which the revoking members start once they stopped it.
	isRevokedConn, isRevokedTask := map[string]bool{}, map[TaskID]bool{}
	for id, cs := range revokedConns {
		for _, c := range cs {
			byID[id].conns = removeString(byID[id].conns, c)
			isRevokedConn[c] = true
		}
	}
	for id, ts := range revokedTasks {
		for _, t := range ts {
			byID[id].tasks = removeTask(byID[id].tasks, t)
			isRevokedTask[t] = true
		}
	}
	for c := range isRevokedConn {
		if !containsString(heldConns, c) && !ownedConn(loads, c) {
			heldConns = append(heldConns, c)
		}
	}
	for t := range isRevokedTask {
		if !containsTask(heldTasks, t) && !ownedTask(loads, t) {
			heldTasks = append(heldTasks, t)
		}
	}
	sort.Strings(heldConns)
	sortTasks(heldTasks)

	// The leader's memory: everything placed, the lost work still held;
	// revoked work is left out so that the next round treats it as new.
	next := &cooperativeState{generation: gen, prevConns: map[string]bool{}, prevTasks: map[TaskID]bool{},
		prevMembers: present, scheduled: st.scheduled, candidates: st.candidates}
	for _, l := range loads {
		for _, c := range l.conns {
			next.prevConns[c] = true
		}
		for _, t := range l.tasks {
			next.prevTasks[t] = true
		}
	}
	for _, c := range lostConns {
		if containsString(heldConns, c) {
			next.prevConns[c] = true
		}
	}
	for _, t := range lostTasks {
		if containsTask(heldTasks, t) {
			next.prevTasks[t] = true
		}
	}

	conns, tasks := map[string]string{}, map[string]string{}
	out := map[string]*assignment{}
	for _, l := range loads {
		sort.Strings(l.conns)
		sortTasks(l.tasks)
		for _, c := range l.conns {
			conns[c] = urls[l.id]
		}
		for _, t := range l.tasks {
			tasks[t.String()] = urls[l.id]
		}
	}
	for _, l := range loads {
		rc, rt := revokedConns[l.id], revokedTasks[l.id]
		sort.Strings(rc)
		sortTasks(rt)
		out[l.id] = &assignment{Version: 1, Protocol: protocol, Leader: leader, LeaderURL: leaderURL, Generation: gen,
			ConfigOffset: configOffset, Connectors: append([]string{}, l.conns...), Tasks: append([]TaskID{}, l.tasks...),
			RevokedConnectors: rc, RevokedTasks: rt, DelayMs: delay.Milliseconds(),
			HeldConnectors: heldConns, HeldTasks: heldTasks, ConnOwners: conns, TaskOwners: tasks}
	}
	return out, next
}

// revokeForBalance is Kafka Connect's performTaskRevocation: when some
// members run nothing and others run something, each loaded member gives
// up what it runs above the ceiling of the average over all members
// (connectors and tasks apart), never going below the floor. The last
// connectors and tasks of a member (in sorted order) go first. It adds to
// revokedConns and revokedTasks (member id -> work).
func revokeForBalance(loads []*memberLoad, totalConns, totalTasks int, revokedConns map[string][]string, revokedTasks map[string][]TaskID) {
	var existing []*memberLoad
	for _, l := range loads {
		if len(l.conns)+len(l.tasks) > 0 {
			existing = append(existing, l)
		}
	}
	if len(existing) == 0 || len(existing) == len(loads) {
		return
	}
	n := len(loads)
	floorC, floorT := totalConns/n, totalTasks/n
	ceilC, ceilT := floorC, floorT
	if totalConns%n != 0 {
		ceilC++
	}
	if totalTasks%n != 0 {
		ceilT++
	}
	for _, l := range existing {
		cs := append([]string{}, l.conns...)
		sort.Strings(cs)
		for i := len(cs); i > floorC && i > ceilC; i-- {
			revokedConns[l.id] = append(revokedConns[l.id], cs[i-1])
		}
		ts := append([]TaskID{}, l.tasks...)
		sortTasks(ts)
		for i := len(ts); i > floorT && i > ceilT; i-- {
			revokedTasks[l.id] = append(revokedTasks[l.id], ts[i-1])
		}
	}
}

func sortTasks(ts []TaskID) {
	sort.Slice(ts, func(i, j int) bool {
		if ts[i].Connector != ts[j].Connector {
			return ts[i].Connector < ts[j].Connector
		}
		return ts[i].Task < ts[j].Task
	})
}

func removeString(s []string, v string) []string {
	out := s[:0]
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

func removeTask(s []TaskID, v TaskID) []TaskID {
	out := s[:0]
	for _, x := range s {
		if x != v {
			out = append(out, x)
		}
	}
	return out
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func containsTask(s []TaskID, v TaskID) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func ownedConn(loads []*memberLoad, c string) bool {
	for _, l := range loads {
		if containsString(l.conns, c) {
			return true
		}
	}
	return false
}

func ownedTask(loads []*memberLoad, t TaskID) bool {
	for _, l := range loads {
		if containsTask(l.tasks, t) {
			return true
		}
	}
	return false
}
