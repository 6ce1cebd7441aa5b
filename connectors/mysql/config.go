package mysql

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/columns"
	"github.com/connectd/connectd/connectors/internal/heartbeat"
	"github.com/connectd/connectd/connectors/internal/relational"
)

// Configuration keys, as Debezium's MySqlConnectorConfig / MariaDbConnectorConfig
// (BinlogConnectorConfig) in 3.6.
const (
	KeyConnectorClass      = "connector.class"
	KeyHostname            = "database.hostname"
	KeyPort                = "database.port"
	KeyUser                = "database.user"
	KeyPassword            = "database.password"
	KeyServerID            = "database.server.id"
	KeyTopicPrefix         = "topic.prefix"
	KeyDatabaseIncludeList = "database.include.list"
	KeyDatabaseExcludeList = "database.exclude.list"
	KeyTableIncludeList    = "table.include.list"
	KeyTableExcludeList    = "table.exclude.list"
	KeySnapshotMode        = "snapshot.mode"
	KeySnapshotLockingMode = "snapshot.locking.mode"

	KeyConfigBasedSnapshotData   = "snapshot.mode.configuration.based.snapshot.data"
	KeyConfigBasedSnapshotSchema = "snapshot.mode.configuration.based.snapshot.schema"
	KeyConfigBasedStartStream    = "snapshot.mode.configuration.based.start.stream"
	KeyConfigBasedOnSchemaError  = "snapshot.mode.configuration.based.snapshot.on.schema.error"
	KeyConfigBasedOnDataError    = "snapshot.mode.configuration.based.snapshot.on.data.error"

	KeyIncludeSchemaChanges    = "include.schema.changes"
	KeyHistoryTopic            = "schema.history.internal.kafka.topic"
	KeyHistoryBootstrap        = "schema.history.internal.kafka.bootstrap.servers"
	KeyGTIDSourceIncludes      = "gtid.source.includes"
	KeyGTIDSourceExcludes      = "gtid.source.excludes"
	KeyGTIDFilterDML           = "gtid.source.filter.dml.events"
	KeyHeartbeatIntervalMs     = "heartbeat.interval.ms"
	KeyHeartbeatActionQuery    = "heartbeat.action.query"
	KeyHeartbeatTopicPrefix    = "topic.heartbeat.prefix"
	KeyTombstonesOnDelete      = "tombstones.on.delete"
	KeyDecimalHandlingMode     = "decimal.handling.mode"
	KeyTimePrecisionMode       = "time.precision.mode"
	KeyBigintUnsignedMode      = "bigint.unsigned.handling.mode"
	KeyBinaryHandlingMode      = "binary.handling.mode"
	KeyEnableTimeAdjuster      = "enable.time.adjuster"
	KeyExtendedHeadersEnabled  = "extended.headers.enabled"
	KeyDeserializationFailure  = "event.deserialization.failure.handling.mode"
	KeyConnectionTimeZone      = "database.connectionTimeZone"
	KeyMaxBatchSize            = "max.batch.size"
	KeyMaxQueueSize            = "max.queue.size"
	KeyPollIntervalMs          = "poll.interval.ms"
	KeyConnectTimeoutMs        = "connect.timeout.ms"
	KeySkipUnparseableDDL      = "schema.history.internal.skip.unparseable.ddl"
	KeyStoreOnlyCapturedTables = "schema.history.internal.store.only.captured.tables.ddl"
	KeyStoreOnlyCapturedDBs    = "schema.history.internal.store.only.captured.databases.ddl"
	KeySkippedOperations       = "skipped.operations"
	KeySnapshotSelectOverrides = relational.KeySnapshotSelectOverrides

	// Column keys shared with the PostgreSQL connector (connectors/internal/columns);
	// column.mask.with.N.chars, column.truncate.to.N.chars and
	// column.mask.hash.<algorithm>.with.salt.<salt> carry their parameters in the name.
	KeyColumnIncludeList     = columns.KeyColumnIncludeList
	KeyColumnExcludeList     = columns.KeyColumnExcludeList
	KeyMessageKeyColumns     = columns.KeyMessageKeyColumns
	KeyColumnPropagateType   = columns.KeyColumnPropagateType
	KeyDatatypePropagateType = columns.KeyDatatypePropagateType
)

