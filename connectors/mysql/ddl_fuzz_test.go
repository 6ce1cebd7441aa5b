package mysql

import (
	"testing"

	"github.com/pingcap/tidb/pkg/parser"
)

// FuzzApplyDDL: any statement the binlog can carry, applied to a catalog
// with a table in it, never panics: it changes the catalog, is ignored, or
// is an error (which the connector reports with the statement).
func FuzzApplyDDL(f *testing.F) {
	for _, s := range []string{
		"CREATE TABLE t (id int PRIMARY KEY, a varchar(10) CHARACTER SET latin1, b decimal(65,30) UNSIGNED ZEROFILL)",
		"ALTER TABLE t ADD COLUMN c enum('x','y') DEFAULT 'x' AFTER id, DROP COLUMN a, RENAME COLUMN b TO bb",
		"ALTER TABLE t MODIFY bb bit(7) NOT NULL, CHANGE id id2 bigint AUTO_INCREMENT",
		"RENAME TABLE t TO u, u TO t", "DROP TABLE IF EXISTS t, x", "TRUNCATE TABLE t",
		"CREATE PROCEDURE p() BEGIN SELECT 1; END", "CREATE EVENT e ON SCHEDULE EVERY 1 HOUR DO DELETE FROM t",
		"CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.id = 1", "GRANT SELECT ON db.* TO 'u'@'%'",
		"REPAIR TABLE t", "OPTIMIZE TABLE t", "CREATE OR REPLACE TABLE t (u uuid, i inet6) WITH SYSTEM VERSIONING",
		"CREATE TABLE `ü t` (`a``b` int, PRIMARY KEY (`a``b`))", "ALTER TABLE t CONVERT TO CHARACTER SET utf8mb4",
	} {
		f.Add(s)
	}
	all := func(db, name string) bool { return true }
	f.Fuzz(func(t *testing.T, ddl string) {
		p := parser.New()
		cat := catalog{}
		if _, _, err := cat.applyDDL(p, "db", "CREATE TABLE t (id int PRIMARY KEY, a varchar(10), b decimal(10,2))", all, nil); err != nil {
			t.Fatal(err)
		}
		cat.applyDDL(p, "db", ddl, all, func(string) string { return "latin1" }) // must not panic
	})
}
