#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate the libcuda shim's stubs and cuGetProcAddress table from cuda.h.

Run at build time (stdlib only):

    gen_shim.py --cc "$(CC)" --cuda $(CUDA) --out $(BUILD)/gen

One preprocessor run over <cudaTypedefs.h> (which includes <cuda.h>) and
<cudaProfilerTypedefs.h> (which includes <cudaProfiler.h>) with
__CUDA_API_VERSION_INTERNAL defined: under that macro cuda.h declares every
name NVIDIA's libcuda exports but three -- the old ABI names (cuMemAlloc),
the versioned ones (cuMemAlloc_v2, cuCtxCreate_v4), the per-thread ones
(cuMemcpyHtoD_v2_ptds, cuLaunchKernel_ptsz) -- and #defines none of them
away, and cudaTypedefs.h declares one PFN_<base>_v<version>[_ptds|_ptsz]
typedef per exported variant. The three are the profiler control calls
(cuProfilerInitialize, cuProfilerStart, cuProfilerStop), which libcuda also
exports but cudaProfiler.h declares, with their PFN typedefs in
cudaProfilerTypedefs.h; cudart asks cuGetProcAddress for them, and a table
without them makes cudaProfilerStart fail with "requires a newer driver".

Outputs (in --out):
  shim_stubs.c       one weak default-visibility definition per declared
                     function, returning axon_shim_unimplemented("<name>")
  shim_proctable.c   the cuGetProcAddress table (hidden), plus a
                     _Static_assert per variant that its prototype is the
                     PFN typedef's type
  shim_proctable.h   the table's declarations
  shim_gen_lists.h   X-macro lists of the exported names and of the table,
                     for the tests

How a variant's version is decided
----------------------------------
For every base name B, the PFN typedefs give versions V and a per-thread
class (none, _ptds, _ptsz):
  * default variants, sorted by V: the oldest is B, then B_v2, B_v3, ...
    (PFN_cuCtxCreate_v2000 -> cuCtxCreate, _v3020 -> cuCtxCreate_v2,
    _v11040 -> cuCtxCreate_v3, _v12050 -> cuCtxCreate_v4);
  * per-thread variants: PFN_B_vV_ptds is the default variant current at
    V plus the suffix (PFN_cuMemcpyHtoD_v7000_ptds -> cuMemcpyHtoD_v2_ptds,
    since cuMemcpyHtoD_v2 is current at 7000).
