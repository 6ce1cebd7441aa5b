package mysql

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestGTIDAfterDomainSwitch: transactions written after SET SESSION
// gtid_domain_id = N carry their own GTID (the GTID event before them in
// SHOW BINLOG EVENTS), and the offset's gtids after each one hold exactly
// the transactions completed so far, as Debezium.
func TestGTIDAfterDomainSwitch(t *testing.T) {
	m, cfg := modesSetup(t)
	ctx := context.Background()
	task := startTask(t, cfg, nil)
	pollData(t, task, 2)
	if err := m.Exec(ctx, "inventory", "SET SESSION gtid_domain_id = 1; INSERT INTO t VALUES (3, 3); BEGIN; INSERT INTO t VALUES (4, 4); INSERT INTO t VALUES (5, 5); COMMIT; SET SESSION gtid_domain_id = 7; INSERT INTO t VALUES (6, 6); SET SESSION gtid_domain_id = 0; INSERT INTO t VALUES (7, 7);"); err != nil {
		t.Fatal(err)
	}
	rs := pollData(t, task, 5)
	c, err := m.Connect(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var events []string
	logs, _ := c.Execute("SHOW BINARY LOGS")
	for i := range logs.Values {
		f, _ := logs.GetString(i, 0)
		r, _ := c.Execute("SHOW BINLOG EVENTS IN '" + f + "'")
		for j := range r.Values {
			info, _ := r.GetString(j, 5)
			if strings.HasPrefix(info, "BEGIN GTID") || strings.Contains(info, "INSERT") || strings.HasPrefix(info, "COMMIT") {
				events = append(events, info)
			}
		}
	}
	t.Logf("binlog:\n%s", strings.Join(events, "\n"))
	for _, r := range rs {
		t.Logf("id %v gtid %s offset %v", idOf(r), srcGTID(r), r.SourceOffset)
		f, pos := gtidEventPos(t, m, srcGTID(r))
		if r.SourceOffset[offFile] != f || r.SourceOffset[offPos] != pos {
			t.Errorf("id %v: gtid %s offset %s:%v, its GTID event is at %s:%d", idOf(r), srcGTID(r), r.SourceOffset[offFile], r.SourceOffset[offPos], f, pos)
		}
	}
}

// TestGTIDNewDomainReadAhead: go-mysql's BinlogSyncer keeps the GTID of
// the first transaction of a domain it has not seen (resuming by GTID) by
// pointer and moves its sequence number on with the next transaction of
// that domain, while the event still waits in the read-ahead queue. Two
// transactions in a new domain written while the task is down are read at
// once after the restart: each must keep its own GTID.
func TestGTIDNewDomainReadAhead(t *testing.T) {
	m, cfg := modesSetup(t)
	ctx := context.Background()
	task := startTask(t, cfg, nil)
	pollData(t, task, 2)
	if err := m.Exec(ctx, "inventory", "INSERT INTO t VALUES (3, 3);"); err != nil {
		t.Fatal(err)
	}
	off := pollData(t, task, 1)[0].SourceOffset
	task.Stop()
	var sql strings.Builder
	for i := 4; i < 40; i++ {
		fmt.Fprintf(&sql, "SET SESSION gtid_domain_id = %d; INSERT INTO t VALUES (%d, %d);", 1+i%3, i, i)
	}
	if err := m.Exec(ctx, "inventory", sql.String()); err != nil {
		t.Fatal(err)
	}
	resumed := startTask(t, cfg, off)
	for _, r := range pollData(t, resumed, 36) {
		f, pos := gtidEventPos(t, m, srcGTID(r))
		if r.SourceOffset[offFile] != f || r.SourceOffset[offPos] != pos {
			t.Errorf("id %v: gtid %s, offset %s:%v, but that GTID's event is at %s:%d", idOf(r), srcGTID(r), r.SourceOffset[offFile], r.SourceOffset[offPos], f, pos)
		}
	}
}
