#!/usr/bin/env bash
# bench/run.sh [WORKDIR] — Preflight's benchmarks side by side in one run (see bench/README.md):
# (a) cached CheckRescale vs the Health/Check echo under ghz and the native generator (bench/loadtest),
# (b) cold 1 MiB and 168 MiB checks uploaded and from S3 with the daemon's peak RSS, (c) decode throughput vs cat, (d) the soak:
# SOAK_N requests at BENCH_C with 20% hostile, goroutines and RSS before/after (fails on a leak),
# (e) bench/scale.sh: the CLI's peak RSS and time on generated 100k-operator and union files.
# (f) corpus decode: the shared corpus in one process (bench/corpusdecode, preflight inspect), peer.
# Loopback only.
#
# Environment: BENCH_ONLY=soak, corpus or rpc (run only (d), (f) or (a); with rpc, BENCH_DAEMON_ARGS adds
# preflightd flags, e.g. "--no-result-cache --revalidate-interval=-1s"), CORPUS_ROUNDS (rounds of (f), 3),
# SOAK_N (soak requests, default 10000; 0 skips),
# PREFLIGHT_CORPUS (the corpus folder of (f), default ../shared/corpus), PEER_SRC (a checkout or bare
# git dir of github.com/justtrackio/flink-admin: (f) measures its parser too; PEER_REV, default HEAD),
# BENCH_N (requests per run of each load generator, default 20000), BENCH_C (concurrency, 50),
# BENCH_ROUNDS (alternating echo/check rounds, 2), BENCH_GEN (the load generators of (a): both, ghz or
# native; default both), BENCH_GEN_CONNS (the native generator's connections, 1), BENCH_GEN_CODEC (raw or
# pb: the native generator sends pre-encoded requests and compares answers byte for byte, or decodes
# every answer with the generated client), BIG_BYTES (default 168 MiB),
# VERSITYGW (default bin/versitygw; built with `make tools`; absent: S3 cases skipped),
# BENCH_README (1, the default: each part's results and the machine it ran on replace that part's
# section at the end of bench/README.md, between its markers, written atomically; 0: leave the
# README alone).
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-$(mktemp -d "${TMPDIR:-/tmp}/preflight-bench.XXXXXX")}
BIG_BYTES=${BIG_BYTES:-$((168 << 20))}
VERSITYGW=${VERSITYGW:-$PWD/bin/versitygw}
mkdir -p "$WORK/bin"
echo "work folder: $WORK" >&2

step() { echo "$(date -u +%T) $*" >&2; }

# machine_info prints, as Markdown, when and where a part ran: the revision measured, the CPU,
# cores, memory, kernel, Go and the load average.
machine_info() {
	local rev cpu mem
	rev=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
	if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then rev="$rev (with local changes)"; fi
	cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
	mem=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo 2>/dev/null || true)
	printf '%s UTC, revision %s; %s, %s cores, %s, Linux %s, %s; load average %s.\n' \
		"$(date -u '+%Y-%m-%d %H:%M')" "$rev" "${cpu:-unknown CPU}" "$(nproc)" "${mem:-unknown memory}" \
		"$(uname -r)" "$(go env GOVERSION)" "$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
}

# record PART TITLE FILE: unless BENCH_README=0, FILE (a part's results) with the machine it ran
# on replaces the section of PART at the end of bench/README.md (between its two marker
# comments; appended the first time). The README is rewritten through a temporary file in the
# same folder and renamed, so an interrupted run leaves it whole.
record() {
	local part=$1 title=$2 file=$3 readme=bench/README.md tmp
	[ "${BENCH_README:-1}" = 0 ] && return 0
	[ -s "$file" ] || return 0
	tmp=$(mktemp bench/.README.md.XXXXXX)
	{
		printf '<!-- bench/run.sh: %s -->\n## Last run of bench/run.sh: %s\n\n' "$part" "$title"
		machine_info
		echo
		cat "$file"
		printf '\n<!-- /bench/run.sh: %s -->\n' "$part"
	} >"$tmp.part"
	awk -v part="$part" -v partfile="$tmp.part" '
		function emit() { while ((getline line < partfile) > 0) print line; close(partfile); done = 1 }
		$0 == "<!-- bench/run.sh: " part " -->" { skip = 1; emit(); next }
		skip && $0 == "<!-- /bench/run.sh: " part " -->" { skip = 0; next }
		!skip { print }
		END { if (!done) { print ""; emit() } }' "$readme" >"$tmp" || { rm -f "$tmp" "$tmp.part"; return 1; }
	rm -f "$tmp.part"
	chmod --reference="$readme" "$tmp"
	mv "$tmp" "$readme"
	step "recorded in $readme: $title"
}

