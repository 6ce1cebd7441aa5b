package postgres

import (
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect"
)

// Debezium parity of the configuration (issues 3 and 6): configDef lists
// every key Debezium 3.6.1's PostgresConnector lists (debeziumKeys), with
// its group, order_in_group, type and default, so the REST validate answer
// has the same keys. A key connectd does not implement is still defined:
// its default (or absence) is accepted and any other value is a validation
// error on that key, so no setting is silently ignored.

// unimplementedDocs documents the Debezium keys connectd defines but does
// not implement (what the key does in Debezium, in our words).
var unimplementedDocs = map[string]string{
	"database.sslfactory":                                     "Debezium: a JDBC SSLSocketFactory class (Java only).",
	"lsn.flush.timeout.ms":                                    "Debezium: how long an LSN flush to the slot may take before lsn.flush.timeout.action applies, in ms. connectd has no flush call that can hang: a confirmation is a 34-byte standby status update written by the reader on its replication connection, and a server that stops reading fails the connection (wal_sender_timeout, read errors), which the worker retries.",
	"lsn.flush.timeout.action":                                "Debezium: what a slow LSN flush does (fail, warn, ignore). See lsn.flush.timeout.ms: connectd has no such timeout.",
	"snapshot.mode.custom.name":                               "Debezium: name of a custom Snapshotter implementation (snapshot.mode=custom).",
	"query.fetch.size":                                        "Debezium: JDBC fetch size of queries other than the snapshot's; 0 = driver default.",
	"internal.log.position.check.enable":                      "Debezium internal: check that the offset's position is still in the log.",
	"internal.advanced.metrics.enable":                        "Debezium internal: extra JMX metrics.",
	"connection.validation.timeout.ms":                        "Debezium: timeout in ms of the connection check during validation.",
	"openlineage.integration.enabled":                         "Debezium: emit OpenLineage events.",
	"openlineage.integration.config.file.path":                "Debezium: OpenLineage client configuration file.",
	"openlineage.integration.job.namespace":                   "Debezium: OpenLineage job namespace.",
	"openlineage.integration.job.description":                 "Debezium: OpenLineage job description.",
	"openlineage.integration.job.tags":                        "Debezium: OpenLineage job tags.",
	"openlineage.integration.job.owners":                      "Debezium: OpenLineage job owners.",
	"openlineage.integration.dataset.kafka.bootstrap.servers": "Debezium: Kafka brokers named in OpenLineage output datasets.",
	"custom.sanitize.pattern":                                 "Debezium: regular expression of key names whose values are masked in logs.",
	"statistics.metrics.enabled":                              "Debezium: collect per-table statistics metrics.",
	"memory.management.schemas.class":                         "Debezium: storage class of the in-memory schema mapping (Java only).",
	"memory.management.tables.class":                          "Debezium: storage class of the in-memory table mapping (Java only).",
	"snapshot.query.mode":                                     "Debezium: how snapshot queries are built (select_all, custom).",
	"snapshot.query.mode.custom.name":                         "Debezium: name of a custom SnapshotQuery implementation.",
	"snapshot.locking.mode.custom.name":                       "Debezium: name of a custom SnapshotLock implementation.",
	"schema.refresh.mode":                                     "Debezium: when the in-memory table schema is refreshed (columns_diff, columns_diff_exclude_unchanged_toast). connectd rebuilds a table's schema only from pgoutput Relation messages (sent before a table's first change and after DDL), never from a difference between a change's columns and the cached schema: an unchanged TOASTed value never causes a refresh, so the two modes would behave the same.",
	"converters":                                              "Debezium: custom column converters (Java classes).",
	"post.processors":                                         "Debezium: post processors applied to change events (Java classes).",
	"signal.poll.interval.ms":                                 "Debezium: interval in ms between polls of the signal channels. connectd does not poll: the source channel's signals arrive in the replication stream, and the kafka channel is read continuously (signal.kafka.poll.timeout.ms).",
	"transaction.metadata.factory":                            "Debezium: class building transaction metadata (Java only).",
	"custom.metric.tags":                                      "Debezium: extra tags of the JMX metric names.",
	"internal.snapshot.scan.all.columns.force":                "Debezium internal: snapshot SELECT * regardless of column filters.",
	"sourceinfo.struct.maker":                                 "Debezium: class building the source block (Java only).",
}

