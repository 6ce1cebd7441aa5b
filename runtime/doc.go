// Package runtime is the connectd worker: the embedded broker, the herder
// (connector configs in the config topic, statuses in the status topic,
// source offsets in the offsets topic, all in Kafka Connect's formats), and
// the connector and task lifecycle.
//
// Concurrency: the herder owns connector state under one mutex; the config
// log's tail goroutine feeds changes to a single reconcile goroutine, which
// starts and stops connectors. Each source task has one poll goroutine (the
// owner of the task) and one flusher goroutine; the flusher persists the
// committable offsets and only then calls SourceTask.Commit, so a source
// confirms a position upstream only after Kafka acknowledged every record
// up to it and the offset is durable (DESIGN.md section 3, invariant 1).
//
// Target states (config topic target-state-<c>, Kafka Connect's format):
// STARTED runs the tasks; PAUSED keeps them started but parks their poll
// loops (pause.go), so they resume where they were; STOPPED (KIP-875) is
// written together with an empty task set, shuts the tasks down after a
// final offset flush, and is the only state in which offsets may be
// altered or reset. Task configs take effect on their commit record only;
// tasks restart when their committed configs change.
//
// Retries (retry.go, errors.go): a task failure is a *TaskError naming its
// stage; IsRetriable classifies the cause (connection refused/reset,
// timeouts, SQLSTATE 08xxx/57P0x, retriable Kafka errors,
// *connect.RetriableError). A retriable failure while streaming restarts
// the task as a fresh instance that resumes from the last committed
// offset, after a backoff, with status RESTARTING and the cause as trace:
// Debezium's errors.max.retries / retriable.restart.connector.wait.ms for
// the connector's stages, Kafka Connect's errors.retry.timeout for the
// worker's. A failure of the first Start fails the task (Debezium's
// startup errors).
//
// Exactly-once source (source_task_eos.go, KIP-618): with the worker's
// exactly.once.source.support=enabled each task owns a transactional
// producer (transactional.id <group.id>-<connector>-<task>), initialised
// before the task reads its offsets so that zombies are fenced; each
// polled batch and its offsets go to Kafka in one transaction, and
// SourceTask.Commit follows the commit. The offsets topic is read with
// read_committed.
package runtime