Every derived name must be declared by cuda.h or cudaProfiler.h (below,
"cuda.h" stands for both), every declared name must be
claimed by exactly one PFN typedef, the arities must agree, two default
variants of one base may not share a version, and (checked by the C
compiler) each variant's type must be the PFN typedef's type. Anything else
stops the build. Known departures from the pattern go in EXCEPTIONS below.
"""

import argparse
import os
import re
import shlex
import subprocess
import sys

# Explicit departures from the ordering rule, keyed by PFN typedef name
# (without "PFN_"), value: the exported symbol it stands for. None are needed
# for CUDA 13.0's headers: every base's PFN typedefs, in version order, map
# onto B, B_v2, B_v3... and the per-thread ones onto the then-current
# variant. Add an entry, with a comment saying why, if a later cuda.h breaks
# the pattern; the verification below still runs on the result.
EXCEPTIONS = {
}

# PFN typedefs to ignore, with the reason (none for CUDA 13.0).
IGNORED_PFNS = {
}

PT_NONE, PT_PTDS, PT_PTSZ = 0, 1, 2
PT_SUFFIX = {PT_NONE: "", PT_PTDS: "_ptds", PT_PTSZ: "_ptsz"}
PT_NAME = {PT_NONE: "AXON_PROC_PT_NONE", PT_PTDS: "AXON_PROC_PT_PTDS",
           PT_PTSZ: "AXON_PROC_PT_PTSZ"}

C_KEYWORDS = {
    "auto", "break", "case", "char", "const", "continue", "default", "do",
    "double", "else", "enum", "extern", "float", "for", "goto", "if",
    "inline", "int", "long", "register", "restrict", "return", "short",
    "signed", "sizeof", "static", "struct", "switch", "typedef", "union",
    "unsigned", "void", "volatile", "while", "_Bool", "__restrict",
    "__restrict__", "__const", "__inline", "__extension__",
}


class GenError(Exception):
    pass


def fail(msg):
    raise GenError(msg)


# The headers that declare exported functions, and those with their PFN
# typedefs (each of the latter includes one of the former).
DECL_HEADERS = ("cuda.h", "cudaProfiler.h")
TYPEDEF_HEADERS = ("cudaTypedefs.h", "cudaProfilerTypedefs.h")


def preprocess(cc, cuda):
    inc = os.path.join(cuda, "include")
    cmd = shlex.split(cc) + ["-E", "-std=gnu11", "-D__CUDA_API_VERSION_INTERNAL",
                             "-I" + inc, "-x", "c", "-"]
    src = "".join("#include <%s>\n" % h for h in TYPEDEF_HEADERS)
    try:
        p = subprocess.run(cmd, input=src,
                           capture_output=True, text=True, check=False)
    except OSError as e:
        fail("cannot run %s: %s" % (cmd[0], e))
    if p.returncode != 0:
        fail("preprocessing cudaTypedefs.h failed (%s):\n%s"
             % (" ".join(cmd), p.stderr))
    return p.stdout


LINEMARKER = re.compile(r'^#\s*(\d+)\s+"((?:[^"\\]|\\.)*)"')


def statements(text):
    """Yields (file, statement) for each top-level declaration or definition,
    the file being the one where the statement starts (from linemarkers)."""
    cur_file = None
    buf = []
    start_file = None
    depth = 0
    for line in text.split("\n"):
        if line.startswith("#"):
            m = LINEMARKER.match(line)
            if m:
                cur_file = m.group(2)
                continue
            if line.startswith("#pragma") or line.startswith("#ident"):
                continue
            fail("unexpected preprocessor line: %r" % line)
        for ch in line + "\n":
            if not buf:
                if ch.isspace():
                    continue
                start_file = cur_file
            buf.append(ch)
            if ch in "({[":
                depth += 1
            elif ch in ")}]":
                depth -= 1
                if depth < 0:
                    fail("unbalanced %r in %s" % (ch, start_file))
                if ch == "}" and depth == 0:
                    s = "".join(buf)
                    head = s[:s.index("{")].rstrip()
                    if head.endswith(")"):      # a function definition
                        yield start_file, " ".join(s.split())
                        buf = []
            elif ch == ";" and depth == 0:
                yield start_file, " ".join("".join(buf).split())
                buf = []
    if "".join(buf).strip():
        fail("trailing text after the last statement: %r" % "".join(buf)[:200])


def split_params(params):
    """Split a parameter list at its top-level commas."""
    out, depth, cur = [], 0, []
    for ch in params:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    last = "".join(cur).strip()
    if last or out:
        out.append(last)
    if out == ["void"] or out == []:
        return []
    return out


DECL = re.compile(r"^(?P<ret>[A-Za-z_][\w\s\*]*?)\s*\b(?P<name>[A-Za-z_]\w*)"
                  r"\s*\((?P<params>.*)\)\s*;$")
PFN = re.compile(r"^typedef\s+(?P<ret>[\w\s\*]+?)\s*\(\s*\*\s*PFN_(?P<name>\w+)\s*\)"
                 r"\s*\((?P<params>.*)\)\s*;$")
PFN_NAME = re.compile(r"^(?P<base>cu\w+?)_v(?P<ver>\d+)(?P<pt>_ptds|_ptsz)?$")
TYPEDEF_NAME = re.compile(r"(?:\(\s*\*\s*(\w+)\s*\)\s*\(.*\)|(\w+)(?:\s*\[[^\]]*\])*)\s*;$")


def parse(text, decl_headers, typedef_headers):
    decls = {}      # name -> (ret, [params], order)
    pfns = []       # (pfn name, ret, [params])
    typedef_names = set()
    decl_headers = {os.path.realpath(h) for h in decl_headers}
    typedef_headers = {os.path.realpath(h) for h in typedef_headers}
    realcache = {}

    def real(f):
        if f not in realcache:
            realcache[f] = os.path.realpath(f) if f else None
        return realcache[f]

    for f, s in statements(text):
        if s.startswith("typedef"):
            m = TYPEDEF_NAME.search(s)
            if m:
                typedef_names.add(m.group(1) or m.group(2))
        rf = real(f)
        if rf in decl_headers:
            if s.startswith(("typedef", "struct", "enum", "union")):
                continue
            if s.endswith("}"):
                if s.startswith("static"):
                    continue        # static inline helpers are not exported
                fail("cuda.h defines a non-static function: %s" % s[:200])
            m = DECL.match(s)
            if not m:
                fail("cuda.h: cannot parse declaration: %s" % s[:300])
            name, ret = m.group("name"), " ".join(m.group("ret").split())
            if name in decls:
                fail("cuda.h declares %s twice" % name)
            decls[name] = (ret, split_params(m.group("params")), len(decls))
        elif rf in typedef_headers:
            m = PFN.match(s)
            if not m:
                fail("cudaTypedefs.h: cannot parse: %s" % s[:300])
            pfns.append((m.group("name"), " ".join(m.group("ret").split()),
                         split_params(m.group("params"))))
    if not decls:
        fail("no declarations found in %s (linemarkers missing?)"
             % ", ".join(sorted(decl_headers)))
    if not pfns:
        fail("no PFN typedefs found in %s" % ", ".join(sorted(typedef_headers)))
    return decls, pfns, typedef_names


def check_params(name, params, typedef_names):
    for p in params:
        if p == "...":
            fail("%s is variadic; the stub generator does not handle that" % name)
        if "(" in p:
            fail("%s: function-pointer parameter %r not handled" % (name, p))
        m = re.match(r"^(?P<type>.*?)\b(?P<id>[A-Za-z_]\w*)\s*(\[[^\]]*\]\s*)*$", p)
        if not m or not m.group("type").strip() or m.group("id") in C_KEYWORDS \
                or m.group("id") in typedef_names:
            fail("%s: parameter %r has no name; a definition needs one" % (name, p))


def build_table(decls, pfns):
    """Returns {base: [(version, pt, variant, pfn), ...]} and checks it."""
    bases = {}
    for pfn, ret, params in pfns:
        if pfn in IGNORED_PFNS:
            continue
        m = PFN_NAME.match(pfn)
        if not m:
            fail("PFN_%s: name does not end in _v<version>[_ptds|_ptsz]" % pfn)
        pt = {None: PT_NONE, "_ptds": PT_PTDS, "_ptsz": PT_PTSZ}[m.group("pt")]
        bases.setdefault(m.group("base"), []).append(
            [int(m.group("ver")), pt, None, pfn, ret, params])

    claimed = {}
    for base, vs in bases.items():
        defaults = sorted((v for v in vs if v[1] == PT_NONE), key=lambda v: v[0])
        pts = sorted((v for v in vs if v[1] != PT_NONE), key=lambda v: v[0])
        for a, b in zip(defaults, defaults[1:]):
            if a[0] == b[0]:
                fail("%s: PFN_%s and PFN_%s share version %d; cannot order them"
                     % (base, a[3], b[3], a[0]))
        for i, v in enumerate(defaults):
            v[2] = base if i == 0 else "%s_v%d" % (base, i + 1)
        for v in pts:
            current = [d for d in defaults if d[0] <= v[0]]
            if not current:
                fail("PFN_%s: per-thread variant older than any default one" % v[3])
            v[2] = current[-1][2] + PT_SUFFIX[v[1]]
        for v in vs:
            if v[3] in EXCEPTIONS:
                v[2] = EXCEPTIONS[v[3]]
            if v[2] not in decls:
                fail("PFN_%s maps to %s, which cuda.h does not declare"
                     % (v[3], v[2]))
            if v[2] in claimed:
                fail("%s is claimed by both PFN_%s and PFN_%s"
                     % (v[2], claimed[v[2]], v[3]))
            claimed[v[2]] = v[3]
            dret, dparams, _ = decls[v[2]]
            if dret != v[4]:
                fail("%s returns %s but PFN_%s returns %s"
                     % (v[2], dret, v[3], v[4]))
            if len(dparams) != len(v[5]):
                fail("%s takes %d parameters but PFN_%s takes %d"
                     % (v[2], len(dparams), v[3], len(v[5])))
        # defaults first, then per-thread ones, each by version
        vs.sort(key=lambda v: (v[1] != PT_NONE, v[0]))
    unclaimed = sorted(n for n in decls if n not in claimed)
    if unclaimed:
        fail("cuda.h declares names no PFN typedef accounts for: %s"
             % ", ".join(unclaimed))
    for e in EXCEPTIONS:
        if not any(v[3] == e for vs in bases.values() for v in vs):
            fail("stale exception: PFN_%s does not exist" % e)
    return bases


HEADER = """/*
 * Generated by libcuda-shim/gen/gen_shim.py from %s
 * (CUDA_VERSION %d). Do not edit; it is rebuilt with the library.
 */
