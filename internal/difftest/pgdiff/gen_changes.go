package pgdiff

import (
	"fmt"
	"strings"
)

// changes generates the statements run while both connectors stream:
// single-statement transactions, multi-table transactions, primary key
// changes, savepoints rolled back, rolled-back transactions, TRUNCATE,
// ADD/DROP/RENAME COLUMN, tables created (and renamed) mid-stream, and a
// large transaction among small ones.
func (g *gen) changes() {
	r := g.r
	n := 8 + r.Intn(16)
	for i := 0; i < n; i++ {
		// later additions, drawn from x: two-phase commit, rows moved
		// between partitions
		if chance(g.x, 0.05) {
			g.emit(g.twoPhase()...)
		}
		if chance(g.x, 0.25) {
			g.fromX(func() { g.emit(g.movePartition()) })
		}
		switch k := r.Intn(100); {
		case k < 30:
			g.emit(g.dml())
		case k < 50:
			g.emit(g.txn(2 + r.Intn(4))...)
		case k < 56:
			g.emit(g.savepoint()...)
		case k < 59:
			g.emit("BEGIN;", g.dml(), "ROLLBACK;")
		case k < 64:
			g.emit(g.truncate())
		case k < 76:
			g.emit(g.alter()...)
		case k < 84:
			t := g.newTable()
			g.emit(g.createTable(t)...)
			g.tables = append(g.tables, t)
			g.emit(g.insert(t, 1+r.Intn(3)))
			if chance(r, 0.08) {
				// Debezium reads keys and nullability from the catalog by the
				// name of the Relation message it decodes: the rename must
				// not overtake it (or Debezium finds no table, an accident
				// of timing; connectd reads by OID then).
				g.emit("SELECT pg_sleep(1);", g.renameTable(t))
				g.emit(g.insert(t, 1))
			}
		case k < 88:
			t := pick(r, g.tables)
			g.emit("BEGIN;", g.insert(t, 50+r.Intn(150)), g.dml(), "COMMIT;")
		default:
			g.emit(g.pkChange())
		}
	}
	// a last change so that every stream ends with an ordinary event
	g.emit(g.insert(pick(r, g.tables), 1))
}

func (g *gen) emit(s ...string) {
	for _, x := range s {
		if x != "" {
			g.w.Changes = append(g.w.Changes, x)
		}
	}
}

// dml is one INSERT, UPDATE or DELETE on a random table.
func (g *gen) dml() string {
	r := g.r
	t := pick(r, g.tables)
	if !t.mutable() || len(t.rows) == 0 || chance(r, 0.35) {
		return g.insert(t, 1+r.Intn(3))
	}
	if chance(r, 0.7) {
		return g.update(t)
	}
	i := r.Intn(len(t.rows))
	w := t.rows[i]
	t.rows = append(t.rows[:i], t.rows[i+1:]...)
	return "DELETE FROM " + t.ref() + " WHERE " + w + ";"
}

func (g *gen) update(t *table) string {
	r := g.r
	var sets []string
	for _, c := range t.cols {
		if isKey(t, c) || c == t.rowCol || c.ident {
			continue
		}
		if c == t.toastCol {
			if chance(r, 0.2) {
				sets = append(sets, quote(c.name)+" = "+g.toastValue())
			}
			continue
		}
		if chance(r, 0.4) {
			sets = append(sets, quote(c.name)+" = "+g.value(c))
		}
	}
	if len(sets) == 0 {
		// no column chosen: touch the row number / first column
		c := t.cols[len(t.cols)-1]
		if isKey(t, c) || c == t.rowCol || c.ident || c == t.toastCol {
			return g.insert(t, 1)
		}
		sets = append(sets, quote(c.name)+" = "+g.value(c))
	}
	return "UPDATE " + t.ref() + " SET " + strings.Join(sets, ", ") + " WHERE " + pick(r, t.rows) + ";"
}

