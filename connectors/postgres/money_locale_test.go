package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/testenv"
)

// TestMoneyLocale: money values are right under any server lc_monetary
// (issue 16: under de_DE.UTF-8 "1.234,11 €" had been read as 1.23, under
// fr_FR.UTF-8 "1 234,11 €" as ×100). connectd reads money under
// lc_monetary=C on every connection, after checking that the server's
// locale counts money at the same scale; a locale with another scale
// (ja_JP: whole yen) fails every money value with the locale named. The
// values are what was inserted (Debezium itself fails under these locales,
// so there is no capture to compare with). The locales come from
// scripts/setup.sh (localedef).
func TestMoneyLocale(t *testing.T) {
	pg := testenv.PostgresT(t)
	ctx := context.Background()
	for i, loc := range []string{"de_DE.UTF-8", "fr_FR.UTF-8", "ja_JP.UTF-8"} {
		db := []string{"money_de", "money_fr", "money_ja"}[i]
		if err := pg.CreateDatabase(ctx, db); err != nil {
			t.Fatal(err)
		}
		exec(t, pg, db, `ALTER DATABASE `+db+` SET lc_monetary = '`+loc+`'`)
		exec(t, pg, db, `CREATE TABLE m (id int PRIMARY KEY, v money);
INSERT INTO m VALUES (1, 1234.11::numeric::money), (2, (-92233720368547758.08)::numeric::money), (3, 0.5::numeric::money), (4, NULL)`)
		cfg := baseConfig(pg, db)
		cfg["slot.name"], cfg["publication.name"] = db, db
		task := startTask(t, cfg, &memOffsets{})
		if strings.HasPrefix(loc, "ja") {
			// whole yen: no value may come out
			err := pollErr(t, task)
			if !strings.Contains(err.Error(), `lc_monetary "ja_JP.UTF-8"`) || !strings.Contains(err.Error(), "m.v") {
				t.Fatalf("%s: want the task to fail naming the locale and m.v, got %v", loc, err)
			}
			task.Stop()
			continue
		}
		got := pollN(t, task, 4)
		exec(t, pg, db, `INSERT INTO m VALUES (5, 1234567.89::numeric::money)`)
		got = append(got, pollN(t, task, 1)...)
		want := map[int32]string{1: "1234.11", 2: "-92233720368547758.08", 3: "0.50", 4: "<nil>", 5: "1234567.89"}
		for _, r := range got {
			after := r.Value.(*connect.Struct).Get("after").(*connect.Struct)
			id := after.Get("id").(int32)
			s := "<nil>"
			if d, ok := after.Get("v").(connect.Decimal); ok {
				s = plainDecimal(d.Unscaled, d.Scale)
			}
			if s != want[id] {
				t.Errorf("%s: id %d: v = %s, want %s", loc, id, s, want[id])
			}
		}
		task.Stop()
	}
}
