package rest

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/connectd/connectd/flinklite/job"
	"github.com/labstack/echo/v4"
)

// routeJobs serves the flinklite jobs of this worker (package
// flinklite/job): POST /jobs (a JSON job spec), GET /jobs, GET /jobs/{id},
// DELETE /jobs/{id}, POST /jobs/{id}/savepoints and GET
// /jobs/{id}/savepoints/{triggerid}, after Flink's REST API (/jobs,
// /jobs/:jobid, /jobs/:jobid/savepoints, /jobs/:jobid/savepoints/:triggerid).
// With the embedded broker jobs run on the worker that received them (their
// checkpoints are its local files); on a distributed worker
// (bootstrap.servers) any worker writes the spec to the job spec topic and
// every worker runs the job's share of partitions it is assigned. Either
// way these requests are not forwarded to the leader.
func (s *Server) routeJobs(e *echo.Echo) {
	e.POST("/jobs", s.createJob)
	e.GET("/jobs", s.listJobs)
	e.GET("/jobs/:id", s.getJob)
	e.DELETE("/jobs/:id", s.deleteJob)
	e.POST("/jobs/:id/savepoints", s.savepointJob)
	e.GET("/jobs/:id/savepoints/:trigger", s.savepointStatus)
}

// jobErrorBody is ErrorBody with the invalid fields of a spec.
type jobErrorBody struct {
	ErrorCode int              `json:"error_code"`
	Message   string           `json:"message"`
	Errors    []job.FieldError `json:"errors,omitempty"`
}

// jobError writes err with its status: 400 and every invalid field for a
// *job.SpecInvalidError, 404 for job.ErrNotFound and
// job.ErrTriggerNotFound, 409 for job.ErrExists, job.ErrNotRunning and
// job.ErrUnsupported, else 500.
func jobError(c echo.Context, err error) error {
	code := http.StatusInternalServerError
	body := jobErrorBody{Message: err.Error()}
	var si *job.SpecInvalidError
	switch {
	case errors.As(err, &si):
		code = http.StatusBadRequest
		body.Errors = si.Errors
	case errors.Is(err, job.ErrNotFound), errors.Is(err, job.ErrTriggerNotFound):
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

// savepointJob triggers a savepoint and answers 202 {"request-id":
// trigger id} at once, as Flink's POST /jobs/:jobid/savepoints (body
// SavepointTriggerRequestBody: "target-directory", "cancel-job"; an empty
// body is {}, as in Flink); GET /jobs/{id}/savepoints/{trigger} polls it.
// 400 for an invalid body, 404 for an unknown job, 409 when the job is not
// running.
func (s *Server) savepointJob(c echo.Context) error {
	m, err := s.jobs(c)
	if m == nil {
		return err
	}
	b, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	var req job.SavepointRequest
	if len(bytes.TrimSpace(b)) > 0 {
		if err := job.DecodeStrict(b, &req, "Savepoint request"); err != nil {
			return jobError(c, err)
		}
	}
	trigger, err := m.TriggerSavepoint(c.Param("id"), req)
	if err != nil {
		return jobError(c, err)
	}
	return writeJSON(c, http.StatusAccepted, map[string]string{"request-id": trigger})
}

// savepointStatus answers 200 with Flink's AsynchronousOperationResult:
// {"status": {"id": "IN_PROGRESS"}} or {"status": {"id": "COMPLETED"},
// "operation": {"location": path} or {"failure-cause": {...}}}; 404 for an
// unknown job or trigger id.
func (s *Server) savepointStatus(c echo.Context) error {
	m, err := s.jobs(c)
	if m == nil {
		return err
	}
	st, err := m.SavepointStatus(c.Param("id"), c.Param("trigger"))
	if err != nil {
		return jobError(c, err)
	}
	return writeJSON(c, http.StatusOK, st)
}