// pkChange updates a row's primary key (Debezium: delete + tombstone +
// create, with the __debezium.oldkey/newkey headers).
func (g *gen) pkChange() string {
	var cands []*table
	for _, t := range g.tables {
		if len(t.key) > 0 && t.mutable() && len(t.rows) > 0 {
			cands = append(cands, t)
		}
	}
	if len(cands) == 0 {
		return g.dml()
	}
	t := pick(g.r, cands)
	i := g.r.Intn(len(t.rows))
	num := t.next
	t.next++
	var sets, where []string
	for _, k := range t.key {
		v := g.keyLiteral(k, num)
		sets = append(sets, quote(k.name)+" = "+v)
		where = append(where, quote(k.name)+" = "+v)
	}
	old := t.rows[i]
	t.rows[i] = strings.Join(where, " AND ")
	return "UPDATE " + t.ref() + " SET " + strings.Join(sets, ", ") + " WHERE " + old + ";"
}

func (g *gen) txn(n int) []string {
	out := []string{"BEGIN;"}
	for i := 0; i < n; i++ {
		if chance(g.r, 0.15) {
			out = append(out, g.pkChange())
		} else {
			out = append(out, g.dml())
		}
	}
	return append(out, "COMMIT;")
}

// savepoint: changes after a savepoint are rolled back, the rest commits.
func (g *gen) savepoint() []string {
	out := []string{"BEGIN;", g.dml(), "SAVEPOINT sp1;"}
	saved := map[*table][]string{}
	for _, t := range g.tables {
		saved[t] = append([]string(nil), t.rows...)
	}
	for i := 0; i < 1+g.r.Intn(3); i++ {
		out = append(out, g.dml())
	}
	for t, rows := range saved {
		t.rows = rows
	}
	out = append(out, "ROLLBACK TO SAVEPOINT sp1;", g.dml(), "COMMIT;")
	return out
}

func (g *gen) truncate() string {
	t := pick(g.r, g.tables)
	ts := []*table{t}
	if u := pick(g.r, g.tables); u != t && chance(g.r, 0.3) {
		ts = append(ts, u)
	}
	var refs []string
	for _, x := range ts {
		x.rows = nil
		refs = append(refs, x.ref())
	}
	return "TRUNCATE " + strings.Join(refs, ", ") + ";"
}

// alter adds, drops or renames a column, then inserts a row with the new shape.
func (g *gen) alter() []string {
	r := g.r
	t := pick(r, g.tables)
	used := map[string]bool{}
	for _, c := range t.cols {
		used[c.name] = true
	}
	var stmt string
	var plain []int
	for i, c := range t.cols {
		if !isKey(t, c) && c != t.rowCol && c != t.toastCol && !c.ident {
			plain = append(plain, i)
		}
	}
	// ALTER COLUMN TYPE (drawn from g.x: r's draws stay as they were): a
	// smallint or integer column (or array) widened to bigint
	if chance(g.x, 0.2) {
		var widen []*column
		for _, i := range plain {
			if c := t.cols[i]; c.typ == &typeMatrix[0] || c.typ == &typeMatrix[1] {
				widen = append(widen, c)
			}
		}
		if len(widen) > 0 {
			c := widen[g.x.Intn(len(widen))]
			c.typ = &typeMatrix[2]
			stmt = "ALTER TABLE " + t.ref() + " ALTER COLUMN " + quote(c.name) + " TYPE " + g.typeSQL(c) + ";"
			key := t.schema + "." + t.name + "." + c.name
			g.w.Columns[key] += " (type changed to " + g.typeSQL(c) + ")"
			return []string{"SELECT pg_sleep(1);", stmt, g.insert(t, 1)}
		}
	}
	switch k := r.Intn(3); {
	case k == 0 || len(plain) < 2:
		c := g.newColumn(used, false)
		if c.notNull && c.def == "" {
			c.notNull = false
		}
		d := quote(c.name) + " " + g.typeSQL(c)
		if c.notNull {
			d += " NOT NULL"
		}
		if c.def != "" {
			d += " DEFAULT " + c.def
		}
		stmt = "ALTER TABLE " + t.ref() + " ADD COLUMN " + d + ";"
		g.w.Columns[t.schema+"."+t.name+"."+c.name] = d + " (added)"
		t.cols = append(t.cols, c)
	case k == 1:
		i := pick(r, plain)
		stmt = "ALTER TABLE " + t.ref() + " DROP COLUMN " + quote(t.cols[i].name) + ";"
		t.cols = append(t.cols[:i:i], t.cols[i+1:]...)
	default:
		c := t.cols[pick(r, plain)]
		n := uniqueName(r, columnNames, used, "r")
		stmt = "ALTER TABLE " + t.ref() + " RENAME COLUMN " + quote(c.name) + " TO " + quote(n) + ";"
		g.w.Columns[t.schema+"."+t.name+"."+n] = g.w.Columns[t.schema+"."+t.name+"."+c.name] + " (renamed)"
		c.name = n
	}
	if !strings.Contains(stmt, " ADD COLUMN ") {
		// Debezium reads nullability and defaults from the catalog by column
		// name when it decodes a Relation message: a DROP/RENAME that
		// overtakes the decoding leaves it a column it cannot find (optional,
		// no default), an accident of timing.
		return []string{"SELECT pg_sleep(1);", stmt, g.insert(t, 1)}
	}
	return []string{stmt, g.insert(t, 1)}
}

