#!/bin/sh
# SPDX-License-Identifier: MIT
# The GPU benchmark scripts' own logic, without a GPU: run.sh's merging
# (sidebyside.awk, concurrent.awk) on canned outputs, the concurrent-client
# harness (clients.sh) with a stand-in client, and torchbench.py without
# PyTorch, with stand-in `torch` modules that crash or hang, and with one
# that does no work (every group's Python runs; its numbers mean nothing).
#
#   bench/gpu/selftest.sh        (make bench-gpu-selftest)
#
# The canned drvbench outputs are the native and axon halves of
# bench/gpu/results/h200-2026-11-29.txt. Prints one line per check and
# `N passed, N failed`; exits 1 when any failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/axon-gpu-selftest.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
# has NAME FILE REGEX: FILE has a line matching REGEX (extended).
has() {
	if grep -Eq -- "$3" "$2"; then ok "$1"; else
		bad "$1: no line matching /$3/ in:"
		sed 's/^/     | /' "$2" | head -n 40
	fi
}
hasnt() {
	if grep -Eq -- "$3" "$2"; then
		bad "$1: unexpected line matching /$3/"
		grep -E -- "$3" "$2" | sed 's/^/     | /' | head -n 5
	else ok "$1"; fi
}

# ---- sidebyside.awk -------------------------------------------------------
res=$here/results/h200-2026-11-29.txt
awk '/^== native:/ { s = 1; next } /^native rc=/ { s = 0 } s && !/^native stderr/' "$res" >"$tmp/n.txt"
awk '/^   AXON_ADDR=/ { s = 1; next } /^axon rc=/ { s = 0 } s && !/^axon stderr/' "$res" >"$tmp/a.txt"
cat >>"$tmp/n.txt" <<'EOF'
# blasbench
cublas_create 12.50 ms
sgemm_first 3.10 ms
sgemm_1024 40.00 TFLOP/s
sgemm_1024.p99 38.00 TFLOP/s
sgemm_1024.mean 39.50 TFLOP/s
sgemm_4096 50.00 TFLOP/s
sgemm_4096.p99 49.00 TFLOP/s
sgemm_8192 52.00 TFLOP/s
sgemm_64_rate 150000 call/s
sgemm_64_sync 12.00 us
torch_cuda_init 350.0 ms
torch_train_mlp 400.0 step/s
torch_train_mlp.p99 380.0 step/s
torch_train_cnn 500.0 step/s
torch_matmul_bf16 780.0 TFLOP/s
torch_tiny_ops 200000 op/s
EOF
cat >>"$tmp/a.txt" <<'EOF'
cublas_create 20.00 ms
sgemm_first 9.00 ms
sgemm_1024 30.00 TFLOP/s
sgemm_1024.p99 29.00 TFLOP/s
sgemm_4096 49.00 TFLOP/s
sgemm_8192 n/a TFLOP/s # cudaEventSynchronize(e1): cudaErrorLaunchFailure
sgemm_64_rate 100000 call/s
sgemm_64_sync 20.00 us
torch_cuda_init 90.00 ms
torch_train_mlp 391.0 step/s
torch_train_cnn n/a step/s # child exited with status -11; Segmentation fault
torch_matmul_bf16 781.0 TFLOP/s
torch_tiny_ops 100000 op/s
EOF
awk -v native=1 -v backend=cuda -f "$here/rows.awk" -f "$here/sidebyside.awk" "$tmp/n.txt" "$tmp/a.txt" >"$tmp/sbs.txt"
has "drv row unchanged" "$tmp/sbs.txt" '^launch_rate +launch/s higher +297712 \[278579\] +156344 \[154701\] +0\.53x worse +>= native +NOT met$'
has "drv time row" "$tmp/sbs.txt" '^nullop_stream_sync +us +lower +1\.49 \[1\.91\] +0\.939 \[1\.29\] +0\.63x better +<= 1\.0 us +met$'
has "TFLOP/s is higher-better, not met" "$tmp/sbs.txt" '^sgemm_1024 +TFLOP/s +higher +40\.00 \[38\.00\] +30\.00 \[29\.00\] +0\.75x worse +>= 97% native +NOT met$'
has "98% of native is met" "$tmp/sbs.txt" '^sgemm_4096 +TFLOP/s +higher +50\.00 \[49\.00\] +49\.00 +0\.98x same +>= 97% native +met$'
has "axon n/a row" "$tmp/sbs.txt" '^sgemm_8192 +TFLOP/s +higher +52\.00 +n/a +- +>= 97% native +n/a: no axon figure$'
has "axon n/a reason" "$tmp/sbs.txt" '^    axon n/a: cudaEventSynchronize\(e1\): cudaErrorLaunchFailure$'
has "call/s higher-better" "$tmp/sbs.txt" '^sgemm_64_rate +call/s +higher .* 0\.67x worse'
has "step/s 97.75% met" "$tmp/sbs.txt" '^torch_train_mlp +step/s +higher +400\.0 \[380\.0\] +391\.0 +0\.98x same +>= 97% native +met$'
has "op/s higher-better" "$tmp/sbs.txt" '^torch_tiny_ops +op/s +higher .* 0\.50x worse'
has "torch n/a reason" "$tmp/sbs.txt" '^    axon n/a: child exited with status -11; Segmentation fault$'
has "targets list has cuBLAS" "$tmp/sbs.txt" '^sgemm_4096 +>= 97% native +axon 49\.00 TFLOP/s +native 50\.00 +met$'
has "targets count" "$tmp/sbs.txt" '^targets: 9 met, 11 not met, 2 without a figure \(of the 22 rows above with targets\)$'
hasnt "p99/mean lines are no rows" "$tmp/sbs.txt" '^[a-z_0-9.]+\.(p99|mean) '

