package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/connectd/connectd/runtime"
)

// errDifferent is verify's result when downstream differs from the source:
// exit code 1 (an error to run the verification exits 2).
type verifyExit struct{ code int }

func (e verifyExit) Error() string { return fmt.Sprintf("exit %d", e.code) }

// verify runs connectd verify CONNECTOR on the worker at --url (POST
// /connectors/{name}/verify), follows its progress on stderr and prints the
// result. Exit codes: 0 consistent, 1 differences found, 2 the verification
// could not run.
func verify(args []string) error {
	fs, cfgPath, over := workerFlags("verify")
	url := fs.String("url", "", "REST URL of the worker (default: from listeners)")
	var tables multiFlag
	fs.Var(&tables, "table", "compare only this table (schema.table or db.table) or topic (repeatable)")
	rounds := fs.Int("rounds", 3, "how many times a differing key is looked at before it is reported (changes in flight settle)")
	settle := fs.Duration("settle", 10*time.Second, "longest wait between rounds for the topics to stop growing")
	buckets := fs.Int("buckets", 1, "split the keys into N passes, each reading source and topics again, to divide memory by N")
	examples := fs.Int("examples", 5, "differing keys shown per table and kind")
	asJSON := fs.Bool("json", false, "print the result object (as GET /connectors/{name}/verify) instead of a table")
	against := fs.String("against", "topic", "what to compare the source with: topic (the connector's topics) the name of a JDBC sink connector reading them (its target tables), or the id of a SQL job reading them (its result topic against its SELECT run on the source)")
	name, rest := "", args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, rest = args[0], args[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if name == "" && fs.NArg() > 0 {
		name = fs.Arg(0)
	}
	if name == "" {
		return fmt.Errorf("usage: connectd verify CONNECTOR [--against topic|SINK_CONNECTOR|SQL_JOB] [--table T]... [--rounds N] [--buckets N] [--json] [--url URL]")
	}
	base, err := restBase(*url, *cfgPath, *over)
	if err != nil {
		return err
	}
	body, _ := json.Marshal(runtime.VerifyOptions{Tables: tables, Rounds: *rounds, SettleMs: int(settle.Milliseconds()), Buckets: *buckets, Examples: *examples, Against: *against})
	cl := &http.Client{Timeout: 30 * time.Second}
	path := base + "/connectors/" + name + "/verify"
	resp, err := cl.Post(path, "application/json", bytes.NewReader(body))
	if err != nil {
		return verifyFailed(fmt.Errorf("verify: %w", err))
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return verifyFailed(fmt.Errorf("verify: POST %s: %s: %s", path, resp.Status, strings.TrimSpace(string(b))))
	}
	var res runtime.VerifyResult
	lastPhase := ""
	for {
		if err := json.Unmarshal(b, &res); err != nil {
			return verifyFailed(fmt.Errorf("verify: decoding %s: %w", path, err))
		}
		if res.State != runtime.VerifyRunning {
			break
		}
		if res.Phase != lastPhase {
			fmt.Fprintf(os.Stderr, "verify %s: %s (source rows read %d, topic records read %d)\n", name, res.Phase, res.SourceRowsRead, res.TopicRecordsRead)
			lastPhase = res.Phase
		}
		time.Sleep(500 * time.Millisecond)
		resp, err := cl.Get(path)
		if err != nil {
			return verifyFailed(fmt.Errorf("verify: %w", err))
		}
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return verifyFailed(fmt.Errorf("verify: GET %s: %s: %s", path, resp.Status, strings.TrimSpace(string(b))))
		}
	}
	if *asJSON {
		out, _ := json.MarshalIndent(res, "", "  ")
		fmt.Println(string(out))
	} else {
		writeVerifyResult(os.Stdout, res)
	}
	switch res.State {
	case runtime.VerifyConsistent:
		return nil
	case runtime.VerifyDifferent:
		return verifyExit{1}
	default:
		return verifyFailed(fmt.Errorf("verify %s failed: %s", name, res.Error))
	}
}

func verifyFailed(err error) error {
	fmt.Fprintln(os.Stderr, "connectd:", err)
	return verifyExit{2}
}

// compactJSON is v as one line of JSON: numbers as written (an LSN
// 26483320, not %v's 2.648332e+07).
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// positionOffsets is the connector's offsets that are source positions,
// as compactJSON: the PostgreSQL connector's relation history entries
// (offsets of one key, "versions") describe table structures, not
// positions, and run to kilobytes; `--json` and the REST result keep them.
func positionOffsets(offs []map[string]any) string {
	var out []map[string]any
	for _, o := range offs {
		if _, history := o["versions"]; history && len(o) == 1 {
			continue
		}
		out = append(out, o)
	}
	return compactJSON(out)
}

func writeVerifyResult(w io.Writer, res runtime.VerifyResult) {
	fmt.Fprintf(w, "connector %s: %s", res.Connector, res.State)
	if res.Error != "" {
		fmt.Fprintf(w, " (%s)", res.Error)
	}
	fmt.Fprintf(w, "\nsource position %s; connector offsets %s; %d round(s); ignored fields %s\n\n",
		compactJSON(res.SourcePosition), positionOffsets(res.ConnectorOffsets), res.Rounds, strings.Join(res.Ignored, ", "))
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	sink := res.Options.Against != "" && res.Options.Against != "topic" && res.Job == ""
	switch {
	case res.Job != "":
		fmt.Fprintf(w, "against SQL job %s (source records whose results it had not committed: %d)\n", res.Job, res.JobLag)
		fmt.Fprintln(tw, "RESULT TOPIC\tSOURCE TABLES\tSOURCE ROWS\tTOPIC KEYS\tMISSING\tEXTRA\tDIFFERENT")
		for _, t := range res.Tables {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\n", t.Topic, t.Table, t.SourceRows, t.TopicKeys, t.Missing, t.Extra, t.Different)
		}
	case sink:
		fmt.Fprintf(w, "against sink connector %s (records it had not committed: %d)\n", res.Options.Against, res.SinkLag)
		fmt.Fprintln(tw, "SINK TABLE\tEXPECTED ROWS\tSINK ROWS\tMISSING\tEXTRA\tDIFFERENT\tPROBLEM")
		for _, t := range res.Tables {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\n", t.SinkTable, t.SourceRows, t.SinkRows, t.Missing, t.Extra, t.Different, t.Problem)
		}
	default:
		fmt.Fprintln(tw, "TOPIC\tTABLE\tSOURCE ROWS\tTOPIC KEYS\tMISSING\tEXTRA\tDIFFERENT\tCHANGING")
		for _, t := range res.Tables {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", t.Topic, t.Table, t.SourceRows, t.TopicKeys, t.Missing, t.Extra, t.Different, t.Changing)
		}
	}
	tw.Flush()
	for _, t := range res.Tables {
		for _, ex := range t.Examples {
			name := t.Topic
			if sink {
				name = t.SinkTable
			}
			fmt.Fprintf(w, "\n%s %s key %s", name, ex.Kind, ex.Key)
			if len(ex.Columns) > 0 {
				fmt.Fprintf(w, " columns %s", strings.Join(ex.Columns, ", "))
			}
			if ex.Source != nil {
				fmt.Fprintf(w, "\n  source: %s", ex.Source)
			}
			if ex.Topic != nil {
				fmt.Fprintf(w, "\n  topic:  %s", ex.Topic)
			}
			if ex.Sink != nil {
				fmt.Fprintf(w, "\n  sink:   %s", ex.Sink)
			}
			fmt.Fprintln(w)
		}
	}
}
