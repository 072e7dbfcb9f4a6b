#!/bin/bash
# SPDX-License-Identifier: MIT
# The GPU check (Documentation/testing-gpu.md): every case of tests/gpu/cases
# (and every unlisted BUILD/tests/gpu/drv-* and rt-* program) natively and
# through axon, outputs compared, each axon client checked by isocheck.so to
# hold no /dev/nvidia* descriptor or mapping and to have loaded no libcuda and
# no libnvidia-ml (NVML, which PyTorch loads) but ours. Prints a pass table;
# exits 1 when any case failed, 2 when it could not run at all.
#
#   tests/gpu/gpucheck.sh BUILD [VENDOR_LIB]
#
# BUILD holds what `make gpu-progs` builds (bin/axond, lib/libcuda.so.1,
# lib/libnvidia-ml.so.1, tests/gpu/*, tests/cudart/*, tests/data/kernels.*).
# Nothing is built here: binaries built on another machine and carried over
# run as they are.
#
# Native run:  no AXON_ADDR; LD_LIBRARY_PATH=dirname(VENDOR_LIB):$CUDA/lib64.
#              isocheck.so is preloaded here too, as a test of the checker: a
#              native client that loaded libcuda must be flagged ("native
#              runs flagged" under the table).
# Axon run:    a private axond --backend=cuda --vendor-lib=VENDOR_LIB on a unix
#              socket of its own; AXON_ADDR=unix:that,
#              LD_LIBRARY_PATH=BUILD/lib:$CUDA/lib64 (so libnvidia-ml.so.1 is
#              ours too, which isocheck.so expects beside the shim).
# Python:      no $CUDA/lib64 (torch has its own CUDA libraries); also
#              TRITON_LIBCUDA_PATH (a directory with libcuda.so and
#              libcuda.so.1 linking to the run's libcuda), fresh Triton and
#              Inductor caches per run, NCCL_NVLS_ENABLE=0,
#              TORCH_SYMM_MEM_DISABLE_MULTICAST=1.
# Same output: stdout and stderr (stdout only with the flag "stdout") after
#              dropping isocheck's own lines and rt-check.h's "process check"
#              line, and writing "driver N" for a driver version and "T ms"
#              for a time in ms (the only lines allowed to differ).
#
# Environment:
#   VENDOR_LIB        NVIDIA's libcuda.so.1 (default /usr/local/nvidia/lib64/...)
#   CUDA              toolkit (default /usr/local/cuda), for cuBLAS/cuFFT/cudart
#   PYTHON            default python3
#   GPUCHECK_OUT      directory for every run's logs (default: a temp dir,
#                     kept and named at the end)
#   GPUCHECK_TIMEOUT  seconds per run (default 120; a case's t=N wins)
#   GPUCHECK_CASES    only the cases whose names match these shell patterns
#   GPUCHECK_BACKEND  cuda (default) or sim: sim runs only the cases flagged
#                     "sim", through axon only (what `make check` runs)
#   GPUCHECK_SIM_MEM  the sim's --sim-mem (default 4G)
#   AXOND_ARGS        more axond options
set -u
build=${1:?usage: gpucheck.sh BUILD [VENDOR_LIB]}
vendor=${2:-${VENDOR_LIB:-/usr/local/nvidia/lib64/libcuda.so.1}}
src=$(cd "$(dirname "$0")/../.." && pwd)
B=$(cd "$build" 2>/dev/null && pwd) || { echo "gpucheck: no $build" >&2; exit 2; }
cuda=${CUDA:-/usr/local/cuda}
python=${PYTHON:-python3}
backend=${GPUCHECK_BACKEND:-cuda}
limit=${GPUCHECK_TIMEOUT:-120}
shim=$B/lib/libcuda.so.1
nvml=$B/lib/libnvidia-ml.so.1
iso=$B/tests/gpu/isocheck.so

for f in "$B/bin/axond" "$shim" "$nvml" "$iso"; do
	[ -e "$f" ] || { echo "gpucheck: $f missing (make BUILD=$build gpu-progs)" >&2; exit 2; }
done
case $backend in
cuda)	[ -e "$vendor" ] || { echo "gpucheck: $vendor missing: no NVIDIA driver here" >&2; exit 2; }
	native=1 ;;
sim)	native=0 ;;
*)	echo "gpucheck: GPUCHECK_BACKEND=$backend: cuda or sim" >&2; exit 2 ;;
esac

if [ -n "${GPUCHECK_OUT:-}" ]; then
	out=$GPUCHECK_OUT
	mkdir -p "$out" || exit 2