# Empty native side (no GPU): by file name, not position.
: >"$tmp/empty.txt"
awk -v native=0 -v backend=sim -f "$here/rows.awk" -f "$here/sidebyside.awk" "$tmp/empty.txt" "$tmp/a.txt" >"$tmp/sbs2.txt"
has "empty native file" "$tmp/sbs2.txt" '^sgemm_4096 +TFLOP/s +higher +- +49\.00 +- +>= 97% native +n/a: no native figure$'

# ---- concurrent.awk ----------------------------------------------------------
cat >"$tmp/cn.txt" <<'EOF'
# conc1: 1 clients set up (or failed) in 0.4 s
conc1_rate 30000 launch/s
conc1_loop 330.0 us
conc1_loop.p99 400.0 us
conc1_loop.mean 333.0 us
conc1_fair 1.00 min/max
conc8_rate 60000 launch/s
conc8_loop 13000 us
conc8_loop.p99 25000 us
conc8_fair 0.500 min/max
EOF
cat >"$tmp/cm.txt" <<'EOF'
conc1_rate n/a launch/s # MPS: nvidia-cuda-mps-control not found
conc1_loop n/a us # MPS: nvidia-cuda-mps-control not found
conc1_fair n/a min/max # MPS: nvidia-cuda-mps-control not found
conc8_rate n/a launch/s # MPS: nvidia-cuda-mps-control not found
conc8_loop n/a us # MPS: nvidia-cuda-mps-control not found
conc8_fair n/a min/max # MPS: nvidia-cuda-mps-control not found
EOF
cat >"$tmp/ca.txt" <<'EOF'
conc1_rate 15000 launch/s
conc1_loop 660.0 us
conc1_loop.p99 800.0 us
conc1_fair 1.00 min/max
conc8_rate 150000 launch/s
conc8_loop 5200 us
conc8_loop.p99 6000 us
conc8_fair 0.900 min/max
EOF
awk -v backend=cuda -f "$here/rows.awk" -f "$here/concurrent.awk" "$tmp/cn.txt" "$tmp/cm.txt" "$tmp/ca.txt" >"$tmp/conc.txt"
has "conc rate row" "$tmp/conc.txt" '^conc1_rate +launch/s +higher +30000 +n/a +15000 +0\.50x +-$'
has "conc loop row" "$tmp/conc.txt" '^conc8_loop +us +lower +13000 \[25000\] +n/a +5200 \[6000\] +0\.40x +-$'
has "conc fair row" "$tmp/conc.txt" '^conc8_fair +min/max +higher +0\.500 +n/a +0\.900 +1\.80x +-$'
n=$(grep -c 'MPS n/a: MPS: nvidia-cuda-mps-control not found' "$tmp/conc.txt")
if [ "$n" = 1 ]; then ok "a repeated reason is shown once"; else bad "the MPS reason shown $n times"; fi