// Snapshot modes (snapshot.mode); schema_only and schema_only_recovery are
// Debezium's deprecated names for no_data and recovery.
const (
	SnapshotInitial     = "initial"
	SnapshotInitialOnly = "initial_only"
	SnapshotNoData      = "no_data"
	SnapshotWhenNeeded  = "when_needed"
	SnapshotAlways      = "always"
	SnapshotRecovery    = "recovery"
	SnapshotConfigBased = "configuration_based"
)

// snapshotModes maps every accepted spelling to its mode. schema_only and
// schema_only_recovery are the deprecated names of no_data and recovery
// that Debezium's snapshot.mode documentation still describes (3.6.1's
// enum no longer parses them); connectd accepts them with a warning.
// never (Debezium <= 3.5: stream from the first binlog file) is refused.
var snapshotModes = map[string]string{
	"initial": SnapshotInitial, "initial_only": SnapshotInitialOnly, "no_data": SnapshotNoData,
	"when_needed": SnapshotWhenNeeded, "always": SnapshotAlways, "recovery": SnapshotRecovery,
	"configuration_based": SnapshotConfigBased,
	"schema_only":         SnapshotNoData, "schema_only_recovery": SnapshotRecovery,
}

func positiveInt(v string) string {
	if n, err := strconv.Atoi(v); err != nil || n <= 0 {
		return "must be a positive integer"
	}
	return ""
}

func regexList(v string) string {
	for _, p := range splitList(v) {
		if _, err := regexp.Compile(p); err != nil {
			return fmt.Sprintf("invalid regular expression %q: %v", p, err)
		}
	}
	return ""
}

var (
	defsOnce sync.Once
	defs     map[flavor]*connect.ConfigDef
)

func configDef(f flavor) *connect.ConfigDef {
	defsOnce.Do(func() {
		defs = map[flavor]*connect.ConfigDef{flavorMySQL: buildDef(flavorMySQL), flavorMariaDB: buildDef(flavorMariaDB)}
	})
	return defs[f]
}