else
	out=$(mktemp -d "${TMPDIR:-/tmp}/gpucheck.XXXXXX") || exit 2
fi
out=$(cd "$out" && pwd)
# The socket and the libcuda link directories: a short path of our own
# (AF_UNIX paths are short; GPUCHECK_OUT may be long).
tmp=$(mktemp -d /tmp/gpucheck-run.XXXXXX) || exit 2
sock=$tmp/axond.sock
apid=
# shellcheck disable=SC2317  # (called by the trap)
cleanup() {
	if [ -n "$apid" ]; then
		kill -TERM "$apid" 2>/dev/null
		wait "$apid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A sanitizer build's shim needs the sanitizer runtimes first in a process
# that was not built with them (nvcc's programs, python3).
san_preload=
if command -v readelf >/dev/null 2>&1 && readelf -d "$shim" 2>/dev/null | grep -q 'libasan'; then
	cc=${CC:-gcc}
	san_preload="$($cc -print-file-name=libasan.so) $($cc -print-file-name=libubsan.so)"
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
fi

# libcuda.so and libcuda.so.1 for Triton's launcher (it links -lcuda).
mkdir -p "$tmp/libcuda-native" "$tmp/libcuda-axon"
ln -sf "$shim" "$tmp/libcuda-axon/libcuda.so.1"
ln -sf "$shim" "$tmp/libcuda-axon/libcuda.so"
ln -sf "$vendor" "$tmp/libcuda-native/libcuda.so.1"
ln -sf "$vendor" "$tmp/libcuda-native/libcuda.so"

# ---- the cases --------------------------------------------------------------
names=() exits=() flagss=() cmds=()
listed=" "
add_case() {	# NAME EXIT FLAGS COMMAND...
	local name=$1 ex=$2 fl=$3
	shift 3
	if [ -n "${GPUCHECK_CASES:-}" ]; then
		local keep=0 p
		for p in $GPUCHECK_CASES; do
			# shellcheck disable=SC2254
			case $name in $p) keep=1 ;; esac
		done
		[ $keep = 1 ] || return 0
	fi
	if [ "$backend" = sim ]; then
		case ",$fl," in *,sim,*) ;; *) return 0 ;; esac
	fi
	names+=("$name") exits+=("$ex") flagss+=("$fl") cmds+=("$*")
}
while read -r name ex fl cmd; do
	case $name in ''|'#'*) continue ;; esac
	add_case "$name" "$ex" "$fl" "$cmd"
	listed="$listed${cmd%% *} "
done <"$src/tests/gpu/cases"
for p in "$B"/tests/gpu/drv-* "$B"/tests/gpu/rt-*; do
	{ [ -f "$p" ] && [ -x "$p" ]; } || continue
	rel=tests/gpu/${p##*/}
	case $listed in *" $rel "*) continue ;; esac
	add_case "${p##*/}" 0 stdout "$rel @CUBIN"
done
if [ ${#names[@]} -eq 0 ]; then
	echo "gpucheck: no case to run (GPUCHECK_CASES=${GPUCHECK_CASES:-}, backend $backend)"
	exit 77
fi

flag() {	# FLAGS NAME: 0 when the comma list FLAGS has NAME
	case ",$1," in *",$2,"*) return 0 ;; *) return 1 ;; esac
}
case_timeout() {
	local f t=$limit
	for f in ${1//,/ }; do
		case $f in t=*) t=${f#t=} ;; esac
	done
	echo "$t"
}

# The command line of a case as words, with @ arguments resolved.
resolve() {
	local w words=() first=1
	for w in $1; do
		case $w in
		@CUBIN)  w=$B/tests/data/kernels.cubin ;;
		@PTX)    w=$B/tests/data/kernels.ptx ;;
		@FATBIN) w=$B/tests/data/kernels.fatbin ;;
		*) if [ $first = 1 ]; then
			if [ "$2" = py ]; then w=$src/$w; else w=$B/$w; fi
		   fi ;;
		esac
		words+=("$w")
		first=0
	done
	printf '%s\n' "${words[@]}"
}

have_torch=
torch_ok() {
	if [ -z "$have_torch" ]; then
		if "$python" -c 'import torch' >/dev/null 2>&1; then have_torch=1; else have_torch=0; fi
	fi
	[ "$have_torch" = 1 ]
}

normalize() {	# FILE: what is compared
	sed -E -e '/^isocheck: /d' -e '/^process check/d' \
		-e 's/driver [0-9]+/driver N/g' -e 's/[0-9]+(\.[0-9]+)? ms\b/T ms/g' "$1"
}

