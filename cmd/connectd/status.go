package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/connectd/connectd/metrics"
	"github.com/connectd/connectd/rest"
	"github.com/connectd/connectd/runtime"
)

// status prints the dashboard's summary (GET /ui/api/summary) of the worker
// at --url, or at the listeners of the worker properties.
func status(args []string) error {
	fs, cfgPath, over := workerFlags("status")
	url := fs.String("url", "", "REST URL of the worker (default: from listeners)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	base, err := restBase(*url, *cfgPath, *over)
	if err != nil {
		return err
	}
	cl := &http.Client{Timeout: 10 * time.Second}
	resp, err := cl.Get(base + rest.SummaryPath)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status: GET %s%s: %s", base, rest.SummaryPath, resp.Status)
	}
	var s metrics.Summary
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		return fmt.Errorf("status: decoding the summary: %w", err)
	}
	return s.WriteText(os.Stdout)
}

// restBase is the worker's REST URL: url when given (--url), else the
// listeners of the worker properties (--config, -o).
func restBase(url, cfgPath string, over []string) (string, error) {
	if base := strings.TrimRight(url, "/"); base != "" {
		return base, nil
	}
	cfg, err := runtime.LoadWorkerConfig(cfgPath, os.Environ(), over)
	if err != nil {
		return "", err
	}
	addr, err := cfg.RESTAddr()
	if err != nil {
		return "", err
	}
	return cfg.RESTScheme() + "://" + addr, nil
}
