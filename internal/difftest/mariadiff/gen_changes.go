package mariadiff

import (
	"fmt"
	"strings"
)

// changes generates the statements run while both connectors stream:
// single-statement and multi-statement transactions (several tables,
// savepoints, rollbacks, multi-row UPDATE/DELETE, primary key changes),
// DDL (ADD/DROP/MODIFY/CHANGE/RENAME COLUMN, RENAME TABLE, CREATE/DROP
// TABLE, CREATE TABLE … AS SELECT, TRUNCATE, indexes), statements that
// are not about tables (procedures, functions, triggers, events, views,
// users and grants, REPAIR/OPTIMIZE/ANALYZE TABLE) and GTID domains.
func (g *gen) changes() {
	r := g.r
	g.emit("SET SESSION sql_mode = DEFAULT;")
	n := 8 + r.Intn(16)
	for i := 0; i < n; i++ {
		switch k := r.Intn(100); {
		case k < 25:
			g.emit(g.dml())
		case k < 40:
			g.emit(g.txn(2 + r.Intn(4))...)
		case k < 44:
			g.emit(g.savepoint()...)
		case k < 46:
			g.emit("BEGIN;", g.dml(), "ROLLBACK;")
		case k < 49:
			g.emit(g.truncate())
		case k < 61:
			g.emit(g.alter()...)
		case k < 67:
			t := g.newTable()
			g.emit(g.createTable(t))
			g.tables = append(g.tables, t)
			g.emit(g.insert(t, 1+r.Intn(3)))
		case k < 69:
			g.emit(g.renameTable()...)
		case k < 71:
			g.emit(g.dropTable()...)
		case k < 83:
			g.emit(g.notTable()...)
		case k < 86:
			g.emit(g.domain())
		case k < 89:
			t := pick(r, g.tables)
			g.emit("BEGIN;", g.insert(t, 20+r.Intn(60)), g.dml(), "COMMIT;")
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
	if len(t.rows) == 0 || chance(r, 0.35) {
		return g.insert(t, 1+r.Intn(3))
	}
	if chance(r, 0.7) {
		return g.update(t)
	}
	i := r.Intn(len(t.rows))
	w := t.rows[i]
	t.rows = append(t.rows[:i], t.rows[i+1:]...)
	if len(t.rows) > 1 && chance(r, 0.2) {
		// a multi-row delete (one rows event with several rows)
		j := r.Intn(len(t.rows))
		w2 := t.rows[j]
		t.rows = append(t.rows[:j], t.rows[j+1:]...)
		return "DELETE FROM " + t.ref() + " WHERE (" + w + ") OR (" + w2 + ");"
	}
	return "DELETE FROM " + t.ref() + " WHERE " + w + ";"
}

func (g *gen) plainCols(t *table) []*column {
	var out []*column
	for _, c := range t.cols {
		if !isKey(t, c) && c != t.rowCol {
			out = append(out, c)
		}
	}
	return out
}

func (g *gen) update(t *table) string {
	r := g.r
	var sets []string
	for _, c := range g.plainCols(t) {
		if chance(r, 0.4) {
			sets = append(sets, quote(c.name)+" = "+g.value(c))
		}
	}
	if len(sets) == 0 {
		cs := g.plainCols(t)
		if len(cs) == 0 {
			return g.insert(t, 1)
		}
		c := pick(r, cs)
		sets = append(sets, quote(c.name)+" = "+g.value(c))
	}
	where := pick(r, t.rows)
	if len(t.rows) > 1 && chance(r, 0.25) {
		where = "(" + where + ") OR (" + pick(r, t.rows) + ")"
	}
	return "UPDATE " + t.ref() + " SET " + strings.Join(sets, ", ") + " WHERE " + where + ";"
}

// pkChange updates a row's primary key (Debezium: delete + tombstone +
// create, with the __debezium.oldkey/newkey headers).
func (g *gen) pkChange() string {
	var cands []*table
	for _, t := range g.tables {
		if len(t.key) > 0 && len(t.rows) > 0 {
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
	out := []string{pick(g.r, []string{"BEGIN;", "START TRANSACTION;"})}
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
	next := map[*table]int{}
	for _, t := range g.tables {
		saved[t] = append([]string(nil), t.rows...)
		next[t] = t.next
	}
	for i := 0; i < 1+g.r.Intn(3); i++ {
		out = append(out, g.dml())
	}
	for t, rows := range saved {
		t.rows = rows
		// keep next: an AUTO_INCREMENT or a reused key number must not clash
		_ = next
	}
	out = append(out, "ROLLBACK TO SAVEPOINT sp1;", g.dml(), "COMMIT;")
	return out
}

func (g *gen) truncate() string {
	t := pick(g.r, g.tables)
	t.rows = nil
	return "TRUNCATE TABLE " + t.ref() + ";"
}

// alter adds, drops, modifies or renames a column, then inserts a row with
// the new shape.
func (g *gen) alter() []string {
	r := g.r
	t := pick(r, g.tables)
	used := map[string]bool{}
	for _, c := range t.cols {
		used[strings.ToLower(c.name)] = true
	}
	plain := g.plainCols(t)
	id := g.w.DB + "." + t.name + "."
	var stmt string
	switch k := r.Intn(5); {
	case k == 0 || len(plain) < 2:
		c := g.newColumn(t, used, false)
		if c.notNull && c.def == "" {
			c.notNull = false
		}
		d := g.colDef(c)
		pos := ""
		switch r.Intn(4) {
		case 0:
			pos = " FIRST"
			t.cols = append([]*column{c}, t.cols...)
		case 1:
			after := pick(r, t.cols)
			pos = " AFTER " + quote(after.name)
			for i, x := range t.cols {
				if x == after {
					t.cols = append(t.cols[:i+1], append([]*column{c}, t.cols[i+1:]...)...)
					break
				}
			}
		default:
			t.cols = append(t.cols, c)
		}
		stmt = "ALTER TABLE " + t.ref() + " ADD COLUMN " + d + pos + ";"
		g.w.Columns[id+c.name] = d + " (added)"
	case k == 1:
		c := pick(r, plain)
		stmt = "ALTER TABLE " + t.ref() + " DROP COLUMN " + quote(c.name) + ";"
		for i, x := range t.cols {
			if x == c {
				t.cols = append(t.cols[:i:i], t.cols[i+1:]...)
				break
			}
		}
	case k == 2:
		// MODIFY to a wider type (values stay valid)
		var cands []*column
		for _, c := range plain {
			if c.typ.grow != "" {
				cands = append(cands, c)
			}
		}
		if len(cands) == 0 {
			return g.alterOther(t)
		}
		c := pick(r, cands)
		nt := &colType{sql: c.typ.grow, vals: c.typ.vals, text: c.typ.text, noDefault: c.typ.noDefault}
		if strings.HasPrefix(nt.sql, "ENUM") || strings.HasPrefix(nt.sql, "DECIMAL") {
			nt.defs = c.typ.defs
		}
		c.typ = nt
		d := g.colDef(c)
		stmt = "ALTER TABLE " + t.ref() + " MODIFY COLUMN " + d + ";"
		g.w.Columns[id+c.name] = d + " (modified)"
	case k == 3:
		c := pick(r, plain)
		n := uniqueName(r, columnNames, used, "r")
		stmt = "ALTER TABLE " + t.ref() + " RENAME COLUMN " + quote(c.name) + " TO " + quote(n) + ";"
		g.w.Columns[id+n] = g.w.Columns[id+c.name] + " (renamed)"
		c.name = n
	default:
		// CHANGE: rename and redefine at once
		c := pick(r, plain)
		old := c.name
		c.name = uniqueName(r, columnNames, used, "r")
		d := g.colDef(c)
		stmt = "ALTER TABLE " + t.ref() + " CHANGE COLUMN " + quote(old) + " " + d + ";"
		g.w.Columns[id+c.name] = d + " (changed from " + old + ")"
	}
	return []string{stmt, g.insert(t, 1)}
}

// alterOther: table DDL that changes no column (index, comment, engine options).
func (g *gen) alterOther(t *table) []string {
	g.n++
	switch g.r.Intn(3) {
	case 0:
		col := t.cols[0]
		if t.rowCol != nil {
			col = t.rowCol
		}
		if col.typ.noDefault {
			return []string{"ALTER TABLE " + t.ref() + " COMMENT = 'tbl " + fmt.Sprint(g.n) + "';"}
		}
		return []string{fmt.Sprintf("CREATE INDEX `ix_%d` ON %s (%s);", g.n, t.ref(), quote(col.name))}
	case 1:
		return []string{"ALTER TABLE " + t.ref() + " COMMENT = 'tbl " + fmt.Sprint(g.n) + "';"}
	}
	return []string{"ALTER TABLE " + t.ref() + " ENGINE = InnoDB;"}
}

func (g *gen) renameTable() []string {
	t := pick(g.r, g.tables)
	old := t.name
	n := old + " renamed"
	for g.used[strings.ToLower(n)] {
		n += "2"
	}
	g.used[strings.ToLower(n)] = true
	for _, c := range t.cols {
		g.w.Columns[g.w.DB+"."+n+"."+c.name] = g.w.Columns[g.w.DB+"."+old+"."+c.name]
	}
	t.name = n
	stmt := "RENAME TABLE " + quote(old) + " TO " + quote(n) + ";"
	if g.r.Intn(2) == 0 {
		stmt = "ALTER TABLE " + quote(old) + " RENAME TO " + quote(n) + ";"
	}
	return []string{stmt, g.insert(t, 1)}
}

func (g *gen) dropTable() []string {
	if len(g.tables) < 2 {
		return nil
	}
	i := g.r.Intn(len(g.tables))
	t := g.tables[i]
	g.tables = append(g.tables[:i:i], g.tables[i+1:]...)
	return []string{"DROP TABLE " + t.ref() + ";"}
}

// notTable is a statement (or a few) that changes no captured table's
// columns: routines, triggers, events, views, accounts, table
// maintenance, CREATE TABLE … AS SELECT of a table that is then left alone.
func (g *gen) notTable() []string {
	r := g.r
	g.n++
	n := g.n
	t := pick(r, g.tables)
	switch r.Intn(12) {
	case 0:
		return []string{"DELIMITER $$",
			fmt.Sprintf("CREATE PROCEDURE `p_%d`(IN x INT, OUT y VARCHAR(20))\nBEGIN\n  DECLARE z INT DEFAULT 0;\n  SET z = x + 1;\n  IF z > 1 THEN SET y = 'big'; ELSE SET y = 'small'; END IF;\nEND$$", n),
			"DELIMITER ;",
			fmt.Sprintf("CALL `p_%d`(1, @out_%d);", n, n)}
	case 1:
		return []string{fmt.Sprintf("CREATE FUNCTION `f_%d`(x INT) RETURNS INT DETERMINISTIC RETURN x * 2;", n),
			fmt.Sprintf("DROP FUNCTION `f_%d`;", n)}
	case 2:
		return []string{"DELIMITER //",
			fmt.Sprintf("CREATE TRIGGER `tr_%d` BEFORE UPDATE ON %s FOR EACH ROW\nBEGIN\n  SET @tr_%d = 1;\nEND//", n, t.ref(), n),
			"DELIMITER ;"}
	case 3:
		return []string{fmt.Sprintf("CREATE TRIGGER `tr_%d` AFTER INSERT ON %s FOR EACH ROW SET @tr = 1;", n, t.ref()),
			fmt.Sprintf("DROP TRIGGER `tr_%d`;", n)}
	case 4:
		return []string{fmt.Sprintf("CREATE EVENT `ev_%d` ON SCHEDULE EVERY 1 DAY ON COMPLETION PRESERVE DISABLE DO UPDATE %s SET %s = %s WHERE 1 = 0;", n, t.ref(), quote(t.cols[0].name), quote(t.cols[0].name)),
			fmt.Sprintf("ALTER EVENT `ev_%d` DISABLE;", n)}
	case 5:
		return []string{fmt.Sprintf("CREATE EVENT `ev_%d` ON SCHEDULE AT '2030-01-01 00:00:00' DO SELECT 1;", n),
			fmt.Sprintf("DROP EVENT `ev_%d`;", n)}
	case 6:
		return []string{fmt.Sprintf("CREATE VIEW `v_%d` AS SELECT * FROM %s;", n, t.ref()),
			fmt.Sprintf("CREATE OR REPLACE VIEW `v_%d` AS SELECT 1 AS `one`;", n)}
	case 7:
		u := fmt.Sprintf("'dt_%d_%d'@'localhost'", g.w.Seed, n)
		g.w.Users = append(g.w.Users, u)
		return []string{"CREATE USER " + u + " IDENTIFIED BY 'pw';",
			"GRANT SELECT, INSERT ON " + quote(g.w.DB) + ".* TO " + u + ";",
			"REVOKE INSERT ON " + quote(g.w.DB) + ".* FROM " + u + ";",
			"DROP USER " + u + ";"}
	case 8:
		return []string{pick(r, []string{"REPAIR", "OPTIMIZE", "ANALYZE"}) + " TABLE " + t.ref() + ";"}
	case 9:
		return g.alterOther(t)
	case 10:
		// CREATE TABLE … AS SELECT: a captured table created with rows
		name := fmt.Sprintf("ctas_%d", n)
		g.used[name] = true
		return []string{"CREATE TABLE " + quote(name) + " AS SELECT * FROM " + t.ref() + ";"}
	}
	return []string{fmt.Sprintf("CREATE TABLE `like_%d` LIKE %s;", n, t.ref()),
		fmt.Sprintf("DROP TABLE `like_%d`;", n)}
}

// domain switches the session's GTID domain (transactions after it carry
// domain-N GTIDs; offsets then list several domains).
func (g *gen) domain() string {
	return fmt.Sprintf("SET SESSION gtid_domain_id = %d;", pick(g.r, []int{0, 1, 2, 7}))
}
