// Package broker is connectd's embedded Kafka-protocol broker: the single
// node the worker starts when bootstrap.servers is empty, listening on
// embedded.kafka.listener and persisted under <data.dir>/kafka. It is a
// product part, not a test fake: Kafka's own tools, Java clients of every
// supported version, a stock Kafka Connect worker, Flink, librdkafka,
// kafka-python and franz-go use it unchanged. Its engine is franz-go's
// kfake, vendored in third_party/kfake (go.mod replace); this package
// adds what a broker that keeps a user's data needs around it.
//
// # Start and shutdown (broker.go)
//
// Start reads the cluster id from <data.dir>/cluster.id (made at the first
// start, stable after), checks the clean-shutdown mark, runs the crash
// recovery below when it is missing, and then opens the listener with
// the options of the worker's embedded.kafka.* keys (SecurityOptions,
// LogOptions). Close stops kfake (which saves its state files), fsyncs the
// log and only then writes the clean-shutdown mark, so that a machine
// crash just after a clean stop cannot leave a log that the next start
// trusts without recovery.
//
// # Crash recovery (recovery.go)
//
// A SIGKILL kills the broker with the worker, so a transaction a producer
// had open is never ended, and kfake's replay ends it in memory only. After
// an unclean shutdown Start does what Kafka's transaction coordinator
// would: on a private instance (ephemeral port, no listener security, no
// authorizer) it finds per partition the producers whose last
// transactional batches have no control record and writes their COMMIT
// marker when the commit had begun in another partition (KIP-890 epochs
// tell), an ABORT marker otherwise; then it restarts kfake so that it
// replays the log with the markers. RecoveredTransactions reports the
// counts.
//
// # Index repair (index.go)
//
// kfake writes a batch and then its 15-byte index entry; a crash between
// the two misaligns every later entry, and the replay then takes the wrong
// transaction extents. Before kfake reads the log after a crash, every
// index that disagrees with its segment (missing or surplus entries, leader
// epoch, transaction flag) is rewritten from the segment, durably
// (RepairedIndexes).
//
// # Syncer (sync.go)
//
// With embedded.kafka.sync.writes=false (the default) every batch is
// written to its segment before it is acknowledged (a killed process loses
// nothing) and Sync fsyncs what changed since the last pass, group
// committing concurrent callers. The worker calls it where a lost record
// could not be read again (before source offsets are stored and a position
// confirmed upstream, around exactly-once and flinklite commits, before
// sink offsets are committed, at shutdown). With sync.writes=true kfake
// fsyncs each batch and Sync does nothing. A failed fsync fails every
// later Sync.
//
// # Security (security.go)
//
// embedded.kafka.security.protocol PLAINTEXT, SSL, SASL_PLAINTEXT or
// SASL_SSL; SASL PLAIN and SCRAM-SHA-256/512 users from
// embedded.kafka.sasl.users (authoritative at every start:
// ForgetPersistedSASLUsers drops the credentials kfake persisted); TLS with
// the listener's certificate from embedded.kafka.ssl.keystore.* and, with
// embedded.kafka.ssl.client.auth, client certificates checked against
// embedded.kafka.ssl.truststore.*.
//
// Authorization (authorizer.go): with embedded.kafka.authorizer.class.name
// set to Kafka's StandardAuthorizer, kfake's ACL checks are on: the
// principal is User:<SASL user>; on SSL with embedded.kafka.ssl.client.auth
// the client certificate's subject as Kafka names it (RFC 2253, mapped by
// embedded.kafka.ssl.principal.mapping.rules: tls_principal.go), and
// User:ANONYMOUS without either; embedded.kafka.super.users pass every check, and
// embedded.kafka.allow.everyone.if.no.acl.found allows what no ACL names.
// Produce, fetch, metadata, groups, transactions, topic create/delete,
// configs and the ACL requests themselves answer Kafka's authorization
// errors; ACLs persist in <data.dir>/kafka/acls.json (written, fsynced and
// renamed into place when they change). The private recovery instance
// runs without the authorizer and keeps the file as it is.
// integration/broker_acl_test.go runs Kafka's kafka-acls against this
// broker and a real Kafka 4.3 with the StandardAuthorizer and compares the
// output and the error codes of a restricted principal's operations.
//
// # Conformance
//
// The answers Java clients depend on are tested here (protocol_test.go)
// and compared field by field with a real Apache Kafka 4.3 in
// integration/broker_conformance_test.go, which also runs Kafka's own CLI
// tools, kafka-clients 3.4-4.3 and a Kafka Connect worker against both;
// every remaining difference is listed there with its reason.
//
// # kfake changes
//
// third_party/kfake/README.md lists every change against upstream kfake,
// each small, inside kfake's own handlers and written to go upstream as
// it is: a control function (Cluster.ControlKey) runs before kfake's SASL
// and ACL checks and cannot call kfake's handlers, so fixing an answer
// there would mean re-implementing the handler and its authorization.
// Everything that can live outside kfake (recovery, index repair, syncing,
// config parsing) lives in this package.
package broker
