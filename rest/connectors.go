package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/runtime"
	"github.com/labstack/echo/v4"
)

// requestTimeout is ConnectorsResource.REQUEST_TIMEOUT_MS.
const requestTimeout = 90 * time.Second

func reqCtx(c echo.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.Request().Context(), requestTimeout)
}

// notFound is Jersey's answer to a path that matches no resource method
// (including a path parameter that does not convert, such as a non-integer
// task id).
func notFound() error { return echo.NewHTTPError(http.StatusNotFound) }

// decodeConfig reads a JSON object of connector properties. Scalars are
// taken as their text, as Jackson does for Map<String, String>; a null
// value is kept as nil.
func decodeConfig(c echo.Context) (map[string]*string, error) {
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(c.Request().Body)
	if err := dec.Decode(&raw); err != nil || raw == nil {
		msg := "Request body is not a JSON object"
		if err != nil {
			msg += ": " + err.Error()
		}
		return nil, &runtime.BadRequestError{Msg: msg}
	}
	out := make(map[string]*string, len(raw))
	for k, v := range raw {
		v = bytes.TrimSpace(v)
		switch {
		case string(v) == "null":
			out[k] = nil
		case len(v) > 0 && v[0] == '"':
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, &runtime.BadRequestError{Msg: err.Error()}
			}
			out[k] = &s
		case len(v) > 0 && (v[0] == '{' || v[0] == '['):
			return nil, &runtime.BadRequestError{Msg: fmt.Sprintf("Cannot deserialize value of type `java.lang.String` from %s value (key %q)", map[byte]string{'{': "Object", '[': "Array"}[v[0]], k)}
		default:
			s := string(v)
			out[k] = &s
		}
	}
	return out, nil
}

// putConfig serves PUT /connectors/{c}/config: 201 with Location when it
// created the connector, 200 when it replaced the config (the tasks restart
// with the new config); the body is ConnectorInfo
// (ConnectorsResource.putConnectorConfig).
func (s *Server) putConfig(c echo.Context) error {
	name := c.Param("name")
	raw, err := decodeConfig(c)
	if err != nil {
		return err
	}
	cfg := map[string]string{}
	var nulls []string
	for k, v := range raw {
		if v == nil {
			nulls = append(nulls, k)
			continue
		}
		cfg[k] = *v
	}
	if len(nulls) > 0 {
		// AbstractHerder.validateConnectorConfig's message for null values.
		errs := make([]connect.ConfigError, len(nulls))
		for i, k := range nulls {
			errs[i] = connect.ConfigError{Key: k, Message: "Null value can not be supplied as the configuration value."}
		}
		return &runtime.ConfigInvalidError{Errors: errs}
	}
	if included, ok := cfg["name"]; ok && included != name {
		return &runtime.BadRequestError{Msg: "Connector name configuration (" + included + ") doesn't match connector name in the URL (" + name + ")"}
	}
	ctx, cancel := reqCtx(c)
	defer cancel()
	info, created, err := s.worker.Herder.PutConnectorConfig(ctx, name, cfg, true, "")
	if err != nil {
		return err
	}
	if created {
		return writeCreated(c, name, info)
	}
	return writeJSON(c, http.StatusOK, infoBody(info))
}

// patchConfig serves PATCH /connectors/{c}/config (KIP-477): keys with a
// value are set, keys with null removed; 200 with ConnectorInfo.
func (s *Server) patchConfig(c echo.Context) error {
	patch, err := decodeConfig(c)
	if err != nil {
		return err
	}
	ctx, cancel := reqCtx(c)
	defer cancel()
	info, err := s.worker.Herder.PatchConnectorConfig(ctx, c.Param("name"), patch)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, infoBody(info))
}

// pause, resume and stop serve PUT /connectors/{c}/pause|resume|stop
// once the target state is in the config topic: pause and resume answer
// 202, stop 204 (ConnectorsResource: stopConnector returns void), all
// without a body.
func (s *Server) pause(c echo.Context) error {
	return s.target(c, s.worker.Herder.PauseConnector)
}

func (s *Server) resume(c echo.Context) error {
	return s.target(c, s.worker.Herder.ResumeConnector)
}

