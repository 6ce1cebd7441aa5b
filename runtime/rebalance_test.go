package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
)

// spreadSource is an in-process source connector with tasks.max tasks,
// each idle; it counts how often each task was started and stopped, so
// that a test sees which tasks a rebalance restarted.
type spreadSource struct{ shared *spreadShared }

type spreadShared struct {
	mu     sync.Mutex
	starts map[int]int
	stops  map[int]int
	// stopDelay is how long a task's Stop takes.
	stopDelay time.Duration
}

func newSpreadShared() *spreadShared {
	return &spreadShared{starts: map[int]int{}, stops: map[int]int{}}
}

func (s *spreadShared) counts() (starts, stops map[int]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	starts, stops = map[int]int{}, map[int]int{}
	for k, v := range s.starts {
		starts[k] = v
	}
	for k, v := range s.stops {
		stops[k] = v
	}
	return starts, stops
}

func (c spreadSource) Version() string { return "test" }
func (c spreadSource) Config() *connect.ConfigDef {
	return connect.NewConfigDef().Define(connect.ConfigKey{Name: "topic", Type: connect.TypeString, Importance: connect.High})
}
func (c spreadSource) Validate(map[string]string) []connect.ConfigError { return nil }
func (c spreadSource) TaskConfigs(cfg map[string]string, maxTasks int) ([]map[string]string, error) {
	var out []map[string]string
	for i := 0; i < maxTasks; i++ {
		tc := map[string]string{"topic": cfg["topic"], "task.index": strconv.Itoa(i)}
		out = append(out, tc)
	}
	return out, nil
}
func (c spreadSource) NewTask() connect.SourceTask { return &spreadTask{shared: c.shared} }

type spreadTask struct {
	shared *spreadShared
	index  int
}

func (t *spreadTask) Start(_ context.Context, _ connect.SourceTaskContext, cfg map[string]string) error {
	t.index, _ = strconv.Atoi(cfg["task.index"])
	if cfg["topic"] != "s" { // counts are kept for the connector on topic s only
		t.index = -1 - t.index
	}
	t.shared.mu.Lock()
	t.shared.starts[t.index]++
	t.shared.mu.Unlock()
	return nil
}

func (t *spreadTask) Poll(ctx context.Context) ([]*connect.SourceRecord, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(50 * time.Millisecond):
		return nil, nil
	}
}

func (t *spreadTask) Commit(context.Context, map[string]any, map[string]any) error { return nil }

func (t *spreadTask) Stop() error {
	t.shared.mu.Lock()
	t.shared.stops[t.index]++
	d := t.shared.stopDelay
	t.shared.mu.Unlock()
	time.Sleep(d)
	return nil
}

// rebalanceGroup is the group settings of these tests: heartbeats every
// 300 ms so that members notice a rebalance quickly.
func rebalanceGroup(group string, extra ...string) []string {
	return append([]string{"group.id", group, "heartbeat.interval.ms", "300", "session.timeout.ms", "6000"}, extra...)
}

