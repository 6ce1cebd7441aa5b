package mariadiff

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Deviation is one known difference between connectd and Debezium's
// MariaDbConnector 3.5.0. The suite fails on a difference no deviation
// matches, and on a deviation that matched nothing in a run that included
// one of its Seeds (a deviation that no longer occurs must leave the list).
type Deviation struct {
	ID     string
	Reason string // why a user would accept it
	Doc    string // the Debezium documentation page that shows Debezium's behaviour
	// Seeds are seeds where it occurs; running one of them without a hit
	// fails the suite.
	Seeds []int64
	// Kind and Path (regular expressions; empty matches all) select the
	// diffs; Match, when set, must also hold.
	Kind, Path string
	Match      func(d *Diff) bool

	kind, path *regexp.Regexp
}

const docsMariaDB = "https://debezium.io/documentation/reference/3.5/connectors/mariadb.html"

func (v *Deviation) matches(d *Diff) bool {
	if v.kind == nil {
		v.kind = regexp.MustCompile("^(?:" + v.Kind + ")$")
		v.path = regexp.MustCompile(v.Path)
	}
	if v.Kind != "" && !v.kind.MatchString(d.Kind) {
		return false
	}
	if v.Path != "" && !v.path.MatchString(d.Path) {
		return false
	}
	return v.Match == nil || v.Match(d)
}

