package mysql

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/client"

	"github.com/connectd/connectd/connectors/internal/columns"
	"github.com/connectd/connectd/connectors/internal/relational"
)

// column is one column as information_schema.COLUMNS describes it.
type column struct {
	relational.Column
	dataType   string // DATA_TYPE, lower case: "int", "varchar", "datetime", …
	columnType string // COLUMN_TYPE: "int(10) unsigned", "enum('a','b')", …
	unsigned   bool
	zerofill   bool // ZEROFILL (Debezium's type name ends with it)
	floatMD    bool // FLOAT(M,D): precision M, scale D
	doubleMD   bool // DOUBLE(M,D): precision M, scale D (the value stays a double)
	precision  int  // NUMERIC_PRECISION, or the length of BIT(n)/BINARY(n)
	scale      int  // NUMERIC_SCALE
	fsp        int  // DATETIME_PRECISION
	length     int  // CHARACTER_MAXIMUM_LENGTH (bytes for binary types)
	defaultSQL *string
	options    []string // ENUM / SET values
	width      int      // display width of integer types (int(11) → 11); 0 = none
	charLength int      // CHARACTER_MAXIMUM_LENGTH of CHAR/VARCHAR/BINARY/VARBINARY
	charset    string   // CHARACTER_SET_NAME; "" = none
	autoInc    bool     // AUTO_INCREMENT
	comment    string   // COLUMN_COMMENT
}

// intWidths are the display widths MariaDB gives integer types without
// one: signed, unsigned.
var intWidths = map[string][2]int{
	"tinyint": {4, 3}, "smallint": {6, 5}, "mediumint": {9, 8}, "int": {11, 10}, "integer": {11, 10}, "bigint": {20, 20},
}

// dbzLength is the column's length as Debezium's table model has it
// (io.debezium.relational.Column#length); 0 = none.
func (c *column) dbzLength() int {
	switch c.dataType {
	case "tinyint", "smallint", "mediumint", "int", "integer", "bigint":
		return c.width
	case "decimal", "numeric", "bit":
		return c.precision
	case "float":
		if c.floatMD {
			return c.precision
		}
	case "double":
		if c.doubleMD {
			return c.precision
		}
	case "datetime", "timestamp", "time":
		return c.fsp
	case "char", "varchar", "binary", "varbinary":
		return c.charLength
	case "year":
		// YEAR(4) as the server shows it (the snapshot, SHOW CREATE
		// TABLE); a streamed YEAR without a width has none, as in
		// Debezium's parser.
		return c.width
	case "enum":
		return 1
	case "set":
		return len(strings.Join(c.options, ","))
	}
	return 0
}

// source describes the column as Debezium's table model does, for
// column.propagate.source.type / datatype.propagate.source.type and the
// length a hashed value is cut to: type name as Debezium's DDL parser
// names it ("INT UNSIGNED"), length (dbzLength), scale of DECIMAL/NUMERIC.
func (c *column) source() columns.Source {
	s := columns.Source{Name: c.Name, TypeName: strings.ToUpper(c.dataType), Length: c.dbzLength(), Comment: c.comment}
	if c.unsigned {
		s.TypeName += " UNSIGNED"
	}
	if s.Length == 0 {
		s.Length = -1
	}
	if c.dataType == "decimal" || c.dataType == "numeric" || c.floatMD || c.doubleMD {
		// the scale as the schema history has it (FLOAT(7,3): 3)
		sc := c.scale
		s.Scale = &sc
	}
	return s
}

// table is one table's structure (captured or not: config.schemaTracked).
type table struct {
	relational.Table
	cols []column
	// hidden is how many columns trail every binlog row of the table
	// beyond cols: the row_start and row_end columns MariaDB adds to a
	// table made system-versioned without declaring them (WITH SYSTEM
	// VERSIONING); no SELECT * and no information_schema.COLUMNS shows
	// them, nor does Debezium's table model, so no record carries them.
	hidden int
	// sequence: a MariaDB sequence (CREATE SEQUENCE), a one-row table
	// whose row NEXTVAL() rewrites in the binlog; neither snapshotted
	// (listTables reads base tables) nor streamed.
	sequence bool
	// charset is the table's default character set (its DEFAULT CHARSET,
	// else its database's): Debezium's defaultCharsetName, and the
	// charset of its character columns declared without one.
	charset string
	// comment is the table's COMMENT as Debezium's parser keeps it
	// (commentLiteral), "" for none; kept only where column comments are
	// (Task.keepComments).
	comment string
}

