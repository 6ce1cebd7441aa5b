package runtime

import (
	"context"
	"log/slog"
	"math"
	"sort"
	"strings"
	"sync"
	"time"
)

// Logger names used by the worker, as the Kafka Connect classes that log
// the same events, so that PUT /admin/loggers/org.apache.kafka.connect
// (or a more specific name) changes what connectd logs.
const (
	LoggerHerder     = "org.apache.kafka.connect.runtime.distributed.DistributedHerder"
	LoggerSourceTask = "org.apache.kafka.connect.runtime.WorkerSourceTask"
	LoggerRest       = "org.apache.kafka.connect.runtime.rest.RestServer"
	LoggerWorker     = "org.apache.kafka.connect.runtime.Worker"
	rootLoggerName   = "root"
)

// Log4j level names and their slog levels (Kafka Connect's LoggingResource
// accepts log4j levels, case-insensitive).
var log4jLevels = map[string]slog.Level{
	"ALL": slog.Level(math.MinInt32), "TRACE": slog.LevelDebug - 4, "DEBUG": slog.LevelDebug,
	"INFO": slog.LevelInfo, "WARN": slog.LevelWarn, "ERROR": slog.LevelError,
	"FATAL": slog.LevelError + 4, "OFF": slog.Level(math.MaxInt32),
}

func levelName(l slog.Level) string {
	best, name := slog.Level(math.MinInt32), "ALL"
	for n, v := range log4jLevels {
		if v <= l && v >= best {
			best, name = v, n
		}
	}
	return name
}

// LoggerLevel is one logger's level as GET /admin/loggers shows it
// (Kafka Connect's rest.entities.LoggerLevel): last_modified in ms since
// the epoch, nil when never set through the API.
type LoggerLevel struct {
	Level        string
	LastModified *int64
}

type loggerEntry struct {
	level        *slog.Level // nil = inherits
	lastModified *int64
}

// Loggers is the worker's logging hierarchy: named slog loggers whose
// levels follow log4j's rules (a logger without a level of its own takes
// the nearest ancestor's, by dotted name; "root" is the top) and can be
// changed at run time (Kafka Connect's Loggers, KIP-495).
type Loggers struct {
	base slog.Handler
	now  func() time.Time

	mu    sync.RWMutex
	root  loggerEntry
	known map[string]*loggerEntry
}

// NewLoggers returns a hierarchy writing to base (which should accept every
// level: the hierarchy filters) with the root logger at root.
func NewLoggers(base slog.Handler, root slog.Level) *Loggers {
	return &Loggers{base: base, now: time.Now, root: loggerEntry{level: &root}, known: map[string]*loggerEntry{}}
}

// Logger returns the logger called name, creating it; its records carry
// the attribute logger=name.
func (l *Loggers) Logger(name string) *slog.Logger {
	l.mu.Lock()
	if _, ok := l.known[name]; !ok {
		l.known[name] = &loggerEntry{}
	}
	l.mu.Unlock()
	return slog.New(&levelHandler{l: l, name: name, next: l.base.WithAttrs([]slog.Attr{slog.String("logger", name)})})
}

// effective returns the level that applies to name. Callers hold l.mu.
func (l *Loggers) effective(name string) slog.Level {
	for n := name; n != ""; {
		if e, ok := l.known[n]; ok && e.level != nil {
			return *e.level
		}
		i := strings.LastIndexByte(n, '.')
		if i < 0 {
			break
		}
		n = n[:i]
	}
	return *l.root.level
}

func (l *Loggers) view(name string, e *loggerEntry) LoggerLevel {
	lv := l.effective(name)
	if e.level != nil {
		lv = *e.level
	}
	return LoggerLevel{Level: levelName(lv), LastModified: e.lastModified}
}

// AllLevels returns the loggers that have a level of their own, and root
// (Loggers.allLevels).
func (l *Loggers) AllLevels() map[string]LoggerLevel {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := map[string]LoggerLevel{rootLoggerName: l.view(rootLoggerName, &l.root)}
	for n, e := range l.known {
		if e.level != nil {
			out[n] = l.view(n, e)
		}
	}
	return out
}

// Level returns the level of an existing logger (its own or inherited);
// false when no logger has that name (Loggers.level).
func (l *Loggers) Level(name string) (LoggerLevel, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if strings.EqualFold(name, rootLoggerName) {
		return l.view(rootLoggerName, &l.root), true
	}
	e, ok := l.known[name]
	if !ok {
		return LoggerLevel{}, false
	}
	return l.view(name, e), true
}

// ValidLevel reports whether level is a log4j level name (any case).
func ValidLevel(level string) bool {
	_, ok := log4jLevels[strings.ToUpper(level)]
	return ok
}

// SetLevel sets level on namespace and every existing logger whose name
// starts with it (creating namespace's logger), or on every logger for
// "root", and returns the affected names sorted (Loggers.setLevel).
func (l *Loggers) SetLevel(namespace, level string) []string {
	lv, ok := log4jLevels[strings.ToUpper(level)]
	if !ok {
		return nil
	}
	now := l.now().UnixMilli()
	l.mu.Lock()
	defer l.mu.Unlock()
	set := func(e *loggerEntry) {
		v := lv
		t := now
		e.level, e.lastModified = &v, &t
	}
	var out []string
	if strings.EqualFold(namespace, rootLoggerName) {
		for n, e := range l.known {
			set(e)
			out = append(out, n)
		}
		set(&l.root)
		out = append(out, rootLoggerName)
	} else {
		if _, ok := l.known[namespace]; !ok {
			l.known[namespace] = &loggerEntry{}
		}
		for n, e := range l.known {
			if strings.HasPrefix(n, namespace) {
				set(e)
				out = append(out, n)
			}
		}
	}
	sort.Strings(out)
	return out
}

// levelHandler filters records by its logger's effective level.
type levelHandler struct {
	l    *Loggers
	name string
	next slog.Handler
}

func (h *levelHandler) Enabled(ctx context.Context, lv slog.Level) bool {
	h.l.mu.RLock()
	min := h.l.effective(h.name)
	h.l.mu.RUnlock()
	return lv >= min && h.next.Enabled(ctx, lv)
}

func (h *levelHandler) Handle(ctx context.Context, r slog.Record) error { return h.next.Handle(ctx, r) }

func (h *levelHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &levelHandler{l: h.l, name: h.name, next: h.next.WithAttrs(as)}
}

func (h *levelHandler) WithGroup(g string) slog.Handler {
	return &levelHandler{l: h.l, name: h.name, next: h.next.WithGroup(g)}
}

// loggersOf returns the hierarchy log belongs to, or a new one over log's
// handler (whose own level then also applies).
func loggersOf(log *slog.Logger) *Loggers {
	if lh, ok := log.Handler().(*levelHandler); ok {
		return lh.l
	}
	return NewLoggers(log.Handler(), slog.LevelInfo)
}

// connectorLogger returns the logger of a connector's tasks, named as the
// task class of its connector class (io.debezium.connector.postgresql.
// PostgresConnector → ...PostgresConnectorTask).
func (h *Herder) connectorLogger(cfg map[string]string) *slog.Logger {
	_, class, _, ok := h.plugins.Connector(cfg["connector.class"])
	if !ok {
		return h.taskLog
	}
	return h.loggers.Logger(class + "Task")
}

// Loggers returns the worker's logger hierarchy (GET/PUT /admin/loggers).
func (h *Herder) Loggers() *Loggers { return h.loggers }
