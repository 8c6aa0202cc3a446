#!/usr/bin/env bash
# Builds and tests the FlinkResourceValidator plugin with the JDK alone (no Maven, no downloads).
#
#   ./build.sh jar    compile the stubs and the plugin, build build/flink-preflight-validator.jar
#   ./build.sh unit   jar + unit tests against a JDK HttpServer standing in for preflightd
#   ./build.sh e2e    jar + the end-to-end test against a real preflightd (built with go unless PREFLIGHTD is set)
#   ./build.sh test   unit + e2e (what `make java-validator-test` runs)
#
# Without a JDK it says so and exits 0, so `make test` passes on machines without Java; CI installs
# default-jdk-headless (see .ci/run).
set -euo pipefail
cd "$(dirname "$0")"

what=${1:-test}
for tool in javac jar java javap; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		echo "java-validator-test: SKIPPED: no JDK ($tool not on PATH); install one (Debian: apt-get install default-jdk-headless) to build and test integrations/flink-validator"
		exit 0
	fi
done

out=build
jarfile=$out/flink-preflight-validator.jar
# Java 11 bytecode: operators 1.10 - 1.15 and main run on 11 or 17. Warnings are errors, except
# javac's notes on --release itself.
javac_flags=(-encoding UTF-8 --release 11 -Xlint:all -Xlint:-options -Werror)

build_jar() {
	rm -rf "$out/stubs" "$out/classes" "$jarfile"
	mkdir -p "$out/stubs" "$out/classes"
	# The operator and Flink mirror: compile-time (and test-time) only, never in the jar.
	javac "${javac_flags[@]}" -d "$out/stubs" $(find spi-stubs/src -name '*.java' | sort)
	common_sources "$out/common"
	javac "${javac_flags[@]}" -cp "$out/stubs" -d "$out/classes" $(find src/main/java "$out/common" -name '*.java' | sort)
	cp -r src/main/resources/. "$out/classes/"
	jar --create --file "$jarfile" -C "$out/classes" .
	echo "built $jarfile ($(wc -c <"$jarfile") bytes)"
	check_api
}

# ../common: the JSON codec, HTTP call, option parsing and logging shared with integrations/flink-autoscaler,
# compiled into this jar's own package (the package line rewritten), so that the jar ships only
# com/github/flinkpreflight/validator/ and two plugins in one class loader never share a class.
# $1: where the rewritten sources go.
common_sources() {
	rm -rf "$1"
	mkdir -p "$1"
	local f
	for f in ../common/src/com/github/flinkpreflight/common/*.java; do
		sed '1s/^package com\.github\.flinkpreflight\.common;$/package com.github.flinkpreflight.validator;/' "$f" >"$1/${f##*/}"
	done
}

# The stubs could offer what the real classes do not: every operator, Flink, fabric8 or Jackson
# member the bytecode references (or names for reflection) must be one listed in
# spi-stubs/used-api.txt, each checked against the real API (spi-stubs/real-api.txt).
check_api() {
	local classes
	classes=$(cd "$out/classes" && find . -name '*.class' | sed 's|^\./||; s|\.class$||; s|/|.|g' | sort)
	# shellcheck disable=SC2086
	if ! diff <(grep -v '^#' spi-stubs/used-api.txt) \
		<(javap -c -p -cp "$out/classes" $classes |
			grep -oE '((Method|InterfaceMethod|Field|class) (org/apache/flink|io/fabric8|com/fasterxml)/[^ ]*|String (com\.fasterxml|io\.fabric8)\.[A-Za-z.]*|String writeValueAsString)' | sort -u); then
		echo "the plugin's references to operator/Flink/Jackson classes changed (< listed, > used): check them against the real API (spi-stubs/real-api.txt), then update spi-stubs/used-api.txt" >&2
		return 1
	fi
	echo "operator/Flink API used by the plugin: $(grep -vc '^#' spi-stubs/used-api.txt) references, all listed in spi-stubs/used-api.txt"
}

# Each stub against the real signatures recorded in spi-stubs/real-api.txt (format: its header).
# $1: class path holding the compiled stubs (and the test-only stand-ins).
check_stubs() {
	local cp=$1 failed=0 mode cls block stub checked=0
	while read -r mode cls; do
		block=$(awk -v m="$mode" -v c="$cls" '$1 == m && $2 == c { on = 1; next } on { print } on && /^}/ { exit }' spi-stubs/real-api.txt)
		if ! stub=$(javap -public -cp "$cp" "$cls" 2>&1 | grep -v '^Compiled from'); then
			echo "stub check: $cls: no stub compiled ($stub)" >&2
			failed=1
			continue
		fi
		case $mode in
		exact)
			if ! diff <(echo "$block") <(echo "$stub") >&2; then
				echo "stub check: $cls differs from the real signatures in spi-stubs/real-api.txt (< real, > stub)" >&2
				failed=1
			fi
			;;
		members)
			# The same kind and name (a generic's type parameters aside), each member a real one.
			if [ "$(head -1 <<<"$block" | awk '{ sub(/<.*/, "", $3); print $1, $2, $3 }')" != \
				"$(head -1 <<<"$stub" | awk '{ sub(/<.*/, "", $3); print $1, $2, $3 }')" ]; then
				echo "stub check: $cls: stub header '$(head -1 <<<"$stub")' is not the real '$(head -1 <<<"$block")'" >&2
				failed=1
			fi
			while IFS= read -r line; do
				if ! grep -qxF -- "$line" <<<"$block"; then
					echo "stub check: $cls: '$line' is not a real member (spi-stubs/real-api.txt)" >&2
					failed=1
				fi
			done < <(sed '1d;$d' <<<"$stub")
			;;
		esac
		checked=$((checked + 1))
	done < <(grep -E '^(exact|members) ' spi-stubs/real-api.txt)
	# Every stub has a record.
	local stubs
	stubs=$(cd spi-stubs/src && find . -name '*.java' | sed 's|^\./||; s|\.java$||; s|/|.|g' | sort)
	for cls in $stubs; do
		if ! grep -qE "^(exact|members) $cls\$" spi-stubs/real-api.txt; then
			echo "stub check: $cls has no real signatures recorded in spi-stubs/real-api.txt" >&2
			failed=1
		fi
	done
	if [ "$failed" != 0 ]; then
		return 1
	fi
	echo "stubs: $checked classes match the real signatures recorded in spi-stubs/real-api.txt"
}

build_tests() {
	rm -rf "$out/test-classes"
	mkdir -p "$out/test-classes"
	# ../testing: the fake Flink REST endpoint and the preflightd runner shared with integrations/flink-autoscaler.
	javac "${javac_flags[@]}" -cp "$out/stubs:$jarfile" -d "$out/test-classes" $(find src/test/java ../testing/src -name '*.java' | sort)
	check_stubs "$out/stubs:$out/test-classes"
}

run_unit() {
	java -cp "$out/stubs:$jarfile:$out/test-classes" com.github.flinkpreflight.validator.ValidatorTest "$jarfile" "$(cd ../.. && pwd)"
}

run_e2e() {
	local daemon=${PREFLIGHTD:-}
	if [ -z "$daemon" ]; then
		daemon=$PWD/$out/preflightd
		echo "building preflightd into $daemon"
		(cd ../.. && "${GO:-go}" build -o "$daemon" ./server/preflightd)
	fi
	java -cp "$out/stubs:$jarfile:$out/test-classes" com.github.flinkpreflight.validator.EndToEndTest "$daemon" "$(cd ../.. && pwd)"
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
