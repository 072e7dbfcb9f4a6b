#!/usr/bin/env python3
# Writes the fuzzers' seed corpora (tests/fuzz/corpus/): real hellos, real
# SQE sequences in fuzz-sqe's record format (tests/fuzz/fuzz-sqe.c), and
# small module images compiled from tests/fuzz/seed-kernels.cu when nvcc is
# there (cubin, PTX, fatbins plain, LZ4 and ZSTD). Reproducers of findings
# (corpus/<target>/regress-*) are kept as they are.
#
#   tests/fuzz/gen-corpus.py [--nvcc PATH]
import argparse
import os
import shutil
import struct
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")

MAGIC = 0x4E4F5841
HELLO_CLIENT, HELLO_STATS, HELLO_TRACE = 1, 2, 3


def params(sq=0, cq=0, data=0, flags=0):
    # struct axon_params: 168 bytes; the daemon fills everything but these.
    return struct.pack("<IIQII", sq, cq, data, flags, 0) + bytes(168 - 24)


def hello(kind=HELLO_CLIENT, major=1, minor=0, flags=0, target_client=0,
          target_pid=0, p=None, magic=MAGIC):
    h = struct.pack("<IHHIIQII", magic, major, minor, kind, flags,
                    target_client, target_pid, 0)
    return h + (p if p is not None else params())


def hellos():
    yield "client-default", hello()
    yield "client-libaxon-64", hello(p=params(sq=64))
    yield "client-small", hello(p=params(sq=1, cq=1, data=4096))
    yield "client-odd", hello(p=params(sq=100, cq=300, data=12345))
    yield "client-max", hello(p=params(sq=4096, cq=8192, data=1 << 30))
    yield "client-sq-too-big", hello(p=params(sq=4097))
    yield "client-cq-below-sq", hello(p=params(sq=256, cq=128))
    yield "client-data-too-big", hello(p=params(data=(1 << 30) + 1))
    yield "client-minor-9", hello(minor=9)
    yield "client-flags", hello(flags=1)
    yield "client-param-flags", hello(p=params(flags=4))
    yield "client-target", hello(target_client=1)
    yield "abi-2", hello(major=2)
    yield "bad-magic", hello(magic=0x12345678)
    yield "short", hello()[:100]
    yield "long", hello() + bytes(56)
    yield "stats", hello(kind=HELLO_STATS)
    yield "trace-client", hello(kind=HELLO_TRACE, target_client=1)
    yield "trace-pid", hello(kind=HELLO_TRACE, target_pid=1)
    yield "kind-9", hello(kind=9)


# ---- fuzz-sqe records ----------------------------------------------------

OPS = ("NOP CTX_CREATE CTX_DESTROY CTX_SYNC MEM_MAP MEM_UNMAP MEM_GET_INFO "
       "MEMCPY_HTOD MEMCPY_DTOH MEMCPY_DTOD MEMSET MODULE_LOAD MODULE_UNLOAD "
       "MODULE_GET_FUNC MODULE_GET_GLOBAL LAUNCH STREAM_CREATE STREAM_DESTROY "
       "STREAM_SYNC STREAM_WAIT_EVENT EVENT_CREATE EVENT_DESTROY EVENT_RECORD "
       "EVENT_ELAPSED FUNC_GET_ATTR CAPTURE_BEGIN CAPTURE_END GRAPH_INSTANTIATE "
       "GRAPH_LAUNCH GRAPH_DESTROY GRAPH_EXEC_DESTROY GRAPH_EXEC_UPDATE "
       "LAUNCH_EX FUNC_SET_ATTR TENSOR_MAP_ENCODE HOST_FUNC HOSTMEM_REGISTER "
       "HOSTMEM_UNREGISTER MEM_CREATE MEM_RELEASE DEVOUT_READ OCCUPANCY "
       "PRIVATE_CALL MODULE_FUNCS MEMCPY_2D").split()
OP = {n: i for i, n in enumerate(OPS)}
DEFERRED = 1

# fuzz-sqe's pool (make_pool), by index
P = dict(zero=0, one=1, two=2, three=3, ctx=4, dstream=5, stream=6, ev1=7,
         ev2=8, base=9, base256=10, end1m_256=11, end1m=12, base2m=13,
         end2m=14, other=15, module=16, func=17, memh=18, gran=19, graph=20,
         exec=21, data_size=22, ones=23)

S_STREAM, S_W0, S_W1, S_W2, S_W3, S_UD, S_GENERIC = 1, 2, 4, 8, 16, 32, 64