func buildDef(f flavor) *connect.ConfigDef {
	db := "MySQL"
	if f == flavorMariaDB {
		db = "MariaDB"
	}
	return defineDebeziumOnly(connect.NewConfigDef()).
		Define(connect.ConfigKey{Name: KeyConnectorClass, Type: connect.TypeString, Default: connect.Str(f.className()), Importance: connect.High,
			Doc: "The connector class: " + f.className() + "."}).
		Define(connect.ConfigKey{Name: KeyHostname, Type: connect.TypeString, Importance: connect.High, Group: "Connection",
			Doc: "Resolvable hostname or IP address of the " + db + " server."}).
		Define(connect.ConfigKey{Name: KeyPort, Type: connect.TypeInt, Default: connect.Str("3306"), Importance: connect.High, Group: "Connection",
			Doc: "Port of the " + db + " server.",
			Validator: func(v string) string {
				if n, _ := strconv.Atoi(v); n < 1 || n > 65535 {
					return "must be a port number between 1 and 65535"
				}
				return ""
			}}).
		Define(connect.ConfigKey{Name: KeyUser, Type: connect.TypeString, Importance: connect.High, Group: "Connection",
			Doc: "Database user; needs SELECT, RELOAD (FLUSH TABLES WITH READ LOCK), REPLICATION SLAVE and REPLICATION CLIENT."}).
		Define(connect.ConfigKey{Name: KeyPassword, Type: connect.TypePassword, Default: connect.Str(""), Importance: connect.High, Group: "Connection",
			Doc: "Password of the database user."}).
		Define(connect.ConfigKey{Name: KeyServerID, Type: connect.TypeLong, Importance: connect.High, Group: "Connection",
			Doc: "Numeric id this connector uses as a replica when reading the binlog; unique among the server's replicas.",
			Validator: func(v string) string {
				if n, err := strconv.ParseUint(v, 10, 32); err != nil || n == 0 {
					return "must be an integer between 1 and 4294967295"
				}
				return ""
			}}).
		Define(connect.ConfigKey{Name: KeyTopicPrefix, Type: connect.TypeString, Importance: connect.High, Group: "Connector",
			Doc: "Topic prefix (the logical server name): topics are <topic.prefix>.<database>.<table>.",
			Validator: func(v string) string {
				if !regexp.MustCompile(`^[a-zA-Z0-9._-]+$`).MatchString(v) {
					return "can only contain alphanumeric characters, dots, dashes and underscores"
				}
				return ""
			}}).
		Define(connect.ConfigKey{Name: KeyDatabaseIncludeList, Type: connect.TypeList, Default: connect.Str(""), Importance: connect.High, Group: "Filters",
			Doc: "Comma-separated regular expressions matched (anchored) against database names; empty = all but the system databases.", Validator: regexList}).
		Define(connect.ConfigKey{Name: KeyDatabaseExcludeList, Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Medium, Group: "Filters",
			Doc: "Regular expressions of databases not captured (only without database.include.list).", Validator: regexList}).
		Define(connect.ConfigKey{Name: KeyTableIncludeList, Type: connect.TypeList, Default: connect.Str(""), Importance: connect.High, Group: "Filters",
			Doc: "Regular expressions matched (anchored) against <database>.<table>; empty = every table of the captured databases.", Validator: regexList}).
		Define(connect.ConfigKey{Name: KeyTableExcludeList, Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Medium, Group: "Filters",
			Doc: "Regular expressions of tables not captured (only without table.include.list).", Validator: regexList}).
		Define(connect.ConfigKey{Name: KeySnapshotMode, Type: connect.TypeString, Default: connect.Str(SnapshotInitial), Importance: connect.Low, Group: "Connector",
			Doc: "As Debezium 3.6: initial: snapshot when there is no offset (or the stored one is an unfinished snapshot's), then stream; initial_only: the same snapshot, then stop; no_data: record the structures only, then stream from the current position; always: snapshot at every start; when_needed: as initial, and also when the stored binlog position was purged from the server; recovery: record the current structures at the stored offset (rebuilding a lost schema history), then stream from it; configuration_based: as the snapshot.mode.configuration.based.* keys say. schema_only and schema_only_recovery are deprecated names of no_data and recovery.",
			Validator: func(v string) string {
				if strings.EqualFold(v, "never") {
					return "never is no longer supported (Debezium 3.6); use no_data, or when_needed"
				}
				if _, ok := snapshotModes[strings.ToLower(v)]; !ok {
					return "must be one of initial, initial_only, when_needed, no_data, always, recovery, configuration_based"
				}
				return ""
			}}).
		Define(connect.ConfigKey{Name: KeyConfigBasedSnapshotData, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low, Group: "Connector",
			Doc: "When 'snapshot.mode' is set as configuration_based, this setting permits to specify whenever the data should be snapshotted or not."}).
		Define(connect.ConfigKey{Name: KeyConfigBasedSnapshotSchema, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low, Group: "Connector",
			Doc: "When 'snapshot.mode' is set as configuration_based, this setting permits to specify whenever the schema should be snapshotted or not."}).
		Define(connect.ConfigKey{Name: KeyConfigBasedStartStream, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low, Group: "Connector",
			Doc: "When 'snapshot.mode' is set as configuration_based, this setting permits to specify whenever the stream should start or not after snapshot."}).
		Define(connect.ConfigKey{Name: KeyConfigBasedOnSchemaError, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low, Group: "Connector",
			Doc: "When 'snapshot.mode' is set as configuration_based, this setting permits to specify whenever the schema should be snapshotted or not in case of error."}).
		Define(connect.ConfigKey{Name: KeyConfigBasedOnDataError, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low, Group: "Connector",
			Doc: "When 'snapshot.mode' is set as configuration_based, this setting permits to specify whenever the data should be snapshotted or not in case of error."}).
		Define(connect.ConfigKey{Name: KeySnapshotLockingMode, Type: connect.TypeString, Default: connect.Str("minimal"), Importance: connect.Low, Group: "Connector",
			Allowed: []string{"minimal", "extended", "none"},
			Doc:     "minimal: hold the global read lock only while the binlog position is read and the consistent-snapshot transaction opens; extended: for the whole snapshot; none: no lock (only safe without concurrent DDL)."}).
		Define(connect.ConfigKey{Name: KeyIncludeSchemaChanges, Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Medium, Group: "Connector",
			Doc: "Whether schema change events (the DDL and the table structures it left, keyed by database name) are emitted on the <topic.prefix> topic."}).
		Define(connect.ConfigKey{Name: KeyHistoryTopic, Type: connect.TypeString, Default: connect.Str(""), Importance: connect.High, Group: "History Storage",
			Doc: "Topic of the schema history: every DDL with its binlog position and the table structures it left, in Debezium's record format; a restart decodes older binlog events with the structures current then. Empty = no history (connectd only; Debezium requires it): structures come from information_schema at start."}).
		Define(connect.ConfigKey{Name: KeyHistoryBootstrap, Type: connect.TypeList, Default: connect.Str(""), Importance: connect.High, Group: "History Storage",
			Doc: "Kafka brokers of the schema history topic; empty = the worker's."}).
		Define(connect.ConfigKey{Name: KeySkipUnparseableDDL, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low, Group: "History Storage",
			Doc: "Whether DDL that cannot be parsed is skipped instead of failing the task."}).
		Define(connect.ConfigKey{Name: KeyStoreOnlyCapturedTables, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low, Group: "History Storage",
			Doc: "Whether only the structures of captured tables (database.* and table.* filters) are recorded, as Debezium's: the snapshot reads, stores and emits the captured tables only (and stores no database statements), and DDL of other tables, and statements naming no table run in a database not captured, are neither stored nor emitted as schema change events while streaming (a DDL is kept when a table it leaves is captured). false: every table outside the system databases, captured or not (so a CREATE TABLE … LIKE or RENAME of a table that is not captured works, also after a restart). A table added to the filters later then has no structure in the history."}).
		Define(connect.ConfigKey{Name: KeyStoreOnlyCapturedDBs, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low, Group: "History Storage",
			Doc: "Whether only DDL of captured databases (database.include.list / database.exclude.list) is stored in the schema history and emitted as schema change events, in the snapshot and while streaming, as Debezium's; false: DDL of every database."}).
		Define(connect.ConfigKey{Name: KeySnapshotSelectOverrides, Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Low, Group: "Connector",
			Doc: "Tables (<database>.<table>) whose snapshot SELECT is given by snapshot.select.statement.overrides.<database>.<table>, as Debezium's MySQL connector: the statement must return the table's columns in the table's order (rows are read by position)."}).
		Define(connect.ConfigKey{Name: KeySkippedOperations, Type: connect.TypeList, Default: connect.Str("t"), Importance: connect.Low, Group: "Connector",
			Doc: "Operations not emitted while streaming: c (insert), u (update), d (delete), t (truncate: TRUNCATE TABLE of a captured table is an event with op t and no key), or none. Snapshot reads are always emitted. Skipped row events still advance the offset.",
			Validator: func(v string) string {
				for _, op := range splitList(v) {
					switch strings.ToLower(op) {
					case "c", "u", "d", "t", "none":
					default:
						return fmt.Sprintf("Invalid operation %q: must be one of c, u, d, t, none", op)
					}
				}
				return ""
			}}).
		Define(connect.ConfigKey{Name: KeyColumnIncludeList, Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Medium, Group: "Filters",
			Doc: "Regular expressions (anchored, case-sensitive) matched against <database>.<table>.<column>: only matching columns are in change events.", Validator: columnRegexList}).
		Define(connect.ConfigKey{Name: KeyColumnExcludeList, Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Medium, Group: "Filters",
			Doc: "Regular expressions matched against <database>.<table>.<column> of columns left out of change events (only without column.include.list).", Validator: columnRegexList}).
		Define(connect.ConfigKey{Name: KeyColumnPropagateType, Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Low, Group: "Filters",
			Doc: "Regular expressions matched against <database>.<table>.<column>: the field schema gets the __debezium.source.column.type, .length (when the column has one), .scale (DECIMAL) and .name parameters.", Validator: columnRegexList}).
		Define(connect.ConfigKey{Name: KeyDatatypePropagateType, Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Low, Group: "Filters",
			Doc: "Regular expressions matched against <database>.<table>.<TYPE>, TYPE as Debezium names it (INT, INT UNSIGNED, VARCHAR, DATETIME, …): the same parameters as column.propagate.source.type.", Validator: columnRegexList}).
		Define(connect.ConfigKey{Name: KeyMessageKeyColumns, Type: connect.TypeString, Default: connect.Str(""), Importance: connect.Low, Group: "Filters",
			Doc: "Custom message keys: <table regex>:<column>[,<column>…] entries separated by ';'; the key of a matching table is made of those columns, in the order listed."}).
		Define(connect.ConfigKey{Name: KeyGTIDSourceIncludes, Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Medium, Group: "Connector",
			Doc: "Regular expressions (anchored, case-insensitive) of GTID sources (MySQL server UUIDs, MariaDB <domain>-<server>) whose GTIDs the offset keeps and a restart resumes from; the server's current position is used for the others.", Validator: regexList}).
		Define(connect.ConfigKey{Name: KeyGTIDSourceExcludes, Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Medium, Group: "Connector",
			Doc: "Regular expressions of GTID sources left out of the offset's GTID set (only without gtid.source.includes).", Validator: regexList}).
		Define(connect.ConfigKey{Name: KeyGTIDFilterDML, Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Medium, Group: "Connector",
			Doc: "Whether row changes of transactions whose GTID source is filtered out (gtid.source.includes/excludes) are skipped."}).
		Define(connect.ConfigKey{Name: KeyHeartbeatIntervalMs, Type: connect.TypeInt, Default: connect.Str("0"), Importance: connect.Medium, Group: "Connector",
			Doc: "Interval in ms between heartbeat records on <topic.heartbeat.prefix>.<topic.prefix> while streaming (between transactions); 0 disables them. A heartbeat carries the binlog position reached, so committing it moves the stored offset forward while the captured tables are idle (Debezium's heartbeat.interval.ms).",
			Validator: func(v string) string {
				if n, err := strconv.Atoi(v); err != nil || n < 0 {
					return "must be a non-negative integer"
				}
				return ""
			}}).
		Define(connect.ConfigKey{Name: KeyHeartbeatActionQuery, Type: connect.TypeString, Default: connect.Str(""), Importance: connect.Low, Group: "Connector",
			Doc: "SQL statement run on the database before each heartbeat (e.g. an upsert into a heartbeat table, so that the binlog moves)."}).
		Define(connect.ConfigKey{Name: KeyHeartbeatTopicPrefix, Type: connect.TypeString, Default: connect.Str(heartbeat.DefaultTopicsPrefix), Importance: connect.Low, Group: "Connector",
			Doc: "Prefix of the heartbeat topic: <topic.heartbeat.prefix>.<topic.prefix>."}).
		Define(connect.ConfigKey{Name: KeyTombstonesOnDelete, Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Medium, Group: "Connector",
			Doc: "Whether a delete event is followed by a tombstone (same key, null value)."}).
		Define(connect.ConfigKey{Name: KeyDecimalHandlingMode, Type: connect.TypeString, Default: connect.Str("precise"), Importance: connect.Medium, Group: "Connector",
			Allowed: []string{"precise", "double", "string"},
			Doc:     "DECIMAL/NUMERIC values: precise: org.apache.kafka.connect.data.Decimal (bytes, scale and precision parameters); double: float64 (may lose precision); string: the plain decimal text."}).
		Define(connect.ConfigKey{Name: KeyTimePrecisionMode, Type: connect.TypeString, Default: connect.Str("adaptive_time_microseconds"), Importance: connect.Medium, Group: "Connector",
			Allowed: []string{"adaptive_time_microseconds", "adaptive", "connect"},
			Doc:     "adaptive_time_microseconds: DATE as io.debezium.time.Date, DATETIME(0-3) as Timestamp (ms), DATETIME(4-6) as MicroTimestamp, TIME as MicroTime; connect: Kafka Connect's Date, Timestamp (ms) and Time (ms of the day; TIME values outside a day are null). TIMESTAMP is io.debezium.time.ZonedTimestamp in both. adaptive is refused, as Debezium.",
			Validator: func(v string) string {
				if strings.EqualFold(v, "adaptive") {
					// Debezium's binlog connectors' own message.
					return "The 'adaptive' time.precision.mode is no longer supported"
				}
				return ""
			}}).
		Define(connect.ConfigKey{Name: KeyBigintUnsignedMode, Type: connect.TypeString, Default: connect.Str("long"), Importance: connect.Medium, Group: "Connector",
			Allowed: []string{"long", "precise"},
			Doc:     "BIGINT UNSIGNED values: long: int64 (values above 2^63-1 wrap, as Debezium); precise: org.apache.kafka.connect.data.Decimal with scale 0, precision 20."}).
		Define(connect.ConfigKey{Name: KeyExtendedHeadersEnabled, Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Low, Group: "Connector",
			Doc: "Whether change events and schema change events (snapshot and binlog) carry Debezium's context headers, as Debezium's extended.headers.enabled (DebeziumHeaderProducer): " +
				"__debezium.context.connectorLogicalName (topic.prefix), __debezium.context.taskId (0), __debezium.context.connectorName (mariadb or mysql) and __debezium.context.runId " +
				"(a UUID drawn when the task starts), string values. Heartbeats carry none. The __debezium.newkey/__debezium.oldkey headers of a primary-key change are always sent."}).
		Define(connect.ConfigKey{Name: KeyConverters, Type: connect.TypeString, Optional: true, Importance: connect.Low, Group: "Events",
			Doc: "Comma-separated names of custom converters, each with <name>.type (its class) and <name>.<option> keys, as Debezium's converters. connectd implements " + TinyIntOneToBooleanClass +
				" (options selector: comma-separated regexes matched against <db>.<table>.<column>, none = every column; length.checker, default true: only TINYINT(1)): " +
				"matching TINYINT/TINYINT UNSIGNED columns become booleans (value > 0), in the snapshot and the binlog. Any other class is refused."}).
		Define(connect.ConfigKey{Name: KeyEnableTimeAdjuster, Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Medium, Group: "Connector",
			Doc: "Whether DATE and DATETIME values with a year from 0 to 99 get the two-digit year rule, as Debezium's enable.time.adjuster " +
				"(MySqlValueConverters.adjustTemporal): 0-69 become 2000-2069, 70-99 become 1970-1999 ('0018-04-01' → 2018-04-01), in the snapshot and the binlog; false keeps the year as stored."}).
		Define(connect.ConfigKey{Name: KeyBinaryHandlingMode, Type: connect.TypeString, Default: connect.Str("bytes"), Importance: connect.Low, Group: "Connector",
			Allowed: []string{"bytes", "base64", "base64-url-safe", "hex"},
			Doc:     "BINARY/VARBINARY/BLOB values: bytes; base64 / base64-url-safe (padded) or hex (lower case) strings."}).
		Define(connect.ConfigKey{Name: KeyDeserializationFailure, Type: connect.TypeString, Default: connect.Str("fail"), Importance: connect.Medium, Group: "Connector",
			Allowed: []string{"fail", "warn", "skip", "ignore"},
			Doc:     "What to do with a binlog event that cannot be decoded: fail the task (warn/skip are accepted and behave as fail for now)."}).
		Define(connect.ConfigKey{Name: KeyConnectionTimeZone, Type: connect.TypeString, Default: connect.Str(""), Importance: connect.Low, Group: "Connection",
			Doc: "Time zone of the session; empty = the server's (TIMESTAMP values are always converted to UTC)."}).
		Define(connect.ConfigKey{Name: KeyMaxBatchSize, Type: connect.TypeInt, Default: connect.Str("2048"), Importance: connect.Medium, Group: "Connector",
			Doc: "Maximum number of records returned by one poll.", Validator: positiveInt}).
		Define(connect.ConfigKey{Name: KeyMaxQueueSize, Type: connect.TypeInt, Default: connect.Str("8192"), Importance: connect.Medium, Group: "Connector",
			Doc: "Maximum number of records queued between the reader and poll.", Validator: positiveInt}).
		Define(connect.ConfigKey{Name: KeyPollIntervalMs, Type: connect.TypeLong, Default: connect.Str("500"), Importance: connect.Medium, Group: "Connector",
			Doc: "Time in ms a poll waits for records before returning none.", Validator: positiveInt}).
		Define(connect.ConfigKey{Name: KeyConnectTimeoutMs, Type: connect.TypeInt, Default: connect.Str("30000"), Importance: connect.Low, Group: "Connection",
			Doc: "Time in ms to wait for a connection to the server.", Validator: positiveInt})
}

