#!/usr/bin/env bash
# Builds the container images that docker-compose.yml and the testcontainers
# tests (integration/containers_test.go) need, from Debian's packages only, so
# that they work where no image registry is reachable; prints the image
# variables as `export NAME=image` lines for `eval "$(scripts/images.sh)"`.
#
#   scripts/images.sh [db|all]
#     db   base + PostgreSQL 15 + MariaDB (what the tests need)          [default]
#     all  db + Prometheus + Kafka 4.3 (KRaft) + connectd (the repository's Dockerfile)
#
# Every image carries a label org.connectd.inputs = sha256 of what it is
# built from (its Dockerfile folder, its base image's id, and for connectd the
# source tree); an image whose label matches is not rebuilt, so a second run
# builds nothing. The base image is a Debian bookworm root filesystem made by
# debootstrap and `docker import`ed (the tarball is cached under
# $CONNECTD_IMAGE_CACHE, default ~/.cache/connectd/images).
#
# A variable already set (e.g. POSTGRES_IMAGE=postgres:15 where public images
# can be pulled) is kept and nothing is built for it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-db}
case "$what" in db|all) ;; *) echo "usage: $0 [db|all]" >&2; exit 2 ;; esac
cache=${CONNECTD_IMAGE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/connectd/images}
mkdir -p "$cache"
suite=bookworm
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
exports=()
log() { echo "images.sh: $*" >&2; }

docker info >/dev/null 2>&1 || { log "docker is not usable (is dockerd running?)"; exit 1; }

# label IMAGE -> the org.connectd.inputs label, or "" when the image is missing.
label() { docker image inspect -f '{{index .Config.Labels "org.connectd.inputs"}}' "$1" 2>/dev/null || true; }
image_id() { docker image inspect -f '{{.Id}}' "$1"; }
# hash_dir DIR... -> sha256 over the files' paths and contents.
hash_files() { (cd "$root" && for f in "$@"; do printf '%s\n' "$f"; sha256sum <"$f"; done) | sha256sum | cut -d' ' -f1; }
dir_files() { (cd "$root" && find "$@" -type f | LC_ALL=C sort); }

# base: debootstrap (minbase) + docker import; no Dockerfile, so its label is
# set with import --change.
BASE_IMAGE=${BASE_IMAGE:-}
if [ -z "$BASE_IMAGE" ]; then
  BASE_IMAGE=connectd-local/debian:$suite
  if [ -z "$(label "$BASE_IMAGE")" ]; then
    tarball="$cache/debian-$suite.tar"
    if [ ! -f "$tarball" ]; then
      command -v debootstrap >/dev/null || { log "debootstrap is missing (apt-get install debootstrap)"; exit 1; }
      mkdir -p "$cache"
      rootfs=$(mktemp -d "$cache/rootfs.XXXXXX")
      log "debootstrap $suite (minbase) from $mirror into $rootfs (once; several minutes)"
      debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
        { log "debootstrap failed, see $cache/debootstrap.log"; tail -20 "$cache/debootstrap.log" >&2; exit 1; }
      # As Debian's official images: no recommends, no caches, no docs.
      printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$rootfs/etc/apt/apt.conf.d/90connectd"
      printf 'deb %s %s main\ndeb %s %s-updates main\n' "$mirror" "$suite" "$mirror" "$suite" >"$rootfs/etc/apt/sources.list"
      rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
      tar -C "$rootfs" --numeric-owner -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
      rm -rf "$rootfs"
    fi
    log "docker import $tarball as $BASE_IMAGE"
    docker import --change "LABEL org.connectd.inputs=$(sha256sum <"$tarball" | cut -c1-64)" \
      --change 'CMD ["bash"]' --change 'ENV LANG=C.UTF-8' "$tarball" "$BASE_IMAGE" >/dev/null
  fi
fi
exports+=("BASE_IMAGE=$BASE_IMAGE")

# build VAR TAG DIR [docker build args...]: builds deploy/images/DIR (or the
# repository's Dockerfile for DIR=.) FROM $BASE_IMAGE unless VAR is set or
# TAG's label matches.
build() {
  local var=$1 tag=$2 dir=$3 ctx; shift 3
  if [ -n "${!var:-}" ]; then exports+=("$var=${!var}"); return; fi
  local inputs
  inputs=$( { echo "${INPUTS_EXTRA:-}"; image_id "$BASE_IMAGE"; hash_files $(dir_files "deploy/images/$dir"); } | sha256sum | cut -c1-64)
  if [ "$(label "$tag")" != "$inputs" ]; then
    log "building $tag (deploy/images/$dir)"
    ctx=${CONTEXT:-$root/deploy/images/$dir}
    local t0=$SECONDS
    docker build -q --network host --label "org.connectd.inputs=$inputs" \
      --build-arg "BASE_IMAGE=$BASE_IMAGE" -f "$root/deploy/images/$dir/Dockerfile" -t "$tag" "$@" "$ctx" >/dev/null 2>"$cache/build-$dir.log" ||
      { log "building $tag failed"; cat "$cache/build-$dir.log" >&2; exit 1; }
    log "built $tag in $((SECONDS - t0)) s"
  fi
  exports+=("$var=$tag")
  printf -v "$var" '%s' "$tag"
}

