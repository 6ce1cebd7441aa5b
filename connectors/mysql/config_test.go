package mysql

import (
	"strings"
	"testing"
)

// TestConfigValidation checks the per-field messages of the ConfigDef for
// the handling modes and heartbeat keys: Debezium's values are accepted,
// anything else is refused with Kafka Connect's "Invalid value" wording,
// and time.precision.mode=adaptive with Debezium's own message.
func TestConfigValidation(t *testing.T) {
	base := map[string]string{KeyHostname: "h", KeyUser: "u", KeyServerID: "1", KeyTopicPrefix: "p"}
	cases := []struct {
		key, value, want string // want "" = valid
	}{
		{KeyDecimalHandlingMode, "precise", ""},
		{KeyDecimalHandlingMode, "double", ""},
		{KeyDecimalHandlingMode, "STRING", ""},
		{KeyDecimalHandlingMode, "float", "Invalid value float for configuration decimal.handling.mode: String must be one of: precise, double, string"},
		{KeyTimePrecisionMode, "adaptive_time_microseconds", ""},
		{KeyTimePrecisionMode, "connect", ""},
		{KeyTimePrecisionMode, "adaptive", "Invalid value adaptive for configuration time.precision.mode: The 'adaptive' time.precision.mode is no longer supported"},
		{KeyTimePrecisionMode, "nanoseconds", "String must be one of: adaptive_time_microseconds, adaptive, connect"},
		{KeyBigintUnsignedMode, "precise", ""},
		{KeyBigintUnsignedMode, "long", ""},
		{KeyBigintUnsignedMode, "string", "String must be one of: long, precise"},
		{KeyBinaryHandlingMode, "bytes", ""},
		{KeyBinaryHandlingMode, "base64", ""},
		{KeyBinaryHandlingMode, "base64-url-safe", ""},
		{KeyBinaryHandlingMode, "hex", ""},
		{KeyBinaryHandlingMode, "base32", "String must be one of: bytes, base64, base64-url-safe, hex"},
		{KeyHeartbeatIntervalMs, "0", ""},
		{KeyHeartbeatIntervalMs, "1000", ""},
		{KeyHeartbeatIntervalMs, "-1", "Invalid value -1 for configuration heartbeat.interval.ms: must be a non-negative integer"},
		{KeyHeartbeatIntervalMs, "soon", "heartbeat.interval.ms"},
		// column keys (connectors/internal/columns) and skipped.operations,
		// values from Debezium's MySQL connector documentation
		{KeyColumnExcludeList, "inventory.customers.email,inventory.orders.x.*", ""},
		{KeyColumnIncludeList, "inventory.(", "invalid regular expression \"inventory.(\""},
		{KeyDatatypePropagateType, ".+\\.DATETIME", ""},
		{KeyMessageKeyColumns, "inventory.customers:pk1,pk2;(.*).purchaseorders:pk3,pk4", ""},
		{KeyMessageKeyColumns, "inventory.customers", "message.key.columns: \"inventory.customers\" is not <table>:<column>"},
		{"column.mask.hash.SHA-256.with.salt.CzQMA0cB5K", "inventory.orders.customerName", ""},
		{"column.mask.hash.NOPE-1.with.salt.x", "a.b.c", "unsupported hash algorithm \"NOPE-1\""},
		{"column.truncate.to.20.chars", "a.b.(", "column.truncate.to.20.chars: invalid regular expression"},
		{KeySkippedOperations, "c,u", ""},
		{KeySkippedOperations, "none", ""},
		{KeySkippedOperations, "r", "Invalid operation \"r\": must be one of c, u, d, t, none"},
		{KeyStoreOnlyCapturedDBs, "true", ""},
		{KeyStoreOnlyCapturedDBs, "maybe", "schema.history.internal.store.only.captured.databases.ddl"},
	}
	for _, c := range cases {
		cfg := map[string]string{}
		for k, v := range base {
			cfg[k] = v
		}
		cfg[c.key] = c.value
		errs := validate(flavorMariaDB, cfg)
		var msgs []string
		for _, e := range errs {
			msgs = append(msgs, e.Message)
		}
		got := strings.Join(msgs, "; ")
		switch {
		case c.want == "" && len(errs) > 0:
			t.Errorf("%s=%s: unexpected errors %q", c.key, c.value, got)
		case c.want != "" && (len(errs) != 1 || errs[0].Key != c.key || !strings.Contains(got, c.want)):
			t.Errorf("%s=%s: got %q, want one error on %s containing %q", c.key, c.value, got, c.key, c.want)
		}
	}
	p, err := parseConfig(flavorMariaDB, map[string]string{KeyHostname: "h", KeyUser: "u", KeyServerID: "1", KeyTopicPrefix: "srv",
		KeyDecimalHandlingMode: "String", KeyBinaryHandlingMode: "HEX", KeyBigintUnsignedMode: "precise", KeyHeartbeatIntervalMs: "250",
		KeySkippedOperations: "U,d"})
	if err != nil {
		t.Fatal(err)
	}
	want := valueModes{decimal: "string", time: "adaptive_time_microseconds", bigintPrecise: true, binary: "hex", timeAdjuster: true}
	if p.modes != want || p.heartbeatIntervalMs != 250 || p.heartbeatTopic != "__debezium-heartbeat.srv" {
		t.Errorf("parsed %+v, heartbeat %d %q", p.modes, p.heartbeatIntervalMs, p.heartbeatTopic)
	}
	if p.skipped.skip("c") || !p.skipped.skip("u") || !p.skipped.skip("d") || p.skipped.skip("t") || p.storeOnlyDBs || p.storeOnlyTables {
		t.Errorf("skipped.operations=U,d parsed as c=%v u=%v d=%v t=%v; store only dbs %v tables %v",
			p.skipped.skip("c"), p.skipped.skip("u"), p.skipped.skip("d"), p.skipped.skip("t"), p.storeOnlyDBs, p.storeOnlyTables)
	}
	if d, _ := parseConfig(flavorMariaDB, base); !d.skipped.skip("t") || d.skipped.skip("u") {
		t.Errorf("default skipped.operations is Debezium's \"t\"")
	}
}

