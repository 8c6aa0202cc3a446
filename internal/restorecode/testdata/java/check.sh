#!/bin/sh
# Checks expected.tsv against the compiled fixtures: every class exists, and for every row with a
# line, the named method's LineNumberTable has an entry for that line (build.sh OUTDIR first).
#
#   check.sh OUTDIR
set -eu
if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
fail=0
tail -n +2 "$here/expected.tsv" | while IFS='	' read -r cls state mode assumption method line; do
	if ! javap -p -c -l -cp "$1/classes" "$cls" >"$1/javap.txt" 2>/dev/null; then
		echo "FAIL $cls: class not found" >&2
		exit 1
	fi
	[ "$line" = "-" ] && continue
	# The method's block starts at its declaration line and ends at the next blank line.
	if ! awk -v m="$method" -v l="$line" '
		/^  [^ ].*\(.*\).*;$/ { s = $0; sub(/\(.*/, "", s); n = split(s, w, " "); in_m = (w[n] == m); next }
		/^$/ { in_m = 0 }
		in_m && $1 == "line" && $2 == l ":" { found = 1 }
		END { exit found ? 0 : 1 }' "$1/javap.txt"; then
		echo "FAIL $cls $state: no line $line in $method" >&2
		exit 1
	fi
done || fail=1
rm -f "$1/javap.txt"
[ $fail -eq 0 ] && echo "expected.tsv: all classes present, all lines in their methods' LineNumberTables"
exit $fail
