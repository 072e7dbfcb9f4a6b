// SPDX-License-Identifier: MIT
/*
 * kmod.c - what the kernel module's commands share: their own arguments
 * (--bytes, --count, --wait, positional words), the cgroup path as the
 * module wants it, and opening its generic netlink family with advice when
 * the module is not loaded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axonctl.h"

/* The command's own arguments: --bytes everywhere, the flags allowed, and
 * between min and max positional ones. Returns 0 or an exit status (2). */
int kparse(struct ctl *ctl, const char *what, const char *use, unsigned int allow,
	   int min, int max, int argc, char **argv, struct kargs *ka)
{
	char *end;
	int i;

	ka->npos = 0;
	ka->count = -1;
	ka->wait_s = -1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--bytes")) {
			ctl->bytes = true;
		} else if ((allow & KA_COUNT) && !strcmp(a, "--count") && i + 1 < argc) {
			ka->count = strtol(argv[++i], &end, 10);
			if (*end || end == argv[i] || ka->count < 1) {
				errmsg("%s: --count wants a positive number, not '%s'", what, argv[i]);
				return 2;
			}
		} else if ((allow & KA_WAIT) && !strcmp(a, "--wait") && i + 1 < argc) {
			ka->wait_s = strtod(argv[++i], &end);
			if (*end || end == argv[i] || ka->wait_s < 0) {
				errmsg("%s: --wait wants seconds, not '%s'", what, argv[i]);
				return 2;
			}
		} else if (a[0] == '-' && a[1]) {
			errmsg("%s: unknown option '%s' (usage: axonctl %s %s)", what, a, what, use);
			return 2;
		} else if (ka->npos < max) {
			ka->pos[ka->npos++] = a;
		} else {
			errmsg("%s: unexpected argument '%s' (usage: axonctl %s %s)", what, a, what,
			       use);
			return 2;
		}
	}
	if (ka->npos < min) {
		errmsg("%s: missing arguments (usage: axonctl %s %s)", what, what, use);
		return 2;
	}
	return 0;
}
/* The cgroup v2 path as the kernel wants it: /sys/fs/cgroup/t1 -> /t1. */
const char *cgroup_arg(const char *p)
{
	static const char mnt[] = "/sys/fs/cgroup";
	size_t n = sizeof(mnt) - 1;

	if (!strncmp(p, mnt, n) && (p[n] == '/' || !p[n]))
		return p[n] ? p + n : "/";
	return p;
}

struct axon_nl *kopen(char *err, size_t errlen, int *ret)
{
	struct axon_nl *nl;

	*ret = axon_nl_open(&nl, err, errlen);
	if (*ret) {
		if (*ret == -ENOENT)
			errmsg("%s; load it with modprobe axon (or insmod axon.ko)", err);
		else
			errmsg("%s", err);
		return NULL;
	}
	return nl;
}
