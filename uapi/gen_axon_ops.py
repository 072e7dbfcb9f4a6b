#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generate the op tables of axon from uapi/axon-ops.def.

  gen_axon_ops.py --def uapi/axon-ops.def --out DIR
      writes DIR/axon/ops.h, DIR/axon/prep.h, DIR/axon_ops_table.h
  gen_axon_ops.py --def uapi/axon-ops.def --doc Documentation/abi.md
      rewrites the opcode table between the markers in the document
  gen_axon_ops.py --def uapi/axon-ops.def --check-doc Documentation/abi.md
      exits 1 when the document's table is not what --doc would write

The description's format is explained at the top of axon-ops.def. Every
rule the description must keep (dense opcode numbers, fields inside the 40
bytes of the union and not overlapping, known flags) is checked here, so a
mistake stops the build instead of changing the ABI.
"""
import argparse
import os
import re
import sys

UNION_BYTES = 40
WORDS = UNION_BYTES // 8

FLAG_BITS = {
    "D": "OPF_DEFERRABLE",
    "S": "OPF_STREAM",
    "P": "OPF_REPORTS_PENDING",
    "N": "OPF_NAMES_STREAM",
}
# The order flags are written in, in code and in the document.
FLAG_ORDER = "SDPN"

TYPES = {"u8": 1, "u16": 2, "u32": 4, "u64": 8}

DOC_BEGIN = "<!-- BEGIN op table: generated from uapi/axon-ops.def by `make abi-doc` -->"
DOC_END = "<!-- END op table -->"

C_KEYWORDS = {"auto", "break", "case", "char", "const", "continue", "default",
              "do", "double", "else", "enum", "extern", "float", "for", "goto",
              "if", "inline", "int", "long", "register", "restrict", "return",
              "short", "signed", "sizeof", "static", "struct", "switch",
              "typedef", "union", "unsigned", "void", "volatile", "while"}


class DefError(Exception):
    pass


class Field:
    def __init__(self, name, ctype, count, offset, meaning, line):
        self.name = name
        self.ctype = ctype          # "u8" .. "u64"
        self.count = count          # 0: a scalar, else the array length
        self.offset = offset        # bytes from the union's start
        self.meaning = meaning
        self.line = line

    @property
    def size(self):
        return TYPES[self.ctype] * (self.count or 1)

    @property
    def reserved(self):
        return self.name.startswith("resv")

    def words(self):
        return set(range(self.offset // 8, (self.offset + self.size - 1) // 8 + 1))

    def at(self):
        w, b = divmod(self.offset, 8)
        return "w%d" % w if b == 0 else "w%d+%d" % (w, b)


class Op:
    def __init__(self, name, number, handler, flags, line):
        self.name = name
        self.number = number
        self.handler = handler
        self.flags = flags          # a string of FLAG_BITS letters
        self.line = line
        self.notes = []
        self.fields = []

    @property
    def member(self):
        return self.name.lower()

    @property
    def takes_stream(self):
        return "S" in self.flags or "N" in self.flags

    def used_words(self):
        used = set()
        for f in self.fields:
            used |= f.words()
        return used

    def zero_words(self):
        used = self.used_words()
        return [w for w in range(WORDS) if w not in used]


def parse(path):
    ops = []
    op = None
    with open(path, encoding="utf-8") as fp:
        for lineno, raw in enumerate(fp, 1):
            where = "%s:%d" % (path, lineno)
            line = raw.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            if not line[0].isspace():
                words = line.split()
                if words[0] != "op" or len(words) != 5:
                    raise DefError("%s: expected 'op NAME NUMBER HANDLER FLAGS'" % where)
                _, name, number, handler, flags = words
                if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name):
                    raise DefError("%s: op name %r is not UPPER_CASE" % (where, name))
                if not re.fullmatch(r"[0-9]+", number):
                    raise DefError("%s: opcode %r is not a number" % (where, number))
                if not re.fullmatch(r"op_[a-z0-9_]+", handler):
                    raise DefError("%s: handler %r is not op_*" % (where, handler))
                if flags == "-":
                    flags = ""
                for ch in flags:
                    if ch not in FLAG_BITS:
                        raise DefError("%s: unknown flag %r (known: %s)"
                                       % (where, ch, "".join(FLAG_BITS)))
                if len(set(flags)) != len(flags):
                    raise DefError("%s: a flag is repeated" % where)
                op = Op(name, int(number), handler, flags, where)
                ops.append(op)
                continue
            if op is None:
                raise DefError("%s: an indented line before the first op" % where)
            text = line.strip()
            if text.startswith("="):
                op.notes.append(text[1:].strip())
                continue
            parts = text.split(None, 3)
            if len(parts) < 4:
                raise DefError("%s: expected 'FIELD TYPE AT MEANING'" % where)
            fname, ftype, at, meaning = parts
            if not re.fullmatch(r"[a-z][a-z0-9_]*", fname) or fname in C_KEYWORDS:
                raise DefError("%s: field name %r" % (where, fname))
            m = re.fullmatch(r"(u8|u16|u32|u64)(?:\[([0-9]+)\])?", ftype)
            if not m:
                raise DefError("%s: type %r (u8, u16, u32, u64, or an array of one)"
                               % (where, ftype))
            count = int(m.group(2)) if m.group(2) else 0
            if m.group(2) and count < 2:
                raise DefError("%s: an array needs at least 2 elements" % where)
            m2 = re.fullmatch(r"w([0-9]+)(?:\+([0-9]+))?", at)
            if not m2:
                raise DefError("%s: place %r (wN or wN+B)" % (where, at))
            word, byte = int(m2.group(1)), int(m2.group(2) or 0)
            if byte > 7:
                raise DefError("%s: byte %d of a word" % (where, byte))
            f = Field(fname, m.group(1), count, word * 8 + byte, meaning, where)
            if f.offset % TYPES[f.ctype]:
                raise DefError("%s: %s is not aligned to its type" % (where, fname))
            if f.offset + f.size > UNION_BYTES:
                raise DefError("%s: %s ends past the union's %d bytes"
                               % (where, fname, UNION_BYTES))
            op.fields.append(f)
    check(ops)
    return ops


def check(ops):
    if not ops:
        raise DefError("no ops")
    seen_num, seen_name = {}, {}
    for op in ops:
        if op.number in seen_num:
            raise DefError("%s: opcode %d is already %s"
                           % (op.line, op.number, seen_num[op.number].name))
        if op.name in seen_name:
            raise DefError("%s: op %s is described twice" % (op.line, op.name))
        seen_num[op.number] = op
        seen_name[op.name] = op
        names = set()
        taken = {}
        for f in op.fields:
            if f.name in names:
                raise DefError("%s: field %s twice in %s" % (f.line, f.name, op.name))
            if op.takes_stream and f.name == "stream":
                raise DefError("%s: 'stream' is the SQE's own field for %s"
                               % (f.line, op.name))
            names.add(f.name)
            for b in range(f.offset, f.offset + f.size):
                if b in taken:
                    raise DefError("%s: %s overlaps %s" % (f.line, f.name, taken[b]))
                taken[b] = f.name
        prev = -1
        for f in op.fields:
            if f.offset < prev:
                raise DefError("%s: fields of %s out of order" % (f.line, op.name))
            prev = f.offset
    numbers = sorted(seen_num)
    if numbers != list(range(len(numbers))):
        missing = sorted(set(range(numbers[-1] + 1)) - set(numbers))
        raise DefError("opcodes must be 0..%d without gaps; missing %s"
                       % (len(numbers) - 1, missing))
    if len(ops) > 255:
        raise DefError("an opcode travels in a __u8")
    members = {op.member for op in ops}
    for legacy in ("copy", "mem", "obj", "raw"):
        if legacy in members:
            raise DefError("op member %r would hide the ABI 1.0 member" % legacy)


def by_number(ops):
    return sorted(ops, key=lambda o: o.number)


HEADER_NOTE = ("Generated by uapi/gen_axon_ops.py from uapi/axon-ops.def:\n"
               " * edit the description, not this file.")


def ctype_uapi(f):
    return "__" + f.ctype


def ctype_c(f):
    return {"u8": "uint8_t", "u16": "uint16_t", "u32": "uint32_t", "u64": "uint64_t"}[f.ctype]


def comment_lines(lines, indent=" * "):
    return [(indent + l).rstrip() for l in lines]


def wrap(text, width):
    out, cur = [], ""
    for word in text.split():
        if cur and len(cur) + 1 + len(word) > width:
            out.append(cur)
            cur = word
        else:
            cur = word if not cur else cur + " " + word
    if cur:
        out.append(cur)
    return out


def struct_body(op):
    """Members of op's union struct, reserved gaps named by their place."""
    body = []
    at = 0
    for f in op.fields:
        while at < f.offset:
            if at % 8 == 0 and f.offset - at >= 8:
                body.append(("__u64 resv_w%d;" % (at // 8), "must be 0"))
                at += 8
            else:
                n = min(f.offset, (at // 8 + 1) * 8) - at
                body.append(("__u8 resv_%d[%d];" % (at, n), "must be 0"))
                at += n
        decl = "%s %s%s;" % (ctype_uapi(f), f.name, "[%d]" % f.count if f.count else "")
        body.append((decl, "%s: %s" % (f.at(), f.meaning)))
        at = f.offset + f.size
    return body


def gen_uapi(ops):
    o = []
    o.append("/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */")
    o.append("/*")
    o.append(" * axon's operations: the opcodes and each one's named fields in the")
    o.append(" * union of struct axon_sqe (axon/protocol.h includes this header).")
    o.append(" *")
    o.append(" * " + HEADER_NOTE)
    o.append(" *")
    o.append(" * Each op's union member names the 64-bit words of the union it uses")
    o.append(" * (w0 .. w4, wN+B: byte B of word N); every other word must be 0 and")
    o.append(" * axond refuses the SQE otherwise. A resv* field must be 0 too.")
    o.append(" * Documentation/abi.md, section 6, says what each op checks.")
    o.append(" */")
    o.append("#ifndef _UAPI_AXON_OPS_H")
    o.append("#define _UAPI_AXON_OPS_H")
    o.append("")
    o.append("#include <linux/types.h>")
    o.append("")
    o.append("enum axon_op {")
    for op in by_number(ops):
        o.append("\tAXON_OP_%s = %d," % (op.name, op.number))
    o.append("\tAXON_OP_LAST = %d" % len(ops))
    o.append("};")
    o.append("")
    for op in by_number(ops):
        if not op.fields:
            continue
        flags = [FLAG_BITS[c] for c in FLAG_ORDER if c in op.flags]
        head = "AXON_OP_%s (%s)" % (op.name, ", ".join(flags) if flags else "no flags")
        notes = wrap(" ".join(op.notes), 72) if op.notes else []
        o.append("/*")
        o.append(" * " + head + (":" if notes else ""))
        o.extend(comment_lines(notes))
        o.append(" */")
        o.append("struct axon_sqe_%s {" % op.member)
        for decl, why in struct_body(op):
            o.append("\t%s\t/* %s */" % (decl, why))
        o.append("};")
        o.append("")
    o.append("/* The union members of struct axon_sqe, one per op that has fields. */")
    o.append("#define AXON_SQE_OP_MEMBERS \\")
    members = [op for op in by_number(ops) if op.fields]
    for i, op in enumerate(members):
        tail = " \\" if i < len(members) - 1 else ""
        o.append("\tstruct axon_sqe_%s %s;%s" % (op.member, op.member, tail))
    o.append("")
    o.append("#endif /* _UAPI_AXON_OPS_H */")
    return "\n".join(o) + "\n"


def gen_prep(ops):
    o = []
    o.append("/* SPDX-License-Identifier: MIT */")
    o.append("/*")
    o.append(" * libaxon's prep helpers: axon_prep_<op>() fills one SQE for AXON_OP_<OP>,")
    o.append(" * writing only the opcode, the stream (for ops that name one) and the")
    o.append(" * op's own fields. The SQE must be zeroed (axon_get_sqe does it); flags")
    o.append(" * and user_data are the caller's (axon_sqe_set_flags, axon_sqe_set_data).")
    o.append(" * Included by <axon/libaxon.h>.")
    o.append(" *")
    o.append(" * " + HEADER_NOTE)
    o.append(" */")
    o.append("#ifndef AXON_PREP_H")
    o.append("#define AXON_PREP_H")
    o.append("")
    o.append("#include <stdint.h>")
    o.append("#include <string.h>")
    o.append("#include <axon/protocol.h>")
    o.append("")
    for op in by_number(ops):
        params = ["struct axon_sqe *sqe"]
        if op.takes_stream:
            params.append("uint64_t stream")
        args = [f for f in op.fields if not f.reserved]
        for f in args:
            if f.count:
                params.append("const %s %s[%d]" % (ctype_c(f), f.name, f.count))
            else:
                params.append("%s %s" % (ctype_c(f), f.name))
        notes = ["@%s: %s" % (f.name, f.meaning) for f in args]
        if op.takes_stream:
            notes.insert(0, "@stream: the stream handle")
        o.append("/**")
        o.append(" * axon_prep_%s() - AXON_OP_%s" % (op.member, op.name))
        for n in notes:
            for i, l in enumerate(wrap(n, 70)):
                o.append((" * " if i == 0 else " *\t") + l)
        o.append(" */")
        sig = "static inline void axon_prep_%s(" % op.member
        o.extend(wrap_params(sig, params))
        o.append("{")
        o.append("\tsqe->opcode = AXON_OP_%s;" % op.name)
        if op.takes_stream:
            o.append("\tsqe->stream = stream;")
        for f in args:
            lhs = "sqe->%s.%s" % (op.member, f.name)
            if f.count:
                o.append("\tmemcpy(%s, %s, sizeof(%s));" % (lhs, f.name, lhs))
            else:
                o.append("\t%s = %s;" % (lhs, f.name))
        o.append("}")
        o.append("")
    o.append("#endif /* AXON_PREP_H */")
    return "\n".join(o) + "\n"


def wrap_params(sig, params, width=80):
    lines, cur = [], sig
    for i, p in enumerate(params):
        piece = p + (", " if i < len(params) - 1 else ")")
        if len(cur.expandtabs(8)) + len(piece.rstrip()) > width and cur.strip() != sig.strip():
            lines.append(cur.rstrip())
            cur = "\t\t" + piece
        else:
            cur += piece
    lines.append(cur.rstrip())
    return lines


def zero_expr(op):
    z = op.zero_words()
    return " | ".join("W(%d)" % w for w in z) if z else "0"


def gen_table(ops):
    o = []
    o.append("/* SPDX-License-Identifier: MIT */")
    o.append("/*")
    o.append(" * The op list for libaxon's op names and axond's op table:")
    o.append(" *   AXON_OPS(X) calls X(NAME, number, handler, flags, zero) per op, by")
    o.append(" *   number; zero is the W() mask of the union words no field of the op")
    o.append(" *   occupies (they must be 0). flags are axond's OPF_* (ops/ops.h).")
    o.append(" * It also checks, at compile time, that each field lies where the")
    o.append(" * description puts it.")
    o.append(" *")
    o.append(" * " + HEADER_NOTE)
    o.append(" */")
    o.append("#ifndef AXON_OPS_TABLE_H")
    o.append("#define AXON_OPS_TABLE_H")
    o.append("")
    o.append("#include <stddef.h>")
    o.append("#include <axon/protocol.h>")
    o.append("")
    o.append("#define AXON_OPS_COUNT %d" % len(ops))
    o.append("")
    o.append("#define AXON_OPS(X) \\")
    for i, op in enumerate(by_number(ops)):
        flags = " | ".join(FLAG_BITS[c] for c in FLAG_ORDER if c in op.flags) or "0"
        tail = " \\" if i < len(ops) - 1 else ""
        o.append("\tX(%s, %d, %s, %s, %s)%s"
                 % (op.name, op.number, op.handler, flags, zero_expr(op), tail))
    o.append("")
    o.append("_Static_assert(AXON_OPS_COUNT == AXON_OP_LAST, \"one entry per opcode\");")
    for op in by_number(ops):
        if not op.fields:
            continue
        o.append("_Static_assert(sizeof(((struct axon_sqe *)0)->%s) <= %d,"
                 % (op.member, UNION_BYTES))
        o.append("\t       \"%s fits the union\");" % op.name)
        for f in op.fields:
            o.append("_Static_assert(offsetof(struct axon_sqe, %s.%s) == 24 + %d &&"
                     % (op.member, f.name, f.offset))
            o.append("\t       sizeof(((struct axon_sqe *)0)->%s.%s) == %d,"
                     % (op.member, f.name, f.size))
            o.append("\t       \"%s.%s at %s\");" % (op.member, f.name, f.at()))
    o.append("")
    o.append("#endif /* AXON_OPS_TABLE_H */")
    return "\n".join(o) + "\n"


def words_text(ws):
    """w0, w2-w4 style."""
    if not ws:
        return "—"
    runs, start, prev = [], ws[0], ws[0]
    for w in ws[1:] + [None]:
        if w is not None and w == prev + 1:
            prev = w
            continue
        if prev - start >= 2:
            runs.append("w%d–w%d" % (start, prev))
        elif prev == start:
            runs.append("w%d" % start)
        else:
            runs.append("w%d, w%d" % (start, prev))
        if w is not None:
            start = prev = w
    return ", ".join(runs)


def gen_doc_table(ops):
    o = [DOC_BEGIN, ""]
    o.append("| # | op | D | S | P | N | handler | fields (word) | zero |")
    o.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for op in by_number(ops):
        cells = [str(op.number), "`%s`" % op.name]
        for c in "DSPN":
            cells.append(c if c in op.flags else "")
        cells.append("`%s`" % op.handler)
        fields = ", ".join("`%s` %s" % (f.name, f.at()) for f in op.fields) or "—"
        cells.append(fields)
        cells.append(words_text(op.zero_words()))
        o.append("|" + "|".join(" %s " % c if c else " " for c in cells) + "|")
    o.append("")
    o.append(DOC_END)
    return o


def doc_replace(text, ops):
    lines = text.split("\n")
    try:
        b = lines.index(DOC_BEGIN)
        e = lines.index(DOC_END, b)
    except ValueError:
        raise DefError("the document has no '%s' ... '%s' markers" % (DOC_BEGIN, DOC_END))
    return "\n".join(lines[:b] + gen_doc_table(ops) + lines[e + 1:])


def write_file(path, text):
    """Written whole each time (make compares its time with the inputs')."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fp:
        fp.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--def", dest="defs", required=True)
    ap.add_argument("--out")
    ap.add_argument("--doc")
    ap.add_argument("--check-doc")
    a = ap.parse_args()
    try:
        ops = parse(a.defs)
        if a.out:
            write_file(os.path.join(a.out, "axon", "ops.h"), gen_uapi(ops))
            write_file(os.path.join(a.out, "axon", "prep.h"), gen_prep(ops))
            write_file(os.path.join(a.out, "axon_ops_table.h"), gen_table(ops))
        if a.doc:
            with open(a.doc, encoding="utf-8") as fp:
                text = fp.read()
            new = doc_replace(text, ops)
            if new != text:
                write_file(a.doc, new)
        if a.check_doc:
            with open(a.check_doc, encoding="utf-8") as fp:
                text = fp.read()
            if doc_replace(text, ops) != text:
                print("%s: the opcode table is stale; run 'make abi-doc'" % a.check_doc,
                      file=sys.stderr)
                return 1
    except DefError as e:
        print("gen_axon_ops.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
