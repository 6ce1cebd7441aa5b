// Package rest serves the Kafka Connect REST API over the runtime, with
// Kafka Connect's paths, bodies and status codes (3.9/4.x). Handlers are
// thin: they decode, call the herder, and encode.
package rest

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/connectd/connectd/connect"
	"github.com/connectd/connectd/runtime"
	"github.com/labstack/echo/v4"
)

// Version is the Kafka Connect version this API reports in GET / and as the
// version of the built-in converters: 4.3.0, the Kafka Connect release whose
// REST API integration/testdata/connect-compat was captured from.
const Version = "4.3.0"

// Commit is the build commit reported in GET /; set with -ldflags.
var Commit = "dev"

// Server is the REST server of one worker.
type Server struct {
	e       *echo.Echo
	worker  *runtime.Worker
	plugins *connect.Plugins
	ln      net.Listener
	// tls is the https listener's configuration (tls.go); nil for http.
	tls *tls.Config
	// forward sends requests to other workers (forward.go).
	forward *http.Client
}

// ErrorBody is Kafka Connect's error response.
type ErrorBody struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}

// New builds the server from the worker's config: TLS for an https
// listener (tls.go) and basic authentication when rest.extension.classes
// names BasicAuthSecurityRestExtension (basic_auth.go). Call Listen, then
// Serve. Errors: the TLS or authentication settings', naming the key.
func New(w *runtime.Worker, plugins *connect.Plugins) (*Server, error) {
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	s := &Server{e: e, worker: w, plugins: plugins}
	var err error
	if s.tls, err = serverTLSConfig(w.Config); err != nil {
		return nil, err
	}
	clientTLS, err := clientTLSConfig(w.Config)
	if err != nil {
		return nil, err
	}
	s.forward = &http.Client{Timeout: requestTimeout, Transport: &http.Transport{TLSClientConfig: clientTLS}}
	auth, err := basicAuthFromConfig(w.Config, os.Environ())
	if err != nil {
		return nil, err
	}
	if auth != nil {
		e.Use(auth.middleware)
	}
	e.HTTPErrorHandler = s.errorHandler
	e.GET("/", s.root)
	e.GET("/connectors", s.listConnectors)
	e.POST("/connectors", s.createConnector, s.toLeader)
	e.GET("/connectors/:name", s.getConnector)
	e.DELETE("/connectors/:name", s.deleteConnector, s.toLeader)
	e.GET("/connectors/:name/config", s.getConfig)
	e.PUT("/connectors/:name/config", s.putConfig, s.toLeader)
	e.PATCH("/connectors/:name/config", s.patchConfig, s.toLeader)
	e.GET("/connectors/:name/status", s.getStatus)
	e.POST("/connectors/:name/restart", s.restart, s.toLeader)
	e.PUT("/connectors/:name/pause", s.pause, s.toLeader)
	e.PUT("/connectors/:name/resume", s.resume, s.toLeader)
	e.PUT("/connectors/:name/stop", s.stop, s.toLeader)
	e.GET("/connectors/:name/tasks", s.getTasks)
	e.GET("/connectors/:name/tasks/:task/status", s.getTaskStatus)
	e.POST("/connectors/:name/tasks/:task/restart", s.restartTask, s.toTaskOwner)
	e.GET("/connectors/:name/topics", s.getTopics)
	e.PUT("/connectors/:name/topics/reset", s.resetTopics)
	e.GET("/connectors/:name/offsets", s.getOffsets)
	e.POST("/connectors/:name/verify", s.startVerify)
	e.GET("/connectors/:name/verify", s.getVerify)
	e.PATCH("/connectors/:name/offsets", s.alterOffsets, s.toLeader)
	e.DELETE("/connectors/:name/offsets", s.resetOffsets, s.toLeader)
	e.GET("/connector-plugins", s.listPlugins)
	e.GET("/connector-plugins/:plugin/config", s.pluginConfig)
	e.PUT("/connector-plugins/:plugin/config/validate", s.validateConfig)
	e.GET("/admin/loggers", s.listLoggers)
	e.GET("/admin/loggers/:logger", s.getLogger)
	e.PUT("/admin/loggers/:logger", s.setLogger)
	s.routeObservability(e)
	s.routeJobs(e)
	s.routeSQL(e)
	return s, nil
}

// Handler returns the HTTP handler (for tests).
func (s *Server) Handler() http.Handler { return s.e }