# ---- clients.sh --------------------------------------------------------------
cat >"$tmp/client" <<'EOF'
#!/bin/sh
# Stand-in loopclient: CUBIN LEN SECONDS GOFILE. FAKE=err|crash|noready.
case ${FAKE:-} in
err) echo "error cuInit: CUDA_ERROR_NO_DEVICE"; exit 1 ;;
noready) sleep 30; exit 0 ;;
esac
echo ready
while [ ! -e "$4" ]; do sleep 0.02; done
[ "${FAKE:-}" = crash ] && { echo "boom" >&2; kill -SEGV $$; }
# LOOPS LAUNCHES ELAPSED P50 P99 MEAN: client i does a tenth more than i-1.
echo "result 1000 $((1000 * $2)) 1.000000 300.0 $((400 + $$ % 50)).0 310.0"
EOF
chmod +x "$tmp/client"
"$here/clients.sh" conc4 4 "$tmp/c4" -- "$tmp/client" x 100 1 >"$tmp/cl.txt" 2>&1
has "clients: summed rate" "$tmp/cl.txt" '^conc4_rate 400000 launch/s$'
has "clients: median p50" "$tmp/cl.txt" '^conc4_loop 300\.0 us$'
has "clients: worst p99" "$tmp/cl.txt" '^conc4_loop\.p99 4[0-4][0-9]\.0 us$'
has "clients: pooled mean" "$tmp/cl.txt" '^conc4_loop\.mean 1000 us$'
has "clients: fairness" "$tmp/cl.txt" '^conc4_fair 1\.00 min/max$'
FAKE=err "$here/clients.sh" conc2 2 "$tmp/c2" -- "$tmp/client" x 100 1 >"$tmp/cl.txt" 2>&1
has "clients: a client's error" "$tmp/cl.txt" '^conc2_rate n/a launch/s # 2 of 2 clients failed; client error cuInit: CUDA_ERROR_NO_DEVICE, exit status 1$'
FAKE=crash "$here/clients.sh" conc2 2 "$tmp/c2" -- "$tmp/client" x 100 1 >"$tmp/cl.txt" 2>&1
has "clients: a crash" "$tmp/cl.txt" '^conc2_loop n/a us # 2 of 2 clients failed; client no result line, exit status 139; stderr: boom$'
FAKE=noready READY_TIMEOUT=1 "$here/clients.sh" conc2 2 "$tmp/c2" -- "$tmp/client" x 100 1 >"$tmp/cl.txt" 2>&1
has "clients: not ready" "$tmp/cl.txt" '^conc2_fair n/a min/max # 2 of 2 clients failed; client killed: not ready after 1 s$'
has "clients: not ready, said" "$tmp/cl.txt" '^# conc2: 2 of 2 clients not ready after 1 s$'

# ---- torchbench.py's parent ------------------------------------------------------
py=${PYTHON:-python3}
if ! command -v "$py" >/dev/null 2>&1; then
	echo "skip torchbench: no $py"
else
	mkdir -p "$tmp/none/torch" "$tmp/crash/torch" "$tmp/hang/torch"
	printf 'raise ImportError("stand-in: no torch here")\n' >"$tmp/none/torch/__init__.py"
	printf 'import os, signal, sys\nsys.stderr.write("stand-in: crashing\\n")\nsys.stderr.flush()\nos.kill(os.getpid(), signal.SIGSEGV)\n' \
		>"$tmp/crash/torch/__init__.py"
	printf 'import time\ntime.sleep(60)\n' >"$tmp/hang/torch/__init__.py"
	PYTHONPATH=$tmp/none "$py" "$here/torchbench.py" --only mlp >"$tmp/t.txt" 2>&1
	has "torch: import error" "$tmp/t.txt" '^torch_train_mlp n/a step/s # import torch: ImportError: stand-in: no torch here$'
	has "torch: first child has the init row" "$tmp/t.txt" '^torch_cuda_init n/a ms # import torch: ImportError'
	PYTHONPATH=$tmp/crash "$py" "$here/torchbench.py" --only cnn,ops >"$tmp/t.txt" 2>&1
	has "torch: crash" "$tmp/t.txt" '^torch_train_cnn n/a step/s # child exited with status -11; stand-in: crashing$'
	has "torch: next group still runs" "$tmp/t.txt" '^torch_tiny_ops n/a op/s # child exited with status -11'
	PYTHONPATH=$tmp/hang TORCHBENCH_TIMEOUT=1 "$py" "$here/torchbench.py" --only mlp,matmul >"$tmp/t.txt" 2>&1
	has "torch: hang" "$tmp/t.txt" '^torch_train_mlp n/a step/s # child killed after 1 s'
	has "torch: later groups skipped" "$tmp/t.txt" '^torch_matmul_bf16 n/a TFLOP/s # skipped: group mlp hung with no figure'
	"$py" "$here/torchbench.py" --only nosuch >"$tmp/t.txt" 2>&1
	has "torch: unknown group" "$tmp/t.txt" 'unknown group in nosuch'
	# Every group's Python, through a stand-in torch that does no work:
	# each row must come out as a figure (its value means nothing).
	mkdir -p "$tmp/fake/torch"
	cat >"$tmp/fake/torch/__init__.py" <<'PYEOF'
