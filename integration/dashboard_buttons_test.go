package integration

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// In headless Chromium (driven over the DevTools protocol), the dashboard's
// Pause and Resume buttons call the REST API: the connector's tasks go
// PAUSED and RUNNING as GET /connectors/m/status reports, and the page
// shows the new state after its refresh.
func TestDashboardButtons(t *testing.T) {
	pg := startMetricsDB(t, 3)
	d := newDaemon(t)
	d.args = []string{"-o", "dashboard.sample.interval.ms=500"}
	d.start()
	if code, body := d.do("POST", "/connectors", map[string]any{"name": "m", "config": pgConnector(pg, nil)}); code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	d.waitTaskState("m", "RUNNING")

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()

	card := `section[data-connector="m"]`
	if err := chromedp.Run(ctx,
		chromedp.Navigate(d.rest+"/ui/"),
		chromedp.WaitVisible(card+`[data-state="RUNNING"]`, chromedp.ByQuery),
		chromedp.Click(card+` button[data-action="pause"]`, chromedp.ByQuery),
	); err != nil {
		t.Fatalf("load and click pause: %v", err)
	}
	d.waitTaskState("m", "PAUSED")
	if err := chromedp.Run(ctx,
		chromedp.WaitVisible(card+`[data-state="PAUSED"]`, chromedp.ByQuery),
		chromedp.Click(card+` button[data-action="resume"]`, chromedp.ByQuery),
	); err != nil {
		t.Fatalf("page after pause, click resume: %v", err)
	}
	d.waitTaskState("m", "RUNNING")
	var state string
	if err := chromedp.Run(ctx,
		chromedp.WaitVisible(card+`[data-state="RUNNING"]`, chromedp.ByQuery),
		chromedp.AttributeValue(card, "data-colour", &state, nil, chromedp.ByQuery),
	); err != nil {
		t.Fatalf("page after resume: %v", err)
	}
	if state != "green" {
		t.Fatalf("colour after resume: %q", state)
	}
}
