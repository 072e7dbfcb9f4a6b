#!/bin/sh
# SPDX-License-Identifier: MIT
# Native vs axon, side by side, on a GPU machine (issue 4's benchmark rows).
#
#   bench/gpu/run.sh BUILD [VENDOR_LIB]
#
# Runs $BUILD/bench/gpu/drvbench twice:
#   native  LD_LIBRARY_PATH=dirname(VENDOR_LIB), no AXON_ADDR: NVIDIA's driver.
#           Skipped when VENDOR_LIB does not exist (a machine without a GPU).
#   axon    a private axond (--backend=cuda --vendor-lib=VENDOR_LIB, or
#           --backend=sim without the vendor library; AXON_BENCH_BACKEND
#           overrides) on a unix socket in a temporary directory, and
#           drvbench with LD_LIBRARY_PATH=$BUILD/lib AXON_ADDR=unix:that.
# In the axon run, drvbench's DRVBENCH_STATS_CMD prints axond's counters for
# it after each group (axonctl stats: sync ops, deferred ops, crossings; and
# the JSON document with counts by op), as '#' lines.
# Then it prints the machine, both raw outputs, one side-by-side table with
# axon/native ratios, and issue 4's targets as met / NOT met.
#
# Environment: VENDOR_LIB (default /usr/local/nvidia/lib64/libcuda.so.1),
# DRVBENCH_ARGS (e.g. --quick, --only launch,bw), AXON_BENCH_BACKEND,
# AXOND_ARGS (extra axond options), BENCH_TIMEOUT (seconds per half, 170),
# BENCH_NATIVE=0 (axon half only).
set -u
build=${1:?usage: run.sh BUILD [VENDOR_LIB]}
vendor=${2:-${VENDOR_LIB:-/usr/local/nvidia/lib64/libcuda.so.1}}
args=${DRVBENCH_ARGS:-}
limit=${BENCH_TIMEOUT:-170}
bin=$build/bench/gpu/drvbench
cubin=$build/tests/data/kernels.cubin
ptx=$build/tests/data/kernels.ptx
[ -r "$ptx" ] || ptx=

