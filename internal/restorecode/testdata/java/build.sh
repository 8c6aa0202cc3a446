#!/bin/sh
# Compiles the restore-analysis fixtures and the Flink API stubs they are written against.
#
#   build.sh OUTDIR
#
# OUTDIR/classes/      every class (stubs and fixtures), for tools that want a directory
# OUTDIR/fixtures.jar  the fixture classes only (package fixtures): what a job jar would hold
# OUTDIR/stubs.jar     the stubs (Flink API, shaded Guava, org.example.external): code outside the job
#
# javac --release 11 with full debug info (-g, as Maven builds Flink jobs); jars carry a fixed
# timestamp so that rebuilding gives the same bytes.
set -eu
if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
rm -rf "$out/classes" "$out/fixtures.jar" "$out/stubs.jar"
mkdir -p "$out/classes"
list="$out/sources.txt"
(cd "$here" && find stubs fixtures -name '*.java' | LC_ALL=C sort) >"$list"
(cd "$here" && javac --release 11 -g -encoding UTF-8 -nowarn -d "$out/classes" @"$list")
rm -f "$list"
date=2024-01-01T00:00:00Z
(cd "$out/classes" && jar --create --date="$date" --no-manifest --file "$out/fixtures.jar" fixtures)
(cd "$out/classes" && jar --create --date="$date" --no-manifest --file "$out/stubs.jar" org)
