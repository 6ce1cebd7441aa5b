package mysql

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	gmysql "github.com/go-mysql-org/go-mysql/mysql"
)

// gtidSource is the source id of one GTID, as Debezium's GTID source
// filters (gtid.source.includes/excludes) see it: "<domain>-<server>" of a
// MariaDB GTID domain-server-sequence (MariaDbGtidStreamId
// asSourceFilterValue), the server UUID of a MySQL uuid:interval.
func gtidSource(gtid string) string {
	if u, _, ok := strings.Cut(gtid, ":"); ok {
		return strings.TrimSpace(u)
	}
	parts := strings.SplitN(strings.TrimSpace(gtid), "-", 3)
	if len(parts) < 2 {
		return gtid
	}
	return parts[0] + "-" + parts[1]
}

// gtidSourceIncluded applies gtid.source.includes / gtid.source.excludes.
func (c *config) gtidSourceIncluded(src string) bool {
	if len(c.gtidInclude) > 0 {
		return matchAny(c.gtidInclude, src)
	}
	return !matchAny(c.gtidExclude, src)
}

// filterGTIDs keeps the GTIDs of included sources of a GTID set (MariaDB
// "d-s-n,…" or MySQL "uuid:1-5,…"), as Debezium's GtidSet.retainAll with the
// source filter; the offset's gtids only ever hold those.
func (c *config) filterGTIDs(set string) string {
	if len(c.gtidInclude) == 0 && len(c.gtidExclude) == 0 {
		return set
	}
	var out []string
	for _, g := range strings.Split(set, ",") {
		if g = strings.TrimSpace(g); g != "" && c.gtidSourceIncluded(gtidSource(g)) {
			out = append(out, g)
		}
	}
	return strings.Join(out, ",")
}

// mariaDomains splits a MariaDB GTID list into domain → GTID.
func mariaDomains(set string) map[string]string {
	m := map[string]string{}
	for _, g := range strings.Split(set, ",") {
		if g = strings.TrimSpace(g); g != "" {
			d, _, _ := strings.Cut(g, "-")
			m[d] = g
		}
	}
	return m
}

func joinDomains(m map[string]string) string {
	ds := make([]string, 0, len(m))
	for d := range m {
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool {
		a, _ := strconv.ParseUint(ds[i], 10, 32)
		b, _ := strconv.ParseUint(ds[j], 10, 32)
		return a < b
	})
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = m[d]
	}
	return strings.Join(out, ",")
}

// restartGTIDSet is the GTID set the binlog dump starts from when the
// stored offset has gtids, as Debezium's filterGtidSet: the offset's GTIDs
// of included sources, plus the server's current position for sources the
// filters exclude (their transactions are not replayed). A domain/UUID
// neither in the offset nor excluded is left out, so the server sends it
// from its first transaction.
func (t *Task) restartGTIDSet(offsetGTIDs string) (gmysql.GTIDSet, error) {
	q := "SELECT @@gtid_executed"
	if t.flavor == flavorMariaDB {
		q = "SELECT @@gtid_binlog_pos"
	}
	r, err := t.conn.Execute(q)
	if err != nil {
		return nil, fmt.Errorf("mysql: read the server's GTID position: %w", err)
	}
	server, _ := r.GetString(0, 0)
	return t.cfg.restartSet(t.flavor, offsetGTIDs, server)
}

// restartSet is restartGTIDSet's computation from the offset's GTID set and
// the server's position (@@gtid_binlog_pos on MariaDB, @@gtid_executed on
// MySQL), in the flavor's set format.
func (c *config) restartSet(fl flavor, offsetGTIDs, server string) (gmysql.GTIDSet, error) {
	own := c.filterGTIDs(offsetGTIDs)
	if fl == flavorMariaDB {
		m := mariaDomains(own)
		for d, g := range mariaDomains(server) {
			if _, ok := m[d]; !ok && !c.gtidSourceIncluded(gtidSource(g)) {
				m[d] = g
			}
		}
		return gmysql.ParseMariadbGTIDSet(joinDomains(m))
	}
	set := own
	for _, g := range strings.Split(server, ",") {
		if g = strings.TrimSpace(g); g != "" && !c.gtidSourceIncluded(gtidSource(g)) {
			set += "," + g
		}
	}
	return gmysql.ParseMysqlGTIDSet(strings.Trim(set, ","))
}

// gtidsAvailable reports whether the server can still stream every
// transaction after the GTID set gtids: MariaDB starts a GTID dump at the
// binlog file whose Gtid_list the set covers, so the earliest file's
// Gtid_list must not be ahead of the set in any domain of an included
// source; MySQL's gtid_purged must be contained in the set (plus the
// excluded sources), as Debezium's log position validation.
func (t *Task) gtidsAvailable(gtids string) (bool, error) {
	if t.flavor != flavorMariaDB {
		r, err := t.conn.Execute("SELECT @@gtid_purged")
		if err != nil {
			return false, fmt.Errorf("mysql: read gtid_purged: %w", err)
		}
		purged, _ := r.GetString(0, 0)
		set, err := t.restartGTIDSet(gtids)
		if err != nil {
			return false, err
		}
		p, err := gmysql.ParseMysqlGTIDSet(purged)
		if err != nil {
			return false, fmt.Errorf("mysql: gtid_purged %q: %w", purged, err)
		}
		return set.Contain(p), nil
	}
	r, err := t.conn.Execute("SHOW BINARY LOGS")
	if err != nil {
		return false, fmt.Errorf("mysql: SHOW BINARY LOGS (needs REPLICATION CLIENT): %w", err)
	}
	if len(r.Values) == 0 {
		return false, nil
	}
	first, _ := r.GetString(0, 0)
	ev, err := t.conn.Execute("SHOW BINLOG EVENTS IN '" + strings.ReplaceAll(first, "'", "''") + "' LIMIT 4")
	if err != nil {
		return false, fmt.Errorf("mysql: SHOW BINLOG EVENTS IN %s: %w", first, err)
	}
	var list string
	for i := range ev.Values {
		if typ, _ := ev.GetString(i, 2); typ == "Gtid_list" {
			list, _ = ev.GetString(i, 5)
		}
	}
	have := mariaDomains(t.cfg.filterGTIDs(gtids))
	for d, g := range mariaDomains(strings.Trim(list, "[]")) {
		if !t.cfg.gtidSourceIncluded(gtidSource(g)) {
			continue
		}
		h, ok := have[d]
		if !ok || gtidSeq(h) < gtidSeq(g) {
			return false, nil
		}
	}
	return true, nil
}

func gtidSeq(g string) uint64 {
	parts := strings.SplitN(g, "-", 3)
	if len(parts) != 3 {
		return 0
	}
	n, _ := strconv.ParseUint(parts[2], 10, 64)
	return n
}
