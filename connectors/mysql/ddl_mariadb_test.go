package mysql

import (
	"strings"
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
)

// TestNormalizeMariaDBParses: every MariaDB-only statement below is
// rejected by the TiDB parser as written (checked first, so the test fails
// if the parser learns it and the rewrite becomes dead code) and accepted
// after normalizeMariaDB. The statements follow MariaDB 10.11's manual;
// Debezium's MariaDBParser.g4 accepts them (createTable orReplace,
// tableOptionWithSystemVersioning, periodDefinition, tableOptionChecksum
// PAGE_CHECKSUM, …).
func TestNormalizeMariaDBParses(t *testing.T) {
	p := parser.New()
	for _, s := range []string{
		"CREATE OR REPLACE TABLE t (id int primary key)",
		"CREATE TABLE v (id int PRIMARY KEY) WITH SYSTEM VERSIONING",
		"CREATE TABLE `v` (`id` int(11) NOT NULL, PRIMARY KEY (`id`)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 WITH SYSTEM VERSIONING",
		"CREATE TABLE v (id int PRIMARY KEY, s timestamp(6) GENERATED ALWAYS AS ROW START, e timestamp(6) GENERATED ALWAYS AS ROW END, PERIOD FOR SYSTEM_TIME(s, e)) WITH SYSTEM VERSIONING",
		"CREATE TABLE v (id int PRIMARY KEY, s timestamp(6) AS ROW START INVISIBLE, e timestamp(6) AS ROW END INVISIBLE, PERIOD FOR SYSTEM_TIME(s, e)) WITH SYSTEM VERSIONING",
		"CREATE TABLE v (id int PRIMARY KEY, d1 date, d2 date, PERIOD FOR p(d1, d2))",
		"CREATE TABLE v (id int, d1 date, d2 date, PERIOD FOR p(d1,d2), UNIQUE (id, p WITHOUT OVERLAPS))",
		"CREATE TABLE v (id int PRIMARY KEY) ENGINE=Aria PAGE_CHECKSUM=1 TRANSACTIONAL=1",
		"CREATE TABLE v (id int PRIMARY KEY) ENGINE=Aria, PAGE_CHECKSUM=1, ROW_FORMAT=PAGE",
		"CREATE TABLE v (id int PRIMARY KEY) ENCRYPTED=YES ENCRYPTION_KEY_ID=1",
		"CREATE TABLE v (id int PRIMARY KEY, x int INVISIBLE)",
		"CREATE TABLE v (id int PRIMARY KEY, x text COMPRESSED, y varchar(100) COMPRESSED=zlib)",
		"CREATE TABLE v (id int PRIMARY KEY, u uuid, i6 inet6 NOT NULL, i4 inet4 DEFAULT '0.0.0.0')",
		"CREATE TABLE v (id int PRIMARY KEY, uuid uuid DEFAULT uuid(), KEY inet6 (uuid))",
		"CREATE TABLE v (id int PRIMARY KEY, x int AS (id+1) PERSISTENT)",
		"CREATE TABLE v (id int PRIMARY KEY, x int WITHOUT SYSTEM VERSIONING) WITH SYSTEM VERSIONING",
		"ALTER TABLE t ADD SYSTEM VERSIONING",
		"ALTER TABLE t DROP SYSTEM VERSIONING",
		"ALTER TABLE t ADD PERIOD FOR p(d1, d2)",
		"ALTER TABLE t DROP PERIOD FOR p, ADD COLUMN z int",
		"ALTER TABLE t ADD PERIOD IF NOT EXISTS FOR SYSTEM_TIME(s, e)",
		"ALTER TABLE t ALTER COLUMN a SET INVISIBLE",
		"ALTER TABLE t ADD COLUMN IF NOT EXISTS u uuid AFTER id",
		"ALTER TABLE t MODIFY COLUMN x int INVISIBLE",
		"ALTER ONLINE TABLE t ADD COLUMN b int",
		"ALTER TABLE t WAIT 5 ADD COLUMN b int",
		"ALTER TABLE t NOWAIT ADD COLUMN b int",
		"ALTER TABLE IF EXISTS t ADD COLUMN b int",
		"ALTER TABLE t PAGE_CHECKSUM=0",
		"DROP TABLE t WAIT 5",
		"RENAME TABLE IF EXISTS t TO u",
		"CREATE OR REPLACE SEQUENCE s",
		"CREATE OR REPLACE DATABASE d",
		"CREATE TABLE v (id INT PRIMARY KEY, c VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_uca1400_ai_ci) DEFAULT COLLATE=utf8mb4_uca1400_ai_ci",
		"CREATE TABLE v (id INT PRIMARY KEY, c VARCHAR(10) CHARACTER SET latin2 COLLATE latin2_czech_cs, d text CHARSET ucs2)",
		"ALTER TABLE t ADD COLUMN c VARCHAR(10) CHARACTER SET latin2, MODIFY d enum('a','b') CHARACTER SET ucs2",
		"CREATE TABLE v (id INT PRIMARY KEY, p POINT NOT NULL, g geometry, SPATIAL INDEX(p))",
		"CREATE TABLE v (id INT PRIMARY KEY, x int, KEY (x) IGNORED, KEY (id, x) NOT IGNORED)",
		"ALTER TABLE t ALTER INDEX i IGNORED",
		"CREATE TABLE v (id INT PRIMARY KEY, x int) ENGINE=InnoDB `PAGE_COMPRESSED`='ON'",
	} {
		if _, _, err := p.Parse(s, "", ""); err == nil {
			t.Errorf("the TiDB parser accepts %q as written: the rewrite is not needed", s)
		}
		n, _ := normalizeMariaDB(s)
		if _, _, err := p.Parse(n, "", ""); err != nil {
			t.Errorf("%q → %q: %v", s, n, err)
		}
	}
	// Statements the TiDB parser reads as they are come back unchanged.
	for _, s := range []string{
		"CREATE TABLE t (id int PRIMARY KEY, encrypted int, transactional int) COMMENT='WITH SYSTEM VERSIONING'",
		"ALTER TABLE t ADD COLUMN encrypted int, ROW_FORMAT=COMPRESSED",
		"ALTER TABLE t ADD COLUMN IF NOT EXISTS b int, DROP COLUMN IF EXISTS c",
		"CREATE TABLE t (id int, uuid char(36))",
		"INSERT INTO t VALUES ('uuid', 'PERIOD FOR')",
	} {
		if n, _ := normalizeMariaDB(s); n != s {
			t.Errorf("%q rewritten to %q", s, n)
		}
	}
}

