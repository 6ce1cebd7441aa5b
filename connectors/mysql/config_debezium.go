package mysql

import (
	"fmt"
	"strings"

	"github.com/connectd/connectd/connect"
)

// debeziumOnlyKey is a key of Debezium's MariaDbConnector/MySqlConnector
// configuration (3.5.0.Final, MariaDbConnector.config(): 116 keys) that
// connectd does not implement. Every such key is defined, so that none is
// accepted silently (issue 17), as connectors/postgres/config_layout.go
// does: a key whose setting changes what Debezium emits accepts only its
// default (any other value is a validation error, HTTP 400, naming the
// key); a tuning key that changes nothing connectd emits (timeouts, buffer
// and fetch sizes, metrics) accepts any value of its type and the task
// logs a WARN naming it when it is set (noEffect).
type debeziumOnlyKey struct {
	name     string
	typ      connect.ConfigType
	def      *string
	noEffect bool
}

// debeziumOnlyKeys: name, type and default as Debezium's ConfigDef
// (list defaults without brackets, class defaults without "class ").
var debeziumOnlyKeys = []debeziumOnlyKey{
	{"binlog.buffer.size", connect.TypeInt, connect.Str("0"), true},
	{"binlog.net.read.timeout", connect.TypeLong, connect.Str("0"), true},
	{"binlog.net.write.timeout", connect.TypeLong, connect.Str("0"), true},
	{"connect.keep.alive", connect.TypeBoolean, connect.Str("true"), true},
	{"connect.keep.alive.interval.ms", connect.TypeLong, connect.Str("60000"), true},
	{"connection.validation.timeout.ms", connect.TypeLong, connect.Str("60000"), true},
	{"custom.metric.tags", connect.TypeList, nil, true},
	{"custom.sanitize.pattern", connect.TypeString, connect.Str(".*secret$|.*password$|.*sasl\\.jaas\\.config$|.*basic\\.auth\\.user\\.info|.*registry\\.auth\\.client-secret"), true},
	{"database.initial.statements", connect.TypeString, nil, false},
	{"database.query.timeout.ms", connect.TypeInt, connect.Str("600000"), false},
	{"database.server.id.offset", connect.TypeLong, connect.Str("10000"), true},
	{"database.ssl.keystore", connect.TypeString, nil, false},
	{"database.ssl.keystore.password", connect.TypePassword, nil, false},
	{"database.ssl.mode", connect.TypeString, connect.Str("disable"), false},
	{"database.ssl.truststore", connect.TypeString, nil, false},
	{"database.ssl.truststore.password", connect.TypePassword, nil, false},
	{"errors.max.retries", connect.TypeInt, connect.Str("-1"), true},
	{"event.processing.failure.handling.mode", connect.TypeString, connect.Str("fail"), false},
	{"executor.shutdown.timeout.ms", connect.TypeLong, connect.Str("4000"), true},
	{"guardrail.collections.limit.action", connect.TypeString, connect.Str("warn"), false},
	{"guardrail.collections.max", connect.TypeInt, connect.Str("0"), false},
	{"heartbeat.topics.prefix", connect.TypeString, connect.Str("__debezium-heartbeat"), false},
	{"include.query", connect.TypeBoolean, connect.Str("false"), false},
	{"include.schema.comments", connect.TypeBoolean, connect.Str("false"), false},
	{"inconsistent.schema.handling.mode", connect.TypeString, connect.Str("fail"), false},
	{"incremental.snapshot.allow.schema.changes", connect.TypeBoolean, connect.Str("false"), false},
	{"incremental.snapshot.chunk.size", connect.TypeInt, connect.Str("1024"), false},
	{"incremental.snapshot.watermarking.strategy", connect.TypeString, connect.Str("INSERT_INSERT"), false},
	{"internal.advanced.metrics.enable", connect.TypeBoolean, connect.Str("false"), true},
	{"internal.legacy.snapshot.max.threads", connect.TypeBoolean, connect.Str("false"), true},
	{"internal.log.position.check.enable", connect.TypeBoolean, connect.Str("true"), true},
	{"internal.snapshot.scan.all.columns.force", connect.TypeBoolean, connect.Str("false"), false},
	{"max.queue.size.in.bytes", connect.TypeLong, connect.Str("0"), false},
	{"min.row.count.to.stream.results", connect.TypeInt, connect.Str("1000"), true},
	{"notification.enabled.channels", connect.TypeList, nil, false},
	{"notification.sink.topic.name", connect.TypeString, nil, false},
	{"openlineage.integration.config.file.path", connect.TypeString, connect.Str("./openlineage.yml"), false},
	{"openlineage.integration.dataset.kafka.bootstrap.servers", connect.TypeString, nil, false},
	{"openlineage.integration.enabled", connect.TypeBoolean, connect.Str("false"), false},
	{"openlineage.integration.job.description", connect.TypeString, connect.Str("Debezium change data capture job"), false},
	{"openlineage.integration.job.namespace", connect.TypeString, nil, false},
	{"openlineage.integration.job.owners", connect.TypeList, nil, false},
	{"openlineage.integration.job.tags", connect.TypeList, nil, false},
	{"post.processors", connect.TypeString, nil, false},
	{"provide.transaction.metadata", connect.TypeBoolean, connect.Str("false"), false},
	{"query.fetch.size", connect.TypeInt, connect.Str("0"), true},
	{"retriable.restart.connector.wait.ms", connect.TypeLong, connect.Str("10000"), true},
	{"schema.history.internal", connect.TypeString, connect.Str("io.debezium.storage.kafka.history.KafkaSchemaHistory"), false},
	{"schema.name.adjustment.mode", connect.TypeString, connect.Str("none"), false},
	{"signal.data.collection", connect.TypeList, nil, false},
	{"signal.enabled.channels", connect.TypeList, connect.Str("source"), false},
	{"signal.poll.interval.ms", connect.TypeLong, connect.Str("5000"), false},
	{"snapshot.delay.ms", connect.TypeLong, connect.Str("0"), false},
	{"snapshot.fetch.size", connect.TypeInt, nil, true},
	{"snapshot.include.collection.list", connect.TypeList, nil, false},
	{"snapshot.lock.timeout.ms", connect.TypeLong, connect.Str("10000"), false},
	{"snapshot.max.threads", connect.TypeInt, connect.Str("1"), false},
	{"snapshot.max.threads.multiplier", connect.TypeInt, connect.Str("1"), false},
	{"snapshot.mode.custom.name", connect.TypeString, nil, false},
	{"snapshot.query.mode", connect.TypeString, connect.Str("select_all"), false},
	{"snapshot.query.mode.custom.name", connect.TypeString, nil, false},
	{"snapshot.tables.order.by.row.count", connect.TypeString, connect.Str("disabled"), false},
	{"sourceinfo.struct.maker", connect.TypeString, connect.Str("io.debezium.connector.mariadb.MariaDbSourceInfoStructMaker"), false},
	{"streaming.delay.ms", connect.TypeLong, connect.Str("0"), false},
	{"table.ignore.builtin", connect.TypeBoolean, connect.Str("true"), false},
	{"topic.naming.strategy", connect.TypeString, connect.Str("io.debezium.schema.SchemaTopicNamingStrategy"), false},
	{"transaction.metadata.factory", connect.TypeString, connect.Str("io.debezium.pipeline.txmetadata.DefaultTransactionMetadataFactory"), false},
	{"use.nongraceful.disconnect", connect.TypeBoolean, connect.Str("false"), true},
}

