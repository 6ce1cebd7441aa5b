package main

import (
	"strings"
	"testing"
)

// A command after the worker's flags ("connectd -o k=v topics tail T") is
// refused before anything starts: it used to run a worker, which joined the
// group of the brokers given and ignored the command.
func TestRunRefusesTrailingCommand(t *testing.T) {
	err := run([]string{"-o", "bootstrap.servers=127.0.0.1:1", "-o", "listeners=http://127.0.0.1:1", "topics", "tail", "t"})
	if err == nil || !strings.Contains(err.Error(), `unexpected argument "topics"`) {
		t.Fatalf("run with a trailing command: %v", err)
	}
}
