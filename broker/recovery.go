package broker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Crash recovery of transactions for the embedded broker.
//
// A SIGKILL of the worker kills its embedded broker too, so a transaction
// that a task (exactly.once.source.support=enabled) had open is never
// ended. Apache Kafka's transaction coordinator ends it with an ABORT
// control record in every partition of the transaction (when the producer
// calls InitProducerId again or at transaction.timeout.ms; KIP-98), and
// read_committed consumers depend on that record: kgo's and the Java
// consumer's aborted-transaction filter drop every transactional batch of
// the producer id from the aborted transaction's first offset until that
// producer's ABORT marker.
//
// kfake (franz-go pkg/kfake persist.go, Cluster.loadPartitionFullReplay)
// instead aborts such a transaction only in memory when it replays its
// log after a crash: it adds an aborted-transaction entry and bumps the
// producer's epoch but writes no ABORT marker. Three faults follow, all
// seen in the integration test TestExactlyOnceSourceSurvivesSIGKILL and
// reproduced by TestEmbeddedBrokerAbortsTransactionOpenAtCrash:
//   - the restarted task's producer has the same producer id (same
//     transactional.id), so every batch it commits later in the same fetch
//     response is dropped by read_committed consumers: rows missing;
//   - when the open transaction ends a partition, a read_committed
//     consumer never gets a record at or after its first offset, so its
//     position stays below the last stable offset: reading the offsets
//     topic to its end (kafkalog.ReadToEnd) hangs;
//   - at the next crash's replay, kfake pairs the unmarked transaction with
//     the producer id's next COMMIT marker and counts it committed: the
//     aborted rows come back, duplicated.
//
// A crash can also stop kfake between the control records of one
// transaction: EndTxn writes them partition by partition (each fsynced
// with embedded.kafka.sync.writes), in no set order. Kafka's coordinator logs PrepareCommit before it writes
// any marker and completes the commit after a restart; kfake logs nothing
// first, and its replay aborts the partitions still without a marker while
// the others stay committed. Under exactly-once source support that
// splits a task's batch from its offsets: rows duplicated (records
// committed, offsets aborted) or missing (offsets committed, records
// aborted). With transaction version 2 (KIP-890, used by kgo and kfake)
// every transaction of a producer has its own epoch, and its markers carry
// it, so a COMMIT marker of (producer id, epoch) in any partition tells
// that the broker had decided to commit that transaction
// (TestEmbeddedBrokerCompletesTransactionInterruptedByCrash).
//
// kfake's replay finds a transaction's batches by the in-transaction flag
// of their segment index entries, which a crash can misalign; the indexes
// are repaired first (index.go), or the markers written here would
// not hide the aborted records.
//
// recoverTransactionsOpenAtCrash does the coordinator's part right after
// the broker restarted from an unclean shutdown, before any client of the
// worker connects: it finds, per partition, the producers whose last
// transactional batches have no control record after them and writes
// (WriteTxnMarkers) a COMMIT marker when the transaction's commit had
// begun in another partition, an ABORT marker otherwise. kfake's
// in-memory view of the replayed log (aborted ranges, last stable
// offsets) is then stale, so the broker is restarted once and replays the
// log with the markers (broker.go).

// cleanShutdownFile is written under data.dir by EmbeddedBroker.Close after
// the broker saved its state, and removed at start: its absence at start
// means the broker died (SIGKILL, power loss) and transactions may be open.
const cleanShutdownFile = "kafka.clean-shutdown"

// recoveryTimeout bounds the scan of the log after a crash. The scan reads
// every partition once, read_uncommitted (time linear in the log size),
// and happens only at a start after an unclean shutdown.
const recoveryTimeout = 5 * time.Minute

// openTxn is a transaction found in one partition without its control
// record, and how it was ended.
type openTxn struct {
	topic     string
	partition int32
	producer  int64
	epoch     int16
	first     int64 // offset of its first batch
	// commit: a COMMIT marker of (producer, epoch) is in another partition.
	commit bool
	// epochReused: the producer's epochs are not per transaction (a
	// client before KIP-890: the partition has a control record of
	// (producer, epoch) before first, or some partition has two), so a
	// COMMIT elsewhere proves nothing and the transaction is aborted, as
	// kfake's replay would. A pre-KIP-890 producer with a single control
	// record in the whole log cannot be told apart; connectd's producers
	// (kgo) use transaction version 2.
	epochReused bool
}

