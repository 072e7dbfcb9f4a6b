#!/bin/sh
# SPDX-License-Identifier: MIT
#
# make demo: axon end to end, for a human.
#
#   tests/demo.sh BUILD
#
# Starts axond with the software ("sim") device on a private socket, runs
# the driver-API program BUILD/tests/bin/vecadd through axon's libcuda.so.1
# (the shim), shows the daemon's per-client stats while a client holds GPU
# memory, and stops the daemon. Nothing here needs a GPU or root.
set -u

build=${1:-build}
if [ ! -d "$build" ]; then
	echo "demo: no build directory '$build' (run make first)" >&2
	exit 1
fi
B=$(cd "$build" && pwd)
axond=$B/bin/axond
axonctl=$B/bin/axonctl
vecadd=$B/tests/bin/vecadd
kernels=$B/lib/axon-sim-kernels.so
for f in "$axond" "$axonctl" "$vecadd" "$B/lib/libcuda.so.1" "$kernels"; do
	if [ ! -e "$f" ]; then
		echo "demo: $f is missing (run make first)" >&2
		exit 1
	fi
done
if [ ! -e "$B/tests/data/kernels.cubin" ]; then
	echo "demo: $B/tests/data/kernels.cubin is missing: the kernels are built" \
	     "from tests/sim-kernels/kernels.cu with nvcc" >&2
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/axon-demo.XXXXXX") || exit 1
sock=$tmp/axond.sock
log=$tmp/axond.log
dpid=
hpid=

cleanup() {
	[ -n "$hpid" ] && kill "$hpid" 2>/dev/null
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null && wait "$dpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() {
	if [ -t 1 ]; then
		printf '\n\033[1m== %s\033[0m\n\n' "$*"
	else
		printf '\n== %s\n\n' "$*"
	fi
}
# Prints a command, then runs it.
show() {
	printf '$ %s\n' "$*"
	"$@"
}
fail() {
	echo "demo: $*" >&2
	if [ -s "$log" ]; then
		echo "---- axond log ----" >&2
		cat "$log" >&2
	fi
	exit 1
}

# Wait (bounded) until cmd succeeds, polling every 50 ms.
wait_for() {
	what=$1
	shift
	i=0
	until "$@" >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -le 200 ] || fail "timed out waiting for $what"
		sleep 0.05
	done
}

export AXON_ADDR="unix:$sock"
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export AXON_BUILD="$B"

say "1. Start axond: the one process that owns the (software) GPU"
echo "\$ axond --backend=sim --listen unix:$sock --sim-mem=4G --sim-kernels=$kernels 2>$log &"
"$axond" --backend=sim --listen "unix:$sock" --sim-mem=4G --sim-kernels="$kernels" 2>"$log" &
dpid=$!
wait_for "axond to answer on $sock" "$axonctl" daemon status
show "$axonctl" daemon status || fail "axond is not up"

say "2. Run a CUDA driver-API program through axon's libcuda.so.1"
echo "(LD_LIBRARY_PATH=$B/lib: the program's cuInit, cuMemAlloc, cuLaunchKernel..."
echo " become requests on a shared-memory ring to axond)"
echo
show "$vecadd" --image all --size 1000000 || fail "vecadd failed"

say "3. The daemon's view of a connected client"
echo "A second vecadd keeps its buffers, module and context while we look:"
echo
out=$tmp/hold.out
"$vecadd" --size 4000000 --hold 60 >"$out" 2>&1 &
hpid=$!
wait_for "vecadd to hold its memory" grep -q holding "$out"
sed 's/^/    /' "$out"
echo
show "$axonctl" stats || fail "axonctl stats failed"
echo
echo "(MEMORY: device memory it has mapped; ALLOCS: its allocations, module"
echo " globals included; OPS: requests that waited for an answer / fire-and-forget"
echo " ones; CROSSINGS: batches the daemon took from its ring; P50/P99: service"
echo " time of its synchronous requests. axonctl stats --json: the whole document.)"
kill -USR1 "$hpid"
wait "$hpid"
rc=$?
hpid=
sed -n '/hold over/,$p' "$out" | sed 's/^/    /'
[ $rc -eq 0 ] || fail "the holding vecadd failed (exit $rc)"
echo
echo "After it exits, the daemon has freed everything it held:"
wait_for "the client to go" sh -c "\"$axonctl\" stats --json | grep -q '\"clients\":\[\]'"
show "$axonctl" stats

say "4. Stop axond (SIGTERM)"
kill -TERM "$dpid"
wait "$dpid"
rc=$?
dpid=
echo "axond exited with status $rc; its log:"
sed 's/^/    /' "$log"
[ $rc -eq 0 ] || fail "axond did not exit cleanly"
echo
echo "demo: done"
