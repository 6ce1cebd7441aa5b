package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/connectd/connectd/connectors/internal/relational"
)

// pgType is one row of pg_type, what the type mapping needs of it, as
// Debezium's TypeRegistry keeps it.
type pgType struct {
	oid      uint32
	name     string // typname, e.g. "int4", "_int4", "citext"
	typtype  byte   // b base, d domain, e enum, r range, c composite, p pseudo, m multirange
	category byte   // typcategory: 'A' for arrays
	elem     uint32 // array element type (typelem)
	base     uint32 // domain base type (typbasetype)
	typmod   int32  // domain type modifier (typtypmod)
	labels   string // enum labels in sort order, comma-separated (io.debezium.data.Enum "allowed")
}

// typeRegistry maps type OIDs to pg_type rows. It is loaded once per task
// and reloaded when a table refers to an OID it does not know (a type
// created after the task started). Not safe for concurrent use: only the
// reader goroutine uses it.
type typeRegistry struct {
	byOID map[uint32]*pgType
}

const typeQuery = `
SELECT t.oid, t.typname, t.typtype, t.typcategory, t.typelem, t.typbasetype, t.typtypmod,
       COALESCE((SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder) FROM pg_enum e WHERE e.enumtypid = t.oid), '')
FROM pg_type t`

// load (re)reads pg_type.
func (r *typeRegistry) load(ctx context.Context, conn *pgx.Conn) error {
	rows, err := conn.Query(ctx, typeQuery)
	if err != nil {
		return fmt.Errorf("postgres: read pg_type: %w", err)
	}
	m := make(map[uint32]*pgType, 700)
	for rows.Next() {
		var t pgType
		var typtype, cat string
		if err := rows.Scan(&t.oid, &t.name, &typtype, &cat, &t.elem, &t.base, &t.typmod, &t.labels); err != nil {
			rows.Close()
			return fmt.Errorf("postgres: read pg_type: %w", err)
		}
		if typtype != "" {
			t.typtype = typtype[0]
		}
		if cat != "" {
			t.category = cat[0]
		}
		m[t.oid] = &t
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres: read pg_type: %w", err)
	}
	r.byOID = m
	return nil
}

// ensure makes sure every OID in oids is known, reloading pg_type once if
// one is missing.
func (r *typeRegistry) ensure(ctx context.Context, conn *pgx.Conn, oids []uint32) error {
	for _, o := range oids {
		if r.byOID[o] == nil {
			return r.load(ctx, conn)
		}
	}
	return nil
}

// get returns the type of oid, or nil.
func (r *typeRegistry) get(oid uint32) *pgType {
	if r == nil {
		return nil
	}
	return r.byOID[oid]
}

// resolveDomain follows domains down to their base type; a domain's type
// modifier applies when the column has none (Debezium maps a domain column
// as its base type).
func (r *typeRegistry) resolveDomain(oid uint32, typmod int32) (uint32, int32) {
	for i := 0; i < 16; i++ {
		t := r.get(oid)
		if t == nil || t.typtype != 'd' {
			return oid, typmod
		}
		if typmod < 0 {
			typmod = t.typmod
		}
		oid = t.base
	}
	return oid, typmod
}

func (t *pgType) isArray() bool {
	return t != nil && t.category == 'A' && t.elem != 0 && strings.HasPrefix(t.name, "_")
}

// ensureTypes makes sure the registry knows the types of cols (loading or
// reloading pg_type when one is missing).
func (m *typeMapper) ensureTypes(ctx context.Context, conn *pgx.Conn, cols []relational.Column) error {
	if m.reg == nil {
		return nil
	}
	oids := make([]uint32, len(cols))
	for i, c := range cols {
		oids[i] = c.TypeOID
	}
	return m.reg.ensure(ctx, conn, oids)
}
