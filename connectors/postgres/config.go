package postgres

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/columns"
	"github.com/connectd/connectd/connectors/internal/heartbeat"
	"github.com/connectd/connectd/connectors/internal/relational"
	"github.com/connectd/connectd/connectors/internal/signal"
)

// Configuration keys, as io.debezium.connector.postgresql.PostgresConnectorConfig.
const (
	KeyConnectorClass         = "connector.class"
	KeyHostname               = "database.hostname"
	KeyPort                   = "database.port"
	KeyUser                   = "database.user"
	KeyPassword               = "database.password"
	KeyDBName                 = "database.dbname"
	KeyTopicPrefix            = "topic.prefix"
	KeyPluginName             = "plugin.name"
	KeySlotName               = "slot.name"
	KeyPublicationName        = "publication.name"
	KeyPublicationAutocreate  = "publication.autocreate.mode"
	KeyTableIncludeList       = "table.include.list"
	KeySnapshotMode           = "snapshot.mode"
	KeyTombstonesOnDelete     = "tombstones.on.delete"
	KeyMaxBatchSize           = "max.batch.size"
	KeyMaxQueueSize           = "max.queue.size"
	KeyPollIntervalMs         = "poll.interval.ms"
	KeyStatusUpdateIntervalMs = "status.update.interval.ms"

	KeyDecimalHandlingMode     = "decimal.handling.mode"
	KeyTimePrecisionMode       = "time.precision.mode"
	KeyBinaryHandlingMode      = "binary.handling.mode"
	KeyIntervalHandlingMode    = "interval.handling.mode"
	KeyHstoreHandlingMode      = "hstore.handling.mode"
	KeyMoneyFractionDigits     = "money.fraction.digits"
	KeyIncludeUnknownDataTypes = "include.unknown.datatypes"

	KeyUnavailableValuePlaceholder = "unavailable.value.placeholder"
	KeySkippedOperations           = "skipped.operations"

	KeyProvideTransactionMetadata = "provide.transaction.metadata"
	KeyTopicTransaction           = "topic.transaction"
	KeyHeartbeatIntervalMs        = "heartbeat.interval.ms"
	KeyHeartbeatActionQuery       = "heartbeat.action.query"
	KeyHeartbeatTopicPrefix       = "topic.heartbeat.prefix"

	// KeyPublishViaPartitionRoot is Debezium's publish.via.partition.root
	// (3.2+, DBZ-9158): an autocreated publication gets WITH
	// (publish_via_partition_root = true).
	KeyPublishViaPartitionRoot = "publish.via.partition.root"
	// KeyPgoutputStreaming and KeyPgoutputStreamingMemoryBytes are
	// connectd's own (Debezium asks pgoutput for proto_version 1, without
	// streaming): see stream_spool.go.
	KeyPgoutputStreaming            = "pgoutput.streaming"
	KeyPgoutputStreamingMemoryBytes = "pgoutput.streaming.memory.bytes"

	KeySlotDropOnStop = "slot.drop.on.stop"

	KeySnapshotData              = "snapshot.mode.configuration.based.snapshot.data"
	KeySnapshotSchema            = "snapshot.mode.configuration.based.snapshot.schema"
	KeySnapshotStartStream       = "snapshot.mode.configuration.based.start.stream"
	KeySnapshotOnSchemaError     = "snapshot.mode.configuration.based.snapshot.on.schema.error"
	KeySnapshotOnDataError       = "snapshot.mode.configuration.based.snapshot.on.data.error"
	KeySnapshotSelectOverrides   = relational.KeySnapshotSelectOverrides
	KeySnapshotFetchSize         = "snapshot.fetch.size"
	KeySnapshotMaxThreads        = "snapshot.max.threads"
	KeySnapshotIncludeCollection = "snapshot.include.collection.list"
)

// Values of the type handling modes, as Debezium 3.6 spells them.
const (
	decimalPrecise = "precise"
	decimalDouble  = "double"
	decimalString  = "string"

	timeAdaptive       = "adaptive"
	timeAdaptiveMicros = "adaptive_time_microseconds"
	timeConnect        = "connect"
	timeIsoString      = "isostring"
	timeMicroseconds   = "microseconds"
	timeNanoseconds    = "nanoseconds"

	binaryBytes     = "bytes"
	binaryBase64    = "base64"
	binaryBase64URL = "base64-url-safe"
	binaryHex       = "hex"

	intervalNumeric = "numeric"
	intervalString  = "string"

	hstoreJSON = "json"
	hstoreMap  = "map"
)

// handling is how column values are represented (the *.handling.mode,
// time.precision.mode, money.fraction.digits and include.unknown.datatypes
// keys).
type handling struct {
	decimal, time, binary, interval, hstore string
	moneyDigits                             int
	placeholder                             string // unavailable.value.placeholder
	includeUnknown                          bool
	schemaNames                             string // schema.name.adjustment.mode ("" = none)
}