def sqe(op, flags=0, user_data=7, stream=0, words=(0, 0, 0, 0, 0)):
    w = list(words) + [0] * (5 - len(words))
    return struct.pack("<BBHIQQ5Q", OP[op], flags, 0, 0, user_data, stream, *w)


def rec(sel, body):
    assert len(body) == 64
    return bytes([sel]) + body


def call(op, flags=0, stream=None, w=(), pool=(), user_data=7):
    """An SQE; stream / words given as pool names are patched from the pool."""
    sel = S_GENERIC
    words = []
    for i, v in enumerate(w):
        if isinstance(v, str):
            sel |= S_W0 << i
            v = P[v]
        words.append(v)
    s = 0
    if stream is not None:
        sel |= S_STREAM
        s = P[stream]
    return rec(sel, sqe(op, flags, user_data, s, words))


def data(off, payload):
    payload = payload + bytes(56 - len(payload))
    return rec(0xFF, struct.pack("<H6x", off) + payload)


def pointer(off, name, add=0):
    return rec(0xFC, struct.pack("<HBxI", off, P[name], add) + bytes(56))


SETTLE = rec(0xFE, bytes(64))
END_NOW = rec(0xFD, bytes(64))


def u32x2(a, b):
    return a | (b << 32)


def memset_words(dst, width, height, pitch, value, elem):
    return (dst, width, height, pitch, u32x2(value, elem))


def copy2d_words(dst, src, width, height, dpitch, spitch, direction, flags=0):
    return (dst, src, u32x2(width, height), u32x2(dpitch, spitch), u32x2(direction, flags))


COPY_2D_HTOD, COPY_2D_DTOH, COPY_2D_DTOD = 0, 1, 2


def launch_words(func, grid, block, shared, args_off):
    return (func, u32x2(grid[0], grid[1]), u32x2(grid[2], block[0]),
            u32x2(block[1], block[2]), u32x2(shared, args_off))


def obj_words(handle=0, arg0=0, arg1=0, data_off=0, data_len=0, arg2=0):
    return (handle, arg0, arg1, u32x2(data_off, data_len), arg2)


def fill_args(off):
    # fill(float *p, float v, int n): p at 0, v at 8, n at 12
    return [pointer(off, "base"), data(off + 8, struct.pack("<fi", 2.5, 64))]


