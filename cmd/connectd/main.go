// Command connectd is the connectd worker and its tools.
//
//	connectd [run] [--config worker.properties] [-o key=value]...
//	connectd topics tail TOPIC [--from-beginning] [--max-records N] [--isolation-level read_committed] [--config ...] [-o ...]
//	connectd status [--url http://host:8083]
//	connectd verify CONNECTOR [--against topic|SINK_CONNECTOR|SQL_JOB] [--table T]... [--rounds N] [--buckets N] [--json] [--url http://host:8083]
//	connectd version
//	connectd help (or --help after any command)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/connectd/connectd/registry"
	"github.com/connectd/connectd/rest"
	"github.com/connectd/connectd/runtime"
)

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

func main() {
	args := os.Args[1:]
	cmd := "run"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "run":
		err = run(args)
	case "topics":
		err = topics(args)
	case "status":
		err = status(args)
	case "verify":
		err = verify(args)
	case "sql":
		err = sqlCmd(args, os.Stdout)
	case "help":
		err = flag.ErrHelp
	case "version":
		fmt.Printf("connectd %s (Kafka Connect REST API %s)\n", rest.Commit, rest.Version)
	default:
		err = fmt.Errorf("unknown command %q (want run, topics, status, verify, sql, version, help)", cmd)
	}
	if errors.Is(err, flag.ErrHelp) {
		// The flag set printed its flags; name the other commands.
		fmt.Fprint(os.Stderr, usage)
		return
	}
	var ve verifyExit
	if errors.As(err, &ve) {
		os.Exit(ve.code)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "connectd:", err)
		os.Exit(1)
	}
}

const usage = `commands (the pages are in the repository's docs/ folder):
  connectd [run] [--config worker.properties] [-o key=value]...                 docs/worker.md, docs/reference/worker.md
  connectd topics tail TOPIC [--from-beginning] [--max-records N] [--isolation-level read_committed] [--config ...] [-o ...]
                                                                                docs/worker.md#commands
  connectd status [--url http://host:8083]                                      docs/worker.md#commands
  connectd verify CONNECTOR [--against topic|SINK_CONNECTOR|SQL_JOB] [--table T]... [--rounds N] [--buckets N] [--json] [--url http://host:8083]
                                                                                docs/operations.md#did-the-pipeline-lose-anything-connectd-verify
  connectd sql -f FILE.sql | -e 'STATEMENT' [--url http://host:8083]           docs/stream-processing.md#streaming-sql
  connectd version
  connectd help
Connectors, sinks and transforms: docs/reference/README.md; the REST API: docs/rest-api.md.
`

// commandPages names the docs page of each command, printed by its -h.
var commandPages = map[string]string{
	"run":         "docs/worker.md (every key: docs/reference/worker.md)",
	"topics tail": "docs/worker.md#commands",
	"status":      "docs/worker.md#commands",
	"verify":      "docs/operations.md#did-the-pipeline-lose-anything-connectd-verify",
	"sql":         "docs/stream-processing.md#streaming-sql",
}

func workerFlags(name string) (*flag.FlagSet, *string, *multiFlag) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage of connectd %s (see %s):\n", name, commandPages[name])
		fs.PrintDefaults()
	}
	cfg := fs.String("config", "", "worker properties file")
	var over multiFlag
	fs.Var(&over, "o", "override a worker property: -o key=value (repeatable)")
	return fs, cfg, &over
}

func run(args []string) error {
	fs, cfgPath, over := workerFlags("run")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		// "connectd -o k=v topics tail T" used to start a worker (joining
		// its group, writing its topics) and ignore "topics tail T".
		return fmt.Errorf("unexpected argument %q: the command comes first, its flags after it (e.g. connectd topics tail TOPIC -o key=value)", fs.Arg(0))
	}
	cfg, err := runtime.LoadWorkerConfig(*cfgPath, os.Environ(), *over)
	if err != nil {
		return err
	}
	// Every level reaches the handler; the logger hierarchy filters per
	// logger name (PUT /admin/loggers/{name} changes it at run time).
	loggers := runtime.NewLoggers(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.Level(-1 << 20)}), slog.LevelInfo)
	log := loggers.Logger(runtime.LoggerWorker)
	// The keys the user wrote (file and -o; CONNECTD_* variables also carry
	// developer aids) that connectd ignores: a WARN names each.
	if given, err := runtime.LoadWorkerConfig(*cfgPath, nil, *over); err == nil {
		for _, k := range runtime.UnknownWorkerKeys(given) {
			log.Warn(fmt.Sprintf("The configuration '%s' was supplied but isn't a known config: connectd ignores it (docs/reference/worker.md lists the worker's keys)", k))
		}
	}
	if path := os.Getenv("CONNECTD_CPU_PROFILE"); path != "" {
		// Developer aid: a CPU profile of the whole run, written at shutdown.
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	if addr := os.Getenv("CONNECTD_PPROF_ADDR"); addr != "" {
		// Developer aid: net/http/pprof (heap, goroutine, profile) on addr.
		go http.ListenAndServe(addr, nil)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	restAddr, err := cfg.RESTAddr()
	if err != nil {
		return err
	}
	// The REST port first: a taken port must fail before the worker joins
	// its group (and makes the cluster rebalance), as Kafka Connect.
	ln, err := rest.Bind(restAddr)
	if err != nil {
		return err
	}
	// The registry's port too (schema.registry.listener, when set).
	var regLn net.Listener
	if addr := strings.TrimSpace(cfg.Get("schema.registry.listener")); addr != "" {
		if regLn, err = registry.Bind(addr); err != nil {
			ln.Close()
			return err
		}
	}
	closeListeners := func() {
		ln.Close()
		if regLn != nil {
			regLn.Close()
		}
	}
	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	w, err := runtime.StartWorker(startCtx, cfg, plugins(), log)
	if err != nil {
		closeListeners()
		return err
	}
	srv, err := rest.New(w, plugins())
	if err != nil {
		closeListeners()
		w.Close()
		return err
	}
	srv.ListenOn(ln)
	log.Info("REST API listening", "url", srv.URL())
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve() }()
	var regSrv *registry.Server
	if w.Registry != nil && regLn != nil {
		regSrv = registry.NewServer(w.Registry)
		regSrv.ListenOn(regLn)
		log.Info("schema registry listening", "url", "http://"+regSrv.Addr())
		go func() { errc <- regSrv.Serve() }()
	}
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err = <-errc:
	}
	sctx, scancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer scancel()
	_ = srv.Shutdown(sctx)
	if regSrv != nil {
		_ = regSrv.Shutdown(sctx)
	}
	w.Close()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}
