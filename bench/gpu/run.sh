#!/bin/sh
# SPDX-License-Identifier: MIT
# Native vs axon, side by side, on a GPU machine (issue 4's benchmark rows).
#
#   bench/gpu/run.sh BUILD [VENDOR_LIB]
#
# Parts, in the order they run (BENCH_PARTS picks some: drv,blas,torch,conc;
# prof runs only when named):
#   drv    $BUILD/bench/gpu/drvbench: driver-API costs
#   blas   $BUILD/bench/gpu/blasbench: cuBLAS SGEMM through shared cudart
#   torch  bench/gpu/torchbench.py ($TORCH_PYTHON, default python3):
#          training steps/s, a bf16 matmul, tiny elementwise ops
#   conc   1, 8 and 32 concurrent launch-bound clients
#          ($BUILD/bench/gpu/loopclient, started by bench/gpu/clients.sh)
#   prof   through axon only, with the daemon's and the clients' profiles
#          (AXOND_PROFILE=1, AXON_PROFILE=1): drvbench's modload, bw, copy4
#          and nullop groups and one PyTorch MLP child; prints the profiles
# drv, blas and torch each run twice:
#   native  NVIDIA's libcuda.so.1 (LD_LIBRARY_PATH=dirname(VENDOR_LIB), no
#           AXON_ADDR). Skipped when VENDOR_LIB does not exist (a machine
#           without a GPU).
#   axon    a private axond, fresh for each part (--backend=cuda
#           --vendor-lib=VENDOR_LIB, or --backend=sim without the vendor
#           library; AXON_BENCH_BACKEND overrides) on a unix socket in a
#           temporary directory, and the program with LD_LIBRARY_PATH=
#           $BUILD/lib first and AXON_ADDR=unix:that.
# conc runs in three configurations: native (the clients time-slice the
# GPU), under MPS (a private nvidia-cuda-mps-control in a temporary pipe and
# log directory; when it cannot start or does not serve the clients, the
# rows say why) and through axon.
# In the axon run of drvbench, DRVBENCH_STATS_CMD prints axond's counters
# for it after each group (axonctl stats: sync ops, deferred ops, crossings;
# and the JSON document with counts by op), as '#' lines.
# Then it prints the machine, every raw output, one side-by-side table with
# axon/native ratios (bench/gpu/sidebyside.awk), issue 4's targets as met /
# NOT met, and the concurrent clients' table (bench/gpu/concurrent.awk).
#
# Environment: VENDOR_LIB (default /usr/local/nvidia/lib64/libcuda.so.1),
# BENCH_PARTS (default drv,blas,torch,conc), DRVBENCH_ARGS (e.g. --quick,
# --only launch,bw), BENCH_QUICK=1 (blasbench and torchbench --quick, 2 s
# fewer per client count), AXON_BENCH_BACKEND, AXOND_ARGS (extra axond
# options), BENCH_TIMEOUT (seconds per drvbench half, 170), BLAS_TIMEOUT
# (per half, 90), TORCH_TIMEOUT (per half, 300; TORCHBENCH_TIMEOUT, per
# group, 60), TORCH_PYTHON (python3), CONC_CLIENTS ("1 8 32"), CONC_LOOP
# (launches per loop, 100), CONC_SECONDS (per client count, 2),
# CONC_READY_TIMEOUT (seconds for the clients' set-up, 60),
# BENCH_NATIVE=0 (axon halves only; conc: axon only), BENCH_SETTLE=0 (run
# each client as soon as axond listens, its worker pool still filling; by
# default the bench waits for a full pool, axond_settle), BENCH_KEEP_LOGS (a
# directory: every axond log is copied there; with AXOND_PROFILE=1 in the
# environment they hold the executor profiles, axond/cuda/profile.h), CUDA
# (/usr/local/cuda: where blasbench's libcublas and libcudart are).
set -u
build=${1:?usage: run.sh BUILD [VENDOR_LIB]}
vendor=${2:-${VENDOR_LIB:-/usr/local/nvidia/lib64/libcuda.so.1}}
here=$(dirname "$0")
parts=${BENCH_PARTS:-drv,blas,torch,conc}
args=${DRVBENCH_ARGS:-}
limit=${BENCH_TIMEOUT:-170}
quick=$([ "${BENCH_QUICK:-0}" = 1 ] && echo --quick)
cuda=${CUDA:-/usr/local/cuda}
py=${TORCH_PYTHON:-python3}
vdir=$(dirname "$vendor")
bin=$build/bench/gpu/drvbench
blas=$build/bench/gpu/blasbench
loopc=$build/bench/gpu/loopclient
cubin=$build/tests/data/kernels.cubin
ptx=$build/tests/data/kernels.ptx
[ -r "$ptx" ] || ptx=

