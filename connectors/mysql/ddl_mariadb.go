package mysql

import (
	"regexp"
	"strconv"
	"strings"

	tidbcharset "github.com/pingcap/tidb/pkg/parser/charset"
)

// MariaDB DDL the TiDB parser does not know.
//
// The TiDB parser speaks MySQL (and TiDB); MariaDB has syntax of its own
// that reaches the binlog verbatim: CREATE OR REPLACE, system-versioned
// tables (WITH SYSTEM VERSIONING, AS ROW START/END, PERIOD FOR
// SYSTEM_TIME), application-time periods (PERIOD FOR p, WITHOUT
// OVERLAPS), Aria and encryption table options (PAGE_CHECKSUM,
// TRANSACTIONAL, ENCRYPTED, …), INVISIBLE and COMPRESSED columns,
// PERSISTENT generated columns, WAIT n / NOWAIT, ALTER ONLINE TABLE,
// RENAME TABLE IF EXISTS and the UUID, INET6 and INET4 types. Debezium's
// MariaDB connector parses them with its own ANTLR grammar
// (MariaDBParser.g4).
//
// connectd rewrites such a statement, token by token, into one the TiDB
// parser accepts and that describes the same columns, and keeps aside what
// the rewrite drops but the column model needs (mariadbDDL): a clause that
// changes nothing in the columns, keys or types the binlog is decoded with
// is removed; a column type TiDB lacks is parsed as a binary string of the
// same width and restored by name afterwards; system versioning is
// remembered because it adds two hidden columns to the binlog's rows.
//
// The other way out, reading the table's definition back from the server
// (SHOW CREATE TABLE or information_schema) when a statement does not
// parse, is wrong while streaming a backlog: the server answers with the
// table as it is now, after every later DDL, not as it was at the binlog
// position being decoded, so the rows between this DDL and the next would
// be decoded with the wrong columns (or the table may be gone). Only the
// statement at that position describes the table at that position.

// mariadbDDL is what rewriting one statement for the TiDB parser kept
// aside.
type mariadbDDL struct {
	// types maps a column name (lower case) declared with a type the TiDB
	// parser lacks to that type ("uuid", "inet6", "inet4").
	types map[string]string
	// charsets maps a column name (lower case) declared with a character
	// set the TiDB parser lacks (ucs2, latin2, …) to that character set.
	charsets map[string]string
	// numeric: the column names (lower case) declared NUMERIC, whose type
	// Debezium's parser names NUMERIC (the TiDB parser reads DECIMAL).
	numeric map[string]bool
	// bitDefaults maps a column name (lower case) declared with a bit
	// literal DEFAULT b'0101' to its digits as written (the TiDB parser
	// drops leading zeros; Debezium's expression keeps them).
	bitDefaults map[string]string
	// boolDefaults maps a column name (lower case) whose DEFAULT is TRUE
	// or FALSE to the word as written: Debezium's defaultValueExpression
	// keeps it (FALSE), where the parser's restore is lower case.
	boolDefaults map[string]string
	// numDefaults maps a column name (lower case) whose DEFAULT is an
	// unsigned number literal to the literal as written: Debezium's
	// expression is its text (DefaultValueParserListener: decimalLiteral
	// and REAL_LITERAL getText), where the parser's restore drops leading
	// zeros (DEFAULT 00000, as MariaDB writes the default of a ZEROFILL
	// column in the CREATE TABLE of CREATE TABLE … AS SELECT: mariadiff
	// seeds 11, 19) and formats a float anew (1.7976931348623157e308 as
	// 1.7976931348623157e+308: seed 98).
	numDefaults map[string]string
	// versioning is +1 when the statement turns system versioning on (WITH
	// / ADD SYSTEM VERSIONING), -1 when it turns it off (DROP SYSTEM
	// VERSIONING), 0 otherwise.
	versioning int
	// rowPeriodColumns: the statement declares the row start/end columns
	// itself (AS ROW START / AS ROW END), so versioning adds no hidden ones.
	rowPeriodColumns bool
}

