#!/bin/sh
# fuzz-smoke: runs each fuzzer (tests/fuzz/fuzz.mk) for a bounded time on a
# temporary copy of its committed corpus (tests/fuzz/corpus/<target>/, the
# reproducers of what was found and fixed included), so the tree is never
# written. Fails on any finding (crash, sanitizer report, leak, timeout);
# exits 77 when the fuzzers were not built (no clang with libFuzzer's
# runtime, or the SAN build, which does not build them).
#
#   FUZZ_SMOKE_SECONDS  seconds per fuzzer (default 20)
set -u
build=${AXON_BUILD:?run through tests/run-tests.sh}
src=${AXON_SRC:?run through tests/run-tests.sh}
secs=${FUZZ_SMOKE_SECONDS:-20}
targets="hello sqe image"

for t in $targets; do
	if [ ! -x "$build/fuzz/bin/fuzz-$t" ]; then
		echo "fuzz-smoke: $build/fuzz/bin/fuzz-$t not built (needs clang-14 and" \
		     "libclang-rt-14-dev; the plain build makes them)" >&2
		exit 77
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/axon-fuzz-smoke.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
fail=0
for t in $targets; do
	mkdir -p "$tmp/$t/corpus" "$tmp/$t/artifacts"
	cp "$src/tests/fuzz/corpus/$t/"* "$tmp/$t/corpus/"
	echo "fuzz-smoke: fuzz-$t for $secs s on $(ls "$tmp/$t/corpus" | wc -l) inputs"
	# libFuzzer's own exit codes for findings (77 by default) would
	# read as a skip: every finding exits 1.
	"$build/fuzz/bin/fuzz-$t" -max_total_time="$secs" -timeout=20 \
		-error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 \
		-artifact_prefix="$tmp/$t/artifacts/" "$tmp/$t/corpus" \
		>"$tmp/$t/log" 2>&1
	rc=$?
	grep -E '^stat::number_of_executed_units|^Done' "$tmp/$t/log" | sed "s/^/fuzz-$t: /"
	if [ $rc -ne 0 ]; then
		echo "fuzz-smoke: fuzz-$t FAILED (exit $rc):"
		tail -n 60 "$tmp/$t/log"
		for a in "$tmp/$t/artifacts/"*; do
			[ -f "$a" ] || continue
			echo "fuzz-smoke: input $(basename "$a"), base64:"
			base64 "$a" | head -n 40
		done
		fail=1
	fi
done
exit $fail
