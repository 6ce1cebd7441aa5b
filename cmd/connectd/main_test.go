package main

import (
	"net"
	"os"
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

// A taken REST port fails the start before the worker exists (Kafka
// Connect starts its REST server first): before, the worker started its
// embedded broker (and, on a real Kafka, joined the group, making the
// cluster rebalance) and only then failed to bind.
func TestRunBindsRESTBeforeStartingTheWorker(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	err = run([]string{"-o", "listeners=http://" + ln.Addr().String(), "-o", "data.dir=" + dir, "-o", "embedded.kafka.listener=127.0.0.1:0"})
	if err == nil || !strings.Contains(err.Error(), "REST listener") || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("run with the REST port taken: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the worker started before the REST port was bound: data.dir holds %v", entries)
	}
}

// A taken schema registry port fails the start before the worker exists
// too: it used to join the group and start the connectors, then exit on
// the registry's bind (found by a fresh user running two workers).
func TestRunBindsRegistryBeforeStartingTheWorker(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	err = run([]string{"-o", "listeners=http://127.0.0.1:0", "-o", "schema.registry.listener=" + ln.Addr().String(),
		"-o", "data.dir=" + dir, "-o", "embedded.kafka.listener=127.0.0.1:0"})
	if err == nil || !strings.Contains(err.Error(), "schema registry listener") || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("run with the registry port taken: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the worker started before the registry port was bound: data.dir holds %v", entries)
	}
}
