#!/bin/sh
# axon-top batch mode against a private axond and known clients:
#   -b text tables (--bytes) and --json, field by field;
#   rates of a busy client; -u / -p filters; --sort; error exits.
. "${AXON_BUILD:-$(cd "$(dirname "$0")/.." && pwd)}/tests/bin/axon-top-lib.sh"

start_axond

LAUNCHES=0
if [ -r "$CUBIN" ]; then
	LAUNCHES=2
else
	note "no $CUBIN (nvcc): client A makes no launches"
fi

# A: 64 MiB, 3 memsets, 2 launches, 2 syncs.  B: 3 MiB, 5 memsets, 2 errors.
start_client topc-a --alloc 64M --memsets 3 --launches $LAUNCHES --syncs 2
PID_A=$CLIENT_PID
start_client topc-b --alloc 3M --memsets 5 --syncs 1 --bad 2
PID_B=$CLIENT_PID
wait_client topc-a
wait_client topc-b

USER_NAME=$(id -un)
export PID_A PID_B LAUNCHES USER_NAME AXOND_PID T

# ---- text ----------------------------------------------------------------
"$TOP" -b -n 2 -d 0.2 --bytes >"$T/batch.txt" 2>"$T/batch.err" ||
	{ cat "$T/batch.err" >&2; fail "axon-top -b exited $?"; }
[ -s "$T/batch.err" ] && { cat "$T/batch.err" >&2; fail "axon-top -b wrote to stderr"; }
note "batch text:"
sed 's/^/#   /' "$T/batch.txt"

python3 - <<'EOF' || fail "batch text check"
import os, re, sys
txt = open(os.environ["T"] + "/batch.txt").read()
snaps = [s for s in txt.split("axon-top ")[1:]]
def bad(msg):
    print("batch text: " + msg, file=sys.stderr); sys.exit(1)
def count(cell):
    # From 100000 up a latency cell is shortened ("131k"): a loaded
    # machine gets there.
    mult = {"k": 1e3, "M": 1e6, "G": 1e9}.get(cell[-1:], 1)
    return float(cell[:-1]) * mult if mult != 1 else int(cell)
if len(snaps) != 2:
    bad("%d snapshots, want 2" % len(snaps))
want_cols = ["ID", "PID", "USER", "COMMAND", "DEV", "MEM", "OPS/s", "LOC/s", "DEF/s",
             "SYNC/s", "XING/s", "P50us", "P99us", "SQ", "ERR", "H2D/s", "D2H/s",
             "ALLOCS", "TIME"]
for s in snaps:
    lines = s.splitlines()
    head = lines[0]
    if "axond pid %s " % os.environ["AXOND_PID"] not in head or "backend sim" not in head:
        bad("first line: " + head)
    if not lines[1].startswith("clients 2 "):
        bad("clients line: " + lines[1])
    iv = re.search(r"interval (\d+\.\d+)s$", lines[1])
    if not iv or not 0.1 <= float(iv.group(1)) <= 1.0:
        bad("interval: " + lines[1])
    gpu = [l for l in lines if l.startswith("GPU0 ")]
    if len(gpu) != 1 or "/ 17179869184 total" not in gpu[0]:
        bad("device line: %r" % gpu)
    hdr = [i for i, l in enumerate(lines) if l.split()[:2] == ["ID", "PID"]]
    if len(hdr) != 1:
        bad("no table header")
    cols = lines[hdr[0]].split()
    if cols != want_cols:
        bad("columns %r" % cols)
    rows = {}
    for l in lines[hdr[0] + 1:]:
        if not l.strip():
            break
        f = l.split()
        if len(f) != len(cols):
            bad("row has %d fields: %r" % (len(f), l))
        rows[int(f[1])] = dict(zip(cols, f))
    a, b = rows.get(int(os.environ["PID_A"])), rows.get(int(os.environ["PID_B"]))
    if not a or not b or len(rows) != 2:
        bad("rows %r" % rows)
    # A's module calls printf: its load charges the runtime's reserve
    # in the context (62 MiB on an H200: axond/localmem.c)
    rsv = (62 << 20) if int(os.environ["LAUNCHES"]) else 0
    for r, comm, mem, err in ((a, "topc-a", (64 << 20) + rsv, 0), (b, "topc-b", 3 << 20, 2)):
        if r["COMMAND"] != comm or r["USER"] != os.environ["USER_NAME"] or r["DEV"] != "0":
            bad("row %r" % r)
        # charged by 2 MiB granule: the allocation rounded up, and module
        # globals a granule of their own: at most 2 MiB more
        if not mem <= int(r["MEM"]) <= mem + (2 << 20):
            bad("%s MEM %s, want about %d" % (comm, r["MEM"], mem))
        if int(r["ERR"]) != err:
            bad("%s ERR %s, want %d" % (comm, r["ERR"], err))
        # idle clients: every rate is zero
        for c in ("OPS/s", "LOC/s", "DEF/s", "SYNC/s", "XING/s"):
            if float(r[c]) != 0:
                bad("%s %s = %s for an idle client" % (comm, c, r[c]))
        if int(r["SQ"]) != 0 or count(r["P50us"]) <= 0 or count(r["P99us"]) < count(r["P50us"]):
            bad("%s SQ/latency %r" % (comm, r))
