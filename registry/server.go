package registry

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

// ContentType is the registry's media type (Confluent's
// application/vnd.schemaregistry.v1+json).
const ContentType = "application/vnd.schemaregistry.v1+json"

// Server serves a Registry over Confluent Schema Registry's REST API with
// its own echo instance (it listens on schema.registry.listener, not on
// the Kafka Connect REST port).
type Server struct {
	e   *echo.Echo
	reg *Registry
	ln  net.Listener
}

// ServerOption configures a Server.
type ServerOption func(*Server)

// WithBasicAuth requires HTTP basic authentication with user and password
// on every request (Confluent's authentication.method=BASIC); a missing or
// wrong password gives 401.
func WithBasicAuth(user, password string) ServerOption {
	return func(s *Server) {
		s.e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
			return func(c echo.Context) error {
				u, p, ok := c.Request().BasicAuth()
				if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(user)) != 1 ||
					subtle.ConstantTimeCompare([]byte(p), []byte(password)) != 1 {
					return echo.ErrUnauthorized
				}
				return next(c)
			}
		})
	}
}

// NewServer builds the server; call Listen then Serve.
func NewServer(reg *Registry, opts ...ServerOption) *Server {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	s := &Server{e: e, reg: reg}
	e.HTTPErrorHandler = s.errorHandler
	for _, o := range opts {
		o(s)
	}
	e.GET("/", func(c echo.Context) error { return s.json(c, http.StatusOK, map[string]any{}) })
	e.GET("/schemas/types", func(c echo.Context) error { return s.json(c, http.StatusOK, []string{"AVRO"}) })
	e.GET("/schemas/ids/:id", s.schemaByID)
	e.GET("/schemas/ids/:id/schema", s.schemaTextByID)
	e.GET("/schemas/ids/:id/subjects", s.subjectsByID)
	e.GET("/schemas/ids/:id/versions", s.versionsByID)
	e.GET("/subjects", s.subjects)
	e.POST("/subjects/:subject", s.lookup)
	e.DELETE("/subjects/:subject", s.deleteSubject)
	e.GET("/subjects/:subject/versions", s.versions)
	e.POST("/subjects/:subject/versions", s.register)
	e.GET("/subjects/:subject/versions/:version", s.version)
	e.GET("/subjects/:subject/versions/:version/schema", s.versionSchema)
	e.DELETE("/subjects/:subject/versions/:version", s.deleteVersion)
	e.POST("/compatibility/subjects/:subject/versions/:version", s.compatibility)
	e.POST("/compatibility/subjects/:subject/versions", s.compatibility)
	e.GET("/config", s.getConfig)
	e.PUT("/config", s.putConfig)
	e.DELETE("/config", s.deleteConfig)
	e.GET("/config/:subject", s.getConfig)
	e.PUT("/config/:subject", s.putConfig)
	e.DELETE("/config/:subject", s.deleteConfig)
	e.GET("/mode", s.getMode)
	e.PUT("/mode", s.putMode)
	e.GET("/mode/:subject", s.getMode)
	e.PUT("/mode/:subject", s.putMode)
	return s
}

// Handler returns the HTTP handler (tests use it with httptest).
func (s *Server) Handler() http.Handler { return s.e }

// Listen binds addr (host:port).
func (s *Server) Listen(addr string) error {
	ln, err := Bind(addr)
	if err != nil {
		return err
	}
	s.ln = ln
	return nil
}

// Bind binds addr (host:port) for a Server's ListenOn: connectd binds the
// registry's port before its worker joins the group, so that a taken port
// fails at once, as a taken REST port does.
func Bind(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("schema registry listener %s: %w", addr, err)
	}
	return ln, nil
}

// ListenOn serves on ln (from Bind) instead of binding an address.
func (s *Server) ListenOn(ln net.Listener) { s.ln = ln }