for f in "$build/bin/axond" "$build/lib/libcuda.so.1" "$cubin"; do
	if [ ! -e "$f" ]; then
		echo "run.sh: $f missing (make BUILD=$build all test-progs bench-gpu-progs)" >&2
		exit 2
	fi
done

want() { case ",$parts," in *,"$1",*) return 0 ;; esac; return 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/axon-bench.XXXXXX") || exit 1
apid=
mps_on=0
mps_ctl=
mps_dir=$tmp/mps
mps_env() {
	env -u AXON_ADDR CUDA_MPS_PIPE_DIRECTORY="$mps_dir/pipe" \
		CUDA_MPS_LOG_DIRECTORY="$mps_dir/log" LD_LIBRARY_PATH="$vdir" "$@"
}
cleanup() {
	[ -n "$apid" ] && kill -TERM "$apid" 2>/dev/null && wait "$apid" 2>/dev/null
	[ "$mps_on" = 1 ] && echo quit | mps_env timeout 10 "$mps_ctl" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the machine ----------------------------------------------------------
echo "== machine"
echo "date:    $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "host:    $(uname -srm)"
echo "cpus:    $(nproc) usable of $(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?'); $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
echo "memory:  $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
echo "load:    $(cut -d' ' -f1-3 /proc/loadavg)"
smi=
for s in nvidia-smi "$(dirname "$vdir")/bin/nvidia-smi"; do
	command -v "$s" >/dev/null 2>&1 && { smi=$s; break; }
done
if [ -n "$smi" ]; then
	"$smi" --query-gpu=index,name,driver_version,memory.total,persistence_mode,pstate,clocks.sm,clocks.max.sm \
		--format=csv,noheader 2>/dev/null | sed 's/^/gpu:     /'
else
	echo "gpu:     (no nvidia-smi)"
fi
[ -r /proc/driver/nvidia/version ] && sed -n '1s/^/driver:  /p' /proc/driver/nvidia/version
echo "vendor:  $vendor$([ -e "$vendor" ] && echo " -> $(readlink -f "$vendor")" || echo ' (absent)')"
echo "args:    ${args:-(none)}"
echo "parts:   $parts${quick:+ (quick)}"
echo

native=1
if [ "${BENCH_NATIVE:-1}" = 0 ]; then
	native=0
	nwhy="BENCH_NATIVE=0"
elif [ ! -e "$vendor" ]; then
	native=0
	nwhy="$vendor absent: no NVIDIA driver on this machine"
fi
backend=${AXON_BENCH_BACKEND:-$([ -e "$vendor" ] && echo cuda || echo sim)}

# run_cmd LABEL OUT LIMIT CMD...: CMD (under timeout) with stdout to OUT;
# shows OUT, the head of its stderr, its exit status and time.
run_cmd() {
	label=$1 out=$2 lim=$3
	shift 3
	t0=$(date +%s)
	timeout -k 5 "$lim" "$@" >"$out" 2>"$out.err"
	rc=$?
	t1=$(date +%s)
	cat "$out"
	sed "s/^/$label stderr: /" "$out.err" | head -n 20
	[ "$rc" = 124 ] && echo "$label: killed after $lim s"
	echo "$label rc=$rc, $((t1 - t0)) s"
}

# axond_settle: with --isolation=process (the cuda backend's default), waits
# (60 s at most) until the supervisor's pool of ready workers is full
# (workers_ready >= workers_target, none starting) and says how long it took.
# A fresh axond starts its pool's workers for some seconds (8 on the H200),
# and a worker starting competes in the driver with the client being served:
# on the H200 (2026-11-29) sgemm_4096's p99 window fell to 14.6-20.8 TFLOP/s
# with the pool filling, 50.7-50.9 with it full. A system's axond is long
# started when its clients come; BENCH_SETTLE=0 measures the fresh daemon.
axond_settle() {
	[ "${BENCH_SETTLE:-1}" = 1 ] && [ -x "$build/bin/axonctl" ] || return 0
	t0=$(date +%s%N)
	while [ $(($(date +%s%N) - t0)) -lt 60000000000 ]; do
		kill -0 "$apid" 2>/dev/null || return 1	# axond died
		doc=$(LD_LIBRARY_PATH="$build/lib" "$build/bin/axonctl" --addr "unix:$sock" \
			stats --json 2>/dev/null)
		case $doc in
		*'"isolation":"process"'*) ;;
		*'"daemon"'*) return 0 ;;	# one process: no pool
		esac
		r=$(printf '%s\n' "$doc" | sed -n 's/.*"workers_ready":\([0-9]*\).*/\1/p')
		st=$(printf '%s\n' "$doc" | sed -n 's/.*"workers_starting":\([0-9]*\).*/\1/p')
		tg=$(printf '%s\n' "$doc" | sed -n 's/.*"workers_target":\([0-9]*\).*/\1/p')
		if [ -n "$r" ] && [ -n "$tg" ] && [ "$r" -ge "$tg" ] && [ "$st" = 0 ]; then
			echo "   pool full: $r workers ready after $((($(date +%s%N) - t0) / 1000000)) ms"
			return 0
		fi
		sleep 0.1
	done
	echo "   pool not full after 60 s: ${r:-?} ready, ${st:-?} starting, target ${tg:-?}"
	return 0
}

