# tests/tools/lib.sh: shared by the axon-top test scripts (sourced; copied
# to $AXON_BUILD/tests/bin/axon-top-lib.sh).
#
# Each test gets a private directory and a private axond (sim backend) on
# a socket inside it, and known clients (topclient) started with
# start_client. Everything started here is stopped by pid on exit.

set -u

if [ -z "${AXON_BUILD:-}" ]; then
	# $AXON_BUILD/tests/<name>: the build directory is one level up.
	AXON_BUILD=$(cd "$(dirname "$0")/.." && pwd)
fi
export AXON_BUILD

TOP=$AXON_BUILD/bin/axon-top
AXOND=$AXON_BUILD/bin/axond
CLIENT=$AXON_BUILD/tests/bin/topclient
CUBIN=$AXON_BUILD/tests/data/kernels.cubin

T=$(mktemp -d "${TMPDIR:-/tmp}/axon-top-test.XXXXXX") || exit 1
OUR_PIDS=""
AXOND_PID=""
TMUX_SOCK=""

note() { echo "# $*"; }
fail() {
	echo "FAIL: $*" >&2
	if [ -f "$T/axond.log" ]; then
		echo "---- axond log ----" >&2
		tail -n 30 "$T/axond.log" >&2
	fi
	exit 1
}
skip() { echo "$*" >&2; exit 77; }

cleanup() {
	rc=$?
	if [ -n "$TMUX_SOCK" ]; then
		tmux -L "$TMUX_SOCK" kill-server 2>/dev/null
	fi
	for p in $OUR_PIDS; do
		kill "$p" 2>/dev/null
	done
	for p in $OUR_PIDS; do
		wait "$p" 2>/dev/null
	done
	if [ $rc -eq 0 ] || [ $rc -eq 77 ]; then
		rm -rf "$T"
	else
		echo "(test files kept in $T)" >&2
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM

for f in "$TOP" "$AXOND" "$CLIENT"; do
	[ -x "$f" ] || fail "$f is missing (make test-progs)"
done
command -v python3 >/dev/null 2>&1 || skip "python3 is needed to check JSON"

# wait_file FILE PATTERN [SECONDS]: until a line of FILE matches PATTERN.
wait_file() {
	_n=$(( ${3:-10} * 20 ))
	while [ $_n -gt 0 ]; do
		if [ -f "$1" ] && grep -q -- "$2" "$1" 2>/dev/null; then
			return 0
		fi
		sleep 0.05
		_n=$((_n - 1))
	done
	return 1
}

start_axond() {
	"$AXOND" --listen "unix:$T/s.sock" --sim-kernels="$AXON_BUILD/lib/axon-sim-kernels.so" \
		"$@" >"$T/axond.log" 2>&1 &
	AXOND_PID=$!
	OUR_PIDS="$OUR_PIDS $AXOND_PID"
	_n=200
	while [ ! -S "$T/s.sock" ] && [ $_n -gt 0 ]; do
		kill -0 "$AXOND_PID" 2>/dev/null || fail "axond exited at start"
		sleep 0.05
		_n=$((_n - 1))
	done
	[ -S "$T/s.sock" ] || fail "axond did not create its socket"
	AXON_ADDR="unix:$T/s.sock"
	export AXON_ADDR
}

# start_client NAME [topclient options]: runs topclient --comm NAME with
# stdin from a FIFO fed by a holder. "touch $T/NAME.go" sends it a line
# (for --wait-go), "touch $T/NAME.stop" closes its stdin (it exits).
# Sets CLIENT_PID. Its stdout is $T/NAME.out.
start_client() {
	_name=$1
	shift
	mkfifo "$T/$_name.in" || fail "mkfifo"
	(
		while [ ! -e "$T/$_name.go" ] && [ ! -e "$T/$_name.stop" ]; do
			sleep 0.05
		done
		echo go
		while [ ! -e "$T/$_name.stop" ]; do
			sleep 0.05
		done
	) >"$T/$_name.in" &
	OUR_PIDS="$OUR_PIDS $!"
	"$CLIENT" --comm "$_name" "$@" <"$T/$_name.in" >"$T/$_name.out" 2>"$T/$_name.err" &
	CLIENT_PID=$!
	OUR_PIDS="$OUR_PIDS $CLIENT_PID"
}

stop_client() {
	touch "$T/$1.stop"
}

# wait_client NAME: until it printed "done"; fails if it died.
wait_client() {
	wait_file "$T/$1.out" '^done' 20 || {
		cat "$T/$1.err" >&2
		fail "client $1 did not get ready"
	}
}
