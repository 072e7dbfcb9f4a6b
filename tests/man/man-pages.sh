#!/bin/sh
# SPDX-License-Identifier: MIT
# man-pages: the manual pages in man/ keep up with what they describe, so
# that a new option or command cannot land without its page:
#   - every option `axond --help` prints is described in axond.8 (heads a
#     paragraph, not just named);
#   - every command and option `axonctl --help` prints, in axonctl.8;
#   - every option and column `axon-top --help` prints, in axon-top.1;
#   - every function <axon/libaxon.h> declares has a page (or a link);
#   - every link page (.so) names a page that exists;
#   - with groff installed, every page formats without a warning
#     (groff -man -ww).
# Run by tests/run-tests.sh (AXON_BUILD names the build, AXON_SRC the tree).
set -u
build=${AXON_BUILD:?run by tests/run-tests.sh}
src=${AXON_SRC:?run by tests/run-tests.sh}
man="$src/man"
failures=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

fail() {
	echo "man-pages: $*" >&2
	failures=$((failures + 1))
}

# A page as plain text: roff's \- as -, font changes dropped.
plain() {
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$1"
}

# Options in a --help text: words that start with - or -- after a blank,
# a comma or an opening bracket.
help_options() {
	grep -oE -- '(^|[ ,[(])--?[a-zA-Z][a-zA-Z-]*' | sed -E 's/^[ ,[(]//' | sort -u
}

# The tags of a page's .TP paragraphs, as plain words (macros and quotes
# dropped): where a command or an option is described, not just named.
tags() {
	plain "$1" | awk 'prev == ".TP" { print } { prev = $1 }' |
		sed -E -e 's/^\.[A-Z]+ //' -e 's/"//g'
}

# page_has PAGE WORD: WORD in a tag of PAGE, not as part of a longer
# option name. The tags of each page are taken once, into $tmp.
page_has() {
	t="$tmp/$(basename "$1").tags"
	[ -f "$t" ] || tags "$1" >"$t"
	grep -Eq -- "(^|[^a-zA-Z-])$2([^a-zA-Z-]|\$)" "$t"
}

for b in axond axonctl axon-top; do
	[ -x "$build/bin/$b" ] || fail "$build/bin/$b is not built"
done
[ $failures -eq 0 ] || exit 1

# axond: every option of its help.
"$build/bin/axond" --help >"$tmp/help" 2>&1 ||
	fail "axond --help failed"
for o in $(help_options <"$tmp/help"); do
	page_has "$man/axond.8" "$o" || fail "axond.8 does not describe $o"
done

# axonctl: every command ("daemon status", "limit set", ...) and option.
"$build/bin/axonctl" --help >"$tmp/help" 2>&1 ||
	fail "axonctl --help failed"
commands=$(sed -n '/^commands:/,/^$/p' "$tmp/help" |
	sed -nE 's/^  ([a-z]+( [a-z]+)?).*/\1/p')
[ -n "$commands" ] || fail "no commands in axonctl --help"
for c in $(echo "$commands" | tr ' ' '_'); do
	c=$(echo "$c" | tr '_' ' ')
	page_has "$man/axonctl.8" "$c" ||
		fail "axonctl.8 does not describe the command '$c'"
done
for o in $(help_options <"$tmp/help"); do
	page_has "$man/axonctl.8" "$o" || fail "axonctl.8 does not describe $o"
done

# axon-top: every option and every column heading.
"$build/bin/axon-top" --help >"$tmp/help" 2>&1 ||
	fail "axon-top --help failed"
for o in $(sed '/^columns/,$d' "$tmp/help" | help_options); do
	page_has "$man/axon-top.1" "$o" || fail "axon-top.1 does not describe $o"
done
for col in $(sed -n '/^columns/,/^$/p' "$tmp/help" |
	sed -nE 's/^  ([A-Z][A-Za-z0-9/]*) .*/\1/p'); do
	plain "$man/axon-top.1" | grep -Fq "$col" ||
		fail "axon-top.1 does not describe the column $col"
done

# libaxon: a page for every function the header declares.
for f in $(grep -E '^[a-z].*[ *]axon_[a-z0-9_]+\(' "$src/lib/include/axon/libaxon.h" |
	grep -v '^#' | sed -E 's/.*[ *](axon_[a-z0-9_]+)\(.*/\1/' | sort -u); do
	[ -f "$man/$f.3" ] || fail "no page for $f (man/$f.3)"
done

# Link pages name pages that exist.
for p in "$man"/*.[138]; do
	target=$(sed -n '1s/^\.so //p' "$p")
	[ -z "$target" ] || [ -f "$man/${target#man[138]/}" ] ||
		fail "$(basename "$p") links to $target, which is not in man/"
done

# Formatting: no warning from groff (all of them, -ww), where groff exists.
if command -v groff >/dev/null 2>&1; then
	for p in "$man"/*.[138]; do
		grep -q '^\.so ' "$p" && continue
		out=$(groff -man -ww -z "$p" 2>&1)
		[ -z "$out" ] || fail "$(basename "$p"): groff: $out"
	done
else
	echo "man-pages: groff is not installed; formatting not checked" >&2
fi

[ $failures -eq 0 ] || { echo "man-pages: $failures failure(s)" >&2; exit 1; }
echo "man-pages: pages match axond, axonctl, axon-top and libaxon.h"
exit 0
