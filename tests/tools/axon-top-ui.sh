#!/bin/sh
# The axon-top curses UI in a pseudo-terminal (tmux): at 80x24, after a
# resize to 100x30, at 200x60 and without colours. Checks that the header
# and the client rows appear, that no line is wider than the screen and
# that the key bar sits on the last line (nothing wrapped or scrolled), and
# drives the keys: help, sort, filter, trace of the selected client, quit.
. "${AXON_BUILD:-$(cd "$(dirname "$0")/.." && pwd)}/tests/bin/axon-top-lib.sh"

command -v tmux >/dev/null 2>&1 || skip "tmux is not installed (apt-get install tmux)"
TERM_UI=screen
infocmp "$TERM_UI" >/dev/null 2>&1 || TERM_UI=xterm
infocmp "$TERM_UI" >/dev/null 2>&1 || skip "no terminfo entry for screen or xterm"

start_axond
start_client topc-a --alloc 64M --memsets 3 --syncs 1
PID_A=$CLIENT_PID
start_client topc-b --alloc 3M --memsets 1 --syncs 1 --bad 1
PID_B=$CLIENT_PID
wait_client topc-a
wait_client topc-b
# C connects and waits: its calls come once the UI traces it.
start_client topc-c --wait-go --alloc 1M --memsets 1 --syncs 1
PID_C=$CLIENT_PID
wait_file "$T/topc-c.out" "^ready $PID_C" 20 || fail "client C did not connect"
export PID_A PID_B PID_C T

TMUX_SOCK="axon-top-test-$$"
tm() { tmux -L "$TMUX_SOCK" "$@"; }

# ui_start W H [axon-top options]
ui_start() {
	_w=$1 _h=$2
	shift 2
	rm -f "$T/ui.rc" "$T/ui.err"
	tm -f /dev/null new-session -d -s ui -x "$_w" -y "$_h" \
		"env TERM=$TERM_UI AXON_ADDR='$AXON_ADDR' \
		 ASAN_OPTIONS='${ASAN_OPTIONS:-}' UBSAN_OPTIONS='${UBSAN_OPTIONS:-}' \
		 LSAN_OPTIONS='${LSAN_OPTIONS:-}' \
		 '$TOP' -d 0.2 $* 2>'$T/ui.err'; echo \$? >'$T/ui.rc'" ||
		fail "tmux new-session"
}

# screen FILE: the visible screen, plain (-e: with attributes too, FILE.e)
screen() {
	tm capture-pane -p -t ui >"$1" 2>/dev/null
	tm capture-pane -p -e -t ui >"$1.e" 2>/dev/null
}

# wait_screen PATTERN [SECONDS]: until the screen has a line matching it.
wait_screen() {
	_n=$(( ${2:-10} * 10 ))
	while [ $_n -gt 0 ]; do
		screen "$T/screen.txt"
		grep -q -- "$1" "$T/screen.txt" && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	echo "---- screen ----" >&2
	cat "$T/screen.txt" >&2
	fail "the screen never showed '$1'"
}

# check_table W H EXTRA: the table view is intact at W x H.
check_table() {
	python3 - "$@" <<'EOF' || { cat "$T/screen.txt" >&2; fail "screen check at $1x$2"; }
import os, sys
w, h, mode = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
lines = open(os.environ["T"] + "/screen.txt").read().split("\n")
if lines and lines[-1] == "":
    lines.pop()
def bad(msg):
    print("%dx%d: %s" % (w, h, msg), file=sys.stderr); sys.exit(1)
if len(lines) != h:
    bad("%d lines captured" % len(lines))
for i, l in enumerate(lines):
    if len(l) > w:
        bad("line %d is %d wide: %r" % (i, len(l), l))
    if any(ord(c) < 0x20 or ord(c) > 0x7e for c in l):
        bad("line %d has non-ASCII: %r" % (i, l))
if not lines[0].startswith("axon-top  axond pid "):
    bad("title %r" % lines[0])
if not lines[1].startswith("GPU0 [") or "/16.0G]" not in lines[1]:
    bad("meter %r" % lines[1])
if not lines[2].startswith("Clients: 3 ("):
    bad("summary %r" % lines[2])
if not lines[h - 1].startswith("hHelp <>Sort /Filter"):
    bad("key bar %r not on the last line" % lines[h - 1])
hdr = [i for i, l in enumerate(lines) if l.split()[:4] == ["ID", "PID", "USER", "COMMAND"]]
if len(hdr) != 1:
    bad("no table header")
cols = lines[hdr[0]].split()
if w == 80 and (cols[-1] not in ("XING/s", "SYNC/s", "DEF/s") or "P50us" in cols):
    bad("80 columns should end among the op rates: %r" % cols)
if w >= 200 and (cols[-1] != "TIME" or "ERR" not in cols):
    bad("200 columns should show every column: %r" % cols)
rows, order, ids = {}, [], []
for l in lines[hdr[0] + 1:h - 1]:
    f = l.split()
    if len(f) >= 4 and f[1].isdigit():
        rows[f[1]] = f
        order.append(f[3])
        ids.append(int(f[0]))
want = {os.environ["PID_A"]: "topc-a", os.environ["PID_B"]: "topc-b",
        os.environ["PID_C"]: "topc-c"}
if mode == "filter-b":
    want = {os.environ["PID_B"]: "topc-b"}
if sorted(rows) != sorted(want):
    bad("rows %r, want pids %r" % (sorted(rows), sorted(want)))
for pid, comm in want.items():
    if rows[pid][3] != comm:
        bad("row %r" % rows[pid])
    if len(rows[pid]) != len(cols):
        bad("row %r has %d cells, header %d" % (rows[pid], len(rows[pid]), len(cols)))
if mode == "mem-desc" and order != ["topc-a", "topc-b", "topc-c"]:
    bad("MEM desc order %r" % order)
if mode == "mem-asc" and order != ["topc-c", "topc-b", "topc-a"]:
    bad("MEM asc order %r" % order)
if mode == "id" and (ids != sorted(ids) or order[-1] != "topc-c"):
    bad("ID order %r %r" % (ids, order))
EOF
}