def sqe_seeds():
    yield "nop", [call("NOP"), call("NOP", DEFERRED)]
    yield "copies", [
        data(0, b"hello, device" * 4),
        call("MEMCPY_HTOD", stream="dstream", w=("base", 0, 52)),
        call("MEMCPY_DTOD", stream="stream", w=("base2m", "base", 52)),
        call("MEMCPY_DTOH", stream="dstream", w=(4096, "base2m", 52)),
        call("STREAM_SYNC", stream="dstream")]
    yield "copies-deferred", [
        call("MEMCPY_HTOD", DEFERRED, stream="stream", w=("end1m_256", 0, 256)),
        call("MEMCPY_HTOD", DEFERRED, stream="stream", w=("end1m_256", 0, 257)),
        call("CTX_SYNC", w=("ctx",))]
    yield "copies-2d", [
        data(0, bytes(range(56))), data(56, bytes(range(100, 156))),
        call("MEMCPY_2D", stream="dstream",
             w=copy2d_words("base", 0, 100, 7, 256, 128, COPY_2D_HTOD)),
        call("MEMCPY_2D", DEFERRED, stream="stream",
             w=copy2d_words("base2m", "base", 100, 7, 100, 256, COPY_2D_DTOD)),
        call("MEMCPY_2D", stream="dstream",
             w=copy2d_words(4096, "base2m", 100, 7, 300, 100, COPY_2D_DTOH)),
        call("MEMCPY_2D", stream="dstream",
             w=copy2d_words("end1m_256", 0, 64, 5, 64, 64, COPY_2D_HTOD)),
        call("MEMCPY_2D", stream="dstream",
             w=copy2d_words("base", "base", 16, 0xffffffff, 0xffffffff, 16, COPY_2D_DTOD)),
        call("MEMCPY_2D", stream="dstream",
             w=copy2d_words("base", 0, 0, 3, 0, 0, COPY_2D_HTOD)),
        call("STREAM_SYNC", stream="stream")]
    yield "memsets", [
        call("MEMSET", stream="dstream", w=memset_words("base", 256, 1, 256, 0x41, 1)),
        call("MEMSET", stream="dstream", w=memset_words("base", 16, 4, 1024, 0x4142, 2)),
        call("MEMSET", DEFERRED, stream="stream",
             w=memset_words("base2m", 64, 2, 512, 7, 4)),
        call("MEMSET", stream="dstream", w=memset_words("base", 0, 2, 0, 0, 1)),
        call("STREAM_SYNC", stream="stream")]
    yield "launch", fill_args(256) + [
        call("LAUNCH", stream="dstream",
             w=launch_words("func", (1, 1, 1), (64, 1, 1), 0, 256)),
        call("STREAM_SYNC", stream="dstream")]
    yield "launch-deferred", fill_args(512) + [
        call("LAUNCH", DEFERRED, stream="stream",
             w=launch_words("func", (2, 1, 1), (32, 1, 1), 0, 512)),
        call("CTX_SYNC", w=("ctx",))]
    # LAUNCH_EX: header, one attribute (cooperative = 2), args at 80
    hdr = struct.pack("<3I3IIIII", 1, 1, 1, 64, 1, 1, 0, 1, 80, 0)
    attr = struct.pack("<II4Q", 2, 0, 1, 0, 0, 0)
    yield "launch-ex", [data(1024, hdr), data(1024 + 40, attr),
                        pointer(1024 + 80, "base"),
                        data(1024 + 88, struct.pack("<fi", 1.0, 16)),
                        call("LAUNCH_EX", stream="dstream",
                             w=obj_words("func", 0, 0, 1024, 80 + 16)),
                        call("STREAM_SYNC", stream="dstream")]
    yield "events", [
        call("EVENT_RECORD", stream="dstream", w=("ev1",)),
        call("MEMSET", stream="dstream", w=memset_words("base", 64, 1, 64, 1, 1)),
        call("EVENT_RECORD", stream="dstream", w=("ev2",)),
        call("STREAM_WAIT_EVENT", stream="stream", w=("ev2",)),
        SETTLE,
        call("EVENT_ELAPSED", w=("ev1", "ev2")),
        call("EVENT_DESTROY", w=("ev1",)),
        call("EVENT_ELAPSED", w=("ev1", "ev2"))]
    yield "streams", [
        call("STREAM_CREATE", w=("ctx", 1, (1 << 64) - 3)),
        call("STREAM_CREATE", w=("ctx", 0, 5)),
        call("STREAM_DESTROY", w=("stream",)),
        call("MEMSET", stream="stream", w=memset_words("base", 8, 1, 8, 0, 1)),
        call("STREAM_DESTROY", w=("dstream",)),
        call("STREAM_SYNC", stream="stream")]
    yield "hostfunc", [
        call("MEMSET", stream="stream", w=memset_words("base", 64, 1, 64, 0, 1)),
        rec(S_GENERIC | S_STREAM | S_UD, sqe("HOST_FUNC", 0, 1, P["stream"], (0, 0))),
        call("MEMSET", stream="stream", w=memset_words("base", 64, 1, 64, 9, 1)),
        call("EVENT_RECORD", stream="stream", w=("ev1",)),
        call("STREAM_WAIT_EVENT", stream="dstream", w=("ev1",)),
        call("MEMSET", stream="dstream", w=memset_words("base", 64, 1, 64, 3, 1)),
        SETTLE,
        call("HOST_FUNC", DEFERRED, stream="stream", w=("one", 1)),
        call("STREAM_SYNC", stream="dstream")]
    yield "hostfunc-never-done", [
        rec(S_GENERIC | S_STREAM | S_UD, sqe("HOST_FUNC", 0, 2, P["stream"], (0, 0))),
        call("MEMSET", stream="stream", w=memset_words("base", 64, 1, 64, 9, 1)),
        call("STREAM_SYNC", stream="stream")]
    yield "graph", [
        call("GRAPH_LAUNCH", stream="dstream", w=("exec",)),
        call("GRAPH_LAUNCH", DEFERRED, stream="stream", w=("exec",)),
        call("GRAPH_EXEC_UPDATE", w=("exec", "graph")),
        call("STREAM_SYNC", stream="dstream"),
        call("GRAPH_DESTROY", w=("graph",)),
        call("GRAPH_LAUNCH", stream="dstream", w=("exec",)),
        call("GRAPH_EXEC_DESTROY", w=("exec",))]
    yield "capture", [
        call("CAPTURE_BEGIN", stream="dstream", w=(0, 0)),
        call("MEMSET", stream="dstream", w=memset_words("base", 64, 1, 64, 5, 1)),
        call("EVENT_RECORD", stream="dstream", w=("ev1",)),
        call("STREAM_WAIT_EVENT", stream="stream", w=("ev1",)),
        call("MEMCPY_DTOD", stream="stream", w=("base2m", "base", 64)),
        call("HOST_FUNC", stream="dstream", w=(0, 2, 0)),
        SETTLE]
    yield "module", [
        data(4096, b"fill\0"),
        call("MODULE_GET_FUNC", w=("module", 0, 0, 4096, 2056)),
        data(4096, b"g_table\0"),
        call("MODULE_GET_GLOBAL", w=("module", 0, 0, 4096, 8)),
        data(4096, b"nope\0"),
        call("MODULE_GET_GLOBAL", w=("module", 0, 0, 4096, 5)),
        call("MODULE_FUNCS", w=("module", 0, 0, 8192, 64)),
        call("MODULE_FUNCS", w=("module", 0, 0, 8192, 2)),
        call("MODULE_UNLOAD", w=("module",)),
        call("FUNC_GET_ATTR", w=("func", 0))]
    ptx = (b".version 9.0\n.target sm_90\n.address_size 64\n"
           b".global .align 8 .u64 big[4096];\n"
           b".visible .entry nop()\n{\n\tret;\n}\n")
    yield "module-load", [data(16384 + i, ptx[i:i + 56]) for i in range(0, len(ptx), 56)] + [
        call("MODULE_LOAD", w=("ctx", 0, 0, 16384, len(ptx))),
        call("MODULE_LOAD", w=("ctx", 0, 0, 16384, len(ptx) - 9))]
    yield "funcattr", [
        call("FUNC_GET_ATTR", w=("func", 0)),
        call("FUNC_GET_ATTR", w=("func", 8)),
        call("FUNC_SET_ATTR", w=("func", 8, 65536)),
        call("FUNC_SET_ATTR", w=("func", 9, (1 << 64) - 1)),
        call("FUNC_GET_ATTR", w=("func", 1 << 40))]
    occ = struct.pack("<Q3I3H3BBHII", 0, 1, 1, 1, 128, 1, 1, 2, 1, 1,
                      0, 0, 0, 0)[8:]
    yield "occupancy", [
        rec(S_GENERIC | S_W0, sqe("OCCUPANCY", 0, 7, 0,
                                  struct.unpack("<5Q", struct.pack("<Q", P["func"]) + occ))),
        call("OCCUPANCY", w=("func", 0, 0, 0, 0))]
    # tensor map: tiled, float32 (7), rank 2, 64x64 of 4-byte elements
    req = struct.pack("<10I3i3i5I5I", 0, 7, 2, 0, 0, 0, 0, 0, 0, 0,
                      0, 0, 0, 0, 0, 0, 16, 16, 0, 0, 0, 1, 1, 0, 0, 0)
    dims = struct.pack("<5Q4Q", 64, 64, 0, 0, 0, 256, 0, 0, 0)
    body = req + struct.pack("<Q", 0) + dims
    tm = [data(20480 + i, body[i:i + 56]) for i in range(0, len(body), 56)]
    yield "tensormap", tm + [pointer(20480 + len(req), "base"),
                             call("TENSOR_MAP_ENCODE", w=("ctx", 0, 0, 20480, len(body)))]
    yield "memory", [
        call("MEM_GET_INFO", w=(0, 0)),
        call("MEM_MAP", w=("ctx", "end1m", 4096)),
        call("MEM_MAP", DEFERRED, w=("ctx", "end2m", 1 << 20)),
        call("MEM_MAP", w=("ctx", "base", 4096)),
        call("MEM_UNMAP", w=("ctx", "base2m", 0)),
        call("MEMSET", stream="dstream", w=memset_words("base2m", 64, 1, 64, 5, 1)),
        call("MEM_UNMAP", DEFERRED, w=("ctx", "base", 0)),
        call("CTX_SYNC", w=("ctx",))]
    yield "vmm", [
        rec(S_GENERIC | S_W0 | S_W1 | S_W2 | S_W3,
            sqe("MEM_MAP", 0, 7, 0, (P["ctx"], P["end2m"], P["gran"], P["memh"], 0))),
        call("MEM_CREATE", w=("memh",)),
        call("MEM_RELEASE", w=("memh",)),
        call("MEMSET", stream="dstream", w=memset_words("end2m", 4096, 1, 4096, 1, 1)),
        call("MEM_UNMAP", w=("ctx", "end2m", 0)),
        call("MEM_RELEASE", w=("memh",)),
        call("MEM_CREATE", w=(0, (1 << 64) - 1, 0))]
    yield "ctx", [
        call("CTX_CREATE", w=(0, 0, 0)),
        call("CTX_CREATE", w=(0, 7, 4)),
        call("MEMSET", DEFERRED, stream="dstream", w=memset_words("base", 64, 1, 64, 0, 1)),
        call("CTX_DESTROY", w=("ctx",)),
        call("CTX_SYNC", w=("ctx",)),
        call("MEMSET", stream="stream", w=memset_words("base", 64, 1, 64, 0, 1))]
    yield "devout-private", [
        call("DEVOUT_READ", w=(0, 0, 0, 0, 64)),
        call("DEVOUT_READ", w=(0, 1, 0, 65000, 4096)),
        call("PRIVATE_CALL", w=("ctx", 0, 0)),
        call("PRIVATE_CALL", w=("ctx", 1, 0)),
        call("PRIVATE_CALL", w=("ctx", 2, 0)),
        call("PRIVATE_CALL", w=("ctx", 3, 0))]
    yield "hostmem", [
        call("HOSTMEM_REGISTER", w=(1, 1 << 20, 4096, 0, u32x2(0, 32))),
        call("HOSTMEM_UNREGISTER", w=(0, 1 << 20)),
        call("MEMCPY_HTOD", stream="dstream", w=("base", 1 << 20, 64, 1))]
    yield "foreign", [
        call("MEMSET", stream="dstream", w=memset_words("other", 64, 1, 64, 0, 1)),
        call("MEMCPY_HTOD", stream="dstream", w=("other", 0, 64)),
        call("MEMCPY_DTOD", stream="dstream", w=("base", "other", 64)),
        call("MEM_UNMAP", w=("ctx", "other", 0)),
        call("STREAM_SYNC", stream="dstream")]
    yield "raw-garbage", [rec(0, bytes(range(64))), rec(0, b"\xff" * 64),
                          rec(S_STREAM, sqe("MEMSET", 0, 1, P["dstream"]))]
    yield "end-with-work", [
        call("MEMSET", stream="dstream", w=memset_words("base", 1 << 19, 2, 1 << 19, 0, 1)),
        call("MEMCPY_DTOD", stream="stream", w=("base2m", "base", 65536)),
        rec(S_GENERIC | S_STREAM | S_UD, sqe("HOST_FUNC", 0, 3, P["stream"], (0, 0))),
        call("MEMSET", stream="stream", w=memset_words("base", 64, 1, 64, 9, 1)),
        END_NOW]