var splitList = columns.SplitList

func columnRegexList(v string) string {
	if _, err := columns.CompileList(v); err != nil {
		return err.Error()
	}
	return ""
}

func validate(f flavor, cfg map[string]string) []connect.ConfigError {
	errs := configDef(f).Validate(cfg)
	if _, cerrs := parseConverters(cfg); len(cerrs) > 0 {
		errs = append(errs, cerrs...)
	}
	if _, err := columns.Parse(cfg); err != nil {
		// the mask/truncate/hash keys and message.key.columns
		key, _, _ := strings.Cut(err.Error(), ":")
		dup := false
		for _, e := range errs {
			dup = dup || e.Key == key // already reported by the key's validator
		}
		if !dup {
			errs = append(errs, connect.ConfigError{Key: key, Message: err.Error()})
		}
	}
	connect.SortErrors(errs)
	return errs
}

// ConfigError lists every invalid key of a configuration.
type ConfigError struct{ Errors []connect.ConfigError }

func (e *ConfigError) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, ce := range e.Errors {
		msgs[i] = ce.Message
	}
	return "mysql: invalid configuration: " + strings.Join(msgs, "; ")
}

// config is a validated connector configuration.
type config struct {
	selectOverrides      map[string]string // snapshot.select.statement.overrides.<db>.<table>
	host, user, password string
	port                 int
	serverID             uint32
	topicPrefix          string
	dbInclude, dbExclude []*regexp.Regexp
	tbInclude, tbExclude []*regexp.Regexp
	snapshotMode         string
	snapshotModeAlias    string // the deprecated spelling used, if any
	configBased          configBased
	historyTopic         string
	historyBrokers       []string
	skipUnparseableDDL   bool
	storeOnlyTables      bool // schema.history.internal.store.only.captured.tables.ddl
	storeOnlyDBs         bool // schema.history.internal.store.only.captured.databases.ddl
	rules                *columns.Rules
	skipped              skippedOps
	includeSchemaChanges bool
	extendedHeaders      bool // extended.headers.enabled
	lockingMode          string
	tombstonesOnDelete   bool
	maxBatchSize         int
	maxQueueSize         int
	pollIntervalMs       int
	connectTimeoutMs     int
	modes                valueModes
	gtidInclude          []*regexp.Regexp
	gtidExclude          []*regexp.Regexp
	gtidFilterDML        bool
	heartbeatIntervalMs  int
	heartbeatQuery       string
	heartbeatTopic       string
}

