package mariadiff

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
)

// Server is the server settings a workload runs under (SET GLOBAL before
// its database is created, so the database's default charset follows).
type Server struct {
	Charset  string // character_set_server: latin1 (MariaDB's own default) or utf8mb4
	TimeZone string // time_zone: an offset, not always UTC
}

// Workload is one seed's generated MariaDB history: the server settings,
// the schema and seed rows loaded before the connectors start (captured by
// their snapshots), the changes applied while both stream (a mariadb
// client script: DELIMITER lines for routines), and the connector keys.
type Workload struct {
	Seed    int64
	DB      string // the database (database.include.list)
	Server  Server
	Setup   []string
	Changes []string
	Config  map[string]string // connector keys besides connection and history
	// Columns describes every column the workload created, by
	// "db.table.column" (names at creation; renames add the new name).
	Columns map[string]string
	// Users are the accounts the changes create (dropped after the run).
	Users []string
}

// SetupSQL and ChangesSQL are the scripts, one statement per line.
func (w *Workload) SetupSQL() string   { return strings.Join(w.Setup, "\n") + "\n" }
func (w *Workload) ChangesSQL() string { return strings.Join(w.Changes, "\n") + "\n" }

// ConfigText is the server settings and connector keys as sorted lines.
func (w *Workload) ConfigText() string {
	keys := make([]string, 0, len(w.Config))
	for k := range w.Config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "# server: character_set_server=%s time_zone=%s\n", w.Server.Charset, w.Server.TimeZone)
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, w.Config[k])
	}
	return b.String()
}

type column struct {
	name    string
	typ     *colType
	notNull bool
	def     string // DEFAULT expression or ""
	autoInc bool
	latin1  bool // a character column in the table's latin1 default charset
}

type table struct {
	name   string
	cols   []*column
	key    []*column // primary key columns (none: no primary key)
	rowCol *column   // for tables without a key: a NOT NULL integer column whose values identify rows
	rows   []string  // WHERE clauses of the rows that exist
	next   int       // next row number
	unique bool      // a UNIQUE index on rowCol (keyless tables)
	latin1 bool      // the table's default charset is latin1 (its own option or the database's)
	opts   string    // table options of CREATE TABLE
}

func (t *table) ref() string { return quote(t.name) }

type gen struct {
	r      *rand.Rand
	w      *Workload
	tables []*table
	used   map[string]bool // table names taken (case-insensitively: lower_case_table_names=0 but Debezium's filters are not)
	n      int             // counter for routine/view/user names
}

// Generate returns the workload of seed; the same seed gives the same workload.
func Generate(seed int64) *Workload {
	g := &gen{r: rand.New(rand.NewSource(seed)), w: &Workload{Seed: seed, Config: map[string]string{}, Columns: map[string]string{}}, used: map[string]bool{}}
	r := g.r
	g.w.DB = fmt.Sprintf(pick(r, []string{"difftest_%d", "difftest_%d", "DiffTest_%d", "diff-test %d", "dïff_%d"}), seed)
	g.w.Server.Charset = pick(r, []string{"latin1", "utf8mb4"})
	g.w.Server.TimeZone = pick(r, []string{"+00:00", "+05:30", "-08:00", "+13:00", "-03:30"})
	g.w.Setup = append(g.w.Setup, "SET SESSION sql_mode = DEFAULT;")
	n := 2 + r.Intn(3)
	for i := 0; i < n; i++ {
		t := g.newTable()
		g.tables = append(g.tables, t)
		g.w.Setup = append(g.w.Setup, g.createTable(t))
		for j := 0; j < 1+r.Intn(3); j++ {
			g.w.Setup = append(g.w.Setup, g.insert(t, 1+r.Intn(3)))
		}
	}
	g.config()
	g.changes()
	return g.w
}

func (g *gen) newColumn(t *table, used map[string]bool, key bool) *column {
	r := g.r
	c := &column{}
	for {
		c.typ = &typeMatrix[r.Intn(len(typeMatrix))]
		if !key || c.typ.key {
			break
		}
	}
	c.latin1 = t.latin1 && c.typ.text && !strings.Contains(c.typ.sql, "CHARACTER SET")
	if key {
		c.name = uniqueName(r, keyNames, used, "k")
		c.notNull = true
		return c
	}
	c.name = uniqueName(r, columnNames, used, "c")
	if strings.Contains(c.typ.sql, "NULL") {
		return c
	}
	c.notNull = chance(r, 0.2)
	if !c.typ.noDefault && chance(r, 0.35) {
		if len(c.typ.defs) > 0 && chance(r, 0.5) {
			c.def = pick(r, c.typ.defs)
		} else {
			c.def = pick(r, g.vals(c))
		}
		if c.def == "NULL" {
			c.notNull = false
		}
	}
	return c
}