// Deviations is the list the suite enforces (the first matching entry
// takes a diff).
var Deviations = []*Deviation{
	// Debezium's own limitations and bugs
	{ID: "debezium-empty-hex-default", Reason: "Debezium limitation: its DDL parser cannot read an empty hex literal DEFAULT X'' (NoViableAltException, or InputMismatchException in ALTER TABLE … ADD COLUMN) and the connector fails; connectd captures the table",
		Doc: docsMariaDB + "#mariadb-schema-history-topic", Seeds: []int64{9, 120},
		Kind: "reference-error", Match: func(d *Diff) bool {
			return (strings.Contains(d.Path, "NoViableAlt") || strings.Contains(d.Path, "InputMismatch") || strings.Contains(d.Path, "couldn't be parsed")) && strings.Contains(d.W.SetupSQL()+d.W.ChangesSQL(), "DEFAULT X''")
		}},
	{ID: "debezium-snapshot-float-digits", Reason: "Debezium bug: its snapshot reads a FLOAT column through the text protocol, which prints 6 significant digits (1234.567 → 1234.57, 16777217 stored as 16777216 → 16777200), so the snapshot's value is not the stored float the binlog has; connectd reads CAST(col AS DOUBLE), the stored float exactly, in the snapshot as in the stream",
		Doc: docsMariaDB + "#mariadb-data-types", Seeds: nil,
		Kind: "value|key", Match: func(d *Diff) bool {
			c := diffColumn(d)
			if d.Op != "r" || !strings.Contains(c, " FLOAT") || strings.Contains(c, "FLOAT(") {
				return false
			}
			got, err1 := strconv.ParseFloat(d.Got, 32)
			want, err2 := strconv.ParseFloat(d.Want, 64)
			return err1 == nil && err2 == nil && strconv.FormatFloat(float64(float32(got)), 'g', 6, 32) == strconv.FormatFloat(want, 'g', 6, 64)
		}},
	{ID: "debezium-year-zero-snapshot", Reason: "Debezium limitation: its snapshot fails on a YEAR value 0 (0000): MariaDB Connector/J's YearColumn.getDefaultText calls java.sql.Date.valueOf, which throws IllegalArgumentException, and the connector stops; connectd captures the row",
		Doc: docsMariaDB + "#mariadb-temporal-types", Seeds: []int64{21, 33, 49},
		Kind: "reference-error", Match: func(d *Diff) bool {
			// thrown where Connector/J decodes a YEAR (not any
			// IllegalArgumentException of a workload with a YEAR column)
			return strings.HasPrefix(d.Path, "java.lang.IllegalArgumentException at java.sql/java.sql.Date.valueOf") &&
				strings.Contains(d.Path, "org.mariadb.jdbc.client.column.YearColumn.getDefaultText") && strings.Contains(d.W.SetupSQL(), " YEAR")
		}},
	{ID: "debezium-connect-time-duration", Reason: "Debezium limitation: with time.precision.mode=connect a TIME value outside a day (negative or ≥ 24 h, e.g. -838:59:59) reaches its Connect Time converter as a java.time.Duration and the connector fails (IllegalArgumentException: Unexpected value for JDBC type 92); connectd emits null for it (the NOT NULL fallback), as Debezium's binlog converter does",
		Doc: docsMariaDB + "#mariadb-temporal-types", Seeds: []int64{90},
		Kind: "reference-error", Match: func(d *Diff) bool {
			return strings.Contains(d.Path, "Unexpected value for JDBC type 92") && d.W.Config["time.precision.mode"] == "connect"
		}},
	{ID: "debezium-binary-default", Reason: "Debezium bug: the schema default of a BINARY/VARBINARY column with a hex literal DEFAULT (X'00', X'FF') is the literal's bytes mangled to text (\\0 and U+FFFD: \"5c30efbfbd\"), which its JsonConverter then writes for a NULL; connectd gives such a column no schema default (a NULL stays null) and keeps the default text as MariaDB reports it",
		Doc: docsMariaDB + "#mariadb-data-types", Seeds: []int64{7, 22},
		Match: func(d *Diff) bool {
			c := diffColumn(d)
			binCol := strings.Contains(c, "BINARY(") || strings.Contains(c, "CHARACTER SET binary")
			switch {
			case strings.HasSuffix(d.Path, ".default"):
				return binCol && d.Got == ""
			case strings.HasSuffix(d.Path, "defaultValueExpression"):
				return strings.Contains(d.Want, "\ufffd") || strings.Contains(d.Want, `\\0`)
			case payloadCol.MatchString(d.Path):
				return binCol && strings.Contains(c, "DEFAULT X'") && d.Got == "null"
			}
			return false
		}},
	{ID: "debezium-excluded-key-column-snapshot", Reason: "Debezium bug: a key column (message.key.columns) that column.exclude.list leaves out of the value is left out of the snapshot's SELECT too, so every snapshot record's key has null there, which its JsonConverter writes as the column's schema default: all rows of the table get the same key (its streamed records have the real value); connectd's snapshot keys carry the row's value, as its streamed keys and Debezium's do",
		Doc: docsMariaDB + "#mariadb-property-message-key-columns", Seeds: []int64{61, 121},
		Kind: "missing|extra|value|key", Match: func(d *Diff) bool {
			// Debezium's equal keys pair the snapshot records of such a
			// table arbitrarily: every difference of them is this one
			return d.Op == "r" && excludedKeyColumn(d.W, d.Table)
		}},
	{ID: "debezium-bits-snapshot-byte-order", Reason: "Debezium bug: its snapshot emits a BIT(n) value of more than 8 bits with its bytes big-endian, as the JDBC driver returns them (b'101000000011' → 0A03), where its binlog events and its documented io.debezium.data.Bits format are little-endian (030A): one value, two encodings on one topic; connectd emits little-endian in both",
		Doc: docsMariaDB + "#mariadb-data-types", Seeds: []int64{169},
		Match: func(d *Diff) bool {
			if d.Op != "r" {
				return false
			}
			switch d.Kind {
			case "missing", "extra":
				return multiByteBitsKey(d.Got + d.Want)
			case "value", "key":
				return strings.Contains(diffColumn(d), "BIT(") && reversedBytes(d.Got, d.Want)
			}
			return false
		}},
	{ID: "debezium-excluded-key-column-stream", Reason: "Debezium limitation: a key column (message.key.columns) that column.exclude.list leaves out of the value fails its streaming (ConnectException: Data row is smaller than a column index: the key is read from the filtered row) and the connector stops; connectd keys such a row by the column's value",
		Doc: docsMariaDB + "#mariadb-property-message-key-columns", Seeds: []int64{183},
		Kind: "reference-error", Match: func(d *Diff) bool {
			if !strings.Contains(d.Path, "Data row is smaller than a column index") || d.W == nil {
				return false
			}
			for _, part := range strings.Split(d.W.Config["message.key.columns"], ";") {
				if tb, _, ok := strings.Cut(part, ":"); ok && excludedKeyColumn(d.W, strings.TrimSpace(tb)) {
					return true
				}
			}
			return false
		}},
	{ID: "debezium-escaped-string-default", Reason: "Debezium bug: a string column's DEFAULT with an escape ('it''s', 'tab\\tnew\\nline') has the SQL text (it''s, tab\\tnew\\nline) as its schema default (and JsonConverter writes that for a NULL); connectd's default is the value (it's, a tab and a newline); in the schema history's defaultValueExpression Debezium keeps backslash escapes as written, connectd the characters",
		Doc: docsMariaDB + "#mariadb-data-types", Seeds: []int64{12, 32, 252},
		Kind: "value|key|history", Match: func(d *Diff) bool {
			switch {
			case strings.HasSuffix(d.Path, ".default"):
				return strings.Contains(d.Want, "''") && !strings.Contains(d.Got, "''") || sqlEscaped(d.Got, d.Want, false)
			case strings.HasSuffix(d.Path, "defaultValueExpression"):
				return sqlEscaped(d.Got, d.Want, false)
			}
			// a NULL written as the column's default by JsonConverter
			if strings.Contains(d.Path, ".payload.") && !strings.Contains(d.Path, "tableChanges") && sqlEscaped(d.Got, d.Want, true) {
				return strings.Contains(diffColumn(d), "DEFAULT '")
			}
			return strings.Contains(d.Path, ".payload.") && strings.Contains(d.Want, "''") && d.Want == strings.ReplaceAll(d.Got, "'", "''") &&
				strings.Contains(diffColumn(d), "DEFAULT '"+strings.ReplaceAll(strings.Trim(d.Got, `"`), "'", "''")+"'")
		}},
	{ID: "snapshot-zoned-fraction", Reason: "Debezium: in the snapshot (JDBC) a TIMESTAMP(n) value's fraction loses its trailing zeros (…00.5Z for TIMESTAMP(2)); connectd writes n digits in the snapshot as in the binlog (…00.50Z); the instant is the same",
		Doc: docsMariaDB + "#mariadb-temporal-types", Seeds: []int64{19, 25, 278},
		Kind: "value|missing|extra", Match: func(d *Diff) bool {
			if d.Kind != "value" {
				// a snapshot record keyed by such a column: its keys
				// differ the same way, so the records do not pair
				return d.Op == "r" && keyHasSchema(d.Got+d.Want, "io.debezium.time.ZonedTimestamp")
			}
			return d.Op == "r" && strings.Contains(diffColumn(d), "TIMESTAMP(") && strings.HasPrefix(d.Got, `"`) && strings.HasSuffix(d.Got, `0Z"`) && strings.TrimRight(strings.TrimSuffix(d.Got, `Z"`), "0") == strings.TrimRight(strings.TrimSuffix(d.Want, `Z"`), "0")
		}},
	// connectd, known and accepted for now
	{ID: "varchar-binary-ddl-type", Reason: "deliberate: a column declared VARCHAR(n) CHARACTER SET binary in DDL read while streaming is VARBINARY(n) in connectd's table model (jdbcType -3, no charset, bytes values), as MariaDB itself makes it (information_schema, SHOW CREATE TABLE) and as a snapshot of the same table gives it in Debezium too; Debezium's streaming parser keeps VARCHAR/12/binary and emits a string (the bytes read as ISO-8859-1), so its topic would change type at the next snapshot; the bytes are the same",
		Doc: docsMariaDB + "#mariadb-data-types", Seeds: []int64{4, 67},
		Match: func(d *Diff) bool {
			if strings.Contains(d.Path, "tableChanges") {
				return d.Got == `"VARBINARY"` && d.Want == `"VARCHAR"` || d.Got == "-3" && d.Want == "12" || d.Got == "null" && d.Want == `"binary"` || d.Got == "" && d.Want == `"binary"`
			}
			if d.Kind != "value" || !strings.Contains(diffColumn(d), "CHARACTER SET binary") {
				return false
			}
			if strings.HasSuffix(d.Path, ".type") {
				return d.Got == `"bytes"` && d.Want == `"string"`
			}
			return sameBytesAsLatin1(d.Got, d.Want)
		}},
	{ID: "schema-change-source-fields", Reason: "gap: in some schema change events and TRUNCATE events Debezium's source.row is not 0 (the row index of the last multi-row event before it, left over: a CREATE TABLE or TRUNCATE after a multi-row event, CREATE TABLE … AS SELECT) and source.table is \"\" (CREATE INDEX); connectd writes 0 and null; no row is at that position",
		Doc: docsMariaDB + "#mariadb-schema-change-topic", Seeds: []int64{3, 12, 117},
		Kind: "value", Match: func(d *Diff) bool {
			if d.Op == "t" {
				return d.Path == "value.payload.source.row" && d.Got == "0"
			}
			return d.Op == "" && (d.Path == "value.payload.source.row" && d.Got == "0" || d.Path == "value.payload.source.table" && d.Got == "null" && d.Want == `""`)
		}},
	{ID: "debezium-year-zero", Reason: "Debezium's wrong value: a YEAR stored as 0000 (a numeric 0 inserted, or a column declared YEAR DEFAULT 0; MariaDB returns 0000 for both) reaches Debezium's binlog client as the byte 0, which it decodes as 1900 (1900 + byte), and its default parser turns DEFAULT 0 into 2000 (the two-digit year rule, which MariaDB applies only to the strings '0'/'00'); connectd emits 0 for both, the value MariaDB has",
		Doc: docsMariaDB + "#mariadb-temporal-types", Seeds: []int64{19, 20, 83},
		Kind: "value|key", Match: func(d *Diff) bool {
			isYear := strings.Contains(diffColumn(d), " YEAR") || d.FieldSchemaName() == "io.debezium.time.Year"
			return isYear && d.Got == "0" && (d.Want == "1900" || d.Want == "2000")
		}},
	{ID: "gtid-set-order", Reason: "format: a GTID set of several domains lists the domains in another order (connectd: as MariaDB's gtid_binlog_pos, by domain; Debezium: its own order); the same set, read back the same way",
		Doc: docsMariaDB + "#mariadb-offsets", Seeds: []int64{6, 7},
		Kind: "offset|history|value", Match: func(d *Diff) bool { return strings.HasSuffix(d.Path, "gtids") && sameSet(d.Got, d.Want) }},
}