// extraGroups places connectd's own keys and the aliases it keeps, after
// Debezium's keys of the same group.
var extraGroups = map[string]string{
	KeyMoneyFractionDigits:          "Connector",
	KeyPgoutputStreaming:            "Postgres",
	KeyPgoutputStreamingMemoryBytes: "Postgres",
	KeyTopicTransaction:             "Events",
	KeyHeartbeatTopicPrefix:         "Events",
}

// notImplemented is the validation message of a non-default value of an
// unimplemented key.
func notImplemented(name string, def *string) string {
	if def == nil {
		return fmt.Sprintf("connectd does not implement %s; leave it unset", name)
	}
	return fmt.Sprintf("connectd does not implement %s; only its default (%s) is accepted", name, *def)
}

// defaultOnly accepts only dk's default (case-insensitive), or an empty
// value when the default is null.
func defaultOnly(dk debeziumKey) func(string) string {
	return func(v string) string {
		if dk.def == nil && v == "" || dk.def != nil && strings.EqualFold(v, strings.TrimSpace(*dk.def)) {
			return ""
		}
		return notImplemented(dk.name, dk.def)
	}
}

// layoutDebezium returns own's keys in Debezium's order with Debezium's
// groups and orders, the unimplemented keys defined from debeziumKeys, then
// connectd's own keys. A key own defines with another type or default than
// Debezium's is a programming error (panic at init).
// debeziumDependents are the dependents Debezium 3.6.1 declares for its
// keys (the validate answer of the capture: only schema.include.list has
// any). Descriptive only: connectd computes no visibility from them.
var debeziumDependents = map[string][]string{"schema.include.list": {"table.include.list"}}

func layoutDebezium(own *connect.ConfigDef) *connect.ConfigDef {
	out := connect.NewConfigDef()
	last := map[string]int{}
	for _, dk := range debeziumKeys {
		k := own.Key(dk.name)
		if k == nil {
			doc, ok := unimplementedDocs[dk.name]
			if !ok {
				panic("postgres: Debezium key " + dk.name + " is neither defined nor documented as unimplemented")
			}
			k = &connect.ConfigKey{Name: dk.name, Type: dk.typ, Default: dk.def, Optional: dk.def == nil, Importance: dk.importance,
				Doc: doc + " connectd accepts only the default.", Validator: defaultOnly(dk)}
		} else if k.Type != dk.typ || (k.Default == nil) != (dk.def == nil) || k.Default != nil && *k.Default != *dk.def {
			panic(fmt.Sprintf("postgres: key %s differs from Debezium's (type %s default %v, want %s %v)", dk.name, k.Type, k.Default, dk.typ, dk.def))
		}
		kk := *k
		kk.Group, kk.OrderInGroup = dk.group, dk.order
		if d := debeziumDependents[dk.name]; d != nil {
			kk.Dependents = d
		}
		out.Define(kk)
		last[dk.group] = max(last[dk.group], dk.order)
	}
	for _, k := range own.Keys() {
		if out.Key(k.Name) != nil {
			continue
		}
		kk := *k
		kk.Group, kk.OrderInGroup = "", 0
		if g := extraGroups[k.Name]; g != "" {
			last[g]++
			kk.Group, kk.OrderInGroup = g, last[g]
		} else if strings.HasPrefix(k.Name, "signal.") {
			last["Events"]++
			kk.Group, kk.OrderInGroup = "Events", last["Events"]
		}
		out.Define(kk)
	}
	return out
}
