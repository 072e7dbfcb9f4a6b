# SPDX-License-Identifier: MIT
# The concurrent-client rows (bench/gpu/clients.sh's output) of the three
# configurations side by side: native (time-sliced), under MPS, through axon.
#
#   awk -v backend=NAME -f rows.awk -f concurrent.awk NATIVE.txt MPS.txt AXON.txt
#
# Rows `concN_rate` (launch/s), `concN_loop` (us, with .p99), `concN_fair`
# (min/max) in drvbench's format, read by rows.awk; files are told
# apart by position in ARGV, so any may be empty. Prints, per row, the
# three values, axon / native and axon / MPS, and which way is better;
# under it the reasons of n/a cells (each once, where it first appears).
function side_of(f) { return f == ARGV[1] ? "n" : f == ARGV[2] ? "m" : "a" }
function note(s, n, label) {
	if (!((s, n) in why) || why[s, n] == last[s]) return
	last[s] = why[s, n]
	printf "    %s n/a: %s\n", label, why[s, n]
}
END {
	fmt = "%-14s %-8s %-6s %20s %20s %20s %11s %9s\n"
	printf fmt, "row", "unit", "better", "native p50 [p99]", "MPS p50 [p99]", "axon(" backend ") p50 [p99]", "axon/native", "axon/MPS"
	for (i = 1; i <= nrow; i++) {
		n = order[i]; u = units[n]
		hi = u == "launch/s" || u == "min/max"
		printf fmt, n, u, hi ? "higher" : "lower", cell("n", n), cell("m", n), cell("a", n),
			ratio_of(num("a", n), num("n", n)), ratio_of(num("a", n), num("m", n))
		# A reason is shown once, not again for the rows after it
		# that have the same one.
		note("n", n, "native"); note("m", n, "MPS"); note("a", n, "axon")
	}
}