# axond_up NAME HEADER: starts a private axond (socket $sock, pid $apid),
# printing HEADER and its command line; 1 when it did not start.
axond_up() {
	sock=$tmp/axond-$1.sock
	alog=$tmp/axond-$1.log
	hdr=$2
	set -- --backend="$backend" --listen="unix:$sock"
	[ "$backend" = cuda ] && set -- "$@" --vendor-lib="$vendor"
	[ "$backend" = sim ] && set -- "$@" --sim-kernels="$build/lib/axon-sim-kernels.so"
	echo "$hdr $build/bin/axond $* ${AXOND_ARGS:-}"
	# shellcheck disable=SC2086
	"$build/bin/axond" "$@" ${AXOND_ARGS:-} >"$alog" 2>&1 &
	apid=$!
	i=0
	while [ ! -S "$sock" ] && [ $i -lt 300 ] && kill -0 "$apid" 2>/dev/null; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -S "$sock" ] && axond_settle && return 0
	echo "axond did not start, or ended while its worker pool filled; its log:"
	cat "$alog"
	kill -TERM "$apid" 2>/dev/null && wait "$apid" 2>/dev/null
	apid=
	return 1
}

# axond_down LINES: stops it; shows its exit status and the tail of its log.
axond_down() {
	kill -TERM "$apid" 2>/dev/null
	wait "$apid"
	echo "axond rc=$?"
	apid=
	echo "-- axond log (last $1 lines)"
	tail -n "$1" "$alog"
	[ -n "${BENCH_KEEP_LOGS:-}" ] && mkdir -p "$BENCH_KEEP_LOGS" &&
		cp "$alog" "$BENCH_KEEP_LOGS/"
}

