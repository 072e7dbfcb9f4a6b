# SPDX-License-Identifier: MIT
# The concurrent-client rows (bench/gpu/clients.sh's output) of the three
# configurations side by side: native (time-sliced), under MPS, through axon.
#
#   awk -v backend=NAME -f concurrent.awk NATIVE.txt MPS.txt AXON.txt
#
# Rows `concN_rate` (launch/s), `concN_loop` (us, with .p99), `concN_fair`
# (min/max) in drvbench's format; '#' lines are skipped; files are told
# apart by position in ARGV, so any may be empty. Prints, per row, the
# three values, axon / native and axon / MPS, and which way is better;
# under it the reasons of n/a cells (each once, where it first appears).
function strip(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
function reason(line,   k) { k = index(line, "#"); return k ? strip(substr(line, k + 1)) : "" }
FNR == 1 { side = FILENAME == ARGV[1] ? "n" : FILENAME == ARGV[2] ? "m" : "a" }
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
function ratio(x, y,   r) {
	if (x == "" || y == "" || y <= 0) return "-"
	r = x / y
	return sprintf(r >= 100 ? "%.0fx" : r >= 10 ? "%.1fx" : r >= 0.01 ? "%.2fx" : "%.4fx", r)
}
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
			ratio(num("a", n), num("n", n)), ratio(num("a", n), num("m", n))
		# A reason is shown once, not again for the rows after it
		# that have the same one.
		note("n", n, "native"); note("m", n, "MPS"); note("a", n, "axon")
	}
}