// Listen binds addr (host:port).
func (s *Server) Listen(addr string) error {
	ln, err := Bind(addr)
	if err != nil {
		return err
	}
	s.ListenOn(ln)
	return nil
}

// Bind binds the REST listener's TCP address (host:port) before a worker
// exists, so a taken port fails the start before the worker joins its
// group (as Kafka Connect starts its REST server first); pass the listener
// to ListenOn.
func Bind(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("REST listener %s: %w", addr, err)
	}
	return ln, nil
}

// ListenOn serves on ln (from Bind), with TLS when the worker's listener
// is https.
func (s *Server) ListenOn(ln net.Listener) {
	if s.tls != nil {
		ln = tls.NewListener(ln, s.tls)
	}
	s.ln = ln
}

// Addr returns the bound address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL returns the listener's base URL (http://host:port or https://…).
func (s *Server) URL() string { return listenerScheme(s.worker.Config) + "://" + s.Addr() }

// Serve serves until Shutdown.
func (s *Server) Serve() error {
	s.e.Listener = s.ln
	err := s.e.Start("")
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting requests and waits for in-flight ones.
func (s *Server) Shutdown(ctx context.Context) error {
	return s.e.Shutdown(ctx)
}

func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code, msg := http.StatusInternalServerError, err.Error()
	var he *echo.HTTPError
	var nf *runtime.NotFoundError
	var ci *runtime.ConfigInvalidError
	var br *runtime.BadRequestError
	switch {
	case errors.As(err, &he):
		code = he.Code
		msg = fmt.Sprintf("HTTP %d %s", he.Code, http.StatusText(he.Code))
		if m, ok := he.Message.(string); ok && he.Code != http.StatusNotFound && he.Code != http.StatusMethodNotAllowed {
			msg = m
		}
	case errors.As(err, &nf), errors.Is(err, runtime.ErrNotFound):
		code = http.StatusNotFound
	case errors.As(err, &ci), errors.As(err, &br):
		code = http.StatusBadRequest
	case errors.Is(err, runtime.ErrRebalanceInProgress), errors.As(err, new(*runtime.ConflictError)):
		code = http.StatusConflict
	case errors.Is(err, runtime.ErrAlreadyExists):
		code = http.StatusConflict
		msg = strings.TrimSuffix(msg, ": "+runtime.ErrAlreadyExists.Error())
	}
	writeJSON(c, code, ErrorBody{ErrorCode: code, Message: msg})
}

// writeJSON writes v as Jackson does for Kafka Connect: no HTML escaping,
// no trailing newline.
func writeJSON(c echo.Context, code int, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return c.Blob(code, echo.MIMEApplicationJSON, bytes.TrimRight(b.Bytes(), "\n"))
}

func (s *Server) root(c echo.Context) error {
	return writeJSON(c, http.StatusOK, struct {
		Version        string `json:"version"`
		Commit         string `json:"commit"`
		KafkaClusterID string `json:"kafka_cluster_id"`
	}{Version, Commit, s.worker.ClusterID})
}

type taskIDBody struct {
	Connector string `json:"connector"`
	Task      int    `json:"task"`
}

type connectorInfoBody struct {
	Name   string            `json:"name"`
	Config map[string]string `json:"config"`
	Tasks  []taskIDBody      `json:"tasks"`
	Type   string            `json:"type"`
}

func infoBody(i runtime.ConnectorInfo) connectorInfoBody {
	b := connectorInfoBody{Name: i.Name, Config: i.Config, Type: i.Type, Tasks: []taskIDBody{}}
	for _, t := range i.Tasks {
		b.Tasks = append(b.Tasks, taskIDBody{t.Connector, t.Task})
	}
	return b
}

// stateBody is Kafka Connect's ConnectorStateInfo.AbstractState; version
// is the plugin's (KIP-891, Kafka Connect 4).
type stateBody struct {
	ID       *int   `json:"id,omitempty"`
	State    string `json:"state"`
	WorkerID string `json:"worker_id"`
	Version  string `json:"version,omitempty"`
	Trace    string `json:"trace,omitempty"`
}

type statusBody struct {
	Name      string      `json:"name"`
	Connector stateBody   `json:"connector"`
	Tasks     []stateBody `json:"tasks"`
	Type      string      `json:"type"`
}

