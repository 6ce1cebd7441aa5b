package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
)

// Keys of the snapshot's threading and table order, the capture guardrail,
// the queue's byte bound and notifications (Debezium 3.6's
// CommonConnectorConfig and RelationalDatabaseConnectorConfig; see the
// Debezium PostgreSQL connector documentation, "Advanced connector
// configuration properties", and the "Notifications" page).
const (
	KeySnapshotMaxThreadsMultiplier = "snapshot.max.threads.multiplier"
	KeyLegacySnapshotMaxThreads     = "legacy.snapshot.max.threads"
	KeyInternalLegacySnapshotThread = "internal.legacy.snapshot.max.threads"
	KeySnapshotOrderByRowCount      = "snapshot.tables.order.by.row.count"
	KeyGuardrailCollectionsMax      = "guardrail.collections.max"
	KeyGuardrailLimitAction         = "guardrail.collections.limit.action"
	KeyMaxQueueSizeInBytes          = "max.queue.size.in.bytes"
	KeyNotificationChannels         = "notification.enabled.channels"
	KeyNotificationSinkTopic        = "notification.sink.topic.name"
	KeyExecutorShutdownTimeoutMs    = "executor.shutdown.timeout.ms"
)

// Values of snapshot.tables.order.by.row.count (Debezium's
// RelationalDatabaseConnectorConfig.SnapshotTablesRowCountOrder).
const (
	orderAscending  = "ascending"
	orderDescending = "descending"
	orderDisabled   = "disabled"
)

// withSnapshotKeys defines the keys of this file on d.
func withSnapshotKeys(d *connect.ConfigDef) *connect.ConfigDef {
	return d.
		Define(connect.ConfigKey{Name: KeySnapshotMaxThreadsMultiplier, Type: connect.TypeInt, Default: connect.Str("1"), Importance: connect.Medium, Validator: positiveInt,
			Doc: "With snapshot.max.threads > 1, each table with a primary key is split into up to snapshot.max.threads x this many chunks of primary key ranges, " +
				"read in parallel by the snapshot threads inside the same exported snapshot; a table's records may then interleave across chunks. " +
				"Tables without a primary key, and tables with a snapshot.select.statement.overrides statement, are read whole. " +
				"As Debezium 3.4+'s chunked snapshot (Debezium PostgreSQL connector docs, snapshot.max.threads.multiplier)."}).
		Define(connect.ConfigKey{Name: KeyLegacySnapshotMaxThreads, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low,
			Doc: "true: the pre-3.4 threading of Debezium's snapshot: each of the snapshot.max.threads threads reads whole tables, one table's records stay in table order; snapshot.max.threads.multiplier is ignored."}).
		Define(connect.ConfigKey{Name: KeyInternalLegacySnapshotThread, Type: connect.TypeBoolean, Default: connect.Str("false"), Importance: connect.Low,
			Doc: "Debezium's internal name of legacy.snapshot.max.threads; either being true selects whole-table reads."}).
		Define(connect.ConfigKey{Name: KeySnapshotOrderByRowCount, Type: connect.TypeString, Default: connect.Str(orderDisabled), Importance: connect.Medium,
			Allowed: []string{orderAscending, orderDescending, orderDisabled},
			Doc: "Order in which the initial snapshot reads the tables: ascending or descending by the planner's row estimate (pg_class.reltuples; a never analyzed table counts as 0), " +
				"or disabled (by schema and table name). Ties keep the name order. As Debezium's snapshot.tables.order.by.row.count."}).
		Define(connect.ConfigKey{Name: KeyGuardrailCollectionsMax, Type: connect.TypeInt, Default: connect.Str("0"), Importance: connect.Medium, Validator: nonNegative,
			Doc: "Maximum number of captured tables; checked when the task starts, against the tables the filters select. 0 = no limit. As Debezium's guardrail.collections.max."}).
		Define(connect.ConfigKey{Name: KeyGuardrailLimitAction, Type: connect.TypeString, Default: connect.Str("warn"), Importance: connect.Medium,
			Allowed: []string{"warn", "fail"},
			Doc:     "What more captured tables than guardrail.collections.max does: warn logs a warning and the task runs; fail fails the task's start, naming the count and the limit."}).
		Define(connect.ConfigKey{Name: KeyMaxQueueSizeInBytes, Type: connect.TypeLong, Default: connect.Str("0"), Importance: connect.Medium, Validator: nonNegative,
			Doc: "Byte bound of the queue of change events between the reader and the worker's poll, in addition to max.queue.size; 0 = no byte bound. " +
				"A record's size is estimated from its key, value and offset (as Debezium's ObjectSizeCalculator estimates the in-memory size). " +
				"A record larger than the bound is queued alone when the queue is empty."}).
		Define(connect.ConfigKey{Name: KeyNotificationChannels, Type: connect.TypeList, Optional: true, Importance: connect.Medium,
			Doc: "Channels that receive the connector's notifications about the initial and incremental snapshots (Debezium's Notifications): " +
				"sink writes them as records to notification.sink.topic.name, log writes them to the task log. jmx is refused: connectd has no JMX.",
			Validator: func(v string) string {
				for _, ch := range splitList(v) {
					switch strings.ToLower(ch) {
					case "sink", "log":
					case "jmx":
						return "the jmx notification channel is not available: connectd has no JMX (use sink or log)"
					default:
						return "unknown notification channel " + strconv.Quote(ch) + ": must be sink or log"
					}
				}
				return ""
			}}).
		Define(connect.ConfigKey{Name: KeyNotificationSinkTopic, Type: connect.TypeString, Optional: true, Importance: connect.High,
			Doc: "Topic of the sink notification channel; required when notification.enabled.channels lists sink."}).
		Define(connect.ConfigKey{Name: KeyExecutorShutdownTimeoutMs, Type: connect.TypeLong, Default: connect.Str("4000"), Importance: connect.Medium, Validator: nonNegative,
			Doc: "How long, in ms, stopping the task waits for its reader (snapshot or stream) to end, as Debezium's ChangeEventSourceCoordinator waits for its executor. " +
				"If the reader is still running then, the stop returns with an error and the reader's connections are closed as soon as it ends."})
}