// defineDebeziumOnly defines debeziumOnlyKeys on d.
func defineDebeziumOnly(d *connect.ConfigDef) *connect.ConfigDef {
	for _, dk := range debeziumOnlyKeys {
		k := connect.ConfigKey{Name: dk.name, Type: dk.typ, Default: dk.def, Optional: dk.def == nil, Importance: connect.Low}
		if dk.noEffect {
			k.Doc = "Debezium tuning key with no effect on what connectd emits; accepted, and the task logs a warning when it is set."
		} else {
			k.Doc = "Debezium key connectd does not implement: only its default is accepted."
			k.Validator = defaultOnly(dk)
		}
		d.Define(k)
	}
	return d
}

// defaultOnly accepts only dk's default (case-insensitive), or an empty
// value when the default is null.
func defaultOnly(dk debeziumOnlyKey) func(string) string {
	return func(v string) string {
		v = strings.TrimSpace(v)
		if dk.def == nil && v == "" || dk.def != nil && strings.EqualFold(v, strings.TrimSpace(*dk.def)) {
			return ""
		}
		if dk.def == nil {
			return fmt.Sprintf("connectd does not implement %s; leave it unset", dk.name)
		}
		return fmt.Sprintf("connectd does not implement %s; only its default (%s) is accepted", dk.name, *dk.def)
	}
}

// noEffectKeysSet returns the no-effect Debezium keys cfg sets, for the
// task's warning.
func noEffectKeysSet(cfg map[string]string) []string {
	var out []string
	for _, dk := range debeziumOnlyKeys {
		if _, ok := cfg[dk.name]; ok && dk.noEffect {
			out = append(out, dk.name)
		}
	}
	return out
}
