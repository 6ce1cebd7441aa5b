package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
	"github.com/connectd/connectd/metrics"
	"github.com/prometheus/common/expfmt"
)

// scrape reads GET /metrics and returns series "name{k=v,...}" (labels
// sorted as the exposition writes them) -> value; histograms by their
// _count/_sum.
func (d *daemon) scrape() map[string]float64 {
	d.t.Helper()
	resp, err := http.Get(d.rest + "/metrics")
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		d.t.Fatalf("parsing /metrics: %v", err)
	}
	out := map[string]float64{}
	for name, f := range fams {
		for _, m := range f.Metric {
			var ls []string
			for _, l := range m.Label {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			key := name + "{" + strings.Join(ls, ",") + "}"
			switch {
			case m.Counter != nil:
				out[key] = m.Counter.GetValue()
			case m.Gauge != nil:
				out[key] = m.Gauge.GetValue()
			case m.Histogram != nil:
				out[name+"_count{"+strings.Join(ls, ",")+"}"] = float64(m.Histogram.GetSampleCount())
				out[name+"_sum{"+strings.Join(ls, ",")+"}"] = m.Histogram.GetSampleSum()
				for _, bk := range m.Histogram.Bucket {
					bl := append(append([]string(nil), ls...), "le="+strconv.FormatFloat(bk.GetUpperBound(), 'g', -1, 64))
					sort.Strings(bl)
					out[name+"_bucket{"+strings.Join(bl, ",")+"}"] = float64(bk.GetCumulativeCount())
				}
			}
		}
	}
	return out
}

func (d *daemon) summary() metrics.Summary {
	d.t.Helper()
	code, b := d.do("GET", "/ui/api/summary", nil)
	if code != 200 {
		d.t.Fatalf("summary: %d %s", code, b)
	}
	var s metrics.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		d.t.Fatal(err)
	}
	return s
}

