#!/bin/sh
# SPDX-License-Identifier: MIT
# axond-journal: axond's log lines when stderr is systemd's journal. With
# JOURNAL_STREAM naming the very file stderr is (as systemd sets it for a
# service), each line carries its level as a syslog priority prefix ("<6>"
# info, "<3>" error) and no time of its own; with JOURNAL_STREAM naming
# another file, or unset, lines are the plain "axond[TIME] LEVEL: ..."
# form. Run by tests/run-tests.sh (AXON_BUILD names the build).
set -u
NAME="axond-journal"
# shellcheck source=tests/daemon/daemon-lib.sh
. "$(dirname "$0")/daemon-lib.sh"

# run LOG: a sim axond on $sock until it listens, then SIGTERM; its
# stderr goes to LOG (which must exist: its inode is named beforehand).
run() {
	"$axond" --backend=sim --listen="unix:$sock" --sim-mem=64M --region-pool=0 2>>"$1" &
	p=$!
	wait_socket $p || fail "axond did not start: $(tail -n 3 "$1")"
	kill -TERM $p
	wait $p || fail "axond did not stop cleanly"
}

: >"$tmp/journal"
JOURNAL_STREAM=$(stat -c '%d:%i' "$tmp/journal") run "$tmp/journal"
grep -q '^<6>listening on unix:' "$tmp/journal" ||
	fail "no '<6>listening on' line: $(head -n 2 "$tmp/journal")"
if grep -qv '^<[3467]>' "$tmp/journal"; then
	fail "a journal line without a priority prefix: $(grep -v '^<[3467]>' "$tmp/journal" | head -n 1)"
fi
if grep -q 'axond\[' "$tmp/journal"; then
	fail "a journal line with a time of its own: $(grep 'axond\[' "$tmp/journal" | head -n 1)"
fi
# An error, as the journal gets it.
: >"$tmp/journal-err"
JOURNAL_STREAM=$(stat -c '%d:%i' "$tmp/journal-err") timeout -k 1 5 "$axond" \
	--backend=sim --listen=relative/path 2>>"$tmp/journal-err"
grep -q '^<3>--listen wants unix:/absolute/path' "$tmp/journal-err" ||
	fail "no '<3>' error line: $(head -n 2 "$tmp/journal-err")"

# Another file's stream, and none: the plain form.
: >"$tmp/other"
: >"$tmp/plain"
JOURNAL_STREAM=$(stat -c '%d:%i' "$tmp/other") run "$tmp/plain"
grep -q '^axond\[[0-9]*\.[0-9]*\] info: listening on unix:' "$tmp/plain" ||
	fail "JOURNAL_STREAM of another file: not the plain form: $(head -n 2 "$tmp/plain")"
: >"$tmp/plain2"
(unset JOURNAL_STREAM; run "$tmp/plain2")
grep -q '^axond\[[0-9]*\.[0-9]*\] info: listening on unix:' "$tmp/plain2" ||
	fail "no JOURNAL_STREAM: not the plain form: $(head -n 2 "$tmp/plain2")"

[ $fails -eq 0 ] || exit 1
echo "axond-journal: all cases passed"
