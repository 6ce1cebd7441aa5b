// Package transforms holds connectd's single message transforms (SMTs) and
// predicates, under the class names and with the options of Kafka Connect
// (org.apache.kafka.connect.transforms.*) and Debezium (io.debezium.transforms.*),
// one file per class.
//
// A Chain is built from a connector config written in Kafka Connect's syntax:
//
//	transforms=unwrap,route
//	transforms.unwrap.type=io.debezium.transforms.ExtractNewRecordState
//	transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter
//	transforms.route.regex=([^.]+)\.([^.]+)\.([^.]+)
//	transforms.route.replacement=$3
//	transforms.route.predicate=isCustomers
//	transforms.route.negate=false
//	predicates=isCustomers
//	predicates.isCustomers.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches
//	predicates.isCustomers.pattern=.*customers
//
// Invariants: a transformation never modifies the record it is given when it
// returns another one (records may be shared with the offset bookkeeping),
// and it never changes SourcePartition/SourceOffset, so a dropped or
// rerouted record still acknowledges its position. A nil record returned by
// any step ends the chain: the record is dropped (its offset is still
// committed by the worker, as Kafka Connect does for filtered records).
//
// Tests: each class has golden outputs under testdata/transforms citing the
// reference documentation per case; the Debezium classes' cases are also
// compared with the output of the real Debezium 3.6.1 classes
// (testdata/transforms/reference, TestDebeziumSMTsMatchReference).
//
// Schema handling follows Kafka Connect's SchemaUtil.copySchemaBasics: a
// transformed STRUCT schema keeps the name, version, doc and parameters of
// the original but not its optionality or default.
package transforms
