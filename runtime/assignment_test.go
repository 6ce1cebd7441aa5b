package runtime

import (
	"reflect"
	"testing"
	"time"
)

// A fresh group gets the work round-robin; a member that leaves loses
// only its own work, which goes to the least loaded survivors; work never
// moves between live members.
func TestBalanceSpreadsAndKeepsWorkWithLiveOwners(t *testing.T) {
	w := groupWork{connectors: []string{"a"}, tasks: []TaskID{{"a", 0}, {"a", 1}, {"a", 2}, {"a", 3}, {"a", 4}}}
	members := []groupMemberInfo{{id: "m1", meta: memberMetadata{URL: "http://w1"}}, {id: "m2", meta: memberMetadata{URL: "http://w2"}}, {id: "m3", meta: memberMetadata{URL: "http://w3"}}}
	plan := balance(members, w, "m1", 1, 7)
	if got := plan["m1"].Connectors; !reflect.DeepEqual(got, []string{"a"}) {
		t.Fatalf("m1 connectors %v", got)
	}
	if got := plan["m2"].Tasks; !reflect.DeepEqual(got, []TaskID{{"a", 0}, {"a", 3}}) {
		t.Fatalf("m2 tasks %v", got)
	}
	if got := plan["m3"].Tasks; !reflect.DeepEqual(got, []TaskID{{"a", 1}, {"a", 4}}) {
		t.Fatalf("m3 tasks %v", got)
	}
	for _, a := range plan {
		if a.LeaderURL != "http://w1" || a.TaskOwners["a-2"] != "http://w1" || a.ConfigOffset != 7 || !a.covers(w) {
			t.Fatalf("assignment %+v", a)
		}
	}
	// m2 leaves; m1 and m3 report what they run.
	survivors := []groupMemberInfo{
		{id: "m1", meta: memberMetadata{URL: "http://w1", Connectors: plan["m1"].Connectors, Tasks: plan["m1"].Tasks}},
		{id: "m3", meta: memberMetadata{URL: "http://w3", Connectors: plan["m3"].Connectors, Tasks: plan["m3"].Tasks}},
	}
	next := balance(survivors, w, "m1", 2, 7)
	if got := next["m3"].Tasks; !reflect.DeepEqual(got, []TaskID{{"a", 1}, {"a", 3}, {"a", 4}}) {
		t.Fatalf("m3 tasks after m2 left %v", got)
	}
	if got := next["m1"].Tasks; !reflect.DeepEqual(got, []TaskID{{"a", 0}, {"a", 2}}) {
		t.Fatalf("m1 tasks after m2 left %v", got)
	}
}

// coopMember is a member reporting what its assignment a gave it.
func coopMember(id string, a *assignment) groupMemberInfo {
	m := groupMemberInfo{id: id, meta: memberMetadata{URL: "http://" + id}}
	if a != nil {
		m.meta.Connectors, m.meta.Tasks = a.Connectors, a.Tasks
	}
	return m
}

func tasksOf(conn string, ids ...int) []TaskID {
	out := []TaskID{}
	for _, i := range ids {
		out = append(out, TaskID{conn, i})
	}
	return out
}

