package runtime

import (
	"sort"
	"strings"

	"github.com/connectd/connectd/connect"
)

// Groups of the worker's keys in the generated reference
// (docs/reference/worker.md).
const (
	groupWorker      = "Worker"
	groupCluster     = "Distributed workers"
	groupEmbedded    = "Embedded broker"
	groupRegistry    = "Schema registry"
	groupDashboard   = "Dashboard"
	groupRESTSec     = "REST API security"
	groupKafkaSec    = "Kafka client security"
	groupConfigProvs = "Config providers"
)

// WorkerKeyFamily documents a family of prefixed worker keys (producer.*,
// embedded.kafka.ssl.*, …) that WorkerConfigDef cannot list one by one.
type WorkerKeyFamily struct {
	Pattern string
	Group   string
	Doc     string
}

// WorkerConfigDef is the worker's keys (Kafka Connect's worker names where
// they exist; DESIGN.md section 5), with their defaults and documentation:
// the source of docs/reference/worker.md (internal/docgen). A key with a
// runtime default takes it from workerDefaults, so the two cannot disagree;
// docDefault documents the default of keys whose code applies it itself.
func WorkerConfigDef() *connect.ConfigDef {
	d := connect.NewConfigDef()
	def := func(group, name string, typ connect.ConfigType, imp connect.Importance, docDefault, doc string, allowed ...string) {
		k := connect.ConfigKey{Name: name, Type: typ, Importance: imp, Group: group, Doc: doc, Allowed: allowed, Optional: true}
		if v, ok := workerDefaults[name]; ok {
			k.Default = connect.Str(v)
		} else if docDefault != "" {
			k.Default = connect.Str(docDefault)
		}
		d.Define(k)
	}
	S, I, L, B, P, LS := connect.TypeString, connect.TypeInt, connect.TypeLong, connect.TypeBoolean, connect.TypePassword, connect.TypeList
	H, M, Lo := connect.High, connect.Medium, connect.Low

	def(groupWorker, "listeners", LS, H, "", "Where the REST API (Kafka Connect's paths and bodies), /metrics and /ui listen: http://host:port or https://host:port (then the ssl.* keys of the REST API security group).")
	def(groupWorker, "bootstrap.servers", LS, H, "", "Kafka brokers (host:port,…). Empty: connectd starts its embedded Kafka-protocol broker (embedded.kafka.*) and uses it.")
	def(groupWorker, "group.id", S, H, "", "Workers sharing this id (and brokers) share connectors, tasks and jobs, as a Kafka Connect distributed cluster.")
	def(groupWorker, "data.dir", S, H, "", "Where the embedded broker keeps its log, ACLs and index, and flinklite its state. Back it up with the worker stopped (docs/operations.md).")
	def(groupWorker, "key.converter", connect.TypeClass, H, "", "The default key converter of connectors that set none: org.apache.kafka.connect.json.JsonConverter (key.converter.schemas.enable, default true) or io.confluent.connect.avro.AvroConverter (key.converter.schema.registry.url).")
	def(groupWorker, "value.converter", connect.TypeClass, H, "", "The default value converter of connectors that set none; as key.converter.")
	def(groupWorker, "config.storage.topic", S, M, "", "Compacted topic of the connector configs, in Kafka Connect's format (a Kafka Connect worker's topic can be read as it is).")
	def(groupWorker, "offset.storage.topic", S, M, "", "Compacted topic of the source offsets, in Kafka Connect's format (a Debezium connector's offsets are taken over as they are).")
	def(groupWorker, "status.storage.topic", S, M, "", "Compacted topic of the connector and task states, in Kafka Connect's format.")
	def(groupWorker, "jobs.storage.topic", S, M, "", "Compacted topic of the flinklite job specs of a distributed cluster (bootstrap.servers set).")
	def(groupWorker, "offset.storage.partitions", I, Lo, "", "Partitions of offset.storage.topic when connectd creates it.")
	def(groupWorker, "status.storage.partitions", I, Lo, "", "Partitions of status.storage.topic when connectd creates it.")
	def(groupWorker, "config.storage.replication.factor", I, Lo, "", "Replication factor of config.storage.topic when connectd creates it; -1 = the broker's default.")
	def(groupWorker, "offset.storage.replication.factor", I, Lo, "", "Replication factor of offset.storage.topic when connectd creates it; -1 = the broker's default.")
	def(groupWorker, "status.storage.replication.factor", I, Lo, "", "Replication factor of status.storage.topic when connectd creates it; -1 = the broker's default.")
	def(groupWorker, "offset.flush.interval.ms", L, M, "", "How often source offsets are stored and the database position (replication slot, binlog) confirmed.")
	def(groupWorker, "offset.flush.timeout.ms", L, Lo, "", "Longest wait in ms for the records of an offset flush to be acknowledged before the flush is retried at the next interval.")
	def(groupWorker, "exactly.once.source.support", S, M, "", "enabled: exactly-once source connectors (KIP-618): each batch of records and its offsets are written in one Kafka transaction.", "disabled", "enabled", "preparing")
	def(groupWorker, "connector.client.config.override.policy", S, M, "", "Which producer.override.* / admin.override.* keys a connector may set (KIP-458; a forbidden one is a 400): None, Principal (only sasl.jaas.config, sasl.mechanism, security.protocol), All. Applied to the task's producer: linger.ms, max.request.size, compression.type, acks, enable.idempotence, request.timeout.ms, delivery.timeout.ms, retries, retry.backoff.ms, buffer.memory, client.id and the security keys; other producer keys (e.g. batch.size) are accepted and ignored with a WARN naming them; bootstrap.servers, transactional.id and serializers are rejected; consumer.override.* is ignored for source connectors, as in Kafka Connect.", "None", "Principal", "All")
	def(groupWorker, "topic.creation.enable", B, Lo, "", "KIP-158: a connector with topic.creation.default.replication.factor / .partitions (and optional topic.creation.groups with .include / .exclude regex lists and any topic config) gets its topics created with the first matching group's settings; false: none are created (broker auto-creation).")

	def(groupCluster, "session.timeout.ms", I, H, "", "Worker group membership: a worker that does not heartbeat within this time leaves the group.")
	def(groupCluster, "heartbeat.interval.ms", I, H, "", "Worker group membership: how often a worker heartbeats.")
	def(groupCluster, "rebalance.timeout.ms", I, M, "", "Worker group membership: how long a rebalance waits for the workers to rejoin.")
	def(groupCluster, "connect.protocol", S, Lo, "", "How the workers rebalance (Kafka Connect's values): sessioned / compatible = incremental cooperative rebalancing (KIP-415; only the connectors and tasks that move are stopped); eager = every rebalance stops everything and places it again round-robin. The group uses the most basic protocol all workers offer. sessioned does not sign internal requests (no KIP-507 session key): it behaves as compatible.", "eager", "compatible", "sessioned")
	def(groupCluster, "scheduled.rebalance.max.delay.ms", I, Lo, "", "Cooperative protocols: how long the connectors and tasks of a worker that left stay unassigned, so that a worker restarted within that time gets them back; 0 reassigns them at once.")

	def(groupEmbedded, "embedded.kafka.listener", S, H, "", "Where the embedded broker listens (host:port); any Kafka client (Java clients, Kafka's tools, kcat, franz-go, Python clients) can use it.")
	def(groupEmbedded, "embedded.kafka.sync.writes", B, M, "", "true: fsync every batch before acknowledging it. false: every batch is written to the log (page cache) before it is acknowledged, so a killed process loses nothing, and the log is fsynced before source offsets are stored, before a connector confirms a position to its database, around exactly-once and flinklite commits, before sink offsets are committed and at shutdown; a machine crash can then only drop records acknowledged since the last of those points, which connectd's own source connectors read again (records other clients wrote since then are lost, as with Kafka, which leaves flushing to the OS). Any other value stops the worker at start.")
	def(groupEmbedded, "embedded.kafka.log.cleaner.backoff.ms", L, Lo, "15000", "How often the log cleaner compacts each cleanup.policy=compact partition written to (Kafka's min.cleanable.dirty.ratio 0.5; the last batch is kept as it is) and applies retention.")
	def(groupEmbedded, "embedded.kafka.log.retention.ms", L, Lo, "-1", "Broker-wide retention.ms of topics with cleanup.policy delete that set none; -1 = no limit.")
	def(groupEmbedded, "embedded.kafka.log.retention.bytes", L, Lo, "-1", "Broker-wide retention.bytes of topics with cleanup.policy delete that set none; -1 = no limit.")
	def(groupEmbedded, "embedded.kafka.security.protocol", S, M, "PLAINTEXT", "What the embedded broker requires from every client (connectd's own too: set the Kafka client security keys to match).", "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
	def(groupEmbedded, "embedded.kafka.sasl.enabled.mechanisms", LS, M, "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512", "The SASL mechanisms the embedded broker offers.")
	def(groupEmbedded, "embedded.kafka.sasl.users", P, M, "", "The embedded broker's SASL users, user:password,…; the property's users at every start (changed passwords apply, removed users go).")
	def(groupEmbedded, "embedded.kafka.ssl.client.auth", S, M, "none", "Whether the embedded broker asks TLS clients for a certificate (embedded.kafka.ssl.truststore.* verifies it).", "none", "requested", "required")
	def(groupEmbedded, "embedded.kafka.ssl.principal.mapping.rules", S, M, "DEFAULT", "Kafka's ssl.principal.mapping.rules for the embedded broker's SSL clients: DEFAULT (the certificate subject as RFC 2253, e.g. CN=alice,O=Acme) or RULE:pattern/replacement/[LU],…; the first rule matching the whole subject names the ACL principal, a subject no rule matches is refused.")
	def(groupEmbedded, "embedded.kafka.authorizer.class.name", S, M, "", "org.apache.kafka.metadata.authorizer.StandardAuthorizer: Kafka ACLs on the embedded broker, as Kafka's StandardAuthorizer (a client's principal is User:<SASL user>, on SSL with a client certificate User:<its subject as RFC 2253, mapped by embedded.kafka.ssl.principal.mapping.rules>, else User:ANONYMOUS), with Kafka's errors; ACLs are managed with kafka-acls or the Admin API and kept in <data.dir>/kafka/acls.json. Empty: no authorization.", "", "org.apache.kafka.metadata.authorizer.StandardAuthorizer")
	def(groupEmbedded, "embedded.kafka.super.users", S, M, "", "Principals that pass every ACL check: User:admin;User:….")
	def(groupEmbedded, "embedded.kafka.allow.everyone.if.no.acl.found", B, Lo, "false", "true: a resource no ACL names is open to everyone.")

	def(groupRegistry, "schema.registry.listener", S, M, "", "Where the embedded Confluent-compatible schema registry listens (host:port); empty disables it.")

	def(groupDashboard, ConfigLagThresholdBytes, L, Lo, "104857600", "/ui and connectd status turn a connector amber when its replication lag in bytes is above this.")
	def(groupDashboard, ConfigLagThresholdMs, L, Lo, "60000", "… or its MilliSecondsBehindSource is above this.")
	def(groupDashboard, ConfigLagThresholdEvents, L, Lo, "1000", "… or its events queued + in flight are above this.")
	def(groupDashboard, ConfigLagGrowthMs, L, Lo, "300000", "… or its lag grew steadily for this long.")
	def(groupDashboard, ConfigSampleIntervalMs, L, Lo, "5000", "How often the dashboard's history samples (it keeps 15 minutes).")

	def(groupRESTSec, "ssl.keystore.type", S, M, "JKS", "With listeners=https://…: the REST server's keystore type: PKCS12 or PEM (JKS reads PKCS12 files; real JKS files must be converted). listeners.https.-prefixed ssl keys win over the unprefixed ones, all or nothing. The unprefixed ssl.* keys also serve the Kafka client security.", "JKS", "PKCS12", "PEM")
	def(groupRESTSec, "ssl.keystore.location", S, M, "", "Keystore file (REST over TLS; Kafka client certificate).")
	def(groupRESTSec, "ssl.keystore.password", P, M, "", "Keystore password.")
	def(groupRESTSec, "ssl.key.password", P, M, "", "Password of the key in the keystore.")
	def(groupRESTSec, "ssl.keystore.key", P, Lo, "", "PEM private key text (ssl.keystore.type=PEM).")
	def(groupRESTSec, "ssl.keystore.certificate.chain", P, Lo, "", "PEM certificate chain text (ssl.keystore.type=PEM).")
	def(groupRESTSec, "ssl.truststore.type", S, M, "JKS", "Truststore type: PKCS12 or PEM (JKS reads PKCS12 files).", "JKS", "PKCS12", "PEM")
	def(groupRESTSec, "ssl.truststore.location", S, M, "", "Truststore file: the CAs of REST clients (ssl.client.auth) and of other workers (forwarded requests), and of the Kafka brokers.")
	def(groupRESTSec, "ssl.truststore.password", P, M, "", "Truststore password.")
	def(groupRESTSec, "ssl.truststore.certificates", P, Lo, "", "PEM CA certificates text (ssl.truststore.type=PEM).")
	def(groupRESTSec, "ssl.client.auth", S, M, "none", "Whether the REST server asks clients for a certificate.", "none", "requested", "required")
	def(groupRESTSec, "rest.extension.classes", LS, M, "", "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension: basic authentication with Kafka Connect's JAAS file (java.security.auth.login.config); 401 User cannot access the resource. otherwise; forwarded requests carry the Authorization header.")
	def(groupRESTSec, "java.security.auth.login.config", S, M, "", "The JAAS file of BasicAuthSecurityRestExtension (KafkaConnect { …PropertyFileLoginModule required file=\"credentials.properties\"; }; user=password lines); also read from -Djava.security.auth.login.config= in KAFKA_OPTS.")

	def(groupKafkaSec, "security.protocol", S, H, "PLAINTEXT", "Kafka client security, as Kafka Connect: the unprefixed keys serve the config/status/offsets topics, the group and the _schemas topic; producer.-prefixed keys the tasks' producers, admin.-prefixed keys topic creation, consumer.-prefixed keys sink tasks and connectd topics tail; prefixed keys win key by key. Wrong credentials stop the worker at start with a message naming the mechanism and user.", "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
	def(groupKafkaSec, "sasl.mechanism", S, H, "GSSAPI", "With SASL: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512. Kafka's default GSSAPI (Kerberos) and OAUTHBEARER are not supported: the worker stops at start naming the key.")
	def(groupKafkaSec, "sasl.jaas.config", P, H, "", "One PlainLoginModule or ScramLoginModule required username=\"…\" password=\"…\";.")
	def(groupKafkaSec, "ssl.endpoint.identification.algorithm", S, Lo, "https", "https: the broker's certificate must name its host; empty: not checked.")

	def(groupConfigProvs, "config.providers", LS, Lo, "", "Config providers (KIP-297) by name, with config.providers.<name>.class: FileConfigProvider (${file:/path.properties:key}), DirectoryConfigProvider (${dir:/dir:file}), EnvVarConfigProvider (${env:NAME}). Resolved when a connector or task config is used; the config topic and GET …/config keep the ${…}.")
	return d
}

// WorkerKeyFamilies are the prefixed worker keys (documented in
// docs/reference/worker.md after the keys of WorkerConfigDef).
var WorkerKeyFamilies = []WorkerKeyFamily{
	{"key.converter.*, value.converter.*", groupWorker, "The default converters' settings (schemas.enable, schema.registry.url, …)."},
	{"producer.*", groupWorker, "The tasks' producers (Kafka's producer keys; the security keys win key by key over the unprefixed ones). The tasks' producer writes snappy-compressed batches to the embedded broker and lz4-compressed ones to an external Kafka (Kafka Connect's default is compression.type=none; producer.override.compression.type wins either way); a task's producer buffers at most 8 MiB of unacknowledged records (buffer.memory; Kafka's default is 32 MiB)."},
	{"admin.*", groupWorker, "The admin client that creates topics (KIP-158)."},
	{"consumer.*", groupWorker, "Sink tasks' consumers and connectd topics tail."},
	{"listeners.https.ssl.*", groupRESTSec, "The REST server's TLS keys for the https listener; they win over the unprefixed ssl.* keys, all or nothing."},
	{"embedded.kafka.ssl.keystore.*, embedded.kafka.ssl.truststore.*", groupEmbedded, "The embedded broker's TLS keystore (its certificate) and truststore (client certificates), as the ssl.* keys."},
	{"config.providers.<name>.class, config.providers.<name>.param.*", groupConfigProvs, "A config provider's class (FileConfigProvider, DirectoryConfigProvider, EnvVarConfigProvider, by full or simple name) and parameters (allowed.paths for file/dir, allowlist.pattern for env)."},
}

// workerKeyPrefixes are the prefixes of WorkerKeyFamilies.
var workerKeyPrefixes = []string{"key.converter.", "value.converter.", "header.converter.", "producer.", "admin.", "consumer.",
	"listeners.https.", "embedded.kafka.ssl.", "config.providers."}

// UnknownWorkerKeys returns, sorted, the keys of cfg that are neither a key
// of WorkerConfigDef nor of a WorkerKeyFamilies family: connectd ignores
// them, and the worker logs a WARN naming each (as Kafka's "was supplied but
// isn't a known config").
func UnknownWorkerKeys(cfg WorkerConfig) []string {
	d := WorkerConfigDef()
	var out []string
	for k := range cfg {
		if d.Key(k) != nil {
			continue
		}
		known := false
		for _, p := range workerKeyPrefixes {
			if strings.HasPrefix(k, p) {
				known = true
				break
			}
		}
		if !known {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