// validateNotifications is Debezium's SinkNotificationChannel check: the
// sink channel needs a topic.
func validateNotifications(cfg map[string]string) []connect.ConfigError {
	for _, ch := range splitList(cfg[KeyNotificationChannels]) {
		if strings.EqualFold(ch, "sink") && strings.TrimSpace(cfg[KeyNotificationSinkTopic]) == "" {
			return []connect.ConfigError{{Key: KeyNotificationSinkTopic,
				Message: "Notification topic name must be provided when kafka notification channel is enabled: set notification.sink.topic.name (notification.enabled.channels lists sink)"}}
		}
	}
	return nil
}

// snapshotSettings are the parsed keys of this file.
type snapshotSettings struct {
	multiplier    int    // snapshot.max.threads.multiplier
	legacy        bool   // legacy.snapshot.max.threads or its internal name
	orderByRows   string // snapshot.tables.order.by.row.count
	guardrailMax  int
	guardrailFail bool
	queueBytes    int64 // max.queue.size.in.bytes; 0 = none
	notifySink    bool
	notifyLog     bool
	notifyTopic   string
	shutdownWait  time.Duration // executor.shutdown.timeout.ms
}

func parseSnapshotSettings(p connect.Parsed) snapshotSettings {
	s := snapshotSettings{
		multiplier:   p.Int(KeySnapshotMaxThreadsMultiplier),
		legacy:       p.Bool(KeyLegacySnapshotMaxThreads) || p.Bool(KeyInternalLegacySnapshotThread),
		orderByRows:  strings.ToLower(p.String(KeySnapshotOrderByRowCount)),
		guardrailMax: p.Int(KeyGuardrailCollectionsMax),
		notifyTopic:  p.String(KeyNotificationSinkTopic),
	}
	s.guardrailFail = strings.EqualFold(p.String(KeyGuardrailLimitAction), "fail")
	s.queueBytes, _ = strconv.ParseInt(strings.TrimSpace(p.String(KeyMaxQueueSizeInBytes)), 10, 64)
	ms, _ := strconv.ParseInt(strings.TrimSpace(p.String(KeyExecutorShutdownTimeoutMs)), 10, 64)
	s.shutdownWait = time.Duration(ms) * time.Millisecond
	for _, ch := range p.List(KeyNotificationChannels) {
		switch strings.ToLower(ch) {
		case "sink":
			s.notifySink = true
		case "log":
			s.notifyLog = true
		}
	}
	if s.multiplier < 1 {
		s.multiplier = 1
	}
	return s
}

// checkGuardrail counts the captured tables against guardrail.collections.max
// (Debezium's validateGuardrailLimits at task start, against the tables the
// filters capture): more fail the start with guardrail.collections.limit.action
// fail, or log a warning with warn.
func (t *Task) checkGuardrail(ctx context.Context) error {
	c := t.cfg.snap
	if c.guardrailMax <= 0 {
		return nil
	}
	tables, err := listTables(ctx, t.conn, t.cfg)
	if err != nil {
		return err
	}
	if len(tables) <= c.guardrailMax {
		return nil
	}
	msg := fmt.Sprintf("the connector captures %d tables, more than %s=%d", len(tables), KeyGuardrailCollectionsMax, c.guardrailMax)
	if c.guardrailFail {
		return fmt.Errorf("postgres: guardrail: %s (%s=fail): narrow table.include.list / schema.include.list or raise the limit", msg, KeyGuardrailLimitAction)
	}
	t.log.Warn("guardrail: "+msg+" ("+KeyGuardrailLimitAction+"=warn)", "tables", len(tables), "limit", c.guardrailMax)
	return nil
}
