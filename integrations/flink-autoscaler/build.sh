#!/usr/bin/env bash
# Builds and tests the FLIP-575 adapter with the JDK alone (no Maven, no downloads).
#
#   ./build.sh jar    compile the SPI mirror and the adapter, build build/flink-preflight-scaling-executor.jar
#   ./build.sh unit   jar + unit tests against a JDK HttpServer standing in for preflightd
#   ./build.sh e2e    jar + the end-to-end test against a real preflightd (built with go unless PREFLIGHTD is set)
#   ./build.sh test   unit + e2e (what `make java-adapter-test` runs)
#
# Without a JDK it says so and exits 0. The steps are ../common/build-lib.sh's.
set -euo pipefail
cd "$(dirname "$0")"

what=${1:-test}
target=java-adapter-test
pkg=autoscaler
jarfile=build/flink-preflight-scaling-executor.jar
api='(Method|InterfaceMethod|Field|class) org/apache/flink/[^ ]*'
api_what=Flink
# shellcheck source=../common/build-lib.sh
. ../common/build-lib.sh
require_jdk

run_unit() {
	run_test AdapterTest "$jarfile"
}

dispatch "$what"
