package mysql

import (
	"testing"

	gmysql "github.com/go-mysql-org/go-mysql/mysql"
)

// TestMySQLGTIDSourceFilters covers the MySQL (server UUID) form of GTID
// sets, which no test server here can produce (Debian 12 ships no MySQL
// server): Debezium's MySQL docs define gtid.source.includes/excludes as
// regular expressions matched against "source UUIDs in the GTID set", and
// GtidSet.retainAll keeps the UUID sets whose UUID is included, with all of
// their intervals. The filtered set must still parse as a MySQL GTID set
// (it is what COM_BINLOG_DUMP_GTID is sent).
func TestMySQLGTIDSourceFilters(t *testing.T) {
	const (
		a   = "3E11FA47-71CA-11E1-9E33-C80AA9429562"
		b   = "4E11FA47-71CA-11E1-9E33-C80AA9429562"
		set = a + ":1-5, " + b + ":1-3:7-9"
	)
	if got := gtidSource(a + ":1-5"); got != a {
		t.Fatalf("gtidSource(uuid:interval) = %q, want the UUID", got)
	}
	if got := gtidSource("0-1-42"); got != "0-1" {
		t.Fatalf("gtidSource(MariaDB) = %q, want domain-server", got)
	}
	for _, tc := range []struct {
		name             string
		include, exclude []string
		want             string
	}{
		{"no filter keeps the set as stored", nil, nil, set},
		{"include one UUID", []string{"3E11FA47.*"}, nil, a + ":1-5"},
		{"exclude one UUID", nil, []string{"3E11FA47-71CA-11E1-9E33-C80AA9429562"}, b + ":1-3:7-9"},
		{"include matches the whole UUID only", []string{"3E11FA47"}, nil, ""},
		{"matching is case-insensitive", []string{"4e11fa47-.*"}, nil, b + ":1-3:7-9"},
	} {
		c := &config{gtidInclude: anchored(tc.include), gtidExclude: anchored(tc.exclude)}
		got := c.filterGTIDs(set)
		if got != tc.want {
			t.Fatalf("%s: filterGTIDs = %q, want %q", tc.name, got, tc.want)
		}
		if got == "" {
			continue
		}
		if _, err := gmysql.ParseMysqlGTIDSet(got); err != nil {
			t.Fatalf("%s: filtered set %q does not parse: %v", tc.name, got, err)
		}
	}
}
