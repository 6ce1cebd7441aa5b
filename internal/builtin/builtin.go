// Package builtin lists the plugins the connectd binary ships: its
// connectors, converters, transforms and predicates. cmd/connectd runs
// them; internal/docgen documents them from the same list.
package builtin

import (
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/mysql"
	"github.com/connectd/connectd/connectors/postgres"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/rest"
	"github.com/connectd/connectd/sinks/jdbc"
	"github.com/connectd/connectd/transforms"
)

// Plugins returns every plugin class this binary ships.
func Plugins() *connect.Plugins {
	p := connect.NewPlugins()
	p.RegisterSource(postgres.ClassName, postgres.New, "PostgresConnector", "Postgres")
	p.RegisterSource(mysql.ClassName, mysql.New, mysql.Aliases...)
	p.RegisterSource(mysql.MariaDBClassName, mysql.NewMariaDB, mysql.MariaDBAliases...)
	p.RegisterSink(jdbc.ClassName, jdbc.New, jdbc.Aliases...)
	// JsonConverter is both a Converter and a HeaderConverter in Kafka
	// Connect and is listed under both types.
	for _, typ := range []string{connect.PluginConverter, connect.PluginHeaderConverter} {
		p.RegisterPlugin(connect.PluginDesc{Class: converters.JSONConverterClass, Type: typ, Version: rest.Version}, "JsonConverter")
	}
	p.RegisterPlugin(connect.PluginDesc{Class: converters.AvroConverterClass, Type: connect.PluginConverter, Version: rest.Version}, "AvroConverter")
	transforms.Register(p)
	return p
}