print("batch text: ok")
EOF

# ---- JSON ----------------------------------------------------------------
"$TOP" -b -n 2 -d 0.2 --json >"$T/batch.json" 2>"$T/json.err" ||
	{ cat "$T/json.err" >&2; fail "axon-top --json exited $?"; }
note "batch JSON (first line):"
head -n 1 "$T/batch.json" | cut -c1-600 | sed 's/^/#   /'

python3 - <<'EOF' || fail "JSON check"
import json, os, sys
def bad(msg):
    print("json: " + msg, file=sys.stderr); sys.exit(1)
lines = open(os.environ["T"] + "/batch.json").read().splitlines()
if len(lines) != 2:
    bad("%d lines, want 2" % len(lines))
launches = int(os.environ["LAUNCHES"])
for line in lines:
    s = json.loads(line)
    # samples are taken on a fixed schedule (-d 0.2), so a first answer
    # that came late under load shortens the daemon-side interval: only
    # that it is a positive interval, not some minimum, is asserted
    if not 0 < s["interval_s"] <= 1.0:
        bad("interval_s %r" % s["interval_s"])
    d = s["daemon"]
    if d["pid"] != int(os.environ["AXOND_PID"]) or d["backend"] != "sim" or d["clients"] != 2:
        bad("daemon %r" % d)
    if s["source"] != "axond" or d["rates"] is None:
        bad("source/rates %r" % s)
    dev = s["devices"]
    if len(dev) != 1 or dev[0]["total_mem"] != 16 << 30:
        bad("devices %r" % dev)
    cl = {c["pid"]: c for c in s["clients"]}
    if sorted(cl) != sorted([int(os.environ["PID_A"]), int(os.environ["PID_B"])]):
        bad("client pids %r" % list(cl))
    if dev[0]["mem_used"] != sum(c["mem"]["mapped"] for c in s["clients"]):
        bad("device mem_used %r != sum of mapped" % dev[0]["mem_used"])
    a, b = cl[int(os.environ["PID_A"])], cl[int(os.environ["PID_B"])]
    exp = {
        "topc-a": (a, (64 << 20) + ((62 << 20) if launches else 0),
                   {"CTX_CREATE": 1, "MEM_MAP": 1, "MEMSET": 3,
                                  "LAUNCH": launches,
                                  "MODULE_LOAD": 1 if launches else 0}, 0),
        "topc-b": (b, 3 << 20, {"CTX_CREATE": 1, "MEM_MAP": 1, "MEMSET": 5,
                                 "LAUNCH": 0, "MODULE_LOAD": 0}, 2),
    }
    for comm, (c, mem, ops, errs) in exp.items():
        if c["comm"] != comm or c["user"] != os.environ["USER_NAME"] or c["uid"] != os.getuid():
            bad("identity %r" % c)
        if not mem <= c["mem"]["mapped"] <= mem + (2 << 20):
            bad("%s mapped %d" % (comm, c["mem"]["mapped"]))
        if c["mem"]["allocations"] < 1 or c["handles"]["contexts"] != 1:
            bad("%s allocations/handles %r" % (comm, c))
        by = c["ops"]["by_op"]
        for op, n in ops.items():
            if by.get(op, 0) != n:
                bad("%s %s = %r, want %d (by_op %r)" % (comm, op, by.get(op), n, by))
        o = c["ops"]
        if o["total"] != o["local"] + o["deferred"] + o["sync"]:
            bad("%s total %r" % (comm, o))
        if sum(by.values()) != o["deferred"] + o["sync"]:
            bad("%s by_op sums to %d, deferred+sync %d" % (comm, sum(by.values()), o["deferred"] + o["sync"]))
        # deferred: MEM_MAP + memsets + launches; sync: at least CTX_CREATE,
        # the stream syncs and the read-back
        if o["deferred"] < 1 + ops["MEMSET"] + ops["LAUNCH"] or o["sync"] < 3:
            bad("%s classes %r" % (comm, o))
        if c["errors"] != errs or c["bytes_dtoh"] < 4 or c["sq_depth"] != 0:
            bad("%s errors/bytes %r" % (comm, c))
        r = c["rates"]
        if r is None or r["ops"] != 0 or r["crossings"] != 0:
            bad("%s rates of an idle client %r" % (comm, r))
