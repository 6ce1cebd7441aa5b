package flinklite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// PartitionJob builds, on env, one input partition's instance of a
// scaled-out job: in is the stream of that Kafka partition's records. It is
// called each time a worker is assigned a partition and must build the
// same graph every time (operator ids are positional, as in a checkpoint).
type PartitionJob func(env *Env, in *Stream[Message]) error

// ScaleOutConfig configures RunScaledOut.
type ScaleOutConfig struct {
	// JobID is the consumer group id shared by the workers running the
	// job, the prefix of each partition's transactional.id
	// ("<JobID>/<topic>/<partition>") and of the state topic
	// "<JobID>.state".
	JobID   string
	Brokers []string
	// Topics are the input topics; their partitions are the unit of
	// parallelism and of state (Flink's key groups).
	Topics []string
	// CheckpointInterval is Flink's execution.checkpointing.interval
	// (default 10 s), per partition.
	CheckpointInterval time.Duration
	// PollTimeout bounds one poll of a partition (default 100 ms).
	PollTimeout time.Duration
	// SessionTimeout is the consumer group's session.timeout.ms: how long
	// a worker that stopped heartbeating keeps its partitions (default
	// 10 s; Kafka's default is 45 s).
	SessionTimeout time.Duration
	// ClientOpts are extra franz-go options (SASL, TLS) for every client.
	ClientOpts []kgo.Opt
	// OnAssigned, if set, is called from the partition's goroutine when
	// this worker has restored a partition it was assigned: checkpoint is
	// the id of the restored checkpoint, 0 when the partition starts from
	// its first offset.
	OnAssigned func(topic string, partition int32, checkpoint int64)
	// OnStarted, if set, is called (under the worker's lock, so briefly)
	// when this worker starts the instance of a partition it was assigned,
	// with the instance's Env (for Env.Status), and OnStopped when that
	// instance ended (revoked, lost, failed or stopped).
	OnStarted func(topic string, partition int32, env *Env)
	OnStopped func(topic string, partition int32)
	// MemberClientID, if set, is the client.id of this worker's group
	// member, which Kafka's DescribeGroups shows next to the member's
	// partitions (e.g. the worker's REST address).
	MemberClientID string

	// crash, when closed, simulates a killed worker in tests: every
	// partition is abandoned mid-transaction (no checkpoint, producers
	// left open); the group member neither leaves nor is closed until ctx
	// is done, and crashed is told its member id (so that a test can cut
	// its heartbeats and let the session time out, as for a dead process).
	crash   <-chan struct{}
	crashed func(memberID string)
	// beforeCommit, if set, is each partition's Env.beforeCommit (tests).
	beforeCommit func(env *Env, checkpoint int64)
}

// partitionTask is one assigned partition's instance of the job.
type partitionTask struct {
	env     *Env
	cancel  context.CancelFunc
	done    chan struct{}
	stopped bool // stopped by the worker (revoke, stop), not failed
}

