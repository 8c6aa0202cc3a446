#!/bin/bash
# Compiles the real operator classes of the restore catalog (classes.tsv) from their upstream
# sources with Debian's ecj, and reports which restore methods compiled without an "Unresolved
# compilation problem". Upstream sources and classes stay in OUTDIR (default: ./out, ignored by
# git); nothing is checked out into the repository.
#
#   build.sh [-o OUTDIR] [-u UNIT-REGEX] REPO=GITDIR...
#
# -u recompiles only the units (REPO@REVISION) matching the regex; the report covers all.
# REPO=GITDIR maps each repository named in classes.tsv to a local git directory holding its
# revision, e.g. (the mirrors the `fetch` tool brings; apache/flink itself is larger than fetch
# allows, 1996fanrui/flink mirrors its history including both revisions used here):
#
#   tools/upstream-classes/build.sh \
#     apache/flink=/work/.mirror/1996fanrui+flink/repo \
#     apache/flink-connector-kafka=/work/.mirror/apache+flink-connector-kafka/repo \
#     apache/flink-connector-aws=/work/.mirror/apache+flink-connector-aws/repo \
#     apache/paimon=/work/.mirror/apache+paimon/repo \
#     apache/iceberg=/work/.mirror/apache+iceberg/repo \
#     apache/flink-cdc=/work/.mirror/apache+flink-cdc/repo \
#     apache/flink-agents=/work/.mirror/apache+flink-agents/repo
#
# Needs: git, ecj (apt-get install ecj), javap; optional jars from Debian on the classpath
# (libslf4j-java libjsr305-java libcommons-lang3-java libcommons-io-java
# libcommons-collections3-java) so that logging and similar calls resolve, and stubs/ (ours) for
# the relocated Guava classes (Flink's, Paimon's, Iceberg's shaded copies) that restore methods
# call. Output:
#   OUTDIR/src/<repo>@<rev>/...       the src/main/java trees of each revision (git archive)
#   OUTDIR/classes/<repo>@<rev>/...   ecj's class files (the listed classes and what they pulled in)
#   OUTDIR/logs/<repo>@<rev>.log      ecj's messages
#   OUTDIR/status.tsv                 class, method, clean|UNRESOLVED, unit
# and prints a summary: per class, the restore methods and whether they are clean.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out="$here/out"
only=""
while [ $# -gt 0 ]; do
	case "$1" in
	-o) out=$2 && shift 2 ;;
	-u) only=$2 && shift 2 ;;
	*) break ;;
	esac
done
declare -A gitdir=()
for a in "$@"; do
	gitdir[${a%%=*}]=${a#*=}
done
mkdir -p "$out/src" "$out/classes" "$out/logs"
out=$(cd "$out" && pwd)

# Which src/main/java trees of a repository take part (regexes on the tree's path).
exclude_of() {
	case "$1" in
	apache/iceberg) echo '^(flink/v(1\.1|2\.)|spark/|kafka-connect/|hive|mr/|aws|gcp|azure|dell|aliyun|nessie|snowflake|open-api|bigquery|docs|examples)' ;;
	apache/paimon) echo '^(paimon-flink/paimon-flink-[0-9]|paimon-flink/paimon-flink2-common|paimon-spark|paimon-hive|paimon-e2e|paimon-lucene|paimon-vfs|paimon-python|tools|docs)' ;;
	*) echo '(^|/)(flink-end-to-end[^/]*|flink-examples[^/]*|flink-tests|flink-python|flink-docs|tools|docs|e2e[^/]*|[^/]*-e2e[^/]*)/' ;;
	esac
}

# Which other revisions a revision is compiled against (the Flink API its build depends on).
deps_of() {
	case "$1" in
	apache/flink@*) echo "" ;;
	apache/flink-connector-kafka@33d0022449601a69c20169268dcf6e1439830126 | apache/flink-connector-aws@* | apache/paimon@* | apache/iceberg@*)
		echo "apache/flink@67d23fc45be45c02341a9cbd7dddea18ba40bca2" ;;
	apache/flink-cdc@*) echo "apache/flink@67d23fc45be45c02341a9cbd7dddea18ba40bca2 apache/paimon@5dacde516bf6e29b583aff8b32bab321bfc6e64f" ;;
	*) echo "apache/flink@b48ccce1ce201ea76e11f089f43e8c115b96a992" ;;
	esac
}

key() { echo "${1//\//+}@${2:0:12}"; }

# export REPO REV: the revision's src/main/java trees into OUTDIR/src/<key>, once.
export_tree() {
	local repo=$1 rev=$2 dir
	dir="$out/src/$(key "$repo" "$rev")"
	[ -e "$dir/.done" ] && return 0
	local gd=${gitdir[$repo]:-}
	if [ -z "$gd" ]; then
		echo "build.sh: no git directory for $repo (pass $repo=GITDIR)" >&2
		exit 2
	fi
	rm -rf "$dir" && mkdir -p "$dir"
	git --git-dir="$gd" ls-tree -r -d --name-only "$rev" | grep -E '(^|/)src/main/java$' |
		grep -vE "$(exclude_of "$repo")" >"$dir.trees" || true
	git --git-dir="$gd" archive "$rev" $(cat "$dir.trees") | tar -x -C "$dir"
	touch "$dir/.done"
}

