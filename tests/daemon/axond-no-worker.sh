#!/bin/sh
# SPDX-License-Identifier: MIT
# axond-no-worker: process isolation when no worker can start (the cuda
# backend with a vendor library that does not exist, as a broken driver
# install would be). The supervisor keeps listening and restarting workers
# with a growing delay; a client waits, is counted in the stats document
# (clients_waiting 1, workers_ready 0), and once no worker has become ready
# for 30 s it is refused with a message saying so (axond/supervisor.c,
# serve_waiting), which the client program reports as cuInit's error. The
# daemon then stops cleanly on SIGTERM. Takes ~31 s. Run by
# tests/run-tests.sh (AXON_BUILD names the build).
set -u
NAME="axond-no-worker"
# shellcheck source=tests/daemon/daemon-lib.sh
. "$(dirname "$0")/daemon-lib.sh"

"$axond" --backend=cuda --vendor-lib="$tmp/absent/libcuda.so.1" \
	--isolation=process --listen="unix:$sock" >"$tmp/log" 2>&1 &
pid=$!
if ! wait_socket $pid; then
	echo "FAIL: axond did not start: $(tail -n 3 "$tmp/log")"
	kill -KILL $pid 2>/dev/null
	exit 1
fi

t0=$(date +%s)
AXON_ADDR=unix:$sock LD_LIBRARY_PATH=$build/lib timeout -k 5 60 \
	"$build/tests/bin/vecadd" --quiet >"$tmp/client" 2>&1 &
cpid=$!
sleep 2
doc=$("$build/bin/axonctl" --addr "unix:$sock" stats --json 2>&1)
case $doc in
*'"workers_ready":0,'*'"clients_waiting":1'*) ;;
*) fail "while the client waits, stats: $doc" ;;
esac
wait $cpid
rc=$?
t1=$(date +%s)
if [ $rc -eq 0 ] || [ $rc -eq 124 ]; then
	fail "the client: exit status $rc, want a failure (not a timeout)"
fi
grep -q "no axond worker process became ready for 30 s" "$tmp/client" ||
	fail "the client's message: $(head -n 2 "$tmp/client")"
if [ $((t1 - t0)) -lt 29 ] || [ $((t1 - t0)) -gt 45 ]; then
	fail "the client was answered after $((t1 - t0)) s, want about 30"
fi
grep -q "ended before it was ready" "$tmp/log" ||
	fail "axond's log does not say why: $(tail -n 3 "$tmp/log")"

kill -TERM $pid
wait $pid
rc=$?
[ $rc -eq 0 ] || fail "axond exited $rc on SIGTERM"

[ $fails -eq 0 ] || { sed 's/^/  | /' "$tmp/log" | tail -n 20; exit 1; }
echo "axond-no-worker: all cases passed"