func (g *gen) renameTable(t *table) string {
	old := t.ref()
	n := fmt.Sprintf("%s renamed", t.name)
	for _, c := range t.cols {
		g.w.Columns[t.schema+"."+n+"."+c.name] = g.w.Columns[t.schema+"."+t.name+"."+c.name]
	}
	g.used[t.schema+"."+n] = true
	t.name = n
	return "ALTER TABLE " + old + " RENAME TO " + quote(n) + ";"
}

// twoPhase is a prepared transaction (PREPARE TRANSACTION), an autocommit
// insert while it is prepared (a new row: nothing it waits for), then
// COMMIT PREPARED or ROLLBACK PREPARED. pgoutput without two_phase decodes
// it at COMMIT PREPARED. Drawn from x.
func (g *gen) twoPhase() []string {
	var out []string
	g.fromX(func() {
		g.gids++
		gid := fmt.Sprintf("'gid %d ü'", g.gids)
		saved := map[*table][]string{}
		for _, t := range g.tables {
			saved[t] = append([]string(nil), t.rows...)
		}
		out = append(out, "BEGIN;")
		for i := 0; i < 1+g.r.Intn(3); i++ {
			out = append(out, g.dml())
		}
		out = append(out, "PREPARE TRANSACTION "+gid+";")
		commit := chance(g.r, 0.7)
		if !commit {
			for t, rows := range saved {
				t.rows = rows
			}
		}
		if chance(g.r, 0.5) {
			out = append(out, g.insert(pick(g.r, g.tables), 1))
		}
		if commit {
			out = append(out, "COMMIT PREPARED "+gid+";")
		} else {
			out = append(out, "ROLLBACK PREPARED "+gid+";")
		}
	})
	return out
}

// movePartition updates a row of a partitioned table so that its
// partition key jumps (into another partition: RANGE's DEFAULT, or likely
// another HASH partition). "" when there is none.
func (g *gen) movePartition() string {
	var cands []*table
	for _, t := range g.tables {
		if t.partCol != nil && t.mutable() && len(t.rows) > 0 {
			cands = append(cands, t)
		}
	}
	if len(cands) == 0 {
		return ""
	}
	t := pick(g.r, cands)
	i := g.r.Intn(len(t.rows))
	num := t.next + 40
	t.next = num + 1
	cols := t.key
	if len(cols) == 0 {
		cols = []*column{t.rowCol}
	}
	var sets, where []string
	for _, k := range cols {
		v := g.keyLiteral(k, num)
		sets = append(sets, quote(k.name)+" = "+v)
		where = append(where, quote(k.name)+" = "+v)
	}
	old := t.rows[i]
	t.rows[i] = strings.Join(where, " AND ")
	return "UPDATE " + t.ref() + " SET " + strings.Join(sets, ", ") + " WHERE " + old + ";"
}
