// Package flinklite is an embedded, single-process stream processor with
// Flink's DataStream semantics: typed streams (generics) from sources
// through Map/Filter/FlatMap, KeyBy, event-time windows (tumbling, sliding,
// session) with Aggregate, or KeyedProcess functions with keyed state and
// event-time timers, to sinks.
//
// Invariants:
//   - A job runs on one goroutine (the caller of Input.Emit / Env.Tick, or
//     Env.Run for Kafka jobs): operators hold no locks.
//   - Watermarks are monotonic frontiers: the watermark an operator sees
//     never decreases (as Flink's StatusWatermarkValve and cockroach's
//     span frontier). A source's watermark is the minimum over its active
//     partitions of (max event time seen − maxOutOfOrderness − 1 ms), as
//     Flink's BoundedOutOfOrdernessWatermarks; a partition idle for longer
//     than the idleness timeout is left out of the minimum (Flink's
//     WatermarkStrategy.withIdleness).
//   - Time is read only from the injected Clock (processing time: idleness,
//     state TTL, checkpoint interval); event time only from the records.
//   - Elements carry a retract flag (Flink's RowKind UPDATE_BEFORE/DELETE):
//     a Debezium update is a retraction of the old row plus an insertion of
//     the new one, a delete a retraction, so retract-aware aggregates stay
//     correct over a CDC table.
//   - Records later than a window's allowed lateness go to the window's late
//     side output; they are never dropped without being counted.
//   - A checkpoint is the state of every operator plus the input offsets,
//     written atomically (temp file, fsync, rename); with a transactional
//     Kafka sink the checkpoint is committed by the Kafka transaction that
//     carries its results (see Env.Run in kafka.go).
//
// Scale-out (RunScaledOut in scaleout.go): the workers running a job with
// the same id form a Kafka consumer group over its input topics, and each
// runs one instance of the job per partition it is assigned. Key groups
// are the input partitions: the job must key by the key the topic is
// partitioned by (a Debezium topic's primary key). Each partition's
// checkpoint (state and next offset) is a record of the compacted topic
// "<job>.state" produced in the transaction of that partition's results,
// under a per-partition transactional.id, so the worker that gets the
// partition after a rebalance fences the previous owner, then reads the
// partition's last committed state from Kafka (not from data.dir). A job
// keyed otherwise runs as two such stages joined by a shuffle topic
// (shuffle.go): ToKafkaShuffle writes each upstream instance's rows by key
// and its watermark and watermark status to every partition, in its
// transaction; ShuffleWatermarks makes a downstream partition's watermark
// the minimum over the upstream instances not idle (Flink's network
// shuffle and StatusWatermarkValve), checkpointed with the partition.
package flinklite
