#!/bin/sh
# The runtime-API programs on a GPU machine: natively against NVIDIA's
# libcuda, then through axon (cudart-run with axond's cuda backend).
#   tests/cudart/gpu.sh BUILD [VENDOR_LIB]
# BUILD must hold tests/cudart/* and tests/cudart-run (make cudart-progs).
set -u
build=${1:?usage: gpu.sh BUILD [VENDOR_LIB]}
vendor=${2:-/usr/local/nvidia/lib64/libcuda.so.1}
cuda=${CUDA:-/usr/local/cuda}
rc=0

for p in rt-basic-static rt-basic-shared rt-more-static rt-more-shared; do
	echo "== native $p ($vendor)"
	env -u AXON_EXPECT_LIBCUDA LD_LIBRARY_PATH="$(dirname "$vendor"):$cuda/lib64" \
		"$build/tests/cudart/$p" || rc=1
done

echo "== through axon (axond --backend=cuda)"
AXON_BUILD=$(cd "$build" && pwd) \
AXON_TEST_AXOND_ARGS="--backend=cuda --vendor-lib=$vendor" \
	"$build/tests/cudart-run" || rc=1
exit $rc
