#!/usr/bin/env bash
# bench/run.sh [WORKDIR] — Preflight's benchmarks side by side in one run (see bench/README.md):
# (a) cached CheckRescale vs the Health/Check echo under ghz, (b) cold 1 MiB and 168 MiB checks
# uploaded and from S3 with the daemon's peak RSS, (c) decode throughput vs cat, (d) the soak:
# SOAK_N requests at BENCH_C with 20% hostile, goroutines and RSS before/after (fails on a leak),
# (e) bench/scale.sh: the CLI's peak RSS and time on generated 100k-operator and union files.
# (f) corpus decode: the shared corpus in one process (bench/corpusdecode, preflight inspect), peer.
# Loopback only.
#
# Environment: BENCH_ONLY=soak, corpus or rpc (run only (d), (f) or (a); with rpc, BENCH_DAEMON_ARGS adds
# preflightd flags, e.g. "--no-result-cache --revalidate-interval=-1s"), SOAK_N (soak requests, default 10000; 0 skips),
# PREFLIGHT_CORPUS (the corpus folder of (f), default ../shared/corpus),
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

# (f) Corpus decode (issue #16): every _metadata of the shared corpus decoded in one process per
# mode (bench/corpusdecode: file by file, one reused Decoder, ReadLayoutFiles), then the real CLI
# `preflight inspect` over all of them under GNU time. The peer (github.com/justtrackio/flink-admin)
# is compared only when the Go module proxy serves it; otherwise the run says so.
corpus_decode() {
	CORPUS=${PREFLIGHT_CORPUS:-../shared/corpus}
	if [ -s "$CORPUS/MANIFEST.tsv" ]; then
		step "corpus decode: $CORPUS"
		go build -o "$WORK/bin/corpusdecode" ./bench/corpusdecode
		awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["kind"] == "metadata" { print $col["local_path"] }' \
			"$CORPUS/MANIFEST.tsv" | sed "s|^|$CORPUS/|" >"$WORK/corpus.list"
		{
			printf '| mode | files | MB | best wall of 5 | MB/s | files/s | CPU per pass | MB/cpu-s | peak RSS |\n|---|---|---|---|---|---|---|---|---|\n'
			for mode in perfile decoder batch; do
				timeout 5m "$WORK/bin/corpusdecode" -manifest "$CORPUS/MANIFEST.tsv" -mode "$mode" -passes 5
			done
			if [ -x /usr/bin/time ]; then
				mapfile -t files <"$WORK/corpus.list"
				set +e
				/usr/bin/time -f '%M %e %U %S' -o "$WORK/inspect-corpus.time" timeout 5m "$WORK/bin/preflight" inspect "${files[@]}" >/dev/null 2>"$WORK/inspect-corpus.err"
				code=$?
				set -e
				read -r rss wall user sys < <(tail -1 "$WORK/inspect-corpus.time")
				printf '| `preflight inspect` (CLI, text) | %s | | %s s | | | %s + %s s | | %.1f MiB (exit %s) |\n' \
					"$(wc -l <"$WORK/corpus.list")" "$wall" "$user" "$sys" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" "$code"
			fi
			mkdir -p "$WORK/peer-probe"
			if (cd "$WORK/peer-probe" && { [ -f go.mod ] || go mod init probe >/dev/null 2>&1; } &&
				GOFLAGS=-mod=mod timeout 2m go list -m -versions github.com/justtrackio/flink-admin >"$WORK/peer-probe/out" 2>&1); then
				printf '\npeer: the Go module proxy serves %s; bench/peer is not written yet, so no ratio.\n' "$(cat "$WORK/peer-probe/out")"
			else
				printf '\npeer: github.com/justtrackio/flink-admin is not served by the Go module proxy (%s); no ratio measured.\n' \
					"$(grep -o '[0-9][0-9][0-9] [A-Za-z ]*' "$WORK/peer-probe/out" | head -1)"
			fi
		} | tee "$WORK/corpus.md"
		step "corpus results: $WORK/corpus.md"
	else
		step "no corpus at $CORPUS (set PREFLIGHT_CORPUS): corpus decode skipped"
	fi
}

step "building preflightd, preflight, genexamples and loadtest"
go build -o "$WORK/bin/preflightd" ./server/preflightd
go build -o "$WORK/bin/preflight" ./client/preflight
go build -o "$WORK/bin/genexamples" ./internal/scenarios/cmd/genexamples
go build -o "$WORK/bin/loadtest" ./bench/loadtest
if [ "${BENCH_ONLY:-}" = corpus ]; then
	corpus_decode
	exit 0
fi
if [ "${BENCH_ONLY:-}" = soak ]; then
	step "soak only: generating the example checkpoints"
	[ -s "$WORK/examples/compact-sink/_metadata" ] || "$WORK/bin/genexamples" -out "$WORK/examples"
	timeout 30m "$WORK/bin/loadtest" -work "$WORK" -bin "$WORK/bin" -soak-only -soak-n "${SOAK_N:-10000}" -c "${BENCH_C:-50}"
	step "results: $WORK/results.md"
	exit 0
fi

step "building ghz (tools/ghz/go.mod, ghz v0.121.0)"
go build -modfile=tools/ghz/go.mod -o "$WORK/bin/ghz" github.com/bojand/ghz/cmd/ghz
if [ "${BENCH_ONLY:-}" = rpc ]; then
	step "rpc only: generating the example checkpoints"
	[ -s "$WORK/examples/compact-sink/_metadata" ] || "$WORK/bin/genexamples" -out "$WORK/examples"
	timeout 30m "$WORK/bin/loadtest" -work "$WORK" -bin "$WORK/bin" -rpc-only -rpc-daemon-args "${BENCH_DAEMON_ARGS:-}" \
		-n "${BENCH_N:-20000}" -c "${BENCH_C:-50}" -rounds "${BENCH_ROUNDS:-2}"
	step "results: $WORK/results.md (ghz JSON: $WORK/ghz-*.json)"
	exit 0
fi
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

corpus_decode
