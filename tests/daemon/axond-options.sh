#!/bin/sh
# SPDX-License-Identifier: MIT
# axond-options: axond's command line. Every numeric option refuses a value
# that is not a plain number in its range (a sign, trailing text, overflow)
# with exit status 2 and a message naming the option, and starts nothing;
# good values at the edges of the ranges start a daemon that stops cleanly
# on SIGTERM. A --sim-kernels object that cannot be loaded, or is not a
# kernels object, stops the daemon at start-up with the reason, and so does
# --transport=kmod without the kernel transport (--kmod=off: a usage error;
# no module: exit status 1, nothing listening). Run by
# tests/run-tests.sh (AXON_BUILD names the build).
set -u
NAME="axond-options"
# shellcheck source=tests/daemon/daemon-lib.sh
. "$(dirname "$0")/daemon-lib.sh"

# bad OPTION=VALUE: refused, named, nothing listening.
bad() {
	# (a value taken by mistake would start a daemon: not for long)
	timeout -k 1 5 "$axond" --backend=sim --listen="unix:$sock" "$1" >"$tmp/out" 2>&1
	rc=$?
	opt=${1%%=*}
	[ $rc -eq 2 ] || fail "$1: exit status $rc, want 2"
	grep -q "bad value for $opt: '${1#*=}'" "$tmp/out" ||
		fail "$1: no message naming $opt: $(head -n 1 "$tmp/out")"
	[ ! -e "$sock" ] || { fail "$1: a socket was made"; rm -f "$sock"; }
}

for v in abc -1 12x "" 1000001; do bad "--spin-us=$v"; done
for v in -1 129 4x 99999999999999999999; do bad "--collapse=$v"; done
for v in 1000000 -5 " 7"; do bad "--poll-us=$v"; done
for v in 0 -1 1048577; do bad "--max-clients=$v"; done
for v in 65 -1 x; do bad "--region-pool=$v"; done
for v in 65 -1; do bad "--context-pool=$v"; done
for v in 1T5 -4K 99999999999T K 1023; do bad "--sim-mem=$v"; done
for v in -4K 1Q 100 16T; do bad "--data-size=$v"; done
for v in -1 12x; do bad "--mint-credit=$v"; done
for v in 2 -3 x; do bad "--worker-ctl=$v"; done
for v in -1 1Q 99999999999T; do bad "--max-client-mem=$v"; bad "--max-user-mem=$v"; done
for v in 0 -1 1025M x; do bad "--max-image=$v"; done
for v in 0 -1 1Q; do bad "--max-inflate=$v"; done
for v in 0 1048577 x; do bad "--max-inflate-ratio=$v"; done
for v in 0 1025 -1; do bad "--max-module-loads=$v"; done
for v in 0 -1 1048577 x; do bad "--max-clients-per-user=$v"; done
for v in 0 257 -1; do bad "--max-pending-per-user=$v"; done
for v in 0 16777217 x; do bad "--max-parked=$v"; done
for v in 4095 -1 1Q; do bad "--max-parked-bytes=$v"; done
for v in 0 1073741825; do bad "--max-graph-nodes=$v"; done
for o in maps-per-client maps-per-user vmm-per-client vmm-per-user; do
	for v in 0 1048577 -2; do bad "--max-$o=$v"; done
done
for v in -1 65537 3x; do bad "--max-tracers-per-client=$v"; bad "--max-tracers-per-user=$v"; done
bad "--sim-kernels="
for v in unix sock ""; do bad "--transport=$v"; done

# unloadable OBJECT MESSAGE: --sim-kernels=OBJECT refused at start-up (exit
# status 1, the backend's), MESSAGE in the log, nothing listening.
unloadable() {
	timeout -k 1 5 "$axond" --backend=sim --listen="unix:$sock" \
		--sim-kernels="$1" >"$tmp/out" 2>&1
	rc=$?
	[ $rc -eq 1 ] || fail "--sim-kernels=$1: exit status $rc, want 1"
	grep -q "$2" "$tmp/out" ||
		fail "--sim-kernels=$1: no '$2': $(head -n 1 "$tmp/out")"
	[ ! -e "$sock" ] || { fail "--sim-kernels=$1: a socket was made"; rm -f "$sock"; }
}
unloadable "$tmp/absent.so" "cannot open shared object"
unloadable axon-sim-kernels.so "give a path"
# a shared object, but not a kernels object
unloadable "$build/lib/libaxon.so.1" "no axon_sim_kernels_register_v1()"

timeout -k 1 5 "$axond" --backend=sim --listen="unix:$sock" stray >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "unexpected argument 'stray'" "$tmp/out" ||
	fail "a stray argument: exit status $rc: $(head -n 1 "$tmp/out")"

# --transport=kmod serves /dev/axon clients only: without the kernel
# transport it refuses to start, saying why, before anything listens.
timeout -k 1 5 "$axond" --backend=sim --listen="unix:$sock" --transport=kmod \
	--kmod=off >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q "transport=kmod needs the kernel transport" "$tmp/out" ||
	fail "--transport=kmod --kmod=off: exit status $rc: $(head -n 1 "$tmp/out")"
if [ ! -e /dev/axon ]; then
	for iso in context process; do
		timeout -k 1 5 "$axond" --backend=sim --listen="unix:$sock" --transport=kmod \
			--isolation=$iso >"$tmp/out" 2>&1
		rc=$?
		[ $rc -eq 1 ] && grep -q "transport=kmod: not attached to /dev/axon" "$tmp/out" ||
			fail "--transport=kmod without the module ($iso): exit status $rc: $(head -n 1 "$tmp/out")"
		[ ! -e "$sock" ] || { fail "--transport=kmod without the module: a socket was made"; rm -f "$sock"; }
	done
fi

# Good values at the edges start a daemon.
"$axond" --backend=sim --listen="unix:$sock" --spin-us=0 --poll-us=999999 \
	--collapse=128 --max-clients=1 --region-pool=0 --sim-mem=1M \
	--data-size=4096 --mint-credit=0 --max-clients-per-user=1 \
	--max-pending-per-user=256 --max-parked=16777216 --max-parked-bytes=4K \
	--max-graph-nodes=1 --max-maps-per-client=1048576 --max-maps-per-user=1 \
	--max-vmm-per-client=1 --max-vmm-per-user=1048576 --max-client-mem=1M \
	--max-user-mem=0 --max-image=1024M --max-inflate=1 --max-inflate-ratio=1048576 \
	--max-module-loads=1024 --sim-kernels="$sim_kernels" --transport=any >"$tmp/log" 2>&1 &
pid=$!
if wait_socket $pid; then
	kill -TERM $pid
	wait $pid
	rc=$?
	[ $rc -eq 0 ] || fail "good values: axond exited $rc on SIGTERM"
else
	fail "good values: axond did not start: $(tail -n 3 "$tmp/log")"
	kill -KILL $pid 2>/dev/null
	wait $pid 2>/dev/null
fi

[ $fails -eq 0 ] || exit 1
echo "axond-options: all cases passed"
