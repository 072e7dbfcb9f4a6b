# SPDX-License-Identifier: MIT
# The reader of the benchmarks' rows (drvbench's format, bench/gpu/rowformat.h)
# for sidebyside.awk and concurrent.awk, which follow it on the command line:
#
#   awk -f rows.awk -f sidebyside.awk FILE...
#
# The program after it defines side_of(FILENAME): the key of that input's
# side ("n" native, "a" axon, ...). Lines starting with '#' and lines of
# fewer than three fields are skipped. What it fills in, by side s and
# row name n: order[1..nrow] the names as they first appear, units[n],
# v[s, n] the value or "n/a", p99[s, n], why[s, n] the reason of an n/a.
function strip(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }
function reason(line,   k) { k = index(line, "#"); return k ? strip(substr(line, k + 1)) : "" }
FNR == 1 { side = side_of(FILENAME) }
/^#/ || NF < 3 { next }
{
	name = $1; val = $2; unit = $3
	if (name ~ /\.p99$/) { base = substr(name, 1, length(name) - 4); p99[side, base] = val; next }
	if (name ~ /\.mean$/) next
	if (!(name in seen)) { seen[name] = 1; order[++nrow] = name; units[name] = unit }
	v[side, name] = val
	if (val == "n/a") why[side, name] = reason($0)
}
# "value [p99]", "n/a", or "-" when the side has no such row.
function cell(s, n) {
	if (!((s, n) in v)) return "-"
	if (v[s, n] == "n/a") return "n/a"
	return ((s, n) in p99) ? v[s, n] " [" p99[s, n] "]" : v[s, n]
}
# The value as a number, "" when there is none.
function num(s, n) { return ((s, n) in v) && v[s, n] != "n/a" ? v[s, n] + 0 : "" }
# x / y as "0.50x", "-" when either is missing or y is not positive.
function ratio_of(x, y,   r) {
	if (x == "" || y == "" || y <= 0) return "-"
	r = x / y
	return sprintf(r >= 100 ? "%.0fx" : r >= 10 ? "%.1fx" : r >= 0.01 ? "%.2fx" : "%.4fx", r)
}