// TestConvertersValidation: an unknown converter class, or a converter
// without a class, is a validation error naming it; Debezium's
// TinyIntOneToBooleanConverter is accepted.
func TestConvertersValidation(t *testing.T) {
	base := map[string]string{KeyHostname: "h", KeyUser: "u", KeyServerID: "1", KeyTopicPrefix: "p"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	if errs := validate(flavorMariaDB, with(KeyConverters, "b", "b.type", TinyIntOneToBooleanClass, "b.selector", `db\.t\..*`)); len(errs) != 0 {
		t.Errorf("TinyIntOneToBooleanConverter: %v", errs)
	}
	errs := validate(flavorMariaDB, with(KeyConverters, "b, j", "b.type", "com.example.MyConverter"))
	var msgs []string
	for _, e := range errs {
		msgs = append(msgs, e.Key+": "+e.Message)
	}
	got := strings.Join(msgs, "\n")
	for _, want := range []string{"b.type: converter b: connectd does not implement converter class com.example.MyConverter", "j.type: converter j: j.type (its class) is required"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors %q do not say %q", got, want)
		}
	}
}

// TestDebeziumOnlyKeys: a Debezium key connectd does not implement is
// refused unless it holds its default; a no-effect tuning key is accepted
// and reported for the task's warning; every Debezium key is defined.
func TestDebeziumOnlyKeys(t *testing.T) {
	base := map[string]string{KeyHostname: "h", KeyUser: "u", KeyServerID: "1", KeyTopicPrefix: "p"}
	cfg := map[string]string{"provide.transaction.metadata": "true", "signal.data.collection": "db.signals",
		"snapshot.fetch.size": "500", "schema.history.internal": "io.debezium.storage.kafka.history.KafkaSchemaHistory", "signal.enabled.channels": "source"}
	for k, v := range base {
		cfg[k] = v
	}
	errs := validate(flavorMariaDB, cfg)
	var keys []string
	for _, e := range errs {
		keys = append(keys, e.Key+": "+e.Message)
	}
	got := strings.Join(keys, "\n")
	want := "provide.transaction.metadata: Invalid value true for configuration provide.transaction.metadata: connectd does not implement provide.transaction.metadata; only its default (false) is accepted\n" +
		"signal.data.collection: Invalid value db.signals for configuration signal.data.collection: connectd does not implement signal.data.collection; leave it unset"
	if got != want {
		t.Errorf("errors:\n%s\nwant:\n%s", got, want)
	}
	if n := noEffectKeysSet(cfg); len(n) != 1 || n[0] != "snapshot.fetch.size" {
		t.Errorf("no-effect keys set: %v", n)
	}
	if len(configDef(flavorMariaDB).Keys()) < 116 {
		t.Errorf("%d keys defined, Debezium's MariaDbConnector has 116", len(configDef(flavorMariaDB).Keys()))
	}
}
