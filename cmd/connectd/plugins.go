package main

import (
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/connectors/postgres"
)

// plugins returns every connector class this binary ships.
func plugins() *connect.Plugins {
	p := connect.NewPlugins()
	p.RegisterSource(postgres.ClassName, postgres.New, "PostgresConnector", "Postgres")
	return p
}
