package postgres

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/columns"
)

// Connection, slot, snapshot and naming keys of Debezium 3.6's
// PostgresConnectorConfig / CommonConnectorConfig that connectd implements
// beyond the original set (issues 3 and 6).
const (
	KeySSLMode             = "database.sslmode"
	KeySSLCert             = "database.sslcert"
	KeySSLKey              = "database.sslkey"
	KeySSLRootCert         = "database.sslrootcert"
	KeySSLPassword         = "database.sslpassword"
	KeyInitialStatements   = "database.initial.statements"
	KeyTCPKeepAlive        = "database.tcpKeepAlive"
	KeyQueryTimeoutMs      = "database.query.timeout.ms"
	KeySlotMaxRetries      = "slot.max.retries"
	KeySlotRetryDelayMs    = "slot.retry.delay.ms"
	KeySnapshotDelayMs     = "snapshot.delay.ms"
	KeyStreamingDelayMs    = "streaming.delay.ms"
	KeySnapshotIsolation   = "snapshot.isolation.mode"
	KeySnapshotLocking     = "snapshot.locking.mode"
	KeySnapshotLockTimeout = "snapshot.lock.timeout.ms"
	KeySchemaNameAdjust    = "schema.name.adjustment.mode"
	KeyTableIgnoreBuiltin  = "table.ignore.builtin"
	KeyTopicNamingStrategy = "topic.naming.strategy"
	// KeyHeartbeatTopicsPrefix is Debezium's deprecated name of
	// topic.heartbeat.prefix (which wins when both are set).
	KeyHeartbeatTopicsPrefix = "heartbeat.topics.prefix"
)

// Values of snapshot.isolation.mode, as Debezium's PostgreSQL
// SnapshotIsolationMode.
const (
	isolationSerializable    = "serializable"
	isolationRepeatableRead  = "repeatable_read"
	isolationReadCommitted   = "read_committed"
	isolationReadUncommitted = "read_uncommitted"
)

// schemaTopicNamingStrategy is Debezium's default topic.naming.strategy:
// <topic.prefix>.<schema>.<table>, the only naming connectd implements.
const schemaTopicNamingStrategy = "io.debezium.schema.SchemaTopicNamingStrategy"

func nonNegative(v string) string {
	if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err != nil || n < 0 {
		return "must be a non-negative integer"
	}
	return ""
}

