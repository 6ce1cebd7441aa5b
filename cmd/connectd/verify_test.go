package main

import (
	"strings"
	"testing"

	"github.com/connectd/connectd/runtime"
)

// The text result gives positions as JSON numbers as stored (an LSN of
// 26483320, not 2.648332e+07) and leaves out the PostgreSQL connector's
// relation history offsets, which describe structures, not positions.
func TestVerifyTextPositions(t *testing.T) {
	var b strings.Builder
	writeVerifyResult(&b, runtime.VerifyResult{Connector: "c", State: runtime.VerifyConsistent,
		SourcePosition: map[string]any{"lsn": float64(26483320)},
		ConnectorOffsets: []map[string]any{
			{"lsn": float64(26483320), "lsn_commit": float64(26483000), "txId": float64(771)},
			{"versions": `[{"commit":26438488,"relation":{"id":16390}}]`},
		}})
	out := b.String()
	for _, want := range []string{`source position {"lsn":26483320}`, `connector offsets [{"lsn":26483320,"lsn_commit":26483000,"txId":771}];`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "versions") || strings.Contains(out, "e+07") {
		t.Errorf("relation history or float notation in the output:\n%s", out)
	}
}