print("json: ok")
EOF

# ---- rates of a busy client ----------------------------------------------
start_client topc-busy --alloc 1M --busy
PID_C=$CLIENT_PID
wait_client topc-busy
"$TOP" -b -n 1 -d 0.3 --json -p "$PID_C" >"$T/busy.json" || fail "axon-top -p exited $?"
"$TOP" -b -n 1 -d 0.3 -p "$PID_C" >"$T/busy.txt" || fail "axon-top -p exited $?"
stop_client topc-busy
export PID_C
python3 - <<'EOF' || fail "busy rates"
import json, os, sys
s = json.loads(open(os.environ["T"] + "/busy.json").read())
if len(s["clients"]) != 1 or s["clients"][0]["pid"] != int(os.environ["PID_C"]):
    print("-p: clients %r" % [c["pid"] for c in s["clients"]], file=sys.stderr); sys.exit(1)
r = s["clients"][0]["rates"]
# each loop: one Local call, one deferred memset, two sync calls
if not (r["local"] > 10 and r["deferred"] > 10 and r["sync"] > 10 and r["crossings"] > 10):
    print("busy rates %r" % r, file=sys.stderr); sys.exit(1)
if abs(r["ops"] - (r["local"] + r["deferred"] + r["sync"])) > 0.01 * r["ops"] + 0.01:
    print("ops != sum %r" % r, file=sys.stderr); sys.exit(1)
if abs(s["daemon"]["rates"]["ops"] - r["ops"]) > 0.01 * r["ops"] + 0.01:
    print("total %r vs %r" % (s["daemon"]["rates"], r), file=sys.stderr); sys.exit(1)
txt = open(os.environ["T"] + "/busy.txt").read().splitlines()
rows = [l for l in txt if l.split()[1:2] == [os.environ["PID_C"]]]
if len(rows) != 1 or rows[0].split()[5] in ("0.0", "-"):
    print("busy text row %r" % rows, file=sys.stderr); sys.exit(1)
print("busy: ok", r)
EOF

