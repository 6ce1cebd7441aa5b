package main

import (
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/internal/builtin"
)

// plugins returns every connector class this binary ships.
func plugins() *connect.Plugins { return builtin.Plugins() }