// sameBytesAsLatin1: got is a JSON base64 string of bytes and want the
// JSON string of the same bytes read as ISO-8859-1 (one character a byte).
func sameBytesAsLatin1(got, want string) bool {
	var g, w string
	if json.Unmarshal([]byte(got), &g) != nil || json.Unmarshal([]byte(want), &w) != nil {
		return false
	}
	// the bytes as binary.handling.mode writes them: base64 (bytes),
	// base64-url-safe or hex
	for _, dec := range []func(string) ([]byte, error){base64.StdEncoding.DecodeString, base64.URLEncoding.DecodeString, hex.DecodeString} {
		if b, err := dec(g); err == nil && sameRunes(b, w) {
			return true
		}
	}
	return false
}

// sameRunes: w has one character per byte of b, each the byte's code point.
func sameRunes(b []byte, w string) bool {
	r := []rune(w)
	if len(r) != len(b) {
		return false
	}
	for i, c := range r {
		if c != rune(b[i]) {
			return false
		}
	}
	return true
}

// excludedKeyColumn: one of table's message.key.columns is in
// column.exclude.list.
func excludedKeyColumn(w *Workload, table string) bool {
	if w == nil {
		return false
	}
	var excl []*regexp.Regexp
	for _, e := range strings.Split(w.Config["column.exclude.list"], ",") {
		if e = strings.TrimSpace(e); e != "" {
			if re, err := regexp.Compile("(?i)^(?:" + e + ")$"); err == nil {
				excl = append(excl, re)
			}
		}
	}
	for _, part := range strings.Split(w.Config["message.key.columns"], ";") {
		t, cols, ok := strings.Cut(part, ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(t), table) {
			continue
		}
		for _, c := range strings.Split(cols, ",") {
			for _, re := range excl {
				if re.MatchString(table + "." + strings.TrimSpace(c)) {
					return true
				}
			}
		}
	}
	return false
}

