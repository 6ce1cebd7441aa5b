package runtime

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Per-connector client overrides (Kafka Connect KIP-458): a source
// connector's "producer.override.<key>" keys change its tasks' producer and
// "admin.override.<key>" its admin client, as far as the worker's
// connector.client.config.override.policy permits.

// Prefixes of the client override keys in a connector config.
const (
	ProducerOverridePrefix = "producer.override."
	AdminOverridePrefix    = "admin.override."
	ConsumerOverridePrefix = "consumer.override."
)

// Override policies (connector.client.config.override.policy), by their
// Kafka Connect aliases; the default is All, as in Kafka Connect 3.0+
// (KIP-722).
const (
	OverridePolicyAll       = "All"
	OverridePolicyNone      = "None"
	OverridePolicyPrincipal = "Principal"
)

// principalOverrides are the only keys the Principal policy lets a
// connector override (PrincipalConnectorClientConfigOverridePolicy).
var principalOverrides = map[string]bool{"sasl.jaas.config": true, "sasl.mechanism": true, "security.protocol": true}

// OverridePolicy returns the worker's override policy, accepting the alias
// or Kafka's class name (org.apache.kafka.connect.connector.policy.
// AllConnectorClientConfigOverridePolicy, …). Errors: any other value.
func OverridePolicy(cfg WorkerConfig) (string, error) {
	v := strings.TrimSpace(cfg.Get("connector.client.config.override.policy"))
	if v == "" {
		return OverridePolicyAll, nil
	}
	for _, p := range []string{OverridePolicyAll, OverridePolicyNone, OverridePolicyPrincipal} {
		if v == p || v == p+"ConnectorClientConfigOverridePolicy" || v == "org.apache.kafka.connect.connector.policy."+p+"ConnectorClientConfigOverridePolicy" {
			return p, nil
		}
	}
	return "", fmt.Errorf("worker config connector.client.config.override.policy: %q is not one of All, None, Principal", v)
}

func overrideAllowed(policy, key string) bool {
	switch policy {
	case OverridePolicyAll:
		return true
	case OverridePolicyPrincipal:
		return principalOverrides[key]
	}
	return false
}

// clientOverrideValues returns, in key order, one ConfigValue per
// producer.override.* and admin.override.* key of a source connector's
// cfg, with the policy's error when it forbids the key
// (AbstractHerder.validateClientOverrides: the message names the key
// without its prefix, the ConfigValue with it) and, for the producer keys
// connectd applies, an error when the value does not parse.
func clientOverrideValues(policy string, workerCfg WorkerConfig, cfg map[string]string) []connect.ConfigValue {
	var keys []string
	for k := range cfg {
		if strings.HasPrefix(k, ProducerOverridePrefix) || strings.HasPrefix(k, AdminOverridePrefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]connect.ConfigValue, 0, len(keys))
	for _, k := range keys {
		v := cfg[k]
		cv := connect.ConfigValue{Name: k, Value: &v, Recommended: []string{}, Errors: []string{}, Visible: true}
		bare := strings.TrimPrefix(strings.TrimPrefix(k, ProducerOverridePrefix), AdminOverridePrefix)
		if !overrideAllowed(policy, bare) {
			cv.Errors = append(cv.Errors, "The '"+policy+"' policy does not allow '"+bare+"' to be overridden in the connector configuration.")
		} else if strings.HasPrefix(k, ProducerOverridePrefix) {
			if _, err := producerOverrideOpt(bare, v); err != nil {
				cv.Errors = append(cv.Errors, err.Error())
			} else if isSecurityKey(bare) && workerCfg != nil {
				if _, err := connectorProducerSecurity(workerCfg, cfg); err != nil && strings.Contains(err.Error(), k) {
					cv.Errors = append(cv.Errors, err.Error())
				}
			}
		}
		out = append(out, cv)
	}
	return out
}

// unsupportedProducerOverrides are Java producer keys whose override
// connectd cannot honour and must not silently ignore (they decide where
// and how the records go): an override of one is a config error.
var unsupportedProducerOverrides = map[string]bool{
	"bootstrap.servers": true, "transactional.id": true, "key.serializer": true, "value.serializer": true,
	"partitioner.class": true, "interceptor.classes": true,
}