func anchored(pats []string) []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, p := range pats {
		// Debezium matches the whole identifier, case-insensitively.
		// (ASCII letters only, as Java's CASE_INSENSITIVE)
		re, err := columns.CompileCI(p, true)
		if err != nil {
			re = regexp.MustCompile(`(?i)^(?:` + p + `)$`) // validation reports it
		}
		out = append(out, re)
	}
	return out
}

func parseConfig(f flavor, cfg map[string]string) (*config, error) {
	if errs := validate(f, cfg); len(errs) > 0 {
		return nil, &ConfigError{Errors: errs}
	}
	p := configDef(f).Parse(cfg)
	sid, _ := strconv.ParseUint(p.String(KeyServerID), 10, 32)
	c := &config{
		host: p.String(KeyHostname), port: p.Int(KeyPort), user: p.String(KeyUser), password: p.String(KeyPassword),
		serverID: uint32(sid), topicPrefix: p.String(KeyTopicPrefix),
		dbInclude: anchored(p.List(KeyDatabaseIncludeList)), dbExclude: anchored(p.List(KeyDatabaseExcludeList)),
		tbInclude: anchored(p.List(KeyTableIncludeList)), tbExclude: anchored(p.List(KeyTableExcludeList)),
		snapshotMode: snapshotModes[strings.ToLower(p.String(KeySnapshotMode))],
		configBased: configBased{data: p.Bool(KeyConfigBasedSnapshotData), schema: p.Bool(KeyConfigBasedSnapshotSchema),
			stream: p.Bool(KeyConfigBasedStartStream), onSchemaError: p.Bool(KeyConfigBasedOnSchemaError), onDataError: p.Bool(KeyConfigBasedOnDataError)},
		lockingMode:  strings.ToLower(p.String(KeySnapshotLockingMode)),
		historyTopic: p.String(KeyHistoryTopic), historyBrokers: p.List(KeyHistoryBootstrap),
		skipUnparseableDDL: p.Bool(KeySkipUnparseableDDL), includeSchemaChanges: p.Bool(KeyIncludeSchemaChanges),
		tombstonesOnDelete: p.Bool(KeyTombstonesOnDelete), extendedHeaders: p.Bool(KeyExtendedHeadersEnabled),
		maxBatchSize: p.Int(KeyMaxBatchSize), maxQueueSize: p.Int(KeyMaxQueueSize),
		pollIntervalMs: p.Int(KeyPollIntervalMs), connectTimeoutMs: p.Int(KeyConnectTimeoutMs),
		modes: valueModes{decimal: strings.ToLower(p.String(KeyDecimalHandlingMode)), time: strings.ToLower(p.String(KeyTimePrecisionMode)),
			bigintPrecise: strings.EqualFold(p.String(KeyBigintUnsignedMode), "precise"), binary: strings.ToLower(p.String(KeyBinaryHandlingMode)),
			timeAdjuster: p.Bool(KeyEnableTimeAdjuster)},
		gtidInclude: anchored(p.List(KeyGTIDSourceIncludes)), gtidExclude: anchored(p.List(KeyGTIDSourceExcludes)),
		gtidFilterDML:       p.Bool(KeyGTIDFilterDML),
		heartbeatIntervalMs: p.Int(KeyHeartbeatIntervalMs), heartbeatQuery: p.String(KeyHeartbeatActionQuery),
		heartbeatTopic: heartbeat.Topic(p.String(KeyHeartbeatTopicPrefix), p.String(KeyTopicPrefix)),
	}
	c.storeOnlyTables, c.storeOnlyDBs = p.Bool(KeyStoreOnlyCapturedTables), p.Bool(KeyStoreOnlyCapturedDBs)
	c.rules, _ = columns.Parse(cfg)
	c.modes.tinyBool, _ = parseConverters(cfg)
	c.selectOverrides = relational.SelectOverrides(p.List(KeySnapshotSelectOverrides), cfg)
	for _, op := range p.List(KeySkippedOperations) {
		if op = strings.ToLower(op); op == "none" {
			c.skipped = skippedOps{}
			break
		}
		c.skipped[op[0]] = true
	}
	if m := strings.ToLower(p.String(KeySnapshotMode)); m == "schema_only" || m == "schema_only_recovery" {
		c.snapshotModeAlias = m
	}
	return c, nil
}