// defaultHandling is Debezium's default for every mode.
var defaultHandling = handling{decimal: decimalPrecise, time: timeAdaptive, binary: binaryBytes,
	interval: intervalNumeric, hstore: hstoreJSON, moneyDigits: 2, placeholder: unavailableValue}

// Snapshot modes this connector implements (snapshot.mode), as Debezium
// 3.6's PostgresConnectorConfig.SnapshotMode.
const (
	SnapshotInitial            = "initial"
	SnapshotNoData             = "no_data"
	SnapshotInitialOnly        = "initial_only"
	SnapshotWhenNeeded         = "when_needed"
	SnapshotAlways             = "always"
	SnapshotConfigurationBased = "configuration_based"
)

// defaultSnapshotFetchSize is PostgresConnectorConfig's default
// snapshot.fetch.size (rows per cursor fetch).
const defaultSnapshotFetchSize = 10240

var slotNameRE = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

func positiveInt(v string) string {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return "must be a positive integer"
	}
	return ""
}

// ownConfigDef is connectd's definition of the keys it implements;
// configDef is it laid out as Debezium's (config_layout.go).
var ownConfigDef = connect.NewConfigDef().
	Define(connect.ConfigKey{Name: KeyConnectorClass, Type: connect.TypeString, Default: connect.Str(ClassName), Importance: connect.High,
		Doc: "The connector class: " + ClassName + "."}).
	Define(connect.ConfigKey{Name: KeyHostname, Type: connect.TypeString, Default: nil, Importance: connect.High,
		Doc: "Resolvable hostname or IP address of the PostgreSQL database server."}).
	Define(connect.ConfigKey{Name: KeyPort, Type: connect.TypeInt, Default: connect.Str("5432"), Importance: connect.High,
		Doc: "Port of the PostgreSQL database server.",
		Validator: func(v string) string {
			if n, _ := strconv.Atoi(v); n < 1 || n > 65535 {
				return "must be a port number between 1 and 65535"
			}
			return ""
		}}).
	Define(connect.ConfigKey{Name: KeyUser, Type: connect.TypeString, Default: nil, Importance: connect.High,
		Doc: "Name of the database user (needs REPLICATION and SELECT on the captured tables)."}).
	Define(connect.ConfigKey{Name: KeyPassword, Type: connect.TypePassword, Optional: true, Importance: connect.High,
		Doc: "Password of the database user."}).
	Define(connect.ConfigKey{Name: KeyDBName, Type: connect.TypeString, Default: nil, Importance: connect.High,
		Doc: "The name of the database from which to stream changes."}).
	Define(connect.ConfigKey{Name: KeyTopicPrefix, Type: connect.TypeString, Default: nil, Importance: connect.High,
		Doc: "Topic prefix (the logical server name): topics are <topic.prefix>.<schema>.<table>.",
		Validator: func(v string) string {
			if v == "" {
				return "must not be empty"
			}
			if !regexp.MustCompile(`^[a-zA-Z0-9._-]+$`).MatchString(v) {
				return "can only contain alphanumeric characters, dots, dashes and underscores"
			}
			return ""
		}}).
	Define(connect.ConfigKey{Name: KeyPluginName, Type: connect.TypeString, Default: connect.Str("decoderbufs"), Importance: connect.Medium,
		Doc: "The logical decoding plugin; connectd supports only pgoutput.",
		Validator: func(v string) string {
			switch strings.ToLower(v) {
			case "pgoutput":
				return ""
			case "decoderbufs":
				return "decoderbufs is not supported by connectd; set plugin.name=pgoutput"
			}
			return "must be pgoutput"
		}}).
	Define(connect.ConfigKey{Name: KeySlotName, Type: connect.TypeString, Default: connect.Str("debezium"), Importance: connect.Medium,
		Doc: "Name of the PostgreSQL logical decoding slot.",
		Validator: func(v string) string {
			if !slotNameRE.MatchString(v) {
				return "slot names may contain only lower-case letters, digits and underscores (at most 63)"
			}
			return ""
		}}).
	Define(connect.ConfigKey{Name: KeyPublicationName, Type: connect.TypeString, Default: connect.Str("dbz_publication"), Importance: connect.Medium,
		Doc: "Name of the PostgreSQL publication used with pgoutput."}).
	Define(connect.ConfigKey{Name: KeyPublicationAutocreate, Type: connect.TypeString, Default: connect.Str("all_tables"), Importance: connect.Low,
		Allowed: []string{"all_tables", "disabled", "filtered"},
		Doc:     "all_tables: create the publication FOR ALL TABLES if missing; filtered: FOR TABLE the included tables; disabled: never create it."}).
	Define(connect.ConfigKey{Name: KeyTableIncludeList, Type: connect.TypeList, Optional: true, Importance: connect.High,
		Doc: "Comma-separated regular expressions matched (anchored) against <schema>.<table>; empty = all non-system tables.",
		Validator: func(v string) string {
			for _, p := range splitList(v) {
				if _, err := regexp.Compile(p); err != nil {
					return fmt.Sprintf("invalid regular expression %q: %v", p, err)
				}
			}
			return ""
		}}).
	Define(connect.ConfigKey{Name: KeyTableExcludeList, Type: connect.TypeList, Optional: true, Importance: connect.Medium,
		Doc: "Comma-separated regular expressions matched (anchored) against <schema>.<table> of tables not captured (when table.include.list is empty).", Validator: regexListValidator}).
	Define(connect.ConfigKey{Name: KeySchemaIncludeList, Type: connect.TypeList, Optional: true, Importance: connect.Medium,
		Doc: "Comma-separated regular expressions matched (anchored) against schema names: only tables of matching schemas are captured.", Validator: regexListValidator}).
	Define(connect.ConfigKey{Name: KeySchemaExcludeList, Type: connect.TypeList, Optional: true, Importance: connect.Medium,
		Doc: "Comma-separated regular expressions matched (anchored) against schema names whose tables are not captured.", Validator: regexListValidator}).
	Define(connect.ConfigKey{Name: KeyColumnIncludeList, Type: connect.TypeList, Optional: true, Importance: connect.Medium,
		Doc: "Comma-separated regular expressions matched (anchored) against <schema>.<table>.<column>: only matching columns are in change events.", Validator: regexListValidator}).
	Define(connect.ConfigKey{Name: KeyColumnExcludeList, Type: connect.TypeList, Optional: true, Importance: connect.Medium,
		Doc: "Comma-separated regular expressions matched (anchored) against <schema>.<table>.<column> of columns left out of change events.", Validator: regexListValidator}).
	Define(connect.ConfigKey{Name: KeyColumnPropagateType, Type: connect.TypeList, Optional: true, Importance: connect.Medium,
		Doc: "Comma-separated regular expressions matched (anchored) against <schema>.<table>.<column>: the field schema gets __debezium.source.column.type, .length, .scale and .name parameters.", Validator: regexListValidator}).
	Define(connect.ConfigKey{Name: KeyMessagePrefixIncludeLst, Type: connect.TypeList, Optional: true, Importance: connect.Low,
		Doc: "Comma-separated regular expressions matched (anchored) against the prefix of logical decoding messages to emit (empty = all).", Validator: regexListValidator}).
	Define(connect.ConfigKey{Name: KeyMessagePrefixExcludeLst, Type: connect.TypeList, Optional: true, Importance: connect.Low,
		Doc: "Comma-separated regular expressions matched (anchored) against the prefix of logical decoding messages not to emit.", Validator: regexListValidator}).
	Define(connect.ConfigKey{Name: KeyMessageKeyColumns, Type: connect.TypeString, Optional: true, Importance: connect.Low,
		Doc: "Custom message keys: <table regex>:<column>[,<column>…] entries separated by ';'; the key of a matching table is made of those columns (in table order)."}).
	Define(connect.ConfigKey{Name: KeySnapshotMode, Type: connect.TypeString, Default: connect.Str(SnapshotInitial), Importance: connect.Low,
		Doc: "The criteria for running a snapshot upon startup of the connector. " +
			"'always': the connector runs a snapshot every time that it starts; after the snapshot completes, it streams changes from the transaction log. " +
			"'initial' (default): if the connector does not detect any offsets for the logical server name (or the recorded snapshot did not complete), it runs a snapshot that captures the current full state of the configured tables, then streams changes. " +
			"'initial_only': the connector performs a snapshot as it does for 'initial', then stops without streaming changes. " +
			"'no_data': the connector never snapshots data; it streams from the stored offset, or from the slot's position when there is none ('never' and 'schema_only' are deprecated names for it). " +
			"'when_needed': the connector runs a snapshot when it finds no offset, or when the stored offset's LSN is no longer available in the replication slot. " +
			"'configuration_based': the snapshot.mode.configuration.based.* properties decide whether data is snapshotted and whether streaming starts.",
		Validator: func(v string) string {
			if _, ok := normalizeSnapshotMode(v); !ok {
				if strings.EqualFold(strings.TrimSpace(v), "custom") {
					return "custom snapshotters (snapshot.mode=custom) are not supported by connectd"
				}
				return "must be one of always, initial, initial_only, no_data, when_needed, configuration_based"
			}
			return ""
		}}).
	Define(connect.ConfigKey{Name: KeySnapshotData, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low,
		Doc: "When 'snapshot.mode' is set as configuration_based, this setting permits to specify whenever the data should be snapshotted or not (at every start, as Debezium's ConfigurationBasedSnapshotter)."}).
	Define(connect.ConfigKey{Name: KeySnapshotSchema, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low,
		Doc: "When 'snapshot.mode' is set as configuration_based, this setting permits to specify whenever the schema should be snapshotted or not. The PostgreSQL connector keeps no schema history, so this has no effect on its output."}).
	Define(connect.ConfigKey{Name: KeySnapshotStartStream, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low,
		Doc: "When 'snapshot.mode' is set as configuration_based, this setting permits to specify whenever the stream should start or not after snapshot."}).
	Define(connect.ConfigKey{Name: KeySnapshotOnSchemaError, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low,
		Doc: "When 'snapshot.mode' is set as configuration_based, this setting permits to specify whenever the schema should be snapshotted or not in case of error. The PostgreSQL connector keeps no schema history, so there is no schema error to recover from."}).
	Define(connect.ConfigKey{Name: KeySnapshotOnDataError, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low,
		Doc: "When 'snapshot.mode' is set as configuration_based, this setting permits to specify whenever the data should be snapshotted or not in case of error (the stored offset's LSN is no longer available in the replication slot)."}).
	Define(connect.ConfigKey{Name: KeySnapshotSelectOverrides, Type: connect.TypeString, Optional: true, Importance: connect.Medium,
		Doc: "This property contains a comma-separated list of fully-qualified tables (SCHEMA_NAME.TABLE_NAME). Select statements for the individual tables are specified in further configuration properties, one for each table, identified by the id 'snapshot.select.statement.overrides.SCHEMA_NAME.TABLE_NAME'. The value of those properties is the select statement to use when retrieving data from the specific table during snapshotting. Result columns are matched to the table's columns by name; columns not selected are null.",
		Validator: func(v string) string {
			for _, id := range splitList(v) {
				if _, _, ok := strings.Cut(id, "."); !ok {
					return fmt.Sprintf("%q is not a fully-qualified table name (SCHEMA_NAME.TABLE_NAME)", id)
				}
			}
			return ""
		}}).
	Define(connect.ConfigKey{Name: KeySnapshotFetchSize, Type: connect.TypeInt, Optional: true, Importance: connect.Medium,
		Doc:       "The maximum number of records that should be loaded into memory while performing a snapshot (rows per cursor FETCH).",
		Validator: positiveInt}).
	Define(connect.ConfigKey{Name: KeySnapshotMaxThreads, Type: connect.TypeInt, Default: connect.Str("1"), Importance: connect.Medium,
		Doc:       "The maximum number of threads used to perform the snapshot. Defaults to 1. Each thread reads on its own connection, inside the same exported snapshot (SET TRANSACTION SNAPSHOT): with more than one thread, tables with a primary key are read in chunks (snapshot.max.threads.multiplier), whole tables with legacy.snapshot.max.threads.",
		Validator: positiveInt}).
	Define(connect.ConfigKey{Name: KeySnapshotIncludeCollection, Type: connect.TypeList, Optional: true, Importance: connect.Medium,
		Doc:       "This setting must be set to specify a list of tables/collections whose snapshot must be taken on creating or restarting the connector: comma-separated regular expressions matched (anchored) against <schema>.<table> of the captured tables; empty = every captured table.",
		Validator: regexListValidator}).
	Define(connect.ConfigKey{Name: KeySlotDropOnStop, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Medium,
		Doc: "Whether or not to drop the logical replication slot when the connector finishes orderly. By default the replication is kept so that on restart progress can resume from the last recorded location."}).
	Define(connect.ConfigKey{Name: KeyTombstonesOnDelete, Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Medium,
		Doc: "Whether a delete event is followed by a tombstone (same key, null value)."}).
	Define(connect.ConfigKey{Name: KeyMaxBatchSize, Type: connect.TypeInt, Default: connect.Str("2048"), Importance: connect.Medium,
		Doc: "Maximum number of records returned by one poll.", Validator: positiveInt}).
	Define(connect.ConfigKey{Name: KeyMaxQueueSize, Type: connect.TypeInt, Default: connect.Str("8192"), Importance: connect.Medium,
		Doc: "Maximum number of records queued between the reader and poll.", Validator: positiveInt}).
	Define(connect.ConfigKey{Name: KeyPollIntervalMs, Type: connect.TypeLong, Default: connect.Str("500"), Importance: connect.Medium,
		Doc: "Time in ms a poll waits for records before returning none.", Validator: positiveInt}).
	Define(connect.ConfigKey{Name: KeyStatusUpdateIntervalMs, Type: connect.TypeInt, Default: connect.Str("10000"), Importance: connect.Low,
		Doc: "Interval in ms between standby status updates sent to the server.", Validator: positiveInt}).
	Define(connect.ConfigKey{Name: KeyDecimalHandlingMode, Type: connect.TypeString, Default: connect.Str(decimalPrecise), Importance: connect.Medium,
		Allowed: []string{decimalPrecise, decimalDouble, decimalString},
		Doc:     "How numeric and money values are represented: precise (org.apache.kafka.connect.data.Decimal; io.debezium.data.VariableScaleDecimal for numeric without scale; NaN and Infinity become null), double (may lose precision; NaN and Infinity kept), string (plain text; NaN as NAN, Infinity as POSITIVE_INFINITY / NEGATIVE_INFINITY)."}).
	Define(connect.ConfigKey{Name: KeyTimePrecisionMode, Type: connect.TypeString, Default: connect.Str(timeAdaptive), Importance: connect.Medium,
		Allowed: []string{timeAdaptive, timeAdaptiveMicros, timeConnect, timeIsoString, timeMicroseconds, timeNanoseconds},
		Doc:     "How date, time and timestamp values are represented: adaptive (by column precision: io.debezium.time.Date, Time/MicroTime, Timestamp/MicroTimestamp), adaptive_time_microseconds (time always MicroTime), connect (Kafka Connect's Date, Time, Timestamp in ms), isostring (ISO-8601 strings IsoDate, IsoTime, IsoTimestamp), microseconds (MicroTime, MicroTimestamp), nanoseconds (NanoTime, NanoTimestamp). timetz and timestamptz are always ZonedTime / ZonedTimestamp."}).
	Define(connect.ConfigKey{Name: KeyBinaryHandlingMode, Type: connect.TypeString, Default: connect.Str(binaryBytes), Importance: connect.Low,
		Allowed: []string{binaryBytes, binaryBase64, binaryBase64URL, binaryHex},
		Doc:     "How bytea values are represented: bytes, or a string in base64, base64-url-safe or hex."}).
	Define(connect.ConfigKey{Name: KeyIntervalHandlingMode, Type: connect.TypeString, Default: connect.Str(intervalNumeric), Importance: connect.Medium,
		Allowed: []string{intervalNumeric, intervalString},
		Doc:     "How interval values are represented: numeric (io.debezium.time.MicroDuration, microseconds with 365.25/12-day months) or string (io.debezium.time.Interval, ISO-8601 P<y>Y<m>M<d>DT<h>H<m>M<s>S)."}).
	Define(connect.ConfigKey{Name: KeyHstoreHandlingMode, Type: connect.TypeString, Default: connect.Str(hstoreJSON), Importance: connect.Low,
		Allowed: []string{hstoreJSON, hstoreMap},
		Doc:     "How hstore values are represented: json (io.debezium.data.Json string) or map (map of string to optional string)."}).
	Define(connect.ConfigKey{Name: KeyMoneyFractionDigits, Type: connect.TypeInt, Default: connect.Str("2"), Importance: connect.Medium,
		Doc: "Number of fraction digits of money values (the Decimal scale under decimal.handling.mode=precise).",
		Validator: func(v string) string {
			if n, _ := strconv.Atoi(v); n < 0 || n > 32767 {
				return "must be between 0 and 32767"
			}
			return ""
		}}).
	Define(connect.ConfigKey{Name: KeyIncludeUnknownDataTypes, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low,
		Doc: "Whether columns of types Debezium has no mapping for (tsquery, pg_lsn, line, box, …) are emitted, as bytes of their text representation, instead of being left out."}).
	Define(connect.ConfigKey{Name: KeyUnavailableValuePlaceholder, Type: connect.TypeString, Default: connect.Str(unavailableValue), Importance: connect.Medium,
		Doc: "The value of an unchanged TOASTed column that the server did not send (REPLICA IDENTITY DEFAULT): the string itself for string columns, its UTF-8 bytes for bytea, one-element lists for text/varchar/json/jsonb/bytea/uuid arrays, its bytes as numbers for int4/int8/date arrays, {placeholder: placeholder} for hstore."}).
	Define(connect.ConfigKey{Name: KeySkippedOperations, Type: connect.TypeList, Default: connect.Str("t"), Importance: connect.Low,
		Doc: "Comma-separated operations not emitted while streaming: c (insert), u (update), d (delete), t (truncate), or none. Debezium 3.x's default skips truncates.",
		Validator: func(v string) string {
			if _, err := parseSkippedOps(v); err != nil {
				return err.Error()
			}
			return ""
		}}).
	Define(connect.ConfigKey{Name: KeyProvideTransactionMetadata, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low,
		Doc: "Whether BEGIN and END events of each streamed transaction are emitted to <topic.prefix>.<topic.transaction> (event_count and per-table counts in END) and change events carry the transaction block (id, total_order, data_collection_order)."}).
	Define(connect.ConfigKey{Name: KeyTopicTransaction, Type: connect.TypeString, Default: connect.Str("transaction"), Importance: connect.Low,
		Doc: "Name of the transaction metadata topic after <topic.prefix>."}).
	Define(connect.ConfigKey{Name: KeyHeartbeatIntervalMs, Type: connect.TypeInt, Default: connect.Str("0"), Importance: connect.Medium,
		Doc: "Interval in ms between heartbeat records on <topic.heartbeat.prefix>.<topic.prefix> while streaming; 0 disables them. A heartbeat carries the current offset, so committing it confirms the server's WAL position to the slot even when no captured table changes (the retained WAL stays bounded).",
		Validator: func(v string) string {
			if n, err := strconv.Atoi(v); err != nil || n < 0 {
				return "must be a non-negative integer"
			}
			return ""
		}}).
	Define(connect.ConfigKey{Name: KeyHeartbeatActionQuery, Type: connect.TypeString, Optional: true, Importance: connect.Low,
		Doc: "SQL statement run on the database before each heartbeat (e.g. an upsert into a heartbeat table)."}).
	Define(connect.ConfigKey{Name: KeyHeartbeatTopicPrefix, Type: connect.TypeString, Default: connect.Str("__debezium-heartbeat"), Importance: connect.Low,
		Doc: "Prefix of the heartbeat topic: <topic.heartbeat.prefix>.<topic.prefix>."}).
	Define(connect.ConfigKey{Name: KeyPublishViaPartitionRoot, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low,
		Doc: "Whether an autocreated publication is created WITH (publish_via_partition_root = true): changes of partitions are then published as changes of their partitioned (root) table and go to the root's topic; false: to each partition's topic. An existing publication is used as it is (its pg_publication.pubviaroot decides)."}).
	Define(connect.ConfigKey{Name: KeyPgoutputStreaming, Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Low,
		Doc: "connectd only. On PostgreSQL 14+, ask pgoutput for protocol version 2 with streaming 'on': a transaction larger than the server's logical_decoding_work_mem is sent while in progress instead of being spilled by the walsender; connectd keeps it (in memory up to pgoutput.streaming.memory.bytes, then in an unlinked temp file under TMPDIR) and emits its events only after its Stream Commit, identical to those of a non-streamed transaction. false: protocol version 1, as Debezium."}).
	Define(connect.ConfigKey{Name: KeyPgoutputStreamingMemoryBytes, Type: connect.TypeLong, Default: connect.Str("8388608"), Importance: connect.Low,
		Doc: "connectd only. Bytes of in-progress streamed transactions (pgoutput messages as received) kept in memory, over all such transactions; beyond it a transaction's messages are written to a temp file and read back at its commit.", Validator: positiveInt})

