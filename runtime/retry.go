package runtime

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// retryPolicy says whether and when a task that failed with a retriable
// error is started again. Two layers, as on Kafka Connect with Debezium:
//
//   - a failure inside the connector (SourceTask.Start or Poll: the
//     database connection was lost) follows Debezium's policy: the task
//     restarts itself after retriable.restart.connector.wait.ms (default
//     10000), up to errors.max.retries times (default -1 = no limit, 0 =
//     never), and resumes from the last committed offset. Debezium waits a
//     constant delay; we double it on each consecutive failure up to
//     errors.retry.delay.max.ms, so that a long outage is not polled every
//     10 s forever.
//   - a failure in the worker's part (converters, producing) follows Kafka
//     Connect's errors.retry.timeout (default 0 = fail at once, -1 = no
//     limit): retried with a delay starting at 300 ms and doubling up to
//     errors.retry.delay.max.ms while the time since the first failure is
//     below the timeout (RetryWithToleranceOperator).
//
// The failure streak (attempt count and start time) is reset when a
// restarted task makes progress (a record acknowledged by Kafka).
type retryPolicy struct {
	maxRetries   int           // errors.max.retries; -1 = unlimited
	connWait     time.Duration // retriable.restart.connector.wait.ms
	retryTimeout time.Duration // errors.retry.timeout; <0 = unlimited, 0 = none
	maxDelay     time.Duration // errors.retry.delay.max.ms
}

// frameworkInitialDelay is Kafka Connect's RetryWithToleranceOperator
// first backoff (RETRIES_DELAY_MIN_MS).
const frameworkInitialDelay = 300 * time.Millisecond

// retryPolicyOf reads the policy from a connector or task config.
// Unparsable values fall back to the defaults (validation reports them).
func retryPolicyOf(cfg map[string]string) retryPolicy {
	ms := func(key string, def int64) int64 {
		if v, ok := cfg[key]; ok {
			if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
				return n
			}
		}
		return def
	}
	p := retryPolicy{
		maxRetries:   int(ms("errors.max.retries", -1)),
		connWait:     time.Duration(ms("retriable.restart.connector.wait.ms", 10000)) * time.Millisecond,
		retryTimeout: time.Duration(ms("errors.retry.timeout", 0)) * time.Millisecond,
		maxDelay:     time.Duration(ms("errors.retry.delay.max.ms", 60000)) * time.Millisecond,
	}
	if p.connWait < 0 {
		p.connWait = 0
	}
	if p.maxDelay <= 0 {
		p.maxDelay = 60 * time.Second
	}
	return p
}

// next decides about the attempt-th consecutive failure (1 = first) with
// err at stage, first failing at since. It returns the delay before the
// next start, or ok=false when the task must fail.
func (p retryPolicy) next(stage Stage, attempt int, since, now time.Time) (delay time.Duration, ok bool) {
	if stage.connectorStage() {
		if p.maxRetries >= 0 && attempt > p.maxRetries {
			return 0, false
		}
		return backoff(p.connWait, attempt, p.maxDelay), true
	}
	if p.retryTimeout == 0 {
		return 0, false
	}
	delay = backoff(frameworkInitialDelay, attempt, p.maxDelay)
	if p.retryTimeout > 0 && now.Add(delay).Sub(since) > p.retryTimeout {
		return 0, false
	}
	return delay, true
}

// backoff is initial doubled attempt-1 times, capped at max (and never
// below initial when initial exceeds max).
func backoff(initial time.Duration, attempt int, max time.Duration) time.Duration {
	d := initial
	for i := 1; i < attempt && d < max; i++ {
		d *= 2
	}
	if d > max && initial <= max {
		d = max
	}
	return d
}

// describe is the status trace while a task waits to be restarted.
func (p retryPolicy) describe(stage Stage, attempt int, delay time.Duration, err error) string {
	limit := "unlimited"
	if stage.connectorStage() && p.maxRetries >= 0 {
		limit = strconv.Itoa(p.maxRetries)
	} else if !stage.connectorStage() && p.retryTimeout > 0 {
		limit = "within errors.retry.timeout=" + p.retryTimeout.String()
	}
	return fmt.Sprintf("Retriable error in stage %s, restarting the task in %s (retry %d of %s): %v", stage, delay, attempt, limit, err)
}

// exhausted is the status trace when the retries are used up.
func (p retryPolicy) exhausted(stage Stage, attempt int, err error) string {
	if attempt <= 1 {
		return err.Error()
	}
	return fmt.Sprintf("Retries exhausted after %d attempt(s) (stage %s): %v", attempt-1, stage, err)
}