// mariadbTypes are the MariaDB column types the TiDB parser lacks, with
// the type of the same binlog width it parses instead.
var mariadbTypes = map[string]string{"uuid": "binary(16)", "inet6": "binary(16)", "inet4": "binary(4)",
	// spatial types: the TiDB parser has none
	"geometry": "longblob", "point": "longblob", "linestring": "longblob", "polygon": "longblob",
	"multipoint": "longblob", "multilinestring": "longblob", "multipolygon": "longblob",
	"geometrycollection": "longblob", "geomcollection": "longblob",
	// BOOLEAN/BOOL are TINYINT(1) to the server (information_schema, SHOW
	// CREATE TABLE) and to the TiDB parser, but Debezium's DDL parser types a
	// column declared so in the DDL text BOOLEAN (java.sql.Types.BOOLEAN,
	// Connect boolean), e.g. a table created while streaming
	// (mariadb_fidelity.jsonl); the text is kept as written
	"boolean": "BOOLEAN", "bool": "BOOL"}

// mariadbTableOptions are MariaDB table options that change nothing in the
// column model: <option> [=] <value>.
var mariadbTableOptions = map[string]bool{
	"PAGE_CHECKSUM": true, "TRANSACTIONAL": true, "ENCRYPTED": true, "ENCRYPTION_KEY_ID": true,
	"IETF_QUOTES": true, "PAGE_COMPRESSED": true, "PAGE_COMPRESSION_LEVEL": true, "SEQUENCE": true,
}

// sqlToken is one lexical token of a statement: its text and whether it
// is blank (white space or a comment).
type sqlToken struct {
	text  string
	blank bool
}

// tokenizeSQL splits a statement into tokens: white space and comments,
// quoted strings and identifiers ('…', "…", `…`), words (letters, digits,
// _ and $) and single punctuation characters. Concatenating the tokens
// gives the statement back.
func tokenizeSQL(s string) []sqlToken {
	var out []sqlToken
	word := func(c byte) bool {
		return c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
	}
	for i := 0; i < len(s); {
		j := i + 1
		blank := false
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			for j < len(s) && strings.IndexByte(" \t\n\r\f", s[j]) >= 0 {
				j++
			}
			blank = true
		case c == '#' || c == '-' && strings.HasPrefix(s[i:], "-- "):
			if k := strings.IndexByte(s[i:], '\n'); k >= 0 {
				j = i + k + 1
			} else {
				j = len(s)
			}
			blank = true
		case c == '/' && strings.HasPrefix(s[i:], "/*") && !strings.HasPrefix(s[i:], "/*!"):
			if k := strings.Index(s[i+2:], "*/"); k >= 0 {
				j = i + 2 + k + 2
			} else {
				j = len(s)
			}
			blank = true
		case c == '\'' || c == '"' || c == '`':
			for j < len(s) {
				if s[j] == '\\' && c != '`' {
					j += 2
					continue
				}
				if s[j] == c {
					if j+1 < len(s) && s[j+1] == c {
						j += 2
						continue
					}
					j++
					break
				}
				j++
			}
			j = min(j, len(s))
		case word(c):
			for j < len(s) && word(s[j]) {
				j++
			}
		}
		out = append(out, sqlToken{text: s[i:j], blank: blank})
		i = j
	}
	return out
}

// numberLiteral is an unsigned number literal as MariaDB's lexer reads
// one (DECIMAL_LITERAL 123, 007; REAL_LITERAL 2.25, .5, 2., 1e-300,
// 1.7976931348623157e308).
var numberLiteral = regexp.MustCompile(`^(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?`)

// numericLiteral is the number literal that starts at token i (tokenizeSQL
// splits 1.5e-3 into 1 . 5e - 3), as written, or "" when none starts
// there or it does not end where a token does (1abc, 0x1F).
func numericLiteral(toks []sqlToken, i int) string {
	var b strings.Builder
	for k := i; k < len(toks) && !toks[k].blank && k < i+5; k++ {
		b.WriteString(toks[k].text)
	}
	m := numberLiteral.FindString(b.String())
	n := 0
	for k := i; m != "" && n < len(m); k++ {
		n += len(toks[k].text)
	}
	if n != len(m) {
		return ""
	}
	return m
}

