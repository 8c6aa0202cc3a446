#!/usr/bin/env bash
# bench/analyze.sh [WORKDIR] — issue #26's performance target for the restore-code analysis:
# a generated ~100 MB jar of 30,000 classes (2,000 stateful operators), analysed whole by a test
# binary in a child process that does nothing else, under /usr/bin/time -v (wall time, CPU time,
# peak RSS). Target: ≤ 3 s and ≤ 128 MiB. ROUNDS (default 3) runs; the jar is written once.
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${1:-$(mktemp -d "${TMPDIR:-/tmp}/preflight-analyze.XXXXXX")}
ROUNDS=${ROUNDS:-3}
mkdir -p "$WORK"
go test -c -o "$WORK/restorecode.test" ./internal/restorecode
if [ ! -s "$WORK/gen.jar" ]; then
	(cd internal/restorecode && RESTORECODE_GEN_JAR="$WORK/gen.jar" "$WORK/restorecode.test" -test.run '^TestWriteGeneratedJar$' >/dev/null)
fi
echo "jar: $(stat -c %s "$WORK/gen.jar") bytes, $(unzip -l "$WORK/gen.jar" | tail -1 | awk '{print $2}') entries; load average $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$ROUNDS"); do
	RESTORECODE_BENCH_JAR="$WORK/gen.jar" /usr/bin/time -v "$WORK/restorecode.test" -test.run '^$' \
		-test.bench '^BenchmarkAnalyzeJarFile$' -test.benchtime 1x 2>"$WORK/time.txt" | grep '^Benchmark' || true
	grep -E 'Elapsed|User time|System time|Maximum resident' "$WORK/time.txt" | sed 's/^\s*/  /'
done
