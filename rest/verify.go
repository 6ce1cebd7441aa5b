package rest

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/connectd/connectd/runtime"
)

// connectd verify over REST (not part of Kafka Connect's API):
//
//	POST /connectors/{name}/verify  body (optional): runtime.VerifyOptions
//	     202 with the verification's first state; 409 while one runs
//	GET  /connectors/{name}/verify  200 with the last verification's state
//	     and result (runtime.VerifyResult); 404 when none ran on this worker
//
// The verification runs on the worker that receives the request; "against"
// names a sink connector or a SQL job of that worker (runtime/verify_job.go).

func (s *Server) startVerify(c echo.Context) error {
	var opts runtime.VerifyOptions
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, 1<<20))
	if err != nil {
		return &runtime.BadRequestError{Msg: "reading the request body: " + err.Error()}
	}
	if strings.TrimSpace(string(body)) != "" {
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&opts); err != nil {
			return &runtime.BadRequestError{Msg: "Request body is not verify options (tables, rounds, settle_ms, buckets, examples, against): " + err.Error()}
		}
	}
	res, err := s.worker.Herder.StartVerify(c.Param("name"), opts)
	if errors.Is(err, runtime.ErrVerifyRunning) {
		return &runtime.ConflictError{Msg: "A verification of connector " + c.Param("name") + " is running"}
	}
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusAccepted, res)
}

func (s *Server) getVerify(c echo.Context) error {
	res, err := s.worker.Herder.VerifyStatus(c.Param("name"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, res)
}
