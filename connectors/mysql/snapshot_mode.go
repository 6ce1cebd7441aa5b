package mysql

import (
	"context"
	"errors"
	"fmt"
)

// snapshotter is what a snapshot.mode decides at start, as Debezium 3.6's
// io.debezium.snapshot.mode snapshotters (InitialSnapshotter,
// InitialOnlySnapshotter, NoDataSnapshotter, AlwaysSnapshotter,
// WhenNeededSnapshotter, RecoverySnapshotter, ConfigurationBasedSnapshotter).
type snapshotter struct {
	data          bool // read the tables
	schema        bool // record the structures (schema history, schema change events)
	stream        bool // read the binlog afterwards
	onSchemaError bool // a missing schema history is rebuilt by a schema snapshot
	onDataError   bool // a purged stored position is replaced by a new snapshot
	fromSnapshot  bool // streaming starts at the snapshot's position, not the stored offset
}

// snapshotterFor returns the decisions of mode given whether an offset is
// stored (offsetExists) and whether it was written by an unfinished
// snapshot (inProgress).
func (c *config) snapshotterFor(offsetExists, inProgress bool) snapshotter {
	needed := !offsetExists || inProgress
	s := snapshotter{stream: true, fromSnapshot: true}
	switch c.snapshotMode {
	case SnapshotInitial:
		s.data, s.schema = needed, needed
	case SnapshotInitialOnly:
		s.data, s.schema, s.stream = needed, needed, false
	case SnapshotNoData:
		s.schema = needed
	case SnapshotAlways:
		s.data, s.schema = true, true
	case SnapshotWhenNeeded:
		s.data, s.schema, s.onDataError = needed, needed, true
	case SnapshotRecovery:
		s.schema, s.onSchemaError, s.fromSnapshot = true, true, false
	case SnapshotConfigBased:
		cb := c.configBased
		s = snapshotter{data: cb.data, schema: cb.schema, stream: cb.stream, onSchemaError: cb.onSchemaError,
			onDataError: cb.onDataError, fromSnapshot: true}
	}
	return s
}

// configBased holds the snapshot.mode.configuration.based.* keys.
type configBased struct {
	data, schema, stream, onSchemaError, onDataError bool
}

// ErrBinlogUnavailable is returned by Start when the stored offset's binlog
// file is no longer on the server (purged) and the snapshot mode does not
// allow a new snapshot (Debezium: "… but this is no longer available on the
// server. Reconfigure the connector to use a snapshot mode when needed.").
var ErrBinlogUnavailable = errors.New("mysql: the stored binlog position is no longer available on the server")

// ErrPartialRowImage fails the task on a row event whose images lack
// columns (a session with binlog_row_image MINIMAL or NOBLOB wrote it).
var ErrPartialRowImage = errors.New("mysql: row image lacks columns")