// sameNumber reports whether the parser's restored default d is the
// number literal written: the same value (00000 and 0,
// 1.7976931348623157e308 and 1.7976931348623157e+308).
func sameNumber(d, written string) bool {
	if strings.TrimLeft(d, "0") == strings.TrimLeft(written, "0") {
		return true
	}
	a, err1 := strconv.ParseFloat(d, 64)
	b, err2 := strconv.ParseFloat(written, 64)
	return err1 == nil && err2 == nil && a == b
}

// normalizeMariaDB rewrites the MariaDB-only syntax of one DDL statement
// (see above) so that the TiDB parser accepts it, and returns what the
// rewrite kept aside. A statement without such syntax comes back
// unchanged.
func normalizeMariaDB(ddl string) (string, mariadbDDL) {
	var md mariadbDDL
	toks := tokenizeSQL(ddl)
	var sig []int // indexes of the non-blank tokens
	for i, t := range toks {
		if !t.blank {
			sig = append(sig, i)
		}
	}
	word := func(k int) string { // upper-case text of significant token k, "" past the end
		if k < 0 || k >= len(sig) {
			return ""
		}
		return strings.ToUpper(unquoteIdent(toks[sig[k]].text)) // SHOW CREATE TABLE quotes `PAGE_COMPRESSED`='ON'
	}
	// quoted: significant token k is a quoted identifier (`select`), a
	// name whatever word it spells
	quoted := func(k int) bool { return k >= 0 && k < len(sig) && strings.HasPrefix(toks[sig[k]].text, "`") }
	if len(sig) == 0 {
		return ddl, md
	}
	first := word(0)
	switch first {
	case "CREATE", "ALTER", "DROP", "RENAME", "TRUNCATE":
	default:
		return ddl, md
	}
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.text
	}
	drop := func(ks ...int) {
		for _, k := range ks {
			out[sig[k]] = ""
		}
	}
	dropRange := func(from, to int) { // significant tokens [from, to)
		for k := from; k < to && k < len(sig); k++ {
			out[sig[k]] = ""
		}
	}
	// The statement's kind, after CREATE [OR REPLACE] [TEMPORARY] /
	// ALTER [ONLINE|OFFLINE] [IGNORE].
	k := 1
	if first == "CREATE" && word(1) == "OR" && word(2) == "REPLACE" {
		drop(1, 2) // the statement replaces what exists: as DROP + CREATE in the table model
		k = 3
	}
	if first == "ALTER" && (word(1) == "ONLINE" || word(1) == "OFFLINE") {
		drop(1)
		k = 2
	}
	for word(k) == "TEMPORARY" || word(k) == "IGNORE" {
		k++
	}
	kind := word(k)
	table := kind == "TABLE" && (first == "CREATE" || first == "ALTER")
	if (first == "ALTER" || first == "RENAME") && kind == "TABLE" && word(k+1) == "IF" && word(k+2) == "EXISTS" {
		drop(k+1, k+2) // MariaDB: no error when the table is missing; the table model ignores unknown tables anyway
	}
	// alterSpec replaces the ALTER TABLE specification [from, to) with
	// FORCE (a no-op the parser accepts), keeping the commas around it.
	alterSpec := func(from, to int) {
		dropRange(from, to)
		out[sig[from]] = "FORCE"
	}
	// specEnd is the end of the specification or table element starting
	// at significant token from: the next comma at the same depth, or the
	// closing parenthesis.
	specEnd := func(from int) int {
		d := 0
		for j := from; j < len(sig); j++ {
			switch toks[sig[j]].text {
			case "(":
				d++
			case ")":
				if d == 0 {
					return j
				}
				d--
			case ",", ";":
				if d == 0 {
					return j
				}
			}
		}
		return len(sig)
	}
	depth := 0
	curCol := ""                     // the column whose definition is being read
	inList, listSeen := false, false // depth 1 is a list of table elements (CREATE t (…), ALTER … ADD (…))
	for j := k; j < len(sig); j++ {
		w := word(j)
		if table && w == "(" && word(j-1) == "DEFAULT" {
			// DEFAULT (expression): beyond the TiDB parser for most
			// expressions (DEFAULT (2 * 21)); Debezium's parser has such a
			// column with a default and no default expression
			// (DefaultValueParserListener sets none for '(' expression ')'),
			// which is what DEFAULT NULL gives (mariadiff seeds 4, 65)
			e := j + 1
			for d := 1; e < len(sig); e++ {
				if t := toks[sig[e]].text; t == "(" {
					d++
				} else if t == ")" {
					if d--; d == 0 {
						break
					}
				}
			}
			out[sig[j]] = "NULL"
			dropRange(j+1, e+1)
			j = e
			continue
		}
		switch w {
		case "(":
			depth++
			if depth == 1 && (first == "CREATE" && !listSeen || first == "ALTER" && (word(j-1) == "ADD" || word(j-1) == "COLUMN" || word(j-1) == "EXISTS")) {
				inList, listSeen = true, true
			}
			continue
		case ")":
			depth--
			if depth == 0 {
				inList = false
			}
			continue
		}
		prev, next := word(j-1), word(j+1)
		if table {
			switch {
			case depth == 1 && inList && (prev == "(" || prev == ","):
				curCol = ""
				if isIdentToken(toks[sig[j]].text) && !elementKeywords[w] {
					curCol = unquoteIdent(toks[sig[j]].text)
				}
			case depth == 0 && w == ",":
				curCol = ""
			case first == "ALTER" && depth == 0 && (w == "ADD" || w == "MODIFY" || w == "CHANGE"):
				n := j + 1
				for word(n) == "COLUMN" || word(n) == "IF" || word(n) == "NOT" || word(n) == "EXISTS" {
					n++
				}
				if w == "CHANGE" {
					n++
				}
				if n < len(sig) && isIdentToken(toks[sig[n]].text) && !elementKeywords[word(n)] {
					curCol = unquoteIdent(toks[sig[n]].text)
				}
			}
		}
		switch {
		case w == "NOWAIT" && depth == 0:
			drop(j)
		case w == "WAIT" && depth == 0 && next != "" && next[0] >= '0' && next[0] <= '9':
			drop(j, j+1)
			j++
		case (w == "WITH" || w == "WITHOUT") && next == "SYSTEM" && word(j+2) == "VERSIONING":
			if w == "WITH" && table {
				md.versioning = 1
			}
			drop(j, j+1, j+2)
			j += 2
		case !table:
		case first == "ALTER" && (w == "ADD" || w == "DROP") && next == "SYSTEM" && word(j+2) == "VERSIONING":
			md.versioning = 1
			if w == "DROP" {
				md.versioning = -1
			}
			alterSpec(j, j+3)
			j += 2
		case first == "ALTER" && (w == "ADD" || w == "DROP") && next == "PERIOD" && depth == 0:
			e := specEnd(j)
			alterSpec(j, e)
			j = e - 1
		case first == "ALTER" && w == "ALTER" && depth == 0:
			// ALTER [COLUMN] c SET {VISIBLE|INVISIBLE}
			e := specEnd(j)
			if last := word(e - 1); (last == "VISIBLE" || last == "INVISIBLE") && word(e-2) == "SET" {
				alterSpec(j, e)
				j = e - 1
			}
		case first == "CREATE" && w == "PERIOD" && next == "FOR" && depth == 1:
			// PERIOD FOR p (s, e) as a table element: dropped with its comma
			e := specEnd(j)
			from := j
			if prev == "," {
				from = j - 1
			}
			dropRange(from, e)
			j = e - 1
		case w == "AS" && next == "ROW" && (word(j+2) == "START" || word(j+2) == "END"):
			from := j
			if prev == "ALWAYS" && word(j-2) == "GENERATED" {
				from = j - 2
			}
			md.rowPeriodColumns = true
			dropRange(from, j+3)
			j += 2
		case w == "WITHOUT" && next == "OVERLAPS":
			// key (c, p WITHOUT OVERLAPS): p is a period, not a column
			from := j - 1
			if word(j-2) == "," {
				from = j - 2
			}
			dropRange(from, j+2)
			j++
		case depth == 0 && (mariadbTableOptions[w] && (next == "=" || isOptionValue(toks, sig, j+1)) ||
			w == "ROW_FORMAT" && (next == "PAGE" || next == "=" && word(j+2) == "PAGE")):
			// A MariaDB-only table option (or ROW_FORMAT=PAGE): dropped from
			// CREATE, turned into an empty ALTER spec.
			e := j + 2
			if next == "=" {
				e = j + 3
			}
			if first == "ALTER" {
				alterSpec(j, e)
			} else {
				from := j
				if prev == "," {
					from = j - 1
				} else if word(e) == "," {
					e++
				}
				dropRange(from, e)
			}
			j = e - 1
		case (w == "INVISIBLE" || w == "VISIBLE") && prev != "SET":
			drop(j)
		case w == "COMPRESSED" && prev != "=":
			// a COMPRESSED column keeps its type; COMPRESSED=zlib names the algorithm
			drop(j)
			if next == "=" {
				drop(j+1, j+2)
				j += 2
			}
		case (w == "SET" && (prev == "CHARACTER" || prev == "CHAR") || w == "CHARSET") && next != "":
			// a character set the TiDB parser lacks is parsed as utf8mb4
			// and put back on the column afterwards
			n := j + 1
			if word(n) == "=" {
				n++
			}
			if n >= len(sig) {
				break
			}
			cs := strings.ToLower(unquoteIdent(strings.Trim(toks[sig[n]].text, `'"`)))
			if _, err := tidbcharset.GetCharsetInfo(cs); err != nil && cs != "default" {
				out[sig[n]] = "utf8mb4"
				if curCol != "" && prev != "DEFAULT" && word(j-2) != "DEFAULT" && prev != "TO" && word(j-2) != "TO" {
					if md.charsets == nil {
						md.charsets = map[string]string{}
					}
					md.charsets[strings.ToLower(curCol)] = cs
				}
			}
			j = n
		case w == "COLLATE" && next != "":
			// a collation the TiDB parser lacks (utf8mb4_uca1400_ai_ci, …)
			// changes nothing the binlog is decoded with
			n := j + 1
			if word(n) == "=" {
				n++
			}
			if n >= len(sig) {
				break
			}
			co := strings.ToLower(unquoteIdent(strings.Trim(toks[sig[n]].text, `'"`)))
			if _, err := tidbcharset.GetCollationByName(co); err != nil {
				from := j
				if prev == "DEFAULT" {
					from = j - 1
				}
				dropRange(from, n+1)
			}
			j = n
		case w == "SPATIAL" && (next == "INDEX" || next == "KEY" || next == "("):
			drop(j)
		case w == "IGNORED" || w == "NOT" && next == "IGNORED":
			// ignored indexes (MariaDB 10.6)
			if first == "ALTER" && depth == 0 && word(j-3) == "ALTER" {
				alterSpec(j-3, j+1)
			} else if w == "NOT" {
				drop(j, j+1)
				j++
			} else {
				drop(j)
			}
		case w == "PERSISTENT":
			out[sig[j]] = "STORED"
		case w == "REF_SYSTEM_ID":
			e := j + 2
			if next == "=" {
				e = j + 3
			}
			dropRange(j, e)
			j = e - 1
		case (w == "TRUE" || w == "FALSE") && prev == "DEFAULT" && (curCol != "" || word(j-2) == "SET" && j >= 3):
			col := curCol
			if col == "" { // ALTER [COLUMN] c SET DEFAULT FALSE
				col = unquoteIdent(toks[sig[j-3]].text)
			}
			if md.boolDefaults == nil {
				md.boolDefaults = map[string]string{}
			}
			md.boolDefaults[strings.ToLower(col)] = toks[sig[j]].text
		case prev == "DEFAULT" && numericLiteral(toks, sig[j]) != "" && (curCol != "" || word(j-2) == "SET" && j >= 3):
			col := curCol
			if col == "" { // ALTER [COLUMN] c SET DEFAULT 007
				col = unquoteIdent(toks[sig[j-3]].text)
			}
			if md.numDefaults == nil {
				md.numDefaults = map[string]string{}
			}
			md.numDefaults[strings.ToLower(col)] = numericLiteral(toks, sig[j])
		case w == "B" && prev == "DEFAULT" && strings.HasPrefix(next, "'") && (curCol != "" || word(j-2) == "SET" && j >= 3):
			col := curCol
			if col == "" { // ALTER [COLUMN] c SET DEFAULT b'…'
				col = unquoteIdent(toks[sig[j-3]].text)
			}
			if md.bitDefaults == nil {
				md.bitDefaults = map[string]string{}
			}
			md.bitDefaults[strings.ToLower(col)] = strings.Trim(toks[sig[j+1]].text, "'")
		case w == "NUMERIC" && j > 0 && isIdentToken(toks[sig[j-1]].text) && (!notColumnName[prev] || quoted(j-1)):
			if md.numeric == nil {
				md.numeric = map[string]bool{}
			}
			md.numeric[strings.ToLower(unquoteIdent(toks[sig[j-1]].text))] = true
		case mariadbTypes[strings.ToLower(w)] != "" && isIdentToken(toks[sig[j-1]].text) && (!notColumnName[prev] || quoted(j-1)) &&
			(next == "" || afterType[next]):
			name := unquoteIdent(toks[sig[j-1]].text)
			if md.types == nil {
				md.types = map[string]string{}
			}
			typ := strings.ToLower(w)
			if typ == "bool" {
				typ = "boolean"
			}
			md.types[strings.ToLower(name)] = typ
			out[sig[j]] = mariadbTypes[strings.ToLower(w)]
		}
	}
	return strings.Join(out, ""), md
}