# (f) Corpus decode (issue #16): every _metadata of the shared corpus decoded in one process per
# mode (bench/corpusdecode: file by file, one reused Decoder, ReadLayoutFiles; and "read", the
# files read and not decoded, the ceiling of any decoder's ratio to the peer), then the real CLI
# `preflight inspect` over all of them under GNU time. With PEER_SRC (a checkout or a bare git dir
# of github.com/justtrackio/flink-admin) the peer's parser is measured with the same harness on the
# same files: build_peer copies its backend/internal/checkpoint/*.go (no tests) into a temporary
# module outside this repository, next to bench/corpusdecode/main.go (stdlib only) and a generated
# passFunc calling the peer's ParseFile, so no peer code is ever in this repository.
build_peer() {
	local dir=$1 rev=${PEER_REV:-HEAD} f
	mkdir -p "$dir/peer"
	if [ -d "$PEER_SRC/backend/internal/checkpoint" ]; then
		for f in "$PEER_SRC"/backend/internal/checkpoint/*.go; do
			case $f in *_test.go) ;; *) cp "$f" "$dir/peer/" ;; esac
		done
		rev=$(git -C "$PEER_SRC" rev-parse --short HEAD 2>/dev/null || echo "working tree")
	else
		git -C "$PEER_SRC" ls-tree --name-only "$rev" backend/internal/checkpoint/ | grep '\.go$' | grep -v '_test\.go$' |
			while read -r f; do git -C "$PEER_SRC" show "$rev:$f" >"$dir/peer/$(basename "$f")"; done
		rev=$(git -C "$PEER_SRC" rev-parse --short "$rev")
	fi
	ls "$dir"/peer/*.go >/dev/null
	cp bench/corpusdecode/main.go "$dir/"
	cat >"$dir/peer_pass.go" <<'GO'
package main

import (
	"fmt"

	checkpoint "peerbench/peer"
)

// modes names the peer's modes: ParseFile with ParseFull true and false.
const modes = "peer-full or peer-summary"

func passFunc(mode string, paths []string, _ int) (pass, error) {
	if mode != "peer-full" && mode != "peer-summary" {
		return nil, fmt.Errorf("unknown mode %q: want %s", mode, modes)
	}
	opts := checkpoint.ParseOptions{ParseFull: mode == "peer-full"}
	return func(fail func(int)) error {
		for i, p := range paths {
			if _, err := checkpoint.ParseFile(p, opts); err != nil {
				fail(i)
			}
		}
		return nil
	}, nil
}
GO
	(cd "$dir" && GOWORK=off GOFLAGS=-mod=mod go mod init peerbench >/dev/null 2>&1 &&
		GOWORK=off GOFLAGS=-mod=mod go build -o "$WORK/bin/peerdecode" .)
	echo "$rev"
}

# corpus_ratios prints our rows against the peer's from two -stats files (all files, files both
# decode), each mode's best wall time and least CPU time over the rounds.
corpus_ratios() {
	awk -F'\t' '
		{
			key = FILENAME ":" $1; files[key] = $2; bad[key] = $3; mb[key] = $4 / 1e6
			if (!(key in wall) || $5 < wall[key]) wall[key] = $5
			if (!(key in cpu) || $6 < cpu[key]) cpu[key] = $6
		}
		END {
			print "| files | ours | peer | ours: MB/s wall, MB/cpu-s | peer: MB/s wall, MB/cpu-s | ratio wall | ratio per CPU-s |"
			print "|---|---|---|---|---|---|---|"
			n = split("all common", sets, " ")
			for (s = 1; s <= n; s++) {
				f = ENVIRON["WORK"] "/corpus-" sets[s] ".stats"
				split("decoder batch read", ours, " "); split("peer-full peer-summary", peers, " ")
				for (o = 1; o <= 3; o++) for (p = 1; p <= 2; p++) {
					a = f ":" ours[o]; b = f ":" peers[p]
					if (!(a in wall) || !(b in wall)) continue
					printf "| %s: %d (ours %d, peer %d failed) | %s | %s | %.0f, %.0f | %.0f, %.0f | **%.2f×** | **%.2f×** |\n",
						sets[s] == "all" ? "all" : "both decode", files[a], bad[a], bad[b],
						ours[o] == "read" ? "read (no decoding: the ceiling)" : ours[o], peers[p],
						mb[a] / wall[a], mb[a] / cpu[a], mb[b] / wall[b], mb[b] / cpu[b], wall[b] / wall[a], cpu[b] / cpu[a]
				}
			}
		}' "$WORK/corpus-all.stats" "$WORK/corpus-common.stats"
}

corpus_ours_common() {
	local mode
	for mode in decoder batch read; do
		timeout 5m "$WORK/bin/corpusdecode" -mode "$mode" -passes 5 -stats "$WORK/corpus-common.stats" <"$WORK/corpus-common.list"
	done
}

corpus_peer_common() {
	local mode
	for mode in peer-full peer-summary; do
		timeout 5m "$WORK/bin/peerdecode" -mode "$mode" -passes 5 -stats "$WORK/corpus-common.stats" <"$WORK/corpus-common.list"
	done
}

# corpus_round_ratios prints, from a -stats file of alternating rounds, the peer's wall over our
# batch wall in each round (the k-th batch row against the k-th row of each peer mode): median,
# lowest and highest.
corpus_round_ratios() {
	awk -F'\t' '
		{ n[$1]++; wall[$1, n[$1]] = $5 }
		function median(a, k,   i, j, t) {
			for (i = 2; i <= k; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
			return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
		}
		END {
			print "| ours | peer | rounds | median ratio | lowest | highest |"
			print "|---|---|---|---|---|---|"
			split("peer-full peer-summary", peers, " ")
			for (p = 1; p <= 2; p++) {
				k = 0
				for (r = 1; r <= n["batch"] && r <= n[peers[p]]; r++) ratio[++k] = wall[peers[p], r] / wall["batch", r]
				if (k == 0) continue
				m = median(ratio, k)
				printf "| batch | %s | %d | **%.2f×** | %.2f× | %.2f× |\n", peers[p], k, m, ratio[1], ratio[k]
			}
		}' "$1"
}

corpus_decode() {
	CORPUS=${PREFLIGHT_CORPUS:-../shared/corpus}
	if [ -s "$CORPUS/MANIFEST.tsv" ]; then
		step "corpus decode: $CORPUS"
		go build -o "$WORK/bin/corpusdecode" ./bench/corpusdecode
		awk -F'\t' 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } $col["kind"] == "metadata" { print $col["local_path"] }' \
			"$CORPUS/MANIFEST.tsv" | sed "s|^|$CORPUS/|" >"$WORK/corpus.list"
		local peer_rev="" peer_dir
		rm -f "$WORK"/corpus-*.stats "$WORK"/corpus-*.failed
		if [ -n "${PEER_SRC:-}" ]; then
			peer_dir=$(mktemp -d "${TMPDIR:-/tmp}/preflight-peer.XXXXXX")
			step "peer: building justtrackio/flink-admin's checkpoint parser from $PEER_SRC in $peer_dir"
			peer_rev=$(build_peer "$peer_dir")
			rm -rf "$peer_dir" # the binary is in $WORK/bin; no peer source stays behind
		fi
		{
			printf '| mode | files | MB | best wall of 5 | MB/s | files/s | CPU per pass | MB/cpu-s | peak RSS |\n|---|---|---|---|---|---|---|---|---|\n'
			# Rounds alternate the decoders, so that both see the same load (CORPUS_ROUNDS, default 3).
			for round in $(seq "${CORPUS_ROUNDS:-3}"); do
				for mode in perfile decoder batch read; do
					timeout 5m "$WORK/bin/corpusdecode" -manifest "$CORPUS/MANIFEST.tsv" -mode "$mode" -passes 5 \
						-failed "$WORK/corpus-$mode.failed" -stats "$WORK/corpus-all.stats"
				done
				if [ -n "$peer_rev" ]; then
					for mode in peer-full peer-summary; do
						timeout 5m "$WORK/bin/peerdecode" -manifest "$CORPUS/MANIFEST.tsv" -mode "$mode" -passes 5 \
							-failed "$WORK/corpus-$mode.failed" -stats "$WORK/corpus-all.stats"
					done
				fi
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
			if [ -z "$peer_rev" ]; then
				printf '\npeer: not measured (set PEER_SRC to a checkout or bare git dir of github.com/justtrackio/flink-admin).\n'
			else
				# Failing files cost the peer little (it stops early), so the ratio is also taken on
				# the files that every decoder decodes.
				cat "$WORK"/corpus-*.failed | sort -u >"$WORK/corpus-any.failed"
				grep -vxFf "$WORK/corpus-any.failed" "$WORK/corpus.list" >"$WORK/corpus-common.list" || true
				printf '\nThe %s files that both decode (%s fail in one of them):\n\n' \
					"$(wc -l <"$WORK/corpus-common.list")" "$(grep -c . "$WORK/corpus-any.failed" || true)"
				printf '| mode | files | MB | best wall of 5 | MB/s | files/s | CPU per pass | MB/cpu-s | peak RSS |\n|---|---|---|---|---|---|---|---|---|\n'
				# Ours and the peer's in turn, the order swapped every round, so that a round's
				# ratio compares runs a few seconds apart (the host's speed drifts within a minute).
				for round in $(seq "${CORPUS_ROUNDS:-3}"); do
					if [ $((round % 2)) = 1 ]; then corpus_ours_common; corpus_peer_common; else corpus_peer_common; corpus_ours_common; fi
				done
				printf '\nRatios, ours over the peer (justtrackio/flink-admin %s, ParseFile with ParseFull true and false), each mode at its best wall and least CPU of %s rounds:\n\n' "$peer_rev" "${CORPUS_ROUNDS:-3}"
				WORK=$WORK corpus_ratios
				printf '\nThe same, round by round (each round: best wall of 5 passes each, run back to back): the median ratio over the rounds, and the lowest and highest:\n\n'
				corpus_round_ratios "$WORK/corpus-common.stats"
			fi
		} | tee "$WORK/corpus.md"
		step "corpus results: $WORK/corpus.md"
		record corpus "(f) the shared corpus in one process, against the peer" "$WORK/corpus.md"
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
	record soak "(d) the soak" "$WORK/results.md"
	exit 0
fi

step "building ghz (tools/ghz/go.mod, ghz v0.121.0)"
go build -modfile=tools/ghz/go.mod -o "$WORK/bin/ghz" github.com/bojand/ghz/cmd/ghz
if [ "${BENCH_ONLY:-}" = rpc ]; then
	step "rpc only: generating the example checkpoints"
	[ -s "$WORK/examples/compact-sink/_metadata" ] || "$WORK/bin/genexamples" -out "$WORK/examples"
	timeout 30m "$WORK/bin/loadtest" -work "$WORK" -bin "$WORK/bin" -rpc-only -rpc-daemon-args "${BENCH_DAEMON_ARGS:-}" \
		-n "${BENCH_N:-20000}" -c "${BENCH_C:-50}" -rounds "${BENCH_ROUNDS:-2}" \
		-gen "${BENCH_GEN:-both}" -gen-conns "${BENCH_GEN_CONNS:-1}" -gen-codec "${BENCH_GEN_CODEC:-raw}"
	step "results: $WORK/results.md (ghz JSON: $WORK/ghz-*.json)"
	record rpc "(a) CheckRescale against the Health/Check echo on the same daemon" "$WORK/results.md"
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
	-n "${BENCH_N:-20000}" -c "${BENCH_C:-50}" -rounds "${BENCH_ROUNDS:-2}" -soak-n "${SOAK_N:-10000}" \
	-gen "${BENCH_GEN:-both}" -gen-conns "${BENCH_GEN_CONNS:-1}" -gen-codec "${BENCH_GEN_CODEC:-raw}"
step "results: $WORK/results.md (ghz JSON: $WORK/ghz-*.json)"
record all "(a)–(d): RPC against the echo, cold checks, decode, soak" "$WORK/results.md"

step "scale: the CLI's peak RSS on generated operator- and union-heavy files (bench/scale.sh)"
PREFLIGHT="$WORK/bin/preflight" timeout 30m bench/scale.sh "$WORK/scale" | tee "$WORK/scale.md"
step "scale results: $WORK/scale.md"
record scale "(e) the CLI's memory on generated scale files" "$WORK/scale.md"

corpus_decode
