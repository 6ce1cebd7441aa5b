package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/connectd/connectd/converters"
	"github.com/connectd/connectd/runtime"
	"github.com/twmb/franz-go/pkg/kgo"
)

// topics implements "connectd topics tail TOPIC [--from-beginning]": it
// prints each record as one JSON line {"topic","partition","offset","key","value"}
// (plus "headers" when the record has any, see tailLine),
// embedding key and value as JSON when they are JSON, Confluent-framed Avro
// decoded with the schema registry and written as JsonConverter does (with
// schemas), else as strings.
func topics(args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		return flag.ErrHelp // main prints the commands and exits 0
	}
	if len(args) == 0 || args[0] != "tail" {
		return fmt.Errorf("usage: connectd topics tail TOPIC [--from-beginning] [--max-records N] [--isolation-level read_committed|read_uncommitted] [--config FILE] [-o key=value]")
	}
	args = args[1:]
	var topic string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		topic, args = args[0], args[1:]
	}
	fs, cfgPath, over := workerFlags("topics tail")
	fromBeginning := fs.Bool("from-beginning", false, "start at the earliest offset instead of the end")
	maxRecords := fs.Int("max-records", 0, "exit after this many records (0 = run until interrupted)")
	isolation := fs.String("isolation-level", "read_uncommitted", "read_committed: leave out records of aborted and open transactions (e.g. a flinklite job's Kafka sink after a failed checkpoint); read_uncommitted: print every record (Kafka's console consumer default)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if topic == "" && fs.NArg() > 0 {
		topic = fs.Arg(0)
	}
	if topic == "" {
		return fmt.Errorf("topics tail: a topic name is required")
	}
	isoOpt, err := isolationLevel(*isolation)
	if err != nil {
		return err
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
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(strings.Split(brokers, ",")...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(start), isoOpt}, sec...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	dec := newRecordDecoder(cfg)
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
			werr = enc.Encode(tailLine(r, dec))
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

// newRecordDecoder returns asJSON, extended to Avro in Confluent's wire
// format when a schema registry is known: value.converter.schema.registry.url,
// else the worker's embedded one (schema.registry.listener).
func newRecordDecoder(cfg runtime.WorkerConfig) func(topic string, b []byte) any {
	url := strings.TrimSpace(cfg.Get("value.converter.schema.registry.url"))
	if url == "" {
		if l := strings.TrimSpace(cfg.Get("schema.registry.listener")); l != "" {
			url = "http://" + l
		}
	}
	if url == "" {
		return func(_ string, b []byte) any { return asJSON(b) }
	}
	avro := converters.NewAvroConverter()
	if err := avro.Configure(map[string]string{"schema.registry.url": url}, false); err != nil {
		return func(_ string, b []byte) any { return asJSON(b) }
	}
	js := converters.NewJSONConverter()
	return func(topic string, b []byte) any {
		if len(b) >= 5 && b[0] == 0 && !json.Valid(b) {
			if s, v, err := avro.ToConnect(topic, b); err == nil {
				if out, err := js.FromConnect(topic, s, v); err == nil {
					return json.RawMessage(out)
				}
			}
		}
		return asJSON(b)
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

// tailRecord is one line of "connectd topics tail".
type tailRecord struct {
	Topic     string       `json:"topic"`
	Partition int32        `json:"partition"`
	Offset    int64        `json:"offset"`
	Headers   []tailHeader `json:"headers,omitempty"`
	Key       any          `json:"key"`
	Value     any          `json:"value"`
}

// tailHeader is one record header, in the record's order (a key may repeat,
// as in Kafka). Value is the header's bytes as a string (Kafka Connect's
// SimpleHeaderConverter writes Debezium's __debezium.context.* headers as
// plain UTF-8 text), null for a null header value.
type tailHeader struct {
	Key   string  `json:"key"`
	Value *string `json:"value"`
}

// tailLine is the JSON line printed for r: key and value through dec, the
// headers (e.g. the __debezium.context.* ones of extended.headers.enabled)
// as key/value strings, left out when the record has none.
func tailLine(r *kgo.Record, dec func(topic string, b []byte) any) tailRecord {
	out := tailRecord{Topic: r.Topic, Partition: r.Partition, Offset: r.Offset, Key: dec(r.Topic, r.Key), Value: dec(r.Topic, r.Value)}
	for _, h := range r.Headers {
		th := tailHeader{Key: h.Key}
		if h.Value != nil {
			v := string(h.Value)
			th.Value = &v
		}
		out.Headers = append(out.Headers, th)
	}
	return out
}

// isolationLevel is the consumer option of --isolation-level, with the values
// and default (read_uncommitted) of Kafka's console consumer and of the
// consumer's isolation.level.
func isolationLevel(v string) (kgo.Opt, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "read_uncommitted":
		return kgo.FetchIsolationLevel(kgo.ReadUncommitted()), nil
	case "read_committed":
		return kgo.FetchIsolationLevel(kgo.ReadCommitted()), nil
	}
	return nil, fmt.Errorf("topics tail: --isolation-level %q: must be read_committed or read_uncommitted", v)
}
