package runtime

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/transforms"
)

// startSinkTask runs a sink connector's task under the herder (called by
// startTask once the task's config and converters are resolved). Status
// and restarts follow the source tasks': RUNNING/PAUSED at start, FAILED
// with the cause as trace, RESTARTING with backoff after a retriable
// failure (retry.go).
func (h *Herder) startSinkTask(ctx context.Context, rt *runningTask, id TaskID, conn connect.SinkConnector, cfg, connCfg map[string]string, keyConv, valConv connect.Converter, logger *slog.Logger, fail func(error)) {
	policy := retryPolicyOf(cfg)
	newWorker := func() (*workerSinkTask, error) {
		chain, err := transforms.NewChain(connCfg)
		if err != nil {
			return nil, err
		}
		errs, err := newSinkErrorHandler(id, connCfg, h.producer, logger)
		if err != nil {
			return nil, err
		}
		return &workerSinkTask{
			id: id, task: conn.NewTask(), cfg: cfg, connCfg: connCfg, keyConv: keyConv, valConv: valConv, chain: chain,
			brokers: h.brokers, flushInt: h.flushInt, log: logger, gate: rt.gate, errs: errs, maxDelay: policy.maxDelay,
			setState: func(state, trace string) { h.putStatus(taskStatusKey(id), state, trace) },
		}, nil
	}
	state := StateRunning
	if rt.gate.isPaused() {
		state = StatePaused
	}
	h.putStatus(taskStatusKey(id), state, "")
	go func() {
		defer close(rt.done)
		attempt := 0
		var since time.Time
		for {
			w, err := newWorker()
			if err != nil {
				fail(err)
				return
			}
			err = w.run(ctx)
			if err == nil || ctx.Err() != nil {
				return
			}
			if w.progressed.Load() {
				attempt = 0
			}
			stage := StageTaskPut
			var te *TaskError
			if errors.As(err, &te) {
				stage = te.Stage
			}
			if !IsRetriable(err) || (stage == StageTaskStart && attempt == 0) {
				fail(err)
				return
			}
			attempt++
			if attempt == 1 {
				since = time.Now()
			}
			delay, ok := policy.next(stage, attempt, since, time.Now())
			if !ok {
				fail(errors.New(policy.exhausted(stage, attempt, err)))
				return
			}
			h.log.Warn("sink task will be restarted after a retriable error", "task", id, "stage", stage, "retry", attempt, "delay", delay, "err", err)
			h.putStatus(taskStatusKey(id), StateRestarting, policy.describe(stage, attempt, delay, err))
			t := time.NewTimer(delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}()
}
