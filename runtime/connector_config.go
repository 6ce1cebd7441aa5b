package runtime

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
)

// Kafka Connect's connector-level configuration groups
// (ConnectorConfig, SourceConnectorConfig).
const (
	groupCommon       = "Common"
	groupTransforms   = "Transforms"
	groupPredicates   = "Predicates"
	groupErrors       = "Error Handling"
	groupTopicCreate  = "Topic Creation"
	groupExactlyOnce  = "Exactly Once Support"
	groupOffsetsTopic = "offsets.topic"
)

const (
	converterDoc = "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. " +
		"This controls the format of the %s in messages written to or read from Kafka, and since this is independent of connectors it " +
		"allows any connector to work with any serialization format. Examples of common formats include JSON and Avro."
	headerConverterDoc = "HeaderConverter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. " +
		"This controls the format of the header values in messages written to or read from Kafka, and since this is independent of connectors " +
		"it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro. By default, the " +
		"SimpleHeaderConverter is used to serialize header values to strings and deserialize them by inferring the schemas."
)

// converterClassValidator accepts the converter classes newConverter can
// instantiate (JsonConverter, AvroConverter, ...); their properties are
// checked separately.
func converterClassValidator(v string) string {
	if v == "" {
		return ""
	}
	if _, err := newConverter(WorkerConfig{}, map[string]string{"value.converter": v}, false); err != nil && strings.Contains(err.Error(), "could not be found") {
		return "Class " + v + " could not be found."
	}
	return ""
}

// knownHeaderConverters are the header.converter values accepted: connectd
// passes header bytes through, which is what both of these do for the
// byte-array headers its connectors produce.
var knownHeaderConverters = map[string]bool{
	converters.JSONConverterClass: true, "JsonConverter": true,
	"org.apache.kafka.connect.storage.SimpleHeaderConverter": true, "SimpleHeaderConverter": true,
}

func classValidator(known map[string]bool) func(string) string {
	return func(v string) string {
		if v == "" || known[v] {
			return ""
		}
		return "Class " + v + " could not be found."
	}
}

func atLeast(min int64) func(string) string {
	return func(v string) string {
		n, err := strconv.ParseInt(v, 10, 64)
		if err == nil && n < min {
			return fmt.Sprintf("Value must be at least %d", min)
		}
		return ""
	}
}

func uniqueAliases(v string) string {
	seen := map[string]bool{}
	for _, a := range splitList(v) {
		if seen[a] {
			return "Duplicate alias provided."
		}
		seen[a] = true
	}
	return ""
}

func caseInsensitiveIn(vals ...string) func(string) string {
	return func(v string) string {
		for _, a := range vals {
			if strings.EqualFold(a, v) {
				return ""
			}
		}
		return "String must be one of (case insensitive): " + strings.Join(vals, ", ")
	}
}

// pluginVersions are the installed versions behind the KIP-891 keys of
// one connector config: its connector class and its key, value and header
// converters (the worker's when the config names none).
type pluginVersions struct {
	connector, connectorClass string
	key, value, header        string
}

// pluginVersionKey returns a KIP-891 "<plugin>.plugin.version" key
// (ConnectorConfig, Kafka 4): its default and only recommended value is
// the installed version (connectd installs one version per class); a
// different value is an error naming the installed one.
func pluginVersionKey(name, display, doc, width string, imp connect.Importance, order int, class, installed string) connect.ConfigKey {
	var rec []string
	if installed != "" {
		rec = []string{installed}
	}
	return connect.ConfigKey{Name: name, Type: connect.TypeString, Default: connect.Str(installed), Importance: imp, Doc: doc,
		Group: groupCommon, OrderInGroup: order, Width: width, DisplayName: display, Recommended: rec,
		Validator: func(v string) string {
			if v = strings.TrimSpace(v); v == "" || v == installed {
				return ""
			}
			return fmt.Sprintf("Plugin %s has no version %s; the installed version is %s", class, v, installed)
		}}
}