func (s *Server) stop(c echo.Context) error {
	ctx, cancel := reqCtx(c)
	defer cancel()
	if err := s.worker.Herder.StopConnector(ctx, c.Param("name")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) target(c echo.Context, f func(context.Context, string) error) error {
	ctx, cancel := reqCtx(c)
	defer cancel()
	if err := f(ctx, c.Param("name")); err != nil {
		return err
	}
	return c.NoContent(http.StatusAccepted)
}

// queryBool parses a Boolean query parameter as JAX-RS does
// (Boolean.valueOf: "true" in any case is true, anything else false).
func queryBool(c echo.Context, name string) bool {
	return strings.EqualFold(c.QueryParam(name), "true")
}

// restart serves POST /connectors/{c}/restart: without includeTasks and
// onlyFailed it restarts the connector only and answers 204; otherwise 202
// with the ConnectorStateInfo in which what is being restarted is
// RESTARTING (ConnectorsResource.restartConnector, KIP-745).
func (s *Server) restart(c echo.Context) error {
	name := c.Param("name")
	includeTasks, onlyFailed := queryBool(c, "includeTasks"), queryBool(c, "onlyFailed")
	ctx, cancel := reqCtx(c)
	defer cancel()
	if !includeTasks && !onlyFailed {
		if err := s.worker.Herder.RestartConnectorOnly(ctx, name); err != nil {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	}
	st, err := s.worker.Herder.RestartConnectorAndTasks(ctx, name, includeTasks, onlyFailed)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusAccepted, statusOf(st))
}

func taskParam(c echo.Context) (runtime.TaskID, bool) {
	n, err := strconv.ParseInt(c.Param("task"), 10, 32)
	if err != nil {
		return runtime.TaskID{}, false
	}
	return runtime.TaskID{Connector: c.Param("name"), Task: int(n)}, true
}

// getTasks serves GET /connectors/{c}/tasks: TaskInfo list.
func (s *Server) getTasks(c echo.Context) error {
	name := c.Param("name")
	cfgs, err := s.worker.Herder.TaskConfigs(name)
	if err != nil {
		return err
	}
	type taskBody struct {
		ID     taskIDBody        `json:"id"`
		Config map[string]string `json:"config"`
	}
	out := []taskBody{}
	for i, tc := range cfgs {
		out = append(out, taskBody{ID: taskIDBody{name, i}, Config: tc})
	}
	return writeJSON(c, http.StatusOK, out)
}

// getTaskStatus serves GET /connectors/{c}/tasks/{t}/status: a TaskState.
func (s *Server) getTaskStatus(c echo.Context) error {
	id, ok := taskParam(c)
	if !ok {
		return notFound()
	}
	ts, err := s.worker.Herder.TaskStatus(id)
	if err != nil {
		return err
	}
	n := ts.ID
	return writeJSON(c, http.StatusOK, stateBody{ID: &n, State: ts.State, WorkerID: ts.WorkerID, Version: ts.Version, Trace: ts.Trace})
}

// restartTask serves POST /connectors/{c}/tasks/{t}/restart: 204.
func (s *Server) restartTask(c echo.Context) error {
	id, ok := taskParam(c)
	if !ok {
		return notFound()
	}
	ctx, cancel := reqCtx(c)
	defer cancel()
	if err := s.worker.Herder.RestartTask(ctx, id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// getTopics serves GET /connectors/{c}/topics (KIP-558):
// {"<c>":{"topics":[...]}}; an unknown connector has no topics.
func (s *Server) getTopics(c echo.Context) error {
	name := c.Param("name")
	type activeTopics struct {
		Topics []string `json:"topics"`
	}
	return writeJSON(c, http.StatusOK, map[string]activeTopics{name: {Topics: s.worker.Herder.ActiveTopics(name)}})
}

// resetTopics serves PUT /connectors/{c}/topics/reset: 202.
func (s *Server) resetTopics(c echo.Context) error {
	ctx, cancel := reqCtx(c)
	defer cancel()
	if err := s.worker.Herder.ResetActiveTopics(ctx, c.Param("name")); err != nil {
		return err
	}
	return c.NoContent(http.StatusAccepted)
}

// offsetBody is ConnectorOffset; offsetsBody is ConnectorOffsets (KIP-875).
type offsetBody struct {
	Partition map[string]any `json:"partition"`
	Offset    map[string]any `json:"offset"`
}

type offsetsBody struct {
	Offsets []offsetBody `json:"offsets"`
}

// messageBody is Kafka Connect's rest.entities.Message.
type messageBody struct {
	Message string `json:"message"`
}

// getOffsets serves GET /connectors/{c}/offsets.
func (s *Server) getOffsets(c echo.Context) error {
	ctx, cancel := reqCtx(c)
	defer cancel()
	offs, err := s.worker.Herder.ConnectorOffsets(ctx, c.Param("name"))
	if err != nil {
		return err
	}
	out := offsetsBody{Offsets: []offsetBody{}}
	for _, o := range offs {
		out.Offsets = append(out.Offsets, offsetBody{Partition: o.Partition, Offset: o.Offset})
	}
	return writeJSON(c, http.StatusOK, out)
}

// alterOffsets serves PATCH /connectors/{c}/offsets: 200 with a Message;
// 400 unless the connector is STOPPED.
func (s *Server) alterOffsets(c echo.Context) error {
	var body struct {
		Offsets []offsetBody `json:"offsets"`
	}
	dec := json.NewDecoder(c.Request().Body)
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		return &runtime.BadRequestError{Msg: "Request body is not a ConnectorOffsets object: " + err.Error()}
	}
	if len(body.Offsets) == 0 {
		return &runtime.BadRequestError{Msg: "Partitions / offsets need to be provided for an alter offsets request"}
	}
	offs := make([]connect.PartitionOffset, len(body.Offsets))
	for i, o := range body.Offsets {
		offs[i] = connect.PartitionOffset{Partition: numbers(o.Partition), Offset: numbers(o.Offset)}
	}
	ctx, cancel := reqCtx(c)
	defer cancel()
	msg, err := s.worker.Herder.AlterConnectorOffsets(ctx, c.Param("name"), offs)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, messageBody{msg})
}

// numbers turns JSON numbers into int64 when integral, else float64, as
// the offsets store hands them to tasks.
func numbers(m map[string]any) map[string]any {
	for k, v := range m {
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				m[k] = i
			} else if f, err := n.Float64(); err == nil {
				m[k] = f
			}
		}
	}
	return m
}

// resetOffsets serves DELETE /connectors/{c}/offsets: 200 with a Message.
func (s *Server) resetOffsets(c echo.Context) error {
	ctx, cancel := reqCtx(c)
	defer cancel()
	msg, err := s.worker.Herder.ResetConnectorOffsets(ctx, c.Param("name"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, messageBody{msg})
}