// keyField is a field of a record's key schema.
type keyField struct {
	Name       string            `json:"name"`
	Parameters map[string]string `json:"parameters"`
}

// keyFields are the fields of rec's (a record's JSON) key schema.
func keyFields(rec string) []keyField {
	var r struct {
		Key struct {
			Schema struct {
				Fields []keyField `json:"fields"`
			} `json:"schema"`
		} `json:"key"`
	}
	if json.Unmarshal([]byte(rec), &r) != nil {
		return nil
	}
	return r.Key.Schema.Fields
}

// keyHasSchema: rec has a key field of the schema name.
func keyHasSchema(rec, name string) bool {
	for _, f := range keyFields(rec) {
		if f.Name == name {
			return true
		}
	}
	return false
}

// multiByteBitsKey: rec has a key field of io.debezium.data.Bits longer
// than 8 bits.
func multiByteBitsKey(rec string) bool {
	for _, f := range keyFields(rec) {
		if n, err := strconv.Atoi(f.Parameters["length"]); f.Name == "io.debezium.data.Bits" && err == nil && n > 8 {
			return true
		}
	}
	return false
}

// reversedBytes: got and want are JSON base64 strings of the same bytes in
// the opposite order (more than one byte).
func reversedBytes(got, want string) bool {
	var g, w string
	if json.Unmarshal([]byte(got), &g) != nil || json.Unmarshal([]byte(want), &w) != nil {
		return false
	}
	gb, err1 := base64.StdEncoding.DecodeString(g)
	wb, err2 := base64.StdEncoding.DecodeString(w)
	if err1 != nil || err2 != nil || len(gb) != len(wb) || len(gb) < 2 {
		return false
	}
	for i := range gb {
		if gb[i] != wb[len(wb)-1-i] {
			return false
		}
	}
	return true
}