// withConnectionKeys defines the keys of this file on d.
func withConnectionKeys(d *connect.ConfigDef) *connect.ConfigDef {
	return d.
		Define(connect.ConfigKey{Name: KeySSLMode, Type: connect.TypeString, Default: connect.Str("prefer"), Importance: connect.Medium,
			Allowed: []string{"disable", "allow", "prefer", "require", "verify-ca", "verify-full"},
			Doc: "TLS of both the query and the replication connections, as libpq's sslmode: disable (plain), allow (plain, TLS if the server insists), prefer (TLS if the server offers it, default), " +
				"require (TLS, server certificate not checked unless database.sslrootcert is set, then as verify-ca), verify-ca (TLS, server certificate signed by database.sslrootcert), verify-full (verify-ca and the certificate names database.hostname)."}).
		Define(connect.ConfigKey{Name: KeySSLCert, Type: connect.TypeString, Optional: true, Importance: connect.Medium,
			Doc: "Path of the client certificate (PEM) presented to the server (libpq's sslcert); needs database.sslkey."}).
		Define(connect.ConfigKey{Name: KeySSLPassword, Type: connect.TypePassword, Optional: true, Importance: connect.Medium,
			Doc: "Password of an encrypted database.sslkey (libpq's sslpassword)."}).
		Define(connect.ConfigKey{Name: KeySSLRootCert, Type: connect.TypeString, Optional: true, Importance: connect.Medium,
			Doc: "Path of the CA certificate(s) (PEM) that must have signed the server's certificate (libpq's sslrootcert); used by verify-ca, verify-full and require."}).
		Define(connect.ConfigKey{Name: KeySSLKey, Type: connect.TypeString, Optional: true, Importance: connect.Medium,
			Doc: "Path of the private key (PEM, PKCS#1 or PKCS#8, possibly encrypted) of database.sslcert (libpq's sslkey)."}).
		Define(connect.ConfigKey{Name: KeyInitialStatements, Type: connect.TypeString, Optional: true, Importance: connect.Low,
			Doc: "SQL statements run, in order, on every new query connection (catalog, snapshot readers, lag metrics), not on the replication connection, as Debezium: " +
				"separated by ';', a literal ';' written ';;'. Meant for session settings (SET …), not for changing data."}).
		Define(connect.ConfigKey{Name: KeyTCPKeepAlive, Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Medium,
			Doc: "Whether TCP keep-alive probes are enabled on the connections' sockets (SO_KEEPALIVE)."}).
		Define(connect.ConfigKey{Name: KeyQueryTimeoutMs, Type: connect.TypeInt, Default: connect.Str("600000"), Importance: connect.Low, Validator: nonNegative,
			Doc: "Longest time in ms one statement of a query connection may run (the session's statement_timeout; each snapshot cursor FETCH is one statement); 0 = no limit."}).
		Define(connect.ConfigKey{Name: KeySlotMaxRetries, Type: connect.TypeInt, Default: connect.Str("6"), Importance: connect.Low, Validator: nonNegative,
			Doc: "How many more times the task checks a replication slot that another connection is streaming from, slot.retry.delay.ms apart, before failing with the PID that holds it."}).
		Define(connect.ConfigKey{Name: KeySlotRetryDelayMs, Type: connect.TypeLong, Default: connect.Str("10000"), Importance: connect.Low, Validator: nonNegative,
			Doc: "Wait in ms between two checks of a busy replication slot (slot.max.retries)."}).
		Define(connect.ConfigKey{Name: KeySnapshotDelayMs, Type: connect.TypeLong, Default: connect.Str("0"), Importance: connect.Low, Validator: nonNegative,
			Doc: "Wait in ms after the task starts (slot created) before the snapshot reads the tables."}).
		Define(connect.ConfigKey{Name: KeyStreamingDelayMs, Type: connect.TypeLong, Default: connect.Str("0"), Importance: connect.Low, Validator: nonNegative,
			Doc: "Wait in ms before streaming starts (after the snapshot, if any), so that the snapshot's offsets can be committed first."}).
		Define(connect.ConfigKey{Name: KeySnapshotIsolation, Type: connect.TypeString, Default: connect.Str(isolationSerializable), Importance: connect.Low,
			Allowed: []string{isolationSerializable, isolationRepeatableRead, isolationReadCommitted, isolationReadUncommitted},
			Doc: "Transaction isolation of the snapshot's readers. serializable and repeatable_read: the readers import the replication slot's exported snapshot " +
				"(in REPEATABLE READ: PostgreSQL refuses to import it into a SERIALIZABLE transaction), or, without a slot snapshot, run SERIALIZABLE READ ONLY DEFERRABLE " +
				"(serializable) or REPEATABLE READ; the snapshot is exactly the state at the slot's consistent point. read_committed and read_uncommitted (PostgreSQL runs both as READ COMMITTED): " +
				"no snapshot is imported, each table's query sees what is committed when it starts: nothing is missed, but a change committed during the snapshot can be both in the snapshot and streamed."}).
		Define(connect.ConfigKey{Name: KeySnapshotLocking, Type: connect.TypeString, Default: connect.Str("none"), Importance: connect.Low,
			Validator: func(v string) string {
				switch strings.ToLower(v) {
				case "none", "shared":
					return ""
				case "custom":
					return "custom snapshot locking loads a Java SnapshotLock class, which connectd cannot run; use shared or none"
				}
				return "must be one of: shared, none"
			},
			Doc: "shared: the snapshot takes LOCK TABLE … IN ACCESS SHARE MODE on the tables it reads, in its first reader's transaction, until the snapshot ends (blocks DDL such as ALTER/DROP TABLE, not writes); " +
				"waiting longer than snapshot.lock.timeout.ms fails the snapshot. none (default): no lock."}).
		Define(connect.ConfigKey{Name: KeySnapshotLockTimeout, Type: connect.TypeLong, Default: connect.Str("10000"), Importance: connect.Low, Validator: nonNegative,
			Doc: "Longest wait in ms for the snapshot.locking.mode=shared locks (the transaction's lock_timeout); 0 = no limit."}).
		Define(connect.ConfigKey{Name: KeySchemaNameAdjust, Type: connect.TypeString, Default: connect.Str("none"), Importance: connect.Low,
			Allowed: []string{"none", "avro", "avro_unicode"},
			Doc: "How the names of Connect schemas built from table names (<topic.prefix>.<schema>.<table>.Key/Value/Envelope) are made valid, as Debezium's SchemaNameAdjuster: " +
				"none (unchanged), avro (every UTF-16 unit not allowed in an Avro name becomes '_'), avro_unicode ('_' is not allowed either; each such unit becomes _u and its hex code, e.g. '-' → _u002d)."}).
		Define(connect.ConfigKey{Name: KeyTableIgnoreBuiltin, Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Low,
			Validator: func(v string) string {
				if strings.EqualFold(v, "false") {
					return "PostgreSQL cannot publish its system catalogs (pg_catalog, information_schema) through logical replication, so connectd always ignores them"
				}
				return ""
			},
			Doc: "Whether tables of the system schemas (pg_catalog, information_schema, pg_toast) are ignored. Only true: logical replication cannot publish them."}).
		Define(connect.ConfigKey{Name: KeyTopicNamingStrategy, Type: connect.TypeClass, Default: connect.Str(schemaTopicNamingStrategy), Importance: connect.Low,
			Validator: func(v string) string {
				if v != schemaTopicNamingStrategy {
					return "connectd implements only " + schemaTopicNamingStrategy + " (topics <topic.prefix>.<schema>.<table>); other naming strategies are Java classes it cannot load"
				}
				return ""
			},
			Doc: "Topic naming: only " + schemaTopicNamingStrategy + ", data change topics <topic.prefix>.<schema>.<table>."}).
		// Implemented by the worker's retry policy (runtime/retry.go).
		Define(connect.ConfigKey{Name: "errors.max.retries", Type: connect.TypeInt, Default: connect.Str("-1"), Importance: connect.Low,
			Validator: func(v string) string {
				if n, err := strconv.Atoi(v); err != nil || n < -1 {
					return "must be -1 (no limit) or a non-negative integer"
				}
				return ""
			},
			Doc: "How many times in a row the worker restarts the task after a retriable failure of the connector (a lost database connection) before failing it; -1 = no limit, 0 = never."}).
		Define(connect.ConfigKey{Name: "retriable.restart.connector.wait.ms", Type: connect.TypeLong, Default: connect.Str("10000"), Importance: connect.Low, Validator: nonNegative,
			Doc: "Wait in ms before the worker restarts a task after a retriable failure (doubled on each consecutive failure, up to errors.retry.delay.max.ms)."}).
		// Implemented by the column rules (connectors/internal/columns); the
		// three pattern keys are defined under their pattern names, as
		// Debezium's ConfigDef lists them.
		Define(connect.ConfigKey{Name: columns.KeyDatatypePropagateType, Type: connect.TypeList, Optional: true, Importance: connect.Low, Validator: regexListValidator,
			Doc: "Comma-separated regular expressions matched (anchored) against type names: columns of a matching type get __debezium.source.column.type, .length, .scale and .name schema parameters."}).
		Define(connect.ConfigKey{Name: "column.mask.hash.([^.]+).with.salt.(.+)", Type: connect.TypeString, Optional: true, Importance: connect.Low,
			Doc: "Set as column.mask.hash.<algorithm>.with.salt.<salt> = regular expressions of <schema>.<table>.<column>: string values become the hex hash of salt + value."}).
		Define(connect.ConfigKey{Name: "column.mask.with.(d+).chars", Type: connect.TypeString, Optional: true, Importance: connect.Low,
			Doc: "Set as column.mask.with.<n>.chars = regular expressions of <schema>.<table>.<column>: string values become n asterisks."}).
		Define(connect.ConfigKey{Name: "column.truncate.to.(d+).chars", Type: connect.TypeInt, Optional: true, Importance: connect.Low,
			Doc: "Set as column.truncate.to.<n>.chars = regular expressions of <schema>.<table>.<column>: string values are cut to n characters."}).
		Define(connect.ConfigKey{Name: KeyHeartbeatTopicsPrefix, Type: connect.TypeString, Default: connect.Str("__debezium-heartbeat"), Importance: connect.Low,
			Doc: "Deprecated name of topic.heartbeat.prefix, used when topic.heartbeat.prefix is not set."})
}

