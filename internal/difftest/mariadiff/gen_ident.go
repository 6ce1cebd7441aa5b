package mariadiff

import (
	"fmt"
	"math/rand"
	"strings"
)

// Identifier pools: mixed case, spaces, hyphens, non-ASCII letters, SQL
// keywords, and plain names (so most workloads also have ordinary tables).
// Every identifier is written backquoted.
var (
	tableNames = []string{"orders", "Order Items", "select", "Größe", "my-table", "CamelCase", "user",
		"t_plain", "Ünïcode", "from", "line items", "customers", "T", "x1", "key"}
	columnNames = []string{"val", "Name", "order", "Größe", "with space", "x-y", "select", "camelCase",
		"ü", "note", "amount", "created_at", "UPPER", "desc", "b", "Ünï", "int"}
	keyNames = []string{"id", "ID", "Key Id", "pk", "näme", "k"}
)

// quote returns a backquoted identifier.
func quote(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// uniqueName picks a name from pool not in used (MariaDB column names are
// case-insensitive), or a numbered one.
func uniqueName(r *rand.Rand, pool []string, used map[string]bool, prefix string) string {
	for i := 0; i < 8; i++ {
		n := pick(r, pool)
		if !used[strings.ToLower(n)] {
			used[strings.ToLower(n)] = true
			return n
		}
	}
	for i := 1; ; i++ {
		n := fmt.Sprintf("%s%d", prefix, i)
		if !used[strings.ToLower(n)] {
			used[strings.ToLower(n)] = true
			return n
		}
	}
}

// flipCase writes s in a different case than the catalog (for filters,
// which Debezium matches case-insensitively), or as is half the time.
func flipCase(r *rand.Rand, s string) string {
	switch r.Intn(6) {
	case 3, 4, 5:
		return s
	case 0:
		return strings.ToUpper(s)
	case 1:
		return strings.ToLower(s)
	}
	var b strings.Builder
	for i, c := range s {
		if i%2 == 0 {
			b.WriteString(strings.ToUpper(string(c)))
		} else {
			b.WriteString(strings.ToLower(string(c)))
		}
	}
	return b.String()
}

// regexQuote escapes s for a Debezium filter list (a Java regex; the list
// is split on commas, which no generated identifier contains).
func regexQuote(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`\.[]{}()*+?^$|-`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
