package mysql

import (
	"time"

	"github.com/connectd/connectd/connect"
)

// DebeziumVersion is written to source.version: the Debezium release whose
// output connectd reproduces.
const DebeziumVersion = "3.6.1.Final"

// flavor is the server family a connector class targets.
type flavor int

const (
	flavorMySQL flavor = iota
	flavorMariaDB
)

func (f flavor) className() string {
	if f == flavorMariaDB {
		return MariaDBClassName
	}
	return ClassName
}

// connector is source.connector.
func (f flavor) connector() string {
	if f == flavorMariaDB {
		return "mariadb"
	}
	return "mysql"
}

// Snapshot markers of source.snapshot (io.debezium.connector.SnapshotRecord).
const (
	snapTrue    = "true"
	snapFirst   = "first"
	snapFirstIn = "first_in_data_collection"
	snapLastIn  = "last_in_data_collection"
	snapLast    = "last"
)

var snapshotSchema = connect.NewSchema(connect.String).Name("io.debezium.data.Enum").Version(1).
	Param("allowed", "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental").
	Default("false").Optional().Build()

// sourceSchemaOf is io.debezium.connector.{mysql,mariadb}.Source (version
// 1), field order as Debezium's BinlogSourceInfoStructMaker.
func sourceSchemaOf(f flavor) *connect.Schema {
	return connect.StructSchema().Name("io.debezium.connector."+f.connector()+".Source").Version(1).
		Field("version", connect.Prim(connect.String, false)).
		Field("connector", connect.Prim(connect.String, false)).
		Field("name", connect.Prim(connect.String, false)).
		Field("ts_ms", connect.Prim(connect.Int64, false)).
		Field("snapshot", snapshotSchema).
		Field("db", connect.Prim(connect.String, false)).
		Field("sequence", connect.Prim(connect.String, true)).
		Field("ts_us", connect.Prim(connect.Int64, true)).
		Field("ts_ns", connect.Prim(connect.Int64, true)).
		Field("table", connect.Prim(connect.String, true)).
		Field("server_id", connect.Prim(connect.Int64, false)).
		Field("gtid", connect.Prim(connect.String, true)).
		Field("file", connect.Prim(connect.String, false)).
		Field("pos", connect.Prim(connect.Int64, false)).
		Field("row", connect.Prim(connect.Int32, false)).
		Field("thread", connect.Prim(connect.Int64, true)).
		Field("query", connect.Prim(connect.String, true)).
		Build()
}

var sourceSchemas = map[flavor]*connect.Schema{flavorMySQL: sourceSchemaOf(flavorMySQL), flavorMariaDB: sourceSchemaOf(flavorMariaDB)}

// sourceInfo is what one event's source block says.
type sourceInfo struct {
	server, db, table string
	emptyTable        bool      // table "" rather than null (the schema change event of CREATE/DROP EVENT, as Debezium)
	ts                time.Time // event time (binlog header, seconds) or snapshot start (seconds)
	snapshot          string    // "" = not a snapshot record (written as the default "false")
	serverID          int64     // 0 in the snapshot
	gtid              string    // "" = null
	file              string
	pos               int64
	row               int32
}

// sourceRowField is the index of "row" in the source schema.
const sourceRowField = 14

func (s sourceInfo) build(f flavor) *connect.Struct {
	sch := sourceSchemas[f]
	us := s.ts.UnixMicro()
	var snap, gtid, table any
	if s.table != "" || s.emptyTable {
		table = s.table
	}
	if s.snapshot != "" {
		snap = s.snapshot
	}
	if s.gtid != "" {
		gtid = s.gtid
	}
	return &connect.Struct{Schema: sch, Values: []any{
		DebeziumVersion, f.connector(), s.server, us / 1000, snap, s.db,
		nil, us, us * 1000, table, s.serverID, gtid, s.file, s.pos, s.row, nil, nil,
	}}
}
