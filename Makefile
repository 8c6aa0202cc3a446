# Flink Preflight — build and check targets. `make test` is what CI runs (.ci/run) and what the
# README tells a newcomer to run: it installs every tool it needs (pinned in go.mod files) first.

SHELL := /bin/bash
GO ?= go
BUF := $(GO) tool -modfile=tools/buf/go.mod buf
STATICCHECK := $(GO) tool -modfile=tools/staticcheck/go.mod staticcheck
BIN := $(CURDIR)/bin
VERSITYGW := $(BIN)/versitygw
FUZZTIME ?= 5s
# Version stamped into both binaries (--version, preflight_build_info); a release sets VERSION.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/flinkpreflight/preflight/internal/buildinfo.version=$(VERSION) -X github.com/flinkpreflight/preflight/internal/buildinfo.revision=$(REVISION)
RELEASE_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
# The web page test (server/web_test.go) leaves its screenshot here; git ignores it.
PREFLIGHT_ARTIFACTS ?= $(CURDIR)/out
export VERSITYGW PREFLIGHT_ARTIFACTS

.PHONY: restorecode-java rules-doc test tools lint generate check-generated breaking unit fuzz-smoke fuzz build demo bench java-adapter-test java-validator-test javahash-golden javahash-golden-update openapi-lint release helm

## test: every check CI runs, from a clean clone.
test: tools lint check-generated breaking javahash-golden openapi-lint helm unit restorecode-java fuzz-smoke java-adapter-test java-validator-test

## tools: build the pinned tools (buf, code generators, the S3 test server).
tools:
	$(GO) mod download
	$(BUF) --version
	@echo "tools: staticcheck (honnef.co/go/tools, pinned in tools/staticcheck/go.mod; Go module proxy, downloads once)"
	$(STATICCHECK) -version
	@mkdir -p $(BIN)
	$(GO) build -modfile=tools/versitygw/go.mod -o $(VERSITYGW) github.com/versity/versitygw/cmd/versitygw
	@if ! command -v chromium >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "installing Debian's chromium (headless browser for the web page test, ~300 MB with its libraries, from apt)"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null || exit 1; \
		else echo "chromium is not installed and this is not root: the web page test will skip (apt-get install chromium)"; fi; \
	fi; if command -v chromium >/dev/null 2>&1; then chromium --version; fi

## lint: gofmt, go vet, staticcheck (default checks, tests included; zero findings), go.mod tidy, buf lint, buf format.
lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi; echo "gofmt: ok"
	$(GO) vet ./...
	$(STATICCHECK) ./...
	@for dir in . $$(dirname tools/*/go.mod); do \
		(cd $$dir && $(GO) mod tidy -diff >/dev/null 2>&1) || { echo "$$dir/go.mod is not tidy: run go mod tidy in $$dir"; (cd $$dir && $(GO) mod tidy -diff); exit 1; }; \
	done; echo "go mod tidy: ok (go.mod and tools/*/go.mod)"
	$(BUF) lint
	$(BUF) format --exit-code --diff

## openapi-lint: Redocly CLI (pinned in tools/openapi-lint) lints the OpenAPI document preflightd serves.
openapi-lint:
	@if ! command -v npm >/dev/null 2>&1; then \
		if [ "$$(id -u)" != 0 ]; then echo "npm is not installed and this is not root: apt-get install npm, then make openapi-lint"; exit 1; fi; \
		echo "installing Debian's npm (for the pinned OpenAPI linter)"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null; \
	fi
	@echo "openapi-lint: npm ci of @redocly/cli pinned in tools/openapi-lint/package-lock.json (downloads once)"
	cd tools/openapi-lint && npm ci --no-audit --no-fund --loglevel=error
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true tools/openapi-lint/node_modules/.bin/redocly lint \
		--config tools/openapi-lint/redocly.yaml --format=summary server/openapi.json