// TestMariaDBDDLColumnModel: the table model each rewritten statement
// leaves is the one MariaDB reports (information_schema.COLUMNS and the
// binlog's row width: hidden = the implicit row_start/row_end columns,
// mariadb-binlog --verbose shows them as @3, @4 on a two-column table).
func TestMariaDBDDLColumnModel(t *testing.T) {
	p := parser.New()
	cat := catalog{}
	all := func(db, name string) bool { return true }
	for _, step := range []struct {
		ddl    string
		table  string
		cols   string // name:data_type, …
		key    string
		hidden int
	}{
		{"CREATE TABLE t (id int PRIMARY KEY, a int)", "t", "id:int,a:int", "id", 0},
		{"CREATE OR REPLACE TABLE t (id bigint, u uuid NOT NULL, i6 inet6, i4 inet4, PRIMARY KEY (id)) PAGE_CHECKSUM=1", "t", "id:bigint,u:uuid,i6:inet6,i4:inet4", "id", 0},
		{"CREATE TABLE v (id int PRIMARY KEY, a int INVISIBLE, b text COMPRESSED) WITH SYSTEM VERSIONING", "v", "id:int,a:int,b:text", "id", 2},
		{"ALTER TABLE v ADD COLUMN c int", "v", "id:int,a:int,b:text,c:int", "id", 2},
		{"ALTER TABLE v DROP SYSTEM VERSIONING", "v", "id:int,a:int,b:text,c:int", "id", 0},
		{"ALTER TABLE v ADD SYSTEM VERSIONING", "v", "id:int,a:int,b:text,c:int", "id", 2},
		{"CREATE TABLE x (id int, s timestamp(6) GENERATED ALWAYS AS ROW START, e timestamp(6) GENERATED ALWAYS AS ROW END, PERIOD FOR SYSTEM_TIME(s, e), PRIMARY KEY (id, e)) WITH SYSTEM VERSIONING", "x", "id:int,s:timestamp,e:timestamp", "id,e", 0},
		{"CREATE TABLE p (id int, d1 date NOT NULL, d2 date NOT NULL, PERIOD FOR app(d1, d2), PRIMARY KEY (id, app WITHOUT OVERLAPS))", "p", "id:int,d1:date,d2:date", "id", 0},
		{"ALTER TABLE p ADD COLUMN IF NOT EXISTS u uuid AFTER id, DROP PERIOD FOR app", "p", "id:int,u:uuid,d1:date,d2:date", "id", 0},
		{"CREATE TABLE c (id int PRIMARY KEY, a varchar(10) CHARACTER SET latin2 COLLATE latin2_czech_cs, b text, g point NOT NULL, SPATIAL KEY (g))", "c", "id:int,a:varchar,b:text,g:point", "id", 0},
		{"ALTER TABLE c MODIFY b enum('x','y') CHARACTER SET ucs2, ADD COLUMN d decimal(10,2)", "c", "id:int,a:varchar,b:enum,g:point,d:decimal", "id", 0},
		// a quoted column name spelling a keyword (mariadiff seed 35)
		{"CREATE TABLE q (`select` NUMERIC(4,4), `key` uuid, id int PRIMARY KEY)", "q", "select:numeric,key:uuid,id:int", "id", 0},
	} {
		if _, _, err := cat.applyDDL(p, "db", step.ddl, all, nil); err != nil {
			t.Fatalf("%s: %v", step.ddl, err)
		}
		tb := cat["db."+step.table]
		var cols []string
		for _, c := range tb.cols {
			cols = append(cols, c.Name+":"+c.dataType)
		}
		if got := strings.Join(cols, ","); got != step.cols {
			t.Errorf("%s: columns %s, want %s", step.ddl, got, step.cols)
		}
		if got := strings.Join(tb.PrimaryKey, ","); got != step.key {
			t.Errorf("%s: key %s, want %s", step.ddl, got, step.key)
		}
		if tb.hidden != step.hidden {
			t.Errorf("%s: hidden columns %d, want %d", step.ddl, tb.hidden, step.hidden)
		}
		if step.table == "c" {
			var cs []string
			for _, c := range tb.cols {
				cs = append(cs, c.charset)
			}
			if got := strings.Join(cs, ","); got != ",latin2,utf8mb4," && got != ",latin2,ucs2,," {
				t.Errorf("%s: character sets %s", step.ddl, got)
			}
		}
		// The schema history keeps the model (hidden columns in an attribute).
		back := tableOf("db", step.table, tableChangeJSON(tableChange{typ: "CREATE", db: "db", name: step.table, table: tb}).Table)
		if back.hidden != tb.hidden || len(back.cols) != len(tb.cols) || back.cols[1].dataType != tb.cols[1].dataType {
			t.Errorf("%s: history round trip: hidden %d, cols %d", step.ddl, back.hidden, len(back.cols))
		}
	}
}