// connSettings is the parsed connection configuration of this file.
type connSettings struct {
	sslMode, sslCert, sslKey, sslRootCert, sslPassword string
	initialStatements                                  []string
	keepAlive                                          bool
	queryTimeoutMs                                     int
	slotMaxRetries                                     int
	slotRetryDelay                                     time.Duration
	snapshotDelay, streamingDelay                      time.Duration
	isolation                                          string
	lockShared                                         bool
	lockTimeoutMs                                      int
	schemaNameAdjust                                   string
}

func parseConnSettings(p connect.Parsed) connSettings {
	return connSettings{
		sslMode: strings.ToLower(p.String(KeySSLMode)), sslCert: p.String(KeySSLCert), sslKey: p.String(KeySSLKey),
		sslRootCert: p.String(KeySSLRootCert), sslPassword: p.String(KeySSLPassword),
		initialStatements: splitStatements(p.String(KeyInitialStatements)),
		keepAlive:         p.Bool(KeyTCPKeepAlive),
		queryTimeoutMs:    p.Int(KeyQueryTimeoutMs),
		slotMaxRetries:    p.Int(KeySlotMaxRetries),
		slotRetryDelay:    time.Duration(p.Int(KeySlotRetryDelayMs)) * time.Millisecond,
		snapshotDelay:     time.Duration(p.Int(KeySnapshotDelayMs)) * time.Millisecond,
		streamingDelay:    time.Duration(p.Int(KeyStreamingDelayMs)) * time.Millisecond,
		isolation:         strings.ToLower(p.String(KeySnapshotIsolation)),
		lockShared:        strings.EqualFold(p.String(KeySnapshotLocking), "shared"),
		lockTimeoutMs:     p.Int(KeySnapshotLockTimeout),
		schemaNameAdjust:  strings.ToLower(p.String(KeySchemaNameAdjust)),
	}
}

// splitStatements splits database.initial.statements as Debezium's
// JdbcConnection.parseSqlStatementString: statements end at ';', ";;" is a
// literal ';'; blank statements are dropped.
func splitStatements(v string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for i := 0; i < len(v); i++ {
		if v[i] != ';' {
			cur.WriteByte(v[i])
			continue
		}
		if i+1 < len(v) && v[i+1] == ';' {
			cur.WriteByte(';')
			i++
			continue
		}
		flush()
	}
	flush()
	return out
}

// validateSSL checks the TLS keys together: a client certificate needs its
// key (and the reverse).
func validateSSL(cfg map[string]string) []connect.ConfigError {
	cert, key := strings.TrimSpace(cfg[KeySSLCert]), strings.TrimSpace(cfg[KeySSLKey])
	if (cert == "") != (key == "") {
		k := KeySSLKey
		if cert == "" {
			k = KeySSLCert
		}
		return []connect.ConfigError{{Key: k, Message: fmt.Sprintf("Invalid value for configuration %s: %s and %s must be set together", k, KeySSLCert, KeySSLKey)}}
	}
	return nil
}
