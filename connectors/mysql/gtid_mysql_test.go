package mysql

import (
	"encoding/binary"
	"strings"

	"testing"

	gmysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"
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

// TestMySQLGTIDStreamTracking covers the MySQL path of the streamed GTID
// offset without a MySQL server (none is installable here): a MySQL 8
// Gtid_log_event body as the server writes it (MySQL's
// libbinlogevents/src/control_events.cpp Gtid_event layout: commit flag,
// 16-byte SID, 8-byte GNO, logical-timestamp type code 2, last_committed,
// sequence_number, 7-byte immediate commit timestamp) decodes with
// go-mysql into the "uuid:gno" form Debezium's source.gtid carries
// (lower-case UUID, as MySQL's server_uuid and Java's UUID.toString), and
// committed transactions accumulate into the offset's gtids set as
// MySQL's gtid_executed does (intervals merged), skipping the sources the
// filters exclude.
func TestMySQLGTIDStreamTracking(t *testing.T) {
	body := func(sid [16]byte, gno uint64) []byte {
		b := []byte{1}
		b = append(b, sid[:]...)
		b = binary.LittleEndian.AppendUint64(b, gno)
		b = append(b, 2) // LOGICAL_TIMESTAMP_TYPECODE
		b = binary.LittleEndian.AppendUint64(b, gno-1)
		b = binary.LittleEndian.AppendUint64(b, gno)
		return append(b, 0x10, 0x32, 0x54, 0x76, 0x08, 0x06, 0x00) // immediate_commit_timestamp (µs)
	}
	a := [16]byte{0x3e, 0x11, 0xfa, 0x47, 0x71, 0xca, 0x11, 0xe1, 0x9e, 0x33, 0xc8, 0x0a, 0xa9, 0x42, 0x95, 0x62}
	b := a
	b[0] = 0x4e
	gtid := func(sid [16]byte, gno uint64) string {
		e := &replication.GTIDEvent{}
		if err := e.Decode(body(sid, gno)); err != nil {
			t.Fatal(err)
		}
		return gtidOf(e)
	}
	if got, want := gtid(a, 6), "3e11fa47-71ca-11e1-9e33-c80aa9429562:6"; got != want {
		t.Fatalf("gtidOf = %q, want %q", got, want)
	}
	const ua, ub = "3e11fa47-71ca-11e1-9e33-c80aa9429562", "4e11fa47-71ca-11e1-9e33-c80aa9429562"

	// No filters: every committed GTID joins the set, contiguous numbers
	// merge into one interval, a gap stays a gap.
	s := txState{gtidsBefore: ua + ":1-5"}
	for _, g := range []string{gtid(a, 6), gtid(b, 1), gtid(a, 7), gtid(a, 9)} {
		s.gtid = g
		s.commit(100)
	}
	want, _ := gmysql.ParseMysqlGTIDSet(ua + ":1-7:9," + ub + ":1")
	got, err := gmysql.ParseMysqlGTIDSet(s.gtidsBefore)
	if err != nil || !got.Equal(want) {
		t.Fatalf("offset gtids = %q (%v), want %s", s.gtidsBefore, err, want)
	}

	// gtid.source.excludes: the excluded source's transactions are not
	// recorded (Debezium's GtidSet.retainAll on the source filter).
	c := &config{gtidExclude: anchored([]string{"4E11FA47-.*"})}
	s = txState{gtidsBefore: ua + ":1-5", keep: c.gtidSourceIncluded}
	for _, g := range []string{gtid(b, 1), gtid(a, 6)} {
		s.gtid = g
		s.commit(100)
	}
	if s.gtidsBefore != ua+":1-6" {
		t.Fatalf("offset gtids with %s excluded = %q, want %s:1-6", ub, s.gtidsBefore, ua)
	}

	// The set a restart asks COM_BINLOG_DUMP_GTID for: the offset's GTIDs
	// of included sources plus the server's gtid_executed for excluded
	// sources (not replayed), as Debezium's MySqlConnection.filterGtidSet;
	// an included source the offset has never seen is left out, so the
	// server sends it from its first transaction.
	server := strings.ToUpper(ua) + ":1-20,\n" + ub + ":1-8"
	for _, tc := range []struct {
		name string
		c    *config
		want string
	}{
		{"no filters", &config{}, ua + ":1-6"},
		{"source excluded", c, ua + ":1-6," + ub + ":1-8"},
		// ua is excluded by the include list: the server's position; ub is
		// included but not in the offset: from its first transaction.
		{"only the other source included", &config{gtidInclude: anchored([]string{ub})}, ua + ":1-20"},
	} {
		gs, err := tc.c.restartSet(flavorMySQL, ua+":1-6", server)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		w, _ := gmysql.ParseMysqlGTIDSet(tc.want)
		if !gs.Equal(w) {
			t.Fatalf("%s: restart set = %s, want %s", tc.name, gs, w)
		}
	}
}

// TestShowBinlogStatusFallback: MySQL 8.4 has no SHOW MASTER STATUS (a
// syntax error, 1064) and reads its position with SHOW BINARY LOG STATUS;
// MariaDB has only the first. No MySQL server is installable here, so the
// server is a function answering as each would.
func TestShowBinlogStatusFallback(t *testing.T) {
	row := &gmysql.Result{Resultset: &gmysql.Resultset{Values: [][]gmysql.FieldValue{{}}}}
	for _, tc := range []struct {
		name    string
		answers map[string]error // query → its error; absent: not asked
		want    []string
		wantErr bool
	}{
		{"mariadb", map[string]error{"SHOW MASTER STATUS": nil}, []string{"SHOW MASTER STATUS"}, false},
		{"mysql 8.4", map[string]error{"SHOW MASTER STATUS": gmysql.NewError(gmysql.ER_PARSE_ERROR, "You have an error in your SQL syntax"), "SHOW BINARY LOG STATUS": nil},
			[]string{"SHOW MASTER STATUS", "SHOW BINARY LOG STATUS"}, false},
		{"no privilege", map[string]error{"SHOW MASTER STATUS": gmysql.NewError(gmysql.ER_SPECIFIC_ACCESS_DENIED_ERROR, "Access denied")}, []string{"SHOW MASTER STATUS"}, true},
	} {
		var asked []string
		r, err := showBinlogStatus(func(q string, _ ...any) (*gmysql.Result, error) {
			asked = append(asked, q)
			e, ok := tc.answers[q]
			if !ok {
				t.Fatalf("%s: asked %q", tc.name, q)
			}
			if e != nil {
				return nil, e
			}
			return row, nil
		})
		if strings.Join(asked, ";") != strings.Join(tc.want, ";") || (err != nil) != tc.wantErr || (err == nil && r != row) {
			t.Errorf("%s: asked %v, err %v; want %v, error %v", tc.name, asked, err, tc.want, tc.wantErr)
		}
	}
}