// waitMetric polls /metrics until cond holds for the series' value.
func (d *daemon) waitMetric(series string, what string, cond func(v float64, ok bool) bool) map[string]float64 {
	d.t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		m := d.scrape()
		v, ok := m[series]
		if cond(v, ok) {
			return m
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("%s: %s never held (last %v, present %v)", series, what, v, ok)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func eq(want float64) func(float64, bool) bool {
	return func(v float64, ok bool) bool { return ok && v == want }
}

// startMetricsDB starts PostgreSQL with database inventory holding
// public.items(id, v, pad) and n rows.
func startMetricsDB(t *testing.T, n int) *testenv.Postgres {
	t.Helper()
	pg := testenv.PostgresT(t)
	if err := pg.CreateDatabase(context.Background(), "inventory"); err != nil {
		t.Fatal(err)
	}
	mustExec(t, pg, fmt.Sprintf(`CREATE TABLE public.items (id int PRIMARY KEY, v int NOT NULL, pad text);
		INSERT INTO public.items SELECT g, g, 'x' FROM generate_series(1, %d) g; ANALYZE public.items;`, n))
	return pg
}

// ser names a series of connector m's task 0 as scrape keys it: labels
// sorted by name, as the exposition format writes them.
func ser(name string, labels ...string) string {
	ls := append([]string{"connector=m", "task=0"}, labels...)
	sort.Strings(ls)
	return name + "{" + strings.Join(ls, ",") + "}"
}

// A connector snapshots 5 rows, then streams 3 transactions (10 inserts, 4
// updates, 2 deletes): /metrics counts exactly those. Expected values
// follow Debezium's metric definitions: TotalNumberOfEventsSeen counts
// change events, snapshot reads included, not tombstones
// (StreamingChangeEventSourceMetrics/SnapshotChangeEventSourceMetrics);
// NumberOfCommittedTransactions one per source transaction; RowsScanned
// per table; Kafka Connect's source-record-write-total counts every record
// Kafka acknowledged, tombstones included.
func TestMetricsCountChanges(t *testing.T) {
	pg := startMetricsDB(t, 5)
	d := newDaemon(t)
	d.args = []string{"-o", "dashboard.sample.interval.ms=500"}
	d.start()
	if code, body := d.do("POST", "/connectors", map[string]any{"name": "m", "config": pgConnector(pg, nil)}); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	d.waitTaskState("m", "RUNNING")
	m := d.waitMetric(ser("connectd_snapshot_completed"), "snapshot completed", eq(1))
	for k, want := range map[string]float64{
		ser("connectd_snapshot_rows_scanned_total", "table=public.items"): 5,
		ser("connectd_snapshot_rows_estimated", "table=public.items"):     5,
		ser("connectd_snapshot_running"):                                  0,
	} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	for _, sql := range []string{
		`INSERT INTO public.items SELECT g, g, 'y' FROM generate_series(6, 15) g`,
		`UPDATE public.items SET v = v + 100 WHERE id BETWEEN 1 AND 4`,
		`DELETE FROM public.items WHERE id IN (14, 15)`,
	} {
		if err := pg.Exec(context.Background(), "inventory", sql); err != nil {
			t.Fatal(err)
		}
	}
	// 5 reads + 10 + 4 + 2 change events; 2 tombstones are written too.
	d.waitMetric(ser("connectd_source_record_write_total"), "23 records written", eq(23))
	m = d.scrape()
	for k, want := range map[string]float64{
		ser("connectd_streaming_events_seen_total"):            21,
		ser("connectd_streaming_events_total", "op=r"):         5,
		ser("connectd_streaming_events_total", "op=c"):         10,
		ser("connectd_streaming_events_total", "op=u"):         4,
		ser("connectd_streaming_events_total", "op=d"):         2,
		ser("connectd_streaming_events_total", "op=t"):         0,
		ser("connectd_streaming_committed_transactions_total"): 3,
		ser("connectd_source_record_poll_total"):               23,
		ser("connectd_end_to_end_latency_seconds_count"):       16, // streamed c/u/d events, not reads or tombstones
		ser("connectd_streaming_connected"):                    1,
		ser("connectd_streaming_queue_capacity"):               8192, // Debezium's max.queue.size default
		ser("connectd_task_status", "state=running"):           1,
		"connectd_connector_status{connector=m,state=running}": 1,
		ser("connectd_task_errors_total"):                      0,
	} {
		if v, ok := m[k]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", k, v, ok, want)
		}
	}
	if v := m[ser("connectd_streaming_behind_source_seconds")]; v < 0 || v > 30 {
		t.Errorf("behind source %v s, want within [0, 30]", v)
	}
	d.waitMetric(ser("connectd_offset_commit_completion_total"), "an offset commit", func(v float64, ok bool) bool { return ok && v >= 1 })
	d.waitMetric(ser("connectd_replication_lag_bytes"), "slot lag read", func(v float64, ok bool) bool { return ok && v >= 0 })
	if _, ok := d.scrape()[ser("connectd_replication_slot_retained_wal_bytes")]; !ok {
		t.Error("connectd_replication_slot_retained_wal_bytes missing")
	}

	s := d.summary()
	if len(s.Connectors) != 1 || s.Connectors[0].EventsSeen != 21 || s.Connectors[0].CommittedTransactions != 3 || s.Connectors[0].Colour != metrics.Green {
		t.Fatalf("summary: %+v", s.Connectors)
	}
	out, err := exec.Command(binPath, "status", "--url", d.rest).CombinedOutput()
	if err != nil {
		t.Fatalf("connectd status: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^m\s+RUNNING\s+green\s+0:RUNNING\s+21\s+23\s`).Match(out) || !strings.Contains(string(out), "public.items: 5 rows, done") {
		t.Fatalf("connectd status output:\n%s", out)
	}
}

// Pausing the connector while the database keeps writing stops the slot's
// confirmed_flush_lsn: connectd_replication_lag_bytes grows past the
// threshold and the summary turns amber; after resume it drains and turns
// green again.
func TestLagGrowsWhilePaused(t *testing.T) {
	pg := startMetricsDB(t, 1)
	d := newDaemon(t)
	const threshold = 256 << 10
	d.args = []string{"-o", "dashboard.sample.interval.ms=500", "-o", fmt.Sprintf("dashboard.lag.threshold.bytes=%d", threshold)}
	d.start()
	if code, body := d.do("POST", "/connectors", map[string]any{"name": "m", "config": pgConnector(pg, nil)}); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	d.waitTaskState("m", "RUNNING")
	lag := ser("connectd_replication_lag_bytes")
	d.waitMetric(lag, "lag under threshold", func(v float64, ok bool) bool { return ok && v < threshold })
	if c := d.summary().Connectors[0]; c.Colour != metrics.Green {
		t.Fatalf("before pause: colour %s (%s)", c.Colour, c.Reason)
	}
	if code, body := d.do("PUT", "/connectors/m/pause", nil); code != 202 {
		t.Fatalf("pause: %d %s", code, body)
	}
	d.waitTaskState("m", "PAUSED")
	// ~2 MB of WAL the paused connector does not confirm.
	if err := pg.Exec(context.Background(), "inventory", `INSERT INTO public.items SELECT g, g, repeat('z', 200) FROM generate_series(2, 8001) g`); err != nil {
		t.Fatal(err)
	}
	m := d.waitMetric(lag, "lag above threshold while paused", func(v float64, ok bool) bool { return ok && v > threshold })
	deadline := time.Now().Add(20 * time.Second)
	for {
		c := d.summary().Connectors[0]
		if c.Colour == metrics.Amber && strings.Contains(c.Reason, "replication lag") && c.LagBytes > threshold {
			t.Logf("paused: lag %d bytes, colour %s (%s)", c.LagBytes, c.Colour, c.Reason)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("summary never amber while paused: %+v (metrics lag %v)", c, m[lag])
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code, body := d.do("PUT", "/connectors/m/resume", nil); code != 202 {
		t.Fatalf("resume: %d %s", code, body)
	}
	d.waitMetric(ser("connectd_streaming_events_total", "op=c"), "8000 inserts streamed", eq(8000))
	d.waitMetric(lag, "lag drained after resume", func(v float64, ok bool) bool { return ok && v < threshold })
	deadline = time.Now().Add(20 * time.Second)
	for c := d.summary().Connectors[0]; c.Colour != metrics.Green; c = d.summary().Connectors[0] {
		if time.Now().After(deadline) {
			t.Fatalf("summary not green after resume: %+v", c)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

var domMetric = regexp.MustCompile(`data-metric="([a-z_0-9]+)"(?: data-table="([^"]*)")? data-value="(-?[0-9.]+)"`)

// chromium returns Debian's chromium binary; setup.sh installs it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium not found: run scripts/setup.sh (installs Debian's chromium package)")
	return ""
}

func headless(t *testing.T, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium(t), append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--user-data-dir=" + t.TempDir(), "--virtual-time-budget=4000"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return out
}

// Headless Chromium loads /ui while a connector streams from PostgreSQL; the
// numbers the page shows (data-value of each figure) equal /metrics read
// just before and after (retried until the two scrapes agree, since the
// slot lag moves with server activity). A screenshot is written as a PNG
// (to $CONNECTD_SCREENSHOT as well when set: make screenshot).
func TestDashboardInChromium(t *testing.T) {
	pg := startMetricsDB(t, 7)
	d := newDaemon(t)
	d.args = []string{"-o", "dashboard.sample.interval.ms=500"}
	d.start()
	if code, body := d.do("POST", "/connectors", map[string]any{"name": "m", "config": pgConnector(pg, nil)}); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	d.waitTaskState("m", "RUNNING")
	d.waitMetric(ser("connectd_snapshot_completed"), "snapshot completed", eq(1))
	for i := 0; i < 5; i++ {
		if err := pg.Exec(context.Background(), "inventory", fmt.Sprintf(`INSERT INTO public.items SELECT g, g, 'w' FROM generate_series(%d, %d) g`, 100+10*i, 109+10*i)); err != nil {
			t.Fatal(err)
		}
	}
	d.waitMetric(ser("connectd_source_record_write_total"), "57 records written", eq(57))
	d.waitMetric(ser("connectd_replication_lag_bytes"), "slot lag read", func(v float64, ok bool) bool { return ok })

	series := map[string]string{
		"events_seen":            ser("connectd_streaming_events_seen_total"),
		"records_written":        ser("connectd_source_record_write_total"),
		"committed_transactions": ser("connectd_streaming_committed_transactions_total"),
		"events_r":               ser("connectd_streaming_events_total", "op=r"),
		"lag_bytes":              ser("connectd_replication_lag_bytes"),
		"retained_bytes":         ser("connectd_replication_slot_retained_wal_bytes"),
		"queue":                  ser("connectd_streaming_queue_remaining_capacity"),
		"errors":                 ser("connectd_task_errors_total"),
		"dead_letters":           ser("connectd_deadletterqueue_produce_requests_total"),
		"offset_commits":         ser("connectd_offset_commit_completion_total"),
	}
	var lastErr string
	for attempt := 0; attempt < 5; attempt++ {
		before := d.scrape()
		dom := string(headless(t, "--dump-dom", d.rest+"/ui/"))
		after := d.scrape()
		if !strings.Contains(dom, `data-connector="m"`) {
			t.Fatalf("dashboard DOM has no card for m:\n%s", dom)
		}
		shown := map[string]float64{}
		for _, mt := range domMetric.FindAllStringSubmatch(dom, -1) {
			v, _ := strconv.ParseFloat(mt[3], 64)
			key := mt[1]
			if mt[2] != "" {
				key += "/" + mt[2]
			}
			shown[key] = v
		}
		var diffs []string
		check := func(key string, want float64, stable bool) {
			got, ok := shown[key]
			if !ok {
				t.Fatalf("the page shows no %s:\n%s", key, dom)
			}
			if got != want || !stable {
				diffs = append(diffs, fmt.Sprintf("%s: page %v, /metrics %v (stable %v)", key, got, want, stable))
			}
		}
		for key, s := range series {
			check(key, before[s], before[s] == after[s])
		}
		bs := ser("connectd_streaming_behind_source_seconds")
		check("behind_source_ms", before[bs]*1000, before[bs] == after[bs])
		rs := ser("connectd_snapshot_rows_scanned_total", "table=public.items")
		check("rows_scanned/public.items", before[rs], before[rs] == after[rs])
		// p50/p99 as histogram_quantile over the /metrics buckets (the
		// history is younger than the 5-minute window: all observations).
		var counts []uint64
		var prev float64
		for _, le := range append(append([]float64(nil), metrics.LatencyBuckets...), math.Inf(1)) {
			c := before[ser("connectd_end_to_end_latency_seconds_bucket", "le="+strconv.FormatFloat(le, 'g', -1, 64))]
			if math.IsInf(le, 1) {
				c = before[ser("connectd_end_to_end_latency_seconds_count")]
			}
			counts = append(counts, uint64(c-prev))
			prev = c
		}
		if prev != 50 {
			t.Fatalf("latency histogram holds %v observations, want the 50 streamed inserts", prev)
		}
		for _, q := range []struct {
			key string
			q   float64
		}{{"latency_p50_ms", 0.5}, {"latency_p99_ms", 0.99}} {
			want := metrics.Quantile(q.q, counts) * 1000
			if got := shown[q.key]; math.Abs(got-want) > 1e-6*math.Max(1, want) {
				diffs = append(diffs, fmt.Sprintf("%s: page %v, /metrics buckets %v", q.key, got, want))
			}
		}
		if shown["events_seen"] != 57 || shown["rows_scanned/public.items"] != 7 {
			t.Fatalf("page shows events_seen %v rows_scanned %v, want 57 and 7 (the changes made)", shown["events_seen"], shown["rows_scanned/public.items"])
		}
		if !strings.Contains(dom, `data-colour="green"`) || !strings.Contains(dom, `class="uplot`) {
			t.Fatalf("card not green or chart not drawn:\n%s", dom)
		}
		if len(diffs) == 0 {
			lastErr = ""
			break
		}
		lastErr = strings.Join(diffs, "\n")
		t.Logf("attempt %d: %s", attempt, lastErr)
	}
	if lastErr != "" {
		t.Fatalf("page and /metrics disagree:\n%s", lastErr)
	}

	shot := filepath.Join(t.TempDir(), "dashboard.png")
	headless(t, "--screenshot="+shot, "--window-size=1280,1000", "--hide-scrollbars", d.rest+"/ui/")
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil || img.Bounds().Dx() != 1280 {
		t.Fatalf("screenshot: %v %v", err, img)
	}
	if dst := os.Getenv("CONNECTD_SCREENSHOT"); dst != "" {
		f.Seek(0, io.SeekStart)
		b, _ := io.ReadAll(f)
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot written to %s", dst)
	}
}