func statusOf(st runtime.ConnectorStatus) statusBody {
	b := statusBody{Name: st.Name, Type: st.Type, Tasks: []stateBody{},
		Connector: stateBody{State: st.Connector.State, WorkerID: st.Connector.WorkerID, Version: st.Connector.Version, Trace: st.Connector.Trace}}
	for _, t := range st.Tasks {
		id := t.ID
		b.Tasks = append(b.Tasks, stateBody{ID: &id, State: t.State, WorkerID: t.WorkerID, Version: t.Version, Trace: t.Trace})
	}
	return b
}

// listConnectors serves GET /connectors, with ?expand=status and/or
// ?expand=info as Kafka Connect (KIP-465).
func (s *Server) listConnectors(c echo.Context) error {
	h := s.worker.Herder
	names := h.Connectors()
	expand := c.QueryParams()["expand"]
	if len(expand) == 0 {
		return writeJSON(c, http.StatusOK, names)
	}
	out := map[string]map[string]any{}
	for _, n := range names {
		m := map[string]any{}
		for _, e := range expand {
			switch e {
			case "status":
				if st, err := h.ConnectorStatus(n); err == nil {
					m["status"] = statusOf(st)
				}
			case "info":
				if i, err := h.ConnectorInfo(n); err == nil {
					m["info"] = infoBody(i)
				}
			}
		}
		out[n] = m
	}
	return writeJSON(c, http.StatusOK, out)
}

type createRequest struct {
	Name         string            `json:"name"`
	Config       map[string]string `json:"config"`
	InitialState string            `json:"initial_state"` // KIP-980: RUNNING, PAUSED, STOPPED
}

func (s *Server) createConnector(c echo.Context) error {
	var req createRequest
	dec := json.NewDecoder(c.Request().Body)
	if err := dec.Decode(&req); err != nil {
		return &runtime.BadRequestError{Msg: "Request body is not a JSON object with \"name\" and \"config\" (string values): " + err.Error()}
	}
	if req.Config == nil {
		return &runtime.BadRequestError{Msg: "Connector config is missing in the request body"}
	}
	name := req.Name
	if cn, ok := req.Config["name"]; ok && name != "" && cn != name {
		return &runtime.BadRequestError{Msg: "Connector name configuration (" + cn + ") doesn't match connector name in the URL (" + name + ")"}
	}
	if name == "" {
		name = req.Config["name"]
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 90*time.Second)
	defer cancel()
	initial := ""
	switch strings.ToUpper(req.InitialState) {
	case "":
	case "RUNNING":
		initial = runtime.TargetStarted
	case "PAUSED":
		initial = runtime.TargetPaused
	case "STOPPED":
		initial = runtime.TargetStopped
	default:
		return &runtime.BadRequestError{Msg: "Invalid initial_state " + req.InitialState + "; valid values are RUNNING, PAUSED, STOPPED"}
	}
	info, _, err := s.worker.Herder.PutConnectorConfig(ctx, name, req.Config, false, initial)
	if err != nil {
		return err
	}
	return writeCreated(c, name, info)
}

// writeCreated answers the creation of connector name as Kafka Connect's
// Response.created: 201 with an absolute Location, resolved against the
// URL the client used (its Host), and the connector's info with no tasks
// (they are made after the config is stored: Kafka Connect 4.3 answers
// "tasks": [] here, and GET /connectors/{name} lists them later).
func writeCreated(c echo.Context, name string, info runtime.ConnectorInfo) error {
	c.Response().Header().Set(echo.HeaderLocation, absoluteURL(c, "/connectors/"+url.PathEscape(name)))
	info.Tasks = nil
	return writeJSON(c, http.StatusCreated, infoBody(info))
}

// absoluteURL is path on this server as the client addressed it.
func absoluteURL(c echo.Context, path string) string {
	scheme := "http"
	if c.Request().TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + c.Request().Host + path
}

func (s *Server) getConnector(c echo.Context) error {
	info, err := s.worker.Herder.ConnectorInfo(c.Param("name"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, infoBody(info))
}

func (s *Server) getConfig(c echo.Context) error {
	info, err := s.worker.Herder.ConnectorInfo(c.Param("name"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, info.Config)
}

func (s *Server) getStatus(c echo.Context) error {
	st, err := s.worker.Herder.ConnectorStatus(c.Param("name"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, statusOf(st))
}

func (s *Server) deleteConnector(c echo.Context) error {
	ctx, cancel := context.WithTimeout(c.Request().Context(), 90*time.Second)
	defer cancel()
	if err := s.worker.Herder.DeleteConnector(ctx, c.Param("name")); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}
