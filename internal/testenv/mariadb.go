package testenv

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
)

// MariaDB is a running throwaway MariaDB server with the binary log on
// (binlog_format=ROW, binlog_row_image=FULL, GTIDs in domain 0), in UTC.
type MariaDB struct {
	Host     string
	Port     int
	User     string // "connectd": ALL PRIVILEGES WITH GRANT OPTION, from any host
	Password string
	ServerID uint32
	Dir      string // base directory: data/, the socket, server.log
	Socket   string

	cmd     *exec.Cmd
	exited  chan struct{}
	stopped bool
	extra   []string // server options after the defaults (a later option wins)
	bin     string   // mariadbd
	runAs   []string // --user when run as root
}

// MariaDBBin returns the server binary: $MARIADBD, else /usr/sbin/mariadbd.
func MariaDBBin() string {
	if b := os.Getenv("MARIADBD"); b != "" {
		return b
	}
	return "/usr/sbin/mariadbd"
}

// StartMariaDB initialises a data directory with mariadb-install-db and
// starts mariadbd on a free loopback port with log_bin, binlog_format=ROW,
// binlog_row_image=FULL and server_id=1. As root the server runs as the
// "mysql" system user (mariadbd --user). It creates the user
// connectd/connectd with every privilege. Stop it with Stop, which also
// removes the directory. A missing binary is an error, never a skip.
func StartMariaDB(ctx context.Context) (*MariaDB, error) { return StartMariaDBWith(ctx) }

// StartMariaDBWith is StartMariaDB with extra mariadbd options, given after
// the defaults so that they override them (e.g.
// "--character-set-server=latin1").
func StartMariaDBWith(ctx context.Context, options ...string) (*MariaDB, error) {
	bin := MariaDBBin()
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("testenv: MariaDB server not found at %s (apt-get install mariadb-server or set MARIADBD): %w", bin, err)
	}
	installDB, err := exec.LookPath("mariadb-install-db")
	if err != nil {
		return nil, fmt.Errorf("testenv: mariadb-install-db not found: %w", err)
	}
	dir, err := os.MkdirTemp("", "connectd-mariadb-")
	if err != nil {
		return nil, err
	}
	m := &MariaDB{Host: "127.0.0.1", User: "connectd", Password: "connectd", ServerID: 1, Dir: dir,
		Socket: filepath.Join(dir, "mysqld.sock"), extra: options}
	var runAs []string
	if os.Geteuid() == 0 {
		u, err := user.Lookup("mysql")
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("testenv: running as root needs the mysql system user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		runAs = []string{"--user=mysql"}
	}
	// A private tmpdir: the server's temporary tables must not meet other
	// servers' (or their cleanup) in /tmp.
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if os.Geteuid() == 0 {
		u, _ := user.Lookup("mysql")
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(tmp, uid, gid); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	args := append([]string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal",
		"--skip-test-db", "--skip-name-resolve", "--tmpdir=" + tmp}, runAs...)
	// mariadb-install-db has failed now and then under load (a SIGSEGV of
	// the bootstrap server; "Unknown table 'mysql.tmp_user_sys'"): it is
	// run again on a fresh data directory, three times at most.
	for attempt := 1; ; attempt++ {
		cmd := exec.CommandContext(ctx, installDB, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err == nil {
			break
		}
		if attempt == 3 || ctx.Err() != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("testenv: mariadb-install-db (%d attempts): %w: %s", attempt, err, out)
		}
		if err := os.RemoveAll(data); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		m.Port = port
		m.bin, m.runAs = bin, runAs
		if lastErr = m.start(ctx, bin, runAs); lastErr == nil {
			break
		}
		log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
		if !bytes.Contains(log, []byte("Address already in use")) && !bytes.Contains(log, []byte("Can't start server: Bind")) {
			break
		}
	}
	if lastErr != nil {
		os.RemoveAll(dir)
		return nil, lastErr
	}
	setup := "CREATE USER 'connectd'@'%' IDENTIFIED BY 'connectd';\n" +
		"GRANT ALL PRIVILEGES ON *.* TO 'connectd'@'%' WITH GRANT OPTION;\n"
	if err := m.rootExec(ctx, "", setup); err != nil {
		m.Stop()
		return nil, err
	}
	return m, nil
}