# run_one SIDE CASE-INDEX: runs the case natively (SIDE=native) or through
# axon; leaves $out/NAME.SIDE.{out,err,iso,ran,rc}.
run_one() {
	local side=$1 i=$2
	local name=${names[$i]} fl=${flagss[$i]}
	local base=$out/$name.$side t words=() rc preload
	t=$(case_timeout "$fl")
	mapfile -t words < <(resolve "${cmds[$i]}" "$(flag "$fl" py && echo py)")
	flag "$fl" py && words=("$python" "${words[@]}")
	# PyTorch brings its own CUDA libraries (its wheels, by RUNPATH), which
	# the toolkit's on LD_LIBRARY_PATH would override.
	local cudalib=:$cuda/lib64
	flag "$fl" py && cudalib=
	rm -f "$base.out" "$base.err" "$base.iso" "$base.ran"
	: >"$base.iso"
	: >"$base.ran"
	local env=(AXON_ISOCHECK_LIBCUDA="$shim" AXON_ISOCHECK_OUT="$base.iso"
		   AXON_ISOCHECK_RAN="$base.ran"
		   NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
		   TRITON_CACHE_DIR="$tmp/$name.$side.triton"
		   TORCHINDUCTOR_CACHE_DIR="$tmp/$name.$side.inductor"
		   PYTHONDONTWRITEBYTECODE=1)
	if [ "$side" = native ]; then
		env+=(LD_LIBRARY_PATH="$(dirname "$vendor")$cudalib"
		      TRITON_LIBCUDA_PATH="$tmp/libcuda-native" LD_PRELOAD="$iso")
		(cd "$src" && timeout -k 5 "$t" env -u AXON_ADDR "${env[@]}" "${words[@]}" \
			>"$base.out" 2>"$base.err")
	else
		preload="$san_preload $iso"
		# (AXON_EXPECT_LIBCUDA: tests/cudart's programs check themselves too)
		env+=(LD_LIBRARY_PATH="$B/lib$cudalib" AXON_ADDR="unix:$sock"
		      AXON_EXPECT_LIBCUDA="$shim"
		      TRITON_LIBCUDA_PATH="$tmp/libcuda-axon" LD_PRELOAD="${preload# }")
		(cd "$src" && timeout -k 5 "$t" env "${env[@]}" "${words[@]}" \
			>"$base.out" 2>"$base.err")
	fi
	rc=$?
	echo "$rc" >"$base.rc"
	{
		echo "# $side: ${words[*]}"
		echo "# exit $rc (timeout $t s)"
	} >"$base.cmd"
}

# verdict of one run: pass, FAIL(rc=N) or TIMEOUT
run_verdict() {	# BASE EXPECTED
	local rc
	rc=$(cat "$1.rc")
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo TIMEOUT; return; fi
	if [ "$2" = any ] || [ "$rc" = "$2" ]; then echo pass; else echo "FAIL(rc=$rc)"; fi
}

# ---- axond ------------------------------------------------------------------
set -- --backend="$backend" --listen="unix:$sock"
if [ "$backend" = cuda ]; then
	set -- "$@" --vendor-lib="$vendor"
else
	set -- "$@" --sim-mem="${GPUCHECK_SIM_MEM:-4G}" \
		--sim-kernels="$B/lib/axon-sim-kernels.so"
fi
# shellcheck disable=SC2086
"$B/bin/axond" "$@" ${AXOND_ARGS:-} >"$out/axond.log" 2>&1 &
apid=$!
for _ in $(seq 1 300); do
	[ -S "$sock" ] && break
	kill -0 "$apid" 2>/dev/null || break
	sleep 0.1
done
if [ ! -S "$sock" ]; then
	echo "gpucheck: axond did not start ($B/bin/axond $*); its log:"
	cat "$out/axond.log"
	apid=
	exit 2
fi

echo "== gpucheck: backend $backend, $(date -u '+%Y-%m-%d %H:%M:%S UTC'), logs in $out"
echo "   axond $* ${AXOND_ARGS:-}"
[ "$native" = 1 ] && echo "   native: $vendor"
command -v nvidia-smi >/dev/null 2>&1 &&
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null |
	sed 's/^/   gpu: /'

