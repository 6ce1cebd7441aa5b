// Package job runs flinklite jobs written as JSON (Spec) without Go: a
// spec is validated field by field (SpecInvalidError, REST 400), compiled
// onto the flinklite Go API (Compile: Kafka source, debezium-json or json
// decoding, watermarks, filter, map, keyBy, window, retracting
// aggregates, exactly-once Kafka sink, PostgreSQL or MySQL/MariaDB upsert
// sink, late side output), and run by a Manager that persists it in
// data.dir (or, on a distributed worker, in a Kafka topic shared by the
// workers, which all run it scaled out), restarts it after failures and
// with the worker, and takes savepoints asynchronously (Flink's trigger id
// and status).
//
// Invariants:
//   - A spec compiles to the same job graph (operator ids) every time, so
//     its checkpoints and savepoints restore into the next run.
//   - Numbers stay exact: integers are int64 and decimals (Kafka Connect
//     Decimal, Debezium VariableScaleDecimal, decimal literals of JSON
//     records) Decimal through filter, map, sum, min, max and avg (int64
//     overflow becomes a Decimal; only floats are float64), and are written
//     as their digits to Kafka (JSON numbers) and to numeric columns.
//   - Row values keep their kind through a checkpoint (Row's JSON tags
//     decimals and writes floats with a fraction), so a row is equal before
//     and after a restore, and a retraction finds the value it retracts.
//   - A local job's state is its worker's local files (data.dir/jobs/<id>):
//     the REST requests are served by the worker that holds the job, never
//     forwarded to the leader.
//   - On a distributed worker (NewDistributedManager, distributed.go) the
//     specs are records of a compacted topic and every worker runs every
//     job with flinklite.RunScaledOut: state per input partition, in
//     Kafka. Rows of one keyBy value meet in one partition instance: the
//     job repartitions them through "<job>.repartition" unless keyBy is
//     the input key (Spec.Source.Key), which each record is checked for.
//     The repartition stage forwards each source partition's watermark
//     and idle status through that topic (flinklite.ToKafkaShuffle), and
//     the window stage's watermark is their minimum over the source
//     partitions not idle (flinklite.ShuffleWatermarks), as in local
//     mode: a lagging source partition holds it back.
package job
