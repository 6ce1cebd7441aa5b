package postgres

import "testing"

// TestFilterListsCaseInsensitive: Debezium's Selectors compile
// schema.include.list, table.include.list, table.exclude.list and
// snapshot.include.collection.list with Pattern.CASE_INSENSITIVE; a list
// written in another case than the catalog still selects the table.
func TestFilterListsCaseInsensitive(t *testing.T) {
	base := func(extra map[string]string) *config {
		cfg := map[string]string{"connector.class": ClassName, "database.hostname": "h", "database.dbname": "d",
			"database.user": "u", "topic.prefix": "p", "plugin.name": "pgoutput"}
		for k, v := range extra {
			cfg[k] = v
		}
		c, err := parseConfig(cfg)
		if err != nil {
			t.Fatalf("parseConfig(%v): %v", extra, err)
		}
		return c
	}
	if c := base(map[string]string{"table.include.list": "Public.ORDERS"}); !c.included("public", "orders") || c.included("public", "items") {
		t.Error("table.include.list Public.ORDERS: want public.orders only")
	}
	if c := base(map[string]string{"table.exclude.list": "PUBLIC.orders"}); c.included("public", "orders") || !c.included("public", "items") {
		t.Error("table.exclude.list PUBLIC.orders: want public.orders left out")
	}
	if c := base(map[string]string{"schema.include.list": "SHOP"}); !c.included("shop", "t") || c.included("public", "t") {
		t.Error("schema.include.list SHOP: want schema shop only")
	}
	if c := base(map[string]string{"schema.exclude.list": "Shop"}); c.included("shop", "t") {
		t.Error("schema.exclude.list Shop: want schema shop left out")
	}
	if c := base(map[string]string{"snapshot.include.collection.list": "PUBLIC.Orders"}); !c.snapshotIncluded("public", "orders") || c.snapshotIncluded("public", "items") {
		t.Error("snapshot.include.collection.list PUBLIC.Orders: want public.orders only")
	}
}