// configDef is the connector's ConfigDef, every key in Debezium's layout.
var configDef = layoutDebezium(withStreamKeys(withConnectionKeys(withSignalKeys(withSnapshotKeys(ownConfigDef)))))

func regexListValidator(v string) string {
	if _, err := compileList(v); err != nil {
		return err.Error()
	}
	return ""
}

func normalizeSnapshotMode(v string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "initial":
		return SnapshotInitial, true
	case "initial_only":
		return SnapshotInitialOnly, true
	case "no_data", "never", "schema_only":
		// never and schema_only are Debezium's deprecated names for no_data.
		return SnapshotNoData, true
	case "when_needed":
		return SnapshotWhenNeeded, true
	case "always":
		return SnapshotAlways, true
	case "configuration_based":
		return SnapshotConfigurationBased, true
	}
	return "", false
}

func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// config is a validated connector configuration.
type config struct {
	host, user, password, dbname string
	port                         int
	topicPrefix                  string
	slotName, publicationName    string
	publicationAutocreate        string
	include                      []*regexp.Regexp // table.include.list
	tableExclude                 []*regexp.Regexp // table.exclude.list
	schemaInclude, schemaExclude []*regexp.Regexp // schema.include.list / schema.exclude.list
	rules                        *columnRules
	msgInclude, msgExclude       []*regexp.Regexp // message.prefix.include.list / exclude.list
	snapshotMode                 string
	snapshotModeDeprecated       string // the deprecated name snapshot.mode was given as ("" = none)
	snapshotter                  snapshotter
	selectOverrides              map[string]string // "schema.table" → SELECT (snapshot.select.statement.overrides)
	snapshotFetchSize            int
	snapshotMaxThreads           int
	snapshotInclude              []*regexp.Regexp // snapshot.include.collection.list
	includeFind                  []*regexp.Regexp // table.include.list unanchored (snapshot order)
	slotDropOnStop               bool
	tombstonesOnDelete           bool
	maxBatchSize, maxQueueSize   int
	pollIntervalMs               int
	statusUpdateIntervalMs       int
	handling                     handling
	skipped                      skippedOps
	txMetadata                   bool   // provide.transaction.metadata
	txTopic                      string // <topic.prefix>.<topic.transaction>
	heartbeatIntervalMs          int
	heartbeatQuery               string
	heartbeatTopic               string
	// publish is the publish option of an autocreated publication: the
	// operations not skipped, when skipped.operations is set explicitly (as
	// Debezium's PostgresReplicationConnection.buildPublishOptionValue);
	// "" = PostgreSQL's default (all).
	publish string
	// viaRoot is publish.via.partition.root; after ensurePublication, the
	// publication's effective pubviaroot (which decides the topics).
	viaRoot         bool
	streaming       bool  // pgoutput.streaming
	streamingMemory int64 // pgoutput.streaming.memory.bytes

	signals signalConfig     // signal.* and incremental.snapshot.* (signals.go)
	snap    snapshotSettings // chunking, table order, guardrail, queue bytes, notifications (config_snapshot.go)
	ext     streamSettings   // streaming-side Debezium keys (config_stream.go)
	conn    connSettings     // TLS, session, slot retry, snapshot isolation/locking keys (config_keys.go)
}