// sourceConnectorConfigDef returns the keys Kafka Connect defines for every
// source connector (ConnectorConfig.configDef() plus
// SourceConnectorConfig.configDef(), Kafka 3.9): names, types, defaults,
// docs, groups, order, widths and display names as there. With pv, also
// Kafka 4's plugin version keys (KIP-891) at their places in the Common
// group (connector.plugin.version after connector.class, each
// *.converter.plugin.version after its converter), as the validate
// response of a Kafka Connect 4.3 worker lists them.
func sourceConnectorConfigDef(pv *pluginVersions) *connect.ConfigDef {
	d := connect.NewConfigDef()
	o := 0
	next := func() int { o++; return o }
	d.Define(connect.ConfigKey{Name: "name", Type: connect.TypeString, Importance: connect.High, Doc: "Globally unique name to use for this connector.",
		Group: groupCommon, OrderInGroup: next(), Width: "MEDIUM", DisplayName: "Connector name",
		Validator: func(v string) string {
			if v == "" {
				return "String must be non-empty"
			}
			for _, r := range v {
				if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
					return "String must not contain control characters"
				}
			}
			return ""
		}})
	d.Define(connect.ConfigKey{Name: "connector.class", Type: connect.TypeString, Importance: connect.High,
		Doc: "Name or alias of the class for this connector. Must be a subclass of org.apache.kafka.connect.connector.Connector. " +
			"If the connector is org.apache.kafka.connect.file.FileStreamSinkConnector, you can either specify this full name,  " +
			"or use \"FileStreamSink\" or \"FileStreamSinkConnector\" to make the configuration a bit shorter",
		Group: groupCommon, OrderInGroup: next(), Width: "LONG", DisplayName: "Connector class"})
	if pv != nil {
		d.Define(pluginVersionKey("connector.plugin.version", "Connector version", "Version of the connector.", "MEDIUM", connect.Medium, next(), pv.connectorClass, pv.connector))
	}
	d.Define(connect.ConfigKey{Name: "tasks.max", Type: connect.TypeInt, Default: connect.Str("1"), Importance: connect.High,
		Doc: "Maximum number of tasks to use for this connector.", Group: groupCommon, OrderInGroup: next(), Width: "SHORT", DisplayName: "Tasks max",
		Validator: atLeast(1)})
	d.Define(connect.ConfigKey{Name: "tasks.max.enforce", Type: connect.TypeBoolean, Default: connect.Str("true"), Importance: connect.Low,
		Doc: "(Deprecated) Whether to enforce that the tasks.max property is respected by the connector. " +
			"By default, connectors that generate too many tasks will fail, and existing sets of tasks that exceed the tasks.max property will also be failed. " +
			"If this property is set to false, then connectors will be allowed to generate more than the maximum number of tasks, and existing sets of " +
			"tasks that exceed the tasks.max property will be allowed to run. " +
			"This property is deprecated and will be removed in an upcoming major release.",
		Group: groupCommon, OrderInGroup: next(), Width: "SHORT", DisplayName: "Enforce tasks max"})
	d.Define(connect.ConfigKey{Name: "key.converter", Type: connect.TypeClass, Default: connect.Str(""), Importance: connect.Low,
		Doc: fmt.Sprintf(converterDoc, "keys"), Group: groupCommon, OrderInGroup: next(), Width: "SHORT", DisplayName: "Key converter class",
		Validator: converterClassValidator})
	if pv != nil {
		d.Define(pluginVersionKey("key.converter.plugin.version", "Key converter version", "Version of the key converter.", "SHORT", connect.Low, next(), "key.converter", pv.key))
	}
	d.Define(connect.ConfigKey{Name: "value.converter", Type: connect.TypeClass, Default: connect.Str(""), Importance: connect.Low,
		Doc: fmt.Sprintf(converterDoc, "values"), Group: groupCommon, OrderInGroup: next(), Width: "SHORT", DisplayName: "Value converter class",
		Validator: converterClassValidator})
	if pv != nil {
		d.Define(pluginVersionKey("value.converter.plugin.version", "Value converter version", "Version of the value converter.", "SHORT", connect.Low, next(), "value.converter", pv.value))
	}
	d.Define(connect.ConfigKey{Name: "header.converter", Type: connect.TypeClass, Default: connect.Str(""), Importance: connect.Low,
		Doc: headerConverterDoc, Group: groupCommon, OrderInGroup: next(), Width: "SHORT", DisplayName: "Header converter class",
		Validator: classValidator(knownHeaderConverters)})
	if pv != nil {
		d.Define(pluginVersionKey("header.converter.plugin.version", "Header converter version", "Version of the header converter.", "SHORT", connect.Low, next(), "header.converter", pv.header))
	}
	d.Define(connect.ConfigKey{Name: "transforms", Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Low,
		Doc: "Aliases for the transformations to be applied to records.", Group: groupTransforms, OrderInGroup: next(), Width: "LONG", DisplayName: "Transforms",
		Validator: uniqueAliases})
	d.Define(connect.ConfigKey{Name: "predicates", Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Low,
		Doc: "Aliases for the predicates used by transformations.", Group: groupPredicates, OrderInGroup: next(), Width: "LONG", DisplayName: "Predicates",
		Validator: uniqueAliases})
	d.Define(connect.ConfigKey{Name: "config.action.reload", Type: connect.TypeString, Default: connect.Str("restart"), Importance: connect.Low,
		Doc: "The action that Connect should take on the connector when changes in external configuration providers result in a change in the " +
			"connector's configuration properties. A value of 'none' indicates that Connect will do nothing. A value of 'restart' indicates that " +
			"Connect should restart/reload the connector with the updated configuration properties.The restart may actually be scheduled in the " +
			"future if the external configuration provider indicates that a configuration value will expire in the future.",
		Group: groupCommon, OrderInGroup: next(), Width: "MEDIUM", DisplayName: "Reload Action", Allowed: []string{"none", "restart"}})
	o = 0
	d.Define(connect.ConfigKey{Name: "errors.retry.timeout", Type: connect.TypeLong, Default: connect.Str("0"), Importance: connect.Medium,
		Doc:   "The maximum duration in milliseconds that a failed operation will be reattempted. The default is 0, which means no retries will be attempted. Use -1 for infinite retries.",
		Group: groupErrors, OrderInGroup: next(), Width: "MEDIUM", DisplayName: "Retry Timeout for Errors"})
	d.Define(connect.ConfigKey{Name: "errors.retry.delay.max.ms", Type: connect.TypeLong, Default: connect.Str("60000"), Importance: connect.Medium,
		Doc:   "The maximum duration in milliseconds between consecutive retry attempts. Jitter will be added to the delay once this limit is reached to prevent thundering herd issues.",
		Group: groupErrors, OrderInGroup: next(), Width: "MEDIUM", DisplayName: "Maximum Delay Between Retries for Errors"})
	d.Define(connect.ConfigKey{Name: "errors.tolerance", Type: connect.TypeString, Default: connect.Str("none"), Importance: connect.Medium,
		Doc: "Behavior for tolerating errors during connector operation. 'none' is the default value and signals that any error will result in an " +
			"immediate connector task failure; 'all' changes the behavior to skip over problematic records.",
		Group: groupErrors, OrderInGroup: next(), Width: "SHORT", DisplayName: "Error Tolerance", Allowed: []string{"none", "all"}})
	d.Define(connect.ConfigKey{Name: "errors.log.enable", Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Medium,
		Doc: "If true, write each error and the details of the failed operation and problematic record to the Connect application log. " +
			"This is 'false' by default, so that only errors that are not tolerated are reported.",
		Group: groupErrors, OrderInGroup: next(), Width: "SHORT", DisplayName: "Log Errors"})
	d.Define(connect.ConfigKey{Name: "errors.log.include.messages", Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Medium,
		Doc: "Whether to include in the log the Connect record that resulted in a failure. For sink records, the topic, partition, offset, and " +
			"timestamp will be logged. For source records, the key and value (and their schemas), all headers, and the timestamp, Kafka topic, " +
			"Kafka partition, source partition, and source offset will be logged. This is 'false' by default, which will prevent record keys, " +
			"values, and headers from being written to log files.",
		Group: groupErrors, OrderInGroup: next(), Width: "SHORT", DisplayName: "Log Error Details"})
	o = 0
	d.Define(connect.ConfigKey{Name: "topic.creation.groups", Type: connect.TypeList, Default: connect.Str(""), Importance: connect.Low,
		Doc: "Groups of configurations for topics created by source connectors", Group: groupTopicCreate, OrderInGroup: next(), Width: "LONG",
		DisplayName: "Topic Creation Groups", Validator: uniqueAliases})
	d.Define(connect.ConfigKey{Name: "exactly.once.support", Type: connect.TypeString, Default: connect.Str("requested"), Importance: connect.Medium,
		Doc: "Permitted values are requested, required. If set to \"required\", forces a preflight check for the connector to ensure that it can " +
			"provide exactly-once semantics with the given configuration. Some connectors may be capable of providing exactly-once semantics but " +
			"not signal to Connect that they support this; in that case, documentation for the connector should be consulted carefully before " +
			"creating it, and the value for this property should be set to \"requested\". Additionally, if the value is set to \"required\" but " +
			"the worker that performs preflight validation does not have exactly-once support enabled for source connectors, requests to create " +
			"or validate the connector will fail.",
		Group: groupExactlyOnce, OrderInGroup: next(), Width: "SHORT", DisplayName: "Exactly once support",
		Validator: caseInsensitiveIn("requested", "required")})
	d.Define(connect.ConfigKey{Name: "transaction.boundary", Type: connect.TypeString, Default: connect.Str("poll"), Importance: connect.Medium,
		Doc: "Permitted values are: poll, interval, connector. If set to 'poll', a new producer transaction will be started and committed for " +
			"every batch of records that each task from this connector provides to Connect. If set to 'connector', relies on connector-defined " +
			"transaction boundaries; note that not all connectors are capable of defining their own transaction boundaries, and in that case, " +
			"attempts to instantiate a connector with this value will fail. Finally, if set to 'interval', commits transactions only after a " +
			"user-defined time interval has passed.",
		Group: groupExactlyOnce, OrderInGroup: next(), Width: "SHORT", DisplayName: "Transaction Boundary",
		Validator: caseInsensitiveIn("poll", "interval", "connector")})
	d.Define(connect.ConfigKey{Name: "transaction.boundary.interval.ms", Type: connect.TypeLong, Default: connect.Str(""), Importance: connect.Low,
		Doc: "If 'transaction.boundary' is set to 'interval', determines the interval for producer transaction commits by connector tasks. If unset, " +
			"defaults to the value of the worker-level 'offset.flush.interval.ms' property. It has no effect if a different transaction.boundary is specified.",
		Group: groupExactlyOnce, OrderInGroup: next(), Width: "SHORT", DisplayName: "Transaction boundary interval", Validator: atLeast(0)})
	d.Define(connect.ConfigKey{Name: "offsets.storage.topic", Type: connect.TypeString, Default: connect.Str(""), Importance: connect.Low,
		Doc: "The name of a separate offsets topic to use for this connector. If empty or not specified, the worker’s global offsets topic name " +
			"will be used. If specified, the offsets topic will be created if it does not already exist on the Kafka cluster targeted by this " +
			"connector (which may be different from the one used for the worker's global offsets topic if the bootstrap.servers property of the " +
			"connector's producer has been overridden from the worker's). Only applicable in distributed mode; in standalone mode, setting this " +
			"property will have no effect.",
		Group: groupOffsetsTopic, OrderInGroup: 1, Width: "LONG", DisplayName: "Offsets topic"})
	return d
}

// nullDefaults are the base keys whose Kafka default is null (rendered as
// default_value null and value null when unset); the ConfigDef above uses ""
// for them so that they are optional.
var nullDefaults = map[string]bool{
	"key.converter": true, "value.converter": true, "header.converter": true,
	"transaction.boundary.interval.ms": true, "offsets.storage.topic": true,
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
