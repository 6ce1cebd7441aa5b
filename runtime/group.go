package runtime

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// joinGroup makes this worker a member of group.id (a franz-go consumer
// group over the config topic with the balancers of connect.protocol,
// assignment.go and assignment_cooperative.go) and waits until it
// received its first assignment. Membership timing is Kafka Connect's:
// session.timeout.ms (10000), heartbeat.interval.ms (3000),
// rebalance.timeout.ms (60000). The group's protocol type is "connect",
// as a Kafka Connect worker group's (kafka-consumer-groups and
// DescribeGroups show it so), not a consumer group's.
func (h *Herder) joinGroup(ctx context.Context) error {
	ms := func(key string) (time.Duration, error) {
		n, err := h.cfg.Int(key)
		return time.Duration(n) * time.Millisecond, err
	}
	session, err := ms("session.timeout.ms")
	if err != nil {
		return err
	}
	hb, err := ms("heartbeat.interval.ms")
	if err != nil {
		return err
	}
	rebalance, err := ms("rebalance.timeout.ms")
	if err != nil {
		return err
	}
	var balancers []kgo.GroupBalancer
	for _, name := range groupProtocols[h.protocol] {
		balancers = append(balancers, &groupBalancer{h: h, name: name})
	}
	group, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(h.brokers...),
		kgo.ConsumerGroup(h.cfg.Get("group.id")),
		kgo.GroupProtocol("connect"),
		kgo.ConsumeTopics(h.configLog.Topic()),
		kgo.Balancers(balancers...),
		kgo.SessionTimeout(session),
		kgo.HeartbeatInterval(hb),
		kgo.RebalanceTimeout(rebalance),
		kgo.DisableAutoCommit(),
		kgo.OnPartitionsAssigned(h.onAssigned),
		kgo.OnPartitionsRevoked(h.onRevoked),
		kgo.OnPartitionsLost(h.onLost),
	}, h.internalSec.opts()...)...)
	if err != nil {
		return err
	}
	// The client joins in the background and its callbacks may already
	// run (maybeRebalance reads h.group): publish it under h.mu.
	h.mu.Lock()
	h.group = group
	h.mu.Unlock()
	select {
	case <-h.joined:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("joining group %s: %w", h.cfg.Get("group.id"), ctx.Err())
	}
}

// onAssigned applies the assignment parsed in SyncGroup: the worker first
// reads the config topic at least as far as the leader did, then
// reconciles every connector (starting what it gained, stopping what it
// lost). Under the cooperative protocols a member that was revoked work
// rejoins once it stopped it (Kafka Connect's WorkerCoordinator does so
// after revocation), and the leader schedules the rebalance that places
// held work after DelayMs.
func (h *Herder) onAssigned(_ context.Context, cl *kgo.Client, _ map[string][]int32) {
	memberID, gen := cl.GroupMetadata()
	h.mu.Lock()
	a := h.synced
	h.mu.Unlock()
	if a == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for h.configLog.Position(0) < a.ConfigOffset && ctx.Err() == nil {
		if err := h.configLog.ReadToEnd(ctx); err != nil {
			h.log.Warn("reading the config topic after a rebalance", "err", err)
		}
	}
	h.mu.Lock()
	h.asg, h.memberID, h.generation, h.rebalancing = a, memberID, int(gen), false
	names := h.knownConnectors()
	h.mu.Unlock()
	h.log.Info("group assignment", "generation", gen, "leader", a.LeaderURL, "leader_is_self", a.Leader == memberID,
		"connectors", a.Connectors, "tasks", fmt.Sprint(a.Tasks))
	h.joinedOnce.Do(func() { close(h.joined) })
	for _, n := range names {
		h.enqueue(n)
	}
	h.scheduleRebalance(cl, a, memberID)
	if len(a.RevokedConnectors)+len(a.RevokedTasks) > 0 {
		h.log.Info("revoked by the leader; rejoining once stopped", "connectors", a.RevokedConnectors, "tasks", fmt.Sprint(a.RevokedTasks))
		done := h.reconcileBarrier()
		go func() {
			select {
			case <-done:
			case <-h.stopCh:
				return
			}
			h.mu.Lock()
			same := h.generation == int(a.Generation)
			h.mu.Unlock()
			if same {
				cl.ForceRebalance()
			}
		}()
	}
}

// scheduleRebalance (leader only) rebalances the group after a.DelayMs,
// when work lost with a departed member is due to be placed again
// (scheduled.rebalance.max.delay.ms, KIP-415). A later assignment replaces
// the timer.
func (h *Herder) scheduleRebalance(group *kgo.Client, a *assignment, memberID string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.delayTimer != nil {
		h.delayTimer.Stop()
		h.delayTimer = nil
	}
	if a.DelayMs <= 0 || a.Leader != memberID {
		return
	}
	gen := a.Generation
	h.delayTimer = time.AfterFunc(time.Duration(a.DelayMs)*time.Millisecond, func() {
		h.mu.Lock()
		same := h.generation == int(gen)
		h.mu.Unlock()
		if same {
			h.log.Info("scheduled rebalance: placing the work held for departed workers")
			group.ForceRebalance()
		}
	})
}