## helm: helm lint --strict of deploy/helm/preflight, and every combination of its switches rendered
## and decoded strictly into the Kubernetes API types (offline; tools/helm pins Helm and k8s.io/api).
helm:
	@echo "helm: builds the pinned Helm CLI and SDK from tools/helm/go.mod (Go module proxy, downloads once)"
	$(GO) tool -modfile=tools/helm/go.mod helm lint --strict deploy/helm/preflight
	cd tools/helm && $(GO) test ./...

## generate: regenerate the API code from proto/.
generate:
	$(BUF) generate
	$(GO) run ./internal/openapidoc/gen proto/preflight/v1/preflight.swagger.json server/openapi_upload.json server/openapi.json

## rules-doc: regenerate docs/rules.md from the rule registry (internal/findings + internal/allrules; `make unit` fails while it is stale).
rules-doc:
	$(GO) run ./internal/findings/gen

## check-generated: the committed generated code equals what the pinned generators produce.
check-generated: generate
	@if [ -n "$$(git status --porcelain -- proto server/openapi.json)" ]; then echo "generated code is stale: run make generate"; git status --porcelain -- proto server/openapi.json; git diff --stat -- proto server/openapi.json; exit 1; fi; echo "generated code: up to date"

## breaking: buf breaking against the previous commit, when it had the API.
breaking:
	@if git rev-parse -q --verify HEAD~1 >/dev/null && [ -n "$$(git ls-tree -r --name-only HEAD~1 -- proto | grep '\.proto$$')" ]; then \
		$(BUF) breaking --against '.git#ref=HEAD~1' && echo "buf breaking against HEAD~1: ok"; \
	else echo "buf breaking: no earlier commit with protos, skipped"; fi

JAVAHASH_GOLDEN := internal/rescale/testdata/javahash-golden.txt.gz

## javahash-golden: the Go model of java.util.HashMap against every committed golden vector (the
## -race run checks a third of them), then tools/javahash rerun with the JDK and diffed with the
## committed vectors (skipped without javac).
javahash-golden:
	$(GO) test -run '^TestJavaHashMapGolden$$' ./internal/rescale
	@if ! command -v javac >/dev/null 2>&1; then echo "javahash-golden: javac not found, skipped (go test still checks the model against the committed vectors)"; exit 0; fi; \
	dir=$$(mktemp -d); trap 'rm -rf "$$dir"' EXIT; \
	javac -d "$$dir" tools/javahash/JavaHashOrder.java && java -cp "$$dir" JavaHashOrder > "$$dir/golden.txt" || exit 1; \
	if gzip -dc $(JAVAHASH_GOLDEN) | diff -u - "$$dir/golden.txt" > "$$dir/diff"; then \
		echo "javahash-golden: the JDK's orders equal $(JAVAHASH_GOLDEN)"; \
	else head -40 "$$dir/diff"; echo "javahash-golden: the JDK's orders differ from $(JAVAHASH_GOLDEN) (after changing the generator: make javahash-golden-update)"; exit 1; fi

## javahash-golden-update: rewrite the golden vectors from the JDK (needs javac).
javahash-golden-update:
	@dir=$$(mktemp -d); trap 'rm -rf "$$dir"' EXIT; \
	javac -d "$$dir" tools/javahash/JavaHashOrder.java && java -cp "$$dir" JavaHashOrder | gzip -n -9 > $(JAVAHASH_GOLDEN).tmp && \
	sync $(JAVAHASH_GOLDEN).tmp && mv $(JAVAHASH_GOLDEN).tmp $(JAVAHASH_GOLDEN) && echo "wrote $(JAVAHASH_GOLDEN)"

## unit: all Go tests with the race detector. Go's test cache (keyed on the test binary, the files a
## test opened and the environment it read) replays a package whose code and inputs did not change,
## which is what keeps a warm `make test` short; `go clean -testcache` forces every test to run.
unit:
	$(GO) test -race ./...

