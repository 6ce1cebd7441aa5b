package mariadiff

import (
	"fmt"
	"regexp"
	"strings"
)

var plainIdent = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// config draws the connector keys users set: handling modes, tombstones,
// skipped operations, schema change events, include/exclude lists written
// in a different case than the catalog, message.key.columns, column
// masks/truncation/hashing, history storage filters and the shipped
// TinyIntOneToBooleanConverter. The tables created by changes() come
// later, so an include list never names them.
func (g *gen) config() {
	r := g.r
	c := g.w.Config
	c["topic.prefix"] = pick(r, []string{"dbserver1", "dbserver1", "Srv_1"})
	c["snapshot.mode"] = "initial"
	c["database.include.list"] = regexQuote(g.w.DB)
	opt := func(key string, p float64, vals ...string) {
		if chance(r, p) {
			c[key] = pick(r, vals)
		}
	}
	opt("decimal.handling.mode", 0.5, "precise", "double", "string")
	opt("time.precision.mode", 0.4, "adaptive_time_microseconds", "connect")
	opt("bigint.unsigned.handling.mode", 0.3, "long", "precise")
	opt("binary.handling.mode", 0.4, "bytes", "base64", "base64-url-safe", "hex")
	opt("tombstones.on.delete", 0.4, "true", "false")
	opt("skipped.operations", 0.4, "none", "t", "u", "d", "c", "d,t")
	opt("include.schema.changes", 0.3, "true", "false")
	opt("enable.time.adjuster", 0.2, "true", "false")
	opt("schema.history.internal.store.only.captured.tables.ddl", 0.2, "true", "false")
	opt("event.deserialization.failure.handling.mode", 0.1, "fail")

	db := regexQuote(g.w.DB)
	tables := g.tables
	switch k := r.Intn(10); {
	case k < 3:
		var in []string
		for i, t := range tables {
			if i == 0 || chance(r, 0.5) {
				in = append(in, flipCase(r, db+`\.`+regexQuote(t.name)))
			}
		}
		r.Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
		c["table.include.list"] = strings.Join(in, ",")
	case k < 4 && len(tables) > 1:
		t := tables[1+r.Intn(len(tables)-1)]
		c["table.exclude.list"] = flipCase(r, db+`\.`+regexQuote(t.name))
	case k < 5:
		// the database list in another case
		c["database.include.list"] = flipCase(r, db)
	}
	colRef := func(t *table, col *column) string {
		return db + `\.` + regexQuote(t.name) + `\.` + regexQuote(col.name)
	}
	if chance(r, 0.2) {
		var ex []string
		for _, t := range tables {
			if cs := g.plainCols(t); len(cs) > 0 && chance(r, 0.6) {
				ex = append(ex, flipCase(r, colRef(t, pick(r, cs))))
			}
		}
		if len(ex) > 0 {
			c["column.exclude.list"] = strings.Join(ex, ",")
		}
	}
	textCols := func(t *table) []*column {
		var out []*column
		for _, col := range g.plainCols(t) {
			if col.typ.text {
				out = append(out, col)
			}
		}
		return out
	}
	if chance(r, 0.2) {
		t := pick(r, tables)
		if cs := textCols(t); len(cs) > 0 {
			c[fmt.Sprintf("column.mask.with.%d.chars", 1+r.Intn(8))] = colRef(t, pick(r, cs))
		}
	}
	if chance(r, 0.15) {
		t := pick(r, tables)
		if cs := textCols(t); len(cs) > 0 {
			c[fmt.Sprintf("column.truncate.to.%d.chars", 1+r.Intn(6))] = colRef(t, pick(r, cs))
		}
	}
	if chance(r, 0.1) {
		t := pick(r, tables)
		if cs := textCols(t); len(cs) > 0 {
			c["column.mask.hash.SHA-256.with.salt.salty"] = colRef(t, pick(r, cs))
		}
	}
	if chance(r, 0.1) {
		t := pick(r, tables)
		if cs := g.plainCols(t); len(cs) > 0 {
			c["column.propagate.source.type"] = colRef(t, pick(r, cs))
		}
	}
	if chance(r, 0.15) {
		// message.key.columns: <db>.<table>:<column>,…; only plain names
		// (the list syntax has no quoting for ':' ',' ';').
		var ents []string
		for _, t := range tables {
			if !plainIdent.MatchString(g.w.DB) || !plainIdent.MatchString(t.name) {
				continue
			}
			var cs []*column
			for _, col := range g.plainCols(t) {
				if plainIdent.MatchString(col.name) && !col.typ.noDefault {
					cs = append(cs, col)
				}
			}
			if len(cs) == 0 {
				continue
			}
			ents = append(ents, g.w.DB+"."+t.name+":"+pick(r, cs).name)
		}
		if len(ents) > 0 {
			c["message.key.columns"] = strings.Join(ents, ";")
		}
	}
	if chance(r, 0.15) {
		c["converters"] = "boolean"
		c["boolean.type"] = "io.debezium.connector.binlog.converters.TinyIntOneToBooleanConverter"
		if chance(r, 0.5) {
			c["boolean.selector"] = db + `\..*`
		}
	}
}
