package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/connectd/connectd/flinklite/sql"
	"github.com/connectd/connectd/rest"
)

// sqlCmd runs the statements of a file (-f) or of -e on the worker at
// --url (POST /sql): each CREATE TABLE … AS SELECT / INSERT INTO … SELECT
// starts a SQL job, each EXPLAIN prints its plan. An error names the
// file, line and column; the statements after it are not run.
func sqlCmd(args []string, stdout io.Writer) error {
	fs, cfgPath, over := workerFlags("sql")
	file := fs.String("f", "", "SQL file of statements separated by ;")
	stmt := fs.String("e", "", "a statement to run (instead of -f)")
	url := fs.String("url", "", "REST URL of the worker (default: from listeners)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	script, name := *stmt, "-e"
	switch {
	case *file != "" && *stmt != "":
		return errors.New("sql: -f and -e are exclusive")
	case *file != "":
		b, err := os.ReadFile(*file)
		if err != nil {
			return err
		}
		script, name = string(b), *file
	case *stmt == "":
		fs.Usage()
		return flag.ErrHelp
	}
	stmts, err := sql.Split(script)
	if err != nil {
		return fmt.Errorf("%s:%w", name, positioned(err, 1, 1))
	}
	base, err := restBase(*url, *cfgPath, *over)
	if err != nil {
		return err
	}
	cl := &http.Client{Timeout: 30 * time.Second}
	for _, st := range stmts {
		resp, err := cl.Post(base+"/sql", "application/sql", strings.NewReader(st.Text))
		if err != nil {
			return fmt.Errorf("sql: %w", err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		switch resp.StatusCode {
		case http.StatusOK:
			var r struct {
				Plan string `json:"plan"`
			}
			if err := json.Unmarshal(body, &r); err != nil {
				return fmt.Errorf("sql: %s", body)
			}
			fmt.Fprint(stdout, r.Plan)
		case http.StatusCreated:
			var j rest.SQLJobInfo
			if err := json.Unmarshal(body, &j); err != nil {
				return fmt.Errorf("sql: %s", body)
			}
			fmt.Fprintf(stdout, "started SQL job %s: upsert topic %s (key %s) from %s\n%s", j.ID, j.Sink, strings.Join(j.Key, ", "), strings.Join(j.Sources, ", "), j.Plan)
		default:
			var e struct {
				Message      string `json:"message"`
				Line, Column int
			}
			if json.Unmarshal(body, &e) != nil || e.Message == "" {
				return fmt.Errorf("sql: POST /sql: %s: %s", resp.Status, bytes.TrimSpace(body))
			}
			if e.Line > 0 {
				line, col := st.Line+e.Line-1, e.Column
				if e.Line == 1 {
					col += st.Column - 1
				}
				msg := e.Message
				if i := strings.Index(msg, ": "); strings.HasPrefix(msg, "line ") && i > 0 {
					msg = msg[i+2:]
				}
				return fmt.Errorf("%s:%d:%d: %s", name, line, col, msg)
			}
			return fmt.Errorf("%s:%d:%d: %s", name, st.Line, st.Column, e.Message)
		}
	}
	return nil
}

// positioned formats a *sql.Error of a statement starting at line, col as
// "line:col: msg".
func positioned(err error, line, col int) error {
	var e *sql.Error
	if !errors.As(err, &e) {
		return err
	}
	c := e.Column
	if e.Line == 1 {
		c += col - 1
	}
	return fmt.Errorf("%d:%d: %s", line+e.Line-1, c, e.Msg)
}