// skippedOps says which envelope ops are not emitted (skipped.operations),
// indexed by the op's letter: an array, not a map, on the hot path.
type skippedOps [128]bool

func (s *skippedOps) skip(op string) bool { return len(op) == 1 && op[0] < 128 && s[op[0]] }

// parseSkippedOps parses skipped.operations as Debezium's
// CommonConnectorConfig.SKIPPED_OPERATIONS: c, u, d, t or none.
func parseSkippedOps(v string) (skippedOps, error) {
	var s skippedOps
	for _, op := range splitList(v) {
		switch op = strings.ToLower(op); op {
		case "none":
			return skippedOps{}, nil
		case "c", "u", "d", "t":
			s[op[0]] = true
		default:
			return s, fmt.Errorf("The '%s' value is invalid: Invalid operation %q: must be one of c, u, d, t, none", KeySkippedOperations, op)
		}
	}
	return s, nil
}

// ConfigError lists every invalid key of a configuration.
type ConfigError struct{ Errors []connect.ConfigError }

func (e *ConfigError) Error() string {
	msgs := make([]string, len(e.Errors))
	for i, ce := range e.Errors {
		msgs[i] = ce.Message
	}
	return "postgres: invalid configuration: " + strings.Join(msgs, "; ")
}

func validate(cfg map[string]string) []connect.ConfigError {
	errs := configDef.Validate(cfg)
	if _, set := cfg[KeyPluginName]; !set {
		// Debezium's default plugin is decoderbufs, which connectd cannot decode.
		errs = append(errs, connect.ConfigError{Key: KeyPluginName, Message: "Invalid value decoderbufs for configuration plugin.name: decoderbufs (the default) is not supported by connectd; set plugin.name=pgoutput"})
	}
	if _, err := parseColumnRules(cfg); err != nil {
		errs = append(errs, connect.ConfigError{Key: KeyColumnIncludeList, Message: err.Error()})
	}
	errs = append(errs, signal.Validate(cfg)...)
	errs = append(errs, validateSSL(cfg)...)
	errs = append(errs, validateNotifications(cfg)...)
	errs = append(errs, validateStreamKeys(cfg)...)
	connect.SortErrors(errs)
	return errs
}