"""


def c_str(s):
    assert re.match(r"^\w+$", s)
    return '"%s"' % s


def gen_stubs(decls, src):
    out = [src]
    out.append("""#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaProfiler.h>
#include "shim-internal-gen.h"

/*
 * One weak definition per function cuda.h declares, with cuda.h's own
 * prototype. A strong definition elsewhere in the shim overrides it at link
 * time.
 */
#define AXON_STUB __attribute__((weak, visibility("default")))
""")
    for name, (ret, params, _) in sorted(decls.items(), key=lambda kv: kv[1][2]):
        plist = ", ".join(params) if params else "void"
        unused = "".join("\t(void)%s;\n" % re.match(
            r"^.*?\b([A-Za-z_]\w*)\s*(\[[^\]]*\]\s*)*$", p).group(1) for p in params)
        if ret == "CUresult":
            body = "\treturn axon_shim_unimplemented(%s);\n" % c_str(name)
        elif ret == "void":
            body = "\t(void)axon_shim_unimplemented(%s);\n" % c_str(name)
        else:
            fail("%s returns %s: no stub rule for that return type" % (name, ret))
        out.append("\nAXON_STUB %s %s(%s)\n{\n%s%s}\n" % (ret, name, plist, unused, body))
    return "".join(out)


def gen_proctable(bases, max_version, src):
    names = sorted(bases)           # strcmp order: all names are ASCII
    strtab, offs = [], {}
    pos = 0

    def intern(s):
        nonlocal pos
        if s not in offs:
            offs[s] = pos
            strtab.append(s)
            pos += len(s) + 1
        return offs[s]

    for b in names:
        intern(b)
    for b in names:
        for v in bases[b]:
            intern(v[2])

    h = [src, """#ifndef AXON_SHIM_PROCTABLE_H