// implicitPeriodColumns are the hidden columns (row_start, row_end) of a
// system-versioned table that does not declare them.
const implicitPeriodColumns = 2

// listTables returns the captured tables as [database, table], sorted as
// Debezium snapshots them: in the order of the table.include.list pattern
// that matches them first, then by table id; and the tables whose
// structures the snapshot records (config.schemaTracked), as Debezium's
// snapshot reads them (capturedSchemaTables): the captured tables, in
// their order, with schema.history.internal.store.only.captured.tables.ddl,
// else every base table outside the system databases, sorted by table id
// ("db.table", as Debezium's TableId.compareTo).
func listTables(conn *client.Conn, c *config) (captured, schema [][2]string, _ error) {
	r, err := conn.Execute(`SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED')`)
	if err != nil {
		return nil, nil, fmt.Errorf("mysql: list tables: %w", err)
	}
	for i := range r.Values {
		db, _ := r.GetString(i, 0)
		tb, _ := r.GetString(i, 1)
		if c.included(db, tb) {
			captured = append(captured, [2]string{db, tb})
		}
		if !c.storeOnlyTables && c.schemaTracked(db, tb) {
			schema = append(schema, [2]string{db, tb})
		}
	}
	rank := func(t [2]string) int {
		for i, re := range c.tbInclude {
			if re.MatchString(t[0] + "." + t[1]) {
				return i
			}
		}
		return 0
	}
	sort.SliceStable(captured, func(i, j int) bool {
		if ri, rj := rank(captured[i]), rank(captured[j]); ri != rj {
			return ri < rj
		}
		if captured[i][0] != captured[j][0] {
			return captured[i][0] < captured[j][0]
		}
		return captured[i][1] < captured[j][1]
	})
	if c.storeOnlyTables {
		return captured, captured, nil
	}
	sort.Slice(schema, func(i, j int) bool { return schema[i][0]+"."+schema[i][1] < schema[j][0]+"."+schema[j][1] })
	return captured, schema, nil
}

