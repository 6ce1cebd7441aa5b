package postgres

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/internal/columns"
)

// Streaming-side keys of Debezium 3.6's PostgresConnectorConfig and
// CommonConnectorConfig that connectd implements (issue 3). Each doc cites
// Debezium's PostgreSQL connector documentation (connector properties) and
// PostgresConnectorConfig, where the key's behaviour is defined.
const (
	KeyEventProcessingFailureMode = "event.processing.failure.handling.mode"
	KeyXminFetchIntervalMs        = "xmin.fetch.interval.ms"
	KeyLSNFlushMode               = "lsn.flush.mode"
	KeyFlushLSNSource             = "flush.lsn.source"
	KeySlotStreamParams           = "slot.stream.params"
	KeyReplicaIdentityAutoset     = "replica.identity.autoset.values"
	KeySlotFailover               = "slot.failover"
	KeyExtendedHeadersEnabled     = "extended.headers.enabled"
	KeyIncludeSchemaComments      = "include.schema.comments"
)

// Values of event.processing.failure.handling.mode, as Debezium's
// CommonConnectorConfig.EventProcessingFailureHandlingMode (skip is its
// older name of ignore).
const (
	failureFail   = "fail"
	failureWarn   = "warn"
	failureSkip   = "skip"
	failureIgnore = "ignore"
)

// Values of lsn.flush.mode, as Debezium's PostgresConnectorConfig.LsnFlushMode.
const (
	flushConnector          = "connector"
	flushManual             = "manual"
	flushConnectorAndDriver = "connector_and_driver"
)

// replicaAutosetRE is Debezium's ReplicaIdentityMapper.REPLICA_AUTO_SET_PATTERN
// (RE2 syntax in both): one "<table regex>:<replica identity>" entry.
var replicaAutosetRE = regexp.MustCompile(`(?i)^\s*(?P<tablepredicate>[^\s:]+):(?P<replicaidentity>DEFAULT|(INDEX) (?P<indexname>.\w*)|FULL|NOTHING)\s*$`)

