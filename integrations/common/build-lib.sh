# shellcheck shell=bash
# The build steps shared by flink-autoscaler/build.sh and flink-validator/build.sh, sourced by them
# in their own folder after they set:
#   target    the make target the SKIPPED line names (java-adapter-test)
#   pkg       the last part of the plugin's Java package (autoscaler)
#   jarfile   the jar to build, under $out
#   api       grep -E pattern of the bytecode references to foreign classes spi-stubs/used-api.txt lists
#   api_what  what those classes are, for the messages (Flink)
# and define run_unit; they may define check_stubs, run with the test class path after the tests
# compile. Then `dispatch "$what"` runs the step asked for.

out=build
# Java 11 bytecode: the operator image runs 17, older operators (1.10 - 1.15) and standalone
# autoscalers may run 11. Warnings are errors, except javac's notes on --release itself (a newer
# JDK may call 11 old).
javac_flags=(-encoding UTF-8 --release 11 -Xlint:all -Xlint:-options -Werror)

# Without a JDK: a SKIPPED line and exit 0, so `make test` passes on machines without Java; CI
# installs default-jdk-headless (see .ci/run).
require_jdk() {
	local tool
	for tool in javac jar java javap; do
		if ! command -v "$tool" >/dev/null 2>&1; then
			echo "$target: SKIPPED: no JDK ($tool not on PATH); install one (Debian: apt-get install default-jdk-headless) to build and test integrations/${PWD##*/}"
			exit 0
		fi
	done
}

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

# ../common: the JSON codec, HTTP call, option parsing and logging both plugins use, compiled into
# this jar's own package (the package line rewritten), so that each jar ships only its own package
# and two plugins in one class loader never share a class. $1: where the rewritten sources go.
common_sources() {
	rm -rf "$1"
	mkdir -p "$1"
	local f
	for f in ../common/src/com/github/flinkpreflight/common/*.java; do
		sed "1s/^package com\\.github\\.flinkpreflight\\.common;\$/package com.github.flinkpreflight.$pkg;/" "$f" >"$1/${f##*/}"
	done
}

# The stubs could offer what the real classes do not: every foreign member the bytecode references
# (or names for reflection) must be one listed (and checked against the real API) in
# spi-stubs/used-api.txt.
check_api() {
	local classes
	classes=$(cd "$out/classes" && find . -name '*.class' | sed 's|^\./||; s|\.class$||; s|/|.|g' | sort)
	# shellcheck disable=SC2086
	if ! diff <(grep -v '^#' spi-stubs/used-api.txt) \
		<(javap -c -p -cp "$out/classes" $classes | grep -oE "$api" | sort -u); then
		echo "the plugin's references to $api_what classes changed (< listed, > used): check them against the real API, then update spi-stubs/used-api.txt" >&2
		return 1
	fi
	echo "$api_what API used by the plugin: $(grep -vc '^#' spi-stubs/used-api.txt) references, all listed in spi-stubs/used-api.txt"
}

# The tests, with ../testing: the runner, assertions, fake preflightd and fake Flink REST endpoint
# and the preflightd runner both plugins' tests use.
build_tests() {
	rm -rf "$out/test-classes"
	mkdir -p "$out/test-classes"
	javac "${javac_flags[@]}" -cp "$out/stubs:$jarfile" -d "$out/test-classes" $(find src/test/java ../testing/src -name '*.java' | sort)
	if declare -F check_stubs >/dev/null; then
		check_stubs "$out/stubs:$out/test-classes"
	fi
}

# Runs the test class $1 (in the plugin's package) with the arguments that follow.
run_test() {
	local cls=$1
	shift
	java -cp "$out/stubs:$jarfile:$out/test-classes" "com.github.flinkpreflight.$pkg.$cls" "$@"
}

# The end-to-end test against a real preflightd: $PREFLIGHTD, else one built with go.
run_e2e() {
	local daemon=${PREFLIGHTD:-}
	if [ -z "$daemon" ]; then
		daemon=$PWD/$out/preflightd
		echo "building preflightd into $daemon"
		(cd ../.. && "${GO:-go}" build -o "$daemon" ./server/preflightd)
	fi
	run_test EndToEndTest "$daemon" "$(cd ../.. && pwd)"
}

# $1: jar, unit (jar + unit tests), e2e (jar + the end-to-end test) or test (all).
dispatch() {
	case $1 in
	jar) build_jar ;;
	unit) build_jar && build_tests && run_unit ;;
	e2e) build_jar && build_tests && run_e2e ;;
	test) build_jar && build_tests && run_unit && run_e2e ;;
	*)
		echo "usage: $0 [jar|unit|e2e|test]" >&2
		exit 2
		;;
	esac
}
