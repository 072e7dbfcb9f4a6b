#!/bin/sh
# GPU smoke run (on a GPU machine): the same driver-API program natively and
# through axond's cuda backend, with the daemon's stats after.
#   tests/gpu/smoke.sh BUILD [VENDOR_LIB]
set -u
build=${1:?usage: smoke.sh BUILD [VENDOR_LIB]}
vendor=${2:-/usr/local/nvidia/lib64/libcuda.so.1}
img="$build/tests/data/kernels.cubin"
tmp=$(mktemp -d)
gcc -std=gnu11 -O2 -I"${CUDA:-/usr/local/cuda}/include" -o "$tmp/vecadd" tests/gpu/drv-vecadd.c \
	-L"$build/lib" -l:libcuda.so.1 2>/dev/null || cp "$build/tests/gpu/drv-vecadd" "$tmp/vecadd"

echo "== native ($vendor)"
LD_LIBRARY_PATH=$(dirname "$vendor") "$tmp/vecadd" "$img"; echo "native rc=$?"

echo "== through axon (cuda backend)"
"$build/bin/axond" --backend=cuda --vendor-lib="$vendor" --listen "unix:$tmp/axond.sock" -v \
	>"$tmp/axond.log" 2>&1 &
pid=$!
for i in $(seq 1 100); do [ -S "$tmp/axond.sock" ] && break; sleep 0.1; done
AXON_ADDR="unix:$tmp/axond.sock" LD_LIBRARY_PATH="$build/lib" "$tmp/vecadd" "$img"; echo "axon rc=$?"
AXON_ADDR="unix:$tmp/axond.sock" LD_LIBRARY_PATH="$build/lib" "$tmp/vecadd" "$build/tests/data/kernels.ptx"; echo "axon ptx rc=$?"
[ -x "$build/bin/axonctl" ] && "$build/bin/axonctl" --addr "unix:$tmp/axond.sock" stats
kill -TERM $pid; wait $pid; echo "axond rc=$?"
cat "$tmp/axond.log"
