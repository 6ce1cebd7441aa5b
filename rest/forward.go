package rest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/connectd/connectd/runtime"
	"github.com/labstack/echo/v4"
)

// Messages of Kafka Connect's HerderRequestHandler.completeOrForwardRequest.
const (
	msgNoLeaderURL        = "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
	msgConflictingRequest = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"
)

// toLeader serves a config write on the group's leader, as Kafka Connect
// does: a worker that is not the leader forwards the request to the
// leader's REST URL with ?forward=true (the leader may forward once more,
// if it lost the leadership meanwhile) and relays the answer; a request
// that arrives with forward=false at a non-leader is a 409. While a
// rebalance is in progress the request waits for it (at most
// Herder.RebalanceWait), then answers 409.
func (s *Server) toLeader(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := s.worker.Herder
		if err := h.AwaitStable(c.Request().Context(), h.RebalanceWait()); err != nil {
			return err
		}
		isLeader, leaderURL, err := h.Leader()
		if err != nil {
			return err
		}
		if isLeader {
			return next(c)
		}
		return s.forwardTo(c, leaderURL)
	}
}

// toTaskOwner serves a task request on the worker that runs the task
// (Kafka Connect forwards a task restart to the task's worker).
func (s *Server) toTaskOwner(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := s.worker.Herder
		if err := h.AwaitStable(c.Request().Context(), h.RebalanceWait()); err != nil {
			return err
		}
		id, ok := taskParam(c)
		if !ok {
			return notFound()
		}
		owner, self, err := h.TaskOwnerURL(id)
		if err != nil {
			return err
		}
		if self || owner == "" {
			return next(c) // unknown tasks get their 404 here
		}
		return s.forwardTo(c, owner)
	}
}

// forwardTo relays the request to base (a worker's REST URL) and copies
// the answer back.
func (s *Server) forwardTo(c echo.Context, base string) error {
	q := c.Request().URL.Query()
	switch q.Get("forward") {
	case "false":
		return &runtime.ConflictError{Msg: msgConflictingRequest}
	case "true":
		q.Set("forward", "false")
	default:
		// The first worker to handle a user request allows one more hop.
		q.Set("forward", "true")
	}
	if base == "" {
		return &runtime.ConflictError{Msg: msgNoLeaderURL}
	}
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	u, err := url.Parse(base)
	if err != nil {
		return fmt.Errorf("forwarding to %q: %w", base, err)
	}
	u.Path = c.Request().URL.Path
	u.RawPath = c.Request().URL.RawPath
	u.RawQuery = q.Encode()
	ctx, cancel := context.WithTimeout(c.Request().Context(), requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, c.Request().Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return err
	}
	// The user's credentials go along, as RestClient.addHeadersToRequest
	// forwards the Authorization header.
	for _, k := range []string{echo.HeaderContentType, echo.HeaderAuthorization} {
		if v := c.Request().Header.Get(k); v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := s.forward.Do(req)
	if err != nil {
		// RestClient's message for a failed forward.
		return fmt.Errorf("IO Error trying to forward REST request: %w", err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("IO Error trying to forward REST request: %w", err)
	}
	if v := resp.Header.Get(echo.HeaderContentType); v != "" {
		c.Response().Header().Set(echo.HeaderContentType, v)
	}
	// The Location the worker that served the request made is its own
	// URL: the client gets it at the address it used here, as Kafka
	// Connect builds it from the request it was sent.
	if v := resp.Header.Get(echo.HeaderLocation); v != "" {
		if l, err := url.Parse(v); err == nil && l.IsAbs() {
			v = absoluteURL(c, l.RequestURI())
		}
		c.Response().Header().Set(echo.HeaderLocation, v)
	}
	c.Response().WriteHeader(resp.StatusCode)
	_, err = c.Response().Write(out)
	return err
}