#define AXON_SHIM_PROCTABLE_H

#include <stdint.h>

/* The CUDA version of the cuda.h the table was made from. */
#define AXON_PROC_CUDA_VERSION %d
#define AXON_PROC_NBASES %d
#define AXON_PROC_NVARIANTS %d

enum axon_proc_pt {
	AXON_PROC_PT_NONE = 0,	/* legacy default stream */
	AXON_PROC_PT_PTDS = 1,	/* _ptds: per-thread default stream */
	AXON_PROC_PT_PTSZ = 2,	/* _ptsz: per-thread, stream-ordered */
};

typedef void (*axon_proc_fn)(void);

struct axon_proc_variant {
	axon_proc_fn fn;	/* &<exported symbol> */
	uint32_t name;		/* offset of the symbol's name in axon_proc_strtab */
	int32_t version;	/* CUDA version from which cuGetProcAddress returns it */
	uint8_t pt;		/* enum axon_proc_pt */
};

/*
 * One per base name, sorted by strcmp(). Its variants are
 * axon_proc_variants[first .. first + ndefault + npt): ndefault default ones
 * by ascending version, then npt per-thread ones by ascending version.
 */
struct axon_proc_base {
	uint32_t name;		/* offset in axon_proc_strtab */
	uint16_t first;
	uint8_t ndefault;
	uint8_t npt;
};

#define AXON_PROC_HIDDEN __attribute__((visibility("hidden")))
extern const char axon_proc_strtab[] AXON_PROC_HIDDEN;
extern const struct axon_proc_base axon_proc_bases[AXON_PROC_NBASES] AXON_PROC_HIDDEN;
extern const struct axon_proc_variant axon_proc_variants[AXON_PROC_NVARIANTS] AXON_PROC_HIDDEN;

#endif
""" % (max_version, len(names), sum(len(bases[b]) for b in names))]

    c = [src, """#define __CUDA_API_VERSION_INTERNAL 1
#include <cudaTypedefs.h>
#include <cudaProfilerTypedefs.h>
#include "shim_proctable.h"

_Static_assert(CUDA_VERSION == AXON_PROC_CUDA_VERSION, "cuda.h changed; regenerate");

/*
 * Each variant has exactly the type of the PFN typedef it was derived from
 * (a mismatch means the derivation in gen_shim.py is wrong for that name).
 */
