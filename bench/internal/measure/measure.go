// Package measure holds what the end-to-end benchmarks (bench/postgres,
// bench/mysql) share: a connectd process started on a throwaway data
// directory (its REST listener, embedded broker and schema registry on
// free ports), the resources it uses as Linux reports them in /proc
// (peak RSS, CPU time), the machine's load average, and the line that
// prints a rate against its reference.
//
// Everything here reads Linux's /proc; on another system the readings
// are -1 (RSS), 0 (CPU) or "?" (load average).
package measure

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/connectd/connectd/internal/testenv"
)

// Daemon is one connectd process started by Start.
type Daemon struct {
	Cmd      *exec.Cmd
	REST     string // http://127.0.0.1:port of the REST API
	Kafka    string // 127.0.0.1:port of the embedded broker
	Registry string // http://127.0.0.1:port of the embedded schema registry
	Dir      string // its data.dir; connectd.log is written there
	done     chan struct{}
}

// Start runs the connectd binary bin on data directory dir (offsets
// flushed every second) and waits up to 30 s for its REST API to answer.
// registryPort is the embedded schema registry's port: 0 picks a free
// one; a restart whose connectors must keep their registry URL passes the
// earlier port. connectd's output is appended to dir/connectd.log, so a
// restart on the same directory keeps the earlier run's log. A connectd
// that exits at start (a FreePort port taken by another process in the
// meantime) is started again on new ports, three times at most.
func Start(bin, dir string, registryPort int) (*Daemon, error) {
	return StartOn(bin, dir, registryPort, "")
}

// StartOn is Start with connectd's Kafka at bootstrap (host:port of a
// real Kafka, StartKafka) instead of its embedded broker when bootstrap is
// not empty. The worker's group.id and its config, offset and status
// topics are named after dir, so that daemons on one broker keep apart
// and a restart on the same dir finds its connectors again.
func StartOn(bin, dir string, registryPort int, bootstrap string) (*Daemon, error) {
	var err error
	for range 3 {
		var d *Daemon
		if d, err = start(bin, dir, registryPort, bootstrap); !errors.Is(err, errExited) {
			return d, err
		}
	}
	return nil, err
}

var errExited = errors.New("connectd exited at start")

