package pgdiff

import (
	"fmt"
	"regexp"
	"strings"
)

var plainIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// config draws the connector keys users set most: handling modes,
// tombstones, transaction metadata, skipped operations, include/exclude
// lists written in a different case than the catalog, message.key.columns
// and column masks. The tables created by changes() come later, so an
// include list never names them.
func (g *gen) config() {
	r := g.r
	c := g.w.Config
	c["topic.prefix"] = pick(r, []string{"dbserver1", "dbserver1", "Srv_1"})
	c["snapshot.mode"] = "initial"
	opt := func(key string, p float64, vals ...string) {
		if chance(r, p) {
			c[key] = pick(r, vals)
		}
	}
	opt("decimal.handling.mode", 0.5, "precise", "double", "string")
	opt("time.precision.mode", 0.5, "adaptive", "adaptive_time_microseconds", "connect")
	opt("binary.handling.mode", 0.4, "bytes", "base64", "base64-url-safe", "hex")
	opt("interval.handling.mode", 0.3, "numeric", "string")
	opt("tombstones.on.delete", 0.4, "true", "false")
	opt("provide.transaction.metadata", 0.4, "true", "false")
	opt("skipped.operations", 0.4, "none", "t", "u", "d,t", "c")

	tables := g.tables
	switch k := r.Intn(10); {
	case k < 3:
		var in []string
		for i, t := range tables {
			if i == 0 || chance(r, 0.5) {
				in = append(in, flipCase(r, regexQuote(t.schema)+`\.`+regexQuote(t.name)))
			}
		}
		// the list's order is not the catalog's
		r.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
		c["table.include.list"] = strings.Join(in, ",")
	case k < 4 && len(tables) > 1:
		t := tables[1+r.Intn(len(tables)-1)]
		c["table.exclude.list"] = flipCase(r, regexQuote(t.schema)+`\.`+regexQuote(t.name))
	case k < 5:
		c["schema.include.list"] = flipCase(r, regexQuote(tables[0].schema))
	}
	colRef := func(t *table, col *column) string {
		return regexQuote(t.schema) + `\.` + regexQuote(t.name) + `\.` + regexQuote(col.name)
	}
	plainCols := func(t *table, ok func(*column) bool) []*column {
		var out []*column
		for _, col := range t.cols {
			if !isKey(t, col) && col != t.rowCol && ok(col) {
				out = append(out, col)
			}
		}
		return out
	}
	if chance(r, 0.25) {
		var ex []string
		for _, t := range tables {
			if cs := plainCols(t, func(*column) bool { return true }); len(cs) > 0 && chance(r, 0.6) {
				ex = append(ex, flipCase(r, colRef(t, pick(r, cs))))
			}
		}
		if len(ex) > 0 {
			c["column.exclude.list"] = strings.Join(ex, ",")
		}
	}
	isText := func(col *column) bool {
		return !col.array && (col.typ.sql == "text" || col.typ.sql == "varchar" || col.typ.sql == "varchar(20)")
	}
	if chance(r, 0.2) {
		t := pick(r, tables)
		if cs := plainCols(t, isText); len(cs) > 0 {
			c[fmt.Sprintf("column.mask.with.%d.chars", 1+r.Intn(8))] = colRef(t, pick(r, cs))
		}
	}
	if chance(r, 0.15) {
		t := pick(r, tables)
		if cs := plainCols(t, isText); len(cs) > 0 {
			c[fmt.Sprintf("column.truncate.to.%d.chars", 1+r.Intn(6))] = colRef(t, pick(r, cs))
		}
	}
	if chance(r, 0.2) {
		// message.key.columns: <table regex>:<column>,…; only plain names
		// (the list syntax has no quoting for ':' ',' ';').
		var ents []string
		for _, t := range tables {
			if !plainIdent.MatchString(t.schema) || !plainIdent.MatchString(t.name) {
				continue
			}
			cs := plainCols(t, func(col *column) bool { return plainIdent.MatchString(col.name) && col != t.toastCol })
			if len(cs) == 0 {
				continue
			}
			ents = append(ents, t.schema+"."+t.name+":"+pick(r, cs).name)
		}
		if len(ents) > 0 {
			c["message.key.columns"] = strings.Join(ents, ";")
		}
	}
}
