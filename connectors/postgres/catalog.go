package postgres

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"

	"github.com/connectd/connectd/connectors/internal/relational"
)

// errTableNotFound: the catalog has no table of that name (dropped, or
// renamed since the WAL that named it).
var errTableNotFound = errors.New("table not found")

// tableNotFound is errTableNotFound for schema.name, worded as before
// (postgres: table s.n not found) so that the message names the table once.
type tableNotFound struct{ schema, name string }

func (e tableNotFound) Error() string {
	return fmt.Sprintf("postgres: table %s.%s not found", e.schema, e.name)
}
func (e tableNotFound) Unwrap() error { return errTableNotFound }

// currentName returns the schema and name the catalog now gives the table
// of OID oid (ok=false when it no longer exists).
func currentName(ctx context.Context, conn *pgx.Conn, oid uint32) (schema, name string, ok bool, err error) {
	err = conn.QueryRow(ctx, `SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = $1`, oid).Scan(&schema, &name)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, fmt.Errorf("postgres: name of relation %d: %w", oid, err)
	}
	return schema, name, true, nil
}

// loadTable reads a table's columns (attnum order, without dropped and
// generated columns, which pgoutput does not send either), nullability,
// defaults and primary key (else the columns of its first unique index)
// from the catalog. Defaults are converted with tm,
// whose type registry is refreshed if a column has a type it does not know.
func loadTable(ctx context.Context, conn *pgx.Conn, tm *typeMapper, schema, name string) (*relational.Table, error) {
	f, err := readCatalog(ctx, conn, tm, schema, name)
	if err != nil {
		return nil, err
	}
	return f.table(ctx, conn, tm, schema, name)
}

