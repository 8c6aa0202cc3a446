# syntax=docker/dockerfile:1
# preflightd image: a static binary on distroless (CA certificates, no shell, non-root user 65532).
# It writes nothing to disk, so it runs with a read-only root file system.
#   docker build --build-arg VERSION=$(git describe --tags --always) --build-arg REVISION=$(git rev-parse HEAD) -t preflightd .
ARG GO_VERSION=1.26

FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG REVISION=unknown
ENV CGO_ENABLED=0
RUN LDFLAGS="-s -w -X github.com/flinkpreflight/preflight/internal/buildinfo.version=${VERSION} -X github.com/flinkpreflight/preflight/internal/buildinfo.revision=${REVISION}" && \
    go build -trimpath -ldflags "$LDFLAGS" -o /out/preflightd ./server/preflightd && \
    go build -trimpath -ldflags "$LDFLAGS" -o /out/preflight ./client/preflight

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/preflightd /out/preflight /usr/local/bin/
COPY LICENSE /usr/share/doc/preflight/LICENSE
USER 65532:65532
EXPOSE 8443 8080
ENTRYPOINT ["/usr/local/bin/preflightd", "--grpc-addr=0.0.0.0:8443", "--http-addr=0.0.0.0:8080"]
