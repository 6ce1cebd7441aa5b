package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/connectd/connectd/runtime"
	"github.com/twmb/franz-go/pkg/kgo"
)

// topics implements "connectd topics tail TOPIC [--from-beginning]": it
// prints each record as one JSON line {"topic","partition","offset","key","value"},
// embedding key and value as JSON when they are JSON, else as strings.
func topics(args []string) error {
	if len(args) == 0 || args[0] != "tail" {
		return fmt.Errorf("usage: connectd topics tail TOPIC [--from-beginning] [--config FILE] [-o key=value]")
	}
	args = args[1:]
	var topic string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		topic, args = args[0], args[1:]
	}
	fs, cfgPath, over := workerFlags("topics tail")
	fromBeginning := fs.Bool("from-beginning", false, "start at the earliest offset instead of the end")
	maxRecords := fs.Int("max-records", 0, "exit after this many records (0 = run until interrupted)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if topic == "" && fs.NArg() > 0 {
		topic = fs.Arg(0)
	}
	if topic == "" {
		return fmt.Errorf("topics tail: a topic name is required")
	}
	cfg, err := runtime.LoadWorkerConfig(*cfgPath, os.Environ(), *over)
	if err != nil {
		return err
	}
	brokers := cfg.Get("bootstrap.servers")
	if strings.TrimSpace(brokers) == "" {
		brokers = cfg.Get("embedded.kafka.listener")
	}
	start := kgo.NewOffset().AtEnd()
	if *fromBeginning {
		start = kgo.NewOffset().AtStart()
	}
	// The worker's Kafka client security (security.protocol, sasl.*,
	// ssl.*), as its consumers use it.
	sec, err := runtime.KafkaClientOpts(cfg)
	if err != nil {
		return err
	}
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(start)}, sec...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	n := 0
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return nil
		}
		for _, e := range fs.Errors() {
			fmt.Fprintf(os.Stderr, "fetch %s/%d: %v\n", e.Topic, e.Partition, e.Err)
		}
		var werr error
		fs.EachRecord(func(r *kgo.Record) {
			if werr != nil || (*maxRecords > 0 && n >= *maxRecords) {
				return
			}
			werr = enc.Encode(struct {
				Topic     string `json:"topic"`
				Partition int32  `json:"partition"`
				Offset    int64  `json:"offset"`
				Key       any    `json:"key"`
				Value     any    `json:"value"`
			}{r.Topic, r.Partition, r.Offset, asJSON(r.Key), asJSON(r.Value)})
			n++
		})
		if werr != nil {
			return werr
		}
		if *maxRecords > 0 && n >= *maxRecords {
			return nil
		}
	}
}

func asJSON(b []byte) any {
	if b == nil {
		return nil
	}
	if json.Valid(b) {
		return json.RawMessage(b)
	}
	return string(b)
}