// barrierPrefix starts the names of reconcile barriers in reconcileCh (no
// connector name starts with a NUL byte).
const barrierPrefix = "\x00barrier-"

// reconcileBarrier returns a channel closed once the reconcile loop has
// handled everything enqueued before this call (so every stop those
// reconciles made has completed). After Close it is closed at once.
func (h *Herder) reconcileBarrier() <-chan struct{} {
	ch := make(chan struct{})
	select {
	case <-h.stopCh:
		close(ch)
		return ch
	default:
	}
	h.mu.Lock()
	if h.barriers == nil {
		h.barriers = map[string]chan struct{}{}
	}
	h.barrierSeq++
	name := fmt.Sprintf("%s%d", barrierPrefix, h.barrierSeq)
	h.barriers[name] = ch
	h.mu.Unlock()
	h.enqueue(name)
	return ch
}

// onRevoked marks the start of a rebalance (franz-go calls it before each
// join): REST writes answer 409 until the next assignment. Under
// connect.protocol=eager the worker then stops every connector and task
// before it rejoins, as Kafka Connect's eager protocol does; under the
// cooperative ones work keeps running and the leader revokes what moves.
func (h *Herder) onRevoked(context.Context, *kgo.Client, map[string][]int32) {
	h.mu.Lock()
	h.rebalancing = true
	eager := h.asg != nil && (h.asg.Protocol == ProtocolEager || h.asg.Protocol == "")
	var names []string
	if eager {
		h.asg = &assignment{Protocol: h.asg.Protocol, Generation: h.asg.Generation}
		names = h.knownConnectors()
	}
	h.mu.Unlock()
	if !eager {
		return
	}
	for _, n := range names {
		h.enqueue(n)
	}
	select {
	case <-h.reconcileBarrier():
	case <-h.stopCh:
	}
}

// onLost: the member fell out of the group (its session expired), so the
// leader may have given its work to others already: stop everything.
func (h *Herder) onLost(context.Context, *kgo.Client, map[string][]int32) {
	h.mu.Lock()
	h.rebalancing = true
	h.asg = &assignment{}
	names := h.knownConnectors()
	h.mu.Unlock()
	h.log.Warn("group membership lost; stopping every connector and task of this worker")
	for _, n := range names {
		h.enqueue(n)
	}
}

// knownConnectors returns the configured and the running connectors.
// Callers hold h.mu.
func (h *Herder) knownConnectors() []string {
	seen := map[string]bool{}
	var out []string
	for n := range h.connectors {
		seen[n] = true
		out = append(out, n)
	}
	for n := range h.running {
		if !seen[n] {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// maybeRebalance asks for a rebalance when this worker leads the group and
// the config topic now holds work the current assignment does not place
// (a new or deleted connector, a changed task count), as Kafka Connect's
// leader does on a config update.
func (h *Herder) maybeRebalance() {
	h.mu.Lock()
	a, leader, rebalancing, group := h.asg, h.asg != nil && h.asg.Leader == h.memberID, h.rebalancing, h.group
	h.mu.Unlock()
	if group == nil || !leader || rebalancing {
		return
	}
	if !a.covers(h.work()) {
		h.log.Info("config changed the group's work; rebalancing")
		h.mu.Lock()
		h.rebalancing = true
		h.mu.Unlock()
		group.ForceRebalance()
	}
}

// Leader reports whether this worker leads the group, and the leader's
// REST URL (Kafka Connect's leaderUrl). While a rebalance is in progress
// it returns ErrRebalanceInProgress.
func (h *Herder) Leader() (isLeader bool, url string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.asg == nil || h.rebalancing || h.asg.LeaderURL == "" {
		return false, "", ErrRebalanceInProgress
	}
	return h.asg.Leader == h.memberID, h.asg.LeaderURL, nil
}

// TaskOwnerURL returns the REST URL of the worker the current assignment
// gives task id, and whether it is this worker.
func (h *Herder) TaskOwnerURL(id TaskID) (url string, self bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.asg == nil || h.rebalancing {
		return "", false, ErrRebalanceInProgress
	}
	url = h.asg.TaskOwners[id.String()]
	return url, url == h.restURL, nil
}

// AwaitStable waits (at most max) until no rebalance is in progress and
// this worker holds an assignment. It returns ErrRebalanceInProgress when
// the rebalance outlasts max, or ctx's error.
func (h *Herder) AwaitStable(ctx context.Context, max time.Duration) error {
	deadline := time.Now().Add(max)
	for {
		h.mu.Lock()
		stable := h.asg != nil && !h.rebalancing
		h.mu.Unlock()
		if stable {
			return nil
		}
		if time.Now().After(deadline) {
			return ErrRebalanceInProgress
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// RebalanceWait is how long a REST write waits for a rebalance in
// progress before it answers 409: two heartbeats (every member notices the
// rebalance within one) plus 2 s to join and sync.
func (h *Herder) RebalanceWait() time.Duration {
	hb, err := h.cfg.Int("heartbeat.interval.ms")
	if err != nil {
		hb = 3000
	}
	return time.Duration(2*hb+2000) * time.Millisecond
}
