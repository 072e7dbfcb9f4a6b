# SPDX-License-Identifier: MIT
# Native and axon outputs of the bench programs side by side, with ratios and
# issue 4's targets (bench/gpu/run.sh runs it).
#
#   awk -v native=0|1 -v backend=NAME -f rows.awk -f sidebyside.awk NATIVE.txt AXON.txt
#
# Inputs are drvbench's format (blasbench and torchbench print the same):
# `name value unit`, `name.p99 value unit`, `name.mean value unit`,
# `name n/a unit # reason`; lines starting with '#' are skipped. The first
# file is the native side, the second axon's (by name, so that either may
# be empty). Rows appear in the order they first appear. rows.awk reads
# them.
function side_of(f) { return f == ARGV[1] ? "n" : "a" }
# Rates: higher is better; everything else is a time.
function higher(u) {
	return u == "GB/s" || u == "launch/s" || u == "TFLOP/s" || u == "call/s" ||
	       u == "step/s" || u == "op/s"
}
function verdict_of(n,   a, nv, k) {
	split(t[n], k, " ")
	a = num("a", n); nv = num("n", n)
	if (a == "") return "n/a: no axon figure"
	if (k[1] == "le") return (a <= k[2] + 0) ? "met" : "NOT met"
	if (nv == "") return "n/a: no native figure"
	return (a >= k[2] * nv) ? "met" : "NOT met"
}
END {
	# Issue 4 targets: absolute bound on the axon value, or relative to
	# native. tl is the order of the targets list at the end.
	nt = 0
	T("start_first_kernel", "le 5", "<= 5 ms")
	T("nullop_stream_sync", "le 1.0", "<= 1.0 us")
	T("memalloc_4k", "le 0.2", "<= 0.2 us")
	T("memfree_4k", "le 0.2", "<= 0.2 us")
	T("memalloc_2m", "le 0.2", "<= 0.2 us")
	T("memfree_2m", "le 0.2", "<= 0.2 us")
	T("alloc4g_acquire_per_call", "le 0.2", "<= 0.2 us")
	T("alloc4g_release_per_call", "le 0.2", "<= 0.2 us")
	T("launch_enqueue", "le 0.3", "<= 0.3 us")
	T("launch_rate", "rel 1.0", ">= native")
	T("stream_query", "le 0.05", "<= 0.05 us")
	T("pinned_htod", "rel 0.97", ">= 97% native")
	T("pinned_dtoh", "rel 0.97", ">= 97% native")
	T("pageable_htod", "rel 1.0", ">= native")
	T("pageable_dtoh", "rel 1.0", ">= native")
	T("modload_cubin_repeat", "le 100", "<= 100 us")
	T("modload_ptx_repeat", "le 100", "<= 100 us")
	T("sgemm_1024", "rel 0.97", ">= 97% native")
	T("sgemm_4096", "rel 0.97", ">= 97% native")
	T("sgemm_8192", "rel 0.97", ">= 97% native")
	T("torch_train_mlp", "rel 0.97", ">= 97% native")
	T("torch_train_cnn", "rel 0.97", ">= 97% native")

	fmt = "%-26s %-8s %-6s %20s %20s %9s %-8s %-14s %s\n"
	printf fmt, "row", "unit", "better", "native p50 [p99]", "axon(" backend ") p50 [p99]", "ratio", "axon is", "target", "verdict"
	for (i = 1; i <= nrow; i++) {
		n = order[i]; u = units[n]; hi = higher(u)
		a = num("a", n); nv = num("n", n)
		ratio = ratio_of(a, nv); cmp = ""
		if (a != "" && nv != "" && nv > 0) {
			r = a / nv
			if (r > 0.97 && r < 1.03) cmp = "same"
			else if ((r < 1) == !hi) cmp = "better"
			else cmp = "worse"
		}
		verdict = ""; tgt = ""
		if (n in t) { tgt = tt[n]; verdict = verdict_of(n) }
		printf fmt, n, u, hi ? "higher" : "lower", cell("n", n), cell("a", n), ratio, cmp, tgt, verdict
		if (("n", n) in why) printf "    native n/a: %s\n", why["n", n]
		if (("a", n) in why) printf "    axon n/a: %s\n", why["a", n]
	}
	printf "\n== issue 4 targets (through axon, backend %s)\n", backend
	met = 0; notmet = 0
	for (i = 1; i <= nt; i++) {
		n = tl[i]
		a = num("a", n); nv = num("n", n)
		verdict = verdict_of(n)
		if (verdict == "met") met++; else if (verdict == "NOT met") notmet++
		printf "%-26s %-14s axon %-12s native %-12s %s\n", n, tt[n], a == "" ? "-" : v["a", n] " " units[n], nv == "" ? "-" : v["n", n], verdict
	}
	printf "targets: %d met, %d not met, %d without a figure (of the %d rows above with targets)\n", met, notmet, nt - met - notmet, nt
}
function T(n, rule, text) { t[n] = rule; tt[n] = text; tl[++nt] = n }
