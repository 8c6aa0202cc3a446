#!/usr/bin/env bash
# bench/scale.sh [WORKDIR] — peak RSS and time of the real CLI (`preflight check`, in-process, text
# output unless a case asks for JSON) on generated scale checkpoints, against the memory model's bound 64 MiB + 4 × file size
# (see bench/README.md, "Scale"). Needs GNU time (/usr/bin/time; Debian package `time`).
#
# Environment: SCALE_LARGE=1 adds the 1,000,000-operator file (about 70 MB, minutes to generate
# on a loaded machine); PREFLIGHT (a built CLI to measure instead of building one).
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-$(mktemp -d "${TMPDIR:-/tmp}/preflight-scale.XXXXXX")}
mkdir -p "$WORK/bin"
if [ ! -x /usr/bin/time ]; then
	echo "bench/scale.sh needs GNU time: apt-get install time" >&2
	exit 2
fi
echo "work folder: $WORK" >&2
go build -o "$WORK/bin/genexamples" ./internal/scenarios/cmd/genexamples
PREFLIGHT=${PREFLIGHT:-$WORK/bin/preflight}
[ -x "$PREFLIGHT" ] || go build -o "$PREFLIGHT" ./client/preflight

# name | generator spec | check arguments
cases=(
	"operators-100k|operators=100000,split=1|-p 1"
	"operators-100k-findings-p2|operators=100000,split=1|-p 2"
	"union-4096-to-4096|parallelism=4096,maxparallelism=32768,split=1,union=1|-p 4096"
	"union-4096-to-8192|parallelism=4096,maxparallelism=32768,split=1,union=1|-p 8192"
	"union-16384-to-32768-deny|parallelism=16384,maxparallelism=32768,split=1,union=1|-p 32768 --frame-size 1MiB"
	"names-30k-json|split=30000,elements=2|-p 4 -o json"
	"names-300k-json|split=300000,elements=2|-p 4 -o json"
	"names-300k-p2-deny|split=300000,elements=2|-p 2"
	"union-names-300k|parallelism=2,union=300000,elements=2|-p 4"
)
if [ -n "${SCALE_LARGE:-}" ]; then
	cases+=("operators-1M-stateless|operators=1000000|-p 1")
fi

printf '| case | file | bound (64 MiB + 4 × file) | peak RSS | wall | CPU (user + sys) | exit |\n|---|---|---|---|---|---|---|\n'
for c in "${cases[@]}"; do
	IFS='|' read -r name spec args <<<"$c"
	file="$WORK/${spec//[=,]/_}/_metadata"
	[ -s "$file" ] || "$WORK/bin/genexamples" -out "$WORK/examples" -synthetic "$spec" -synthetic-out "$file" -force 2>/dev/null
	size=$(stat -c %s "$file")
	set +e
	# shellcheck disable=SC2086 # args are words
	/usr/bin/time -f '%M %e %U %S' -o "$WORK/$name.time" timeout 10m "$PREFLIGHT" check "$file" $args >"$WORK/$name.out" 2>"$WORK/$name.err"
	rc=$?
	set -e
	read -r rss wall user sys < <(tail -n 1 "$WORK/$name.time") || true # GNU time first notes a non-zero exit
	awk -v n="$name" -v s="$size" -v r="${rss:-0}" -v w="${wall:-0}" -v u="${user:-0}" -v y="${sys:-0}" -v rc="$rc" 'BEGIN {
		b = 64 + 4 * s / 1048576
		printf "| %s | %.1f MiB | %.0f MiB | %.0f MiB%s | %.2f s | %.2f s | %d |\n", n, s / 1048576, b, r / 1024, (r / 1024 <= b ? "" : " (over)"), w, u + y, rc }'
done