func start(bin, dir string, registryPort int, bootstrap string) (*Daemon, error) {
	restPort, _ := testenv.FreePort()
	kafkaPort, _ := testenv.FreePort()
	if registryPort <= 0 {
		registryPort, _ = testenv.FreePort()
	}
	d := &Daemon{REST: fmt.Sprintf("http://127.0.0.1:%d", restPort), Kafka: fmt.Sprintf("127.0.0.1:%d", kafkaPort),
		Registry: fmt.Sprintf("http://127.0.0.1:%d", registryPort), Dir: dir, done: make(chan struct{})}
	args := []string{"-o", "listeners=" + d.REST, "-o", "data.dir=" + dir,
		"-o", "offset.flush.interval.ms=1000", "-o", "schema.registry.listener=" + d.Registry[len("http://"):]}
	if bootstrap == "" {
		args = append(args, "-o", "embedded.kafka.listener="+d.Kafka)
	} else {
		d.Kafka = bootstrap
		g := filepath.Base(dir)
		args = append(args, "-o", "bootstrap.servers="+bootstrap, "-o", "group.id="+g,
			"-o", "config.storage.topic="+g+"-configs", "-o", "offset.storage.topic="+g+"-offsets",
			"-o", "status.storage.topic="+g+"-status", "-o", "jobs.storage.topic="+g+"-jobs")
	}
	d.Cmd = exec.Command(bin, args...)
	logf, err := os.OpenFile(filepath.Join(dir, "connectd.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	logStart, _ := logf.Seek(0, io.SeekEnd)
	d.Cmd.Stdout, d.Cmd.Stderr = logf, logf
	if err := d.Cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() { d.Cmd.Wait(); logf.Close(); close(d.done) }()
	// The REST port answering is not enough: FreePort's port can be taken
	// by another process (another benchmark's connectd on a busy machine),
	// and then this Daemon would drive that worker. Ours logs its listener
	// URL, and must still be running.
	// Only this run's lines count (a restart appends to the same log), and
	// the registry's "listening" line also carries a url=.
	listening := func(log []byte) bool {
		if len(log) < int(logStart) {
			return false
		}
		for _, l := range bytes.Split(log[logStart:], []byte("\n")) {
			if bytes.Contains(l, []byte(`msg="REST API listening"`)) && bytes.HasSuffix(l, []byte("url="+d.REST)) {
				return true
			}
		}
		return false
	}
	for i := 0; i < 600; i++ {
		select {
		case <-d.done:
			return nil, fmt.Errorf("%w; see %s", errExited, filepath.Join(dir, "connectd.log"))
		default:
		}
		if log, _ := os.ReadFile(filepath.Join(dir, "connectd.log")); listening(log) {
			if resp, err := http.Get(d.REST + "/"); err == nil {
				resp.Body.Close()
				return d, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	d.Stop()
	return nil, fmt.Errorf("connectd did not start; see %s", filepath.Join(dir, "connectd.log"))
}

// Stop sends SIGTERM and waits until the process has exited.
func (d *Daemon) Stop() {
	d.Cmd.Process.Signal(syscall.SIGTERM)
	<-d.done
}

// PeakRSS returns the process's peak resident set size (VmHWM in
// /proc/<pid>/status) in MiB, or -1 when it cannot be read.
func (d *Daemon) PeakRSS() float64 { return procPeakRSS(d.Cmd.Process.Pid) }

func procPeakRSS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			kb, _ := strconv.Atoi(strings.Fields(l)[1])
			return float64(kb) / 1024
		}
	}
	return -1
}

// CPU returns the user+system CPU time the process has used so far
// (utime and stime, fields 14 and 15 of /proc/<pid>/stat, in clock ticks
// of 10 ms: USER_HZ is 100 on Linux), or 0 when it cannot be read. On a
// shared machine, CPU per row is steadier than the wall-clock rate.
func (d *Daemon) CPU() time.Duration { return procCPU(d.Cmd.Process.Pid) }

func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // fields from 3 (state) on
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100
}

// Create creates connector name with config cfg through the REST API
// (POST /connectors); any status but 201 Created is an error carrying the
// response body.
func (d *Daemon) Create(name string, cfg map[string]string) error {
	body, _ := json.Marshal(map[string]any{"name": name, "config": cfg})
	resp, err := http.Post(d.REST+"/connectors", "application/json", bytes.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("create connector: %s %s", resp.Status, b)
	}
	return nil
}

// WaitCount polls the topic's end offsets every 20 ms until they sum to
// at least n records. It fails after timeout, or as soon as connectd has
// exited. With BENCH_DEBUG set in the environment it prints when the
// first records arrived.
func (d *Daemon) WaitCount(topic string, n int64, timeout time.Duration) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(d.Kafka), kgo.MetadataMinAge(20*time.Millisecond))
	if err != nil {
		return err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	t0 := time.Now()
	deadline := t0.Add(timeout)
	first := false
	for {
		ends, err := adm.ListEndOffsets(context.Background(), topic)
		var sum int64
		if err == nil {
			ends.Each(func(o kadm.ListedOffset) {
				if o.Err == nil {
					sum += o.Offset
				}
			})
		}
		if sum > 0 && !first {
			first = true
			if os.Getenv("BENCH_DEBUG") != "" {
				fmt.Printf("  first records of %s after %v\n", topic, time.Since(t0))
			}
		}
		if sum >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s has %d of %d records after %s", topic, sum, n, timeout)
		}
		select {
		case <-d.done:
			return fmt.Errorf("connectd exited with %d of %d records on %s", sum, n, topic)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// LoadAvg returns the 1, 5 and 15 minute load averages from
// /proc/loadavg as "a b c", or "?".
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// MicrosPer returns cpu in microseconds per item, for n items.
func MicrosPer(cpu time.Duration, n int) float64 {
	return float64(cpu.Microseconds()) / float64(n)
}

// Rates prints one benchmark line: a rate, its reference's rate over the
// same n items, and their ratio (ours / reference: above 1 is faster).
type Rates struct {
	Unit      string // what is counted: "rows", "events"
	NameWidth int    // the name column's width, to align a tool's lines
}

// Print writes the line for n items done in d, against reference refName
// that did them in refD, followed by extra.
func (r Rates) Print(name string, n int, d time.Duration, refName string, refD time.Duration, extra string) {
	ours := float64(n) / d.Seconds()
	ref := float64(n) / refD.Seconds()
	fmt.Printf("%-*s %9.0f %s/s  (%d %s in %.2fs)   %s: %9.0f %s/s   ratio %.2f   %s\n",
		r.NameWidth, name, ours, r.Unit, n, r.Unit, d.Seconds(), refName, ref, r.Unit, ours/ref, extra)
}

// Main is a benchmark command's start-up: it parses the command line
// (flags registered before the call, in var blocks or init), runs run and,
// when run fails, prints "bench: <error>" to stderr and exits with status 1.
func Main(run func() error) {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
