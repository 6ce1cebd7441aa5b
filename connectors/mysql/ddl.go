package mysql

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	pmysql "github.com/pingcap/tidb/pkg/parser/mysql"
	_ "github.com/pingcap/tidb/pkg/parser/test_driver" // literal values in DEFAULT clauses
	"github.com/pingcap/tidb/pkg/parser/types"

	"github.com/connectd/connectd/connectors/internal/relational"
)

// tableChange is one entry of a schema change's tableChanges: what a DDL did
// to one table, with the table's structure after it (nil for DROP).
type tableChange struct {
	typ   string // CREATE, ALTER, DROP
	db    string
	name  string
	table *table
	// previous is the renamed-away "db"."name" id of a RENAME TABLE's
	// ALTER, as Debezium's history writes it (previousId; ALTER TABLE …
	// RENAME TO has none there; mariadiff seeds 7, 142)
	previous string
}

// catalog is the table model the binlog is decoded with, by "db.table", as
// of the binlog position last applied (Debezium's in-memory Tables).
type catalog map[string]*table

// applyDDL parses one DDL statement (the text of a binlog query event, run
// in database defaultDB) with the TiDB parser go-mysql uses and applies it
// to the catalog. include is called for every table the statement names;
// applyDDL returns the changes to tables of which include says they are
// captured, and whether the statement is DDL (which the schema history
// keeps; GRANT, FLUSH, … are not). Statements that change no table
// structure return no change and no error.
//
// dbCharset gives a database's default character set (nil or "": utf8mb4),
// the default of a table created without DEFAULT CHARSET.
func (c catalog) applyDDL(p *parser.Parser, defaultDB, ddl string, include func(db, name string) bool, dbCharset func(db string) string) (_ []tableChange, isDDL bool, _ error) {
	sql, md := normalizeMariaDB(ddl)
	stmts, _, err := p.Parse(sql, "", "")
	if err != nil {
		return nil, false, fmt.Errorf("mysql: parse DDL %q: %w", ddl, err)
	}
	for _, st := range stmts {
		if _, ok := st.(ast.DDLNode); ok {
			isDDL = true
		}
	}
	var out []tableChange
	qual := func(tn *ast.TableName) (string, string) {
		db := defaultDB
		if tn.Schema.O != "" {
			db = tn.Schema.O
		}
		include(db, tn.Name.O) // every table named, known or not (schema history filters)
		return db, tn.Name.O
	}
	add := func(typ, db, name string, t *table) {
		if include(db, name) {
			out = append(out, tableChange{typ: typ, db: db, name: name, table: t})
		}
	}
	for _, st := range stmts {
		switch s := st.(type) {
		case *ast.CreateTableStmt:
			db, name := qual(s.Table)
			if _, ok := c[db+"."+name]; ok && s.IfNotExists {
				continue
			}
			var t *table
			if s.ReferTable != nil {
				rdb, rname := qual(s.ReferTable)
				src, ok := c[rdb+"."+rname]
				if !ok {
					return out, isDDL, fmt.Errorf("mysql: DDL %q: table %s.%s is not known", ddl, rdb, rname)
				}
				t = src.clone()
				t.Schema, t.Name = db, name
				// Debezium's CREATE TABLE … LIKE copies the columns, key,
				// charset and attributes, not the table comment
				// (overwriteTable without it: mariadiff seed 200)
				t.comment = ""
			} else {
				t = &table{Table: relational.Table{Schema: db, Name: name}}
				for _, o := range s.Options {
					switch o.Tp {
					case ast.TableOptionComment:
						t.comment = commentLiteral(o.StrValue)
					case ast.TableOptionCharset:
						t.charset = strings.ToLower(o.StrValue)
					case ast.TableOptionCollate:
						if t.charset == "" {
							t.charset = charsetOfCollation(strings.ToLower(o.StrValue))
						}
					}
				}
				if t.charset == "" && dbCharset != nil {
					t.charset = dbCharset(db)
				}
				t.charset = charsetOr(t.charset)
				if md.versioning > 0 && !md.rowPeriodColumns {
					t.hidden = implicitPeriodColumns
				}
				for _, cd := range s.Cols {
					t.cols = append(t.cols, md.columnOf(cd))
					if hasOption(cd, ast.ColumnOptionPrimaryKey) {
						t.PrimaryKey = append(t.PrimaryKey, cd.Name.Name.O)
					}
				}
				for _, con := range s.Constraints {
					if con.Tp == ast.ConstraintPrimaryKey {
						t.PrimaryKey = keyColumns(con)
					}
				}
				if len(t.PrimaryKey) == 0 {
					t.PrimaryKey = uniqueKeyAsPrimary(t, s)
				}
				t.fillCharsets()
				t.finish()
			}
			c[db+"."+name] = t
			add("CREATE", db, name, t)
		case *ast.DropTableStmt:
			if s.IsView {
				continue
			}
			for _, tn := range s.Tables {
				db, name := qual(tn)
				if _, ok := c[db+"."+name]; ok {
					delete(c, db+"."+name)
					add("DROP", db, name, nil)
				}
			}
		case *ast.RenameTableStmt:
			for _, tt := range s.TableToTables {
				odb, oname := qual(tt.OldTable)
				ndb, nname := qual(tt.NewTable)
				t, ok := c[odb+"."+oname]
				if !ok {
					continue
				}
				delete(c, odb+"."+oname)
				t = t.clone()
				t.Schema, t.Name = ndb, nname
				c[ndb+"."+nname] = t
				// one ALTER of the new id, as Debezium's parser signals a
				// rename (source.table the new name; history restore drops
				// the old id: renamedFrom)
				add("ALTER", ndb, nname, t)
				if n := len(out); n > 0 && out[n-1].name == nname && out[n-1].db == ndb {
					out[n-1].previous = strconv.Quote(odb) + "." + strconv.Quote(oname)
				}
			}
		case *ast.DropDatabaseStmt:
			var ids []string
			for id, t := range c {
				if strings.EqualFold(t.Schema, s.Name.O) {
					ids = append(ids, id)
				}
			}
			slices.Sort(ids) // a stable order of the changes
			for _, id := range ids {
				t := c[id]
				delete(c, id)
				add("DROP", t.Schema, t.Name, nil)
			}
		case *ast.AlterTableStmt:
			db, name := qual(s.Table)
			old, ok := c[db+"."+name]
			if !ok {
				continue // a table created before the history began and never captured
			}
			t := old.clone()
			switch {
			case md.versioning > 0 && !md.rowPeriodColumns:
				t.hidden = implicitPeriodColumns
			case md.versioning < 0:
				t.hidden = 0
			}
			for _, spec := range s.Specs {
				if spec.Tp == ast.AlterTableOption {
					for _, o := range spec.Options {
						switch o.Tp {
						case ast.TableOptionCharset:
							t.charset = strings.ToLower(o.StrValue)
						case ast.TableOptionComment:
							t.comment = commentLiteral(o.StrValue)
						}
					}
				}
				if err := t.alter(spec, md); err != nil {
					return out, isDDL, fmt.Errorf("mysql: DDL %q: %w", ddl, err)
				}
			}
			t.fillCharsets()
			t.finish()
			if t.Schema != db || t.Name != name {
				delete(c, db+"."+name)
				c[t.Schema+"."+t.Name] = t
				add("ALTER", t.Schema, t.Name, t) // a rename: as RENAME TABLE
				continue
			}
			c[db+"."+name] = t
			add("ALTER", db, name, t)
		}
	}
	return out, isDDL, nil
}

