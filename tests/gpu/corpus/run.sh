#!/bin/bash
# SPDX-License-Identifier: MIT
# The conformance corpus (Documentation/testing-gpu.md §8): CUDA programs
# nobody here wrote (NVIDIA's cuda-samples, tests/gpu/corpus/samples.list)
# and small framework programs (JAX, CuPy, PyTorch, transformers;
# tests/gpu/corpus/frameworks/list), each run natively and then through
# axon. Per program: both exit statuses, the same output after
# tests/gpu/corpus/normalise, the isolation check of every axon process
# (isocheck.so, as gpucheck.sh), and the two wall times and their ratio.
# Prints a markdown table (also OUT/table.md) and a summary line; exits 0
# when every program that passes natively passes through axon, 1 when one
# does not, 2 when nothing could run (no driver, no axond).
#
#   tests/gpu/corpus/run.sh BUILD [VENDOR_LIB]
#
# BUILD holds what `make gpu-progs` builds (bin/axond, lib/libcuda.so.1,
# lib/libnvidia-ml.so.1, tests/gpu/isocheck.so). The samples are built here,
# by tests/gpu/corpus/build-samples, from CORPUS_SAMPLES (unpacked first
# from .corpus/cuda-samples.tar.xz when only that is there).
#
# The two runs' environments are gpucheck.sh's (testing-gpu.md §2):
# native: no AXON_ADDR, LD_LIBRARY_PATH=dirname(VENDOR_LIB):$CUDA/lib64;
# axon: a private axond --backend=cuda on its own socket, AXON_ADDR,
# LD_LIBRARY_PATH=BUILD/lib:$CUDA/lib64; Python without $CUDA/lib64, with
# TRITON_LIBCUDA_PATH, fresh Triton/Inductor/CuPy caches per run,
# NCCL_NVLS_ENABLE=0 and TORCH_SYMM_MEM_DISABLE_MULTICAST=1 (also
# NVSHMEM_DISABLE_NVLS=1). isocheck.so is preloaded into both.
#
# Environment:
#   VENDOR_LIB      NVIDIA's libcuda.so.1 (default /usr/local/nvidia/lib64/...)
#   CUDA            toolkit (default /usr/local/cuda)
#   PYTHON          default python3
#   CORPUS_PARTS    "samples frameworks" (default both)
#   CORPUS_CASES    only cases whose name or sample directory matches one of
#                   these shell patterns ('0_* 1_*', 'torch-*', 'vectorAdd')
#   CORPUS_SAMPLES  cuda-samples source (default .corpus/cuda-samples)
#   CORPUS_BUILD    where the samples are built (default .corpus/build)
#   CORPUS_JOBS     build jobs (default: the CPUs)
#   CORPUS_NOBUILD  1: run the samples as CORPUS_BUILD has them, build nothing
#   CORPUS_OUT      logs and table (default a new /tmp/corpus.XXXXXX, kept)
#   CORPUS_BUDGET   seconds: no case starts after this long (default 0: no
#                   limit); the cases left are listed as "not run (budget)"
#   CORPUS_SLOW     the axon/native wall-time ratio above which a row is
#                   marked slow (default 1.5)
#   AXOND_ARGS      more axond options
set -u
build=${1:?usage: run.sh BUILD [VENDOR_LIB]}
vendor=${2:-${VENDOR_LIB:-/usr/local/nvidia/lib64/libcuda.so.1}}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
B=$(cd "$build" 2>/dev/null && pwd) || { echo "corpus: no $build" >&2; exit 2; }
cuda=${CUDA:-/usr/local/cuda}
python=${PYTHON:-python3}
parts=${CORPUS_PARTS:-samples frameworks}
parts=" ${parts//,/ } "
samples=${CORPUS_SAMPLES:-$src/.corpus/cuda-samples}
sbuild=${CORPUS_BUILD:-$src/.corpus/build}
budget=${CORPUS_BUDGET:-0}
slow=${CORPUS_SLOW:-1.5}
shim=$B/lib/libcuda.so.1
iso=$B/tests/gpu/isocheck.so
started=$(date +%s)

for f in "$B/bin/axond" "$shim" "$B/lib/libnvidia-ml.so.1" "$iso"; do
	[ -e "$f" ] || { echo "corpus: $f missing (make BUILD=$build gpu-progs)" >&2; exit 2; }
done
if [ ! -e "$vendor" ]; then
	echo "corpus: no GPU here: $vendor (NVIDIA's libcuda) is missing, so nothing runs natively."
	echo "corpus: run it on a GPU machine (Documentation/testing-gpu.md §8); VENDOR_LIB names another libcuda."
	exit 2
fi

if [ -n "${CORPUS_OUT:-}" ]; then
	out=$CORPUS_OUT
	mkdir -p "$out" || exit 2
