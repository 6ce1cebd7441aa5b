package rest

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/connectd/connectd/flinklite/sql"
	"github.com/labstack/echo/v4"
)

// routeSQL serves streaming SQL (package flinklite/sql): POST /sql runs
// one statement: CREATE TABLE name AS SELECT … or INSERT INTO name SELECT
// … starts a job writing the upsert topic name (201), EXPLAIN … answers
// its operator plan (200), an error in the statement is 400 with its line
// and column. GET /sql/jobs lists the SQL jobs, DELETE /sql/jobs/{id}
// removes one (the id is its output topic). The body is the statement's
// text, or JSON {"statement": "…", "configuration": {"table.exec.state.ttl":
// "1 h"}} (Flink SQL Gateway's executionConfig keys, sql.ParseConfig). A
// FROM table name is the Debezium topic (`shop.public.orders`, quoted with
// backticks).
//
// The jobs run on the worker that received them and are persisted in its
// data.dir with their checkpoints (sql.Manager): a worker restart starts
// them again from their last checkpoint; DELETE removes them durably.
func (s *Server) routeSQL(e *echo.Echo) {
	e.POST("/sql", s.postSQL)
	e.GET("/sql/jobs", s.listSQLJobs)
	e.GET("/sql/jobs/:id", s.getSQLJob)
	e.DELETE("/sql/jobs/:id", s.deleteSQLJob)
}

// SQLJobInfo is a SQL job as GET /sql/jobs and POST /sql show it.
type SQLJobInfo = sql.JobInfo

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

func (s *Server) sqlManager(c echo.Context) (*sql.Manager, error) {
	if s.worker.SQL == nil {
		return nil, sqlError(c, http.StatusServiceUnavailable, errors.New("SQL jobs are not enabled on this worker"))
	}
	return s.worker.SQL, nil
}

// postSQL answers 201 with the started job, 200 {"plan": …} for EXPLAIN,
// 400 for an invalid or unsupported statement or configuration, 409 when
// a job already writes the output topic.
func (s *Server) postSQL(c echo.Context) error {
	b, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	text := string(b)
	var config map[string]string
	if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") {
		var req struct {
			Statement     string            `json:"statement"`
			Configuration map[string]string `json:"configuration"`
		}
		if err := json.Unmarshal(b, &req); err != nil || req.Statement == "" {
			return sqlError(c, http.StatusBadRequest, errors.New(`the body is a SQL statement, or JSON {"statement": "…", "configuration": {…}}`))
		}
		text, config = req.Statement, req.Configuration
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
	m, err := s.sqlManager(c)
	if err != nil {
		return err
	}
	info, err := m.Submit(c.Request().Context(), q, config)
	switch {
	case errors.Is(err, sql.ErrExists):
		return sqlError(c, http.StatusConflict, errors.New("a SQL job already writes "+q.Sink+" (DELETE /sql/jobs/"+q.Sink+" first)"))
	case err != nil:
		return sqlError(c, http.StatusBadRequest, err)
	}
	return writeJSON(c, http.StatusCreated, info)
}

func (s *Server) listSQLJobs(c echo.Context) error {
	m, err := s.sqlManager(c)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, m.List())
}

func (s *Server) getSQLJob(c echo.Context) error {
	m, err := s.sqlManager(c)
	if err != nil {
		return err
	}
	info, err := m.Get(c.Param("id"))
	if err != nil {
		return sqlError(c, http.StatusNotFound, errors.New("no SQL job "+c.Param("id")))
	}
	return writeJSON(c, http.StatusOK, info)
}

// deleteSQLJob stops a job, removes it durably and answers 204 (404 for
// an unknown id).
func (s *Server) deleteSQLJob(c echo.Context) error {
	m, err := s.sqlManager(c)
	if err != nil {
		return err
	}
	if err := m.Delete(c.Request().Context(), c.Param("id")); err != nil {
		if errors.Is(err, sql.ErrNotFound) {
			return sqlError(c, http.StatusNotFound, errors.New("no SQL job "+c.Param("id")))
		}
		return sqlError(c, http.StatusInternalServerError, err)
	}
	return c.NoContent(http.StatusNoContent)
}