# ---- filters and sort ------------------------------------------------------
rows() { awk 'f && NF { print $2 } /^ *ID +PID/ { f = 1 } !NF { f = 0 }' "$1"; }
"$TOP" -b -n 1 -d 0.1 -u "$USER_NAME" >"$T/u.txt" || fail "-u exited $?"
[ "$(rows "$T/u.txt" | sort | tr '\n' ' ')" = "$(printf '%s\n' "$PID_A" "$PID_B" | sort | tr '\n' ' ')" ] ||
	{ cat "$T/u.txt" >&2; fail "-u $USER_NAME should show A and B"; }
"$TOP" -b -n 1 -d 0.1 -u "$(id -u)" >"$T/uid.txt" || fail "-u uid exited $?"
[ "$(rows "$T/uid.txt" | wc -l)" -eq 2 ] || fail "-u by uid should show A and B"
"$TOP" -b -n 1 -d 0.1 -u no-such-user-xyz >"$T/nu.txt" || fail "-u nobody exited $?"
grep -q '^(no clients)$' "$T/nu.txt" || { cat "$T/nu.txt" >&2; fail "-u no-such-user: rows shown"; }
"$TOP" -b -n 1 -d 0.1 -p "$PID_B" >"$T/p.txt" || fail "-p exited $?"
[ "$(rows "$T/p.txt")" = "$PID_B" ] || { cat "$T/p.txt" >&2; fail "-p $PID_B"; }
"$TOP" -b -n 1 -d 0.1 --sort mem >"$T/s1.txt" || fail "--sort mem exited $?"
[ "$(rows "$T/s1.txt" | tr '\n' ' ')" = "$PID_A $PID_B " ] || { cat "$T/s1.txt" >&2; fail "--sort mem: A first"; }
"$TOP" -b -n 1 -d 0.1 --sort mem -r >"$T/s2.txt" || fail "--sort mem -r exited $?"
[ "$(rows "$T/s2.txt" | tr '\n' ' ')" = "$PID_B $PID_A " ] || { cat "$T/s2.txt" >&2; fail "--sort mem -r: B first"; }
"$TOP" -b -n 1 -d 0.1 --sort err >"$T/s3.txt" || fail "--sort err exited $?"
[ "$(rows "$T/s3.txt" | head -n 1)" = "$PID_B" ] || { cat "$T/s3.txt" >&2; fail "--sort err: B first"; }
"$TOP" -b -n 1 -d 0.1 >"$T/h.txt" || fail "human sizes exited $?"
# 64 MiB, and when it launches a granule for its module's globals and the
# printf reserve (62 MiB)
grep -Eq " topc-a +0 +(64\.0M|128M) " "$T/h.txt" || { cat "$T/h.txt" >&2; fail "human MEM 64.0M (128M) for A"; }
grep -q "mem .* used / 16\.0G total" "$T/h.txt" || fail "human device memory"

# ---- errors ------------------------------------------------------------------
"$TOP" -b -n 1 --addr "unix:$T/nothing.sock" >/dev/null 2>"$T/e1" && fail "no daemon: exit 0"
grep -q "cannot reach axond" "$T/e1" || { cat "$T/e1" >&2; fail "no daemon: message"; }
"$TOP" -b -n 1 --source proc --proc-dir "$T/no-proc" >/dev/null 2>"$T/e2" &&
	fail "--source proc without the files: exit 0"
grep -q "cannot open $T/no-proc/stats" "$T/e2" || { cat "$T/e2" >&2; fail "--source proc: message"; }
"$TOP" -b -d 0 >/dev/null 2>&1
[ $? -eq 2 ] || fail "-d 0 should be a usage error"
"$TOP" -b --sort nonsense >/dev/null 2>&1
[ $? -eq 2 ] || fail "--sort nonsense should be a usage error"
"$TOP" </dev/null >/dev/null 2>"$T/e3" && fail "no terminal: exit 0"
grep -q "not a terminal" "$T/e3" || fail "no terminal: message"

stop_client topc-a
stop_client topc-b
echo "axon-top batch: all checks passed"
exit 0