else
	out=$(mktemp -d "${TMPDIR:-/tmp}/corpus.XXXXXX") || exit 2
fi
out=$(cd "$out" && pwd)
tmp=$(mktemp -d /tmp/corpus-run.XXXXXX) || exit 2
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

mkdir -p "$tmp/libcuda-native" "$tmp/libcuda-axon"
ln -sf "$shim" "$tmp/libcuda-axon/libcuda.so.1"
ln -sf "$shim" "$tmp/libcuda-axon/libcuda.so"
ln -sf "$vendor" "$tmp/libcuda-native/libcuda.so.1"
ln -sf "$vendor" "$tmp/libcuda-native/libcuda.so"

selected() {	# NAME DIR: 0 when CORPUS_CASES is unset or matches either
	[ -n "${CORPUS_CASES:-}" ] || return 0
	local p
	for p in $CORPUS_CASES; do
		# shellcheck disable=SC2254
		case $1 in $p) return 0 ;; esac
		# shellcheck disable=SC2254
		case $2 in $p) return 0 ;; esac
	done
	return 1
}

# ---- the cases: kind name timeout cwd command ------------------------------
kinds=() names=() limits=() dirs=() cmds=() notes=()
excluded=()	# "name<TAB>reason" of samples.list's skip lines
add() { kinds+=("$1") names+=("$2") limits+=("$3") dirs+=("$4") cmds+=("$5") notes+=("${6:-}"); }

