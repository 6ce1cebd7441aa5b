package rest

import (
	"embed"
	"io/fs"
	"net/http"

	"github.com/connectd/connectd/metrics"
	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// uiFiles is the dashboard: HTML, JS, CSS and uPlot vendored from its npm
// package (ui/vendor/README); nothing is fetched from elsewhere.
//
//go:embed ui
var uiFiles embed.FS

// SummaryPath is the dashboard's JSON (metrics.Summary), also read by
// `connectd status`.
const SummaryPath = "/ui/api/summary"

// routeObservability adds GET /metrics (Prometheus text exposition of the
// worker's metrics.Registry), the dashboard under /ui/ and its summary
// JSON. Without a herder (tests) the routes answer 503.
func (s *Server) routeObservability(e *echo.Echo) {
	reg := func() *metrics.Registry {
		if s.worker == nil || s.worker.Herder == nil {
			return nil
		}
		return s.worker.Herder.Metrics()
	}
	e.GET("/metrics", func(c echo.Context) error {
		r := reg()
		if r == nil {
			return echo.NewHTTPError(http.StatusServiceUnavailable, "metrics are not available")
		}
		promhttp.HandlerFor(r.Gatherer(), promhttp.HandlerOpts{}).ServeHTTP(c.Response(), c.Request())
		return nil
	})
	e.GET(SummaryPath, func(c echo.Context) error {
		r := reg()
		if r == nil {
			return echo.NewHTTPError(http.StatusServiceUnavailable, "metrics are not available")
		}
		c.Response().Header().Set("Cache-Control", "no-store")
		return c.JSON(http.StatusOK, r.Summary())
	})
	sub, _ := fs.Sub(uiFiles, "ui")
	files := http.StripPrefix("/ui/", http.FileServer(http.FS(sub)))
	e.GET("/ui", func(c echo.Context) error { return c.Redirect(http.StatusFound, "/ui/") })
	e.GET("/ui/*", echo.WrapHandler(files))
}
