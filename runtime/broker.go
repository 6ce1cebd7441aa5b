package runtime

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kfake"
)

// EmbeddedBroker is the single-node Kafka-protocol broker (franz-go kfake)
// that the worker starts when bootstrap.servers is empty. Its log is
// persisted under <data.dir>/kafka. With syncWrites (the default,
// embedded.kafka.sync.writes=true) every batch is fsynced before it is
// acknowledged. That is required, not only for machine crashes: without it
// we measured acknowledged records missing from the log after a SIGKILL
// (integration TestSIGKILLMidStreamLosesNothing failed 2 of 4 runs under
// CPU load, 0 of 5 with sync), which would break DESIGN.md invariant 1.
type EmbeddedBroker struct {
	cluster *kfake.Cluster
	addr    string
	id      string
}

// StartEmbeddedBroker listens on listener (host:port) and persists under
// dataDir; extra are further kfake options (the listener's SASL and TLS,
// broker_security.go).
func StartEmbeddedBroker(listener, dataDir string, syncWrites bool, extra ...kfake.Opt) (*EmbeddedBroker, error) {
	host, portStr, err := net.SplitHostPort(listener)
	if err != nil {
		return nil, fmt.Errorf("embedded.kafka.listener %q: %w", listener, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil, fmt.Errorf("embedded.kafka.listener %q: bad port", listener)
	}
	dir := filepath.Join(dataDir, "kafka")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	id, err := clusterID(dataDir)
	if err != nil {
		return nil, err
	}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(port),
		kfake.ListenFn(func(network, _ string) (net.Listener, error) {
			return net.Listen(network, net.JoinHostPort(host, strconv.Itoa(port)))
		}),
		kfake.DataDir(dir),
		kfake.ClusterID(id),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(1),
	}
	if syncWrites {
		opts = append(opts, kfake.SyncWrites())
	}
	opts = append(opts, extra...)
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("embedded broker on %s: %w", listener, err)
	}
	addrs := c.ListenAddrs()
	return &EmbeddedBroker{cluster: c, addr: addrs[0], id: id}, nil
}

// Addr returns the broker's host:port.
func (b *EmbeddedBroker) Addr() string { return b.addr }

// ClusterID returns the cluster id (stable across restarts of one data.dir).
func (b *EmbeddedBroker) ClusterID() string { return b.id }

// Close stops the broker, syncing its log.
func (b *EmbeddedBroker) Close() { b.cluster.Close() }

func clusterID(dataDir string) (string, error) {
	p := filepath.Join(dataDir, "cluster.id")
	if b, err := os.ReadFile(p); err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	raw := make([]byte, 11)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	id := hex.EncodeToString(raw)
	return id, os.WriteFile(p, []byte(id+"\n"), 0o644)
}
