package mysql

import (
	"strconv"

	"github.com/connectd/connectd/connect"
)

// Schema change events (include.schema.changes): one per DDL on the
// <topic.prefix> topic, keyed by database name, as Debezium's
// BinlogSchemaChangeEventEmitter / SchemaChangeEvent.

func strArray(optional bool) *connect.Schema {
	b := connect.NewSchema(connect.Array).Items(connect.Prim(connect.String, false))
	if optional {
		b.Optional()
	}
	return b.Build()
}

var (
	schemaColumnSchema = connect.StructSchema().Name("io.debezium.connector.schema.Column").Version(1).
				Field("name", connect.Prim(connect.String, false)).
				Field("jdbcType", connect.Prim(connect.Int32, false)).
				Field("nativeType", connect.Prim(connect.Int32, true)).
				Field("typeName", connect.Prim(connect.String, false)).
				Field("typeExpression", connect.Prim(connect.String, true)).
				Field("charsetName", connect.Prim(connect.String, true)).
				Field("length", connect.Prim(connect.Int32, true)).
				Field("scale", connect.Prim(connect.Int32, true)).
				Field("position", connect.Prim(connect.Int32, false)).
				Field("optional", connect.Prim(connect.Boolean, true)).
				Field("autoIncremented", connect.Prim(connect.Boolean, true)).
				Field("generated", connect.Prim(connect.Boolean, true)).
				Field("comment", connect.Prim(connect.String, true)).
				Field("defaultValueExpression", connect.Prim(connect.String, true)).
				Field("enumValues", strArray(true)).
				Build()
	schemaTableSchema = connect.StructSchema().Name("io.debezium.connector.schema.Table").Version(1).Optional().
				Field("defaultCharsetName", connect.Prim(connect.String, true)).
				Field("primaryKeyColumnNames", strArray(true)).
				Field("columns", connect.NewSchema(connect.Array).Items(schemaColumnSchema).Build()).
				Field("comment", connect.Prim(connect.String, true)).
				Build()
	schemaChangeSchema = connect.StructSchema().Name("io.debezium.connector.schema.Change").Version(1).
				Field("type", connect.Prim(connect.String, false)).
				Field("id", connect.Prim(connect.String, false)).
				Field("table", schemaTableSchema).
				Build()
)

type schemaChangeSchemas struct{ key, value *connect.Schema }

var schemaChangeSchemasOf = map[flavor]schemaChangeSchemas{}

func init() {
	for _, f := range []flavor{flavorMySQL, flavorMariaDB} {
		ns := "io.debezium.connector." + f.connector() + "."
		schemaChangeSchemasOf[f] = schemaChangeSchemas{
			key: connect.StructSchema().Name(ns+"SchemaChangeKey").Version(1).
				Field("databaseName", connect.Prim(connect.String, false)).Build(),
			value: connect.StructSchema().Name(ns+"SchemaChangeValue").Version(1).
				Field("source", sourceSchemas[f]).
				Field("ts_ms", connect.Prim(connect.Int64, false)).
				Field("databaseName", connect.Prim(connect.String, true)).
				Field("schemaName", connect.Prim(connect.String, true)).
				Field("ddl", connect.Prim(connect.String, true)).
				Field("tableChanges", connect.NewSchema(connect.Array).Items(schemaChangeSchema).Build()).
				Build(),
		}
	}
}

func int32Ptr(p *int) any {
	if p == nil {
		return nil
	}
	return int32(*p)
}

// emptyNil is s, or nil for "".
func emptyNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func strOrNil(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func changeStruct(ch tableChange) *connect.Struct {
	st := connect.NewStruct(schemaChangeSchema).Put("type", ch.typ).
		Put("id", strconv.Quote(ch.db)+"."+strconv.Quote(ch.name))
	if ch.table == nil {
		return st
	}
	cols := make([]any, 0, len(ch.table.cols))
	for i := range ch.table.cols {
		c := &ch.table.cols[i]
		d := dbzColumnOf(c)
		var enums any
		if len(d.enumValues) > 0 {
			e := make([]any, len(d.enumValues))
			for i, v := range d.enumValues {
				e[i] = v
			}
			enums = e
		}
		cols = append(cols, connect.NewStruct(schemaColumnSchema).
			Put("name", c.Name).Put("jdbcType", int32(d.jdbcType)).Put("typeName", d.typeName).
			Put("typeExpression", d.typeName).Put("charsetName", strOrNil(d.charset)).
			Put("length", int32Ptr(d.length)).Put("scale", int32Ptr(d.scale)).Put("position", int32(c.Position)).
			Put("optional", c.Optional).Put("autoIncremented", c.autoInc).Put("generated", c.autoInc).
			Put("comment", strOrNil(d.comment)).Put("defaultValueExpression", strOrNil(d.defaultExp)).
			Put("enumValues", enums))
	}
	pk := make([]any, len(ch.table.PrimaryKey))
	for i, k := range ch.table.PrimaryKey {
		pk[i] = k
	}
	return st.Put("table", connect.NewStruct(schemaTableSchema).Put("defaultCharsetName", charsetOr(ch.table.charset)).
		Put("primaryKeyColumnNames", pk).Put("columns", cols).Put("comment", emptyNil(ch.table.comment)))
}

// schemaChangeRecord is the schema change event of one DDL statement.
func (t *Task) schemaChangeRecord(src sourceInfo, db, ddl string, changes []tableChange, off map[string]any) *connect.SourceRecord {
	sc := schemaChangeSchemasOf[t.flavor]
	tcs := make([]any, len(changes))
	for i, ch := range changes {
		tcs[i] = changeStruct(ch)
	}
	return &connect.SourceRecord{
		SourcePartition: t.partition, SourceOffset: off, Topic: t.cfg.topicPrefix,
		KeySchema: sc.key, Key: connect.NewStruct(sc.key).Put("databaseName", db),
		ValueSchema: sc.value,
		Value: connect.NewStruct(sc.value).Put("source", src.build(t.flavor)).Put("ts_ms", t.now().UnixMilli()).
			Put("databaseName", db).Put("ddl", ddl).Put("tableChanges", tcs),
	}
}