// alter applies one ALTER TABLE specification; columnOf models a column
// definition.
func (t *table) alter(spec *ast.AlterTableSpec, md mariadbDDL) error {
	columnOf := md.columnOf
	idx := func(n string) int {
		return slices.IndexFunc(t.cols, func(c column) bool { return strings.EqualFold(c.Name, n) })
	}
	place := func(c column, pos *ast.ColumnPosition, at int) error {
		if pos != nil {
			switch pos.Tp {
			case ast.ColumnPositionFirst:
				at = 0
			case ast.ColumnPositionAfter:
				i := idx(pos.RelativeColumn.Name.O)
				if i < 0 {
					return fmt.Errorf("unknown column %s", pos.RelativeColumn.Name.O)
				}
				at = i + 1
			}
		}
		t.cols = slices.Insert(t.cols, min(at, len(t.cols)), c)
		return nil
	}
	switch spec.Tp {
	case ast.AlterTableAddColumns:
		for _, cd := range spec.NewColumns {
			if i := idx(cd.Name.Name.O); i >= 0 {
				// IF NOT EXISTS, or a DDL read again after a restart from
				// its own offset: the column is replaced, as Debezium's
				// parser does.
				if !spec.IfNotExists {
					t.cols = slices.Delete(t.cols, i, i+1)
				} else {
					continue
				}
			}
			if err := place(columnOf(cd), spec.Position, len(t.cols)); err != nil {
				return err
			}
			if hasOption(cd, ast.ColumnOptionPrimaryKey) {
				t.PrimaryKey = []string{cd.Name.Name.O}
			}
		}
	case ast.AlterTableDropColumn:
		i := idx(spec.OldColumnName.Name.O)
		if i < 0 {
			return nil // IF EXISTS, or read again after a restart from its own offset
		}
		name := t.cols[i].Name
		t.cols = slices.Delete(t.cols, i, i+1)
		t.PrimaryKey = slices.DeleteFunc(t.PrimaryKey, func(k string) bool { return k == name })
	case ast.AlterTableModifyColumn, ast.AlterTableChangeColumn:
		oldName := spec.NewColumns[0].Name.Name.O
		if spec.Tp == ast.AlterTableChangeColumn {
			oldName = spec.OldColumnName.Name.O
		}
		i := idx(oldName)
		if i < 0 {
			if spec.IfExists {
				return nil
			}
			return fmt.Errorf("unknown column %s", oldName)
		}
		was := t.cols[i].Name
		c := columnOf(spec.NewColumns[0])
		if spec.Tp == ast.AlterTableChangeColumn && !hasOption(spec.NewColumns[0], ast.ColumnOptionComment) {
			// Debezium's parser edits the existing column for CHANGE
			// COLUMN: a definition without COMMENT keeps the old comment
			// (MariaDB drops it); MODIFY COLUMN defines the column anew,
			// without it (mariadiff seed 194)
			c.comment = t.cols[i].comment
		}
		t.cols = slices.Delete(t.cols, i, i+1)
		if err := place(c, spec.Position, i); err != nil {
			return err
		}
		for k := range t.PrimaryKey {
			if t.PrimaryKey[k] == was {
				t.PrimaryKey[k] = c.Name
			}
		}
	case ast.AlterTableRenameColumn:
		i := idx(spec.OldColumnName.Name.O)
		if i < 0 {
			return fmt.Errorf("unknown column %s", spec.OldColumnName.Name.O)
		}
		was := t.cols[i].Name
		t.cols[i].Name = spec.NewColumnName.Name.O
		for k := range t.PrimaryKey {
			if t.PrimaryKey[k] == was {
				t.PrimaryKey[k] = spec.NewColumnName.Name.O
			}
		}
	case ast.AlterTableAlterColumn:
		cd := spec.NewColumns[0]
		i := idx(cd.Name.Name.O)
		if i < 0 {
			return fmt.Errorf("unknown column %s", cd.Name.Name.O)
		}
		t.cols[i].defaultSQL = nil
		if d, ok := defaultOf(cd); ok {
			t.cols[i].defaultSQL = &d
		} else if len(cd.Options) > 0 && cd.Options[0].Expr != nil {
			// ALTER COLUMN … SET DEFAULT: the TiDB parser gives the
			// expression as an option without a type
			if d, ok := restoreDefault(cd.Options[0].Expr); ok {
				if b, ok := md.boolDefaults[strings.ToLower(cd.Name.Name.O)]; ok && strings.EqualFold(d, b) {
					d = b
				}
				if bits, ok := md.bitDefaults[strings.ToLower(cd.Name.Name.O)]; ok && bitLiteral.MatchString("b'"+d+"'") {
					d = bits
				}
				if n, ok := md.numDefaults[strings.ToLower(cd.Name.Name.O)]; ok && sameNumber(d, n) {
					d = n
				}
				t.cols[i].defaultSQL = &d
			}
		}
	case ast.AlterTableAddConstraint:
		if spec.Constraint != nil && spec.Constraint.Tp == ast.ConstraintPrimaryKey {
			t.PrimaryKey = keyColumns(spec.Constraint)
		} else if spec.Constraint != nil && isUnique(spec.Constraint.Tp) && len(t.PrimaryKey) == 0 && allNotNull(t, keyColumns(spec.Constraint)) {
			t.PrimaryKey = keyColumns(spec.Constraint)
		}
	case ast.AlterTableDropPrimaryKey:
		t.PrimaryKey = nil
	case ast.AlterTableRenameTable:
		if spec.NewTable.Schema.O != "" {
			t.Schema = spec.NewTable.Schema.O
		}
		t.Name = spec.NewTable.Name.O
	}
	return nil
}