#define AXON_SAME_TYPE(sym, pfn) \\
	_Static_assert(__builtin_types_compatible_p(__typeof__(&sym), pfn), \\
		       #sym " does not have the type " #pfn)
"""]
    for b in names:
        for v in bases[b]:
            c.append("AXON_SAME_TYPE(%s, PFN_%s);\n" % (v[2], v[3]))

    c.append("\nconst char axon_proc_strtab[] =\n")
    for s in strtab:
        c.append('\t"%s\\0"\n' % s)
    c.append("\t;\n\nconst struct axon_proc_variant axon_proc_variants[AXON_PROC_NVARIANTS] = {\n")
    first = 0
    bl = []
    for b in names:
        vs = bases[b]
        nd = sum(1 for v in vs if v[1] == PT_NONE)
        npt = len(vs) - nd
        if first > 0xffff or nd > 0xff or npt > 0xff:
            fail("table field overflow at %s" % b)
        bl.append("\t{ %5d, %4d, %d, %d },\t/* %s */\n" % (offs[b], first, nd, npt, b))
        for v in vs:
            c.append("\t{ (axon_proc_fn)&%s, %d, %d, %s },\n"
                     % (v[2], offs[v[2]], v[0], PT_NAME[v[1]]))
        first += len(vs)
    c.append("};\n\nconst struct axon_proc_base axon_proc_bases[AXON_PROC_NBASES] = {\n")
    c.extend(bl)
    c.append("};\n")
    return "".join(h), "".join(c)


def gen_lists(decls, bases, src):
    out = [src, """#ifndef AXON_SHIM_GEN_LISTS_H
#define AXON_SHIM_GEN_LISTS_H

/* Every function cuda.h declares under __CUDA_API_VERSION_INTERNAL. */
#define AXON_SHIM_FOR_EACH_EXPORT(X) \\
"""]
    for name in sorted(decls):
        out.append("\tX(%s) \\\n" % name)
    out.append("""\t/* end */

/* The cuGetProcAddress table: X(base, variant, version, pt) */
#define AXON_SHIM_FOR_EACH_PROC(X) \\
""")
    for b in sorted(bases):
        for v in bases[b]:
            out.append("\tX(%s, %s, %d, %s) \\\n" % (b, v[2], v[0], PT_NAME[v[1]]))
    out.append("\t/* end */\n\n#endif\n")
    return "".join(out)


def write(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cc", default="cc")
    ap.add_argument("--cuda", default="/usr/local/cuda")
    ap.add_argument("--out", required=True)
    ap.add_argument("--summary", action="store_true",
                    help="print the counts and the multi-variant bases")
    a = ap.parse_args()

    inc = os.path.join(a.cuda, "include")
    cuda_h = os.path.join(inc, "cuda.h")
    text = preprocess(a.cc, a.cuda)
    decls, pfns, typedef_names = parse(
        text, [os.path.join(inc, h) for h in DECL_HEADERS],
        [os.path.join(inc, h) for h in TYPEDEF_HEADERS])
    for name, (ret, params, _) in decls.items():
        check_params(name, params, typedef_names)
    bases = build_table(decls, pfns)
    m = re.search(r"^#define\s+CUDA_VERSION\s+(\d+)", open(cuda_h).read(), re.M)
    if not m:
        fail("no CUDA_VERSION in %s" % cuda_h)
    max_version = int(m.group(1))

    src = HEADER % (cuda_h, max_version)
    os.makedirs(a.out, exist_ok=True)
    hdr, tab = gen_proctable(bases, max_version, src)
    write(os.path.join(a.out, "shim_stubs.c"), gen_stubs(decls, src))
    write(os.path.join(a.out, "shim_proctable.h"), hdr)
    write(os.path.join(a.out, "shim_proctable.c"), tab)
    write(os.path.join(a.out, "shim_gen_lists.h"), gen_lists(decls, bases, src))
    if a.summary:
        print("%d exported names, %d base names, CUDA_VERSION %d"
              % (len(decls), len(bases), max_version))
        for b in sorted(bases):
            if len(bases[b]) > 1:
                print("  %s: %s" % (b, ", ".join(
                    "%s@%d" % (v[2], v[0]) for v in bases[b])))


if __name__ == "__main__":
    try:
        main()
    except GenError as e:
        sys.stderr.write("gen_shim.py: error: %s\n" % e)
        sys.exit(1)
