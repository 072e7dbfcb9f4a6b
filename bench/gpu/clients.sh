#!/bin/sh
# SPDX-License-Identifier: MIT
# N concurrent launch-bound clients, measured over one common interval.
#
#   bench/gpu/clients.sh NAME N DIR -- COMMAND [ARGS...]
#
# Starts N copies of `COMMAND ARGS DIR/go` (bench/gpu/loopclient, in the
# environment this script is given: native, MPS or axon), each with its own
# output in DIR. Each client sets up, warms up and prints `ready`; when all
# are ready (or READY_TIMEOUT seconds, default 120, have passed) this script
# creates DIR/go and every client runs its loops for its fixed time, then
# prints `result LOOPS LAUNCHES ELAPSED_S P50_US P99_US MEAN_US` (or
# `error ...`). Clients still running RUN_TIMEOUT seconds (default 90) after
# the go are killed.
#
# Prints rows in drvbench's format (`name value unit`, `name.p99`,
# `name.mean`, `name n/a unit # reason`, '#' for the rest):
#   NAME_rate  launch/s  the clients' launches per second, summed
#   NAME_loop  us        the median of the clients' p50 loop times; .p99 is
#                        the worst client's p99, .mean the mean loop time
#                        over all clients' loops
#   NAME_fair  min/max   slowest client's launch rate / fastest client's
#                        (1 = every client got the same share)
# If any client failed, the rows are n/a with the first client's error.
set -u
name=${1:?usage: clients.sh NAME N DIR -- COMMAND [ARGS...]}
n=${2:?usage: clients.sh NAME N DIR -- COMMAND [ARGS...]}
dir=${3:?usage: clients.sh NAME N DIR -- COMMAND [ARGS...]}
[ "${4:-}" = -- ] || { echo "usage: clients.sh NAME N DIR -- COMMAND [ARGS...]" >&2; exit 2; }
shift 4
[ $# -gt 0 ] || { echo "clients.sh: no command" >&2; exit 2; }
ready_limit=${READY_TIMEOUT:-120}
run_limit=${RUN_TIMEOUT:-90}

mkdir -p "$dir" || exit 1
rm -f "$dir/go" "$dir"/c*.out "$dir"/c*.err "$dir"/c*.rc "$dir"/c*.pid "$dir"/c*.why

# Tenths of a second since the epoch (date +%s%N where it works).
tenths() {
	t=$(date +%s%N 2>/dev/null)
	case $t in
	*N | '') echo $(($(date +%s) * 10)) ;;
	*) echo $((t / 100000000)) ;;
	esac
}

i=1
while [ "$i" -le "$n" ]; do
	# The rc file appears when the client has exited, however it ended;
	# the pid file names the client itself, for the kill below.
	(
		"$@" "$dir/go" >"$dir/c$i.out" 2>"$dir/c$i.err" &
		echo $! >"$dir/c$i.pid"
		wait $!
		echo $? >"$dir/c$i.rc"
	) 2>/dev/null &
	i=$((i + 1))
done

# Kills (by pid) the clients started above that have not exited, saying why
# in their .why files; their subshells then write the rc files.
kill_left() {
	k=1
	while [ "$k" -le "$n" ]; do
		if [ ! -e "$dir/c$k.rc" ]; then
			echo "$1" >"$dir/c$k.why"
			kill -KILL "$(cat "$dir/c$k.pid" 2>/dev/null)" 2>/dev/null
		fi
		k=$((k + 1))
	done
	wait 2>/dev/null
}

# ---- wait until every client is ready or has exited ---------------------------
t0=$(tenths)
while :; do
	waiting=0
	i=1
	while [ "$i" -le "$n" ]; do
		if [ ! -e "$dir/c$i.rc" ] && ! grep -q '^ready' "$dir/c$i.out" 2>/dev/null; then
			waiting=$((waiting + 1))
		fi
		i=$((i + 1))
	done
	[ "$waiting" -eq 0 ] && break
	if [ $(($(tenths) - t0)) -ge $((ready_limit * 10)) ]; then
		echo "# $name: $waiting of $n clients not ready after ${ready_limit} s"
		kill_left "killed: not ready after ${ready_limit} s"
		break
	fi
	sleep 0.1