// plan decides what the reader does, as Debezium's BaseSourceTask
// validateSchemaHistory and BinlogSourceTask validateSnapshotFeasibility:
//   - no stored offset: snapshot per mode (recovery, or configuration_based
//     with snapshot.on.schema.error, fail: there is no position to recover);
//   - an offset of an unfinished snapshot: snapshot again, or fail when the
//     mode allows no snapshot;
//   - a stored streaming offset whose binlog file was purged: a new
//     snapshot with when_needed (or configuration_based with
//     snapshot.on.data.error), else ErrBinlogUnavailable saying what to do;
//   - recovery: the structures are read again and recorded at the stored
//     offset, then streaming resumes from it.
func (t *Task) plan(ctx context.Context, prev *offset) (plan, error) {
	offsetExists := prev != nil
	inProgress := prev != nil && prev.snapshot
	s := t.cfg.snapshotterFor(offsetExists, inProgress)
	if !offsetExists && s.onSchemaError {
		return plan{}, fmt.Errorf("mysql: snapshot.mode=%s: Could not find existing redo log information while attempting schema only recovery snapshot (no stored offset: use snapshot.mode=initial)", t.cfg.snapshotMode)
	}
	if inProgress && !s.data && !s.schema {
		return plan{}, errors.New("mysql: The connector previously stopped while taking a snapshot, but now the connector is configured to never allow snapshots. Reconfigure the connector to use snapshots initially or when needed.")
	}
	if offsetExists && !inProgress && s.stream && !s.data {
		ok, err := t.positionAvailable(*prev)
		if err != nil {
			return plan{}, err
		}
		if !ok {
			if !s.onDataError {
				return plan{}, fmt.Errorf("%w: the connector is trying to read the binlog starting at %s:%d (gtids %q), but it is no longer available on the server (purged). Reconfigure the connector to use a snapshot mode when needed (snapshot.mode=when_needed), or delete its offsets to take a new snapshot", ErrBinlogUnavailable, prev.file, prev.pos, prev.gtids)
			}
			t.log.Warn("The last recorded offset is no longer available but we are in "+t.cfg.snapshotMode+" snapshot mode. Attempting to snapshot data to fill the gap.",
				"file", prev.file, "pos", prev.pos)
			s.data, s.schema, s.fromSnapshot = true, true, true
		}
	}
	p := plan{snapshot: s.data, schema: s.schema && !s.data, stream: s.stream}
	if prev != nil && !inProgress && !s.fromSnapshot {
		at := *prev
		p.at = &at
	}
	if prev != nil && !inProgress && !s.data && (!p.schema || !s.fromSnapshot) {
		p.start = *prev
	}
	if !p.snapshot && !p.schema && !p.stream {
		return p, nil
	}
	if !p.snapshot && !p.schema && (prev == nil || inProgress) {
		// configuration_based without any snapshot: stream from now.
		pos, err := t.binlogPosition()
		if err != nil {
			return plan{}, err
		}
		p.start = pos
	}
	if t.history != nil && prev != nil && !inProgress && !p.snapshot && !p.schema {
		// The structures current at the stored offset: binlog events
		// after it were written with them (DDL after it is read again).
		n, err := t.history.recover(ctx, *prev, t.catalog)
		if err != nil {
			return plan{}, err
		}
		switch {
		case n > 0:
			t.log.Info("schema history recovered", "topic", t.cfg.historyTopic, "records", n, "tables", len(t.catalog))
		case s.onSchemaError:
			t.log.Warn("Database schema history was not found but was expected; snapshotting the current structures at the stored offset", "topic", t.cfg.historyTopic)
			at := *prev
			p.schema, p.at = true, &at
		default:
			// Debezium fails here ("The db history topic is missing. You may
			// attempt to recover it by reconfiguring the connector to
			// recovery."); connectd reads the structures from
			// information_schema, which is right unless DDL ran after the
			// stored offset.
			t.log.Warn("schema history topic is empty; table structures come from information_schema (snapshot.mode=recovery rebuilds it)", "topic", t.cfg.historyTopic)
		}
	}
	return p, nil
}

// positionAvailable reports whether streaming can resume at o: by GTIDs
// when the offset has them (gtidsAvailable), else whether its binlog file
// is still on the server.
func (t *Task) positionAvailable(o offset) (bool, error) {
	if o.gtids != "" {
		return t.gtidsAvailable(o.gtids)
	}
	return t.binlogAvailable(o.file)
}

// binlogAvailable reports whether binlog file is still on the server
// (SHOW BINARY LOGS, which needs REPLICATION CLIENT).
func (t *Task) binlogAvailable(file string) (bool, error) {
	r, err := t.conn.Execute("SHOW BINARY LOGS")
	if err != nil {
		return false, fmt.Errorf("mysql: SHOW BINARY LOGS (needs REPLICATION CLIENT): %w", err)
	}
	for i := range r.Values {
		if n, _ := r.GetString(i, 0); n == file {
			return true, nil
		}
	}
	return false, nil
}
