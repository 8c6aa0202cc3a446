#!/bin/sh
# Rebuilds job.jar from src/ against the Flink API stubs of the restore-analysis fixtures
# (internal/restorecode/testdata/java/stubs). job.jar holds only the job's own classes, as a job
# jar built with Flink as a provided dependency does; its entries carry a fixed timestamp, so the
# rebuild is byte-for-byte identical (with the same JDK's javac).
#
#   testdata/custom-operator/build.sh [OUT.jar]     (default: testdata/custom-operator/job.jar)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
stubs="$here/../../internal/restorecode/testdata/java/stubs"
out=${1:-"$here/job.jar"}
case "$out" in /*) ;; *) out="$(pwd)/$out" ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$stubs" && find . -name '*.java' | LC_ALL=C sort) >"$tmp/stubs.txt"
mkdir "$tmp/stubs" "$tmp/classes"
(cd "$stubs" && javac --release 11 -encoding UTF-8 -nowarn -d "$tmp/stubs" @"$tmp/stubs.txt")
(cd "$here/src" && javac --release 11 -g -encoding UTF-8 -cp "$tmp/stubs" -d "$tmp/classes" com/example/pipeline/PendingCommitOperator.java)
rm -f "$out"
(cd "$tmp/classes" && jar --create --date=2024-01-01T00:00:00Z --no-manifest --file "$out" com)
