package jdbc

import (
	"fmt"
	"net/url"
	"strings"
)

// This file is the part of the sink's SQL that other writers of upsert
// tables reuse (the flinklite JSON jobs' JDBC sink), so that the SQL of
// each database is generated in one place.

// DriverDSN turns a JDBC URL (connection.url), user and password into
// the sink's dialect and the DSN of its Go driver: "postgresql" and a pgx
// URL (postgres://user:pass@host:port/db?k=v), or "mysql" (jdbc:mysql://
// and jdbc:mariadb://) and a go-sql-driver/mysql DSN in UTC
// (time_zone='+00:00') with client-side parameter interpolation. Errors:
// connection.url's validation message (not a JDBC URL, unsupported
// database).
func DriverDSN(jdbcURL, user, password string) (dialect, dsn string, err error) {
	dialect, dsn, err = parseJDBCURL(jdbcURL)
	if err != nil {
		return "", "", err
	}
	if dialect == "mysql" {
		dsn, err = mysqlDSN(&config{dsn: dsn, user: user, password: password})
		return dialect, dsn, err
	}
	if user != "" {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", "", err
		}
		u.User = url.UserPassword(user, password)
		dsn = u.String()
	}
	return dialect, dsn, nil
}

// CreateTableSQL is CREATE TABLE IF NOT EXISTS table (defs..., PRIMARY
// KEY (pk...)): table and pk already quoted, defs complete column
// definitions (quoted name, type, nullability); no PRIMARY KEY clause when
// pk is empty.
func CreateTableSQL(table string, defs, pk []string) string {
	defs = append([]string(nil), defs...)
	if len(pk) > 0 {
		defs = append(defs, "PRIMARY KEY ("+strings.Join(pk, ", ")+")")
	}
	return fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (%s)", table, strings.Join(defs, ", "))
}

// MySQLIdent quotes a MySQL/MariaDB identifier with backquotes (a
// backquote inside doubled).
func MySQLIdent(name string) string { return "`" + strings.ReplaceAll(name, "`", "``") + "`" }

// MySQLUpsertSQL is the sink's insert.mode=upsert statement for MySQL and
// MariaDB: INSERT INTO table (names) VALUES (?, …) × rows ON DUPLICATE KEY
// UPDATE c = VALUES(c) for every column after the nKey key columns (a
// no-op assignment of the first key column when there is none), as
// Debezium's MySqlDatabaseDialect.getUpsertStatement. table is quoted,
// names are not; rows × len(names) must stay ≤ 65535 placeholders.
func MySQLUpsertSQL(table string, names []string, nKey, rows int) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = MySQLIdent(n)
	}
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ") + ")"
	tuples := strings.TrimSuffix(strings.Repeat(tuple+", ", rows), ", ")
	q := fmt.Sprintf("INSERT INTO %s (%s) VALUES %s", table, strings.Join(quoted, ", "), tuples)
	if nKey == 0 {
		return q
	}
	var set []string
	for _, n := range quoted[nKey:] {
		set = append(set, fmt.Sprintf("%s = VALUES(%s)", n, n))
	}
	if len(set) == 0 {
		set = append(set, fmt.Sprintf("%s = %s", quoted[0], quoted[0]))
	}
	return q + " ON DUPLICATE KEY UPDATE " + strings.Join(set, ", ")
}

// MySQLDeleteSQL deletes rows rows by their key columns keys (unquoted)
// from table (quoted): DELETE … WHERE k IN (?, …), or WHERE (k1, k2) IN
// ((?, ?), …) for a composite key.
func MySQLDeleteSQL(table string, keys []string, rows int) string {
	quoted := make([]string, len(keys))
	for i, n := range keys {
		quoted[i] = MySQLIdent(n)
	}
	if len(keys) == 1 {
		return fmt.Sprintf("DELETE FROM %s WHERE %s IN (%s)", table, quoted[0], strings.TrimSuffix(strings.Repeat("?, ", rows), ", "))
	}
	tuple := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(keys)), ", ") + ")"
	return fmt.Sprintf("DELETE FROM %s WHERE (%s) IN (%s)", table, strings.Join(quoted, ", "), strings.TrimSuffix(strings.Repeat(tuple+", ", rows), ", "))
}