// producerOverrideOpt maps one Java producer key to its kgo option; nil
// with no error for a key connectd accepts but does not apply (a tuning
// key without a kgo counterpart, or one Kafka's producer does not know,
// which it too ignores with a warning). Mapped keys (Kafka ProducerConfig
// names, units as there): linger.ms, max.request.size (kgo's batch cap,
// which also bounds one record, as Java's does), compression.type
// (none, gzip, snappy, lz4, zstd), acks (all, -1, 0, 1; other than all
// disables idempotence, as the Java producer does when enable.idempotence
// is not set), enable.idempotence, request.timeout.ms, delivery.timeout.ms,
// retries, retry.backoff.ms, buffer.memory, client.id. batch.size is
// checked but not applied: kgo has no per-partition target below its
// batch cap (batches close at linger.ms or at max.request.size).
func producerOverrideOpt(key, v string) ([]kgo.Opt, error) {
	v = strings.TrimSpace(v)
	num := func(typ string, min, max int64) (int64, error) {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("Invalid value %s for configuration %s: Not a number of type %s", v, key, typ)
		}
		if n < min || n > max {
			return 0, fmt.Errorf("Invalid value %s for configuration %s: Value must be between %d and %d", v, key, min, max)
		}
		return n, nil
	}
	if unsupportedProducerOverrides[key] {
		return nil, fmt.Errorf("connectd does not support overriding the producer's %s per connector", key)
	}
	if isSecurityKey(key) {
		// Checked and applied together (connectorProducerSecurity).
		return nil, nil
	}
	switch key {
	case "linger.ms":
		n, err := num("LONG", 0, 1<<31-1)
		if err != nil {
			return nil, err
		}
		return []kgo.Opt{kgo.ProducerLinger(time.Duration(n) * time.Millisecond)}, nil
	case "batch.size":
		_, err := num("INT", 0, 1<<31-1)
		return nil, err
	case "max.request.size":
		n, err := num("INT", 512, 1<<30)
		if err != nil {
			return nil, err
		}
		opts := []kgo.Opt{kgo.ProducerBatchMaxBytes(int32(n))}
		if n > 100<<20 {
			opts = append(opts, kgo.BrokerMaxWriteBytes(int32(n)))
		}
		return opts, nil
	case "compression.type":
		codec, ok := map[string]kgo.CompressionCodec{
			"none": kgo.NoCompression(), "gzip": kgo.GzipCompression(), "snappy": kgo.SnappyCompression(),
			"lz4": kgo.Lz4Compression(), "zstd": kgo.ZstdCompression(),
		}[strings.ToLower(v)]
		if !ok {
			return nil, fmt.Errorf("Invalid value %s for configuration compression.type: String must be one of: none, gzip, snappy, lz4, zstd", v)
		}
		// WithCompressor(nil): kgo's compressor for codec, not the
		// default lz4Compressor (herder.go defaultCompressor).
		return []kgo.Opt{kgo.ProducerBatchCompression(codec), kgo.WithCompressor(nil)}, nil
	case "acks":
		switch strings.ToLower(v) {
		case "all", "-1":
			return []kgo.Opt{kgo.RequiredAcks(kgo.AllISRAcks())}, nil
		case "1":
			return []kgo.Opt{kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite()}, nil
		case "0":
			return []kgo.Opt{kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite()}, nil
		}
		return nil, fmt.Errorf("Invalid value %s for configuration acks: String must be one of: all, -1, 0, 1", v)
	case "enable.idempotence":
		switch strings.ToLower(v) {
		case "true":
			return nil, nil
		case "false":
			return []kgo.Opt{kgo.DisableIdempotentWrite()}, nil
		}
		return nil, fmt.Errorf("Invalid value %s for configuration enable.idempotence: Expected value to be either true or false", v)
	case "request.timeout.ms":
		n, err := num("INT", 0, 1<<31-1)
		if err != nil {
			return nil, err
		}
		return []kgo.Opt{kgo.ProduceRequestTimeout(time.Duration(n) * time.Millisecond)}, nil
	case "delivery.timeout.ms":
		n, err := num("INT", 0, 1<<31-1)
		if err != nil {
			return nil, err
		}
		return []kgo.Opt{kgo.RecordDeliveryTimeout(time.Duration(n) * time.Millisecond)}, nil
	case "retries":
		n, err := num("INT", 0, 1<<31-1)
		if err != nil {
			return nil, err
		}
		return []kgo.Opt{kgo.RecordRetries(int(n))}, nil
	case "retry.backoff.ms":
		n, err := num("LONG", 0, 1<<31-1)
		if err != nil {
			return nil, err
		}
		d := time.Duration(n) * time.Millisecond
		return []kgo.Opt{kgo.RetryBackoffFn(func(int) time.Duration { return d })}, nil
	case "buffer.memory":
		n, err := num("LONG", 1, 1<<40)
		if err != nil {
			return nil, err
		}
		return []kgo.Opt{kgo.MaxBufferedBytes(int(n))}, nil
	case "client.id":
		return []kgo.Opt{kgo.ClientID(v)}, nil
	}
	return nil, nil
}