func (m *MariaDB) start(ctx context.Context, bin string, runAs []string) error {
	args := append([]string{"--no-defaults",
		"--datadir=" + filepath.Join(m.Dir, "data"),
		"--tmpdir=" + filepath.Join(m.Dir, "tmp"),
		"--socket=" + m.Socket,
		"--pid-file=" + filepath.Join(m.Dir, "mysqld.pid"),
		"--log-error=" + filepath.Join(m.Dir, "server.log"),
		"--bind-address=127.0.0.1",
		"--port=" + strconv.Itoa(m.Port),
		"--skip-name-resolve",
		"--server-id=" + strconv.Itoa(int(m.ServerID)),
		"--log-bin=" + filepath.Join(m.Dir, "data", "mysql-bin"),
		"--binlog-format=ROW",
		"--binlog-row-image=FULL",
		"--gtid-domain-id=0",
		"--gtid-strict-mode=ON",
		"--default-time-zone=+00:00",
		"--character-set-server=utf8mb4",
		"--collation-server=utf8mb4_general_ci",
		"--innodb-buffer-pool-size=64M",
		"--innodb-log-file-size=48M",
		"--innodb-flush-log-at-trx-commit=2",
		"--skip-innodb-doublewrite",
		"--sync-binlog=0",
		"--max-connections=200",
	}, m.extra...)
	args = append(args, runAs...)
	cmd := exec.Command(bin, args...)
	cmd.Dir = m.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("testenv: start mariadbd: %w", err)
	}
	m.cmd = cmd
	m.exited = make(chan struct{})
	go func() { cmd.Wait(); close(m.exited) }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := client.Connect(fmt.Sprintf("127.0.0.1:%d", m.Port), "root", "", "")
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-m.exited:
			log, _ := os.ReadFile(filepath.Join(m.Dir, "server.log"))
			return fmt.Errorf("testenv: mariadbd exited: %s", log)
		case <-ctx.Done():
			m.kill()
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			m.kill()
			log, _ := os.ReadFile(filepath.Join(m.Dir, "server.log"))
			return fmt.Errorf("testenv: mariadbd did not accept connections within 60s: %v\n%s", err, log)
		}
	}
}

func (m *MariaDB) rootExec(ctx context.Context, db, sql string) error {
	args := []string{"--no-defaults", "--default-character-set=utf8mb4", "-S", m.Socket, "-u", "root", "--batch"}
	if m.Socket == "" {
		// A server this package did not start (a container): over TCP as
		// User, who must be allowed what the script does.
		args = []string{"--no-defaults", "--default-character-set=utf8mb4", "--protocol=tcp", "-h", m.Host, "-P", fmt.Sprint(m.Port),
			"-u", m.User, "-p" + m.Password, "--batch"}
	}
	if db != "" {
		args = append(args, db)
	}
	cmd := exec.CommandContext(ctx, "mariadb", args...)
	cmd.Stdin = strings.NewReader(sql)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("testenv: mariadb: %w: %s", err, out)
	}
	return nil
}

// Addr returns host:port.
func (m *MariaDB) Addr() string { return fmt.Sprintf("%s:%d", m.Host, m.Port) }

// Connect opens a client connection as User to database db ("" = none).
func (m *MariaDB) Connect(ctx context.Context, db string) (*client.Conn, error) {
	return client.ConnectWithContext(ctx, m.Addr(), m.User, m.Password, db, 10*time.Second)
}

// Exec runs a SQL script (one or more statements separated by ";") in
// database db ("" = none) with the mariadb command-line client, as root over
// the socket; on a MariaDB with no Socket (one started elsewhere, e.g. in a
// container, and described by Host, Port, User and Password), as User over TCP.
func (m *MariaDB) Exec(ctx context.Context, db, sql string) error { return m.rootExec(ctx, db, sql) }

// CreateDatabase creates database name.
func (m *MariaDB) CreateDatabase(ctx context.Context, name string) error {
	return m.rootExec(ctx, "", "CREATE DATABASE `"+strings.ReplaceAll(name, "`", "``")+"`")
}

func (m *MariaDB) kill() {
	if m.cmd != nil && m.cmd.Process != nil {
		syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
		<-m.exited
	}
}

// Crash kills the server (SIGKILL, no shutdown) and starts it again on
// the same data directory and port: InnoDB and binlog crash recovery, as
// after a power loss. Clients' connections break.
func (m *MariaDB) Crash(ctx context.Context) error {
	if m.cmd == nil || m.bin == "" {
		return fmt.Errorf("testenv: Crash needs a server this package started")
	}
	m.kill()
	return m.start(ctx, m.bin, m.runAs)
}

// Stop kills the server and removes its directory.
func (m *MariaDB) Stop() error {
	if m == nil || m.stopped {
		return nil
	}
	m.stopped = true
	m.kill()
	return os.RemoveAll(m.Dir)
}

// Log returns the server's error log, for test failure messages.
func (m *MariaDB) Log() string {
	b, err := os.ReadFile(filepath.Join(m.Dir, "server.log"))
	if err != nil {
		return err.Error()
	}
	return string(b)
}