// FuzzNormalizeMariaDB: any text (a binlog query event is whatever the
// client sent) is rewritten without a panic, and a statement that is not
// DDL comes back unchanged.
func FuzzNormalizeMariaDB(f *testing.F) {
	for _, s := range []string{
		"CREATE OR REPLACE TABLE t (id int primary key) WITH SYSTEM VERSIONING",
		"ALTER TABLE t ADD COLUMN c varchar(10) CHARACTER SET latin2 COLLATE latin2_czech_cs",
		"CREATE TABLE v (id int, d1 date, d2 date, PERIOD FOR p(d1,d2), UNIQUE (id, p WITHOUT OVERLAPS))",
		"ALTER TABLE t CHARSET =", "CREATE TABLE t (a int COLLATE", "ALTER TABLE t WAIT", "CREATE TABLE `t",
		"CREATE TABLE t (u uuid) PAGE_CHECKSUM", "ALTER TABLE t ALTER", "CREATE TABLE t (a int AS ROW",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, _ := normalizeMariaDB(s)
		if w := strings.ToUpper(strings.TrimSpace(s)); strings.HasPrefix(w, "INSERT") || strings.HasPrefix(w, "SELECT") {
			if out != s {
				t.Fatalf("%q rewritten to %q", s, out)
			}
		}
	})
}

