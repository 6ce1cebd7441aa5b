package runtime

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/transforms"
	"github.com/twmb/franz-go/pkg/kadm"
)

// startSinkTask runs a sink connector's task under the herder (called by
// startTask once the task's config and converters are resolved). Status
// and restarts follow the source tasks': RUNNING/PAUSED at start, FAILED
// with the cause as trace, RESTARTING with backoff after a retriable
// failure (retry.go).
func (h *Herder) startSinkTask(ctx context.Context, rt *runningTask, id TaskID, conn connect.SinkConnector, cfg, connCfg map[string]string, keyConv, valConv connect.Converter, logger *slog.Logger, fail func(error)) {
	policy := retryPolicyOf(cfg)
	maxPoll := 0
	if op, err := OverridePolicy(h.cfg); err == nil && overrideAllowed(op, "max.poll.records") {
		if v, ok := connCfg[ConsumerOverridePrefix+"max.poll.records"]; ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 1 {
				close(rt.done)
				fail(fmt.Errorf("Invalid value %s for configuration %smax.poll.records: must be at least 1", v, ConsumerOverridePrefix))
				return
			}
			maxPoll = n
		}
	}
	// The same monitoring state across restarts of the task; deleting the
	// connector removes it (Herder's RemoveConnector call).
	tm := h.metrics.SinkTask(id.Connector, id.Task)
	newWorker := func() (supervisedWorker, error) {
		chain, err := transforms.NewChain(connCfg)
		if err != nil {
			return nil, err
		}
		errs, err := newSinkErrorHandler(id, connCfg, h.producer, logger)
		if err != nil {
			return nil, err
		}
		errs.metrics = tm
		hc, err := newSinkHeaderConverter(h.cfg, connCfg)
		if err != nil {
			return nil, err
		}
		return &workerSinkTask{
			id: id, task: conn.NewTask(), cfg: cfg, connCfg: connCfg, keyConv: keyConv, valConv: valConv, headerConv: hc, chain: chain,
			brokers: h.brokers, flushInt: h.flushInt, log: logger, gate: rt.gate, errs: errs, maxDelay: policy.maxDelay, maxPoll: maxPoll, metrics: tm,
			setState: func(state, trace string) { h.putStatus(taskStatusKey(id), state, trace) },
			logSync:  h.logSync,
		}, nil
	}
	state := StateRunning
	if rt.gate.isPaused() {
		state = StatePaused
	}
	h.putStatus(taskStatusKey(id), state, "")
	go func() {
		defer close(rt.done)
		h.superviseTask(ctx, id, "sink task", StageTaskPut, policy, newWorker, fail)
	}()
}

// madeProgress implements supervisedWorker (herder.go).
func (w *workerSinkTask) madeProgress() bool { return w.progressed.Load() }

// sinkConnectorOffsets reads the committed offsets of the sink's consumer
// group connect-<name> in KIP-875's sink format: partition
// {"kafka_topic", "kafka_partition"}, offset {"kafka_offset"}.
func (h *Herder) sinkConnectorOffsets(ctx context.Context, name string) ([]connect.PartitionOffset, error) {
	adm := kadm.NewClient(h.producer)
	resp, err := adm.FetchOffsets(ctx, "connect-"+name)
	if err != nil {
		return nil, err
	}
	var out []connect.PartitionOffset
	resp.Each(func(o kadm.OffsetResponse) {
		if o.Err != nil || o.At < 0 {
			return
		}
		out = append(out, connect.PartitionOffset{
			Partition: map[string]any{"kafka_topic": o.Topic, "kafka_partition": float64(o.Partition)},
			Offset:    map[string]any{"kafka_offset": float64(o.At)},
		})
	})
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Partition, out[j].Partition
		if a["kafka_topic"] != b["kafka_topic"] {
			return a["kafka_topic"].(string) < b["kafka_topic"].(string)
		}
		return a["kafka_partition"].(float64) < b["kafka_partition"].(float64)
	})
	return out, nil
}

// sinkConfigErrors are SinkConnectorConfig.validate's checks: exactly one
// of topics and topics.regex, and a dead letter queue topic that is not
// one of the consumed topics.
func sinkConfigErrors(cfg map[string]string) []connect.ConfigError {
	topics, _, err := sinkTopics(cfg)
	if err != nil {
		key := "topics"
		if strings.Contains(err.Error(), "topics.regex:") {
			key = "topics.regex"
		}
		return []connect.ConfigError{{Key: key, Message: err.Error()}}
	}
	dlq := strings.TrimSpace(cfg["errors.deadletterqueue.topic.name"])
	for _, t := range topics {
		if dlq != "" && t == dlq {
			return []connect.ConfigError{{Key: "errors.deadletterqueue.topic.name", Message: fmt.Sprintf("The DLQ topic '%s' may not be included in the list of topics ('topics=%s') consumed by the connector", dlq, cfg["topics"])}}
		}
	}
	return nil
}
