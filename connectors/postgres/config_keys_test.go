package postgres

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/connectd/connectd/internal/testenv"
)

// validConfig is a configuration validate accepts.
func validConfig() map[string]string {
	return map[string]string{"connector.class": ClassName, "database.hostname": "h", "database.user": "u", "database.dbname": "d",
		"topic.prefix": "p", "plugin.name": "pgoutput"}
}

// errorsOn returns validate's messages for key.
func errorsOn(cfg map[string]string, key string) string {
	var out []string
	for _, e := range validate(cfg) {
		if e.Key == key {
			out = append(out, e.Message)
		}
	}
	return strings.Join(out, "; ")
}

// TestDebeziumKeyParity checks that configDef defines every key Debezium
// 3.6.1's PostgresConnector lists in the real worker's validate answer
// (debeziumKeys, from integration/testdata/connect-compat/
// kafka-connect.raw.json) with its group, order, type and default; that an
// unimplemented key accepts its default (or absence) and refuses anything
// else on that key; and the checks of the implemented keys that refuse
// values connectd cannot honour.
func TestDebeziumKeyParity(t *testing.T) {
	infos := map[string]int{}
	for i, ki := range configDef.Info() {
		infos[ki.Name] = i
	}
	all := configDef.Info()
	if len(debeziumKeys) != 126 {
		t.Fatalf("%d Debezium connector keys, the capture has 126", len(debeziumKeys))
	}
	if errs := validate(validConfig()); len(errs) != 0 {
		t.Fatalf("a minimal configuration is refused: %v", errs)
	}
	for _, dk := range debeziumKeys {
		i, ok := infos[dk.name]
		if !ok {
			t.Errorf("%s: not defined", dk.name)
			continue
		}
		ki := all[i]
		if ki.Group == nil || *ki.Group != dk.group || ki.OrderInGroup != dk.order || ki.Type != string(dk.typ) || !reflect.DeepEqual(ki.Default, dk.def) {
			t.Errorf("%s: group %v order %d type %s default %v, Debezium %s %d %s %v", dk.name, ki.Group, ki.OrderInGroup, ki.Type, ki.Default, dk.group, dk.order, dk.typ, dk.def)
		}
		if _, unimplemented := unimplementedDocs[dk.name]; !unimplemented {
			continue
		}
		if dk.def != nil {
			if msg := errorsOn(map[string]string{dk.name: strings.ToUpper(*dk.def)}, dk.name); msg != "" {
				t.Errorf("%s: its default %q is refused: %s", dk.name, *dk.def, msg)
			}
		}
		other := "x-other"
		switch dk.typ {
		case "BOOLEAN":
			other = "true"
			if dk.def != nil && *dk.def == "true" {
				other = "false"
			}
		case "INT", "LONG":
			other = "12345"
		}
		cfg := validConfig()
		cfg[dk.name] = other
		if msg := errorsOn(cfg, dk.name); !strings.Contains(msg, "connectd does not implement "+dk.name) {
			t.Errorf("%s=%s: error %q, want connectd does not implement", dk.name, other, msg)
		}
	}
	// The column mask/truncate/hash keys (defined under their pattern
	// names) are implemented: set by their real names, they are accepted.
	cfg := validConfig()
	cfg["column.mask.with.8.chars"] = "public.t.c"
	cfg["column.truncate.to.20.chars"] = "public.t.c"
	cfg["column.mask.hash.SHA-256.with.salt.pepper"] = "public.t.c"
	if errs := validate(cfg); len(errs) != 0 {
		t.Errorf("column mask keys refused: %v", errs)
	}
	for _, tc := range []struct{ key, value, want string }{
		{KeyTopicNamingStrategy, "io.debezium.schema.DefaultTopicNamingStrategy", "connectd implements only io.debezium.schema.SchemaTopicNamingStrategy"},
		{KeyTableIgnoreBuiltin, "false", "cannot publish its system catalogs"},
		{KeySnapshotLocking, "custom", "custom snapshot locking"},
		{KeySnapshotIsolation, "snapshot", "String must be one of"},
		{KeySSLMode, "verify-none", "String must be one of"},
		{KeySSLKey, "", "database.sslcert and database.sslkey must be set together"},
		{KeySlotMaxRetries, "-1", "non-negative"},
		{"errors.max.retries", "-2", "must be -1"},
		{KeySchemaNameAdjust, "avro_utf8", "String must be one of"},
	} {
		cfg := validConfig()
		cfg[tc.key] = tc.value
		if tc.key == KeySSLKey {
			delete(cfg, KeySSLKey)
			cfg[KeySSLCert] = "/tmp/c.pem"
		}
		if msg := errorsOn(cfg, tc.key); !strings.Contains(msg, tc.want) {
			t.Errorf("%s=%q: %q, want %q", tc.key, tc.value, msg, tc.want)
		}
	}
	// database.initial.statements, split as Debezium's
	// JdbcConnection.parseSqlStatementString.
	for in, want := range map[string][]string{
		"SET a = 1; SET b = 2":             {"SET a = 1", "SET b = 2"},
		"SELECT ';;x';;;SET c = 3;":        {"SELECT ';x';", "SET c = 3"},
		"  ;; ":                            {";"},
		"SET application_name = 'a;;b' ; ": {"SET application_name = 'a;b'"},
	} {
		if got := splitStatements(in); !reflect.DeepEqual(got, want) {
			t.Errorf("splitStatements(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSchemaNameAdjustment checks schema.name.adjustment.mode on the
// schemas of a table whose name is not a valid Avro name ("my-table"), as
// Debezium's SchemaNameAdjuster: none keeps it, avro replaces '-' by '_',
// avro_unicode by _u002d; topics are never adjusted.
func TestSchemaNameAdjustment(t *testing.T) {
	pg := testenv.PostgresT(t)
	exec(t, pg, "postgres", `CREATE DATABASE names`)
	exec(t, pg, "names", `CREATE TABLE "my-table" (id int PRIMARY KEY); INSERT INTO "my-table" VALUES (1)`)
	for _, tc := range []struct{ mode, name string }{
		{"none", "dbserver1.public.my-table"},
		{"avro", "dbserver1.public.my_table"},
		{"avro_unicode", "dbserver1.public.my_u002dtable"},
	} {
		task := startTask(t, with(baseConfig(pg, "names"), "slot.name", "names_"+tc.mode, "snapshot.mode", "initial_only",
			"schema.name.adjustment.mode", tc.mode), &memOffsets{})
		r := pollN(t, task, 1)[0]
		got := fmt.Sprintf("%s %s %s %s", r.Topic, r.KeySchema.Name, r.ValueSchema.Name, r.ValueSchema.Field("after").Schema.Name)
		want := fmt.Sprintf("dbserver1.public.my-table %[1]s.Key %[1]s.Envelope %[1]s.Value", tc.name)
		if got != want {
			t.Errorf("schema.name.adjustment.mode=%s: %s, want %s", tc.mode, got, want)
		}
		task.Stop()
	}
	// Debezium's SchemaNameAdjusterTest-style cases (UTF-16 code units).
	for _, tc := range []struct{ mode, in, want string }{
		{"avro", "1x.ü", "_x._"},
		{"avro", "a_b.c-d", "a_b.c_d"},
		{"avro", "a.😀", "a.__"},
		{"avro_unicode", "a_b", "a_u005fb"},
		{"avro_unicode", "a.é", "a._u00e9"},
		{"avro_unicode", "a.ā", "a._u101"},
		{"avro_unicode", "a.😀", "a._ud83d_ude00"},
		{"none", "a-b", "a-b"},
	} {
		if got := adjustSchemaName(tc.mode, tc.in); got != tc.want {
			t.Errorf("%s: %s → %s, want %s", tc.mode, tc.in, got, tc.want)
		}
	}
}