// Addr returns the bound address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve serves until Shutdown; it returns nil after Shutdown.
func (s *Server) Serve() error {
	s.e.Listener = s.ln
	err := s.e.Start("")
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting requests and waits for in-flight ones.
func (s *Server) Shutdown(ctx context.Context) error { return s.e.Shutdown(ctx) }

func (s *Server) json(c echo.Context, code int, v any) error {
	c.Response().Header().Set(echo.HeaderContentType, ContentType)
	c.Response().WriteHeader(code)
	_, err := c.Response().Write(marshal(v))
	return err
}

func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var re *Error
	var he *echo.HTTPError
	switch {
	case errors.As(err, &re):
	case errors.As(err, &he):
		// Jersey's bodies for routing errors: {"error_code":404,"message":"HTTP 404 Not Found"}.
		re = &Error{Status: he.Code, Code: he.Code, Message: fmt.Sprintf("HTTP %d %s", he.Code, http.StatusText(he.Code))}
		if he.Code == http.StatusUnauthorized {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Basic realm="SchemaRegistry"`)
			re.Message = "Unauthorized"
		}
	default:
		re = &Error{Status: http.StatusInternalServerError, Code: CodeStoreError, Message: err.Error()}
	}
	_ = s.json(c, re.Status, re)
}

func subjectParam(c echo.Context) string {
	p := c.Param("subject")
	if u, err := url.PathUnescape(p); err == nil {
		return u
	}
	return p
}

// versionParam parses a version path parameter: "latest" or -1 is -1, a
// positive int is itself, anything else 42202.
func versionParam(c echo.Context) (int, error) {
	v := c.Param("version")
	if v == "" {
		return 0, nil
	}
	if strings.EqualFold(v, "latest") {
		return -1, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n == 0 || n < -1 {
		return 0, errInvalidVersion(v)
	}
	return n, nil
}

func idParam(c echo.Context) (int, error) {
	n, err := strconv.Atoi(c.Param("id"))
	if err != nil {
		return 0, &Error{Status: http.StatusNotFound, Code: http.StatusNotFound, Message: "HTTP 404 Not Found"}
	}
	return n, nil
}

func boolQuery(c echo.Context, name string) bool {
	return strings.EqualFold(c.QueryParam(name), "true")
}

// schemaRequest is the body of register, lookup and compatibility calls.
type schemaRequest struct {
	Schema     string          `json:"schema"`
	ID         *int            `json:"id"`      // IMPORT mode
	Version    *int            `json:"version"` // IMPORT mode
	SchemaType string          `json:"schemaType"`
	References json.RawMessage `json:"references"`
}

func readSchemaRequest(c echo.Context) (schemaRequest, error) {
	var req schemaRequest
	b, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return req, err
	}
	if err := json.Unmarshal(b, &req); err != nil {
		return req, &Error{Status: http.StatusBadRequest, Code: http.StatusBadRequest, Message: "Unrecognized request body: " + err.Error()}
	}
	if t := strings.ToUpper(req.SchemaType); t != "" && t != "AVRO" {
		return req, errInvalidSchema(fmt.Sprintf("Invalid schema type %s: only AVRO is supported", req.SchemaType))
	}
	if len(req.References) > 0 && string(req.References) != "null" && string(req.References) != "[]" {
		return req, errInvalidSchema("Schema references are not supported")
	}
	if strings.TrimSpace(req.Schema) == "" {
		return req, errInvalidSchema("Empty schema")
	}
	return req, nil
}

func (s *Server) schemaByID(c echo.Context) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	text, err := s.reg.SchemaByID(id)
	if err != nil {
		return err
	}
	return s.json(c, http.StatusOK, struct {
		Schema string `json:"schema"`
	}{text})
}

func (s *Server) schemaTextByID(c echo.Context) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	text, err := s.reg.SchemaByID(id)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentType, ContentType)
	return c.String(http.StatusOK, text)
}

func (s *Server) subjectsByID(c echo.Context) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	us, err := s.reg.IDUsages(id, boolQuery(c, "deleted"))
	if err != nil {
		return err
	}
	out := []string{}
	seen := map[string]bool{}
	for _, u := range us {
		if !seen[u.Subject] {
			seen[u.Subject] = true
			out = append(out, u.Subject)
		}
	}
	return s.json(c, http.StatusOK, out)
}

func (s *Server) versionsByID(c echo.Context) error {
	id, err := idParam(c)
	if err != nil {
		return err
	}
	us, err := s.reg.IDUsages(id, boolQuery(c, "deleted"))
	if err != nil {
		return err
	}
	return s.json(c, http.StatusOK, us)
}

func (s *Server) subjects(c echo.Context) error {
	return s.json(c, http.StatusOK, s.reg.Subjects(boolQuery(c, "deleted")))
}

func (s *Server) versions(c echo.Context) error {
	vs, err := s.reg.Versions(subjectParam(c), boolQuery(c, "deleted"))
	if err != nil {
		return err
	}
	return s.json(c, http.StatusOK, vs)
}

// lookupVersion resolves the {subject}/versions/{version} of the request.
func (s *Server) lookupVersion(c echo.Context) (SchemaRef, error) {
	v, err := versionParam(c)
	if err != nil {
		return SchemaRef{}, err
	}
	return s.reg.Version(subjectParam(c), v, boolQuery(c, "deleted"))
}

func (s *Server) version(c echo.Context) error {
	r, err := s.lookupVersion(c)
	if err != nil {
		return err
	}
	return s.json(c, http.StatusOK, r)
}

func (s *Server) versionSchema(c echo.Context) error {
	r, err := s.lookupVersion(c)
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderContentType, ContentType)
	return c.String(http.StatusOK, r.Schema)
}

func (s *Server) register(c echo.Context) error {
	req, err := readSchemaRequest(c)
	if err != nil {
		return err
	}
	id, version := -1, -1
	if req.ID != nil {
		id = *req.ID
	}
	if req.Version != nil {
		version = *req.Version
	}
	id, err = s.reg.RegisterAs(c.Request().Context(), subjectParam(c), req.Schema, id, version)
	if err != nil {
		return err
	}
	return s.json(c, http.StatusOK, struct {
		ID int `json:"id"`
	}{id})
}

func (s *Server) lookup(c echo.Context) error {
	req, err := readSchemaRequest(c)
	if err != nil {
		return err
	}
	r, err := s.reg.Lookup(subjectParam(c), req.Schema, boolQuery(c, "deleted"))
	if err != nil {
		return err
	}
	return s.json(c, http.StatusOK, r)
}

func (s *Server) deleteSubject(c echo.Context) error {
	vs, err := s.reg.DeleteSubject(c.Request().Context(), subjectParam(c), boolQuery(c, "permanent"))
	if err != nil {
		return err
	}
	return s.json(c, http.StatusOK, vs)
}

func (s *Server) deleteVersion(c echo.Context) error {
	v, err := versionParam(c)
	if err != nil {
		return err
	}
	n, err := s.reg.DeleteVersion(c.Request().Context(), subjectParam(c), v, boolQuery(c, "permanent"))
	if err != nil {
		return err
	}
	return s.json(c, http.StatusOK, n)
}

func (s *Server) compatibility(c echo.Context) error {
	v, err := versionParam(c)
	if err != nil {
		return err
	}
	req, err := readSchemaRequest(c)
	if err != nil {
		return err
	}
	msgs, err := s.reg.CheckCompatibility(subjectParam(c), v, req.Schema)
	if err != nil {
		return err
	}
	if boolQuery(c, "verbose") {
		if msgs == nil {
			msgs = []string{}
		}
		return s.json(c, http.StatusOK, struct {
			IsCompatible bool     `json:"is_compatible"`
			Messages     []string `json:"messages"`
		}{len(msgs) == 0, msgs})
	}
	return s.json(c, http.StatusOK, struct {
		IsCompatible bool `json:"is_compatible"`
	}{len(msgs) == 0})
}

type compatibilityLevelBody struct {
	CompatibilityLevel string `json:"compatibilityLevel"`
}

func (s *Server) getConfig(c echo.Context) error {
	subj := subjectParam(c)
	level, err := s.reg.Compatibility(subj, subj == "" || boolQuery(c, "defaultToGlobal"))
	if err != nil {
		return err
	}
	return s.json(c, http.StatusOK, compatibilityLevelBody{level})
}

func (s *Server) putConfig(c echo.Context) error {
	var req struct {
		Compatibility string `json:"compatibility"`
	}
	if err := json.NewDecoder(c.Request().Body).Decode(&req); err != nil {
		return &Error{Status: http.StatusBadRequest, Code: http.StatusBadRequest, Message: "Unrecognized request body: " + err.Error()}
	}
	level, err := s.reg.SetCompatibility(c.Request().Context(), subjectParam(c), req.Compatibility)
	if err != nil {
		return err
	}
	return s.json(c, http.StatusOK, struct {
		Compatibility string `json:"compatibility"`
	}{level})
}

func (s *Server) deleteConfig(c echo.Context) error {
	level, err := s.reg.DeleteCompatibility(c.Request().Context(), subjectParam(c))
	if err != nil {
		return err
	}
	return s.json(c, http.StatusOK, compatibilityLevelBody{level})
}

type modeBody struct {
	Mode string `json:"mode"`
}

func (s *Server) getMode(c echo.Context) error {
	subj := subjectParam(c)
	m, err := s.reg.Mode(subj, subj == "" || boolQuery(c, "defaultToGlobal"))
	if err != nil {
		return err
	}
	return s.json(c, http.StatusOK, modeBody{m})
}

func (s *Server) putMode(c echo.Context) error {
	var req modeBody
	if err := json.NewDecoder(c.Request().Body).Decode(&req); err != nil {
		return &Error{Status: http.StatusBadRequest, Code: http.StatusBadRequest, Message: "Unrecognized request body: " + err.Error()}
	}
	m, err := s.reg.SetMode(c.Request().Context(), subjectParam(c), req.Mode, boolQuery(c, "force"))
	if err != nil {
		return err
	}
	return s.json(c, http.StatusOK, modeBody{m})
}