func parseConfig(cfg map[string]string) (*config, error) {
	if errs := validate(cfg); len(errs) > 0 {
		return nil, &ConfigError{Errors: errs}
	}
	p := configDef.Parse(cfg)
	c := &config{
		host: p.String(KeyHostname), port: p.Int(KeyPort), user: p.String(KeyUser),
		password: p.String(KeyPassword), dbname: p.String(KeyDBName),
		topicPrefix: p.String(KeyTopicPrefix), slotName: p.String(KeySlotName),
		publicationName:       p.String(KeyPublicationName),
		publicationAutocreate: strings.ToLower(p.String(KeyPublicationAutocreate)),
		tombstonesOnDelete:    p.Bool(KeyTombstonesOnDelete),
		maxBatchSize:          p.Int(KeyMaxBatchSize), maxQueueSize: p.Int(KeyMaxQueueSize),
		pollIntervalMs: p.Int(KeyPollIntervalMs), statusUpdateIntervalMs: p.Int(KeyStatusUpdateIntervalMs),
	}
	c.txMetadata = p.Bool(KeyProvideTransactionMetadata)
	c.txTopic = c.topicPrefix + "." + p.String(KeyTopicTransaction)
	c.heartbeatIntervalMs = p.Int(KeyHeartbeatIntervalMs)
	c.heartbeatQuery = p.String(KeyHeartbeatActionQuery)
	c.viaRoot = p.Bool(KeyPublishViaPartitionRoot)
	c.streaming = p.Bool(KeyPgoutputStreaming)
	c.streamingMemory = int64(p.Int(KeyPgoutputStreamingMemoryBytes))
	hbPrefix := p.String(KeyHeartbeatTopicPrefix)
	if _, set := cfg[KeyHeartbeatTopicPrefix]; !set {
		hbPrefix = p.String(KeyHeartbeatTopicsPrefix) // Debezium's deprecated name
	}
	c.heartbeatTopic = heartbeat.Topic(hbPrefix, c.topicPrefix)
	c.conn = parseConnSettings(p)
	c.snapshotMode, _ = normalizeSnapshotMode(p.String(KeySnapshotMode))
	if m := strings.ToLower(strings.TrimSpace(p.String(KeySnapshotMode))); m == "never" || m == "schema_only" {
		c.snapshotModeDeprecated = m
	}
	c.snapshotter = newSnapshotter(c.snapshotMode, p.Bool(KeySnapshotData), p.Bool(KeySnapshotStartStream), p.Bool(KeySnapshotOnDataError))
	c.selectOverrides = relational.SelectOverrides(p.List(KeySnapshotSelectOverrides), cfg)
	c.snapshotFetchSize = p.Int(KeySnapshotFetchSize)
	if c.snapshotFetchSize == 0 { // null: PostgresConnectorConfig's default
		c.snapshotFetchSize = defaultSnapshotFetchSize
	}
	c.snapshotMaxThreads = p.Int(KeySnapshotMaxThreads)
	c.snapshotInclude, _ = compileList(cfg[KeySnapshotIncludeCollection])
	c.slotDropOnStop = p.Bool(KeySlotDropOnStop)
	c.skipped, _ = parseSkippedOps(strings.Join(p.List(KeySkippedOperations), ","))
	if _, set := cfg[KeySkippedOperations]; set && c.skipped != (skippedOps{}) {
		var ops []string
		for _, o := range []struct{ op, name string }{{"c", "insert"}, {"u", "update"}, {"d", "delete"}, {"t", "truncate"}} {
			if !c.skipped.skip(o.op) {
				ops = append(ops, o.name)
			}
		}
		c.publish = strings.Join(ops, ",")
	}
	c.handling = handling{
		decimal:        strings.ToLower(p.String(KeyDecimalHandlingMode)),
		time:           strings.ToLower(p.String(KeyTimePrecisionMode)),
		binary:         strings.ToLower(p.String(KeyBinaryHandlingMode)),
		interval:       strings.ToLower(p.String(KeyIntervalHandlingMode)),
		hstore:         strings.ToLower(p.String(KeyHstoreHandlingMode)),
		moneyDigits:    p.Int(KeyMoneyFractionDigits),
		includeUnknown: p.Bool(KeyIncludeUnknownDataTypes),
		placeholder:    p.String(KeyUnavailableValuePlaceholder),
		schemaNames:    strings.ToLower(p.String(KeySchemaNameAdjust)),
	}
	for _, pat := range p.List(KeyTableIncludeList) {
		// Debezium matches the whole identifier (Pattern.matcher(...).matches()),
		// case-insensitively (Selectors compiles with Pattern.CASE_INSENSITIVE).
		// (ASCII letters only, as Java's CASE_INSENSITIVE: columns.CompileCI)
		re, err := columns.CompileCI(pat, true)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", KeyTableIncludeList, err)
		}
		find, _ := columns.CompileCI(pat, false)
		c.include = append(c.include, re)
		c.includeFind = append(c.includeFind, find)
	}
	c.tableExclude, _ = compileList(cfg[KeyTableExcludeList])
	c.schemaInclude, _ = compileList(cfg[KeySchemaIncludeList])
	c.schemaExclude, _ = compileList(cfg[KeySchemaExcludeList])
	c.rules, _ = parseColumnRules(cfg)
	c.msgInclude, _ = compileList(cfg[KeyMessagePrefixIncludeLst])
	c.msgExclude, _ = compileList(cfg[KeyMessagePrefixExcludeLst])
	c.signals = parseSignalConfig(p, c.topicPrefix)
	c.snap = parseSnapshotSettings(p)
	c.ext = parseStreamSettings(p, cfg)
	return c, nil
}

