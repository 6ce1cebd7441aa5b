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
// Sink tasks (sink_task.go, sink_herder.go, sink_errors.go; Kafka
// Connect's WorkerSinkTask): one goroutine owns the task and its consumer
// (group connect-<connector>, BlockRebalanceOnPoll, so partitions move
// only between polls). Each poll is converted, transformed and handed to
// SinkTask.Put; a RetriableException redelivers the same records. Consumer
// offsets are committed only after SinkTask.Flush returned nil for every
// record put before them (invariant 1 for sinks), on the offset flush
// interval, on partition revocation and at a clean stop; never after a
// failure. errors.tolerance/log/deadletterqueue apply to records that fail
// conversion or a transformation, and to those the task reports through
// connect.ErrantRecordReporter.
//
// Embedded broker crash recovery (package broker, recovery.go): a SIGKILL kills the
// broker with the worker; at the next start, before the herder reads any
// topic, the broker ends every transaction the crash left open with the
// control record Kafka's transaction coordinator would write (COMMIT when
// its commit had begun in another partition, ABORT otherwise) and replays
// its log, so exactly-once source support holds across SIGKILLs.
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
//
// Distributed mode (group.go, assignment.go, assignment_cooperative.go):
// every worker is a member of the Kafka group group.id, joined through
// franz-go's group client (a consumer group subscribed to the config
// topic, consuming nothing) with our own balancers, protocols
// "connectd-sessioned", "connectd-compatible" and "connectd-v1" (eager),
// offered by connect.protocol as Kafka Connect's sessioned/compatible/
// default. The protocol type is Kafka Connect's "connect" (tools show a
// Connect worker group), but Kafka Connect's protocols are not spoken:
// the broker refuses a Java Kafka Connect worker in a connectd group
// (INCONSISTENT_GROUP_PROTOCOL), so they cannot share a group.id. A member's JoinGroup
// metadata is its REST URL, its config topic position and what it runs;
// the leader reads the config topic to its end and assigns every
// connector and task. Under the cooperative protocols (KIP-415) work stays
// with its live owner; work of a member that left is held unassigned for
// scheduled.rebalance.max.delay.ms (the leader rebalances when it ends and
// gives it to members that joined empty meanwhile, else to the least
// loaded); new work goes to the least loaded; a member that joins empty
// gets its share after the loaded members were revoked their excess and
// rejoined once they stopped it. Under eager every member stops all its
// work before it rejoins and the leader places everything round-robin.
// Each member's assignment carries the leader's URL and the whole
// placement. A member applies its assignment after reading the config
// topic as far as the leader had: it stops the tasks it lost (final
// offset flush included) and starts those it gained; a member whose
// session expired (onLost) stops everything. Because work moves only
// away from members that left or after its owner stopped it, one task
// never runs on two live members; under exactly-once a new task instance
// also fences the old one.
// The leader forces a rebalance when the config topic's work (connectors,
// committed task counts) differs from what the current assignment places.
// Statuses are written by the worker that runs the connector or task
// (worker_id = its REST host:port) with the group generation, and a
// stale one loses as in KafkaStatusBackingStore (status_generation.go). Session
// timeout, heartbeat and rebalance timeout are Kafka Connect's worker
// properties and defaults. On the embedded broker the group has this one
// member and the same path runs. The REST layer forwards config writes to
// the leader (rest/forward.go); a worker that has no current assignment
// answers 409. Restart requests travel as restart-connector-<c> records in
// the config topic (restart.go, KIP-745): each worker restarts the parts it
// runs.
//
// Connector configs as the worker uses them: config provider variables
// (${file:…}, ${dir:…}, ${env:…}; config_provider.go) are resolved when a
// config is validated or given to a connector or task, never written
// resolved (task configs are reverse-transformed before they are stored);
// producer.override.* / admin.override.* are checked against
// connector.client.config.override.policy and give a task its own producer
// (client_overrides.go); topic.creation.* groups decide the partitions,
// replication factor and configs of the topics a task creates
// (topic_creation.go, KIP-158).
//
// Kafka client security (kafka_security.go): security.protocol,
// sasl.mechanism (PLAIN, SCRAM-SHA-256/512), sasl.jaas.config and ssl.*
// from the worker properties; the internal clients read the unprefixed
// keys, the tasks' producers producer.*, topic creation admin.*. The
// worker checks them with one metadata request before opening the
// internal topics, so a wrong password is a start error, not a silent
// retry loop. The embedded broker can require SASL/TLS itself
// (package broker, embedded.kafka.security.protocol and friends).
package runtime
