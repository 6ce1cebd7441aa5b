package rest

import (
	"encoding/json"
	"net/http"

	"github.com/connectd/connectd/runtime"
	"github.com/labstack/echo/v4"
)

// loggerLevelBody is Kafka Connect's LoggerLevel (3.9): last_modified is
// null until the level is set through this API.
type loggerLevelBody struct {
	Level        string `json:"level"`
	LastModified *int64 `json:"last_modified"`
}

// listLoggers serves GET /admin/loggers: the loggers with a level of their
// own, and root, by name (LoggingResource.listLoggers).
func (s *Server) listLoggers(c echo.Context) error {
	out := map[string]loggerLevelBody{}
	for n, l := range s.worker.Herder.Loggers().AllLevels() {
		out[n] = loggerLevelBody{l.Level, l.LastModified}
	}
	return writeJSON(c, http.StatusOK, out)
}

// getLogger serves GET /admin/loggers/{logger}: 404 "Logger X not found."
// for a logger that does not exist.
func (s *Server) getLogger(c echo.Context) error {
	name := c.Param("logger")
	l, ok := s.worker.Herder.Loggers().Level(name)
	if !ok {
		return &notFoundError{"Logger " + name + " not found."}
	}
	return writeJSON(c, http.StatusOK, loggerLevelBody{l.Level, l.LastModified})
}

// setLogger serves PUT /admin/loggers/{logger} with {"level":"DEBUG"}:
// sets the level of the logger and of every logger whose name starts with
// it, and answers 200 with their sorted names (scope=worker, the default;
// scope=cluster answers 204 as on a one-worker cluster).
func (s *Server) setLogger(c echo.Context) error {
	name := c.Param("logger")
	var body map[string]string
	if err := json.NewDecoder(c.Request().Body).Decode(&body); err != nil {
		return &runtime.BadRequestError{Msg: "Request body is not a JSON object: " + err.Error()}
	}
	level, ok := body["level"]
	if !ok {
		return &runtime.BadRequestError{Msg: "Desired 'level' parameter was not specified in request."}
	}
	if !runtime.ValidLevel(level) {
		return &notFoundError{"invalid log level '" + level + "'."}
	}
	affected := s.worker.Herder.Loggers().SetLevel(name, level)
	if c.QueryParam("scope") == "cluster" {
		return c.NoContent(http.StatusNoContent)
	}
	if affected == nil {
		affected = []string{}
	}
	return writeJSON(c, http.StatusOK, affected)
}

// notFoundError is a 404 with Kafka Connect's message.
type notFoundError struct{ msg string }

func (e *notFoundError) Error() string { return e.msg }
func (e *notFoundError) Unwrap() error { return runtime.ErrNotFound }
