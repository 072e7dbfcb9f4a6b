#!/bin/sh
# axon-top --trace: a client's calls, in order, with arguments and results,
# until the client exits; and the trace's error exits.
. "${AXON_BUILD:-$(cd "$(dirname "$0")/.." && pwd)}/tests/bin/axon-top-lib.sh"

[ -r "$CUBIN" ] || skip "$CUBIN is missing (built from tests/sim-kernels/kernels.cu with nvcc)"
start_axond

# --- by pid, raw sizes ------------------------------------------------------
start_client topc-t --wait-go --alloc 8M --memsets 2 --launches 2 --syncs 1 --bad 1
PID_T=$CLIENT_PID
wait_file "$T/topc-t.out" "^ready $PID_T" 20 || fail "client did not connect"
timeout 60 "$TOP" -p "$PID_T" --trace --bytes >"$T/trace.txt" 2>"$T/trace.err" &
TRACER=$!
OUR_PIDS="$OUR_PIDS $TRACER"
# The header is printed once the daemon accepted the tracer.
wait_file "$T/trace.txt" "^# tracing axon client" 20 || { cat "$T/trace.err" >&2; fail "no trace header"; }
touch "$T/topc-t.go"
wait_client topc-t
stop_client topc-t
wait "$TRACER"
rc=$?
[ $rc -eq 0 ] || { cat "$T/trace.err" >&2; fail "axon-top --trace exited $rc"; }
[ -s "$T/trace.err" ] && { cat "$T/trace.err" >&2; fail "axon-top --trace wrote to stderr"; }
note "trace:"
sed 's/^/#   /' "$T/trace.txt"

export PID_T T
python3 - <<'EOF' || fail "trace check"
import os, re, sys
def bad(msg):
    print("trace: " + msg, file=sys.stderr); sys.exit(1)
lines = open(os.environ["T"] + "/trace.txt").read().splitlines()
if not re.match(r"# tracing axon client \d+, pid %s, topc-t " % os.environ["PID_T"], lines[0]):
    bad("header " + lines[0])
if not lines[-1].startswith("# trace ended"):
    bad("last line " + lines[-1])
rec = []
for l in lines:
    if l.startswith("#"):
        continue
    m = re.match(r"\s*(-?\d+\.\d{3}) (SUBMIT|COMPLETE) +([A-Z_]+)(.*)$", l)
    if not m:
        bad("unparsable line %r" % l)
    rec.append((float(m.group(1)), m.group(2), m.group(3), m.group(4), l))
if any(b[0] < a[0] for a, b in zip(rec, rec[1:])):
    bad("time goes backwards")
subs = [r[2] for r in rec if r[1] == "SUBMIT"]
# The calls topclient makes, in its order (the shim may add its own ops in
# between, e.g. a STREAM_SYNC inside a synchronous memset).
want = ["CTX_CREATE", "MEM_MAP", "MEMSET", "MEMSET", "MODULE_LOAD",
        "MODULE_GET_FUNC", "LAUNCH", "LAUNCH", "STREAM_SYNC", "MEMCPY_DTOH",
        "MEMCPY_DTOH", "MEM_UNMAP", "CTX_SYNC"]
i = 0
for op in subs:
    if i < len(want) and op == want[i]:
        i += 1
if i != len(want):
    bad("submissions %r do not contain %r in order (stuck at %s)" % (subs, want, want[i]))
def first(kind, op, start=0):
    for j in range(start, len(rec)):
        if rec[j][1] == kind and rec[j][2] == op:
            return j
    bad("no %s %s" % (kind, op))
# arguments
mm = rec[first("SUBMIT", "MEM_MAP")][4]
if "len=8388608" not in mm or " deferred" not in mm or "ctx0" not in mm:
    bad("MEM_MAP args: " + mm)
la = rec[first("SUBMIT", "LAUNCH")][4]
if "grid=(2,1,1), block=(128,1,1)" not in la or not re.search(r"\(fn\d+,", la):
    bad("LAUNCH args: " + la)
