// Package registry is a Confluent Schema Registry–compatible server for Avro
// schemas: Confluent's REST paths, request and response bodies and error
// codes (https://docs.confluent.io/platform/current/schema-registry/develop/api.html),
// compatibility levels checked with hamba/avro's SchemaCompatibility, and
// storage in the compacted `_schemas` topic in Confluent's record layout
// (keys {"keytype":"SCHEMA","subject":...,"version":N,"magic":1}, values
// {"subject","version","id","schema","deleted"}; CONFIG, MODE and
// DELETE_SUBJECT records), so that a Confluent registry pointed at the same
// topic reads our schemas and the other way round.
//
// Invariants:
//   - A registry answers only after it has read `_schemas` to the end
//     (Open blocks until then), so ids are global and stable across
//     restarts and several workers share one registry.
//   - A write is acknowledged (acks=all) and read back from the topic before
//     the request that caused it is answered: the in-memory state is only
//     ever built from the topic (Confluent's KafkaStore does the same).
//   - A schema id, once given to a schema text, is never given to another
//     text. Identical schema texts share one id across subjects (IMPORT
//     mode excepted, where the request names the id).
//   - No leader: several registries (workers) on one topic write
//     optimistically and read back; state.apply refuses, identically for
//     every reader, a SCHEMA record that loses an id or a live (subject,
//     version) to an earlier record, and the refused key is
//     rewritten with the accepted value so that compaction keeps it.
//     Confluent elects a leader instead; the outcome (unique ids, one id
//     per schema) is the same (TestConcurrentRegistriesShareOneTopic).
//     Not covered: a registry that dies between a refused write and its
//     repair leaves the repair to the next write or Open of any registry.
package registry
