package pgdiff

import (
	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/internal/difftest"
)

// Record is one change event as a Kafka Connect worker would write it
// (difftest.Record); Header one of its headers.
type (
	Record = difftest.Record
	Header = difftest.Header
)

func readCapture(path string) ([]Record, error) { return difftest.ReadCapture(path) }

func fromConnect(conv *converters.JSONConverter, r *connect.SourceRecord) (Record, error) {
	return difftest.FromConnect(conv, r)
}

func readLines(path string) ([]string, error) { return difftest.ReadLines(path) }
