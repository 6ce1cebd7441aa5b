package rest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/connectd/connectd/flinklite/sql"
	"github.com/labstack/echo/v4"
)

// routeSQL serves streaming SQL (package flinklite/sql): POST /sql runs
// one statement: CREATE TABLE name AS SELECT … or INSERT INTO name SELECT
// … starts a job writing the upsert topic name (201), EXPLAIN … answers
// its operator plan (200), an error in the statement is 400 with its line
// and column. GET /sql/jobs lists the running SQL jobs, DELETE
// /sql/jobs/{id} stops one (the id is its output topic). The body is the
// statement's text, or JSON {"statement": "…"}. A FROM table name is the
// Debezium topic (`shop.public.orders`, quoted with backticks).
//
// The jobs run on the worker that received them, with their state in
// memory: they are not persisted, and a worker restart stops them (this
// slice of issue 19; a job started again re-reads its sources from the
// beginning and rewrites the same results).
func (s *Server) routeSQL(e *echo.Echo) {
	e.POST("/sql", s.postSQL)
	e.GET("/sql/jobs", s.listSQLJobs)
	e.DELETE("/sql/jobs/:id", s.deleteSQLJob)
}

// sqlJobs are the SQL jobs of this worker, by output topic.
type sqlJobs struct {
	mu   sync.Mutex
	jobs map[string]*sqlJob
}

type sqlJob struct {
	q   *sql.Query
	job *sql.Job
}

// SQLJobInfo is a SQL job as GET /sql/jobs and POST /sql show it.
type SQLJobInfo struct {
	ID      string   `json:"id"`
	SQL     string   `json:"sql"`
	Sink    string   `json:"sink"`
	Sources []string `json:"sources"`
	Columns []string `json:"columns"`
	Key     []string `json:"key"`
	Plan    string   `json:"plan"`
	State   string   `json:"state"`
	Trace   string   `json:"trace,omitempty"`
}

func (j *sqlJob) info() SQLJobInfo {
	i := SQLJobInfo{ID: j.q.Sink, SQL: j.q.SQL, Sink: j.q.Sink, Sources: j.q.Topics(), Columns: j.q.Columns, Key: j.q.KeyColumns, Plan: j.q.Plan(), State: "RUNNING"}
	select {
	case <-j.job.Done():
		i.State = "STOPPED"
		if err := j.job.Err(); err != nil {
			i.State, i.Trace = "FAILED", err.Error()
		}
	default:
	}
	return i
}

// sqlErrorBody is ErrorBody with the position of an error in the
// statement.
type sqlErrorBody struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
	Line      int    `json:"line,omitempty"`
	Column    int    `json:"column,omitempty"`
}

func sqlError(c echo.Context, code int, err error) error {
	body := sqlErrorBody{ErrorCode: code, Message: err.Error()}
	var se *sql.Error
	if errors.As(err, &se) {
		body.Line, body.Column = se.Line, se.Column
	}
	return writeJSON(c, code, body)
}

func (s *Server) sqlRegistry() *sqlJobs {
	s.sqlOnce.Do(func() { s.sql = &sqlJobs{jobs: map[string]*sqlJob{}} })
	return s.sql
}

// postSQL answers 201 with the started job, 200 {"plan": …} for EXPLAIN,
// 400 for an invalid or unsupported statement, 409 when a job already
// writes the output topic.
func (s *Server) postSQL(c echo.Context) error {
	b, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	text := string(b)
	if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") {
		var req struct {
			Statement string `json:"statement"`
		}
		if err := json.Unmarshal(b, &req); err != nil || req.Statement == "" {
			return sqlError(c, http.StatusBadRequest, errors.New(`the body is a SQL statement, or JSON {"statement": "…"}`))
		}
		text = req.Statement
	}
	q, err := sql.Compile(text, nil)
	if err != nil {
		return sqlError(c, http.StatusBadRequest, err)
	}
	if q.Explain {
		return writeJSON(c, http.StatusOK, map[string]string{"plan": q.Plan()})
	}
	if q.Sink == "" {
		return sqlError(c, http.StatusBadRequest, errors.New("unsupported: an ad-hoc SELECT streaming its changelog to the caller; write CREATE TABLE name AS SELECT … or INSERT INTO name SELECT …"))
	}
	reg := s.sqlRegistry()
	reg.mu.Lock()
	defer reg.mu.Unlock()
	if old, ok := reg.jobs[q.Sink]; ok {
		select {
		case <-old.job.Done():
		default:
			return sqlError(c, http.StatusConflict, errors.New("a SQL job already writes "+q.Sink+" (DELETE /sql/jobs/"+q.Sink+" first)"))
		}
	}
	var opts = s.worker.Herder.InternalKafkaOpts()
	j, err := sql.Start(context.Background(), q, sql.RunConfig{Brokers: s.worker.Brokers, ClientOpts: opts})
	if err != nil {
		return sqlError(c, http.StatusBadRequest, err)
	}
	sj := &sqlJob{q: q, job: j}
	reg.jobs[q.Sink] = sj
	return writeJSON(c, http.StatusCreated, sj.info())
}

func (s *Server) listSQLJobs(c echo.Context) error {
	reg := s.sqlRegistry()
	reg.mu.Lock()
	defer reg.mu.Unlock()
	out := []SQLJobInfo{}
	for _, j := range reg.jobs {
		out = append(out, j.info())
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return writeJSON(c, http.StatusOK, out)
}

// deleteSQLJob stops a job and answers 204 (404 for an unknown id).
func (s *Server) deleteSQLJob(c echo.Context) error {
	reg := s.sqlRegistry()
	reg.mu.Lock()
	j, ok := reg.jobs[c.Param("id")]
	delete(reg.jobs, c.Param("id"))
	reg.mu.Unlock()
	if !ok {
		return sqlError(c, http.StatusNotFound, errors.New("no SQL job "+c.Param("id")))
	}
	_ = j.job.Stop()
	return c.NoContent(http.StatusNoContent)
}

// stopSQLJobs stops every SQL job (server shutdown).
func (s *Server) stopSQLJobs() {
	reg := s.sqlRegistry()
	reg.mu.Lock()
	defer reg.mu.Unlock()
	for id, j := range reg.jobs {
		_ = j.job.Stop()
		delete(reg.jobs, id)
	}
}
