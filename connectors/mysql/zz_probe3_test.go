package mysql

import (
	"context"
	"os/exec"
	"testing"
	"time"

	gmysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/replication"

	"github.com/connectd/connectd/internal/testenv"
)

func TestZZProbeRows(t *testing.T) {
	m := testenv.MariaDBT(t)
	ctx := context.Background()
	if err := m.Exec(ctx, "", "CREATE DATABASE inventory;\n"); err != nil {
		t.Fatal(err)
	}
	sql := `CREATE TABLE sv (id int PRIMARY KEY, a int) WITH SYSTEM VERSIONING;
INSERT INTO sv VALUES (1, 1);
SET @@system_versioning_alter_history=KEEP;
ALTER TABLE sv ADD COLUMN b int;
INSERT INTO sv (id,a,b) VALUES (2, 1, 5);
CREATE TABLE cmp (id int PRIMARY KEY, x text COMPRESSED, y varchar(100) COMPRESSED, z varchar(200) COMPRESSED=zlib);
CREATE TABLE ty (id int PRIMARY KEY, u uuid, i6 inet6, i4 inet4);
INSERT INTO ty VALUES (1, '123e4567-e89b-12d3-a456-426655440000', '2001:db8::ff00:42:8329', '192.168.1.10');
INSERT INTO ty VALUES (2, NULL, '::ffff:1.2.3.4', NULL);
SET @@system_versioning_alter_history=ERROR;
ALTER TABLE sv DROP SYSTEM VERSIONING;
INSERT INTO sv (id,a,b) VALUES (3, 1, 5);
SELECT * FROM ty;
SELECT HEX(u), HEX(i6), HEX(i4) FROM ty;
`
	out, err := exec.Command("mariadb", "-S", m.Socket, "-uroot", "inventory", "-e", sql).CombinedOutput()
	t.Logf("%s %v", out, err)
	syncer := replication.NewBinlogSyncer(replication.BinlogSyncerConfig{ServerID: 999, Flavor: gmysql.MariaDBFlavor, Host: m.Host, Port: uint16(m.Port), User: m.User, Password: m.Password})
	defer syncer.Close()
	st, err := syncer.StartSync(gmysql.Position{Name: "mysql-bin.000001", Pos: 4})
	if err != nil {
		t.Fatal(err)
	}
	for {
		c, cancel := context.WithTimeout(ctx, 2*time.Second)
		ev, err := st.GetEvent(c)
		cancel()
		if err != nil {
			t.Logf("err %v", err)
			return
		}
		switch e := ev.Event.(type) {
		case *replication.TableMapEvent:
			t.Logf("map %s types=%v meta=%v count=%d", e.Table, e.ColumnType, e.ColumnMeta, e.ColumnCount)
		case *replication.RowsEvent:
			for _, r := range e.Rows {
				t.Logf("  row %#v", r)
			}
		case *replication.QueryEvent:
			t.Logf("query %s", e.Query)
		}
	}
}
