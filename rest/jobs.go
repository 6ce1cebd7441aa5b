package rest

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/connectd/connectd/flinklite/job"
	"github.com/labstack/echo/v4"
)

// routeJobs serves the flinklite jobs of this worker (package
// flinklite/job): POST /jobs (a JSON job spec), GET /jobs, GET /jobs/{id},
// DELETE /jobs/{id} and POST /jobs/{id}/savepoints, after Flink's REST
// API (/jobs, /jobs/:jobid, /jobs/:jobid/savepoints). With the embedded
// broker jobs run on the worker that received them (their checkpoints are
// its local files); on a distributed worker (bootstrap.servers) any
// worker writes the spec to the job spec topic and every worker runs the
// job's share of partitions it is assigned. Either way these requests are
// not forwarded to the leader.
func (s *Server) routeJobs(e *echo.Echo) {
	e.POST("/jobs", s.createJob)
	e.GET("/jobs", s.listJobs)
	e.GET("/jobs/:id", s.getJob)
	e.DELETE("/jobs/:id", s.deleteJob)
	e.POST("/jobs/:id/savepoints", s.savepointJob)
}

// jobErrorBody is ErrorBody with the invalid fields of a spec.
type jobErrorBody struct {
	ErrorCode int              `json:"error_code"`
	Message   string           `json:"message"`
	Errors    []job.FieldError `json:"errors,omitempty"`
}

// jobError writes err with its status: 400 and every invalid field for a
// *job.SpecInvalidError, 404 for job.ErrNotFound, 409 for job.ErrExists,
// job.ErrNotRunning and job.ErrUnsupported, else 500.
func jobError(c echo.Context, err error) error {
	code := http.StatusInternalServerError
	body := jobErrorBody{Message: err.Error()}
	var si *job.SpecInvalidError
	switch {
	case errors.As(err, &si):
		code = http.StatusBadRequest
		body.Errors = si.Errors
	case errors.Is(err, job.ErrNotFound):
		code = http.StatusNotFound
	case errors.Is(err, job.ErrExists), errors.Is(err, job.ErrNotRunning), errors.Is(err, job.ErrUnsupported):
		code = http.StatusConflict
	}
	body.ErrorCode = code
	return writeJSON(c, code, body)
}

func (s *Server) jobs(c echo.Context) (*job.Manager, error) {
	if s.worker.Jobs == nil {
		return nil, jobError(c, errors.New("flinklite jobs are not enabled on this worker"))
	}
	return s.worker.Jobs, nil
}

// createJob answers 201 with the job's info, 400 with the invalid fields.
func (s *Server) createJob(c echo.Context) error {
	m, err := s.jobs(c)
	if m == nil {
		return err
	}
	b, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	spec, err := job.ParseSpec(b)
	if err != nil {
		return jobError(c, err)
	}
	if err := m.Create(spec); err != nil {
		return jobError(c, err)
	}
	info, err := m.Get(spec.ID)
	if err != nil {
		return jobError(c, err)
	}
	return writeJSON(c, http.StatusCreated, info)
}

func (s *Server) listJobs(c echo.Context) error {
	m, err := s.jobs(c)
	if m == nil {
		return err
	}
	return writeJSON(c, http.StatusOK, m.List())
}

func (s *Server) getJob(c echo.Context) error {
	m, err := s.jobs(c)
	if m == nil {
		return err
	}
	info, err := m.Get(c.Param("id"))
	if err != nil {
		return jobError(c, err)
	}
	return writeJSON(c, http.StatusOK, info)
}

// deleteJob answers 204.
func (s *Server) deleteJob(c echo.Context) error {
	m, err := s.jobs(c)
	if m == nil {
		return err
	}
	if err := m.Delete(c.Request().Context(), c.Param("id")); err != nil {
		return jobError(c, err)
	}
	return c.NoContent(http.StatusNoContent)
}

// savepointJob answers 200 {"location": path} once the savepoint is
// written (Flink answers 202 with a trigger id to poll; a savepoint here
// takes one checkpoint, so the request waits for it, up to requestTimeout).
func (s *Server) savepointJob(c echo.Context) error {
	m, err := s.jobs(c)
	if m == nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), requestTimeout)
	defer cancel()
	path, err := m.Savepoint(ctx, c.Param("id"))
	if err != nil {
		return jobError(c, err)
	}
	return writeJSON(c, http.StatusOK, map[string]string{"location": path})
}