// finish renumbers positions, makes key columns NOT NULL (as the server
// does) and rebuilds the relational view.
func (t *table) finish() {
	t.Columns = t.Columns[:0]
	for i := range t.cols {
		t.cols[i].Position = i + 1
		if slices.Contains(t.PrimaryKey, t.cols[i].Name) {
			t.cols[i].Optional = false
		}
		t.Columns = append(t.Columns, t.cols[i].Column)
	}
}

func (t *table) clone() *table {
	n := &table{Table: t.Table, hidden: t.hidden, sequence: t.sequence, charset: t.charset, comment: t.comment}
	n.PrimaryKey = slices.Clone(t.PrimaryKey)
	n.Columns = slices.Clone(t.Columns)
	n.cols = slices.Clone(t.cols)
	return n
}

func keyColumns(con *ast.Constraint) []string {
	var ks []string
	for _, k := range con.Keys {
		if k.Column != nil {
			ks = append(ks, k.Column.Name.O)
		}
	}
	return ks
}

func hasOption(cd *ast.ColumnDef, tp ast.ColumnOptionType) bool {
	for _, o := range cd.Options {
		if o.Tp == tp {
			return true
		}
	}
	return false
}

// defaultOf renders a column's DEFAULT as information_schema.COLUMNS
// shows it: 'quoted' strings, bare numbers, NULL, functions with ().
func defaultOf(cd *ast.ColumnDef) (string, bool) {
	for _, o := range cd.Options {
		if o.Tp == ast.ColumnOptionDefaultValue && o.Expr != nil {
			return restoreDefault(o.Expr)
		}
	}
	return "", false
}

