package transforms

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
)

// TestChainInventoryUnwrapRoute builds a chain from a connector config in
// Kafka Connect's syntax and runs every event of the Debezium 3.6.1
// inventory capture through ExtractNewRecordState + RegexRouter (the
// example of Debezium's "New Record State Extraction" and "Topic Routing"
// pages: https://debezium.io/documentation/reference/stable/transformations/event-flattening.html#_configuration,
// https://kafka.apache.org/39/documentation.html#connect_transforms).
func TestChainInventoryUnwrapRoute(t *testing.T) {
	cfg := map[string]string{
		"name":                         "inventory-connector",
		"connector.class":              "io.debezium.connector.postgresql.PostgresConnector",
		"transforms":                   "unwrap,route",
		"transforms.unwrap.type":       "io.debezium.transforms.ExtractNewRecordState",
		"transforms.unwrap.add.fields": "op,source.ts_ms",
		"transforms.unwrap.delete.tombstone.handling.mode": "rewrite-with-tombstone",
		"transforms.route.type":                            "org.apache.kafka.connect.transforms.RegexRouter",
		"transforms.route.regex":                           `([^.]+)\.([^.]+)\.([^.]+)`,
		"transforms.route.replacement":                     "replica.$3",
		"transforms.route.predicate":                       "notTypes",
		"transforms.route.negate":                          "true",
		"predicates":                                       "notTypes",
		"predicates.notTypes.type":                         "TopicNameMatches",
		"predicates.notTypes.pattern":                      `.*\.all_types`,
	}
	if errs := Validate(cfg); len(errs) > 0 {
		t.Fatalf("Validate: %v", errs)
	}
	c, err := NewChain(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b strings.Builder
	b.WriteString("# ref: Debezium New Record State Extraction (delete.tombstone.handling.mode=rewrite-with-tombstone, add.fields) + Kafka Connect RegexRouter with a negated TopicNameMatches predicate\n")
	for _, r := range debeziumEvents(t, "pg_inventory_snapshot_stream.jsonl") {
		out, err := c.Apply(r)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(render(t, out) + "\n")
	}
	path := filepath.Join("..", "testdata", "transforms", "chain_inventory_unwrap_route.golden")
	if *update {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != b.String() {
		t.Errorf("%s differs (go test ./transforms -update rewrites it); got:\n%s", path, b.String())
	}
}

func TestValidateNamesKeys(t *testing.T) {
	cases := []struct {
		cfg     map[string]string
		key     string
		message string
	}{
		{map[string]string{"transforms": "a", "transforms.a.type": "org.apache.kafka.connect.transforms.RegexRouter", "transforms.a.replacement": "x"},
			"transforms.a.regex", `Missing required configuration "transforms.a.regex" which has no default value.`},
		{map[string]string{"transforms": "a", "transforms.a.type": "RegexRouter", "transforms.a.regex": "(", "transforms.a.replacement": "x"},
			"transforms.a.regex", "Invalid value ( for configuration transforms.a.regex: Invalid regex"},
		{map[string]string{"transforms": "a"},
			"transforms.a.type", `Missing required configuration "transforms.a.type" which has no default value.`},
		{map[string]string{"transforms": "a", "transforms.a.type": "com.example.Nope"},
			"transforms.a.type", "Invalid value com.example.Nope for configuration transforms.a.type: Class com.example.Nope could not be found."},
		{map[string]string{"transforms": "a", "transforms.a.type": "org.apache.kafka.connect.transforms.ReplaceField$Value", "transforms.a.renames": "a:b:c"},
			"transforms.a.renames", "Invalid rename mapping: a:b:c"},
		{map[string]string{"transforms": "a", "transforms.a.type": "Filter", "transforms.a.predicate": "p"},
			"transforms.a.predicate", "Predicate alias p is not among the aliases defined in predicates"},
		{map[string]string{"transforms": "a", "transforms.a.type": "Filter", "transforms.a.predicate": "p", "transforms.a.negate": "yes", "predicates": "p", "predicates.p.type": "TopicNameMatches", "predicates.p.pattern": ".*"},
			"transforms.a.negate", "Expected value to be either true or false"},
		{map[string]string{"predicates": "p", "predicates.p.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey"},
			"predicates.p.name", `Missing required configuration "predicates.p.name"`},
		{map[string]string{"transforms": "u", "transforms.u.type": "io.debezium.transforms.ExtractNewRecordState", "transforms.u.delete.tombstone.handling.mode": "nope"},
			"transforms.u.delete.tombstone.handling.mode", "Value must be one of drop, tombstone, rewrite, rewrite-with-tombstone, delete-to-tombstone"},
		{map[string]string{"transforms": "c", "transforms.c.type": "org.apache.kafka.connect.transforms.Cast$Value", "transforms.c.spec": "a:uuid"},
			"transforms.c.spec", "Invalid type found in casting spec: uuid"},
		{map[string]string{"transforms": "h", "transforms.h.type": "org.apache.kafka.connect.transforms.HeaderFrom$Value", "transforms.h.fields": "a,b", "transforms.h.headers": "x", "transforms.h.operation": "copy"},
			"transforms.h.headers", "'fields' config must have the same number of elements"},
	}
	for _, c := range cases {
		errs := Validate(c.cfg)
		found := false
		for _, e := range errs {
			if e.Key == c.key && strings.Contains(e.Message, c.message) {
				found = true
			}
		}
		if !found {
			t.Errorf("%v: want %s: %q, got %v", c.cfg, c.key, c.message, errs)
		}
		if _, err := NewChain(c.cfg); err == nil {
			t.Errorf("%v: NewChain accepted an invalid config", c.cfg)
		}
	}
	if c, err := NewChain(map[string]string{}); err != nil || c.Len() != 0 {
		t.Fatalf("empty chain: %v", err)
	}
}

func TestRegisterListsEveryClass(t *testing.T) {
	p := connect.NewPlugins()
	Register(p)
	for _, class := range Classes() {
		d, ok := p.Plugin(class)
		if !ok || d.Config == nil {
			t.Fatalf("%s not registered", class)
		}
		_ = d.Config().Info()
	}
	for alias, class := range map[string]string{
		"ExtractNewRecordState": "io.debezium.transforms.ExtractNewRecordState",
		"RegexRouter":           "org.apache.kafka.connect.transforms.RegexRouter",
		"TopicNameMatches":      "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
	} {
		if d, ok := p.Plugin(alias); !ok || d.Class != class {
			t.Errorf("alias %s: got %+v", alias, d)
		}
	}
	if d, ok := p.Plugin("org.apache.kafka.connect.transforms.ReplaceField$Value"); !ok || d.Type != connect.PluginTransformation {
		t.Errorf("ReplaceField$Value: %+v", d)
	}
}