# ---- run --------------------------------------------------------------------
row() { printf '%-24s %-14s %-14s %-12s %s\n' "$@"; }
rows=() failed=0 flagged=0 native_runs=0 details=() died=
for i in "${!names[@]}"; do
	name=${names[$i]} fl=${flagss[$i]}
	if flag "$fl" py && ! torch_ok; then
		rows+=("$(row "$name" skip skip - "- (no torch in $python)")")
		continue
	fi
	first=$(resolve "${cmds[$i]}" "$(flag "$fl" py && echo py)" | head -n 1)
	if [ ! -e "$first" ]; then
		rows+=("$(row "$name" missing missing - "- ($first)")")
		failed=$((failed + 1))
		continue
	fi
	nv=- same=-
	if [ "$native" = 1 ]; then
		run_one native "$i"
		nv=$(run_verdict "$out/$name.native" "${exits[$i]}")
		native_runs=$((native_runs + 1))
		grep -q 'violations=[1-9]' "$out/$name.native.ran" && flagged=$((flagged + 1))
	fi
	run_one axon "$i"
	av=$(run_verdict "$out/$name.axon" "${exits[$i]}")
	if [ -z "$died" ] && ! kill -0 "$apid" 2>/dev/null; then
		died=$name	# every later axon run fails for want of a daemon
		echo "gpucheck: axond is gone after the axon run of $name" >&2
	fi
	if [ "$native" = 1 ]; then
		normalize "$out/$name.native.out" >"$out/$name.native.cmp"
		normalize "$out/$name.axon.out" >"$out/$name.axon.cmp"
		if ! flag "$fl" stdout; then
			normalize "$out/$name.native.err" >>"$out/$name.native.cmp"
			normalize "$out/$name.axon.err" >>"$out/$name.axon.cmp"
		fi
		if [ "$(cat "$out/$name.native.rc")" != "$(cat "$out/$name.axon.rc")" ]; then
			same="NO(exit)"
		elif diff -u "$out/$name.native.cmp" "$out/$name.axon.cmp" >"$out/$name.diff"; then
			same=yes
			rm -f "$out/$name.diff"
		else
			same=NO
		fi
	fi
	if [ -s "$out/$name.axon.iso" ]; then
		isov="FAIL($(wc -l <"$out/$name.axon.iso"))"
	elif ! grep -q 'libcuda=ours' "$out/$name.axon.ran"; then
		isov="no-check"
	else
		isov=ok
	fi
	bad=0
	[ "$nv" = pass ] || [ "$nv" = - ] || bad=1
	[ "$av" = pass ] || bad=1
	[ "$same" = yes ] || [ "$same" = - ] || bad=1
	[ "$isov" = ok ] || bad=1
	[ $bad = 0 ] || { failed=$((failed + 1)); details+=("$i"); }
	rows+=("$(row "$name" "$nv" "$av" "$same" "$isov")")
	printf '  %-24s native %-12s axon %-12s same %-8s isolation %s\n' "$name" "$nv" "$av" "$same" "$isov"
done

kill -TERM "$apid" 2>/dev/null
wait "$apid"
arc=$?
apid=
[ $arc = 0 ] || failed=$((failed + 1))

# ---- report -----------------------------------------------------------------
echo
row case native axon "same output" isolation
row ------------------------ -------------- -------------- ------------ ---------
printf '%s\n' "${rows[@]}"
echo
if [ "$native" = 1 ]; then
	echo "native runs flagged by isocheck: $flagged of $native_runs (a native client must be)"
	[ "$flagged" -lt "$native_runs" ] &&
		echo "WARNING: isocheck did not flag $((native_runs - flagged)) native run(s): is the checker working? (NAME.native.ran)"
fi
if [ -n "$died" ]; then
	echo "axond DIED during the axon run of $died (exit status $arc)"
else
	echo "axond exit status on SIGTERM: $arc"
fi
for i in "${details[@]}"; do
	name=${names[$i]}
	echo
	echo "-- $name (logs: $out/$name.*)"
	for side in native axon; do
		[ -e "$out/$name.$side.rc" ] || continue
		sed 's/^/   /' "$out/$name.$side.cmd"
		tail -n 8 "$out/$name.$side.err" | sed "s/^/   $side stderr| /"
		tail -n 8 "$out/$name.$side.out" | sed "s/^/   $side stdout| /"
	done
	[ -s "$out/$name.axon.iso" ] && sed 's/^/   isolation| /' "$out/$name.axon.iso" | head -n 10
	[ -e "$out/$name.diff" ] && head -n 30 "$out/$name.diff" | sed 's/^/   diff| /'
done
echo
if [ $failed = 0 ]; then
	echo "gpucheck: all ${#names[@]} cases passed ($backend)"
	exit 0
fi
echo "gpucheck: $failed of ${#names[@]} cases failed ($backend); logs in $out"
tail -n 20 "$out/axond.log" | sed 's/^/   axond| /'
exit 1