sourcepath_of() { # key... -> colon-separated src/main/java directories
	local k
	for k in "$@"; do
		sed "s|^|$out/src/$k/|" "$out/src/$k.trees"
	done
	echo "$out/stubs"
}

# stubs/ (ours) holds one copy of each relocated-Guava stub, in Flink's guava31 package; the
# other relocations get the same source under their package name.
rm -rf "$out/stubs" && cp -r "$here/stubs" "$out/stubs"
relocate() { # CLASS TARGET-PACKAGE
	local dir="$out/stubs/${2//.//}"
	mkdir -p "$dir"
	sed "s/org\.apache\.flink\.shaded\.guava31\.com\.google\.common\.collect/$2/g" \
		"$here/stubs/org/apache/flink/shaded/guava31/com/google/common/collect/$1.java" >"$dir/$1.java"
}
for g in guava32 guava33; do
	relocate Iterables "org.apache.flink.shaded.$g.com.google.common.collect"
	relocate Lists "org.apache.flink.shaded.$g.com.google.common.collect"
done
relocate Lists org.apache.iceberg.relocated.com.google.common.collect
relocate Iterables org.apache.iceberg.relocated.com.google.common.collect
relocate Sets org.apache.iceberg.relocated.com.google.common.collect
relocate Lists org.apache.paimon.shade.guava30.com.google.common.collect

cp=""
for j in slf4j-api jsr305 commons-lang3 commons-io commons-collections3; do
	[ -e "/usr/share/java/$j.jar" ] && cp="$cp:/usr/share/java/$j.jar"
done
cp=${cp#:}

units=$(tail -n +2 "$here/classes.tsv" | cut -f1,2 | sort -u | tr '\t' '@')
for u in $units; do
	export_tree "${u%@*}" "${u#*@}"
	for d in $(deps_of "$u"); do
		export_tree "${d%@*}" "${d#*@}"
	done
done

for u in $units; do
	repo=${u%@*} rev=${u#*@} k=$(key "${u%@*}" "${u#*@}")
	keys="$k"
	for d in $(deps_of "$u"); do
		keys="$keys $(key "${d%@*}" "${d#*@}")"
	done
	if [ -n "$only" ] && ! echo "$u" | grep -qE "$only"; then
		continue
	fi
	files=$(awk -F'\t' -v r="$repo" -v v="$rev" -v d="$out/src/$k/" 'NR > 1 && $1 == r && $2 == v { print d $3 }' "$here/classes.tsv")
	rm -rf "$out/classes/$k" && mkdir -p "$out/classes/$k"
	echo "ecj: $u ($(echo "$files" | wc -l) classes)" >&2
	ecj -proceedOnError -nowarn -proc:none -source 11 -target 11 -encoding UTF-8 -cp "$cp" \
		-sourcepath "$(sourcepath_of $keys | paste -sd:)" -d "$out/classes/$k" $files >"$out/logs/$k.log" 2>&1 || true
done

# A restore method: initializeState, restoreState, restoreWriter, open, a constructor, or any
# method that registers or reads operator state; other methods are listed only when unresolved
# (a static or private helper on the restore path shows up there).
: >"$out/status.tsv"
tail -n +2 "$here/classes.tsv" | while IFS=$'\t' read -r repo rev path cls; do
	k=$(key "$repo" "$rev")
	if [ ! -e "$out/classes/$k/$(echo "$cls" | tr . /).class" ]; then
		printf '%s\t-\tMISSING\t%s\n' "$cls" "$k" >>"$out/status.tsv"
		continue
	fi
	javap -c -p -cp "$out/classes/$k" "$cls" | awk -v cls="$cls" -v k="$k" '
		function flush() {
			if (name != "" && (name ~ /^(initializeState|restoreState|restoreWriter|open|<init>)$/ || state))
				printf "%s\t%s\t%s\t%s\n", cls, name, (bad ? "UNRESOLVED" : "clean"), k
			else if (name != "" && bad)
				printf "%s\t%s\tother-unresolved\t%s\n", cls, name, k
			name = ""; bad = 0; state = 0
		}
		/^  [^ ].*\(.*\).*;$/ {
			flush()
			s = $0; sub(/\(.*/, "", s); n = split(s, w, " "); name = w[n]
			if (name == cls) name = "<init>"
			next
		}
		/Unresolved compilation problem/ { bad = 1 }
		/OperatorStateStore\.get(ListState|UnionListState|BroadcastState)|ListState\.get:|restoreWriter/ { state = 1 }
		END { flush() }' >>"$out/status.tsv"
done
awk -F'\t' '
	{ key = $1; if (!(key in seen)) { order[++n] = key; seen[key] = 1 }
	  if ($3 == "clean") ok[key] = ok[key] " " $2
	  else if ($3 == "other-unresolved") other[key] = other[key] " " $2
	  else bad[key] = bad[key] " " $2 }
	END { for (i = 1; i <= n; i++) { c = order[i]
		printf "%-10s %s\n", (bad[c] == "" ? "CLEAN" : "PROBLEMS"), c
		if (ok[c] != "") printf "           restore methods clean:%s\n", ok[c]
		if (bad[c] != "") printf "           restore methods unresolved (or class missing):%s\n", bad[c]
		if (other[c] != "") printf "           other methods unresolved:%s\n", other[c] } }' "$out/status.tsv"