// RunScaledOut runs one worker of a job whose input partitions are spread
// across all the workers running it with the same JobID, by a Kafka
// consumer group: each worker runs, for each partition it is assigned, an
// instance of the job built by build, which restores that partition's
// state from Kafka and then runs as Env.Run with exactly-once output.
//
// Design (Kafka Streams' tasks with a per-task producer, applied to
// Flink's key groups):
//   - The unit of state is the input partition: key groups are the
//     partitions, so a keyed operator must key its input by a key the
//     producer partitioned the topic by (a Debezium topic is partitioned by
//     the row's primary key; a job keyed otherwise needs the topic
//     repartitioned by its key first). A key seen on two partitions has two
//     independent states, whose results are not combined.
//   - Each partition's checkpoint (operator state and next offset) is a
//     record of the compacted topic "<JobID>.state", keyed by the
//     partition's job id, produced in the same Kafka transaction as that
//     partition's results: Kafka, not data.dir, holds the state, so the
//     worker that gets the partition after a rebalance reads it.
//   - Each partition has its own transactional.id. The new owner takes it
//     before reading the state topic: this fences the previous owner and
//     aborts its open transaction, so the committed checkpoint it reads is
//     exactly the one whose results a read_committed consumer sees.
//   - Partitions move with the cooperative-sticky assignor: a revoked
//     partition takes a final checkpoint before the rebalance completes; a
//     lost one (the worker died) is replayed from its last checkpoint.
//
// The group is used for assignment only (offsets are the checkpoints',
// never committed to the group). A partition's state must fit in one Kafka
// record (the broker's message.max.bytes, 1 MiB by default); savepoints
// are not supported in this mode. RunScaledOut returns nil after ctx is
// done and every partition took its final checkpoint, or the first error
// of a partition.
func RunScaledOut(ctx context.Context, cfg ScaleOutConfig, build PartitionJob) error {
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 10 * time.Second
	}
	stateTopic := cfg.JobID + ".state"
	var (
		mu    sync.Mutex
		tasks = map[topicPartition]*partitionTask{}
		errc  = make(chan error, 1)
	)
	report := func(err error) {
		select {
		case errc <- err:
		default:
		}
	}
	start := func(tp topicPartition) {
		env := NewEnv()
		if err := build(env, newPartitionSource(env, tp)); err != nil {
			report(fmt.Errorf("flinklite: building the job for %s/%d: %w", tp.topic, tp.part, err))
			return
		}
		if cfg.beforeCommit != nil {
			env.beforeCommit = func(id int64) { cfg.beforeCommit(env, id) }
		}
		tctx, cancel := context.WithCancel(ctx)
		t := &partitionTask{env: env, cancel: cancel, done: make(chan struct{})}
		tasks[tp] = t
		rc := RunConfig{
			JobID: fmt.Sprintf("%s/%s/%d", cfg.JobID, tp.topic, tp.part), Brokers: cfg.Brokers,
			CheckpointInterval: cfg.CheckpointInterval, PollTimeout: cfg.PollTimeout, ClientOpts: cfg.ClientOpts,
			markerTopic: stateTopic, stateInMarker: true,
		}
		if cfg.OnAssigned != nil {
			rc.onRestored = func(id int64) { cfg.OnAssigned(tp.topic, tp.part, id) }
		}
		if cfg.OnStarted != nil {
			cfg.OnStarted(tp.topic, tp.part, env)
		}
		go func() {
			defer close(t.done)
			if cfg.OnStopped != nil {
				defer cfg.OnStopped(tp.topic, tp.part)
			}
			err := env.Run(tctx, rc)
			mu.Lock()
			stopped := t.stopped
			mu.Unlock()
			if err != nil && !stopped && !errors.Is(err, errAbandoned) {
				report(fmt.Errorf("flinklite: partition %s/%d: %w", tp.topic, tp.part, err))
			}
		}()
	}
	// stop ends the tasks of m (all when m is nil) and waits for them: a
	// cancelled task takes its final checkpoint, an abandoned one returns
	// at once.
	stop := func(m map[string][]int32, abandon bool) {
		mu.Lock()
		var wait []*partitionTask
		for tp, t := range tasks {
			if m != nil && !containsPartition(m[tp.topic], tp.part) {
				continue
			}
			t.stopped = true
			if abandon {
				t.env.abandoned.Store(true)
			}
			t.cancel()
			wait = append(wait, t)
			delete(tasks, tp)
		}
		mu.Unlock()
		for _, t := range wait {
			<-t.done
		}
	}
	var crashed atomic.Bool
	var member []kgo.Opt
	if cfg.MemberClientID != "" {
		member = append(member, kgo.ClientID(cfg.MemberClientID))
	}
	group, err := kgo.NewClient(append(append([]kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumerGroup(cfg.JobID),
		kgo.ConsumeTopics(cfg.Topics...),
		kgo.DisableAutoCommit(),
		kgo.SessionTimeout(cfg.SessionTimeout),
		kgo.Balancers(kgo.CooperativeStickyBalancer()),
		kgo.OnPartitionsAssigned(func(_ context.Context, _ *kgo.Client, m map[string][]int32) {
			mu.Lock()
			defer mu.Unlock()
			for t, ps := range m {
				for _, p := range ps {
					if tasks[topicPartition{t, p}] == nil {
						start(topicPartition{t, p})
					}
				}
			}
		}),
		kgo.OnPartitionsRevoked(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { stop(m, crashed.Load()) }),
		kgo.OnPartitionsLost(func(_ context.Context, _ *kgo.Client, m map[string][]int32) { stop(m, true) }),
	}, cfg.ClientOpts...), member...)...)
	if err != nil {
		return err
	}
	// The member only takes part in the assignment: the partitions' own
	// clients read the records from their checkpointed offsets.
	group.PauseFetchTopics(cfg.Topics...)
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	case <-cfg.crash:
		crashed.Store(true)
		stop(nil, true)
		if cfg.crashed != nil {
			member, _ := group.GroupMetadata()
			cfg.crashed(member)
		}
		go func() {
			<-ctx.Done()
			group.Close()
		}()
		return errAbandoned
	}
	// Leaving the group revokes every partition: each takes its final
	// checkpoint before Close returns.
	group.Close()
	stop(nil, false)
	if runErr == nil {
		select {
		case runErr = <-errc:
		default:
		}
	}
	return runErr
}

// InputPartition returns the Kafka partition whose records the job reads
// when env is a partition instance built by RunScaledOut's PartitionJob
// (ok false otherwise), e.g. to name the instance as the producer of a
// shuffle (ShuffleConfig.Producer).
func (e *Env) InputPartition() (topic string, partition int32, ok bool) {
	if e.scaledOut == nil {
		return "", 0, false
	}
	return e.scaledOut.topic, e.scaledOut.part, true
}

func containsPartition(ps []int32, p int32) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// newPartitionSource returns the stream of the records of one Kafka
// partition, the single input partition of a scaled-out job's instance.
func newPartitionSource(env *Env, tp topicPartition) *Stream[Message] {
	src := &kafkaSource{index: map[topicPartition]int{tp: 0}, parts: []topicPartition{tp}, next: []int64{-1}}
	src.in = NewInput[Message](env, 1)
	env.sources = append(env.sources, src)
	env.scaledOut = &tp
	return src.in.Stream()
}