// included reports whether schema.table is captured (table.include.list;
// system schemas are never captured, as Debezium's SystemTablesPredicate).
func (c *config) included(schema, table string) bool {
	switch {
	case schema == "pg_catalog", schema == "information_schema", strings.HasPrefix(schema, "pg_toast"), strings.HasPrefix(schema, "pg_temp"):
		return false
	}
	if len(c.schemaInclude) > 0 && !anyMatch(c.schemaInclude, schema) || anyMatch(c.schemaExclude, schema) {
		return false
	}
	id := schema + "." + table
	if len(c.include) > 0 {
		return anyMatch(c.include, id)
	}
	return !anyMatch(c.tableExclude, id)
}

// snapshotOrder orders the snapshot's tables (sorted by name) as Debezium's
// RelationalSnapshotChangeEventSource.sort: with a table.include.list, the
// tables each entry finds (Pattern.asPredicate: a case-insensitive search,
// not a whole match), entry by entry in the list's order, name order within
// an entry, each table once (its first entry); without one, name order.
func (c *config) snapshotOrder(tables [][2]string) [][2]string {
	if len(c.includeFind) == 0 {
		return tables
	}
	out := make([][2]string, 0, len(tables))
	seen := make(map[[2]string]bool, len(tables))
	for _, re := range c.includeFind {
		for _, tb := range tables {
			if !seen[tb] && re.MatchString(tb[0]+"."+tb[1]) {
				seen[tb] = true
				out = append(out, tb)
			}
		}
	}
	return out
}

// snapshotIncluded reports whether the captured table schema.table is read by
// the snapshot (snapshot.include.collection.list; empty = all).
func (c *config) snapshotIncluded(schema, table string) bool {
	return len(c.snapshotInclude) == 0 || anyMatch(c.snapshotInclude, schema+"."+table)
}

// messagePrefixIncluded reports whether a logical decoding message with this
// prefix is emitted (message.prefix.include.list / exclude.list).
func (c *config) messagePrefixIncluded(prefix string) bool {
	if len(c.msgInclude) > 0 {
		return anyMatch(c.msgInclude, prefix)
	}
	return !anyMatch(c.msgExclude, prefix)
}

func anyMatch(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}