// withStreamKeys defines the keys of this file on d.
func withStreamKeys(d *connect.ConfigDef) *connect.ConfigDef {
	return d.
		Define(connect.ConfigKey{Name: KeyEventProcessingFailureMode, Type: connect.TypeString, Default: connect.Str(failureFail), Importance: connect.Medium,
			Allowed: []string{failureFail, failureWarn, failureSkip, failureIgnore}, Recommended: []string{failureWarn, failureFail, failureIgnore, failureSkip},
			Doc: "What a streamed change that cannot be decoded or turned into an event (a malformed or unsupported pgoutput message, a value that does not convert, a table whose schema cannot be read) does, " +
				"as Debezium's event.processing.failure.handling.mode (PostgreSQL connector documentation): fail (default) stops the task with an error naming the event's LSN; " +
				"warn logs the problem and the LSN and skips the event; ignore (or its older name skip) skips it, logged only at debug level. " +
				"A lost database connection is never skipped: it fails the task in every mode."}).
		Define(connect.ConfigKey{Name: KeyXminFetchIntervalMs, Type: connect.TypeLong, Default: connect.Str("0"), Importance: connect.Medium, Validator: nonNegative,
			Doc: "Interval in ms between reads of the replication slot's catalog_xmin (pg_replication_slots), the oldest transaction whose catalog rows the slot still needs, " +
				"as Debezium's xmin.fetch.interval.ms (PostgreSQL connector documentation): streamed change events carry the last value read in source.xmin and in their offset (key xmin). " +
				"0 (default) never reads it and source.xmin stays null."}).
		Define(connect.ConfigKey{Name: KeyLSNFlushMode, Type: connect.TypeString, Optional: true, Importance: connect.Low,
			Recommended: []string{flushConnectorAndDriver, flushConnector, flushManual},
			Validator: func(v string) string {
				switch strings.ToLower(v) {
				case "", flushConnector, flushManual, flushConnectorAndDriver:
					return ""
				}
				return "must be one of connector, manual, connector_and_driver"
			},
			Doc: "Who confirms processed positions to the replication slot, as Debezium's lsn.flush.mode (PostgreSQL connector documentation). " +
				"connector (the default when neither this key nor flush.lsn.source is set): the task confirms the LSN of each offset the worker committed. " +
				"manual: the task never confirms anything; the slot's confirmed_flush_lsn stays where it is (and the server keeps the WAL from there) until something else advances it, e.g. pg_replication_slot_advance. " +
				"connector_and_driver: as connector, and while the task is idle between transactions with everything it emitted confirmed, it also confirms the server's WAL position from keepalive messages (as the pgjdbc driver does for Debezium), so that WAL written by other databases is not retained."}).
		Define(connect.ConfigKey{Name: KeyFlushLSNSource, Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Low,
			Doc: "Deprecated form of lsn.flush.mode, used only when lsn.flush.mode is not set (Debezium PostgreSQL connector documentation): true = connector, false = manual."}).
		Define(connect.ConfigKey{Name: KeySlotStreamParams, Type: connect.TypeString, Optional: true, Importance: connect.Low,
			Doc: "Extra options of the logical decoding plugin passed at START_REPLICATION, as Debezium's slot.stream.params (PostgreSQL connector documentation): " +
				"'name=value' entries separated by ';', e.g. 'origin=none' (pgoutput, PostgreSQL 16+). An entry without '=' is logged and ignored, and an option connectd sets itself " +
				"(proto_version, publication_names, messages, streaming) keeps connectd's value, as in Debezium. An option pgoutput does not accept fails the task with the server's error."}).
		Define(connect.ConfigKey{Name: KeyReplicaIdentityAutoset, Type: connect.TypeString, Optional: true, Importance: connect.Medium, Validator: validateReplicaAutoset,
			Doc: "REPLICA IDENTITY the task sets on captured tables at start (ALTER TABLE … REPLICA IDENTITY, overwriting the table's setting), as Debezium's replica.identity.autoset.values " +
				"(PostgreSQL connector documentation): comma-separated '<table regex>:<identity>' entries, the regex matched (whole, case-insensitive) against <schema>.<table>, the identity one of " +
				"DEFAULT (old values of the primary key), FULL (of every column), NOTHING (none), INDEX <name> (of the columns of that unique index). A table that is already so is left alone; " +
				"a table two entries match, or an ALTER that fails (e.g. the user does not own the table), is logged as an error and left as it is, as Debezium does."}).
		Define(connect.ConfigKey{Name: KeySlotFailover, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Medium,
			Doc: "Whether the replication slot the task creates is a failover slot (CREATE_REPLICATION_SLOT … (FAILOVER), synchronised to physical standbys), as Debezium's slot.failover " +
				"(PostgreSQL connector documentation): only on a PostgreSQL 17+ primary. As Debezium, on an older server or a standby an ordinary slot is created (connectd logs a warning); an existing slot is used as it is."}).
		Define(connect.ConfigKey{Name: KeyExtendedHeadersEnabled, Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Low,
			Doc: "Whether change events (snapshot and streaming, truncates and logical decoding messages) carry Debezium's context headers, as Debezium's extended.headers.enabled " +
				"(PostgreSQL connector documentation; DebeziumHeaderProducer): __debezium.context.connectorLogicalName (topic.prefix), __debezium.context.taskId (0), " +
				"__debezium.context.connectorName (postgresql) and __debezium.context.runId (a UUID drawn when the task starts), string values. Heartbeats and transaction metadata events carry none."}).
		Define(connect.ConfigKey{Name: KeyIncludeSchemaComments, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Medium,
			Doc: "Whether column comments (COMMENT ON COLUMN) become the doc of the column's field schema in change events' key and value schemas (JSON schema \"doc\", Avro field doc), " +
				"as Debezium's include.schema.comments (PostgreSQL connector documentation). A comment changed later is picked up when the table's schema is next rebuilt (a Relation message after DDL, or a restart)."})
}

// validateReplicaAutoset checks replica.identity.autoset.values as Debezium's
// PostgresConnectorConfig.validateReplicaAutoSetField: not empty, and every
// comma-separated entry matching replicaAutosetRE.
func validateReplicaAutoset(v string) string {
	if v == "" {
		return "Must not be empty"
	}
	var bad []string
	for _, e := range strings.Split(v, ",") {
		if !replicaAutosetRE.MatchString(e) {
			bad = append(bad, fmt.Sprintf("%s has an invalid format (expecting '%s')", e, replicaAutosetRE.String()))
		}
	}
	return strings.Join(bad, "; ")
}

