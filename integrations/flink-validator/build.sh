#!/usr/bin/env bash
# Builds and tests the FlinkResourceValidator plugin with the JDK alone (no Maven, no downloads).
#
#   ./build.sh jar    compile the stubs and the plugin, build build/flink-preflight-validator.jar
#   ./build.sh unit   jar + unit tests against a JDK HttpServer standing in for preflightd
#   ./build.sh e2e    jar + the end-to-end test against a real preflightd (built with go unless PREFLIGHTD is set)
#   ./build.sh test   unit + e2e (what `make java-validator-test` runs)
#
# Without a JDK it says so and exits 0. The steps are ../common/build-lib.sh's.
set -euo pipefail
cd "$(dirname "$0")"

what=${1:-test}
target=java-validator-test
pkg=validator
jarfile=build/flink-preflight-validator.jar
api='((Method|InterfaceMethod|Field|class) (org/apache/flink|io/fabric8|com/fasterxml)/[^ ]*|String (com\.fasterxml|io\.fabric8)\.[A-Za-z.]*|String writeValueAsString)'
api_what=operator/Flink/Jackson
# shellcheck source=../common/build-lib.sh
. ../common/build-lib.sh
require_jdk

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

run_unit() {
	run_test ValidatorTest "$jarfile" "$(cd ../.. && pwd)"
}

dispatch "$what"