build POSTGRES_IMAGE connectd-local/postgres:15 postgres
build MARIADB_IMAGE connectd-local/mariadb:10.11 mariadb

if [ "$what" = all ]; then
  build PROMETHEUS_IMAGE connectd-local/prometheus:2 prometheus

  # Kafka 4.3 (KRaft) from the jars scripts/kafka.sh fetched from Maven Central.
  if [ -z "${KAFKA_IMAGE:-}" ]; then
    jars=$(bash "$root/scripts/kafka.sh")
    kctx=$(mktemp -d)
    cp -r "$root/deploy/images/kafka/." "$kctx/" && mkdir "$kctx/libs" && cp "$jars"/*.jar "$kctx/libs/"
    INPUTS_EXTRA=$(ls "$jars" | sha256sum) CONTEXT=$kctx build KAFKA_IMAGE connectd-local/kafka:4.3 kafka
    rm -rf "$kctx"
  else
    exports+=("KAFKA_IMAGE=$KAFKA_IMAGE")
  fi

  # connectd from the repository's multi-stage Dockerfile. There is no Go
  # image to pull here, so by default (CONNECTD_BUILD=prebuilt) the binary is
  # built on the host, where Go's build cache is warm (seconds instead of
  # minutes on 2 cores), put in the context as .prebuilt/connectd, and the
  # builder stage runs on the base image and only copies it.
  # CONNECTD_BUILD=source compiles in the builder stage instead, in a local
  # Go image (the host's GOROOT on the base), from a context that carries
  # vendor/ (go mod vendor, from the local module cache: the build has no
  # network) with GOFLAGS=-mod=vendor.
  mode=${CONNECTD_BUILD:-prebuilt}
  if [ -z "${CONNECTD_IMAGE:-}" ]; then
    CONNECTD_IMAGE=connectd-local/connectd:dev
    go_image=$BASE_IMAGE
    if [ "$mode" = source ]; then
      goroot=$(go env GOROOT) goversion=$(go env GOVERSION)
      go_image=${GO_IMAGE:-connectd-local/golang:${goversion#go}}
      if [ -z "${GO_IMAGE:-}" ] && [ -z "$(label "$go_image")" ]; then
        gctx=$(mktemp -d)
        cp "$root/deploy/images/golang/Dockerfile" "$gctx/" && cp -a "$goroot" "$gctx/go"
        rm -rf "$gctx/go/test" "$gctx/go/api" "$gctx/go/doc"
        CONTEXT=$gctx INPUTS_EXTRA=$goversion build GO_IMAGE "$go_image" golang
        rm -rf "$gctx"
      fi
    fi
    src=$(cd "$root" && git ls-files -co --exclude-standard | grep -v -E '(^|/)(testdata|integration|reference|bench)/|_test\.go$|\.md$' | LC_ALL=C sort)
    inputs=$( { echo "$mode"; image_id "$BASE_IMAGE"; image_id "$go_image"; hash_files $src; } | sha256sum | cut -c1-64)
    if [ "$(label "$CONNECTD_IMAGE")" != "$inputs" ]; then
      cctx=$(mktemp -d)
      (cd "$root" && tar -cf - $src) | tar -C "$cctx" -xf -
      if [ "$mode" = source ]; then
        (cd "$root" && go mod vendor -o "$cctx/vendor")
      else
        (cd "$root" && CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$cctx/.prebuilt/connectd" ./cmd/connectd)
      fi
      log "building $CONNECTD_IMAGE (Dockerfile, $mode)"
      t0=$SECONDS
      docker build -q --network host --label "org.connectd.inputs=$inputs" \
        --build-arg "BASE_IMAGE=$BASE_IMAGE" --build-arg "GO_IMAGE=$go_image" --build-arg GOFLAGS=-mod=vendor \
        -t "$CONNECTD_IMAGE" "$cctx" >/dev/null 2>"$cctx.log" || { log "building $CONNECTD_IMAGE failed"; cat "$cctx.log" >&2; rm -rf "$cctx"; exit 1; }
      log "built $CONNECTD_IMAGE in $((SECONDS - t0)) s"
      rm -rf "$cctx" "$cctx.log"
    fi
  fi
  exports+=("CONNECTD_IMAGE=$CONNECTD_IMAGE")
fi

for e in "${exports[@]}"; do printf 'export %s\n' "$e"; done