for f in "$bin" "$build/bin/axond" "$build/lib/libcuda.so.1" "$cubin"; do
	if [ ! -e "$f" ]; then
		echo "run.sh: $f missing (make BUILD=$build all test-progs bench-gpu-progs)" >&2
		exit 2
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/axon-bench.XXXXXX") || exit 1
apid=
cleanup() {
	[ -n "$apid" ] && kill -TERM "$apid" 2>/dev/null && wait "$apid" 2>/dev/null
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
for s in nvidia-smi "$(dirname "$(dirname "$vendor")")/bin/nvidia-smi"; do
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
echo

# ---- native ---------------------------------------------------------------
: >"$tmp/native.txt"
if [ "${BENCH_NATIVE:-1}" = 0 ]; then
	echo "== native: skipped (BENCH_NATIVE=0)"
	native=0
elif [ -e "$vendor" ]; then
	echo "== native: LD_LIBRARY_PATH=$(dirname "$vendor") $bin $args $cubin $ptx"
	t0=$(date +%s)
	# shellcheck disable=SC2086
	env -u AXON_ADDR LD_LIBRARY_PATH="$(dirname "$vendor")" \
		timeout -k 5 "$limit" "$bin" $args "$cubin" $ptx >"$tmp/native.txt" 2>"$tmp/native.err"
	rc=$?
	t1=$(date +%s)
	cat "$tmp/native.txt"
	sed 's/^/native stderr: /' "$tmp/native.err" | head -n 20
	echo "native rc=$rc, $((t1 - t0)) s"
	native=1
else
	echo "== native: skipped ($vendor absent: no NVIDIA driver on this machine)"
	native=0
fi
echo

# ---- axon -----------------------------------------------------------------
backend=${AXON_BENCH_BACKEND:-$([ -e "$vendor" ] && echo cuda || echo sim)}
sock=$tmp/axond.sock
set -- --backend="$backend" --listen="unix:$sock"
[ "$backend" = cuda ] && set -- "$@" --vendor-lib="$vendor"
echo "== axon: $build/bin/axond $* ${AXOND_ARGS:-}"
# shellcheck disable=SC2086
"$build/bin/axond" "$@" ${AXOND_ARGS:-} >"$tmp/axond.log" 2>&1 &
apid=$!
i=0
while [ ! -S "$sock" ] && [ $i -lt 300 ] && kill -0 "$apid" 2>/dev/null; do
	sleep 0.1
	i=$((i + 1))
done
: >"$tmp/axon.txt"
if [ ! -S "$sock" ]; then
	echo "axond did not start; its log:"
	cat "$tmp/axond.log"
	apid=
else
	echo "   AXON_ADDR=unix:$sock LD_LIBRARY_PATH=$build/lib $bin $args $cubin $ptx"
	stats=
	[ -x "$build/bin/axonctl" ] &&
		stats="'$build/bin/axonctl' --addr 'unix:$sock' stats 2>&1 |
  awk -v g=\"\$DRVBENCH_GROUP\" '/ COMM / || / drvbench / { print \"# stats after \" g \": \" \$0 }';
'$build/bin/axonctl' --addr 'unix:$sock' stats --json 2>&1 |
  sed \"s/^/# stats-json after \$DRVBENCH_GROUP: /\""
	t0=$(date +%s)
	# shellcheck disable=SC2086
	AXON_ADDR="unix:$sock" LD_LIBRARY_PATH="$build/lib" DRVBENCH_STATS_CMD="$stats" \
		timeout -k 5 "$limit" "$bin" $args "$cubin" $ptx >"$tmp/axon.txt" 2>"$tmp/axon.err"
	rc=$?
	t1=$(date +%s)
	cat "$tmp/axon.txt"
	sed 's/^/axon stderr: /' "$tmp/axon.err" | head -n 20
	echo "axon rc=$rc, $((t1 - t0)) s"
	kill -TERM "$apid" 2>/dev/null
	wait "$apid"
	echo "axond rc=$?"
	apid=
	echo "-- axond log (last 25 lines)"
	tail -n 25 "$tmp/axond.log"
fi
echo

# ---- side by side -----------------------------------------------------------
echo "== side by side: value = p50 (module-load repeat: mean; rates: at the p50 time), [p99]"
echo "   ratio = axon / native; 'better' says which direction is better for the row"
awk -v native="$native" -v backend="$backend" '
function strip(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
function reason(line,   k) { k = index(line, "#"); return k ? strip(substr(line, k + 1)) : "" }
FNR == 1 { side = (FILENAME ~ /native\.txt$/) ? "n" : "a" }
/^#/ || NF < 3 { next }
{
	name = $1; val = $2; unit = $3
	if (name ~ /\.p99$/) { base = substr(name, 1, length(name) - 4); p99[side, base] = val; next }
	if (name ~ /\.mean$/) next
	if (!(name in seen)) { seen[name] = 1; order[++nrow] = name; units[name] = unit }
	v[side, name] = val
	if (val == "n/a") why[side, name] = reason($0)
}
function cell(s, n) {
	if (!((s, n) in v)) return "-"
	if (v[s, n] == "n/a") return "n/a"
	return ((s, n) in p99) ? v[s, n] " [" p99[s, n] "]" : v[s, n]
}
function num(s, n) { return ((s, n) in v) && v[s, n] != "n/a" ? v[s, n] + 0 : "" }
function higher(u) { return u == "GB/s" || u == "launch/s" }
END {
	# Issue 4 targets: absolute bound on the axon value, or relative to native.
	t["start_first_kernel"] = "le 5";          tt["start_first_kernel"] = "<= 5 ms"
	t["nullop_stream_sync"] = "le 1.0";        tt["nullop_stream_sync"] = "<= 1.0 us"
	t["memalloc_4k"] = "le 0.2";               tt["memalloc_4k"] = "<= 0.2 us"
	t["memfree_4k"] = "le 0.2";                tt["memfree_4k"] = "<= 0.2 us"
	t["memalloc_2m"] = "le 0.2";               tt["memalloc_2m"] = "<= 0.2 us"
	t["memfree_2m"] = "le 0.2";                tt["memfree_2m"] = "<= 0.2 us"
	t["alloc4g_acquire_per_call"] = "le 0.2";  tt["alloc4g_acquire_per_call"] = "<= 0.2 us"
	t["alloc4g_release_per_call"] = "le 0.2";  tt["alloc4g_release_per_call"] = "<= 0.2 us"
	t["launch_enqueue"] = "le 0.3";            tt["launch_enqueue"] = "<= 0.3 us"
	t["launch_rate"] = "rel 1.0";              tt["launch_rate"] = ">= native"
	t["stream_query"] = "le 0.05";             tt["stream_query"] = "<= 0.05 us"
	t["pinned_htod"] = "rel 0.97";             tt["pinned_htod"] = ">= 97% native"
	t["pinned_dtoh"] = "rel 0.97";             tt["pinned_dtoh"] = ">= 97% native"
	t["pageable_htod"] = "rel 1.0";            tt["pageable_htod"] = ">= native"
	t["pageable_dtoh"] = "rel 1.0";            tt["pageable_dtoh"] = ">= native"
	t["modload_cubin_repeat"] = "le 100";      tt["modload_cubin_repeat"] = "<= 100 us"
	t["modload_ptx_repeat"] = "le 100";        tt["modload_ptx_repeat"] = "<= 100 us"

	fmt = "%-26s %-8s %-6s %20s %20s %9s %-8s %-14s %s\n"
	printf fmt, "row", "unit", "better", "native p50 [p99]", "axon(" backend ") p50 [p99]", "ratio", "axon is", "target", "verdict"
	for (i = 1; i <= nrow; i++) {
		n = order[i]; u = units[n]; hi = higher(u)
		a = num("a", n); nv = num("n", n)
		ratio = "-"; cmp = ""
		if (a != "" && nv != "" && nv > 0) {
			r = a / nv
			ratio = sprintf(r >= 100 ? "%.0fx" : r >= 10 ? "%.1fx" : r >= 0.01 ? "%.2fx" : "%.4fx", r)
			if (r > 0.97 && r < 1.03) cmp = "same"
			else if ((r < 1) == !hi) cmp = "better"
			else cmp = "worse"
		}
		verdict = ""; tgt = ""
		if (n in t) {
			tgt = tt[n]; split(t[n], k, " ")
			if (a == "") verdict = "n/a: no axon figure"
			else if (k[1] == "le") verdict = (a <= k[2] + 0) ? "met" : "NOT met"
			else if (nv == "") verdict = "n/a: no native figure"
			else verdict = (a >= k[2] * nv) ? "met" : "NOT met"
		}
		printf fmt, n, u, hi ? "higher" : "lower", cell("n", n), cell("a", n), ratio, cmp, tgt, verdict
		if (("n", n) in why) printf "    native n/a: %s\n", why["n", n]
		if (("a", n) in why) printf "    axon n/a: %s\n", why["a", n]
	}
	printf "\n== issue 4 targets (through axon, backend %s)\n", backend
	nt = split("start_first_kernel nullop_stream_sync memalloc_4k memfree_4k memalloc_2m memfree_2m alloc4g_acquire_per_call alloc4g_release_per_call launch_enqueue launch_rate stream_query pinned_htod pinned_dtoh pageable_htod pageable_dtoh modload_cubin_repeat modload_ptx_repeat", tl, " ")
	met = 0; notmet = 0
	for (i = 1; i <= nt; i++) {
		n = tl[i]; split(t[n], k, " ")
		a = num("a", n); nv = num("n", n)
		if (a == "") { verdict = "n/a: no axon figure"; }
		else if (k[1] == "le") verdict = (a <= k[2] + 0) ? "met" : "NOT met"
		else if (nv == "") verdict = "n/a: no native figure"
		else verdict = (a >= k[2] * nv) ? "met" : "NOT met"
		if (verdict == "met") met++; else if (verdict == "NOT met") notmet++
		printf "%-26s %-14s axon %-12s native %-12s %s\n", n, tt[n], a == "" ? "-" : v["a", n] " " units[n], nv == "" ? "-" : v["n", n], verdict
	}
	printf "%-26s %-14s %s\n", "cublas_sgemm", ">= 97% native", "not measured by drvbench"
	printf "%-26s %-14s %s\n", "pytorch_steps", ">= 97% native", "not measured by drvbench"
	printf "targets: %d met, %d not met, %d without a figure (of the %d rows above with targets)\n", met, notmet, nt - met - notmet, nt
}' "$tmp/native.txt" "$tmp/axon.txt"