// sqlEscaped: want (JSON) is got (JSON) with the characters MariaDB's
// string literals escape written as escapes (a tab as \t, a newline as
// \n, \r, \0, a backslash as \\; with quotes, ' as ”), each one or
// only some of them (the DDL as written: the CREATE TABLE MariaDB logs for
// CREATE TABLE … AS SELECT writes a tab as itself and a newline as \n,
// mariadiff seed 165), and differs.
func sqlEscaped(got, want string, quotes bool) bool {
	var g, w string
	if json.Unmarshal([]byte(got), &g) != nil || json.Unmarshal([]byte(want), &w) != nil || g == w {
		return false
	}
	escapes := map[byte]string{'\\': `\\`, '\t': `\t`, '\n': `\n`, '\r': `\r`, 0: `\0`}
	if quotes {
		escapes['\''] = "''"
	}
	// ok[i][j]: g[i:] is written as w[j:], each escapable character as
	// itself or as its escape
	ok := make([][]bool, len(g)+1)
	for i := range ok {
		ok[i] = make([]bool, len(w)+1)
	}
	ok[len(g)][len(w)] = true
	for i := len(g) - 1; i >= 0; i-- {
		for j := len(w); j >= 0; j-- {
			if e, esc := escapes[g[i]]; esc && strings.HasPrefix(w[j:], e) && ok[i+1][j+len(e)] {
				ok[i][j] = true
			} else if j < len(w) && g[i] == w[j] && ok[i+1][j+1] {
				ok[i][j] = true
			}
		}
	}
	return ok[0][0]
}

var keyCol = regexp.MustCompile(`^key\.schema\.fields\.\[([^]]*)\]`)

// diffColumn is the generated definition of the column d's path names (in
// the value or the key), or "".
func diffColumn(d *Diff) string {
	if c := d.Column(); c != "" {
		return c
	}
	if m := keyCol.FindStringSubmatch(d.Path); m != nil && d.W != nil {
		return d.W.Columns[d.Table+"."+m[1]]
	}
	return ""
}

// sameSet: two JSON strings of comma-separated sets with the same members.
func sameSet(a, b string) bool {
	if a == b || a == "" || b == "" {
		return false
	}
	split := func(s string) string {
		p := strings.Split(strings.Trim(s, `"`), ",")
		sort.Strings(p)
		return strings.Join(p, ",")
	}
	return split(a) == split(b)
}

// Classify returns the deviation that explains d, or nil.
func Classify(d *Diff) *Deviation {
	for _, v := range Deviations {
		if v.matches(d) {
			return v
		}
	}
	return nil
}