// restoreDefault renders a DEFAULT expression as information_schema.COLUMNS
// and Debezium's parser have it (defaultOf).
func restoreDefault(e ast.ExprNode) (string, bool) {
	var b strings.Builder
	if err := e.Restore(format.NewRestoreCtx(format.RestoreStringSingleQuotes|format.RestoreKeyWordLowercase, &b)); err != nil {
		return "", false
	}
	s := b.String()
	if strings.HasPrefix(s, "_") {
		// a charset introducer (_utf8mb4'x') is not part of the value
		if q := strings.IndexByte(s, '\''); q > 0 {
			s = s[q:]
		}
	}
	if strings.EqualFold(s, "null") {
		s = "NULL"
	}
	if strings.HasPrefix(s, "x'") || strings.HasPrefix(s, "X'") {
		// a hex literal DEFAULT X'FF…': Debezium's parser takes no default
		// from it (no expression, seed 57; hasDefaultValue false on a NOT
		// NULL column, seed 113), as if the column had no DEFAULT
		return "", false
	}
	return debeziumDefault(s), true
}

// uniqueKeyAsPrimary is the key Debezium's parser gives a table created
// without a primary key: its first UNIQUE key (a column's UNIQUE, then the
// table's UNIQUE constraints, in order) whose columns are all NOT NULL, as
// InnoDB also takes it; nil if there is none (mariadiff seed 48).
func uniqueKeyAsPrimary(t *table, s *ast.CreateTableStmt) []string {
	for _, cd := range s.Cols {
		if hasOption(cd, ast.ColumnOptionUniqKey) && allNotNull(t, []string{cd.Name.Name.O}) {
			return []string{cd.Name.Name.O}
		}
	}
	for _, con := range s.Constraints {
		if isUnique(con.Tp) {
			if cols := keyColumns(con); allNotNull(t, cols) {
				return cols
			}
		}
	}
	return nil
}

