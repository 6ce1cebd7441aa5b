package metrics

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText prints the summary as `connectd status` shows it: one row per
// connector (state, colour, tasks, counts, lag, throughput, latency,
// errors), then the reason for a non-green colour, snapshot progress and
// the first line of each failure trace.
func (s Summary) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CONNECTOR\tSTATE\tCOLOUR\tTASKS\tEVENTS\tWRITTEN\tLAG BYTES\tRETAINED\tBEHIND MS\tEVENTS BEHIND\tREC/S\tP50 MS\tP99 MS\tERRORS\tDLQ")
	na := func(v int64) string {
		if v < 0 {
			return "-"
		}
		return fmt.Sprint(v)
	}
	naf := func(v float64) string {
		if v < 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f", v)
	}
	for _, c := range s.Connectors {
		var ts []string
		for _, t := range c.Tasks {
			ts = append(ts, fmt.Sprintf("%d:%s", t.ID, t.State))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%d\t%.1f\t%s\t%s\t%d\t%d\n", c.Name, c.State, c.Colour, strings.Join(ts, ","),
			c.EventsSeen, c.Written, na(c.LagBytes), na(c.RetainedBytes), na(c.BehindSourceMs), c.EventsBehind, c.ThroughputPerSec,
			naf(c.LatencyP50Ms), naf(c.LatencyP99Ms), c.Errors, c.DeadLetters)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, c := range s.Connectors {
		if c.Reason != "" {
			fmt.Fprintf(w, "%s: %s: %s\n", c.Name, c.Colour, c.Reason)
		}
		if sn := c.Snapshot; sn != nil {
			state := "completed"
			if sn.Running {
				state = "running"
			}
			fmt.Fprintf(w, "%s: snapshot %s (%.1f s)\n", c.Name, state, float64(sn.DurationMs)/1000)
			for _, t := range sn.Tables {
				fmt.Fprintf(w, "  %s: %s\n", t.Table, tableProgress(t))
			}
		}
		traces := []string{c.Trace}
		for _, t := range c.Tasks {
			traces = append(traces, t.Trace)
		}
		for _, tr := range traces {
			if tr != "" {
				fmt.Fprintf(w, "%s: trace: %s\n", c.Name, traceSummary(tr))
			}
		}
	}
	if len(s.Connectors) == 0 {
		fmt.Fprintln(w, "no connectors")
	}
	return nil
}

// tableProgress is one table's line of a snapshot: rows read, and while
// it runs the planner's estimate of its rows (pg_class.reltuples) when
// there is one; a table never analyzed has none, and "ANALYZE" gives it.
// An estimate the rows read have passed (statistics older than the rows,
// e.g. reltuples 0 of a table analyzed while empty) is printed as such
// rather than as "N of about M" with N > M.
func tableProgress(t TableSummary) string {
	switch {
	case t.Done:
		return fmt.Sprintf("%d rows, done", t.RowsScanned)
	case t.EstimatedRows >= 0 && t.RowsScanned > t.EstimatedRows:
		return fmt.Sprintf("%d rows so far (more than the estimate of %d rows: the table's statistics are stale, ANALYZE refreshes them)", t.RowsScanned, t.EstimatedRows)
	case t.EstimatedRows >= 0:
		return fmt.Sprintf("%d of about %d rows", t.RowsScanned, t.EstimatedRows)
	}
	return fmt.Sprintf("%d rows so far (no row estimate: the table was never analyzed)", t.RowsScanned)
}

// traceSummary is a trace's message without its stack: the first line and
// the continuation lines up to the first stack frame ("\tat …"), at most
// five, joined by " / ". A Java trace keeps its exception line; a Go error
// wrapped over several lines (pgx puts the server's reason on the last one)
// keeps its cause.
func traceSummary(tr string) string {
	lines := strings.Split(strings.TrimSpace(tr), "\n")
	out := []string{strings.TrimSpace(lines[0])}
	for _, l := range lines[1:] {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "at ") || len(out) == 5 {
			break
		}
		if l != "" {
			out = append(out, l)
		}
	}
	return strings.Join(out, " / ")
}
