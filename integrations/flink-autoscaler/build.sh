#!/usr/bin/env bash
# Builds and tests the FLIP-575 adapter with the JDK alone (no Maven, no downloads).
#
#   ./build.sh jar    compile the SPI mirror and the adapter, build build/flink-preflight-scaling-executor.jar
#   ./build.sh unit   jar + unit tests against a JDK HttpServer standing in for preflightd
#   ./build.sh e2e    jar + the end-to-end test against a real preflightd (built with go unless PREFLIGHTD is set)
#   ./build.sh test   unit + e2e (what `make java-adapter-test` runs)
#
# Without a JDK it says so and exits 0, so `make test` passes on machines without Java; CI installs
# default-jdk-headless (see .ci/run).
set -euo pipefail
cd "$(dirname "$0")"

what=${1:-test}
for tool in javac jar java javap; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "java-adapter-test: SKIPPED: no JDK ($tool not on PATH); install one (Debian: apt-get install default-jdk-headless) to build and test integrations/flink-autoscaler"
		exit 0
	fi
done

out=build
jarfile=$out/flink-preflight-scaling-executor.jar
# Java 11 bytecode: the operator image runs 17, older standalone autoscalers may run 11. Warnings are
# errors, except javac's notes on --release itself (a newer JDK may call 11 old).
javac_flags=(-encoding UTF-8 --release 11 -Xlint:all -Xlint:-options -Werror)

build_jar() {
	rm -rf "$out/stubs" "$out/classes" "$jarfile"
	mkdir -p "$out/stubs" "$out/classes"
	# The SPI mirror: compile-time (and test-time) only, never in the jar.
	javac "${javac_flags[@]}" -d "$out/stubs" $(find spi-stubs/src -name '*.java' | sort)
	common_sources "$out/common"
	javac "${javac_flags[@]}" -cp "$out/stubs" -d "$out/classes" $(find src/main/java "$out/common" -name '*.java' | sort)
	cp -r src/main/resources/. "$out/classes/"
	jar --create --file "$jarfile" -C "$out/classes" .
	echo "built $jarfile ($(wc -c <"$jarfile") bytes)"
	check_api
}

# ../common: the JSON codec, HTTP call, option parsing and logging shared with integrations/flink-validator,
# compiled into this jar's own package (the package line rewritten), so that the jar ships only
# com/github/flinkpreflight/autoscaler/ and two plugins in one class loader never share a class.
# $1: where the rewritten sources go.
common_sources() {
	rm -rf "$1"
	mkdir -p "$1"
	local f
	for f in ../common/src/com/github/flinkpreflight/common/*.java; do
		sed '1s/^package com\.github\.flinkpreflight\.common;$/package com.github.flinkpreflight.autoscaler;/' "$f" >"$1/${f##*/}"
	done
}

# The stubs could offer what the real classes do not: every Flink member the bytecode references
# must be one listed (and checked against the real API) in spi-stubs/used-api.txt.
check_api() {
	local classes
	classes=$(cd "$out/classes" && find . -name '*.class' | sed 's|^\./||; s|\.class$||; s|/|.|g' | sort)
	# shellcheck disable=SC2086
	if ! diff <(grep -v '^#' spi-stubs/used-api.txt) \
		<(javap -c -p -cp "$out/classes" $classes | grep -oE '(Method|InterfaceMethod|Field|class) org/apache/flink/[^ ]*' | sort -u); then
		echo "the adapter's references to Flink classes changed (< listed, > used): check them against the operator's and Flink's real API, then update spi-stubs/used-api.txt" >&2
		return 1
	fi
	echo "Flink API used by the adapter: $(grep -vc '^#' spi-stubs/used-api.txt) references, all listed in spi-stubs/used-api.txt"
}

build_tests() {
	rm -rf "$out/test-classes"
	mkdir -p "$out/test-classes"
	# ../testing: the fake Flink REST endpoint and the preflightd runner shared with integrations/flink-validator.
	javac "${javac_flags[@]}" -cp "$out/stubs:$jarfile" -d "$out/test-classes" $(find src/test/java ../testing/src -name '*.java' | sort)
}

run_unit() {
	java -cp "$out/stubs:$jarfile:$out/test-classes" com.github.flinkpreflight.autoscaler.AdapterTest "$jarfile"
}

run_e2e() {
	local daemon=${PREFLIGHTD:-}
	if [ -z "$daemon" ]; then
		daemon=$PWD/$out/preflightd
		echo "building preflightd into $daemon"
		(cd ../.. && "${GO:-go}" build -o "$daemon" ./server/preflightd)
	fi
	java -cp "$out/stubs:$jarfile:$out/test-classes" com.github.flinkpreflight.autoscaler.EndToEndTest "$daemon" "$(cd ../.. && pwd)"
}

case $what in
jar) build_jar ;;
unit) build_jar && build_tests && run_unit ;;
e2e) build_jar && build_tests && run_e2e ;;
test) build_jar && build_tests && run_unit && run_e2e ;;
*)
	echo "usage: $0 [jar|unit|e2e|test]" >&2
	exit 2
	;;
esac
