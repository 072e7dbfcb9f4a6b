# SPDX-License-Identifier: MIT
# Shared by the tests/daemon/*.sh tests (sourced; installed beside them in
# $(BUILD)/tests/): NAME=<test> before sourcing. Gives build (AXON_BUILD,
# set by tests/run-tests.sh), axond, sim_kernels (the test kernels object
# a sim daemon is given), a private temporary directory tmp (removed at
# exit), sock in it, and fail MESSAGE (counted in fails).
build=${AXON_BUILD:?run through tests/run-tests.sh}
# shellcheck disable=SC2034 # used by the tests that source this
axond=$build/bin/axond
# shellcheck disable=SC2034
sim_kernels=$build/lib/axon-sim-kernels.so
tmp=$(mktemp -d "${TMPDIR:-/tmp}/$NAME.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
sock=$tmp/axond.sock
fails=0

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# wait_socket PID: until $sock exists (10 s at most) or PID ends; 0 if it
# exists.
wait_socket() {
	i=0
	while [ ! -S "$sock" ] && [ $i -lt 100 ] && kill -0 "$1" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -S "$sock" ]
}
