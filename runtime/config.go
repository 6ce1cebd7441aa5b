package runtime

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
)

// WorkerConfig is the worker's properties (Kafka Connect worker names where
// they exist; DESIGN.md section 5).
type WorkerConfig map[string]string

// Worker property defaults.
var workerDefaults = map[string]string{
	"listeners":                         "http://127.0.0.1:8083",
	"bootstrap.servers":                 "",
	"embedded.kafka.listener":           "127.0.0.1:9092",
	"embedded.kafka.sync.writes":        "false",
	"data.dir":                          "./connectd-data",
	"group.id":                          "connectd",
	"key.converter":                     "org.apache.kafka.connect.json.JsonConverter",
	"value.converter":                   "org.apache.kafka.connect.json.JsonConverter",
	"schema.registry.listener":          "127.0.0.1:8081",
	"config.storage.topic":              "connect-configs",
	"offset.storage.topic":              "connect-offsets",
	"status.storage.topic":              "connect-status",
	"jobs.storage.topic":                "connect-jobs",
	"offset.storage.partitions":         "25",
	"status.storage.partitions":         "5",
	"config.storage.replication.factor": "-1",
	"offset.storage.replication.factor": "-1",
	"status.storage.replication.factor": "-1",
	"offset.flush.interval.ms":          "60000",
	"offset.flush.timeout.ms":           "5000",
	"exactly.once.source.support":       "disabled",
	// KIP-458 with KIP-722's default; KIP-158.
	"connector.client.config.override.policy": "All",
	"topic.creation.enable":                   "true",
	// Group membership, as Kafka Connect's distributed worker.
	"session.timeout.ms":    "10000",
	"heartbeat.interval.ms": "3000",
	"rebalance.timeout.ms":  "60000",
	// Rebalancing protocol (KIP-415, KIP-507): Kafka Connect 4.x defaults.
	"connect.protocol":                 "sessioned",
	"scheduled.rebalance.max.delay.ms": "300000",
}

// EmbeddedBroker reports whether the worker runs the embedded Kafka broker
// (no bootstrap.servers).
func (c WorkerConfig) EmbeddedBroker() bool {
	return strings.TrimSpace(c.Get("bootstrap.servers")) == ""
}

// Get returns key's value or its default.
func (c WorkerConfig) Get(key string) string {
	if v, ok := c[key]; ok {
		return v
	}
	return workerDefaults[key]
}

// Int returns key as an int, or an error naming the key.
func (c WorkerConfig) Int(key string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(c.Get(key)))
	if err != nil {
		return 0, fmt.Errorf("worker config %s: %q is not an integer", key, c.Get(key))
	}
	return n, nil
}

// Bool returns key as a bool: "true" or "false" in any case, else an
// error in Kafka's ConfigDef wording for a BOOLEAN (a typo such as "yes"
// must not silently read as false).
func (c WorkerConfig) Bool(key string) (bool, error) {
	switch v := strings.TrimSpace(c.Get(key)); {
	case strings.EqualFold(v, "true"):
		return true, nil
	case strings.EqualFold(v, "false"):
		return false, nil
	default:
		return false, fmt.Errorf("Invalid value %s for configuration %s: Expected value to be either true or false", v, key)
	}
}

// RESTAddr returns host:port of the first listener.
func (c WorkerConfig) RESTAddr() (string, error) {
	l := strings.TrimSpace(strings.Split(c.Get("listeners"), ",")[0])
	u, err := url.Parse(l)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("worker config listeners: %q is not a URL like http://host:port", l)
	}
	return u.Host, nil
}

// RESTScheme returns the scheme of the first listener: "https" for
// https://host:port, else "http".
func (c WorkerConfig) RESTScheme() string {
	l := strings.TrimSpace(strings.Split(c.Get("listeners"), ",")[0])
	if u, err := url.Parse(l); err == nil && strings.EqualFold(u.Scheme, "https") {
		return "https"
	}
	return "http"
}

// Prefixed returns the keys starting with prefix, with the prefix removed.
func (c WorkerConfig) Prefixed(prefix string) map[string]string {
	out := map[string]string{}
	for k, v := range c {
		if strings.HasPrefix(k, prefix) {
			out[strings.TrimPrefix(k, prefix)] = v
		}
	}
	return out
}

// LoadWorkerConfig reads a Java properties file (may be ""), then applies
// CONNECTD_* environment variables (CONNECTD_BOOTSTRAP_SERVERS →
// bootstrap.servers), then the -o key=value overrides, later winning.
func LoadWorkerConfig(path string, environ []string, overrides []string) (WorkerConfig, error) {
	c := WorkerConfig{}
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("worker config: %w", err)
		}
		defer f.Close()
		props, err := ParseProperties(bufio.NewScanner(f))
		if err != nil {
			return nil, fmt.Errorf("worker config %s: %w", path, err)
		}
		for k, v := range props {
			c[k] = v
		}
	}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, "CONNECTD_") {
			continue
		}
		c[strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(k, "CONNECTD_")), "_", ".")] = v
	}
	for _, kv := range overrides {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("worker config: -o %q is not key=value", kv)
		}
		c[strings.TrimSpace(k)] = v
	}
	return c, nil
}

// ParseProperties parses java.util.Properties text: key=value or key:value
// or key value, '#'/'!' comments, backslash line continuation.
func ParseProperties(sc *bufio.Scanner) (map[string]string, error) {
	out := map[string]string{}
	var pending string
	for sc.Scan() {
		line := strings.TrimLeft(sc.Text(), " \t\f")
		if pending == "" && (line == "" || line[0] == '#' || line[0] == '!') {
			continue
		}
		if strings.HasSuffix(line, "\\") && !strings.HasSuffix(line, "\\\\") {
			pending += strings.TrimSuffix(line, "\\")
			continue
		}
		line = pending + line
		pending = ""
		i := strings.IndexAny(line, "=: \t")
		if i < 0 {
			out[line] = ""
			continue
		}
		k := line[:i]
		v := strings.TrimLeft(line[i:], " \t")
		if v != "" && (v[0] == '=' || v[0] == ':') {
			v = strings.TrimLeft(v[1:], " \t")
		}
		out[k] = v
	}
	return out, sc.Err()
}