// elementKeywords start a table element or ALTER specification that is
// not a column definition.
var elementKeywords = map[string]bool{"PRIMARY": true, "KEY": true, "INDEX": true, "UNIQUE": true, "CONSTRAINT": true,
	"FOREIGN": true, "FULLTEXT": true, "SPATIAL": true, "CHECK": true, "PERIOD": true, "PARTITION": true, "SYSTEM": true,
	"COLUMN": true, "IF": true, "LIKE": true}

// notColumnName are words before which a word is not a column's type
// (DEFAULT uuid(), ADD COLUMN uuid …, KEY inet6 (…)).
var notColumnName = map[string]bool{"DEFAULT": true, "AS": true, "CHECK": true, "SELECT": true, "RETURNS": true,
	"KEY": true, "INDEX": true, "UNIQUE": true, "CONSTRAINT": true, "REFERENCES": true, "TABLE": true, "COLUMN": true,
	"ON": true, "BY": true, "FOR": true, "TO": true, "AFTER": true, "EXISTS": true, "ADD": true, "DROP": true,
	"MODIFY": true, "CHANGE": true, "RENAME": true, "PRIMARY": true, "FOREIGN": true, "FULLTEXT": true, "SPATIAL": true}

// afterType are the tokens that may follow a column's type: the end of
// the definition or a column attribute.
var afterType = map[string]bool{",": true, ")": true, ";": true, "NOT": true, "NULL": true, "DEFAULT": true,
	"PRIMARY": true, "UNIQUE": true, "KEY": true, "COMMENT": true, "INVISIBLE": true, "VISIBLE": true, "FIRST": true,
	"AFTER": true, "CHECK": true, "REFERENCES": true, "COLLATE": true, "CHARACTER": true, "CHARSET": true,
	"AUTO_INCREMENT": true, "GENERATED": true, "AS": true, "WITH": true, "WITHOUT": true, "CONSTRAINT": true, "ON": true}

// isOptionValue reports whether significant token k is a table option's
// value: a number, a quoted string, YES, NO or DEFAULT.
func isOptionValue(toks []sqlToken, sig []int, k int) bool {
	if k >= len(sig) {
		return false
	}
	s := toks[sig[k]].text
	switch strings.ToUpper(s) {
	case "YES", "NO", "DEFAULT":
		return true
	}
	return s[0] >= '0' && s[0] <= '9' || s[0] == '\'' || s[0] == '"'
}

// isIdentToken reports whether a token can be a column name: a word or a
// `quoted` identifier.
func isIdentToken(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == '`' {
		return true
	}
	c := s[0]
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func unquoteIdent(s string) string {
	if len(s) >= 2 && s[0] == '`' && s[len(s)-1] == '`' {
		return strings.ReplaceAll(s[1:len(s)-1], "``", "`")
	}
	return s
}