if [[ $parts == *" samples "* ]]; then
	if [ ! -d "$samples/Samples" ] && [ -e "$src/.corpus/cuda-samples.tar.xz" ]; then
		"$here/get-samples" --unpack "$src/.corpus/cuda-samples.tar.xz" "$samples" >/dev/null || exit 2
	fi
	[ -d "$samples/Samples" ] ||
		{ echo "corpus: no cuda-samples in $samples (tests/gpu/corpus/get-samples)" >&2; exit 2; }
	# the sample directories of the selected cases: only those are built
	bdirs=$(while read -r kind name dir _; do
		[ "$kind" = run ] && selected "$name" "$dir" && echo "$dir"
	done <"$here/samples.list" | sort -u | tr '\n' ' ')
	if [ -z "$bdirs" ]; then
		:
	elif [ "${CORPUS_NOBUILD:-0}" = 1 ]; then
		echo "== corpus: samples as built in $sbuild (CORPUS_NOBUILD=1)"
	else
		echo "== corpus: building the samples into $sbuild (log $sbuild/build.log)"
		CORPUS_BUILD_DIRS=$bdirs "$here/build-samples" "$samples" "$sbuild" \
			"${CORPUS_JOBS:-$(nproc)}" | sed 's/^/   /'
	fi
	while read -r kind name dir rest; do
		case $kind in
		skip) excluded+=("$name	$rest"); continue ;;
		run) ;;
		*) continue ;;
		esac
		selected "$name" "$dir" || continue
		read -r exe t args <<<"$rest"
		[ "$exe" = - ] && exe=${dir##*/}
		if [[ $dir == 7_libNVVM/* ]]; then bdir=$sbuild/libnvvm/${dir#7_libNVVM/}
		else bdir=$sbuild/main/$dir; fi
		why=$(awk -v d="$dir" '$1 == d || d ~ "^" $1 "/" { $1 = ""; sub(/^ /, ""); print; exit }' \
			"$sbuild/not-built" 2>/dev/null)
		add sample "$name" "$t" "$bdir" "./$exe${args:+ $args}" "$why"
	done <"$here/samples.list"
fi
if [[ $parts == *" frameworks "* ]]; then
	while read -r name t script; do
		case $name in ''|'#'*) continue ;; esac
		selected "$name" "frameworks/$script" || continue
		add py "$name" "$t" "" "$here/frameworks/$script"
	done <"$here/frameworks/list"
fi
[ ${#names[@]} -gt 0 ] || { echo "corpus: no case selected (CORPUS_CASES=${CORPUS_CASES:-})"; exit 77; }

have_python=
python_ok() {	# the frameworks need a python3; each script says which module it lacks
	[ -n "$have_python" ] || { command -v "$python" >/dev/null && have_python=1 || have_python=0; }
	[ "$have_python" = 1 ]
}

# run_one SIDE I: leaves $out/NAME.SIDE.{out,err,rc,secs,iso,ran,cmd}
run_one() {
	local side=$1 i=$2
	local name=${names[$i]} base t0 t1 rc cwd words=()
	base=$out/$name.$side
	read -r -a words <<<"${cmds[$i]}"
	local cudalib=:$cuda/lib64 run=$tmp/$name.$side
	mkdir -p "$run"
	if [ "${kinds[$i]}" = py ]; then
		words=("$python" "${words[@]}")
		cudalib=	# PyTorch, JAX and CuPy bring their own CUDA libraries
		cwd=$run
	else
		cwd=${dirs[$i]}
	fi
	: >"$base.iso"
	: >"$base.ran"
	local env=(AXON_ISOCHECK_LIBCUDA="$shim" AXON_ISOCHECK_OUT="$base.iso"
		   AXON_ISOCHECK_RAN="$base.ran" TMPDIR="$run"
		   NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
		   TRITON_CACHE_DIR="$run/triton" TORCHINDUCTOR_CACHE_DIR="$run/inductor"
		   CUPY_CACHE_DIR="$run/cupy" PYTHONDONTWRITEBYTECODE=1)
	if [ "$side" = native ]; then
		env+=(LD_LIBRARY_PATH="$(dirname "$vendor")$cudalib"
		      TRITON_LIBCUDA_PATH="$tmp/libcuda-native" LD_PRELOAD="$iso")
	else
		env+=(LD_LIBRARY_PATH="$B/lib$cudalib" AXON_ADDR="unix:$sock"
		      AXON_EXPECT_LIBCUDA="$shim"
		      TRITON_LIBCUDA_PATH="$tmp/libcuda-axon" LD_PRELOAD="$iso")
	fi
	t0=$(date +%s.%N)
	(cd "$cwd" && timeout -k 5 "${limits[$i]}" env -u AXON_ADDR "${env[@]}" "${words[@]}" \
		</dev/null >"$base.out" 2>"$base.err")
	rc=$?
	t1=$(date +%s.%N)
	echo "$rc" >"$base.rc"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f\n", b - a }' >"$base.secs"
	printf '# %s, in %s: %s\n# exit %s (timeout %s s)\n' "$side" "$cwd" "${words[*]}" \
		"$rc" "${limits[$i]}" >"$base.cmd"
}

verdict() {	# BASE: pass, FAIL(rc=N), TIMEOUT
	local rc
	rc=$(cat "$1.rc")
	case $rc in
	0) echo pass ;;
	124|137) echo TIMEOUT ;;
	*) echo "FAIL(rc=$rc)" ;;
	esac
}

# ---- axond -------------------------------------------------------------------
start_axond() {
	rm -f "$sock"
	# shellcheck disable=SC2086
	"$B/bin/axond" --backend=cuda --listen="unix:$sock" --vendor-lib="$vendor" \
		${AXOND_ARGS:-} >>"$out/axond.log" 2>&1 &
	apid=$!
	for _ in $(seq 1 300); do
		[ -S "$sock" ] && return 0
		kill -0 "$apid" 2>/dev/null || break
		sleep 0.1
	done
	echo "corpus: axond did not start; its log:"
	tail -n 20 "$out/axond.log"
	apid=
	return 1
}
start_axond || exit 2

echo "== corpus: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), logs in $out"
echo "   axond --backend=cuda --vendor-lib=$vendor ${AXOND_ARGS:-}"
command -v nvidia-smi >/dev/null 2>&1 &&
	nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sed 's/^/   gpu: /'

# ---- run ---------------------------------------------------------------------
# results.tsv: case kind native axon same isolation t_native t_axon ratio note
res=$out/results.tsv
: >"$res"
restarts=0 flagged=0 natives=0
for i in "${!names[@]}"; do
	name=${names[$i]} note=${notes[$i]}
	row() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "${kinds[$i]}" "$@" >>"$res"; }
	if [ "$budget" -gt 0 ] && [ $(( $(date +%s) - started )) -ge "$budget" ]; then
		row - - - - - - - "not run (CORPUS_BUDGET=$budget s spent)"
		continue
	fi
	if [ "${kinds[$i]}" = sample ] && [ ! -x "${dirs[$i]}/${cmds[$i]%% *}" ]; then
		row - - - - - - - "not built: ${note:-build failed (build.log)}"
		continue
	fi
	if [ "${kinds[$i]}" = py ] && ! python_ok; then
		row - - - - - - - "not run: no $python"
		continue
	fi
	run_one native "$i"
	nv=$(verdict "$out/$name.native")
	natives=$((natives + 1))
	grep -q 'violations=[1-9]' "$out/$name.native.ran" && flagged=$((flagged + 1))
	if [ "$nv" != pass ]; then
		why=$(grep -v '^isocheck: ' "$out/$name.native.err" "$out/$name.native.out" 2>/dev/null |
			sed 's/^[^:]*://' | grep -iE 'error|fail|waiv|not supported|requires|No module|cannot|unable' |
			tail -n 1 | tr '\t|' '  ' | cut -c1-120)
		row "$nv" - - - "$(cat "$out/$name.native.secs")" - - "fails natively: $nv${why:+: $why}"
		continue
	fi
	run_one axon "$i"
	av=$(verdict "$out/$name.axon")
	if ! kill -0 "$apid" 2>/dev/null; then
		wait "$apid" 2>/dev/null
		echo "corpus: axond died during $name (exit $?); restarting it" | tee -a "$out/axond.log"
		apid=
		restarts=$((restarts + 1))
		note="axond died during this run${note:+; $note}"
		start_axond || { row "$nv" "$av" - - - - - "$note; axond would not restart"; break; }
	fi
	"$here/normalise" "$name" "$out/$name.native.out" >"$out/$name.native.cmp"
	"$here/normalise" "$name" "$out/$name.axon.out" >"$out/$name.axon.cmp"
	"$here/normalise" "$name" "$out/$name.native.err" >>"$out/$name.native.cmp"
	"$here/normalise" "$name" "$out/$name.axon.err" >>"$out/$name.axon.cmp"
	if [ "$(cat "$out/$name.native.rc")" != "$(cat "$out/$name.axon.rc")" ]; then
		same="NO(exit)"
		diff -u "$out/$name.native.cmp" "$out/$name.axon.cmp" >"$out/$name.diff"
	elif diff -u "$out/$name.native.cmp" "$out/$name.axon.cmp" >"$out/$name.diff"; then
		same=yes
		rm -f "$out/$name.diff"
	else
		same=NO
	fi
	if [ -s "$out/$name.axon.iso" ]; then
		isov="FAIL($(wc -l <"$out/$name.axon.iso"))"
	elif ! grep -q 'libcuda=ours' "$out/$name.axon.ran"; then
		isov=no-check
	else
		isov=ok
	fi
	# The native run must have been native: NVIDIA's libcuda in one of its
	# processes at least (isocheck.so's "libcuda=other").
	grep -q 'libcuda=other' "$out/$name.native.ran" ||
		note="NOT NATIVE: no process of the native run loaded $vendor${note:+; $note}"
	tn=$(cat "$out/$name.native.secs") ta=$(cat "$out/$name.axon.secs")
	ratio=$(awk -v a="$ta" -v n="$tn" 'BEGIN { if (n > 0) printf "%.2f", a / n; else print "-" }')
	row "$nv" "$av" "$same" "$isov" "$tn" "$ta" "$ratio" "$note"
	printf '  %-34s native %-6s axon %-12s same %-8s isolation %-8s %6ss %6ss %sx\n' \
		"$name" "$nv" "$av" "$same" "$isov" "$tn" "$ta" "$ratio"
done
kill -TERM "$apid" 2>/dev/null
wait "$apid"
arc=$?
apid=

# ---- report ------------------------------------------------------------------
{
	echo "Conformance corpus, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
	echo
	LC_ALL=C sort -t "$(printf '\t')" -k1,1 "$res" | awk -F'\t' -v slow="$slow" -f "$here/table.awk"
	if [ ${#excluded[@]} -gt 0 ]; then
		echo
		echo "Samples left out of the corpus (tests/gpu/corpus/samples.list):"
		echo
		printf '%s\n' "${excluded[@]}" | sort | awk -F'\t' '{ printf "- `%s`: %s\n", $1, $2 }'
	fi
	echo
	echo "native runs flagged by isocheck: $flagged of $natives (a native client must be)"
	echo "axond exit status on SIGTERM: $arc; restarted after dying: $restarts"
} | tee "$out/table.md"

for i in "${!names[@]}"; do
	name=${names[$i]}
	grep -q "^$name	" "$res" || continue
	awk -F'\t' -v n="$name" '$1 == n && $3 == "pass" && ($4 != "pass" || $5 != "yes" || $6 != "ok" || $10 ~ /^NOT NATIVE/) { f = 1 } END { exit !f }' "$res" || continue
	echo
	echo "-- $name (logs: $out/$name.*)"
	for side in native axon; do
		sed 's/^/   /' "$out/$name.$side.cmd"
		tail -n 6 "$out/$name.$side.err" | sed "s/^/   $side stderr| /"
		tail -n 6 "$out/$name.$side.out" | sed "s/^/   $side stdout| /"
	done
	[ -s "$out/$name.axon.iso" ] && head -n 5 "$out/$name.axon.iso" | sed 's/^/   isolation| /'
	[ -e "$out/$name.diff" ] && head -n 20 "$out/$name.diff" | sed 's/^/   diff| /'
done
echo
if ! awk -F'\t' '$3 == "pass" { n++ } END { exit n == 0 }' "$res"; then
	echo "corpus: no program passed natively, so nothing was compared; logs in $out"
	exit 2
fi
awk -F'\t' '$3 == "pass" && ($4 != "pass" || $5 != "yes" || $6 != "ok" || $10 ~ /^NOT NATIVE/) { f++ } END { exit f > 0 }' "$res" &&
	[ "$arc" = 0 ] && [ "$restarts" = 0 ] && exit 0
echo "corpus: failures above; logs in $out"
exit 1
