package columns

import (
	"fmt"
	"testing"

	"github.com/connectd/connectd/connect"
)

// TestMap checks the mappers against values of Debezium's MariaDbConnector
// 3.5.0 capture with these keys (testdata/debezium/mariadb_types_columns.jsonl,
// scenarios/mariadb_types/columns.properties): the SHA-256 hash of ” with
// salt CzQMA0cB5K in a TEXT column and cut to 10 in a VARCHAR(10), "****"
// for column.mask.with.4.chars (NULL included), "hél" for
// column.truncate.to.3.chars of "héllo wörld", and the propagated
// parameters of DECIMAL(10,3).
func TestMap(t *testing.T) {
	r, err := Parse(map[string]string{
		"column.mask.hash.SHA-256.with.salt.CzQMA0cB5K": "db.t.h.*",
		"column.mask.with.4.chars":                      "db.t.m",
		"column.truncate.to.3.chars":                    "db.t.(tr|m)",
		KeyColumnPropagateType:                          "db.t.(d|tr)",
		KeyDatatypePropagateType:                        ".+.DATETIME",
		KeyColumnExcludeList:                            "db.t.x",
		KeyMessageKeyColumns:                            "db.t:b,a;db.u:z",
	})
	if err != nil {
		t.Fatal(err)
	}
	str := connect.Prim(connect.String, true)
	const emptyHash = "7b061bc77caec9afdc6b986ab6c4de894d58006b32ac0f7ea728404a5cf3a9e5"
	if got := r.Map("db.t", str, Source{Name: "h1", TypeName: "text", Length: -1}).Post(""); got != emptyHash {
		t.Errorf("hash of '': %v", got)
	}
	if got := r.Map("db.t", str, Source{Name: "h2", TypeName: "varchar", Length: 10}).Post(""); got != emptyHash[:10] {
		t.Errorf("hash of '' in VARCHAR(10): %v", got)
	}
	// truncate comes first in Debezium's order, so "m" is truncated, not masked
	if m := r.Map("db.t", str, Source{Name: "m", Length: -1}); m.Mask != nil || m.Post("héllo wörld") != "hél" {
		t.Errorf("db.t.m: mask %v", m.Mask)
	}
	if m := r.Map("db.t", str, Source{Name: "tr", Length: -1}); param(m.Schema, "truncateLength") != "3" ||
		param(m.Schema, ParamTypeName) != "" || m.Post("😀😀") != "😀" {
		t.Errorf("db.t.tr: params %v", m.Schema.ParamKeys())
	}
	mask, _ := Parse(map[string]string{"column.mask.with.4.chars": "db.t.m"})
	if m := mask.Map("db.t", str, Source{Name: "m", Length: -1}); m.Mask != "****" || param(m.Schema, "masked") != "true" {
		t.Errorf("mask: %v %v", m.Mask, m.Schema.ParamKeys())
	}
	scale := 3
	dec := r.Map("db.t", connect.Prim(connect.Bytes, true), Source{Name: "d", TypeName: "decimal", Length: 10, Scale: &scale})
	want := map[string]string{ParamTypeName: "DECIMAL", ParamLength: "10", ParamScale: "3", ParamColumnName: "d"}
	for k, v := range want {
		if param(dec.Schema, k) != v {
			t.Errorf("decimal: %s = %q, want %q", k, param(dec.Schema, k), v)
		}
	}
	// a comment is a parameter after the scale, before the name, as
	// Debezium's PropagateSourceTypeToSchemaParameter (mariadiff seed 14)
	dc := r.Map("db.t", connect.Prim(connect.Bytes, true), Source{Name: "d", TypeName: "decimal", Length: 10, Scale: &scale, Comment: "a note"})
	if got := fmt.Sprint(dc.Schema.ParamKeys()); got != "["+ParamTypeName+" "+ParamLength+" "+ParamScale+" "+ParamComment+" "+ParamColumnName+"]" || param(dc.Schema, ParamComment) != "a note" {
		t.Errorf("decimal with a comment: params %s", got)
	}
	if dt := r.Map("db.t", connect.Prim(connect.Int64, true), Source{Name: "c_dt", TypeName: "datetime", Length: -1}); param(dt.Schema, ParamTypeName) != "DATETIME" {
		t.Errorf("datatype.propagate.source.type: %v", dt.Schema.ParamKeys())
	}
	if n := r.Map("db.t", connect.Prim(connect.Int32, true), Source{Name: "n", TypeName: "int", Length: 11}); len(n.Schema.ParamKeys()) != 0 || n.Post != nil {
		t.Errorf("unmatched column mapped: %v", n.Schema.ParamKeys())
	}
	if !r.Excluded("db.t.x") || r.Excluded("db.t.xx") {
		t.Errorf("column.exclude.list is anchored")
	}
	if k := r.KeyColumns("db.t"); len(k) != 2 || k[0] != "b" || k[1] != "a" {
		t.Errorf("message.key.columns of db.t: %v", k)
	}
	if r.KeyColumns("db.v") != nil {
		t.Errorf("message.key.columns of db.v")
	}
	var none *Rules
	if none.Excluded("a.b.c") || none.KeyColumns("a.b") != nil || none.Map("a.b", str, Source{Name: "c"}).Schema != str {
		t.Errorf("nil Rules map something")
	}
	if _, err := Parse(map[string]string{"column.mask.hash.NOPE.with.salt.s": "a"}); err == nil {
		t.Errorf("unknown hash algorithm accepted")
	}
}

func param(s *connect.Schema, k string) string { v, _ := s.Param(k); return v }

// TestListsCaseInsensitive: Debezium compiles column.include.list,
// column.exclude.list, message.key.columns and column.mask.* with
// Pattern.CASE_INSENSITIVE, so a list written in another case than the
// catalog still excludes, keys and masks the column.
func TestListsCaseInsensitive(t *testing.T) {
	r, err := Parse(map[string]string{
		"column.exclude.list": "PUBLIC.Orders.SECRET",
		"message.key.columns": "Public.ORDERS:id",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Excluded("public.orders.secret") {
		t.Error("column.exclude.list PUBLIC.Orders.SECRET does not exclude public.orders.secret")
	}
	if r.Excluded("public.orders.name") {
		t.Error("public.orders.name excluded")
	}
	if got := r.KeyColumns("public.orders"); len(got) != 1 || got[0] != "id" {
		t.Errorf("message.key.columns for public.orders = %v, want [id]", got)
	}
	inc, err := Parse(map[string]string{"column.include.list": "public.ORDERS.Id"})
	if err != nil {
		t.Fatal(err)
	}
	if inc.Excluded("public.orders.id") || !inc.Excluded("public.orders.secret") {
		t.Error("column.include.list public.ORDERS.Id: want id kept, secret left out")
	}
}
