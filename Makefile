# connectd: see README.md. Everything a fresh machine needs is installed by
# these targets (scripts/setup.sh), cached so that a second run downloads nothing.
SHELL   := /bin/bash
GO      ?= go
BIN     := bin/connectd

.PHONY: all build demo test setup setup-demo bench vet clean screenshot

all: build

build:
	$(GO) build -o $(BIN) ./cmd/connectd

# The main job: throwaway PostgreSQL -> connectd (embedded broker) -> events.
demo: setup-demo build
	$(GO) build -o bin/demo ./internal/demo
	@bin/demo --connectd $(BIN) || [ $$? -eq 130 ]

setup-demo:
	@bash scripts/setup.sh demo

setup:
	@bash scripts/setup.sh test

# Every test, against real PostgreSQL 15 (and later MariaDB and Kafka).
test: setup build vet
	$(GO) test -count=1 -timeout 20m ./...

vet:
	$(GO) vet ./...

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
