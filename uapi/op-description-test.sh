#!/bin/sh
# op-description: uapi/axon-ops.def and what is made from it.
#   1. Documentation/abi.md's opcode table (section 6.2) is the one the
#      description gives (`make abi-doc` rewrites it);
#   2. the generator refuses descriptions that would break the ABI or the
#      tables: a gap in the opcodes, a number used twice, overlapping
#      fields, a field past the union, an unknown flag, a misaligned field.
# Run by tests/run-tests.sh, which sets AXON_SRC.
set -u
src=${AXON_SRC:?run me through tests/run-tests.sh}
gen="$src/uapi/gen_axon_ops.py"
py=${PYTHON:-python3}
fail=0

if ! "$py" "$gen" --def "$src/uapi/axon-ops.def" --check-doc "$src/Documentation/abi.md"; then
	echo "FAIL: the opcode table in Documentation/abi.md is stale"
	fail=1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
refused() {	# refused WHAT: the description on stdin must not generate
	cat >"$tmp/bad.def"
	if "$py" "$gen" --def "$tmp/bad.def" --out "$tmp/out" 2>"$tmp/err"; then
		echo "FAIL: accepted $1"
		fail=1
	else
		echo "ok: refused $1: $(cat "$tmp/err")"
	fi
}
tab=$(printf '\t')
refused "a gap in the opcodes" <<EOF2
op A 0 op_a -
op C 2 op_c -
EOF2
refused "an opcode used twice" <<EOF2
op A 0 op_a -
op B 0 op_b -
EOF2
refused "overlapping fields" <<EOF2
op A 0 op_a -
${tab}x${tab}u64${tab}w1${tab}one
${tab}y${tab}u32${tab}w1+4${tab}two
EOF2
refused "a field past the union" <<EOF2
op A 0 op_a -
${tab}x${tab}u32[3]${tab}w4${tab}too long
EOF2
refused "an unknown flag" <<EOF2
op A 0 op_a DX
EOF2
refused "a misaligned field" <<EOF2
op A 0 op_a -
${tab}x${tab}u32${tab}w1+2${tab}misaligned
EOF2

[ $fail -eq 0 ] && echo "op-description: PASSED"
exit $fail