// loadTable reads one table's columns and primary key from information_schema.
func loadTable(conn *client.Conn, db, name string) (*table, error) {
	q := `SELECT COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT,
	  COALESCE(NUMERIC_PRECISION, 0), COALESCE(NUMERIC_SCALE, 0), COALESCE(DATETIME_PRECISION, 0),
	  COALESCE(CHARACTER_OCTET_LENGTH, 0), COLUMN_KEY, COALESCE(CHARACTER_MAXIMUM_LENGTH, 0),
	  COALESCE(CHARACTER_SET_NAME, ''), EXTRA, COLUMN_COMMENT
	FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION`
	r, err := conn.Execute(q, db, name)
	if err != nil {
		return nil, fmt.Errorf("mysql: read columns of %s.%s: %w", db, name, err)
	}
	t := &table{Table: relational.Table{Schema: db, Name: name}}
	for i := range r.Values {
		var c column
		c.Name, _ = r.GetString(i, 0)
		pos, _ := r.GetInt(i, 1)
		c.Position = int(pos)
		c.dataType, _ = r.GetString(i, 2)
		c.dataType = strings.ToLower(c.dataType)
		c.columnType, _ = r.GetString(i, 3)
		c.TypeName = c.dataType
		nullable, _ := r.GetString(i, 4)
		c.Optional = nullable == "YES"
		if isNull, _ := r.IsNull(i, 5); !isNull {
			d, _ := r.GetString(i, 5)
			d = debeziumDefault(d)
			c.defaultSQL = &d
		}
		p, _ := r.GetInt(i, 6)
		s, _ := r.GetInt(i, 7)
		f, _ := r.GetInt(i, 8)
		l, _ := r.GetInt(i, 9)
		c.precision, c.scale, c.fsp, c.length = int(p), int(s), int(f), int(l)
		c.unsigned = strings.Contains(strings.ToLower(c.columnType), "unsigned")
		c.zerofill = strings.Contains(strings.ToLower(c.columnType), "zerofill")
		c.floatMD = c.dataType == "float" && strings.Contains(c.columnType, ",")
		c.doubleMD = c.dataType == "double" && strings.Contains(c.columnType, ",")
		switch c.dataType {
		case "enum", "set":
			c.options = parseOptions(c.columnType)
		case "bit":
			c.precision = parenInt(c.columnType, 1)
		}
		cl, _ := r.GetInt(i, 11)
		c.charLength = int(cl)
		c.charset, _ = r.GetString(i, 12)
		extra, _ := r.GetString(i, 13)
		c.autoInc = strings.Contains(strings.ToLower(extra), "auto_increment")
		c.comment, _ = r.GetString(i, 14)
		c.comment = commentLiteral(c.comment)
		if w, ok := intWidths[c.dataType]; ok {
			c.width = parenInt(c.columnType, w[0])
		} else if c.dataType == "year" {
			c.width = parenInt(c.columnType, 4)
		}
		key, _ := r.GetString(i, 10)
		if key == "PRI" {
			t.PrimaryKey = append(t.PrimaryKey, c.Name)
		}
		t.cols = append(t.cols, c)
		t.Columns = append(t.Columns, c.Column)
	}
	if len(t.cols) == 0 {
		return nil, fmt.Errorf("mysql: table %s.%s has no columns (dropped?)", db, name)
	}
	// A MariaDB system-versioned table has row_start/row_end columns; when
	// the table does not declare them they are hidden from COLUMNS but
	// trail every binlog row.
	r, err = conn.Execute(`SELECT TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`, db, name)
	if err != nil {
		return nil, fmt.Errorf("mysql: read table type of %s.%s: %w", db, name, err)
	}
	typ := ""
	if len(r.Values) > 0 {
		typ, _ = r.GetString(0, 0)
	}
	t.sequence = typ == "SEQUENCE"
	if typ == "SYSTEM VERSIONED" {
		r, err := conn.Execute(`SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?
		  AND GENERATION_EXPRESSION IN ('ROW START', 'ROW END')`, db, name)
		if err != nil {
			return nil, fmt.Errorf("mysql: read period columns of %s.%s: %w", db, name, err)
		}
		declared, _ := r.GetInt(0, 0)
		t.hidden = max(implicitPeriodColumns-int(declared), 0)
	}
	// COLUMN_KEY=PRI lists key columns in table order; the key order is the
	// index's, from STATISTICS.
	if r, err := conn.Execute(`SELECT COALESCE(TABLE_COLLATION, ''), COALESCE(TABLE_COMMENT, '') FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?`, db, name); err == nil && len(r.Values) > 0 {
		coll, _ := r.GetString(0, 0)
		t.charset = charsetOfCollation(coll)
		cm, _ := r.GetString(0, 1)
		t.comment = commentLiteral(cm)
	}
	if len(t.PrimaryKey) > 1 {
		r, err := conn.Execute(`SELECT COLUMN_NAME FROM information_schema.STATISTICS
		  WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND INDEX_NAME = 'PRIMARY' ORDER BY SEQ_IN_INDEX`, db, name)
		if err != nil {
			return nil, fmt.Errorf("mysql: read primary key of %s.%s: %w", db, name, err)
		}
		t.PrimaryKey = t.PrimaryKey[:0]
		for i := range r.Values {
			n, _ := r.GetString(i, 0)
			t.PrimaryKey = append(t.PrimaryKey, n)
		}
	}
	return t, nil
}

// parseOptions returns the values of "enum('a','b”c')" / "set(...)".
func parseOptions(ct string) []string {
	open := strings.IndexByte(ct, '(')
	if open < 0 {
		return nil
	}
	s := ct[open+1:]
	var out []string
	for {
		s = strings.TrimLeft(s, " ,")
		if s == "" || s[0] != '\'' {
			return out
		}
		var b strings.Builder
		i := 1
		for i < len(s) {
			if s[i] == '\'' {
				if i+1 < len(s) && s[i+1] == '\'' {
					b.WriteByte('\'')
					i += 2
					continue
				}
				break
			}
			if s[i] == '\\' && i+1 < len(s) {
				i++
			}
			b.WriteByte(s[i])
			i++
		}
		out = append(out, b.String())
		s = s[i+1:]
	}
}

func parenInt(ct string, def int) int {
	open := strings.IndexByte(ct, '(')
	end := strings.IndexByte(ct, ')')
	if open < 0 || end < open {
		return def
	}
	n, err := strconv.Atoi(ct[open+1 : end])
	if err != nil {
		return def
	}
	return n
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// commentLiteral is a column comment as Debezium's DDL parser keeps it: the
// text between the quotes of its literal, escapes not undone (COMMENT
// 'c”mt' is "c”mt"), as SHOW CREATE TABLE writes it.
func commentLiteral(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", "''")
}

// charsetOfCollation is the character set a collation name belongs to
// (latin1_swedish_ci → latin1); "" for "".
func charsetOfCollation(coll string) string {
	cs, _, _ := strings.Cut(coll, "_")
	return cs
}

// charsetOr is cs, or utf8mb4 when it is unknown.
func charsetOr(cs string) string {
	if cs == "" {
		return "utf8mb4"
	}
	return cs
}