// producerOverrides returns the kgo options of cfg's producer.override.*
// keys, in key order, and the keys accepted but not applied. Errors: the
// first value that does not parse (validation reports them all earlier).
func producerOverrides(cfg map[string]string) (opts []kgo.Opt, ignored []string, err error) {
	var keys []string
	for k := range cfg {
		if strings.HasPrefix(k, ProducerOverridePrefix) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		o, err := producerOverrideOpt(strings.TrimPrefix(k, ProducerOverridePrefix), cfg[k])
		if err != nil {
			return nil, nil, err
		}
		if o == nil && !isSecurityKey(strings.TrimPrefix(k, ProducerOverridePrefix)) {
			ignored = append(ignored, k)
		}
		opts = append(opts, o...)
	}
	return opts, ignored, nil
}

// configureTaskClients sets up what task w needs from its connector's
// config (connCfg, resolved) to reach Kafka: its producer
// (producer.override.*) and its topic creation rules (topic.creation.*).
func (h *Herder) configureTaskClients(w *workerSourceTask, connCfg map[string]string) error {
	rules, err := topicCreationOf(h.cfg, connCfg)
	if err != nil {
		return err
	}
	w.topicCreation = rules
	return h.applyProducerOverrides(w, connCfg)
}

// applyProducerOverrides gives task w the producer its connector's
// producer.override.* keys ask for (connCfg resolved): its own client
// built from the worker's producer options plus the overrides, closed when
// the task ends; under exactly-once source the overrides go to the task's
// transactional producer instead. Without overrides w keeps the worker's
// shared producer.
func (h *Herder) applyProducerOverrides(w *workerSourceTask, connCfg map[string]string) error {
	if h.exactlyOnce {
		// Exactly-once source needs the idempotent producer: Kafka
		// Connect's Worker.exactlyOnceSourceTaskProducerConfigs overrides
		// enable.idempotence=false with a warning.
		if v, ok := connCfg[ProducerOverridePrefix+"enable.idempotence"]; ok && !strings.EqualFold(strings.TrimSpace(v), "true") {
			h.log.Warn("producer.override.enable.idempotence ignored: exactly-once source support needs the idempotent producer", "task", w.id)
			c := make(map[string]string, len(connCfg))
			for k, v := range connCfg {
				c[k] = v
			}
			delete(c, ProducerOverridePrefix+"enable.idempotence")
			connCfg = c
		}
	}
	opts, ignored, err := producerOverrides(connCfg)
	if err != nil {
		return err
	}
	if len(ignored) > 0 {
		h.log.Warn("producer overrides accepted but not applied by connectd", "task", w.id, "keys", ignored)
	}
	sec, err := connectorProducerSecurity(h.cfg, connCfg)
	if err != nil {
		return err
	}
	if len(opts) == 0 && sec == nil {
		return nil
	}
	if h.exactlyOnce {
		w.producerOverrides, w.producerSec = opts, sec
		return nil
	}
	cl, err := kgo.NewClient(append(h.producerOptsWith(sec), opts...)...)
	if err != nil {
		return fmt.Errorf("producer with the connector's producer.override.* settings: %w", err)
	}
	w.producer, w.ownsProducer = cl, true
	return nil
}

// connectorProducerSecurity returns the security settings of a source
// connector's task producer when its config (connCfg, resolved) overrides
// any of them with producer.override.security.protocol, .sasl.* or .ssl.*
// (KIP-458; the Principal policy allows the first three), nil when it
// overrides none: the worker's producer settings, with the connector's
// overrides winning key by key. Errors name the connector's key at fault.
func connectorProducerSecurity(workerCfg WorkerConfig, connCfg map[string]string) (*kafkaSecuritySettings, error) {
	merged := WorkerConfig{}
	for k, v := range workerCfg {
		if isSecurityKey(k) || strings.HasPrefix(k, "producer.") {
			merged[k] = v
		}
	}
	overridden := false
	for k, v := range connCfg {
		if bare, ok := strings.CutPrefix(k, ProducerOverridePrefix); ok && isSecurityKey(bare) {
			merged["producer."+bare] = v
			overridden = true
		}
	}
	if !overridden {
		return nil, nil
	}
	sec, err := kafkaSecurity(merged, "producer.")
	if err != nil {
		msg := err.Error()
		for k := range connCfg {
			if bare, ok := strings.CutPrefix(k, ProducerOverridePrefix); ok && isSecurityKey(bare) &&
				strings.HasPrefix(msg, "worker config producer."+bare) {
				return nil, fmt.Errorf("%s%s", k, strings.TrimPrefix(msg, "worker config producer."+bare))
			}
		}
		return nil, err
	}
	return sec, nil
}