// TestZeroPaddedDefault: the CREATE TABLE MariaDB logs for CREATE TABLE …
// AS SELECT writes a ZEROFILL column's default padded (DEFAULT 00000);
// Debezium's defaultValueExpression keeps it as written (mariadiff seeds
// 11, 19), also for ALTER … SET DEFAULT.
func TestZeroPaddedDefault(t *testing.T) {
	p := parser.New()
	cat := catalog{}
	all := func(db, name string) bool { return true }
	for _, step := range []struct{ ddl, want string }{
		{"CREATE TABLE `z` (\n  `a` smallint(5) unsigned zerofill DEFAULT 00000,\n  `b` int(11) DEFAULT 0\n)", "00000,0"},
		{"ALTER TABLE z ALTER COLUMN b SET DEFAULT 007", "00000,007"},
		{"ALTER TABLE z MODIFY a smallint(5) unsigned zerofill DEFAULT 00042", "00042,007"},
	} {
		if _, _, err := cat.applyDDL(p, "db", step.ddl, all, nil); err != nil {
			t.Fatalf("%s: %v", step.ddl, err)
		}
		var ds []string
		for _, c := range cat["db.z"].cols {
			ds = append(ds, *c.defaultSQL)
		}
		if got := strings.Join(ds, ","); got != step.want {
			t.Errorf("%s: defaults %s, want %s", step.ddl, got, step.want)
		}
	}
}

// TestRealDefaultAsWritten: a number literal DEFAULT is Debezium's
// defaultValueExpression as written (DefaultValueParserListener:
// REAL_LITERAL / decimalLiteral getText), where the TiDB parser's restore
// formats it anew (1.7976931348623157e+308: mariadiff seed 98), also for
// ALTER … SET DEFAULT; a hexadecimal literal is left to the restore.
func TestRealDefaultAsWritten(t *testing.T) {
	p := parser.New()
	cat := catalog{}
	all := func(db, name string) bool { return true }
	for _, step := range []struct{ ddl, want string }{
		{"CREATE TABLE `r` (\n  `a` double DEFAULT 1.7976931348623157e308,\n  `b` double DEFAULT 1e-300,\n  `c` decimal(5,2) DEFAULT .5,\n  `d` double DEFAULT 2.25\n)",
			"1.7976931348623157e308,1e-300,.5,2.25"},
		{"ALTER TABLE r ALTER COLUMN d SET DEFAULT 1.5E10", "1.7976931348623157e308,1e-300,.5,1.5E10"},
		{"ALTER TABLE r MODIFY b double DEFAULT 12E+3", "1.7976931348623157e308,12E+3,.5,1.5E10"},
	} {
		if _, _, err := cat.applyDDL(p, "db", step.ddl, all, nil); err != nil {
			t.Fatalf("%s: %v", step.ddl, err)
		}
		var ds []string
		for _, c := range cat["db.r"].cols {
			ds = append(ds, *c.defaultSQL)
		}
		if got := strings.Join(ds, ","); got != step.want {
			t.Errorf("%s: defaults %s, want %s", step.ddl, got, step.want)
		}
	}
	for s, want := range map[string]string{"1.5e-3,": "1.5e-3", "0x1F ": "", "1abc": "", "007)": "007", "2.": "2.", "e5": ""} {
		if got := numericLiteral(tokenizeSQL(s), 0); got != want {
			t.Errorf("numericLiteral(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestCreateTableLikeDropsComment: as Debezium's parser, CREATE TABLE …
// LIKE copies the source's columns but not its table comment, also one an
// ALTER TABLE … COMMENT set (mariadiff seed 200).
func TestCreateTableLikeDropsComment(t *testing.T) {
	p := parser.New()
	cat := catalog{}
	all := func(db, name string) bool { return true }
	for _, ddl := range []string{"CREATE TABLE s (k int PRIMARY KEY, v int) COMMENT 'c 0'", "ALTER TABLE s COMMENT = 'tbl 1'", "CREATE TABLE l LIKE s"} {
		if _, _, err := cat.applyDDL(p, "db", ddl, all, nil); err != nil {
			t.Fatalf("%s: %v", ddl, err)
		}
	}
	if got := cat["db.s"].comment; got != "tbl 1" {
		t.Errorf("s: comment %q, want tbl 1", got)
	}
	if l := cat["db.l"]; l.comment != "" || len(l.cols) != 2 {
		t.Errorf("l: comment %q with %d columns, want none with 2", l.comment, len(l.cols))
	}
}
