// connectd dashboard: polls /ui/api/summary (the same JSON `connectd status`
// prints) and renders one card per connector. No external requests.
"use strict";
(function () {
  const REFRESH_MS = 2000;
  const charts = {};
  const fmt = new Intl.NumberFormat("en-US");

  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else e.setAttribute(k, v);
    }
    for (const k of kids) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }
  // num renders an integer exactly (data-value holds the raw number).
  function stat(label, key, value, text) {
    const b = el("b", { "data-metric": key, "data-value": String(value) }, text !== undefined ? text : (value < 0 ? "n/a" : fmt.format(value)));
    return el("div", { class: "stat" }, el("span", {}, label), b);
  }
  function ms(v) { return v < 0 ? "n/a" : (v >= 1000 ? (v / 1000).toFixed(2) + " s" : v.toFixed(1) + " ms"); }
  function bytes(v) {
    if (v < 0) return "n/a";
    const u = ["B", "KiB", "MiB", "GiB", "TiB"]; let i = 0; let x = v;
    while (x >= 1024 && i < u.length - 1) { x /= 1024; i++; }
    return (i === 0 ? x : x.toFixed(1)) + " " + u[i];
  }

  async function act(method, path) {
    const r = await fetch(path, { method: method, headers: { "Content-Type": "application/json" } });
    if (!r.ok) document.getElementById("error").textContent = method + " " + path + ": " + r.status;
    refresh();
  }

  function card(c) {
    const name = encodeURIComponent(c.name);
    const root = el("section", { class: "card", "data-connector": c.name, "data-colour": c.colour, "data-state": c.state });
    root.append(el("h2", {}, el("i", { class: "dot " + c.colour }), c.name,
      el("span", { class: "badge", "data-metric": "state" }, c.state || "UNASSIGNED"),
      el("span", { class: "badge" }, c.type || "")));
    if (c.reason) root.append(el("div", { class: "reason", "data-metric": "reason" }, c.reason));
    const btns = el("div", {});
    const pause = el("button", { "data-action": "pause" }, "Pause");
    pause.onclick = () => act("PUT", "/connectors/" + name + "/pause");
    const resume = el("button", { "data-action": "resume" }, "Resume");
    resume.onclick = () => act("PUT", "/connectors/" + name + "/resume");
    const restart = el("button", { "data-action": "restart" }, "Restart");
    restart.onclick = () => act("POST", "/connectors/" + name + "/restart?includeTasks=true&onlyFailed=false");
    btns.append(pause, resume, restart);
    root.append(btns);

    root.append(el("div", { class: "stats" },
      stat("events seen", "events_seen", c.events_seen),
      stat("records written", "records_written", c.records_written),
      stat("committed transactions", "committed_transactions", c.committed_transactions),
      stat("create / update / delete", "ops", 0, ["c", "u", "d"].map(o => fmt.format(c.events_by_op[o] || 0)).join(" / ")),
      stat("snapshot reads", "events_r", c.events_by_op.r || 0),
      stat("replication lag", "lag_bytes", c.lag_bytes, bytes(c.lag_bytes)),
      stat("retained WAL", "retained_bytes", c.retained_bytes, bytes(c.retained_bytes)),
      stat("behind source", "behind_source_ms", c.behind_source_ms, ms(c.behind_source_ms)),
      stat("events behind", "events_behind", c.events_behind),
      stat("queue free / capacity", "queue", c.queue_remaining, fmt.format(c.queue_remaining) + " / " + fmt.format(c.queue_capacity)),
      stat("throughput", "throughput_per_sec", c.throughput_per_sec, c.throughput_per_sec.toFixed(1) + " /s"),
      stat("latency p50", "latency_p50_ms", c.latency_p50_ms, ms(c.latency_p50_ms)),
      stat("latency p99", "latency_p99_ms", c.latency_p99_ms, ms(c.latency_p99_ms)),
      stat("errors", "errors", c.errors, fmt.format(c.errors) + " (" + c.errors_per_min.toFixed(1) + "/min)"),
      stat("dead letters", "dead_letters", c.dead_letters, fmt.format(c.dead_letters) + " (" + c.dead_letters_per_min.toFixed(1) + "/min)"),
      stat("offset commits ok / failed", "offset_commits", c.offset_commits, fmt.format(c.offset_commits) + " / " + fmt.format(c.offset_commit_failures))));

    const tasks = el("div", { class: "tasks" });
    for (const t of c.tasks) {
      tasks.append(el("div", { "data-task": String(t.id) }, "task " + t.id + ": ", el("b", { "data-metric": "task_state" }, t.state), t.worker_id ? " on " + t.worker_id : ""));
      if (t.trace) tasks.append(el("pre", { class: "trace" }, t.trace));
    }
    if (c.trace) tasks.append(el("pre", { class: "trace" }, c.trace));
    root.append(tasks);

    if (c.snapshot) {
      const s = c.snapshot;
      const p = el("div", { class: "progress", "data-snapshot": s.running ? "running" : (s.completed ? "completed" : "stopped") });
      for (const t of s.tables) {
        const pct = t.done ? 100 : (t.estimated_rows > 0 ? Math.min(100, 100 * t.rows_scanned / t.estimated_rows) : 0);
        p.append(el("span", {}, t.table),
          el("div", { class: "bar" }, el("i", { style: "width:" + pct.toFixed(1) + "%" })),
          el("span", { "data-metric": "rows_scanned", "data-table": t.table, "data-value": String(t.rows_scanned) },
            fmt.format(t.rows_scanned) + " / " + (t.estimated_rows >= 0 ? fmt.format(t.estimated_rows) : "?") + (t.done ? " done" : "")));
      }
      root.append(el("h3", {}, "snapshot " + (s.running ? "running" : (s.completed ? "completed" : "")) + " (" + (s.duration_ms / 1000).toFixed(1) + " s)"), p);
    }
    const chart = el("div", { class: "chart" });
    root.append(chart);
    return { root: root, chart: chart };
  }

  function plot(c, target) {
    const h = c.history || [];
    const data = [h.map(s => s.t / 1000), h.map(s => s.lag_bytes < 0 ? null : s.lag_bytes), h.map(s => s.behind_source_ms < 0 ? null : s.behind_source_ms)];
    const width = Math.max(300, (target.parentElement.clientWidth || 800) - 20);
    const opts = {
      width: width, height: 180, title: "lag, last 15 minutes",
      scales: { x: { time: true }, bytes: {}, ms: {} },
      series: [{}, { label: "lag bytes", scale: "bytes", stroke: "#3b73d9" }, { label: "behind source ms", scale: "ms", stroke: "#f0a202" }],
      axes: [{}, { scale: "bytes", size: 80, values: (u, v) => v.map(bytes) }, { scale: "ms", side: 1, size: 60, grid: { show: false } }],
    };
    if (charts[c.name]) charts[c.name].destroy();
    charts[c.name] = new uPlot(opts, data, target);
  }

  async function refresh() {
    let s;
    try {
      const r = await fetch("api/summary", { cache: "no-store" });
      if (!r.ok) throw new Error("summary: HTTP " + r.status);
      s = await r.json();
      document.getElementById("error").textContent = "";
    } catch (e) {
      document.getElementById("error").textContent = String(e);
      return;
    }
    const main = document.getElementById("connectors");
    main.replaceChildren();
    if (s.connectors.length === 0) main.append(el("p", { class: "empty" }, "No connectors."));
    for (const c of s.connectors) {
      const k = card(c);
      main.append(k.root);
      plot(c, k.chart);
    }
    const u = document.getElementById("updated");
    u.dataset.generatedAt = String(s.generated_at);
    u.textContent = "updated " + new Date(s.generated_at).toLocaleTimeString();
  }
  refresh();
  setInterval(refresh, REFRESH_MS);
})();
