# connectd: see README.md. Everything a fresh machine needs is installed by
# these targets (scripts/setup.sh), cached so that a second run downloads nothing.
SHELL   := /bin/bash
GO      ?= go
BIN     := bin/connectd

.PHONY: all build demo test setup setup-demo bench vet clean screenshot images compose-smoke difftest flinktest sqltest soak fuzz docs

all: build

build:
	$(GO) build -o $(BIN) ./cmd/connectd

# The main job: throwaway PostgreSQL -> connectd (embedded broker) -> events.
# DEMO_ARGS=-replica-identity-full: full before images (for Flink SQL).
demo: setup-demo build
	$(GO) build -o bin/demo ./internal/demo
	@bin/demo --connectd $(BIN) $(DEMO_ARGS) || [ $$? -eq 130 ]

setup-demo:
	@bash scripts/setup.sh demo

setup:
	@bash scripts/setup.sh test

# Every test, against real PostgreSQL 15, MariaDB and Kafka. When Docker is
# usable (scripts/setup.sh installs and starts it as root), also the
# testcontainers-go suite (-tags docker: integration/containers_test.go),
# with the local images of scripts/images.sh (cached: a second run builds
# nothing).
test: setup build vet
	@tags=; if docker info >/dev/null 2>&1; then \
	  env=$$(bash scripts/images.sh db) || exit 1; eval "$$env"; tags="-tags docker"; \
	else echo "make test: Docker is not usable, so the testcontainers suite (-tags docker) does not run"; fi; \
	set -x; $(GO) test -count=1 -timeout 20m $$tags ./...

# The differential suites: SEEDS generated PostgreSQL workloads, each through
# the real Debezium 3.6.1 and connectd on one PostgreSQL 15
# (internal/difftest/pgdiff; about 12 s a seed), then MARIADB_SEEDS generated
# MariaDB workloads, each through the real Debezium MariaDbConnector 3.5.0 and
# connectd on one MariaDB (internal/difftest/mariadiff; about 17 s a seed;
# MARIADB_SEEDS=A-B runs seeds A..B), every record and schema history record
# compared. make test runs their fixed CI seeds. A failing seed's reproduction
# is in $(DIFFTEST_OUT)/seed-N/ (PostgreSQL) and $(DIFFTEST_OUT)/mariadb/seed-N/.
SEEDS ?= 300
MARIADB_SEEDS ?= $(SEEDS)
DIFFTEST_OUT ?= $(CURDIR)/.cache/difftest
difftest: setup
	mkdir -p $(DIFFTEST_OUT)
	rc=0; DIFFTEST_SEEDS=$(SEEDS) DIFFTEST_OUT=$(DIFFTEST_OUT) $(GO) test -count=1 -timeout 0 -run '^TestDifferential$$' -v ./internal/difftest/pgdiff/ || rc=1; \
	MARIADIFF_SEEDS=$(MARIADB_SEEDS) DIFFTEST_OUT=$(DIFFTEST_OUT) $(GO) test -count=1 -timeout 0 -run '^TestDifferential$$' -v ./internal/difftest/mariadiff/ || rc=1; \
	exit $$rc

# Streaming SQL (flinklite/sql): SQLTEST_SEEDS seeded workloads on real
# PostgreSQL 15 through connectd's connector and the embedded broker, 9
# fixed and 6 generated queries, each upsert topic's committed content
# compared with the same SELECT on PostgreSQL at every quiescent point, the
# jobs killed (no final checkpoint) mid-round and at a quiescent point and
# resumed from their checkpoints (about 35 s a seed on a shared machine).
# make test runs seed 1. SQLTEST_SEED=N reruns one seed.
SQLTEST_SEEDS ?= 50
sqltest: setup
	SQLTEST_SEEDS=$(SQLTEST_SEEDS) $(GO) test -count=1 -timeout 0 -run '^TestOracle$$' -v ./flinklite/sql/

# Flink SQL on connectd's change topics (integration/flink_test.go): Flink
# 1.20 and 2.2 (local MiniCluster, scripts/flink.sh), each on the embedded
# broker and on a real Kafka 4.3, results equal to the same SQL in
# PostgreSQL. make test runs Flink 1.20 on the embedded broker only.
flinktest: setup
	CONNECTD_FLINK_VERSIONS="1.20 2.2" CONNECTD_FLINK_BROKERS="embedded kafka" $(GO) test -count=1 -timeout 30m -run '^TestFlinkSQLOnConnectdTopics$$' -v ./integration/

# The soak (integration/soak_test.go): PostgreSQL and MariaDB pipelines under
# a steady write load for DURATION, with SIGKILLs of connectd and restarts of
# PostgreSQL crashes at random times; then no gaps, per-key order and connectd
# verify. SOAK_SEED repeats a run (its seed is printed).
DURATION ?= 2m
SOAK_SEED ?=
soak: setup build
	CONNECTD_SOAK_DURATION=$(DURATION) CONNECTD_SOAK_SEED=$(SOAK_SEED) $(GO) test -count=1 -tags soak -timeout 0 -run '^TestSoak$$' -v ./integration/

# Every fuzz target (decoders and parsers of outside input) for FUZZTIME each.
FUZZTIME ?= 1m
fuzz:
	FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

# The generated configuration reference (docs/reference/) from the
# ConfigDefs: the worker's keys and every plugin's, as the REST API lists
# them. make test fails when a committed page is stale (TestReferenceCurrent).
docs:
	CONNECTD_WRITE_DOCS=1 $(GO) test -count=1 -run '^TestReferenceCurrent$$' ./internal/docgen/

vet:
	$(GO) vet ./...
	$(GO) vet -tags docker ./integration/
	$(GO) vet -tags soak ./integration/

# The images docker-compose.yml and the testcontainers suite use, built from
# Debian's packages (no registry needed); prints the image variables:
#   eval "$$(scripts/images.sh all)"
images:
	@bash scripts/images.sh all

# docker-compose.yml up with the local images, the example connectors
# registered, change events seen, Prometheus scraping; then torn down.
compose-smoke: setup
	@bash scripts/compose-smoke.sh

# Benchmarks: Go micro-benchmarks, then the PostgreSQL connector end to end
# against COPY / pg_recvlogical, and the MariaDB connector against the
# mariadb client / mariadb-binlog --verbose, measured in the same run
# (ratios printed), then flinklite's 10M-event windowed count against
# Flink's published Nexmark q12 rate per core.
bench: setup build
	$(GO) test -run '^$$' -bench . -benchmem ./...
	$(GO) run ./bench/postgres --connectd $(BIN)
	$(GO) run ./bench/jdbc
	$(GO) run ./bench/mysql --connectd $(BIN)
	$(GO) run ./bench/flinklite

# A PNG of the dashboard (/ui) while a connector streams from a real
# PostgreSQL, taken by headless Chromium in the dashboard's browser test.
screenshot: setup
	CONNECTD_SCREENSHOT=$(CURDIR)/dashboard.png $(GO) test -count=1 -run '^TestDashboardInChromium$$' ./integration/
	@echo "wrote dashboard.png"

clean:
	rm -rf bin