# no line of the screen (with attributes) uses a colour, or some do
check_colours() {
	if [ "$1" = none ]; then
		grep -Eq "$(printf '\033')\[([0-9;]*;)?(3[0-7]|4[0-7])(;[0-9;]*)?m" "$T/screen.txt.e" &&
			fail "--no-color screen has colours"
	else
		grep -Eq "$(printf '\033')\[([0-9;]*;)?(3[0-7]|4[0-7])(;[0-9;]*)?m" "$T/screen.txt.e" ||
			fail "the screen has no colours"
	fi
	return 0
}

ui_quit() {
	tm send-keys -t ui q
	wait_file "$T/ui.rc" . 15 || fail "axon-top did not quit on q"
	[ "$(cat "$T/ui.rc")" = 0 ] || { cat "$T/ui.err" >&2; fail "axon-top exited $(cat "$T/ui.rc")"; }
	[ -s "$T/ui.err" ] && { cat "$T/ui.err" >&2; fail "axon-top wrote to stderr"; }
	tm kill-server 2>/dev/null
	return 0
}

# ---- 80x24, with keys ----------------------------------------------------------
ui_start 80 24
wait_screen "topc-c" 15
wait_screen "Ops/s: [0-9]" 10	# a second sample: rates
check_table 80 24 any
check_colours some
note "80x24:"
sed 's/^/#   |/' "$T/screen.txt"

tm send-keys -t ui h
wait_screen "^Keys"
grep -q "^Columns" "$T/screen.txt" || fail "help has no Columns section"
grep -q "Press any key" "$T/screen.txt" || fail "help has no footer"
tm send-keys -t ui x
wait_screen "^hHelp"

tm send-keys -t ui M
wait_screen "Sort: MEM desc"
check_table 80 24 mem-desc
tm send-keys -t ui M
wait_screen "Sort: MEM asc"
check_table 80 24 mem-asc
tm send-keys -t ui I
wait_screen "Sort: ID asc"
check_table 80 24 id

tm send-keys -t ui /
tm send-keys -t ui -l topc-b
tm send-keys -t ui Enter
wait_screen "Filter: topc-b"
check_table 80 24 filter-b
tm send-keys -t ui /
tm send-keys -t ui Escape
wait_screen "Filter: -"
check_table 80 24 id

# trace C (the last row by id) from the UI, then let it run
tm send-keys -t ui End
tm send-keys -t ui t
wait_screen "Trace of client [0-9]*, pid $PID_C, topc-c"
touch "$T/topc-c.go"
wait_screen "COMPLETE CTX_CREATE = CUDA_SUCCESS" 15
wait_screen "SUBMIT   MEM_MAP(ctx0, addr=0x[0-9a-f]*, len=1.0M) deferred"
python3 -c '
import os, sys
for i, l in enumerate(open(os.environ["T"] + "/screen.txt").read().split("\n")):
    if len(l) > 80:
        sys.exit("trace line %d is %d wide" % (i, len(l)))
' || fail "trace view wider than the screen"
note "trace view:"
sed 's/^/#   |/' "$T/screen.txt"
tm send-keys -t ui q
wait_screen "^hHelp"

# resize: the layout follows
tm resize-window -t ui -x 100 -y 30
wait_screen "P50us"	# one more column fits at 100
check_table 100 30 id
ui_quit

# ---- 200x60 ------------------------------------------------------------------------
ui_start 200 60
wait_screen "Ops/s: [0-9]" 15
check_table 200 60 any
note "200x60 (first 8 lines):"
head -n 8 "$T/screen.txt" | sed 's/^/#   |/'
ui_quit

# ---- no colours -----------------------------------------------------------------------
ui_start 80 24 --no-color
wait_screen "topc-c" 15
check_table 80 24 any
check_colours none
ui_quit

stop_client topc-a
stop_client topc-b
stop_client topc-c
echo "axon-top UI: all checks passed"
exit 0
