package postgres

import (
	"context"
	"sort"
	"strings"

	"github.com/connectd/connectd/connect"
	"github.com/google/uuid"
)

// Debezium's notifications (notification.enabled.channels), as Debezium
// 3.6's NotificationService with its SinkNotificationChannel and
// LogNotificationChannel. Debezium's "Notifications" documentation page
// describes the format: id (a UUID; for an incremental snapshot the id of
// the execute-snapshot signal), aggregate_type ("Initial Snapshot",
// "Incremental Snapshot"), type (STARTED, IN_PROGRESS,
// TABLE_SCAN_COMPLETED, COMPLETED, ABORTED, SKIPPED, PAUSED, RESUMED),
// additional_data (a map of strings, connector_name always) and timestamp
// (ms since the epoch). The sink channel writes it as a record keyed by
// io.debezium.connector.common.NotificationKey {id} with value
// io.debezium.connector.common.Notification (Debezium's SchemaFactory
// notificationKeySchema / notificationValueSchema).

// Notification aggregate types and types (Debezium's
// InitialSnapshotNotificationService, IncrementalSnapshotNotificationService
// and SnapshotStatus).
const (
	aggInitialSnapshot     = "Initial Snapshot"
	aggIncrementalSnapshot = "Incremental Snapshot"

	notifStarted            = "STARTED"
	notifInProgress         = "IN_PROGRESS"
	notifTableScanCompleted = "TABLE_SCAN_COMPLETED"
	notifCompleted          = "COMPLETED"
	notifAborted            = "ABORTED"
	notifSkipped            = "SKIPPED"
)

var notificationKeySchema = connect.StructSchema().Name("io.debezium.connector.common.NotificationKey").Version(1).
	Field("id", connect.Prim(connect.String, false)).Build()

var notificationValueSchema = connect.StructSchema().Name("io.debezium.connector.common.Notification").Version(1).
	Field("id", connect.Prim(connect.String, false)).
	Field("type", connect.Prim(connect.String, false)).
	Field("aggregate_type", connect.Prim(connect.String, false)).
	Field("additional_data", &connect.Schema{Type: connect.Map, Optional: true,
		KeySchema: connect.Prim(connect.String, false), ValueSchema: connect.Prim(connect.String, false)}).
	Field("timestamp", connect.Prim(connect.Int64, false)).
	Build()

// notification is one notification before it is sent to the channels.
type notification struct {
	id, aggregateType, typ string
	data                   map[string]string // connector_name is added by notify
}

// notifying reports whether any notification channel is enabled.
func (t *Task) notifying() bool { return t.cfg.snap.notifySink || t.cfg.snap.notifyLog }

// notificationRecord builds the notification's sink record, carrying off
// (nil: no offset to store).
func (t *Task) notificationRecord(n notification, off map[string]any) *connect.SourceRecord {
	data := make(map[string]any, len(n.data)+1)
	for k, v := range n.data {
		data[k] = v
	}
	data["connector_name"] = t.cfg.topicPrefix
	return &connect.SourceRecord{
		SourcePartition: t.partition,
		SourceOffset:    off,
		Topic:           t.cfg.snap.notifyTopic,
		KeySchema:       notificationKeySchema,
		Key:             &connect.Struct{Schema: notificationKeySchema, Values: []any{n.id}},
		ValueSchema:     notificationValueSchema,
		Value: &connect.Struct{Schema: notificationValueSchema,
			Values: []any{n.id, n.typ, n.aggregateType, data, t.now().UnixMilli()}},
	}
}

// isNotification reports whether r is a sink notification record.
func isNotification(r *connect.SourceRecord) bool { return r.ValueSchema == notificationValueSchema }

// logNotification writes n to the task log (the log channel), as
// Debezium's LogNotificationChannel.
func (t *Task) logNotification(n notification) {
	keys := make([]string, 0, len(n.data))
	for k := range n.data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("connector_name=" + t.cfg.topicPrefix)
	for _, k := range keys {
		b.WriteString(", " + k + "=" + n.data[k])
	}
	t.log.Info("[Notification Service] "+n.aggregateType+" "+n.typ, "id", n.id, "aggregate_type", n.aggregateType, "type", n.typ, "additional_data", b.String())
}

// notify sends n to the enabled channels: the log at once, the sink record
// through send (nil: the task's queue, emit). off is the sink record's
// offset.
func (t *Task) notify(ctx context.Context, n notification, off map[string]any, send func(*connect.SourceRecord) error) error {
	if t.cfg.snap.notifyLog {
		t.logNotification(n)
	}
	if !t.cfg.snap.notifySink {
		return nil
	}
	r := t.notificationRecord(n, off)
	if send != nil {
		return send(r)
	}
	return t.emit(ctx, r, nil)
}

// initialSnapshotNotification is a notification of the initial snapshot
// (Debezium's InitialSnapshotNotificationService): a fresh UUID each.
func initialSnapshotNotification(typ string, data map[string]string) notification {
	return notification{id: uuid.NewString(), aggregateType: aggInitialSnapshot, typ: typ, data: data}
}

// notifyAborted sends the initial snapshot's ABORTED notification after the
// snapshot failed or was stopped (Debezium's notifyAborted). After a stop
// (ctx ended) the queue is no longer read: the log channel only.
func (t *Task) notifyAborted(ctx context.Context) {
	if !t.notifying() {
		return
	}
	n := initialSnapshotNotification(notifAborted, nil)
	if ctx.Err() != nil {
		if t.cfg.snap.notifyLog {
			t.logNotification(n)
		}
		return
	}
	if err := t.notify(ctx, n, nil, nil); err != nil {
		t.log.Warn("could not send the initial snapshot's ABORTED notification", "error", err)
	}
}
