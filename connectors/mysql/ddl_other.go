package mysql

import "strings"

// otherDDL is what a binlog statement that is not about tables' columns is
// to the schema history.
type otherDDL int

const (
	aboutTables otherDDL = iota // parse it and apply it to the table model
	otherIgnore                 // not DDL for the table model: neither parsed nor stored
	otherStore                  // not parsed; stored in the history (and as a schema change event) with no table change
)

// classifyOther says whether statement q is one of the statements that
// never change a table's columns, and what Debezium's MariaDbConnector
// does with it (reference/debezium scenario mariadb_fidelity, Debezium
// 3.5.0.Final, testdata/debezium/mariadb_fidelity.jsonl.history.jsonl):
// CREATE/DROP EVENT are kept in the schema history and emitted on the
// schema change topic; procedures, functions, triggers, views, users,
// roles, grants and REPAIR/OPTIMIZE/ANALYZE/CHECK TABLE are neither. These
// statements are not parsed, so a body the TiDB parser cannot read
// (CREATE PROCEDURE … BEGIN … END) never stops capture.
func classifyOther(q string) otherDDL {
	var words []string // the first significant tokens, upper case; quoted ones kept quoted
	for _, tk := range tokenizeSQL(q) {
		if tk.blank {
			continue
		}
		words = append(words, strings.ToUpper(tk.text))
		if len(words) == 16 {
			break
		}
	}
	if len(words) == 0 {
		return aboutTables
	}
	switch words[0] {
	case "GRANT", "REVOKE", "REPAIR", "OPTIMIZE", "ANALYZE", "CHECK", "CHECKSUM":
		// REPAIR/OPTIMIZE/ANALYZE/CHECK [NO_WRITE_TO_BINLOG|LOCAL] TABLE …
		return otherIgnore
	case "SET":
		if len(words) > 1 && (words[1] == "PASSWORD" || words[1] == "DEFAULT" && len(words) > 2 && words[2] == "ROLE") {
			return otherIgnore
		}
		return aboutTables
	case "RENAME":
		if len(words) > 1 && words[1] == "USER" {
			return otherIgnore
		}
		return aboutTables
	case "CREATE", "ALTER", "DROP":
	default:
		return aboutTables
	}
	// CREATE [OR REPLACE] [DEFINER = user] [SQL SECURITY …] [ALGORITHM = …]
	// [AGGREGATE] <object>: the object is the first keyword of the list below
	// before any "(" (a table's column list never precedes its name).
	for _, w := range words[1:] {
		switch w {
		case "EVENT":
			return otherStore
		case "PROCEDURE", "FUNCTION", "TRIGGER", "VIEW", "USER", "ROLE", "PACKAGE":
			return otherIgnore
		case "TABLE", "DATABASE", "SCHEMA", "INDEX", "SEQUENCE", "(", "TEMPORARY", "UNIQUE", "FULLTEXT", "SPATIAL", "ONLINE", "IGNORE":
			return aboutTables
		}
	}
	return aboutTables
}
