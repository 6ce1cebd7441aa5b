package runtime

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// The worker's own group (group.id) is a Kafka Connect worker group:
// ListGroups and DescribeGroups show protocol type "connect", as for a
// Kafka Connect worker, with one of connectd's own protocols (not Kafka
// Connect's: the two kinds of worker cannot share a group).
func TestWorkerGroupIsAConnectGroup(t *testing.T) {
	kafka := freeAddr(t)
	w := startTestWorker(t, t.TempDir(), kafka, &counterShared{})
	defer w.Close()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafka))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	groups, err := kadm.NewClient(cl).DescribeGroups(ctx, "connectd")
	if err != nil {
		t.Fatal(err)
	}
	g := groups["connectd"]
	if g.Err != nil || g.ProtocolType != "connect" || g.State != "Stable" || len(g.Members) != 1 {
		t.Fatalf("group connectd: type %q state %q protocol %q members %d err %v, want a stable connect group of one", g.ProtocolType, g.State, g.Protocol, len(g.Members), g.Err)
	}
	if !slices.Contains(groupProtocols[ProtocolSessioned], g.Protocol) {
		t.Errorf("group connectd: protocol %q is not one of connectd's %v", g.Protocol, groupProtocols[ProtocolSessioned])
	}
	listed, err := kadm.NewClient(cl).ListGroups(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if lg, ok := listed["connectd"]; !ok || lg.ProtocolType != "connect" {
		t.Errorf("ListGroups connectd: %+v (listed %v)", lg, ok)
	}
}
