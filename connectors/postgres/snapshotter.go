package postgres

// snapshotter decides at each start whether table data is snapshotted and
// whether streaming follows, as Debezium 3.6's snapshot.mode implementations
// of io.debezium.spi.snapshot.Snapshotter (AlwaysSnapshotter,
// InitialSnapshotter, InitialOnlySnapshotter, NoDataSnapshotter,
// WhenNeededSnapshotter, ConfigurationBasedSnapshotter).
type snapshotter struct {
	mode string
	// configuration_based: snapshot.mode.configuration.based.snapshot.data,
	// .start.stream and .snapshot.on.data.error.
	data, stream, onDataError bool
}

func newSnapshotter(mode string, data, stream, onDataError bool) snapshotter {
	return snapshotter{mode: mode, data: data, stream: stream, onDataError: onDataError}
}

// snapshotData reports whether the tables are read at this start, given
// whether an offset is stored and whether it was written by a snapshot that
// did not complete (Snapshotter.shouldSnapshotData).
func (s snapshotter) snapshotData(offsetExists, snapshotInProgress bool) bool {
	switch s.mode {
	case SnapshotAlways:
		return true
	case SnapshotNoData:
		return false
	case SnapshotConfigurationBased:
		return s.data
	default: // initial, initial_only, when_needed
		return !offsetExists || snapshotInProgress
	}
}

// streams reports whether the slot is streamed after the snapshot, if any
// (Snapshotter.shouldStream).
func (s snapshotter) streams() bool {
	switch s.mode {
	case SnapshotInitialOnly:
		return false
	case SnapshotConfigurationBased:
		return s.stream
	}
	return true
}

// snapshotOnDataError reports whether a stored offset whose LSN the slot no
// longer has leads to a new snapshot instead of streaming with a gap
// (Snapshotter.shouldSnapshotOnDataError).
func (s snapshotter) snapshotOnDataError() bool {
	switch s.mode {
	case SnapshotWhenNeeded:
		return true
	case SnapshotConfigurationBased:
		return s.onDataError
	}
	return false
}
