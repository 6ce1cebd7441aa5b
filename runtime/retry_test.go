package runtime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/twmb/franz-go/pkg/kerr"
)

type sqlStateErr string

func (e sqlStateErr) Error() string    { return "pg error " + string(e) }
func (e sqlStateErr) SQLState() string { return string(e) }

func TestIsRetriable(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("postgres: connect: %w", refused), true},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{fmt.Errorf("postgres: replication stream: %w", io.ErrUnexpectedEOF), true},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), true},
		{fmt.Errorf("x: %w", sqlStateErr("57P01")), true}, // admin_shutdown
		{fmt.Errorf("x: %w", sqlStateErr("08006")), true}, // connection_failure
		{&connect.RetriableError{Err: errors.New("try again")}, true},
		{&TaskError{Stage: StageKafkaProduce, Err: kerr.NotLeaderForPartition}, true},
		{fmt.Errorf("x: %w", sqlStateErr("42P01")), false}, // undefined_table
		{errors.New("schema rejected"), false},
		{fmt.Errorf("x: %w", context.Canceled), false},
		{kerr.TopicAuthorizationFailed, false},
	} {
		if got := IsRetriable(tc.err); got != tc.want {
			t.Errorf("IsRetriable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestRetryPolicy(t *testing.T) {
	p := retryPolicyOf(map[string]string{})
	if p.maxRetries != -1 || p.connWait != 10*time.Second || p.retryTimeout != 0 || p.maxDelay != time.Minute {
		t.Fatalf("defaults: %+v", p)
	}
	now := time.Now()
	var got []time.Duration
	for a := 1; a <= 5; a++ {
		d, ok := p.next(StageTaskPoll, a, now, now)
		if !ok {
			t.Fatalf("attempt %d refused with unlimited retries", a)
		}
		got = append(got, d)
	}
	if fmt.Sprint(got) != "[10s 20s 40s 1m0s 1m0s]" {
		t.Fatalf("connector backoff %v", got)
	}
	// Kafka Connect's default errors.retry.timeout=0: a worker-side failure is not retried.
	if _, ok := p.next(StageKafkaProduce, 1, now, now); ok {
		t.Fatal("errors.retry.timeout=0 retried")
	}
	p = retryPolicyOf(map[string]string{"errors.max.retries": "2", "errors.retry.timeout": "1000", "errors.retry.delay.max.ms": "500"})
	if _, ok := p.next(StageTaskStart, 3, now, now); ok {
		t.Fatal("errors.max.retries=2 allowed a third retry")
	}
	if d, ok := p.next(StageKafkaProduce, 2, now, now.Add(100*time.Millisecond)); !ok || d != 500*time.Millisecond {
		t.Fatalf("framework retry: %v %v", d, ok)
	}
	if _, ok := p.next(StageKafkaProduce, 3, now, now.Add(900*time.Millisecond)); ok {
		t.Fatal("retried beyond errors.retry.timeout")
	}
}

// A task whose poll fails with a retriable error is RESTARTING with the
// cause, then started again as a fresh instance that resumes from the last
// committed offset: no record is lost or repeated.
func TestHerderRestartsTaskAfterRetriableError(t *testing.T) {
	shared := &counterShared{pollErr: fmt.Errorf("read tcp: %w", syscall.ECONNRESET)}
	w := startTestWorker(t, t.TempDir(), freeAddr(t), shared)
	defer w.Close()
	ctx := context.Background()
	if _, err := w.Herder.CreateConnector(ctx, "c1", map[string]string{"connector.class": "test.CounterSource", "topic": "t1", "count": "250",
		"retriable.restart.connector.wait.ms": "1500"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		st, _ := w.Herder.ConnectorStatus("c1")
		return len(st.Tasks) == 1 && st.Tasks[0].State == StateRestarting &&
			contains(st.Tasks[0].Trace, "connection reset by peer") && contains(st.Tasks[0].Trace, "retry 1 of unlimited")
	})
	got := consumeAll(t, w.Brokers[0], "t1", 350) // 0..99, then 250 more from offset 100
	for i, v := range got {
		if want := fmt.Sprintf(`{"schema":{"type":"string","optional":false},"payload":"record-%d"}`, i); v != want {
			t.Fatalf("record %d = %s, want %s", i, v, want)
		}
	}
	waitFor(t, func() bool {
		st, _ := w.Herder.ConnectorStatus("c1")
		return st.Tasks[0].State == StateRunning && st.Tasks[0].Trace == ""
	})
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.starts != 2 {
		t.Fatalf("task started %d times, want 2", shared.starts)
	}
}
