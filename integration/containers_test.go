//go:build docker

package integration

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/connectd/connectd/internal/testenv"
	"github.com/jackc/pgx/v5"
	"github.com/testcontainers/testcontainers-go"
)

// The same end-to-end outcomes as the local-process tests (snapshot then
// streaming, SIGKILL restart, JDBC sink convergence), with the databases in
// containers started by testcontainers-go. They are built with -tags docker
// (make test adds it when `docker info` answers) and fail, never skip, when
// Docker is unusable. The images come from the variables docker-compose.yml
// uses, with the same public defaults; scripts/images.sh builds local ones
// from Debian's packages where no registry is reachable and exports them.

// containerImage returns $env, else def (the public default).
func containerImage(env, def string) string {
	if v := os.Getenv(env); v != "" {
		return v
	}
	return def
}

func init() {
	// Ryuk, testcontainers' reaper, is an image from a registry; every
	// container here is terminated by t.Cleanup instead.
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		os.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
}

// startContainer runs req and returns the host address of its port
// (127.0.0.1 and the published port). The container is terminated at the
// end of the test; its log is printed if the test failed.
func startContainer(t *testing.T, req testcontainers.ContainerRequest, port string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true})
	if c != nil {
		t.Cleanup(func() {
			if t.Failed() {
				if r, err := c.Logs(context.Background()); err == nil {
					b := new(strings.Builder)
					buf := make([]byte, 1<<16)
					for {
						n, err := r.Read(buf)
						b.Write(buf[:n])
						if err != nil {
							break
						}
					}
					t.Logf("%s log:\n%s", req.Image, b.String())
				}
			}
			testcontainers.TerminateContainer(c)
		})
	}
	if err != nil {
		t.Fatalf("starting %s: %v", req.Image, err)
	}
	p, err := c.MappedPort(ctx, port)
	if err != nil {
		t.Fatal(err)
	}
	return "127.0.0.1", int(p.Num())
}

// startPostgresContainer starts $POSTGRES_IMAGE (wal_level=logical, trust
// authentication) with the demo's inventory database, and returns it as a
// testenv.Postgres so that the local-process tests' helpers apply.
func startPostgresContainer(t *testing.T) *testenv.Postgres {
	t.Helper()
	host, port := startContainer(t, testcontainers.ContainerRequest{
		Image:        containerImage("POSTGRES_IMAGE", "postgres:15"),
		Env:          map[string]string{"POSTGRES_HOST_AUTH_METHOD": "trust", "POSTGRES_DB": "inventory"},
		Cmd:          []string{"postgres", "-c", "wal_level=logical", "-c", "max_wal_senders=10", "-c", "max_replication_slots=10"},
		ExposedPorts: []string{"5432/tcp"},
	}, "5432/tcp")
	pg := &testenv.Postgres{Host: host, Port: port, User: "postgres"}
	// The entrypoint's init server listens on no TCP port: a connection
	// that works is the real server.
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		c, err := pgx.Connect(ctx, pg.DSN("inventory"))
		cancel()
		if err == nil {
			var wal string
			err = c.QueryRow(context.Background(), "SHOW wal_level").Scan(&wal)
			c.Close(context.Background())
			if err == nil && wal != "logical" {
				t.Fatalf("container PostgreSQL has wal_level=%s", wal)
			}
			if err == nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("container PostgreSQL did not accept connections: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	mustExec(t, pg, readFile(t, inventorySQL))
	return pg
}

// startMariaDBContainer starts $MARIADB_IMAGE with the binary log in row
// format and the given databases (the first from MARIADB_DATABASE), and
// returns it as a testenv.MariaDB (root over TCP) so that the
// local-process tests' helpers apply.
func startMariaDBContainer(t *testing.T, dbs ...string) *testenv.MariaDB {
	t.Helper()
	host, port := startContainer(t, testcontainers.ContainerRequest{
		Image: containerImage("MARIADB_IMAGE", "mariadb:10.11"),
		Env:   map[string]string{"MARIADB_ROOT_PASSWORD": "connectd", "MARIADB_DATABASE": dbs[0]},
		// Debezium's MariaDB connector needs row events with full images.
		Cmd:          []string{"mariadbd", "--log-bin=mysql-bin", "--binlog-format=ROW", "--binlog-row-image=FULL", "--server-id=1", "--default-time-zone=+00:00"},
		ExposedPorts: []string{"3306/tcp"},
	}, "3306/tcp")
	m := &testenv.MariaDB{Host: host, Port: port, User: "root", Password: "connectd"}
	h := openMaria(t, m, "")
	deadline := time.Now().Add(60 * time.Second)
	for {
		var format string
		err := h.QueryRow("SELECT @@binlog_format").Scan(&format)
		if err == nil && format != "ROW" {
			t.Fatalf("container MariaDB has binlog_format=%s", format)
		}
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("container MariaDB did not accept connections: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, db := range dbs[1:] {
		if _, err := h.Exec("CREATE DATABASE " + db); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// Snapshot of the inventory tables, then 1,000 changes: per key the exact
// sequence of events (TestSnapshotThenStreamingExactSequence's checks).
func TestContainerPostgresSnapshotThenStreaming(t *testing.T) {
	testSnapshotThenStreaming(t, startPostgresContainer(t))
}

// SIGKILL mid-stream, changes while down, restart: nothing lost, in order
// per key (TestSIGKILLMidStreamLosesNothing's checks).
func TestContainerPostgresSIGKILLMidStream(t *testing.T) {
	testSIGKILLMidStream(t, startPostgresContainer(t))
}

// The same for MariaDB's binlog (TestMariaDBSIGKILLMidStreamLosesNothing).
func TestContainerMariaDBSIGKILLMidStream(t *testing.T) {
	testMariaDBSIGKILLMidStream(t, startMariaDBContainer(t, "inventory"))
}

// PostgreSQL container -> connectd -> JDBC sink into the same PostgreSQL
// (two databases) and a MariaDB container, 2,000 changes with two SIGKILLs:
// the targets equal the source (TestJdbcSinkConvergesAfterSIGKILL's checks).
func TestContainerJdbcSinkConvergesAfterSIGKILL(t *testing.T) {
	testJdbcSinkConverges(t, startPostgresContainer(t), startMariaDBContainer(t, "target"), 200)
}