// skippedOps says which envelope ops are not emitted (skipped.operations),
// indexed by the op's letter.
type skippedOps [128]bool

func (s *skippedOps) skip(op string) bool { return len(op) == 1 && op[0] < 128 && s[op[0]] }

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// systemDB reports the databases Debezium never captures.
func systemDB(db string) bool {
	switch strings.ToLower(db) {
	case "mysql", "information_schema", "performance_schema", "sys":
		return true
	}
	return false
}

// dbIncluded reports whether database db is captured.
func (c *config) dbIncluded(db string) bool {
	if systemDB(db) {
		return false
	}
	if len(c.dbInclude) > 0 {
		return matchAny(c.dbInclude, db)
	}
	return !matchAny(c.dbExclude, db)
}

// schemaTracked reports whether db.table's structure is kept in the
// schema history and described by schema change events (snapshot
// structures, tableChanges): every table outside the system databases, as
// Debezium's eligibleForSchemaDataCollectionFilter
// (table.ignore.builtin=true; database.include.list and the table lists do
// not apply), or only the captured tables with
// schema.history.internal.store.only.captured.tables.ddl=true.
func (c *config) schemaTracked(db, table string) bool {
	if c.storeOnlyTables {
		return c.included(db, table)
	}
	return !systemDB(db)
}

// included reports whether db.table is captured.
func (c *config) included(db, table string) bool {
	if !c.dbIncluded(db) {
		return false
	}
	id := db + "." + table
	if len(c.tbInclude) > 0 {
		return matchAny(c.tbInclude, id)
	}
	return !matchAny(c.tbExclude, id)
}
