#!/bin/sh
# SPDX-License-Identifier: MIT
# gpucheck-sim (make check): tests/gpu/gpucheck.sh with the sim backend, so
# the cases of tests/gpu/cases flagged "sim" (programs whose kernels the sim
# has built in) run through axon with the isolation check on every client.
# Installed as BUILD/tests/gpucheck-sim; tests/run-tests.sh sets AXON_BUILD
# and AXON_SRC. Exit 77 when the nvcc-built programs are missing.
set -u
build=${AXON_BUILD:?AXON_BUILD unset (run by tests/run-tests.sh)}
src=${AXON_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
for p in rt-copies-static rt-oom-shared rt-concurrent-shared; do
	if [ ! -x "$build/tests/gpu/$p" ]; then
		echo "$build/tests/gpu/$p is missing (built without nvcc?)" >&2
		exit 77
	fi
done
GPUCHECK_BACKEND=sim GPUCHECK_OUT="$build/test-logs/gpucheck-sim" \
	exec "$src/tests/gpu/gpucheck.sh" "$build"