// readCatalog reads what loadTable converts: the catalog's facts of a
// table, defaults as the expression text pg_get_expr prints.
func readCatalog(ctx context.Context, conn *pgx.Conn, tm *typeMapper, schema, name string) (*catalogFacts, error) {
	rows, err := conn.Query(ctx, `
SELECT a.attname, a.attnum, t.typname, a.atttypid, a.atttypmod, NOT a.attnotnull,
       COALESCE(pg_get_expr(d.adbin, d.adrelid), ''), CASE WHEN $3 THEN COALESCE(col_description(a.attrelid, a.attnum), '') ELSE '' END
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
ORDER BY a.attnum`, schema, name, tm != nil && tm.comments)
	if err != nil {
		return nil, fmt.Errorf("postgres: read columns of %s.%s: %w", schema, name, err)
	}
	t := &catalogFacts{}
	for rows.Next() {
		var c factColumn
		var pos int16
		if err := rows.Scan(&c.Name, &pos, &c.TypeName, &c.TypeOID, &c.TypeMod, &c.Optional, &c.Default, &c.Comment); err != nil {
			return nil, err
		}
		c.Position = int(pos)
		t.Columns = append(t.Columns, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: read columns of %s.%s: %w", schema, name, err)
	}
	if len(t.Columns) == 0 {
		return nil, tableNotFound{schema, name}
	}
	rows, err = conn.Query(ctx, `
SELECT a.attname
FROM pg_index i
JOIN pg_class c ON c.oid = i.indrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) ON true
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
WHERE i.indisprimary AND n.nspname = $1 AND c.relname = $2
ORDER BY k.ord`, schema, name)
	if err != nil {
		return nil, fmt.Errorf("postgres: read primary key of %s.%s: %w", schema, name, err)
	}
	t.PrimaryKey, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: read primary key of %s.%s: %w", schema, name, err)
	}
	if len(t.PrimaryKey) == 0 {
		// no primary key: the first unique index is the key, as Debezium's
		// JdbcConnection.readPrimaryKeyOrUniqueIndexNames (snapshot) and
		// PgOutputMessageDecoder (streaming)
		if t.PrimaryKey, err = uniqueIndexKey(ctx, conn, schema, name); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// relation is one ordinary or partitioned table of the catalog.
type relation struct {
	schema, name string
	partitioned  bool        // relkind 'p': holds no rows itself
	ancestors    [][2]string // partition ancestors, parent first (none unless a partition)
}

// ancestorIncluded reports whether one of r's partition ancestors is captured.
func (r relation) ancestorIncluded(cfg *config) bool {
	for _, a := range r.ancestors {
		if cfg.included(a[0], a[1]) {
			return true
		}
	}
	return false
}

// listRelations returns the captured ordinary and partitioned tables
// (table.include.list and the other filters), sorted by "schema.table".
func listRelations(ctx context.Context, conn *pgx.Conn, cfg *config) ([]relation, error) {
	rows, err := conn.Query(ctx, `
SELECT n.nspname, c.relname, c.relkind = 'p',
       CASE WHEN c.relispartition THEN ARRAY(
         SELECT an.nspname FROM pg_partition_ancestors(c.oid) WITH ORDINALITY AS a(relid, ord)
         JOIN pg_class ac ON ac.oid = a.relid JOIN pg_namespace an ON an.oid = ac.relnamespace
         WHERE a.relid <> c.oid ORDER BY a.ord) ELSE '{}' END,
       CASE WHEN c.relispartition THEN ARRAY(
         SELECT ac.relname FROM pg_partition_ancestors(c.oid) WITH ORDINALITY AS a(relid, ord)
         JOIN pg_class ac ON ac.oid = a.relid
         WHERE a.relid <> c.oid ORDER BY a.ord) ELSE '{}' END
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p')`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list tables: %w", err)
	}
	var out []relation
	for rows.Next() {
		var r relation
		var ns, names []string
		if err := rows.Scan(&r.schema, &r.name, &r.partitioned, &ns, &names); err != nil {
			return nil, err
		}
		if !cfg.included(r.schema, r.name) {
			continue
		}
		for i := range ns {
			r.ancestors = append(r.ancestors, [2]string{ns[i], names[i]})
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list tables: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].schema+"."+out[i].name < out[j].schema+"."+out[j].name })
	return out, nil
}

// listTables returns the tables the snapshot reads, sorted by
// "schema.table" as Debezium orders its snapshot. They are the tables whose
// names the stream's Relation messages carry, so that snapshot and stream
// records of a row go to the same topic and no row is read twice:
//
//   - publish_via_partition_root off (PostgreSQL's and Debezium's default):
//     ordinary tables and leaf partitions, each to its own topic; a
//     partitioned table has no rows of its own and is not read.
//   - on: partitioned tables (SELECT from the root returns the rows of all
//     its partitions) and ordinary tables; a partition whose ancestor is
//     captured is not read again (the root's rows already include it).
func listTables(ctx context.Context, conn *pgx.Conn, cfg *config) ([][2]string, error) {
	rels, err := listRelations(ctx, conn, cfg)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	for _, r := range rels {
		if cfg.viaRoot && !r.ancestorIncluded(cfg) || !cfg.viaRoot && !r.partitioned {
			out = append(out, [2]string{r.schema, r.name})
		}
	}
	return out, nil
}

// publicationTables returns the tables a filtered publication lists: the
// captured tables, a partitioned table standing for its partitions (PostgreSQL
// publishes the partitions of a listed partitioned table implicitly, also the
// ones created or attached later, so they are captured without a restart)
// and a partition listed only when no ancestor is.
func publicationTables(ctx context.Context, conn *pgx.Conn, cfg *config) ([][2]string, error) {
	rels, err := listRelations(ctx, conn, cfg)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	for _, r := range rels {
		if !r.ancestorIncluded(cfg) {
			out = append(out, [2]string{r.schema, r.name})
		}
	}
	return out, nil
}

// uniqueIndexKey returns the columns of a table's first unique index (by
// index name, columns in index order), which Debezium's pgoutput decoder
// uses as the key of a table without primary key ("Primary keys are not
// defined for table …, defaulting to unique indices"). nil when there is none.
func uniqueIndexKey(ctx context.Context, conn *pgx.Conn, schema, name string) ([]string, error) {
	rows, err := conn.Query(ctx, `
SELECT ic.relname, a.attname
FROM pg_index i
JOIN pg_class c ON c.oid = i.indrelid
JOIN pg_class ic ON ic.oid = i.indexrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) ON true
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
WHERE i.indisunique AND n.nspname = $1 AND c.relname = $2
ORDER BY ic.relname, k.ord`, schema, name)
	if err != nil {
		return nil, fmt.Errorf("postgres: read unique indexes of %s.%s: %w", schema, name, err)
	}
	defer rows.Close()
	var first string
	var cols []string
	for rows.Next() {
		var idx, col string
		if err := rows.Scan(&idx, &col); err != nil {
			return nil, err
		}
		if first == "" {
			first = idx
		}
		if idx == first {
			cols = append(cols, col)
		}
	}
	return cols, rows.Err()
}
