package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/connectd/connectd/connect"
)

var _ connect.SourceQuerier = (*Task)(nil)

// open parses cfgMap and connects to the database (verify's own
// connection).
func (t *Task) open(ctx context.Context, cfgMap map[string]string) (*pgx.Conn, error) {
	var err error
	if t.cfg, err = parseConfig(cfgMap); err != nil {
		return nil, err
	}
	pc, err := t.connConfig()
	if err != nil {
		return nil, fmt.Errorf("postgres: connection config: %w", err)
	}
	conn, err := pgx.ConnectConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect to %s database %q: %w", net.JoinHostPort(t.cfg.host, strconv.Itoa(t.cfg.port)), t.cfg.dbname, err)
	}
	return conn, nil
}

// SourceTable implements connect.SourceQuerier: topic is
// <topic.prefix>.<schema>.<table> of a captured table (the connector's
// naming; a routing transform is the caller's to follow); its key columns
// are message.key.columns' for the table, else its primary key, as the
// record keys.
func (t *Task) SourceTable(ctx context.Context, cfgMap map[string]string, topic string) (string, string, []string, error) {
	conn, err := t.open(ctx, cfgMap)
	if err != nil {
		return "", "", nil, err
	}
	defer conn.Close(context.Background())
	rest, ok := strings.CutPrefix(topic, t.cfg.topicPrefix+".")
	schema, table, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 {
		return "", "", nil, fmt.Errorf("postgres: topic %s is not <topic.prefix>.<schema>.<table> of this connector (topic.prefix %s)", topic, t.cfg.topicPrefix)
	}
	if !t.cfg.included(schema, table) {
		return "", "", nil, fmt.Errorf("postgres: topic %s: the connector does not capture %s.%s", topic, schema, table)
	}
	// The table's columns in table order, and its primary key in key order.
	var cols []string
	rows, err := conn.Query(ctx, `SELECT a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, schema, table)
	if err == nil {
		cols, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		return "", "", nil, fmt.Errorf("postgres: columns of %s.%s: %w", schema, table, err)
	}
	if len(cols) == 0 {
		return "", "", nil, fmt.Errorf("postgres: topic %s: no table %s.%s in database %s", topic, schema, table, t.cfg.dbname)
	}
	if listed := t.cfg.rules.KeyColumns(schema + "." + table); len(listed) > 0 {
		var key []string
		for _, c := range cols { // in table order, as the record key (schema.go)
			for _, l := range listed {
				if c == l {
					key = append(key, c)
				}
			}
		}
		if len(key) > 0 {
			return schema, table, key, nil
		}
	}
	rows, err = conn.Query(ctx, `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
		WHERE i.indrelid = (quote_ident($1) || '.' || quote_ident($2))::regclass AND i.indisprimary ORDER BY array_position(i.indkey::int2[], a.attnum)`, schema, table)
	var key []string
	if err == nil {
		key, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil {
		return "", "", nil, fmt.Errorf("postgres: primary key of %s.%s: %w", schema, table, err)
	}
	return schema, table, key, nil
}

// QuerySource implements connect.SourceQuerier: the SELECT runs in a
// REPEATABLE READ READ ONLY transaction whose snapshot is taken with the
// WAL position returned ({"lsn": the position as a number, as the
// connector's offsets}). Results are read as PostgreSQL's text (the simple
// protocol): integers, numeric, floats (extra_float_digits=1: the shortest
// exact text) become json.Number, booleans bool, text-like types and uuid
// strings; NaN and infinities, and every other type (dates, times, bytea,
// json, arrays, …, whose Debezium encodings are not their text), are an
// error naming the column.
func (t *Task) QuerySource(ctx context.Context, cfgMap map[string]string, query string, emit func([]any) error) (map[string]any, error) {
	conn, err := t.open(ctx, cfgMap)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(context.Background())
	var lsnText string
	// The first statement takes the transaction's snapshot: every change
	// it sees was committed before this WAL position.
	if err := tx.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&lsnText); err != nil {
		return nil, err
	}
	lsn, err := pglogrepl.ParseLSN(lsnText)
	if err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, query, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	defer rows.Close()
	fds := rows.FieldDescriptions()
	for rows.Next() {
		raw := rows.RawValues()
		vals := make([]any, len(raw))
		for i, b := range raw {
			if b == nil {
				continue
			}
			s := string(b)
			switch fds[i].DataTypeOID {
			case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID, pgtype.NumericOID, pgtype.Float4OID, pgtype.Float8OID:
				if _, err := strconv.ParseFloat(s, 64); err != nil || strings.ContainsAny(s, "NnIi") {
					return nil, fmt.Errorf("postgres: column %s is %s: not a number verify can compare", fds[i].Name, s)
				}
				vals[i] = json.Number(s)
			case pgtype.BoolOID:
				vals[i] = s == "t"
			case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID, pgtype.UUIDOID:
				vals[i] = s
			default:
				typ := strconv.FormatUint(uint64(fds[i].DataTypeOID), 10)
				if dt, ok := conn.TypeMap().TypeForOID(fds[i].DataTypeOID); ok {
					typ = dt.Name
				}
				return nil, fmt.Errorf("postgres: column %s is of type %s: the job computes with its Debezium encoding, which verify cannot compare with the database's value yet (numbers, booleans and text only)", fds[i].Name, typ)
			}
		}
		if err := emit(vals); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return map[string]any{"lsn": uint64(lsn)}, nil
}
