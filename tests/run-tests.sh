#!/bin/sh
# Runs every test program in BUILD/tests, one at a time, each under a
# timeout. A test exits 0 (pass), 77 (skip, with a reason on stderr) or
# anything else (fail). Prints each test's time and a summary line; exits
# non-zero when any test failed.
#
#   tests/run-tests.sh BUILD [NAME...]
set -u
build=${1:?usage: run-tests.sh BUILD [NAME...]}
shift
timeout_s=${AXON_TEST_TIMEOUT:-300}
export AXON_BUILD="$(cd "$build" && pwd)"
export AXON_SRC="$(cd "$(dirname "$0")/.." && pwd)"
logdir="$AXON_BUILD/test-logs"
mkdir -p "$logdir"

if [ $# -gt 0 ]; then
	tests="$*"
else
	tests=$(find "$AXON_BUILD/tests" -maxdepth 1 -type f -perm -u+x -printf '%f\n' | sort)
fi

pass=0 fail=0 skip=0 failed=""
for t in $tests; do
	start=$(date +%s.%N)
	timeout -k 5 "$timeout_s" "$AXON_BUILD/tests/$t" >"$logdir/$t.log" 2>&1
	rc=$?
	secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
	case $rc in
	0)  pass=$((pass + 1)); printf '  PASS  %-40s %6.2fs\n' "$t" "$secs" ;;
	77) skip=$((skip + 1)); printf '  SKIP  %-40s %s\n' "$t" "$(tail -n 1 "$logdir/$t.log")" ;;
	*)  fail=$((fail + 1)); failed="$failed $t"
	    printf '  FAIL  %-40s %6.2fs (exit %d)\n' "$t" "$secs" "$rc"
	    # The assertions first (Check's "file:line:F:" and "E:" lines,
	    # ASan/UBSan reports): a daemon's log can push them out of the
	    # tail, and CI keeps only part of the output.
	    grep -E ':[0-9]+:[FE]:|^harness: error: |^[0-9]+%: Checks: |ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer' \
		"$logdir/$t.log" | head -n 20 | sed 's/^/        ! /'
	    grep -vE '^axond\[[0-9.]+\] info: ' "$logdir/$t.log" | tail -n 40 |
		sed 's/^/        | /' ;;
	esac
done
echo "$pass passed, $fail failed, $skip skipped ($build)"
[ $fail -eq 0 ] || { echo "Tests failed ($fail):$failed"; exit 1; }
exit 0