ms = rec[first("SUBMIT", "MEMSET")][4]
if not re.search(r"MEMSET\(dst=0x[0-9a-f]+, n=1024\) strm\d+ deferred", ms):
    bad("MEMSET args: " + ms)
cc = rec[first("SUBMIT", "CTX_CREATE")][4]
if "CTX_CREATE(dev=0, flags=0x0)" not in cc:
    bad("CTX_CREATE args: " + cc)
# every synchronous submission completes, paired by user data, in order
for j, r in enumerate(rec):
    if r[1] != "SUBMIT" or " deferred" in r[3]:
        continue
    ud = re.search(r"#([0-9a-f]+)$", r[4])
    if not ud:
        bad("sync submission without user data: " + r[4])
    for k in range(j + 1, len(rec)):
        if rec[k][1] == "COMPLETE" and rec[k][4].endswith("#" + ud.group(1)):
            if rec[k][2] != r[2]:
                bad("completion of %s is %s" % (r[2], rec[k][2]))
            if not re.search(r" = CUDA_[A-Z_]+ <\d+\.\d us>", rec[k][4]):
                bad("completion format: " + rec[k][4])
            break
    else:
        bad("no completion for " + r[4])
res = [(r[2], re.search(r"= (\S+)", r[3]).group(1)) for r in rec if r[1] == "COMPLETE"]
if ("CTX_CREATE", "CUDA_SUCCESS") not in res or ("MODULE_LOAD", "CUDA_SUCCESS") not in res:
    bad("results %r" % res)
dtoh = [x for op, x in res if op == "MEMCPY_DTOH"]
if len(dtoh) != 2 or dtoh[0] != "CUDA_SUCCESS" or not dtoh[1].startswith("CUDA_ERROR_"):
    bad("MEMCPY_DTOH results %r (want success, then the bad copy's error)" % dtoh)
print("trace: ok, %d records" % len(rec))
EOF

# --- by client id, from the stats -----------------------------------------------
start_client topc-u --wait-go --alloc 1M --memsets 1 --syncs 1
PID_U=$CLIENT_PID
wait_file "$T/topc-u.out" "^ready $PID_U" 20 || fail "client U did not connect"
ID_U=$("$TOP" -b -n 1 -d 0.1 --json -p "$PID_U" | python3 -c 'import json,sys; print(json.load(sys.stdin)["clients"][0]["id"])') ||
	fail "no id for client U"
timeout 60 "$TOP" --client "$ID_U" --trace >"$T/trace2.txt" 2>"$T/trace2.err" &
TRACER=$!
OUR_PIDS="$OUR_PIDS $TRACER"
wait_file "$T/trace2.txt" "^# tracing axon client $ID_U, pid $PID_U" 20 || fail "no trace by --client"
touch "$T/topc-u.go"
wait_client topc-u
stop_client topc-u
wait "$TRACER" || fail "axon-top --client --trace exited $?"
grep -q "SUBMIT   MEM_MAP(ctx0, addr=0x[0-9a-f]*, len=1.0M) deferred" "$T/trace2.txt" ||
	{ cat "$T/trace2.txt" >&2; fail "human-readable MEM_MAP size"; }
grep -q "COMPLETE STREAM_SYNC = CUDA_SUCCESS" "$T/trace2.txt" || fail "STREAM_SYNC completion"
tail -n 1 "$T/trace2.txt" | grep -q "^# trace ended" || fail "trace by --client did not end"

# --- errors --------------------------------------------------------------------
"$TOP" --client 999999 --trace >/dev/null 2>"$T/e1" && fail "unknown client: exit 0"
grep -q "no client 999999" "$T/e1" || { cat "$T/e1" >&2; fail "unknown client: message"; }
"$TOP" -p 1 --trace >/dev/null 2>"$T/e2" && fail "pid without client: exit 0"
grep -q "no client with pid 1" "$T/e2" || { cat "$T/e2" >&2; fail "pid 1: message"; }
"$TOP" --trace >/dev/null 2>&1
[ $? -eq 2 ] || fail "--trace alone should be a usage error"

echo "axon-top trace: all checks passed"
exit 0