// startSpreadWorker starts a worker with the test.SpreadSource plugin,
// listening (as its worker id) on listener; it joins the embedded broker
// at kafka, or starts it when embedded is set.
func startSpreadWorker(t *testing.T, kafka, listener string, embedded bool, shared *spreadShared, extra ...string) *Worker {
	t.Helper()
	plugins := connect.NewPlugins()
	plugins.RegisterSource("test.SpreadSource", func() connect.SourceConnector { return spreadSource{shared} })
	cfg := WorkerConfig{
		"data.dir":                 t.TempDir(),
		"embedded.kafka.listener":  kafka,
		"listeners":                "http://" + listener,
		"offset.flush.interval.ms": "100",
		"schema.registry.listener": "",
	}
	if !embedded {
		cfg["bootstrap.servers"] = kafka
	}
	for i := 0; i+1 < len(extra); i += 2 {
		cfg[extra[i]] = extra[i+1]
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	w, err := StartWorker(ctx, cfg, plugins, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// runningTasks returns the task indexes of connector name that h runs.
func runningTasks(h *Herder, name string) []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []int
	if rc := h.running[name]; rc != nil {
		for _, t := range rc.tasks {
			out = append(out, t.id.Task)
		}
	}
	sort.Ints(out)
	return out
}

// placement returns, per worker, the task indexes it runs, once every
// task of the connector runs exactly once over ws.
func placement(ws []*Worker, name string, tasks int) (map[*Worker][]int, bool) {
	out := map[*Worker][]int{}
	seen := map[int]int{}
	for _, w := range ws {
		out[w] = runningTasks(w.Herder, name)
		for _, i := range out[w] {
			seen[i]++
		}
	}
	if len(seen) != tasks {
		return out, false
	}
	for _, n := range seen {
		if n != 1 {
			return out, false
		}
	}
	return out, true
}

func waitPlacement(t *testing.T, ws []*Worker, name string, tasks int, ok func(map[*Worker][]int) bool) map[*Worker][]int {
	t.Helper()
	var p map[*Worker][]int
	deadline := time.Now().Add(15 * time.Second)
	for {
		var complete bool
		p, complete = placement(ws, name, tasks)
		if complete && (ok == nil || ok(p)) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("placement not reached: %v", describe(ws, p))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func describe(ws []*Worker, p map[*Worker][]int) string {
	s := ""
	for _, w := range ws {
		s += fmt.Sprintf("%s=%v ", w.Herder.WorkerID(), p[w])
	}
	return s
}

func sizes(ws []*Worker, p map[*Worker][]int) []int {
	var out []int
	for _, w := range ws {
		out = append(out, len(p[w]))
	}
	return out
}

// A third worker joining two that run a connector's 6 tasks gets its
// share (2) through Kafka Connect's incremental cooperative rebalance
// (KIP-415): the loaded workers stop only the tasks above the new ceiling
// (ceil(6/3) = 2, one each), the next round starts those on the new
// worker; the 4 other tasks keep running and are never restarted. While
// a rebalance is in progress Leader answers ErrRebalanceInProgress (the
// REST 409), and after it a write succeeds. Under connect.protocol=eager
// the same join stops and restarts every task (Kafka Connect before 2.3).
func TestCooperativeRebalanceMovesOnlyTheNewWorkersShare(t *testing.T) {
	for _, tc := range []struct {
		protocol string
		restarts int // tasks started twice by the join
	}{{ProtocolSessioned, 2}, {ProtocolEager, 6}} {
		t.Run(tc.protocol, func(t *testing.T) {
			kafka := freeAddr(t)
			shared := newSpreadShared()
			group := rebalanceGroup("coop-"+tc.protocol, "connect.protocol", tc.protocol)
			w1 := startSpreadWorker(t, kafka, freeAddr(t), true, shared, group...)
			defer w1.Close()
			w2 := startSpreadWorker(t, kafka, freeAddr(t), false, shared, group...)
			defer w2.Close()
			ctx := context.Background()
			if _, err := w2.Herder.CreateConnector(ctx, "spread", map[string]string{"connector.class": "test.SpreadSource", "topic": "s", "tasks.max": "6"}); err != nil {
				t.Fatal(err)
			}
			two := []*Worker{w1, w2}
			before := waitPlacement(t, two, "spread", 6, func(p map[*Worker][]int) bool { return len(p[w1]) == 3 })
			waitFor(t, func() bool {
				starts, _ := shared.counts()
				return len(starts) == 6
			})
			starts, _ := shared.counts()
			for i := 0; i < 6; i++ {
				if starts[i] != 1 {
					t.Fatalf("task %d started %d times before the join: %v", i, starts[i], starts)
				}
			}

			// Watch Leader() while the third worker joins. Tasks take 150 ms
			// to stop, so that an eager worker, which stops them all
			// before it rejoins, is seen rebalancing.
			shared.mu.Lock()
			shared.stopDelay = 150 * time.Millisecond
			shared.mu.Unlock()
			var saw409 bool
			stop := make(chan struct{})
			watched := make(chan struct{})
			go func() {
				defer close(watched)
				for {
					select {
					case <-stop:
						return
					default:
					}
					if _, _, err := w1.Herder.Leader(); errors.Is(err, ErrRebalanceInProgress) {
						saw409 = true
					}
					time.Sleep(2 * time.Millisecond)
				}
			}()
			joined := time.Now()
			w3 := startSpreadWorker(t, kafka, freeAddr(t), false, shared, group...)
			defer w3.Close()
			three := []*Worker{w1, w2, w3}
			after := waitPlacement(t, three, "spread", 6, func(p map[*Worker][]int) bool {
				if tc.protocol == ProtocolEager { // round-robin with the connector counted: 2/2/2 or 3/2/1 by member order
					return len(p[w1]) > 0 && len(p[w2]) > 0 && len(p[w3]) > 0
				}
				return len(p[w1]) == 2 && len(p[w2]) == 2 && len(p[w3]) == 2
			})
			t.Logf("%s: %s -> %s in %s", tc.protocol, describe(two, before), describe(three, after), time.Since(joined).Round(time.Millisecond))
			for _, w := range three {
				if err := w.Herder.AwaitStable(ctx, 10*time.Second); err != nil {
					t.Fatal(err)
				}
			}
			close(stop)
			<-watched
			// Under sessioned the rebalance windows last a few ms (nothing
			// is stopped before a join): seeing one is not asserted.
			t.Logf("Leader answered ErrRebalanceInProgress during the join: %v", saw409)
			if tc.protocol == ProtocolEager && !saw409 {
				t.Error("Leader never answered ErrRebalanceInProgress while the eager workers stopped their tasks")
			}

			// Each task runs once; under sessioned only the two moved
			// tasks were stopped and started again.
			time.Sleep(500 * time.Millisecond)
			starts, stops := shared.counts()
			restarted := 0
			for i := 0; i < 6; i++ {
				switch starts[i] {
				case 1:
					if stops[i] != 0 {
						t.Errorf("task %d stopped %d times but not restarted", i, stops[i])
					}
				case 2:
					restarted++
					if stops[i] != 1 {
						t.Errorf("task %d restarted, stopped %d times", i, stops[i])
					}
				default:
					t.Errorf("task %d started %d times", i, starts[i])
				}
			}
			if restarted != tc.restarts {
				t.Errorf("%d tasks restarted by the join, want %d (starts %v)", restarted, tc.restarts, starts)
			}
			// A write after the rebalance succeeds (no 409).
			if _, err := w3.Herder.CreateConnector(ctx, "other", map[string]string{"connector.class": "test.SpreadSource", "topic": "o", "tasks.max": "1"}); err != nil {
				t.Fatalf("write after the rebalance: %v", err)
			}
			if tc.protocol == ProtocolSessioned {
				for _, w := range two {
					for _, i := range after[w] {
						if !containsInt(before[w], i) {
							t.Errorf("task %d moved to %s, which already ran tasks", i, w.Herder.WorkerID())
						}
					}
				}
			}
		})
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// A worker that leaves has its tasks held for
// scheduled.rebalance.max.delay.ms (KIP-415; 3 s here, Kafka Connect's
// default is 300000): nobody runs them meanwhile, the group stays usable
// (a write succeeds), and when the worker is back within the delay it gets
// exactly its tasks when the delay ends, nothing else moving. When it does
// not come back, the delay ends with its tasks shared by the survivors.
func TestCooperativeRebalanceHoldsDepartedWorkersTasks(t *testing.T) {
	const delay = 3 * time.Second
	kafka := freeAddr(t)
	shared := newSpreadShared()
	group := rebalanceGroup("coop-delay", "scheduled.rebalance.max.delay.ms", strconv.Itoa(int(delay.Milliseconds())))
	w1 := startSpreadWorker(t, kafka, freeAddr(t), true, shared, group...)
	defer w1.Close()
	w2 := startSpreadWorker(t, kafka, freeAddr(t), false, shared, group...)
	defer w2.Close()
	addr3 := freeAddr(t)
	w3 := startSpreadWorker(t, kafka, addr3, false, shared, group...)
	defer func() { w3.Close() }()
	ctx := context.Background()
	if _, err := w1.Herder.CreateConnector(ctx, "spread", map[string]string{"connector.class": "test.SpreadSource", "topic": "s", "tasks.max": "6"}); err != nil {
		t.Fatal(err)
	}
	all := []*Worker{w1, w2, w3}
	before := waitPlacement(t, all, "spread", 6, func(p map[*Worker][]int) bool {
		return len(p[w1]) == 2 && len(p[w2]) == 2 && len(p[w3]) == 2
	})
	waitFor(t, func() bool { starts, _ := shared.counts(); return len(starts) == 6 })
	// The leader remembers the last round; the worker that leaves must
	// not be it (a new leader starts without that memory and places the
	// work at once, as Kafka Connect's does).
	for _, w := range []*Worker{w1, w2} {
		if err := w.Herder.AwaitStable(ctx, 10*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	if leader, _, _ := w3.Herder.Leader(); leader {
		t.Fatal("the worker that leaves leads the group")
	}
	held := before[w3]
	survivors := []*Worker{w1, w2}

	// w3 stops (SIGTERM-like: it leaves the group at once).
	w3.Close()
	left := time.Now()
	time.Sleep(time.Second)
	for _, w := range survivors {
		if got := runningTasks(w.Herder, "spread"); !equalInts(got, before[w]) {
			t.Fatalf("%s runs %v during the delay, before %v", w.Herder.WorkerID(), got, before[w])
		}
	}
	// The group is stable during the delay: a write succeeds.
	if err := w2.Herder.AwaitStable(ctx, 5*time.Second); err != nil {
		t.Fatalf("during the delay: %v", err)
	}
	if _, err := w2.Herder.CreateConnector(ctx, "probe", map[string]string{"connector.class": "test.SpreadSource", "topic": "p", "tasks.max": "1"}); err != nil {
		t.Fatalf("write during the delay: %v", err)
	}
	waitFor(t, func() bool { return len(runningTasks(w1.Herder, "probe"))+len(runningTasks(w2.Herder, "probe")) == 1 })
	if p, _ := placement(survivors, "spread", 6); len(p[w1])+len(p[w2]) != 4 {
		t.Fatalf("held tasks placed before the delay ended: %s", describe(survivors, p))
	}

	// w3 is back (same worker id) within the delay.
	w3 = startSpreadWorker(t, kafka, addr3, false, shared, group...)
	all = []*Worker{w1, w2, w3}
	back := waitPlacement(t, all, "spread", 6, nil)
	movedAfter := time.Since(left)
	t.Logf("held %v placed again %s after the leave: %s", held, movedAfter.Round(time.Millisecond), describe(all, back))
	if movedAfter < delay-200*time.Millisecond {
		t.Errorf("held tasks placed %s after the leave, before scheduled.rebalance.max.delay.ms=%s", movedAfter, delay)
	}
	if !equalInts(back[w3], held) || !equalInts(back[w1], before[w1]) || !equalInts(back[w2], before[w2]) {
		t.Fatalf("after the delay %s, before %s", describe(all, back), describe(all, before))
	}
	waitFor(t, func() bool {
		starts, _ := shared.counts()
		return starts[held[0]] == 2 && starts[held[1]] == 2
	})
	starts, stops := shared.counts()
	for _, w := range survivors {
		for _, i := range before[w] {
			if starts[i] != 1 || stops[i] != 0 {
				t.Errorf("task %d of %s: %d starts, %d stops", i, w.Herder.WorkerID(), starts[i], stops[i])
			}
		}
	}

	// w3 leaves for good: after the delay its tasks go to the survivors
	// (3 each), which keep what they ran.
	w3.Close()
	left = time.Now()
	final := waitPlacement(t, survivors, "spread", 6, nil)
	movedAfter = time.Since(left)
	t.Logf("after the delay %s: %s", movedAfter.Round(time.Millisecond), describe(survivors, final))
	if movedAfter < delay-200*time.Millisecond {
		t.Errorf("tasks of the departed worker placed after %s, before scheduled.rebalance.max.delay.ms=%s", movedAfter, delay)
	}
	if got := sizes(survivors, final); got[0] != 3 || got[1] != 3 {
		t.Errorf("survivors run %v tasks", got)
	}
	for _, w := range survivors {
		for _, i := range before[w] {
			if !containsInt(final[w], i) {
				t.Errorf("task %d left %s", i, w.Herder.WorkerID())
			}
		}
	}
	starts, stops = shared.counts()
	for _, w := range survivors {
		for _, i := range before[w] {
			if starts[i] != 1 || stops[i] != 0 {
				t.Errorf("task %d of %s: %d starts, %d stops", i, w.Herder.WorkerID(), starts[i], stops[i])
			}
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
