// Package testenv starts real database servers for tests and the demo: a
// PostgreSQL 15 with wal_level=logical in a temp dir on a free port. It
// never mocks; when a server binary is missing it returns an error, so a
// test that needs it fails instead of skipping.
package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Postgres is a running throwaway PostgreSQL server.
type Postgres struct {
	Host    string
	Port    int
	User    string // superuser, trust auth
	Dir     string // data directory
	bin     string
	runAs   string // "" or the system user the server runs as
	stopped bool
	tls     *TLSFiles // set by EnableTLS: DSN then connects with TLS
}

// PGBinDir returns the PostgreSQL server binary directory: $PG_BIN, else
// /usr/lib/postgresql/15/bin.
func PGBinDir() string {
	if d := os.Getenv("PG_BIN"); d != "" {
		return d
	}
	return "/usr/lib/postgresql/15/bin"
}

// StartPostgres initialises and starts a PostgreSQL server with
// wal_level=logical on a free loopback port. PostgreSQL refuses to run as
// root, so as root it runs as the "postgres" system user in a directory that
// user owns. Stop it with Stop, which also removes the directory.
func StartPostgres(ctx context.Context) (*Postgres, error) {
	bin := PGBinDir()
	if _, err := os.Stat(filepath.Join(bin, "initdb")); err != nil {
		return nil, fmt.Errorf("testenv: PostgreSQL server binaries not found in %s (install postgresql-15 or set PG_BIN): %w", bin, err)
	}
	pg := &Postgres{Host: "127.0.0.1", User: "postgres", bin: bin}
	if os.Geteuid() == 0 {
		pg.runAs = "postgres"
	}
	dir, err := os.MkdirTemp("", "connectd-pg-")
	if err != nil {
		return nil, err
	}
	pg.Dir = dir
	if pg.runAs != "" {
		u, err := user.Lookup(pg.runAs)
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("testenv: running as root needs the %q system user: %w", pg.runAs, err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := pg.run(ctx, "initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("testenv: initdb: %w: %s", err, out)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		pg.Port = port
		conf := fmt.Sprintf(`
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = '%s'
wal_level = logical
max_replication_slots = 20
max_wal_senders = 20
max_prepared_transactions = 10
max_connections = 100
fsync = off
full_page_writes = off
timezone = 'UTC'
log_timezone = 'UTC'
shared_buffers = 64MB
`, port, dir)
		if err := appendFile(filepath.Join(data, "postgresql.auto.conf"), conf); err != nil {
			return nil, err
		}
		hba := "local all all trust\nhost all all 127.0.0.1/32 trust\nlocal replication all trust\nhost replication all 127.0.0.1/32 trust\n"
		if err := os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
			return nil, err
		}
		if pg.runAs != "" {
			exec.Command("chown", "-R", pg.runAs+":", dir).Run()
		}
		out, err := pg.run(ctx, "pg_ctl", "-D", data, "-l", filepath.Join(dir, "server.log"), "-w", "-t", "60", "start")
		if err == nil {
			return pg, nil
		}
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		lastErr = fmt.Errorf("testenv: pg_ctl start: %w: %s\n%s", err, out, log)
		if !strings.Contains(string(log), "could not bind") && !strings.Contains(string(log), "Address already in use") {
			break
		}
	}
	os.RemoveAll(dir)
	return nil, lastErr
}

func (pg *Postgres) run(ctx context.Context, tool string, args ...string) ([]byte, error) {
	path := filepath.Join(pg.bin, tool)
	var cmd *exec.Cmd
	if pg.runAs != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", pg.runAs, "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.Dir = pg.Dir
	return cmd.CombinedOutput()
}

// DSN returns a connection string for database db.
func (pg *Postgres) DSN(db string) string {
	return fmt.Sprintf("postgres://%s@%s:%d/%s?%s", pg.User, pg.Host, pg.Port, db, pg.dsnTLS())
}

// Connect opens a connection to database db.
func (pg *Postgres) Connect(ctx context.Context, db string) (*pgx.Conn, error) {
	return pgx.Connect(ctx, pg.DSN(db))
}

// CreateDatabase creates database name.
func (pg *Postgres) CreateDatabase(ctx context.Context, name string) error {
	c, err := pg.Connect(ctx, "postgres")
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	return err
}

// Exec runs sql (one or more statements) in database db.
func (pg *Postgres) Exec(ctx context.Context, db, sql string) error {
	c, err := pg.Connect(ctx, db)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql)
	return err
}

// Stop stops the server immediately and removes its directory.
func (pg *Postgres) Stop() error {
	if pg == nil || pg.stopped {
		return nil
	}
	pg.stopped = true
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := pg.run(ctx, "pg_ctl", "-D", filepath.Join(pg.Dir, "data"), "-m", "immediate", "-w", "stop")
	rmErr := os.RemoveAll(pg.Dir)
	if err != nil {
		return fmt.Errorf("testenv: pg_ctl stop: %w: %s", err, out)
	}
	return rmErr
}

// Restart stops (fast) and starts the server again, keeping its data.
func (pg *Postgres) Restart(ctx context.Context) error {
	data := filepath.Join(pg.Dir, "data")
	out, err := pg.run(ctx, "pg_ctl", "-D", data, "-l", filepath.Join(pg.Dir, "server.log"), "-w", "-m", "fast", "restart")
	if err != nil {
		return fmt.Errorf("testenv: pg_ctl restart: %w: %s", err, out)
	}
	return nil
}

// Crash stops the server as a power loss would (pg_ctl stop -m immediate:
// no shutdown checkpoint, crash recovery at the next start) and starts it
// again. Unlike Restart (a fast shutdown), it does not wait for logical
// replication clients to confirm what they were sent.
func (pg *Postgres) Crash(ctx context.Context) error {
	data := filepath.Join(pg.Dir, "data")
	if out, err := pg.run(ctx, "pg_ctl", "-D", data, "-w", "-m", "immediate", "stop"); err != nil {
		return fmt.Errorf("testenv: pg_ctl stop -m immediate: %w: %s", err, out)
	}
	if out, err := pg.run(ctx, "pg_ctl", "-D", data, "-l", filepath.Join(pg.Dir, "server.log"), "-w", "start"); err != nil {
		return fmt.Errorf("testenv: pg_ctl start: %w: %s", err, out)
	}
	return nil
}

func appendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	return errors.Join(err, f.Close())
}

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort() (int, error) { return freePort() }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Halt stops the server (fast shutdown) keeping its data, so that clients
// see "connection refused" until Resume.
func (pg *Postgres) Halt(ctx context.Context) error {
	out, err := pg.run(ctx, "pg_ctl", "-D", filepath.Join(pg.Dir, "data"), "-m", "fast", "-w", "stop")
	if err != nil {
		return fmt.Errorf("testenv: pg_ctl stop: %w: %s", err, out)
	}
	return nil
}

// Resume starts a halted server again on the same port.
func (pg *Postgres) Resume(ctx context.Context) error {
	out, err := pg.run(ctx, "pg_ctl", "-D", filepath.Join(pg.Dir, "data"), "-l", filepath.Join(pg.Dir, "server.log"), "-w", "-t", "60", "start")
	if err != nil {
		return fmt.Errorf("testenv: pg_ctl start: %w: %s", err, out)
	}
	return nil
}