// streamSettings is the parsed configuration of this file's keys.
type streamSettings struct {
	failureMode     string        // event.processing.failure.handling.mode (skip normalised to ignore)
	xminInterval    time.Duration // xmin.fetch.interval.ms; 0 = never
	flushMode       string        // lsn.flush.mode, or flush.lsn.source's equivalent
	flushDeprecated bool          // flush.lsn.source decided flushMode
	streamParams    [][2]string   // slot.stream.params, name and value
	badParams       []string      // slot.stream.params entries without '='
	replicaAutoset  []replicaRule // replica.identity.autoset.values
	failover        bool          // slot.failover
	extendedHeaders bool          // extended.headers.enabled
	schemaComments  bool          // include.schema.comments
}

// replicaRule is one replica.identity.autoset.values entry.
type replicaRule struct {
	table    *regexp.Regexp // matched against "<schema>.<table>"
	identity string         // DEFAULT, FULL, NOTHING or INDEX
	index    string         // INDEX's index name
	entry    string         // the entry as written
}

// clause is the rule's REPLICA IDENTITY clause.
func (r replicaRule) clause() string {
	if r.identity == "INDEX" {
		return "USING INDEX " + sqlIdent(r.index)
	}
	return r.identity
}

func parseStreamSettings(p connect.Parsed, cfg map[string]string) streamSettings {
	s := streamSettings{
		failureMode:     strings.ToLower(p.String(KeyEventProcessingFailureMode)),
		xminInterval:    time.Duration(p.Int(KeyXminFetchIntervalMs)) * time.Millisecond,
		failover:        p.Bool(KeySlotFailover),
		extendedHeaders: p.Bool(KeyExtendedHeadersEnabled),
		schemaComments:  p.Bool(KeyIncludeSchemaComments),
	}
	if s.failureMode == failureSkip {
		s.failureMode = failureIgnore
	}
	// As Debezium's PostgresConnectorConfig.resolveLsnFlushMode: lsn.flush.mode,
	// else flush.lsn.source when set, else connector.
	s.flushMode = strings.ToLower(strings.TrimSpace(p.String(KeyLSNFlushMode)))
	if _, set := cfg[KeyFlushLSNSource]; s.flushMode == "" && set {
		s.flushDeprecated = true
		s.flushMode = flushConnector
		if !p.Bool(KeyFlushLSNSource) {
			s.flushMode = flushManual
		}
	}
	if s.flushMode == "" {
		s.flushMode = flushConnector
	}
	for _, e := range strings.Split(p.String(KeySlotStreamParams), ";") {
		if strings.TrimSpace(e) == "" {
			continue
		}
		k, v, ok := strings.Cut(e, "=")
		if k, v = strings.TrimSpace(k), strings.TrimSpace(v); !ok || k == "" {
			s.badParams = append(s.badParams, e)
			continue
		}
		s.streamParams = append(s.streamParams, [2]string{k, v})
	}
	if v := p.String(KeyReplicaIdentityAutoset); v != "" {
		for _, e := range strings.Split(v, ",") {
			m := replicaAutosetRE.FindStringSubmatch(e)
			if m == nil {
				continue
			}
			pred := m[replicaAutosetRE.SubexpIndex("tablepredicate")]
			re, err := columns.CompileCI(pred, true)
			if err != nil {
				continue // validateReplicaAutosetRegex reported it
			}
			id := strings.ToUpper(m[replicaAutosetRE.SubexpIndex("replicaidentity")])
			r := replicaRule{table: re, identity: id, entry: strings.TrimSpace(e)}
			if strings.HasPrefix(id, "INDEX") {
				// unquoted in Debezium's ALTER TABLE, so folded to lower case
				r.identity, r.index = "INDEX", strings.ToLower(m[replicaAutosetRE.SubexpIndex("indexname")])
			}
			s.replicaAutoset = append(s.replicaAutoset, r)
		}
	}
	return s
}

// validateStreamKeys checks what the keys' validators cannot alone: the
// table regular expressions of replica.identity.autoset.values.
func validateStreamKeys(cfg map[string]string) []connect.ConfigError {
	v := strings.TrimSpace(cfg[KeyReplicaIdentityAutoset])
	if v == "" {
		return nil
	}
	var errs []connect.ConfigError
	for _, e := range strings.Split(v, ",") {
		m := replicaAutosetRE.FindStringSubmatch(e)
		if m == nil {
			continue
		}
		if _, err := regexp.Compile(m[replicaAutosetRE.SubexpIndex("tablepredicate")]); err != nil {
			errs = append(errs, connect.ConfigError{Key: KeyReplicaIdentityAutoset,
				Message: fmt.Sprintf("Invalid value %s for configuration %s: invalid regular expression in %q: %v", v, KeyReplicaIdentityAutoset, strings.TrimSpace(e), err)})
		}
	}
	return errs
}
