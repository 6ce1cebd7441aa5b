package testenv

import (
	"context"
	"testing"
)

func TestMariaDBStartsWithRowBinlog(t *testing.T) {
	m := MariaDBT(t)
	ctx := context.Background()
	c, err := m.Connect(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for v, want := range map[string]string{"binlog_format": "ROW", "binlog_row_image": "FULL", "log_bin": "1", "time_zone": "+00:00"} {
		r, err := c.Execute("SELECT @@" + v)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := r.GetString(0, 0)
		if got != want {
			t.Errorf("%s = %q, want %q", v, got, want)
		}
	}
}
