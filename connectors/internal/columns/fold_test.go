package columns

import "testing"

// TestCompileCIFoldsASCIIOnly: Java's Pattern.CASE_INSENSITIVE (without
// UNICODE_CASE) folds US-ASCII letters only, as Debezium compiles its
// include/exclude lists.
func TestCompileCIFoldsASCIIOnly(t *testing.T) {
	for _, c := range []struct {
		pat, s string
		want   bool
	}{
		{`public\.ünïcode_3\.amount`, "public.Ünïcode_3.amount", false},
		{`public\.ünïcode_3\.amount`, "PUBLIC.ünïcode_3.AMOUNT", true},
		{`public\.t\d+`, "Public.T12", true},
		{`public\.t\D`, "public.tx", true},
		{`public\.t\D`, "public.t1", false},
		{`[a-c]x`, "Bx", true},
		{`[A-C]x`, "bX", true},
		{`[^a]x`, "Ax", false},
		{`[[:alpha:]]+`, "ABC", true},
		{`(?:inv|x)\.customers`, "INV.Customers", true},
		{`\p{Lu}b`, "ÜB", true},
		{`größe`, "GRößE", true},
		{`größe`, "GRÖßE", false},
	} {
		re, err := CompileCI(c.pat, true)
		if err != nil {
			t.Fatalf("%s: %v", c.pat, err)
		}
		if got := re.MatchString(c.s); got != c.want {
			t.Errorf("%q matches %q: %v, want %v (folded %q)", c.pat, c.s, got, c.want, FoldASCII(c.pat))
		}
	}
}
