package postgres

import (
	"context"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"

	"github.com/connectd/connectd/connectors/internal/relational"
)

// loadTable reads a table's columns (attnum order, without dropped and
// generated columns, which pgoutput does not send either), nullability,
// defaults and primary key from the catalog. Defaults are converted with tm,
// whose type registry is refreshed if a column has a type it does not know.
func loadTable(ctx context.Context, conn *pgx.Conn, tm *typeMapper, schema, name string) (*relational.Table, error) {
	rows, err := conn.Query(ctx, `
SELECT a.attname, a.attnum, t.typname, a.atttypid, a.atttypmod, NOT a.attnotnull,
       COALESCE(pg_get_expr(d.adbin, d.adrelid), '')
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = ''
ORDER BY a.attnum`, schema, name)
	if err != nil {
		return nil, fmt.Errorf("postgres: read columns of %s.%s: %w", schema, name, err)
	}
	t := &relational.Table{Schema: schema, Name: name}
	var defaults []string
	for rows.Next() {
		var c relational.Column
		var oid uint32
		var pos int16
		var def string
		if err := rows.Scan(&c.Name, &pos, &c.TypeName, &oid, &c.TypeMod, &c.Optional, &def); err != nil {
			return nil, err
		}
		c.Position, c.TypeOID = int(pos), oid
		t.Columns = append(t.Columns, c)
		defaults = append(defaults, def)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: read columns of %s.%s: %w", schema, name, err)
	}
	if err := tm.ensureTypes(ctx, conn, t.Columns); err != nil {
		return nil, err
	}
	for i, def := range defaults {
		if def != "" {
			t.Columns[i].Default = tm.parseDefault(t.Columns[i], def)
		}
	}
	if len(t.Columns) == 0 {
		return nil, fmt.Errorf("postgres: table %s.%s not found", schema, name)
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
	return t, nil
}

// listTables returns the captured tables (ordinary tables, partitions included,
// not in system schemas, matching table.include.list), sorted by
// "schema.table" as Debezium orders its snapshot.
func listTables(ctx context.Context, conn *pgx.Conn, cfg *config) ([][2]string, error) {
	rows, err := conn.Query(ctx, `
SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'r'`)
	if err != nil {
		return nil, fmt.Errorf("postgres: list tables: %w", err)
	}
	var out [][2]string
	for rows.Next() {
		var s, t string
		if err := rows.Scan(&s, &t); err != nil {
			return nil, err
		}
		if cfg.included(s, t) {
			out = append(out, [2]string{s, t})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: list tables: %w", err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0]+"."+out[i][1] < out[j][0]+"."+out[j][1] })
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
