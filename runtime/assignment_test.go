package runtime

import (
	"reflect"
	"testing"
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
