#!/bin/bash
# SPDX-License-Identifier: MIT
# unit-corpus: what of the conformance corpus' runner can be checked without
# a GPU (Documentation/testing-gpu.md §8):
#   - normalise rewrites canned sample output as testdata/normalise.expected
#     says (times, rates, addresses, pids, dates, driver versions masked;
#     results kept), and a per-case filter applies to its cases only;
#   - table.awk makes testdata/table.expected of testdata/results.tsv: rows
#     sorted, failures marked, slow ratios marked, programs not compared
#     listed with their reasons, the summary counts;
#   - samples.list and frameworks/list are well-formed: five fields or more
#     on a run line, a numeric timeout, no case twice, every script there;
#   - run.sh, with no NVIDIA driver, says there is no GPU and exits 2;
#     build-samples refuses a directory that is no cuda-samples tree.
set -u
src=${AXON_SRC:?run by tests/run-tests.sh}
build=${AXON_BUILD:?run by tests/run-tests.sh}
c=$src/tests/gpu/corpus
d=$c/testdata
fail=0
bad() { echo "FAIL: $*"; fail=1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/unit-corpus.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

"$c/normalise" some-case "$d/normalise.in" >"$tmp/n"
diff -u "$d/normalise.expected" "$tmp/n" || bad "normalise: output differs (above)"
CORPUS_FILTERS=$d/filters "$c/normalise" filtered-case "$d/normalise.in" >"$tmp/f"
diff -u "$d/normalise-filtered.expected" "$tmp/f" || bad "normalise: a case's filter"
CORPUS_FILTERS=$d/filters "$c/normalise" other-case "$d/normalise.in" >"$tmp/o"
diff -u "$d/normalise.expected" "$tmp/o" || bad "normalise: a filter applied to a case it does not name"

LC_ALL=C sort -t "$(printf '\t')" -k1,1 "$d/results.tsv" |
	awk -F'\t' -v slow=1.5 -f "$c/table.awk" >"$tmp/t"
diff -u "$d/table.expected" "$tmp/t" || bad "table.awk: table differs (above)"

awk '$1 == "run" && (NF < 5 || $5 !~ /^[0-9]+$/) { print "samples.list:" NR ": " $0; e = 1 }
     $1 == "skip" && NF < 4 { print "samples.list:" NR ": no reason: " $0; e = 1 }
     $1 == "run" || $1 == "skip" { if (seen[$2]++) { print "samples.list: " $2 " twice"; e = 1 } }
     END { exit e }' "$c/samples.list" || bad "samples.list is malformed"
[ "$(awk '$1 == "run"' "$c/samples.list" | wc -l)" -ge 100 ] || bad "samples.list: fewer than 100 programs"
while read -r name t script; do
	case $name in ''|'#'*) continue ;; esac
	[[ $t =~ ^[0-9]+$ ]] || bad "frameworks/list: $name: timeout '$t'"
	[ -f "$c/frameworks/$script" ] || bad "frameworks/list: $name: no $script"
done <"$c/frameworks/list"

out=$(VENDOR_LIB=$tmp/no-libcuda.so.1 CORPUS_OUT=$tmp/out "$c/run.sh" "$build" 2>&1)
rc=$?
[ $rc = 2 ] || bad "run.sh without a driver exited $rc, not 2"
grep -q 'no GPU here' <<<"$out" || bad "run.sh without a driver did not say so: $out"
mkdir -p "$tmp/notsamples"
"$c/build-samples" "$tmp/notsamples" "$tmp/b" >/dev/null 2>&1
[ $? = 2 ] || bad "build-samples took a directory that is no cuda-samples tree"

[ $fail = 0 ] && echo "unit-corpus: all checks passed"
exit $fail