## fuzz-smoke: each decoder's fuzz targets (_metadata codec, jar index, class files and restore code, Flink config, Flink REST, GCS JSON responses, operator resources, report JSON) for a few seconds.
FUZZ_SMOKE_PKGS := ./internal/checkpoint ./internal/jarindex ./internal/classfile ./internal/restorecode ./internal/classpath ./internal/flinkrest ./internal/source/gcs ./internal/admission ./internal/report
## Go 1.26's fuzz coordinator can end a run with a bare "context deadline exceeded" and no failing
## input (golang/go#75804, fixed in Go 1.27): such a run, and only such a run, is repeated once.
fuzz-smoke:
	@set -o pipefail; log=$$(mktemp); trap 'rm -f "$$log"' EXIT; \
	for pkg in $(FUZZ_SMOKE_PKGS); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$target for $(FUZZTIME)"; \
			if ! $(GO) test -run='^$$' -fuzz="^$$target$$" -fuzztime=$(FUZZTIME) $$pkg 2>&1 | tee "$$log"; then \
				grep -q 'context deadline exceeded' "$$log" && ! grep -q 'Failing input written' "$$log" || exit 1; \
				echo "fuzz $$pkg $$target: the coordinator timed out without a failing input (golang/go#75804); once more"; \
				$(GO) test -run='^$$' -fuzz="^$$target$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
			fi; \
		done; \
	done

## fuzz: every fuzz target of every package for FUZZTIME (e.g. make fuzz FUZZTIME=10m).
fuzz:
	@for pkg in $$($(GO) list ./...); do \
		for target in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
			echo "fuzz $$pkg $$target for $(FUZZTIME)"; \
			$(GO) test -run='^$$' -fuzz="^$$target$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
		done; \
	done

## restorecode-java: the restore-code analysis against its Java fixtures (javac compiles
## internal/restorecode/testdata/{java,own}; testdata/java/check.sh re-checks that every expected
## line is in its method's LineNumberTable). `unit` runs the same tests under -race; without a JDK
## they skip, and this target says so.
restorecode-java:
	@set -o pipefail; if ! command -v javac >/dev/null 2>&1 || ! command -v jar >/dev/null 2>&1; then echo "restorecode-java: javac/jar not found, skipped (CI installs default-jdk-headless)"; exit 0; fi; \
	dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && \
	internal/restorecode/testdata/java/build.sh "$$dir" && internal/restorecode/testdata/java/check.sh "$$dir" && \
	$(GO) test -count=1 -run '^(TestJavaFixtures|TestOwnFixtures)$$' -v ./internal/restorecode | grep -E '^(--- |ok|FAIL|PASS)'

## java-adapter-test: build the FLIP-575 adapter (integrations/flink-autoscaler) with javac/jar and
## run its unit tests and its end-to-end test against a real preflightd; skipped, saying so, without a JDK.
java-adapter-test:
	GO="$(GO)" integrations/flink-autoscaler/build.sh test

## java-validator-test: build the operator's FlinkResourceValidator plugin (integrations/flink-validator),
## check its stubs against the recorded real signatures, run its unit tests and its end-to-end test
## against a real preflightd; skipped, saying so, without a JDK.
java-validator-test:
	GO="$(GO)" integrations/flink-validator/build.sh test

## build: the CLI and the daemon into bin/.
build:
	@mkdir -p $(BIN)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/preflight ./client/preflight
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/preflightd ./server/preflightd

## release: static binaries of both commands for every RELEASE_PLATFORMS entry in dist/, with
## SHA256SUMS (builds only; publishing is not part of it). E.g. make release VERSION=v1.0.0
release:
	@rm -rf dist && mkdir -p dist
	@for platform in $(RELEASE_PLATFORMS); do \
		os=$${platform%/*}; arch=$${platform#*/}; \
		for cmd in preflight:client/preflight preflightd:server/preflightd; do \
			out=dist/$${cmd%%:*}-$(VERSION)-$$os-$$arch; echo "build $$out"; \
			CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '-s -w $(LDFLAGS)' -o $$out ./$${cmd#*:} || exit 1; \
		done; \
	done
	cd dist && sha256sum preflight* > SHA256SUMS && cat SHA256SUMS

## demo: the README quickstart.
demo:
	$(GO) run ./client/preflight check testdata/compact-sink/_metadata --set compact-operator=8 || test $$? -eq 1

## bench: the Go benchmarks.
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./internal/...
