package relational

import "strings"

// KeySnapshotSelectOverrides is Debezium's
// RelationalDatabaseConnectorConfig.SNAPSHOT_SELECT_STATEMENT_OVERRIDES_BY_TABLE:
// a comma-separated list of table ids whose snapshot SELECT is given by the
// property KeySnapshotSelectOverrides + "." + <table id>.
const KeySnapshotSelectOverrides = "snapshot.select.statement.overrides"

// SelectOverrides returns the snapshot SELECT of each table id listed in
// snapshot.select.statement.overrides (tables, already split on commas and
// trimmed), read from cfg's "snapshot.select.statement.overrides.<table id>"
// and trimmed, as Debezium's
// RelationalDatabaseConnectorConfig.getSnapshotSelectOverridesByTable. A
// listed table whose statement is missing or blank has no entry (its
// snapshot reads the whole table). The map is never nil.
func SelectOverrides(tables []string, cfg map[string]string) map[string]string {
	out := map[string]string{}
	for _, id := range tables {
		if q := strings.TrimSpace(cfg[KeySnapshotSelectOverrides+"."+id]); q != "" {
			out[id] = q
		}
	}
	return out
}