# na_rows WHY NAME UNIT [NAME UNIT...]: n/a rows, for a program that could not run.
na_rows() {
	why=$1
	shift
	while [ $# -ge 2 ]; do
		echo "$1 n/a $2 # $why"
		shift 2
	done
}
# part_na HEADER PART WHY NAME UNIT...: PART's program cannot run here:
# says so (HEADER), and its rows are n/a through axon, and natively when
# there is a native run.
part_na() {
	echo "$1"
	part=$2 why=$3
	shift 3
	na_rows "$why" "$@" >"$tmp/$part.axon.txt"
	[ "$native" = 1 ] && cp "$tmp/$part.axon.txt" "$tmp/$part.native.txt"
	cat "$tmp/$part.axon.txt"
}
BLAS_ROWS="cublas_create ms sgemm_first ms sgemm_1024 TFLOP/s sgemm_4096 TFLOP/s sgemm_8192 TFLOP/s sgemm_64_rate call/s sgemm_64_sync us"
TORCH_ROWS="torch_cuda_init ms torch_train_mlp step/s torch_train_cnn step/s torch_matmul_bf16 TFLOP/s torch_tiny_ops op/s"

# ---- drv: drvbench, native then axon ------------------------------------------
: >"$tmp/drv.native.txt"
: >"$tmp/drv.axon.txt"
if want drv && [ ! -x "$bin" ]; then
	echo "== drvbench: $bin missing (make BUILD=$build bench-gpu-progs)"
	echo
elif want drv; then
	if [ "$native" = 1 ]; then
		echo "== native: LD_LIBRARY_PATH=$vdir $bin $args $cubin $ptx"
		# shellcheck disable=SC2086
		run_cmd native "$tmp/drv.native.txt" "$limit" \
			env -u AXON_ADDR LD_LIBRARY_PATH="$vdir" "$bin" $args "$cubin" $ptx
	else
		echo "== native: skipped ($nwhy)"
	fi
	echo
	if axond_up drv "== axon:"; then
		echo "   AXON_ADDR=unix:$sock LD_LIBRARY_PATH=$build/lib $bin $args $cubin $ptx"
		stats=
		[ -x "$build/bin/axonctl" ] &&
			stats="'$build/bin/axonctl' --addr 'unix:$sock' stats 2>&1 |
  awk -v g=\"\$DRVBENCH_GROUP\" '/ COMM / || / drvbench / { print \"# stats after \" g \": \" \$0 }';
'$build/bin/axonctl' --addr 'unix:$sock' stats --json 2>&1 |
  sed \"s/^/# stats-json after \$DRVBENCH_GROUP: /\""
		# shellcheck disable=SC2086
		run_cmd axon "$tmp/drv.axon.txt" "$limit" \
			env AXON_ADDR="unix:$sock" LD_LIBRARY_PATH="$build/lib" DRVBENCH_STATS_CMD="$stats" \
			"$bin" $args "$cubin" $ptx
		axond_down 25
	fi
	echo
fi

# ---- blas: blasbench, native then axon -----------------------------------------
: >"$tmp/blas.native.txt"
: >"$tmp/blas.axon.txt"
if want blas; then
	blas_why=
	if [ ! -x "$blas" ]; then
		blas_why="$blas not built (needs nvcc: make BUILD=$build bench-gpu-progs)"
	else
		# libcublas / libcudart: $CUDA/lib64 (blasbench's runpath), else the
		# NVIDIA wheels of the Python that has PyTorch.
		blas_libs=$cuda/lib64
		if ldd "$blas" 2>/dev/null | grep -q 'not found'; then
			pre=$("$py" -c 'import sys; print(sys.prefix)' 2>/dev/null)
			for l in libcublas.so.13 libcudart.so.13; do
				f=$([ -n "$pre" ] && find "$pre" -name "$l" 2>/dev/null | head -n 1)
				[ -n "$f" ] && blas_libs=$blas_libs:$(dirname "$f")
			done
			if LD_LIBRARY_PATH=$blas_libs ldd "$blas" 2>/dev/null | grep -q 'not found'; then
				blas_why="$(LD_LIBRARY_PATH=$blas_libs ldd "$blas" 2>/dev/null | awk '/not found/ { printf "%s%s", s, $1; s = ", " }') not found"
			fi
		fi
	fi
	if [ -n "$blas_why" ]; then
		# shellcheck disable=SC2086
		part_na "== blasbench: $blas_why" blas "$blas_why" $BLAS_ROWS
	else
		lim=${BLAS_TIMEOUT:-90}
		if [ "$native" = 1 ]; then
			echo "== native blasbench: LD_LIBRARY_PATH=$vdir:$blas_libs $blas $quick"
			# shellcheck disable=SC2086
			run_cmd native "$tmp/blas.native.txt" "$lim" \
				env -u AXON_ADDR LD_LIBRARY_PATH="$vdir:$blas_libs" "$blas" $quick
		else
			echo "== native blasbench: skipped ($nwhy)"
		fi
		echo
		if axond_up blas "== axon blasbench:"; then
			echo "   AXON_ADDR=unix:$sock LD_LIBRARY_PATH=$build/lib:$blas_libs $blas $quick"
			# shellcheck disable=SC2086
			run_cmd axon "$tmp/blas.axon.txt" "$lim" \
				env AXON_ADDR="unix:$sock" LD_LIBRARY_PATH="$build/lib:$blas_libs" "$blas" $quick
			axond_down 10
		fi
	fi
	echo
fi

# ---- torch: torchbench.py, native then axon ------------------------------------
: >"$tmp/torch.native.txt"
: >"$tmp/torch.axon.txt"
if want torch; then
	if ! command -v "$py" >/dev/null 2>&1; then
		# shellcheck disable=SC2086
		part_na "== torchbench: no $py" torch "no $py on this machine" $TORCH_ROWS
	else
		lim=${TORCH_TIMEOUT:-300}
		# PyTorch's own libraries come by rpath; only libcuda.so.1 is ours
		# to choose, by being first in the search path.
		lp=${LD_LIBRARY_PATH:-}
		if [ "$native" = 1 ]; then
			echo "== native torchbench: LD_LIBRARY_PATH=$vdir${lp:+:$lp} $py $here/torchbench.py $quick"
			# shellcheck disable=SC2086
			run_cmd native "$tmp/torch.native.txt" "$lim" \
				env -u AXON_ADDR LD_LIBRARY_PATH="$vdir${lp:+:$lp}" PYTHONUNBUFFERED=1 \
				"$py" "$here/torchbench.py" $quick
		else
			echo "== native torchbench: skipped ($nwhy)"
		fi
		echo
		if axond_up torch "== axon torchbench:"; then
			echo "   AXON_ADDR=unix:$sock LD_LIBRARY_PATH=$build/lib${lp:+:$lp} $py $here/torchbench.py $quick"
			# shellcheck disable=SC2086
			run_cmd axon "$tmp/torch.axon.txt" "$lim" \
				env AXON_ADDR="unix:$sock" LD_LIBRARY_PATH="$build/lib${lp:+:$lp}" PYTHONUNBUFFERED=1 \
				"$py" "$here/torchbench.py" $quick
			axond_down 10
		fi
	fi
	echo
fi

# ---- conc: concurrent launch-bound clients: native, MPS, axon ------------------
: >"$tmp/conc.native.txt"
: >"$tmp/conc.mps.txt"
: >"$tmp/conc.axon.txt"
counts=${CONC_CLIENTS:-1 8 32}
clen=${CONC_LOOP:-100}
csecs=${CONC_SECONDS:-$([ -n "$quick" ] && echo 1 || echo 2)}
# conc_na FILE WHY: n/a rows for every client count.
conc_na() {
	for c in $counts; do
		na_rows "$2" "conc${c}_rate" launch/s "conc${c}_loop" us "conc${c}_fair" min/max
	done >>"$1"
	cat "$1"
}
# conc_run MODE ENV...: clients.sh for each client count, in that
# environment. Clients that never got ready (a hang in set-up) skip the
# larger counts, which would only hang longer.
conc_run() {
	mode=$1
	shift
	hung=
	for c in $counts; do
		if [ -n "$hung" ]; then
			na_rows "skipped: $hung" "conc${c}_rate" launch/s "conc${c}_loop" us "conc${c}_fair" min/max
			continue
		fi
		READY_TIMEOUT=${CONC_READY_TIMEOUT:-60} RUN_TIMEOUT=$((csecs + 30)) \
			"$here/clients.sh" "conc$c" "$c" "$tmp/conc-$mode-$c" -- \
			env "$@" "$loopc" "$cubin" "$clen" "$csecs" >"$tmp/conc.$mode.$c.txt" 2>&1
		grep -q 'not ready after' "$tmp/conc.$mode.$c.txt" &&
			hung="the conc$c clients did not get ready"
		if [ "$mode" = mps ] && [ "$mps_on" = 1 ]; then
			# A client that cannot reach the MPS control daemon runs
			# without MPS, silently: count only runs an MPS server saw
			# (one is running, or one has written its log).
			srv=$(echo get_server_list | mps_env timeout 10 "$mps_ctl" 2>/dev/null | tr '\n' ' ')
			echo "# MPS after conc$c: server(s) ${srv:-none}" >>"$tmp/conc.$mode.$c.txt"
			if [ -z "$srv" ] && [ ! -s "$mps_dir/log/server.log" ]; then
				awk -v w="no MPS server was running after the clients: they ran without MPS" \
					'/^#/ { print; next } $1 !~ /\.(p99|mean)$/ { print $1, "n/a", $3, "# " w }' \
					"$tmp/conc.$mode.$c.txt" >"$tmp/conc.x" && mv "$tmp/conc.x" "$tmp/conc.$mode.$c.txt"
			fi
		fi
		cat "$tmp/conc.$mode.$c.txt"
	done | tee -a "$tmp/conc.$mode.txt"
}
# mps_up: a private MPS control daemon; 1 (and $mps_why) when it cannot run.
mps_up() {
	mps_why=
	[ -e "$vendor" ] || { mps_why="no NVIDIA driver ($vendor absent)"; return 1; }
	for s in nvidia-cuda-mps-control "$(dirname "$vdir")/bin/nvidia-cuda-mps-control"; do
		command -v "$s" >/dev/null 2>&1 && { mps_ctl=$s; break; }
	done
	[ -n "$mps_ctl" ] || { mps_why="nvidia-cuda-mps-control not found (PATH, $(dirname "$vdir")/bin)"; return 1; }
	mkdir -p "$mps_dir/pipe" "$mps_dir/log" || { mps_why="mkdir $mps_dir failed"; return 1; }
	echo "   CUDA_MPS_PIPE_DIRECTORY=$mps_dir/pipe CUDA_MPS_LOG_DIRECTORY=$mps_dir/log $mps_ctl -d"
	if ! mps_env "$mps_ctl" -d >"$mps_dir/start.out" 2>&1; then
		mps_why="nvidia-cuda-mps-control -d failed: $(tr '\n' ' ' <"$mps_dir/start.out")"
		return 1
	fi
	mps_on=1
	# The daemon answers on its pipe once it is up.
	i=0
	while [ $i -lt 50 ]; do
		echo get_server_list | mps_env timeout 5 "$mps_ctl" >/dev/null 2>&1 && return 0
		sleep 0.1
		i=$((i + 1))
	done
	mps_why="the MPS control daemon does not answer: $(tail -n 3 "$mps_dir/log/control.log" 2>/dev/null | tr '\n' ' ')"
	return 1
}
mps_down() {
	echo quit | mps_env timeout 10 "$mps_ctl" >/dev/null 2>&1
	mps_on=0
	echo "-- MPS control.log (last 8 lines)"
	tail -n 8 "$mps_dir/log/control.log" 2>/dev/null
	echo "-- MPS server.log (last 4 lines)"
	tail -n 4 "$mps_dir/log/server.log" 2>/dev/null
}
if want conc; then
	echo "== concurrent clients: $counts at once, each $clen x cuLaunchKernel(nop) + cuStreamSynchronize per loop, for $csecs s"
	cwhy=
	[ -x "$loopc" ] || cwhy="$loopc missing (make BUILD=$build bench-gpu-progs)"
	echo "-- native (time-sliced)"
	if [ -n "$cwhy" ]; then
		conc_na "$tmp/conc.native.txt" "$cwhy"
	elif [ "$native" = 1 ]; then
		conc_run native -u AXON_ADDR -u CUDA_MPS_PIPE_DIRECTORY LD_LIBRARY_PATH="$vdir"
	else
		conc_na "$tmp/conc.native.txt" "$nwhy"
	fi
	echo "-- MPS"
	if [ -n "$cwhy" ]; then
		conc_na "$tmp/conc.mps.txt" "$cwhy"
	elif [ "$native" = 0 ]; then
		conc_na "$tmp/conc.mps.txt" "$nwhy"
	elif mps_up; then
		conc_run mps -u AXON_ADDR CUDA_MPS_PIPE_DIRECTORY="$mps_dir/pipe" LD_LIBRARY_PATH="$vdir"
		mps_down
	else
		[ "$mps_on" = 1 ] && mps_down
		conc_na "$tmp/conc.mps.txt" "MPS: $mps_why"
	fi
	echo "-- axon"
	if [ -n "$cwhy" ]; then
		conc_na "$tmp/conc.axon.txt" "$cwhy"
	elif axond_up conc "   "; then
		conc_run axon AXON_ADDR="unix:$sock" LD_LIBRARY_PATH="$build/lib"
		axond_down 10
	else
		conc_na "$tmp/conc.axon.txt" "axond did not start"
	fi
	echo
fi

# ---- prof: where axon's time goes (axon only; not a default part) -------------
# axond with AXOND_PROFILE=1 (the executor's and module loads' profile, in
# its log) and clients with AXON_PROFILE=1 (the client's synchronous waits
# by operation, ring-room waits, staging copies, on stderr): drvbench's
# module-load, copy and null-op groups, then one PyTorch MLP child.
if want prof; then
	pq=$([ "${BENCH_QUICK:-0}" = 1 ] && echo --quick)
	export AXOND_PROFILE=1
	if axond_up prof "== profile (axon only): AXOND_PROFILE=1"; then
		echo "-- drvbench --only modload,bw,copy4,nullop $pq, AXON_PROFILE=1"
		# shellcheck disable=SC2086
		env AXON_ADDR="unix:$sock" LD_LIBRARY_PATH="$build/lib" AXON_PROFILE=1 \
			timeout "$limit" "$bin" --only modload,bw,copy4,nullop $pq "$cubin" $ptx 2>&1 |
			grep -v '^#'
		if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import torch' 2>/dev/null; then
			echo "-- torchbench.py --child mlp $quick, AXON_PROFILE=1"
			lp=${LD_LIBRARY_PATH:-}
			# shellcheck disable=SC2086
			env AXON_ADDR="unix:$sock" LD_LIBRARY_PATH="$build/lib${lp:+:$lp}" \
				AXON_PROFILE=1 PYTHONUNBUFFERED=1 timeout "${TORCH_TIMEOUT:-300}" \
				"$py" "$here/torchbench.py" $quick --child mlp 2>&1 |
				grep -E '^(torch_|axon: profile)'
		else
			echo "-- torchbench: skipped (no $py with torch)"
		fi
		axond_down 0
		echo "-- axond's profile lines"
		grep 'profile:' "$alog" | sed 's/^axond\[[0-9.]*\] //'
	fi
	unset AXOND_PROFILE
	echo
fi

# ---- side by side -----------------------------------------------------------
if want drv || want blas || want torch; then
	cat "$tmp/drv.native.txt" "$tmp/blas.native.txt" "$tmp/torch.native.txt" >"$tmp/native.txt"
	cat "$tmp/drv.axon.txt" "$tmp/blas.axon.txt" "$tmp/torch.axon.txt" >"$tmp/axon.txt"
	echo "== side by side: value = p50 (module-load repeat: mean; rates: at the p50 time), [p99]"
	echo "   ratio = axon / native; 'better' says which direction is better for the row"
	awk -v native="$native" -v backend="$backend" -f "$here/rows.awk" -f "$here/sidebyside.awk" \
		"$tmp/native.txt" "$tmp/axon.txt"
	echo
fi
if want conc; then
	echo "== concurrent clients: native (time-sliced), MPS, axon ($counts clients; $clen launches + sync per loop; $csecs s)"
	echo "   rate = all clients' launches/s summed; loop = median client's p50 loop time [worst client's p99];"
	echo "   fair = slowest client's launch rate / fastest client's"
	awk -v backend="$backend" -f "$here/rows.awk" -f "$here/concurrent.awk" \
		"$tmp/conc.native.txt" "$tmp/conc.mps.txt" "$tmp/conc.axon.txt"
fi