done
t1=$(tenths)
[ "$waiting" -eq 0 ] &&
	echo "# $name: $n clients set up (or failed) in $(((t1 - t0) / 10)).$(((t1 - t0) % 10)) s"
: >"$dir/go"

# ---- wait for them to finish --------------------------------------------------
while :; do
	left=0
	i=1
	while [ "$i" -le "$n" ]; do
		[ -e "$dir/c$i.rc" ] || left=$((left + 1))
		i=$((i + 1))
	done
	[ "$left" -eq 0 ] && break
	if [ $(($(tenths) - t1)) -ge $((run_limit * 10)) ]; then
		echo "# $name: killing $left clients still running after ${run_limit} s"
		kill_left "killed: still running ${run_limit} s after the start"
		break
	fi
	sleep 0.1
done
wait 2>/dev/null

# ---- summary ------------------------------------------------------------------
i=1
while [ "$i" -le "$n" ]; do
	rc=$(cat "$dir/c$i.rc" 2>/dev/null || echo killed)
	res=$(grep -E '^(result|error)' "$dir/c$i.out" 2>/dev/null | tail -n 1)
	err=$(grep -v '^[[:space:]]*$' "$dir/c$i.err" 2>/dev/null | tail -n 1)
	why=$(cat "$dir/c$i.why" 2>/dev/null)
	printf '%s\t%s\t%s\t%s\n' "$rc" "${res:-none}" "${err:-}" "${why:-}"
	i=$((i + 1))
done | awk -F'\t' -v name="$name" -v n="$n" '
function fmt(v,   a) {
	a = v < 0 ? -v : v
	if (a >= 1000) return sprintf("%.0f", v)
	if (a >= 100) return sprintf("%.1f", v)
	if (a >= 1) return sprintf("%.2f", v)
	if (a >= 0.1) return sprintf("%.3f", v)
	return sprintf("%.4f", v)
}
function na(why) {
	gsub(/[\t\r\n]/, " ", why)
	printf "%s_rate n/a launch/s # %s\n", name, why
	printf "%s_loop n/a us # %s\n", name, why
	printf "%s_fair n/a min/max # %s\n", name, why
}
{
	split($2, f, " ")
	if ($1 == "0" && f[1] == "result" && f[4] > 0 && f[2] > 0) {
		ok++
		rate[ok] = f[3] / f[4]
		p50[ok] = f[5] + 0
		p99[ok] = f[6] + 0
		loops += f[2]; secs += f[4]
		next
	}
	bad++
	if (first == "") {
		why = $2 == "none" ? "no result line" : $2
		if ($4 != "") why = $4
		else if ($1 != "0") why = why ", exit status " $1
		if ($3 != "") why = why "; stderr: " $3
		first = why
	}
}
END {
	if (bad || ok != n) {
		na(sprintf("%d of %d clients failed; client %s", bad + 0, n, first))
		exit
	}
	tot = 0; lo = hi = rate[1]; worst = 0
	for (i = 1; i <= ok; i++) {
		tot += rate[i]
		if (rate[i] < lo) lo = rate[i]
		if (rate[i] > hi) hi = rate[i]
		if (p99[i] > worst) worst = p99[i]
	}
	# median of the clients p50s (nearest rank, as bench.h)
	for (i = 2; i <= ok; i++) {
		v = p50[i]
		for (j = i - 1; j >= 1 && p50[j] > v; j--) p50[j + 1] = p50[j]
		p50[j + 1] = v
	}
	med = p50[int((ok - 1) / 2) + 1]
	printf "# %s: %d clients, %d loops; per-client launch/s min %s max %s\n", name, n, loops, fmt(lo), fmt(hi)
	printf "%s_rate %s launch/s\n", name, fmt(tot)
	printf "%s_loop %s us\n", name, fmt(med)
	printf "%s_loop.p99 %s us\n", name, fmt(worst)
	printf "%s_loop.mean %s us\n", name, fmt(secs * 1e6 / loops)
	printf "%s_fair %s min/max\n", name, fmt(hi > 0 ? lo / hi : 0)
}'
