#!/bin/sh
# install-headers: what `make install` puts under $(PREFIX)/include is
# usable on its own. Installs the headers into a scratch DESTDIR with the
# real rule (make install-headers, part of make install), then compiles,
# against that tree alone:
#   - each installed header as the only include of a C file, so that every
#     header includes what it needs;
#   - <linux/axon.h> without the daemon protocol: the kernel interface
#     defines nothing of <axon/protocol.h> (the module never sees an SQE);
#   - a program using both halves through <axon/libaxon.h>.
# Run by tests/run-tests.sh, which sets AXON_SRC and AXON_BUILD.
set -u
src=${AXON_SRC:?run me through tests/run-tests.sh}
build=${AXON_BUILD:?run me through tests/run-tests.sh}
cc=${CC:-cc}
fail=0

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! make -s -C "$src" BUILD="$build" DESTDIR="$tmp/root" PREFIX=/usr \
		install-headers >"$tmp/make.log" 2>&1; then
	cat "$tmp/make.log"
	echo "FAIL: make install-headers"
	exit 1
fi
inc="$tmp/root/usr/include"

for h in linux/axon.h linux/axon-layout.h axon/protocol.h axon/ops.h \
		axon/prep.h axon/libaxon.h; do
	if [ ! -f "$inc/$h" ]; then
		echo "FAIL: $h is not installed"
		fail=1
		continue
	fi
	printf '#include <%s>\n' "$h" >"$tmp/one.c"
	if "$cc" -std=gnu11 -Wall -Wextra -Werror -fsyntax-only -I"$inc" \
			"$tmp/one.c" 2>"$tmp/err"; then
		echo "ok: $h compiles on its own"
	else
		sed 's/^/    /' "$tmp/err"
		echo "FAIL: $h does not compile on its own"
		fail=1
	fi
done

cat >"$tmp/kernel.c" <<'EOC'
#include <linux/axon.h>
#if defined(AXON_MAGIC) || defined(AXON_SQE_OP_MEMBERS) || \
	defined(AXON_HANDLE_MAKE) || defined(AXON_DEFAULT_SOCKET)
#error "<linux/axon.h> carries the daemon protocol"
#endif
struct axon_params p;
struct axon_enter e;
struct axon_event ev;
unsigned long cmds[] = { AXON_IOC_SETUP, AXON_IOC_ENTER, AXON_IOC_ATTACH };
int info_size = AXON_INFO_SIZE + AXON_SQE_SIZE + AXON_CQE_SIZE;
EOC
if "$cc" -std=gnu11 -Wall -Wextra -Werror -c -o "$tmp/kernel.o" -I"$inc" \
		"$tmp/kernel.c" 2>"$tmp/err"; then
	echo "ok: <linux/axon.h> is the kernel interface alone"
else
	sed 's/^/    /' "$tmp/err"
	echo "FAIL: <linux/axon.h> alone"
	fail=1
fi

cat >"$tmp/both.c" <<'EOC'
#include <axon/libaxon.h>
int main(void)
{
	struct axon_sqe sqe = { 0 };
	struct axon_params p = { 0 };

	sqe.opcode = AXON_OP_NOP;
	return (int)sizeof(sqe) + (int)p.sq_entries - AXON_SQE_SIZE;
}
EOC
if "$cc" -std=gnu11 -Wall -Wextra -Werror -c -o "$tmp/both.o" -I"$inc" \
		"$tmp/both.c" 2>"$tmp/err"; then
	echo "ok: <axon/libaxon.h> has both halves"
else
	sed 's/^/    /' "$tmp/err"
	echo "FAIL: <axon/libaxon.h>"
	fail=1
fi
exit $fail
