#!/usr/bin/env bash
# bench/run.sh [WORKDIR] — Preflight's benchmarks side by side in one run (see bench/README.md):
# (a) cached CheckRescale vs the Health/Check echo under ghz, (b) cold 1 MiB and 168 MiB checks
# uploaded and from S3 with the daemon's peak RSS, (c) decode throughput vs cat, (d) the soak:
# SOAK_N requests at BENCH_C with 20% hostile, goroutines and RSS before/after (fails on a leak),
# (e) bench/scale.sh: the CLI's peak RSS and time on generated 100k-operator and union files.
# Loopback only.
#
# Environment: BENCH_ONLY=soak (run only (d)), SOAK_N (soak requests, default 10000; 0 skips),
# BENCH_N (ghz requests per run, default 20000), BENCH_C (concurrency, 50),
# BENCH_ROUNDS (alternating echo/check rounds, 2), BIG_BYTES (default 168 MiB),
# VERSITYGW (default bin/versitygw; built with `make tools`; absent: S3 cases skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-$(mktemp -d "${TMPDIR:-/tmp}/preflight-bench.XXXXXX")}
BIG_BYTES=${BIG_BYTES:-$((168 << 20))}
VERSITYGW=${VERSITYGW:-$PWD/bin/versitygw}
mkdir -p "$WORK/bin"
echo "work folder: $WORK" >&2

step() { echo "$(date -u +%T) $*" >&2; }

step "building preflightd, preflight, genexamples and loadtest"
go build -o "$WORK/bin/preflightd" ./server/preflightd
go build -o "$WORK/bin/preflight" ./client/preflight
go build -o "$WORK/bin/genexamples" ./internal/scenarios/cmd/genexamples
go build -o "$WORK/bin/loadtest" ./bench/loadtest
if [ "${BENCH_ONLY:-}" = soak ]; then
	step "soak only: generating the example checkpoints"
	[ -s "$WORK/examples/compact-sink/_metadata" ] || "$WORK/bin/genexamples" -out "$WORK/examples"
	timeout 30m "$WORK/bin/loadtest" -work "$WORK" -bin "$WORK/bin" -soak-only -soak-n "${SOAK_N:-10000}" -c "${BENCH_C:-50}"
	step "results: $WORK/results.md"
	exit 0
fi

step "building ghz (tools/ghz/go.mod, ghz v0.121.0)"
go build -modfile=tools/ghz/go.mod -o "$WORK/bin/ghz" github.com/bojand/ghz/cmd/ghz
if [ ! -x "$VERSITYGW" ]; then
	step "no versitygw at $VERSITYGW (make tools builds it): S3 cases skipped"
	VERSITYGW=""
fi

step "generating the example checkpoints and the 1 MiB and $((BIG_BYTES >> 20)) MiB Kafka orphan-union files"
[ -s "$WORK/1mib/_metadata" ] || "$WORK/bin/genexamples" -out "$WORK/examples" -kafka-bytes $((1 << 20)) -kafka-out "$WORK/1mib/_metadata"
[ -s "$WORK/big/_metadata" ] || "$WORK/bin/genexamples" -out "$WORK/examples" -kafka-bytes "$BIG_BYTES" -kafka-out "$WORK/big/_metadata"
ls -l "$WORK/1mib/_metadata" "$WORK/big/_metadata" >&2

step "running (bounded: every step times out after --step-timeout, 3m by default)"
timeout 30m "$WORK/bin/loadtest" -work "$WORK" -bin "$WORK/bin" -versitygw "$VERSITYGW" \
	-n "${BENCH_N:-20000}" -c "${BENCH_C:-50}" -rounds "${BENCH_ROUNDS:-2}" -soak-n "${SOAK_N:-10000}"
step "results: $WORK/results.md (ghz JSON: $WORK/ghz-*.json)"

step "scale: the CLI's peak RSS on generated operator- and union-heavy files (bench/scale.sh)"
PREFLIGHT="$WORK/bin/preflight" timeout 30m bench/scale.sh "$WORK/scale" | tee "$WORK/scale.md"
step "scale results: $WORK/scale.md"