def write(target, name, blob):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(blob)


def images(nvcc):
    cu = os.path.join(HERE, "seed-kernels.cu")
    with tempfile.TemporaryDirectory() as tmp:
        variants = {
            "cubin-sm90": ["-cubin", "-arch=sm_90"],
            "ptx-compute90": ["-ptx", "-arch=compute_90"],
            "fatbin-sm90-ptx": ["-fatbin", "-gencode", "arch=compute_90,code=sm_90",
                                "-gencode", "arch=compute_90,code=compute_90"],
            "fatbin-lz4": ["-fatbin", "-gencode", "arch=compute_90,code=sm_90",
                           "-gencode", "arch=compute_90,code=compute_90",
                           "-compress-mode=speed", "-Xfatbin", "-compress-all"],
            "fatbin-zstd": ["-fatbin", "-gencode", "arch=compute_90,code=compute_90",
                            "-compress-mode=size", "-Xfatbin", "-compress-all"],
            "fatbin-sm80-only": ["-fatbin", "-gencode", "arch=compute_80,code=sm_80"],
        }
        for name, flags in variants.items():
            out = os.path.join(tmp, name)
            subprocess.run([nvcc, *flags, "-o", out, cu], check=True)
            with open(out, "rb") as f:
                write("image", name, f.read())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nvcc", default=os.path.join(os.environ.get("CUDA", "/usr/local/cuda"),
                                                   "bin", "nvcc"))
    a = ap.parse_args()
    for target in ("hello", "sqe"):
        d = os.path.join(CORPUS, target)
        if os.path.isdir(d):
            for f in os.listdir(d):
                if not f.startswith("regress-"):
                    os.unlink(os.path.join(d, f))
    for name, blob in hellos():
        write("hello", name, blob)
    for name, recs in sqe_seeds():
        write("sqe", name, b"".join(recs))
    if shutil.which(a.nvcc) or os.path.exists(a.nvcc):
        images(a.nvcc)
    else:
        print("gen-corpus: no nvcc: image seeds left as they are")
    # PTX by hand: what the parser reads besides nvcc's output
    write("image", "ptx-hand", b"// comment\n.version 8.0\n.target sm_90, debug\n"
          b".address_size 64\n.const .align 4 .u32 k[2] = {1, 2};\n"
          b".global .align 8 .u64 p = generic(k);\n"
          b".visible .entry e(.param .align 16 .b8 s[24], .param .u8 c,\n"
          b"  .param .ptr .global .align 8 .u64 q)\n{ ret; }\n")


if __name__ == "__main__":
    main()