func (g *gen) newTable() *table {
	r := g.r
	t := &table{next: 1}
	for {
		t.name = pick(r, tableNames)
		if chance(r, 0.2) || g.used[strings.ToLower(t.name)] {
			t.name = fmt.Sprintf("%s_%d", t.name, len(g.tables)+1)
		}
		if !g.used[strings.ToLower(t.name)] {
			break
		}
	}
	g.used[strings.ToLower(t.name)] = true
	switch g.r.Intn(4) {
	case 0:
		t.opts, t.latin1 = " DEFAULT CHARSET=latin1", true
	case 1:
		t.opts = " DEFAULT CHARSET=utf8mb4"
	case 2:
		t.opts, t.latin1 = " ENGINE=InnoDB", g.w.Server.Charset == "latin1"
	default:
		t.latin1 = g.w.Server.Charset == "latin1"
	}
	used := map[string]bool{}
	switch k := r.Intn(10); {
	case k < 2: // no key
	case k < 7:
		t.key = []*column{g.newColumn(t, used, true)}
		if chance(r, 0.2) {
			t.key[0].typ = &typeMatrix[8] // INT
			t.key[0].autoInc = true
		}
	default:
		t.key = []*column{g.newColumn(t, used, true), g.newColumn(t, used, true)}
	}
	t.cols = append(t.cols, t.key...)
	if len(t.key) == 0 {
		t.rowCol = &column{name: uniqueName(r, []string{"n", "row no", "N"}, used, "n"), typ: &typeMatrix[8], notNull: true}
		t.cols = append(t.cols, t.rowCol)
		t.unique = chance(r, 0.3)
	}
	for i := 0; i < 2+r.Intn(6); i++ {
		c := g.newColumn(t, used, false)
		// a column list position for the key need not be first
		t.cols = append(t.cols, c)
	}
	if chance(r, 0.3) {
		// the key columns not first
		r.Shuffle(len(t.cols), func(i, j int) { t.cols[i], t.cols[j] = t.cols[j], t.cols[i] })
	}
	return t
}

func (g *gen) colDef(c *column) string {
	d := quote(c.name) + " " + c.typ.sql
	if c.notNull {
		d += " NOT NULL"
	}
	if c.autoInc {
		d += " AUTO_INCREMENT"
	}
	if c.def != "" {
		d += " DEFAULT " + c.def
	}
	if chance(g.r, 0.1) {
		d += pick(g.r, []string{" COMMENT 'c''mt'", " COMMENT 'a note'", " COMMENT 'ünï'"})
	}
	return d
}

func (g *gen) createTable(t *table) string {
	var defs []string
	for _, c := range t.cols {
		d := g.colDef(c)
		defs = append(defs, d)
		g.w.Columns[g.w.DB+"."+t.name+"."+c.name] = d
	}
	if len(t.key) > 0 {
		var ks []string
		for _, k := range t.key {
			ks = append(ks, quote(k.name))
		}
		defs = append(defs, "PRIMARY KEY ("+strings.Join(ks, ", ")+")")
	}
	if t.unique {
		defs = append(defs, "UNIQUE KEY `uq` ("+quote(t.rowCol.name)+")")
	}
	opts := t.opts

	return "CREATE TABLE " + t.ref() + " (" + strings.Join(defs, ", ") + ")" + opts + ";"
}

// keyLiteral is the literal of row n's key column.
func (g *gen) keyLiteral(c *column, n int) string {
	switch c.typ.sql {
	case "INT", "INT UNSIGNED", "BIGINT", "BIGINT UNSIGNED", "DECIMAL(10,3)":
		return fmt.Sprint(n)
	case "VARCHAR(20)":
		if c.latin1 {
			return fmt.Sprintf("'k%d'", n)
		}
		return pick(g.r, []string{fmt.Sprintf("'k%d'", n), fmt.Sprintf("'ключ %d'", n), fmt.Sprintf("'😀%d'", n)})
	case "CHAR(5)":
		return fmt.Sprintf("'c%d'", n)
	case "VARCHAR(40) CHARACTER SET latin1 COLLATE latin1_swedish_ci":
		return fmt.Sprintf("'clé %d'", n)
	case "DATE":
		return fmt.Sprintf("'2020-01-01' + INTERVAL %d DAY", n)
	case "DATETIME(3)":
		return fmt.Sprintf("'2020-01-01 00:00:00.250' + INTERVAL %d SECOND", n)
	}
	panic("no key literal for " + c.typ.sql)
}

func (g *gen) value(c *column) string {
	if !c.notNull && chance(g.r, 0.2) {
		return "NULL"
	}
	return pick(g.r, g.vals(c))
}

// vals are the literals of c's type that its charset can hold.
func (g *gen) vals(c *column) []string {
	if c.latin1 && c.typ.text {
		if strings.HasPrefix(c.typ.sql, "CHAR(") {
			return latin1Vals[:4] // at most 5 characters
		}
		return latin1Vals
	}
	return c.typ.vals
}

func isKey(t *table, c *column) bool {
	for _, k := range t.key {
		if k == c {
			return true
		}
	}
	return false
}

// insert inserts n rows into t and remembers their keys.
func (g *gen) insert(t *table, n int) string {
	if t.key != nil && t.key[0].autoInc && t.next > 120 {
		n = 1
	}
	var names []string
	var cols []*column
	for _, c := range t.cols {
		if (c.def != "" && chance(g.r, 0.3)) || (!c.notNull && chance(g.r, 0.1) && c != t.rowCol && !isKey(t, c)) {
			continue
		}
		names = append(names, quote(c.name))
		cols = append(cols, c)
	}
	var rows []string
	for i := 0; i < n; i++ {
		num := t.next
		t.next++
		var vs, where []string
		for _, c := range cols {
			var v string
			if isKey(t, c) || c == t.rowCol {
				v = g.keyLiteral(c, num)
				where = append(where, quote(c.name)+" = "+v)
			} else {
				v = g.value(c)
			}
			vs = append(vs, v)
		}
		rows = append(rows, "("+strings.Join(vs, ", ")+")")
		t.rows = append(t.rows, strings.Join(where, " AND "))
	}
	return "INSERT INTO " + t.ref() + " (" + strings.Join(names, ", ") + ") VALUES " + strings.Join(rows, ", ") + ";"
}
