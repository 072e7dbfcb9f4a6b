#!/bin/sh
# SPDX-License-Identifier: MIT
# axond-single: one axond per listening address. A second axond started on
# the address of a live one used to unlink its socket and bind anew: the
# first kept its clients, new ones reached the second. Now the second
# refuses to start (exit status 1, a message naming the first one's pid)
# and leaves the socket alone: the same inode, still answered by the
# first. Once the first has stopped, or was killed with SIGKILL (its lock
# goes with the process, its socket stays behind), a new one starts on the
# address. Run by tests/run-tests.sh (AXON_BUILD names the build).
set -u
NAME="axond-single"
# shellcheck source=tests/daemon/daemon-lib.sh
. "$(dirname "$0")/daemon-lib.sh"

start() {
	"$axond" --backend=sim --listen="unix:$sock" --sim-mem=64M --region-pool=0 \
		>>"$tmp/log.$1" 2>&1 &
	pid=$!
}

# answers: the daemon at $sock serves a stats request.
answers() {
	AXON_ADDR="unix:$sock" timeout -k 1 10 "$build/bin/axonctl" stats >"$tmp/stats" 2>&1
}

stop() {
	kill -TERM "$1" 2>/dev/null
	wait "$1"
}

start first
first=$pid
wait_socket $first || { fail "the first axond did not start: $(tail -n 3 "$tmp/log.first")"; exit 1; }
answers || fail "the first axond does not answer: $(head -n 3 "$tmp/stats")"
inode=$(stat -c %i "$sock")

timeout -k 1 10 "$axond" --backend=sim --listen="unix:$sock" --sim-mem=64M --region-pool=0 \
	>"$tmp/log.second" 2>&1
rc=$?
[ $rc -eq 1 ] || fail "a second axond on a live address: exit status $rc, want 1"
grep -q "another axond (pid $first) serves unix:$sock" "$tmp/log.second" ||
	fail "no message naming the first axond: $(head -n 3 "$tmp/log.second")"
[ -S "$sock" ] && [ "$(stat -c %i "$sock")" = "$inode" ] ||
	fail "the second axond replaced the first one's socket"
answers || fail "the first axond no longer answers: $(head -n 3 "$tmp/stats")"
kill -0 $first 2>/dev/null || fail "the first axond died"

stop $first || fail "the first axond did not stop cleanly"
[ ! -e "$sock" ] || fail "the socket outlived the first axond's orderly stop"

# After an orderly stop: a new one starts.
start third
third=$pid
wait_socket $third && answers || fail "no axond could start after the first stopped"
# Killed outright: its socket stays, its lock does not.
kill -KILL $third
wait $third 2>/dev/null
[ -S "$sock" ] || fail "SIGKILL removed the socket (the case below tests nothing)"
start fourth
fourth=$pid
i=0
while ! answers && [ $i -lt 100 ] && kill -0 $fourth 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
answers || fail "no axond could start over a killed one's socket: $(tail -n 3 "$tmp/log.fourth")"
stop $fourth || fail "the last axond did not stop cleanly"

[ $fails -eq 0 ] || exit 1
echo "axond-single: all cases passed"
