package runtime

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCompareJobRows: the source's rows and a result topic's are compared
// by key with numbers exact (12.50 = 12.5, 1e2 = 100) and object keys in
// any order; a wrong value is different (naming its columns), a key only
// on one side missing or extra, and examples are capped per kind.
func TestCompareJobRows(t *testing.T) {
	side := func(rows ...[2]string) map[string]jobRow {
		m := map[string]jobRow{}
		for _, r := range rows {
			jr, err := newJobRow([]byte(r[0]), []byte(r[1]))
			if err != nil {
				t.Fatal(err)
			}
			m[jr.key] = jr
		}
		return m
	}
	src := side(
		[2]string{`{"id":1}`, `{"id":1,"total":12.50,"n":100,"name":"a"}`},
		[2]string{`{"id":2}`, `{"id":2,"total":1,"n":1,"name":"b"}`},
		[2]string{`{"id":3}`, `{"id":3,"total":null,"n":0,"name":"c"}`},
		[2]string{`{"id":4}`, `{"id":4,"total":1,"n":1,"name":"d"}`},
		[2]string{`{"id":5}`, `{"id":5,"total":1,"n":1,"name":"e"}`},
	)
	dst := side(
		[2]string{`{"id":1.0}`, `{"name":"a","n":1e2,"total":12.5,"id":1}`}, // equal
		[2]string{`{"id":2}`, `{"id":2,"total":1.01,"n":1,"name":"B"}`},     // different: total, name
		[2]string{`{"id":3}`, `{"id":3,"total":0,"n":0,"name":"c"}`},        // different: null ≠ 0
		[2]string{`{"id":9}`, `{"id":9,"total":1,"n":1,"name":"z"}`},        // extra
	)
	tr := compareJobRows(src, dst, 1)
	if tr.SourceRows != 5 || tr.TopicKeys != 4 || tr.Missing != 2 || tr.Extra != 1 || tr.Different != 2 {
		t.Fatalf("%+v", tr)
	}
	kinds := map[string][]VerifyExample{}
	for _, ex := range tr.Examples {
		kinds[ex.Kind] = append(kinds[ex.Kind], ex)
	}
	if len(kinds["different"]) != 1 || len(kinds["missing"]) != 1 || len(kinds["extra"]) != 1 {
		t.Fatalf("examples (one per kind): %+v", tr.Examples)
	}
	if ex := kinds["different"][0]; string(ex.Key) != `{"id":2}` || strings.Join(ex.Columns, ",") != "name,total" || ex.Source == nil || ex.Topic == nil {
		t.Fatalf("different: %+v", ex)
	}
	if ex := kinds["missing"][0]; string(ex.Key) != `{"id":4}` || ex.Topic != nil || !json.Valid(ex.Source) {
		t.Fatalf("missing: %+v", ex)
	}
	if ex := kinds["extra"][0]; string(ex.Key) != `{"id":9}` || ex.Source != nil {
		t.Fatalf("extra: %+v", ex)
	}
}

// TestUnfollowable: what makes a connector's topics hold other rows than
// its tables is named; header-only transforms and precise decimals are
// followed.
func TestUnfollowable(t *testing.T) {
	for _, c := range []struct {
		conn map[string]string
		want string
	}{
		{map[string]string{"connector.class": "x", "decimal.handling.mode": "precise"}, ""},
		{map[string]string{"transforms": "h", "transforms.h.type": "org.apache.kafka.connect.transforms.InsertHeader"}, ""},
		{map[string]string{"transforms": "h, unwrap", "transforms.h.type": "org.apache.kafka.connect.transforms.InsertHeader",
			"transforms.unwrap.type": "io.debezium.transforms.ExtractNewRecordState"}, "transform unwrap (io.debezium.transforms.ExtractNewRecordState)"},
		{map[string]string{"transforms": "route", "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter"}, "transform route"},
		{map[string]string{"column.exclude.list": "public.t.secret", "column.mask.with.5.chars": "public.t.card"}, "column.exclude.list, column.mask.with.5.chars"},
		{map[string]string{"column.exclude.list": ""}, ""},
		{map[string]string{"decimal.handling.mode": "double"}, "decimal.handling.mode=double"},
	} {
		got := (&verifyEnv{conn: c.conn}).unfollowable()
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%v: %q, want %q", c.conn, got, c.want)
		}
	}
}
