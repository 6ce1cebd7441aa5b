# connectd: a multi-stage build. The builder stage compiles a static binary
# (CGO_ENABLED=0); the final stage is a small Debian with that binary, run as
# a non-root user, with a HEALTHCHECK on the REST API (GET / answers 200 with
# the worker's version, as Kafka Connect's root resource).
#
# Public: docker build -t connectd .
# Without a registry: scripts/images.sh all (BASE_IMAGE built locally with
# debootstrap; the binary prebuilt on the host, or with CONNECTD_BUILD=source
# compiled here in a local Go image from a context that carries vendor/ and
# GOFLAGS=-mod=vendor).
ARG GO_IMAGE=golang:1.26-bookworm
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${GO_IMAGE} AS build
WORKDIR /src
ARG GOFLAGS=
ENV CGO_ENABLED=0 GOFLAGS=${GOFLAGS}
COPY go.mod go.sum ./
# The forked kfake (go.mod replace, third_party/kfake/README.md).
COPY third_party ./third_party
# Modules in their own layer, reused while go.sum is unchanged (skipped when
# the context vendors them).
RUN case "$GOFLAGS" in *-mod=vendor*) ;; *) go mod download ;; esac
COPY . .
# scripts/images.sh (no registry, so no golang image to pull) puts a static
# binary built on the host, with the host's warm build cache, at
# .prebuilt/connectd and sets GO_IMAGE to the base image; everyone else
# compiles here.
RUN mkdir -p /out && if [ -x .prebuilt/connectd ]; then cp .prebuilt/connectd /out/connectd; \
    else go build -trimpath -ldflags='-s -w' -o /out/connectd ./cmd/connectd; fi

FROM ${BASE_IMAGE}
RUN useradd --system --uid 10001 --user-group --home-dir /var/lib/connectd --create-home connectd && \
    mkdir -p /var/lib/connectd/data && chown -R connectd:connectd /var/lib/connectd
COPY --from=build /out/connectd /usr/local/bin/connectd
# Worker properties as CONNECTD_* variables (CONNECTD_DATA_DIR -> data.dir);
# listen on every interface inside the container.
ENV CONNECTD_LISTENERS=http://0.0.0.0:8083 \
    CONNECTD_EMBEDDED_KAFKA_LISTENER=0.0.0.0:9092 \
    CONNECTD_SCHEMA_REGISTRY_LISTENER=0.0.0.0:8081 \
    CONNECTD_DATA_DIR=/var/lib/connectd/data
USER connectd
WORKDIR /var/lib/connectd
VOLUME /var/lib/connectd/data
EXPOSE 8083 9092 8081
# bash's /dev/tcp: no curl in the image. Healthy once GET / answers 200.
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=5 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/8083 && printf 'GET / HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n' >&3 && head -1 <&3 | grep -q ' 200 '"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["connectd"]
CMD ["run"]