// Incremental cooperative rounds (Kafka Connect's
// IncrementalCooperativeAssignor, KIP-415): a member that joins empty gets
// its share in a follow-up round, after the loaded members gave up only
// what exceeds ceil(tasks/members); nothing else moves.
func TestBalanceCooperativeNewMemberGetsRevokedShare(t *testing.T) {
	w := groupWork{connectors: []string{"a"}, tasks: tasksOf("a", 0, 1, 2, 3, 4, 5)}
	now := time.Unix(1000, 0)
	r1, st := balanceCooperative([]groupMemberInfo{coopMember("m1", nil), coopMember("m2", nil)}, w, nil, -1, "m1", ProtocolSessioned, 1, 5, now, 10*time.Second)
	if got := r1["m1"].Tasks; !reflect.DeepEqual(got, tasksOf("a", 0, 2, 4)) || !reflect.DeepEqual(r1["m1"].Connectors, []string{"a"}) {
		t.Fatalf("m1 %+v", r1["m1"])
	}
	if got := r1["m2"].Tasks; !reflect.DeepEqual(got, tasksOf("a", 1, 3, 5)) {
		t.Fatalf("m2 tasks %v", got)
	}
	// m3 joins: 6 tasks over 3 members, ceiling 2: m1 and m2 each give up
	// their last task; the connector (1 over 3, ceiling 1) stays.
	r2, st := balanceCooperative([]groupMemberInfo{coopMember("m1", r1["m1"]), coopMember("m2", r1["m2"]), coopMember("m3", nil)}, w, st, 1, "m1", ProtocolSessioned, 2, 5, now, 10*time.Second)
	if got := r2["m1"].RevokedTasks; !reflect.DeepEqual(got, tasksOf("a", 4)) {
		t.Fatalf("m1 revoked %v", got)
	}
	if got := r2["m2"].RevokedTasks; !reflect.DeepEqual(got, tasksOf("a", 5)) {
		t.Fatalf("m2 revoked %v", got)
	}
	if len(r2["m3"].Tasks) != 0 || r2["m1"].RevokedConnectors != nil || r2["m1"].DelayMs != 0 {
		t.Fatalf("round 2 %+v %+v", r2["m1"], r2["m3"])
	}
	if !reflect.DeepEqual(r2["m1"].Tasks, tasksOf("a", 0, 2)) || !reflect.DeepEqual(r2["m1"].HeldTasks, tasksOf("a", 4, 5)) || !r2["m1"].covers(w) {
		t.Fatalf("m1 after revocation %+v", r2["m1"])
	}
	// The follow-up round (the revoking members rejoined): the revoked
	// tasks go to m3; m1 and m2 keep the rest, nothing is revoked.
	r3, _ := balanceCooperative([]groupMemberInfo{coopMember("m1", r2["m1"]), coopMember("m2", r2["m2"]), coopMember("m3", r2["m3"])}, w, st, 2, "m1", ProtocolSessioned, 3, 5, now, 10*time.Second)
	want := map[string][]TaskID{"m1": tasksOf("a", 0, 2), "m2": tasksOf("a", 1, 3), "m3": tasksOf("a", 4, 5)}
	for id, ts := range want {
		if !reflect.DeepEqual(r3[id].Tasks, ts) || len(r3[id].RevokedTasks) != 0 || len(r3[id].HeldTasks) != 0 {
			t.Fatalf("round 3 %s %+v", id, r3[id])
		}
	}
	if r3["m3"].TaskOwners["a-5"] != "http://m3" || !r3["m3"].covers(w) {
		t.Fatalf("round 3 owners %v", r3["m3"].TaskOwners)
	}
}