# Stand-in torch for checking torchbench.py's Python logic (not its numbers).
import math, random, time
__version__ = "0.fake"
class version: cuda = "13.0"
class _B:
    class cudnn:
        @staticmethod
        def version(): return 91000
backends = _B
bfloat16 = "bf16"
class T:
    def __init__(self, shape, v=0.0): self.shape = shape; self.v = v
    def cuda(self): return self
    def __getitem__(self, k): return T((), self.v)
    def double(self): return self
    def cpu(self): return self
    def __mul__(self, o): return T(self.shape, self.v * (o.v if isinstance(o, T) else o))
    def sum(self): return T((), 1.0)
    def abs(self): return T((), 100.0)
    def __float__(self): return float(self.v)
    def mul_(self, s): self.v *= s; return self
    def add_(self, s): self.v += s; return self
    def item(self): return float(self.v)
    def backward(self): pass
def zeros(*shape, device=None, dtype=None): return T(shape, 0.0)
def randn(*shape, device=None, dtype=None): return T(shape, 1.0)
def empty(*shape, device=None, dtype=None): return T(shape, 1.0)
def randint(lo, hi, shape, device=None): return T(shape, 1.0)
def manual_seed(s): pass
def matmul(a, b, out=None): time.sleep(0.0001)
class cuda:
    @staticmethod
    def is_available(): return True
    @staticmethod
    def synchronize(): pass
    @staticmethod
    def get_device_name(i): return "Fake GPU"
    class Event:
        def __init__(self, enable_timing=False): self.t = 0
        def record(self): self.t = time.perf_counter()
        def synchronize(self): pass
        def elapsed_time(self, o): return (o.t - self.t) * 1e3 + 1.0
class _Mod:
    def __init__(self, *a, **k): self.a = a
    def cuda(self): return self
    def parameters(self): return []
    def __call__(self, x): return x
class nn:
    Sequential = Linear = ReLU = Conv2d = BatchNorm2d = AdaptiveAvgPool2d = Flatten = _Mod
    class functional:
        n = [0]
        @staticmethod
        def cross_entropy(out, y):
            nn.functional.n[0] += 1
            return T((), 7.0 / nn.functional.n[0])
class _Opt:
    def __init__(self, params, **k): pass
    def zero_grad(self, set_to_none=False): pass
    def step(self): pass
class optim:
    AdamW = SGD = _Opt
PYEOF
	PYTHONPATH=$tmp/fake "$py" "$here/torchbench.py" --quick >"$tmp/t.txt" 2>&1
	for r in torch_cuda_init torch_train_mlp torch_train_cnn torch_matmul_bf16 torch_tiny_ops; do
		has "torch: $r from a stand-in" "$tmp/t.txt" "^$r [0-9.]+ "
	done
	hasnt "torch: no n/a from a stand-in" "$tmp/t.txt" ' n/a '
fi

# ---- run.sh's wait for a full worker pool (axond_settle) -------------------
# With a build (SELFTEST_BUILD, default build/ beside bench/) that has axond,
# axonctl, drvbench and the kernels' cubin: the sim backend in process
# isolation, one quick group.
build=${SELFTEST_BUILD:-$here/../../build}
if [ -x "$build/bin/axond" ] && [ -x "$build/bin/axonctl" ] &&
	[ -x "$build/bench/gpu/drvbench" ] && [ -r "$build/tests/data/kernels.cubin" ]; then
	run() {
		env VENDOR_LIB=/nonexistent AXON_BENCH_BACKEND=sim BENCH_PARTS=drv \
			DRVBENCH_ARGS="--quick --only nullop" "$@" \
			timeout 120 "$here/run.sh" "$build" >"$tmp/r.txt" 2>&1
	}
	run AXOND_ARGS="--isolation=process --context-pool=3"
	has "run.sh waits for a full pool" "$tmp/r.txt" '^   pool full: 3 workers ready after [0-9]+ ms$'
	has "run.sh: the row after the pool" "$tmp/r.txt" '^nullop_stream_sync [0-9.]+ us$'
	run AXOND_ARGS="--isolation=process" BENCH_SETTLE=0
	hasnt "BENCH_SETTLE=0 does not wait" "$tmp/r.txt" 'pool (full|not full)'
	run AXOND_ARGS="--isolation=context"
	hasnt "one process: no pool to wait for" "$tmp/r.txt" 'pool (full|not full)'
	has "one process: the row" "$tmp/r.txt" '^nullop_stream_sync [0-9.]+ us$'
else
	echo "skip run.sh's pool wait: no axond, axonctl, drvbench or kernels.cubin in $build"
fi

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