func isUnique(tp ast.ConstraintType) bool {
	return tp == ast.ConstraintUniq || tp == ast.ConstraintUniqKey || tp == ast.ConstraintUniqIndex
}

// allNotNull: t has every one of cols, and none is nullable.
func allNotNull(t *table, cols []string) bool {
	if len(cols) == 0 {
		return false
	}
	for _, name := range cols {
		found := false
		for _, c := range t.cols {
			if strings.EqualFold(c.Name, name) {
				found = !c.Optional
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// currentTimestamp is a CURRENT_TIMESTAMP or NOW default, with or without
// a precision, as MariaDB reports it (current_timestamp(3)) or as a
// statement writes it.
var currentTimestamp = regexp.MustCompile(`^(?i:current_timestamp|now)(?:\(\s*[0-9]*\s*\))?$`)

// debeziumDefault is a column's DEFAULT as Debezium's table model has it
// (its defaultValueExpression): DEFAULT CURRENT_TIMESTAMP and NOW() are the
// epoch "1970-01-01 00:00:00" (its DefaultValueParserListener), whose
// schema default is then the epoch (0); anything else as MariaDB has it.
func debeziumDefault(s string) string {
	if currentTimestamp.MatchString(s) {
		return "1970-01-01 00:00:00"
	}
	if strings.HasPrefix(s, "(") && strings.HasSuffix(s, ")") {
		// an expression default, DEFAULT (2 * 21): Debezium's parser
		// (DefaultValueParserListener) has a default without an
		// expression, as for NULL (mariadiff seed 65)
		return "NULL"
	}
	if m := bitLiteral.FindStringSubmatch(s); m != nil {
		// a BIT default b'101': its digits, as Debezium's parser has them
		return m[1]
	}
	return s
}

// bitLiteral is a bit-value literal, b'0101'.
var bitLiteral = regexp.MustCompile(`^[bB]'([01]+)'$`)

// columnOf is the package columnOf with the MariaDB types the rewrite for
// the TiDB parser replaced (mariadbDDL.types) put back.
func (md mariadbDDL) columnOf(cd *ast.ColumnDef) column {
	c := columnOf(cd)
	if typ, ok := md.types[strings.ToLower(c.Name)]; ok {
		// information_schema: DATA_TYPE and COLUMN_TYPE "uuid", no length
		// or character set
		c.dataType, c.TypeName, c.columnType = typ, typ, typ
		c.length, c.charLength, c.charset = 0, 0, ""
	}
	if cs, ok := md.charsets[strings.ToLower(c.Name)]; ok {
		c.charset = cs
	}
	if b, ok := md.boolDefaults[strings.ToLower(c.Name)]; ok && c.defaultSQL != nil && strings.EqualFold(*c.defaultSQL, b) {
		c.defaultSQL = &b // TRUE/FALSE as written (Debezium's expression; mariadiff seed 223)
	}
	if n, ok := md.numDefaults[strings.ToLower(c.Name)]; ok && c.defaultSQL != nil && sameNumber(*c.defaultSQL, n) {
		c.defaultSQL = &n // 00000, 1.7976931348623157e308 as written (Debezium's expression)
	}
	if bits, ok := md.bitDefaults[strings.ToLower(c.Name)]; ok && c.defaultSQL != nil && bitLiteral.MatchString("b'"+*c.defaultSQL+"'") {
		c.defaultSQL = &bits
	}
	if c.dataType == "decimal" && md.numeric[strings.ToLower(c.Name)] {
		// NUMERIC(p,s) as written: Debezium's type name NUMERIC, JDBC
		// type NUMERIC (mariadiff seeds 53, 56); the same decimal
		c.dataType, c.TypeName = "numeric", "numeric"
	}
	return c
}

// columnOf maps a parsed column definition to the column model that
// information_schema would give for it.
func columnOf(cd *ast.ColumnDef) column {
	ft := cd.Tp
	var c column
	c.Name = cd.Name.Name.O
	c.dataType = types.TypeToStr(ft.GetType(), ft.GetCharset())
	switch ft.GetType() {
	case pmysql.TypeString:
		if ft.GetCharset() == "binary" {
			c.dataType = "binary"
		} else {
			c.dataType = "char"
		}
	case pmysql.TypeVarchar, pmysql.TypeVarString:
		if ft.GetCharset() == "binary" {
			c.dataType = "varbinary"
		} else {
			c.dataType = "varchar"
		}
	case pmysql.TypeJSON:
		// Debezium's DDL parser types a column declared JSON in the DDL
		// text JSON (java.sql.Types.OTHER, io.debezium.data.Json, no
		// character set), though MariaDB stores it as LONGTEXT utf8mb4 and
		// a snapshot (SHOW CREATE TABLE) sees LONGTEXT (mariadiff seeds 61,
		// 76). The text is UTF-8 whatever the table's default.
		c.dataType = "json"
	}
	c.TypeName = c.dataType
	c.unsigned = pmysql.HasUnsignedFlag(ft.GetFlag())
	c.zerofill = pmysql.HasZerofillFlag(ft.GetFlag())
	flen, dec := ft.GetFlen(), ft.GetDecimal()
	switch c.dataType {
	case "decimal", "numeric":
		c.precision, c.scale = 10, 0
		if flen > 0 {
			c.precision = flen
		}
		if dec > 0 {
			c.scale = dec
		}
	case "float":
		if flen > 0 && dec >= 0 {
			c.floatMD, c.precision, c.scale = true, flen, dec
		}
	case "double":
		if flen > 0 && dec >= 0 {
			c.doubleMD, c.precision, c.scale = true, flen, dec
		}
	case "bit":
		c.precision = max(flen, 1)
	case "datetime", "timestamp", "time":
		c.fsp = max(dec, 0)
	case "binary", "char":
		c.length, c.charLength = max(flen, 1), max(flen, 1)
	case "varbinary", "varchar":
		c.length, c.charLength = max(flen, 0), max(flen, 0)
	case "enum", "set":
		c.options = slices.Clone(ft.GetElems())
	}
	if _, ok := intWidths[c.dataType]; (ok || c.dataType == "year") && flen > 0 {
		c.width = flen // Debezium's parser keeps only an explicit width
	}
	switch c.dataType {
	case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set":
		c.charset = ft.GetCharset() // "" = the table's default (applyDDL fills it in)
	}
	c.columnType = c.dataType
	if c.unsigned {
		c.columnType += " unsigned"
	}
	c.Optional = true
	for _, o := range cd.Options {
		switch o.Tp {
		case ast.ColumnOptionNotNull, ast.ColumnOptionPrimaryKey:
			c.Optional = false
		case ast.ColumnOptionNull:
			c.Optional = true
		case ast.ColumnOptionAutoIncrement:
			c.autoInc = true
		case ast.ColumnOptionComment:
			if v, ok := o.Expr.(ast.ValueExpr); ok {
				c.comment = commentLiteral(v.GetString())
			}
		}
	}
	if d, ok := defaultOf(cd); ok {
		c.defaultSQL = &d
	} else if c.Optional {
		null := "NULL"
		c.defaultSQL = &null
	}
	return c
}

// renamedFrom lists the "db.table" ids a RENAME TABLE or ALTER TABLE …
// RENAME statement q renames away (none for any other statement): a
// rename's change is one ALTER of the new id, as Debezium's, so the
// history restore (which applies tableChanges) drops the old ids by them.
func renamedFrom(q, defaultDB string) []string {
	if !renameDDL.MatchString(q) {
		return nil
	}
	sql, _ := normalizeMariaDB(q)
	stmts, _, err := parser.New().Parse(sql, "", "")
	if err != nil {
		return nil
	}
	qual := func(tn *ast.TableName) string {
		if tn.Schema.O != "" {
			return tn.Schema.O + "." + tn.Name.O
		}
		return defaultDB + "." + tn.Name.O
	}
	var out []string
	for _, st := range stmts {
		switch s := st.(type) {
		case *ast.RenameTableStmt:
			for _, tt := range s.TableToTables {
				out = append(out, qual(tt.OldTable))
			}
		case *ast.AlterTableStmt:
			for _, spec := range s.Specs {
				if spec.Tp == ast.AlterTableRenameTable {
					out = append(out, qual(s.Table))
				}
			}
		}
	}
	return out
}

// renameDDL: q may rename a table.
var renameDDL = regexp.MustCompile(`(?is)^\s*(?:RENAME\s+TABLES?\b|ALTER\b.*\bRENAME\b)`)

// dropTablePrefix is the head of a DROP TABLE statement up to its first
// table name (DROP [TEMPORARY] TABLE [IF EXISTS] ).
var dropTablePrefix = regexp.MustCompile(`(?is)^\s*DROP\s+(?:TEMPORARY\s+)?TABLES?\s+(?:IF\s+EXISTS\s+)?`)

// dropTableStatements splits DROP TABLE q into one statement per table, as
// Debezium's DROP TABLE listener signals each dropped table: the text of
// q up to the table list, then the table as `db`.`name`, then RESTRICT or
// CASCADE when q has it (the server's "/* generated by server */" comment
// is not kept). Its result is nil for any other statement.
func dropTableStatements(p *parser.Parser, defaultDB, q string) []string {
	prefix := dropTablePrefix.FindString(q)
	if prefix == "" {
		return nil
	}
	sql, _ := normalizeMariaDB(q)
	stmts, _, err := p.Parse(sql, "", "")
	if err != nil || len(stmts) != 1 {
		return nil
	}
	s, ok := stmts[0].(*ast.DropTableStmt)
	if !ok || s.IsView {
		return nil
	}
	suffix := ""
	if m := dropTableSuffix.FindStringSubmatch(q); m != nil {
		suffix = " " + m[1]
	}
	var out []string
	for _, tn := range s.Tables {
		db := defaultDB
		if tn.Schema.O != "" {
			db = tn.Schema.O
		}
		out = append(out, prefix+"`"+db+"`.`"+tn.Name.O+"`"+suffix)
	}
	return out
}

var dropTableSuffix = regexp.MustCompile(`(?is)\b(RESTRICT|CASCADE)\s*(?:/\*.*\*/\s*)?;?\s*$`)

// fillCharsets gives the character columns declared without a character
// set the table's default.
func (t *table) fillCharsets() {
	for i := range t.cols {
		c := &t.cols[i]
		switch c.dataType {
		case "char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set":
			if c.charset == "" {
				c.charset = charsetOr(t.charset)
			}
		}
	}
}