// A member that leaves has its work held for
// scheduled.rebalance.max.delay.ms; a member that joins empty meanwhile
// (the same worker restarted, with a new member id) gets exactly that
// work when the delay ends. Without a returning member the work goes to
// the least loaded survivors; with the delay 0 it moves at once
// (KAFKA-15693).
func TestBalanceCooperativeHoldsLostWorkForTheDelay(t *testing.T) {
	w := groupWork{connectors: []string{"a"}, tasks: tasksOf("a", 0, 1, 2, 3, 4, 5)}
	t0 := time.Unix(1000, 0)
	const maxDelay = 10 * time.Second
	r1, st1 := balanceCooperative([]groupMemberInfo{coopMember("m1", nil), coopMember("m2", nil), coopMember("m3", nil)}, w, nil, -1, "m1", ProtocolSessioned, 1, 5, t0, maxDelay)
	if !reflect.DeepEqual(r1["m3"].Tasks, tasksOf("a", 2, 5)) {
		t.Fatalf("m3 tasks %v", r1["m3"].Tasks)
	}
	survivors := []groupMemberInfo{coopMember("m1", r1["m1"]), coopMember("m2", r1["m2"])}
	// m3 leaves: its tasks are held, the delay is the maximum.
	r2, st2 := balanceCooperative(survivors, w, st1, 1, "m1", ProtocolSessioned, 2, 5, t0.Add(time.Second), maxDelay)
	if r2["m1"].DelayMs != maxDelay.Milliseconds() || !reflect.DeepEqual(r2["m1"].HeldTasks, tasksOf("a", 2, 5)) ||
		!reflect.DeepEqual(r2["m1"].Tasks, r1["m1"].Tasks) || !reflect.DeepEqual(r2["m2"].Tasks, r1["m2"].Tasks) || !r2["m1"].covers(w) {
		t.Fatalf("after m3 left %+v", r2["m1"])
	}
	// m3 is back 3 s later: still held, the delay is what remains.
	back := append(append([]groupMemberInfo{}, coopMember("m1", r2["m1"]), coopMember("m2", r2["m2"])), coopMember("m3b", nil))
	r3, st3 := balanceCooperative(back, w, st2, 2, "m1", ProtocolSessioned, 3, 5, t0.Add(4*time.Second), maxDelay)
	if r3["m3b"].DelayMs != 7000 || len(r3["m3b"].Tasks) != 0 || len(r3["m1"].RevokedTasks)+len(r3["m2"].RevokedTasks) != 0 {
		t.Fatalf("m3 back within the delay %+v", r3["m3b"])
	}
	// The scheduled rebalance: the returning member gets the held tasks.
	back = []groupMemberInfo{coopMember("m1", r3["m1"]), coopMember("m2", r3["m2"]), coopMember("m3b", r3["m3b"])}
	r4, _ := balanceCooperative(back, w, st3, 3, "m1", ProtocolSessioned, 4, 5, t0.Add(11*time.Second), maxDelay)
	if !reflect.DeepEqual(r4["m3b"].Tasks, tasksOf("a", 2, 5)) || r4["m3b"].DelayMs != 0 || len(r4["m3b"].HeldTasks) != 0 ||
		!reflect.DeepEqual(r4["m1"].Tasks, r1["m1"].Tasks) || !reflect.DeepEqual(r4["m2"].Tasks, r1["m2"].Tasks) {
		t.Fatalf("after the delay %+v %+v", r4["m3b"], r4["m1"])
	}
	// Nobody came back: the survivors share the held tasks.
	r5, _ := balanceCooperative([]groupMemberInfo{coopMember("m1", r2["m1"]), coopMember("m2", r2["m2"])}, w, st2, 2, "m1", ProtocolSessioned, 3, 5, t0.Add(11*time.Second), maxDelay)
	if len(r5["m1"].Tasks) != 3 || len(r5["m2"].Tasks) != 3 || len(r5["m1"].HeldTasks) != 0 || !r5["m1"].covers(w) {
		t.Fatalf("survivors after the delay %+v %+v", r5["m1"], r5["m2"])
	}
	// scheduled.rebalance.max.delay.ms=0: placed at once.
	r6, _ := balanceCooperative(survivors, w, st1, 1, "m1", ProtocolSessioned, 2, 5, t0.Add(time.Second), 0)
	if len(r6["m1"].Tasks)+len(r6["m2"].Tasks) != 6 || r6["m1"].DelayMs != 0 {
		t.Fatalf("delay 0 %+v %+v", r6["m1"], r6["m2"])
	}
	// A leader without memory of the last round (a new leader) places
	// what nobody runs as new work.
	r7, _ := balanceCooperative(survivors, w, st1, 7, "m2", ProtocolSessioned, 8, 5, t0.Add(time.Second), maxDelay)
	if len(r7["m1"].Tasks)+len(r7["m2"].Tasks) != 6 {
		t.Fatalf("new leader %+v %+v", r7["m1"], r7["m2"])
	}
}

func TestRebalanceSettings(t *testing.T) {
	p, d, err := rebalanceSettings(WorkerConfig{})
	if err != nil || p != ProtocolSessioned || d != 300*time.Second {
		t.Fatalf("defaults %q %s %v", p, d, err)
	}
	if p, _, err := rebalanceSettings(WorkerConfig{"connect.protocol": "EAGER"}); err != nil || p != ProtocolEager {
		t.Fatalf("eager %q %v", p, err)
	}
	for _, bad := range []WorkerConfig{{"connect.protocol": "cooperative"}, {"scheduled.rebalance.max.delay.ms": "-1"}, {"scheduled.rebalance.max.delay.ms": "soon"}} {
		if _, _, err := rebalanceSettings(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