type producerEpoch struct {
	producer int64
	epoch    int16
}

// recoverTransactionsOpenAtCrash reads every partition of the broker at
// addr read_uncommitted from its log start to its high watermark and ends
// each transaction left without a control record: COMMIT if its commit
// had begun (a COMMIT marker of the same producer id and epoch elsewhere),
// ABORT otherwise. Transactions the broker still tracks as Ongoing
// (restored after a clean shutdown; their producer or the timeout ends
// them) are left alone. It returns the transactions it ended.
func recoverTransactionsOpenAtCrash(ctx context.Context, addr string) ([]openTxn, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ongoing, err := adm.ListTransactions(ctx, nil, []string{"Ongoing"})
	if err != nil {
		return nil, fmt.Errorf("listing ongoing transactions: %w", err)
	}
	live := map[int64]bool{}
	for _, t := range ongoing {
		live[t.ProducerID] = true
	}
	topics, err := adm.ListTopicsWithInternal(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing topics: %w", err)
	}
	if len(topics) == 0 {
		return nil, nil
	}
	names := topics.Names()
	starts, err := adm.ListStartOffsets(ctx, names...)
	if err == nil {
		err = starts.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("listing start offsets: %w", err)
	}
	ends, err := adm.ListEndOffsets(ctx, names...)
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("listing end offsets: %w", err)
	}
	from := map[string]map[int32]kgo.Offset{}
	remaining := map[string]map[int32]int64{} // end offset still to reach
	starts.Each(func(o kadm.ListedOffset) {
		end, ok := ends.Lookup(o.Topic, o.Partition)
		if !ok || end.Offset <= o.Offset {
			return
		}
		if from[o.Topic] == nil {
			from[o.Topic], remaining[o.Topic] = map[int32]kgo.Offset{}, map[int32]int64{}
		}
		from[o.Topic][o.Partition] = kgo.NewOffset().At(o.Offset)
		remaining[o.Topic][o.Partition] = end.Offset
	})
	if len(from) == 0 {
		return nil, nil
	}
	consumer, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumePartitions(from),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()), kgo.KeepControlRecords(),
		kgo.FetchMaxWait(100*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer consumer.Close()
	type tp struct {
		topic     string
		partition int32
	}
	open := map[tp]map[int64]openTxn{}
	lastMarker := map[tp]map[int64]int16{} // epoch of a producer's last control record
	committed := map[producerEpoch]bool{}
	// Producers with two control records of one epoch in one partition:
	// their epochs are not per transaction (clients before KIP-890, whose
	// EndTxn below v5 does not bump the epoch).
	reusesEpochs := map[int64]bool{}
	for len(remaining) > 0 {
		fetches := consumer.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("reading the log for open transactions: %w", err)
		}
		var ferr error
		fetches.EachError(func(t string, p int32, err error) {
			ferr = errors.Join(ferr, fmt.Errorf("%s[%d]: %w", t, p, err))
		})
		if ferr != nil {
			return nil, fmt.Errorf("reading the log for open transactions: %w", ferr)
		}
		fetches.EachRecord(func(r *kgo.Record) {
			key := tp{r.Topic, r.Partition}
			if r.Attrs.IsTransactional() {
				if open[key] == nil {
					open[key] = map[int64]openTxn{}
				}
				if lastMarker[key] == nil {
					lastMarker[key] = map[int64]int16{}
				}
				if r.Attrs.IsControl() {
					delete(open[key], r.ProducerID) // COMMIT or ABORT: the transaction ended
					if e, ok := lastMarker[key][r.ProducerID]; ok && e == r.ProducerEpoch {
						reusesEpochs[r.ProducerID] = true
					}
					lastMarker[key][r.ProducerID] = r.ProducerEpoch
					// A control record's key is version (int16), type
					// (int16): 0 ABORT, 1 COMMIT.
					if len(r.Key) >= 4 && r.Key[2] == 0 && r.Key[3] == 1 {
						committed[producerEpoch{r.ProducerID, r.ProducerEpoch}] = true
					}
				} else if _, ok := open[key][r.ProducerID]; !ok {
					e, seen := lastMarker[key][r.ProducerID]
					open[key][r.ProducerID] = openTxn{topic: r.Topic, partition: r.Partition, producer: r.ProducerID, epoch: r.ProducerEpoch, first: r.Offset,
						epochReused: seen && e == r.ProducerEpoch}
				}
			}
			if ps := remaining[r.Topic]; ps != nil {
				if end, ok := ps[r.Partition]; ok && r.Offset+1 >= end {
					delete(ps, r.Partition)
					if len(ps) == 0 {
						delete(remaining, r.Topic)
					}
				}
			}
		})
	}
	var found []openTxn
	for _, txns := range open {
		for _, t := range txns {
			if !live[t.producer] {
				t.epochReused = t.epochReused || reusesEpochs[t.producer]
				t.commit = committed[producerEpoch{t.producer, t.epoch}] && !t.epochReused
				found = append(found, t)
			}
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	slices.SortFunc(found, func(a, b openTxn) int {
		return cmp.Or(cmp.Compare(a.producer, b.producer), cmp.Compare(a.topic, b.topic), cmp.Compare(a.partition, b.partition))
	})
	type markerKey struct {
		producerEpoch
		commit bool
	}
	markers := map[markerKey]*kadm.TxnMarkers{}
	var order []markerKey
	for _, t := range found {
		k := markerKey{producerEpoch{t.producer, t.epoch}, t.commit}
		m := markers[k]
		if m == nil {
			m = &kadm.TxnMarkers{ProducerID: t.producer, ProducerEpoch: t.epoch, Commit: t.commit, Topics: kadm.TopicsSet{}}
			markers[k] = m
			order = append(order, k)
		}
		m.Topics.Add(t.topic, t.partition)
	}
	// One request per marker: kadm keys its response by producer id.
	for _, k := range order {
		resp, err := adm.WriteTxnMarkers(ctx, *markers[k])
		if err != nil {
			return nil, fmt.Errorf("writing transaction markers: %w", err)
		}
		if err := markerErrors(resp); err != nil {
			return nil, fmt.Errorf("writing transaction markers: %w", err)
		}
	}
	return found, nil
}

func markerErrors(resp kadm.TxnMarkersResponses) error {
	var werr error
	for _, m := range resp {
		m.Topics.EachPartition(func(p kadm.TxnMarkersPartitionResponse) {
			if p.Err != nil {
				werr = errors.Join(werr, fmt.Errorf("%s[%d] producer %d: %w", p.Topic, p.Partition, p.ProducerID, p.Err))
			}
		})
	}
	return werr
}

// cleanShutdownBefore reports whether the broker under dataDir was closed
// cleanly last time, and removes the mark (made durable) so that a crash
// of this run is seen at the next start.
func cleanShutdownBefore(dataDir string) (bool, error) {
	p := filepath.Join(dataDir, cleanShutdownFile)
	err := os.Remove(p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, syncDir(dataDir)
}

// UncleanShutdown reports whether dataDir holds a broker log that was not
// marked clean at its last stop (a crash, SIGKILL): the next start
// recovers it. It changes nothing (cleanShutdownBefore takes the mark).
func UncleanShutdown(dataDir string) bool {
	if _, err := os.Stat(filepath.Join(dataDir, "kafka")); err != nil {
		return false // no log yet: a first start
	}
	_, err := os.Stat(filepath.Join(dataDir, cleanShutdownFile))
	return errors.Is(err, os.ErrNotExist)
}

// markCleanShutdown records that the broker under dataDir saved its state.
func markCleanShutdown(dataDir string) error {
	f, err := os.Create(filepath.Join(dataDir, cleanShutdownFile))
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return syncDir(dataDir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// dropPartitionSnapshots removes kfake's per-partition snapshot.json files
// under dir (<data.dir>/kafka) so that the next start replays every
// partition's log (kfake persist.go loadPartition: a snapshot that matches
// the segments is trusted, with its aborted ranges and last stable
// offset, instead of replaying the segments). It is called only after an
// unclean shutdown, when kfake replays the partitions written since its
// last clean shutdown anyway; the cost is that the other partitions are
// replayed too and lose a log start offset set by DeleteRecords, which only
// the snapshot holds (connectd does not delete records).
func dropPartitionSnapshots(dir string) error {
	return filepath.WalkDir(filepath.Join(dir, "partitions"), func(p string, d os.DirEntry, err error) error {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !d.IsDir() && d.Name() == "snapshot.json" {
			return os.Remove(p)
		}
		return nil
	})
}
