// SPDX-License-Identifier: MIT
/*
 * limit.c - cgroups' device-memory limits: limit set, limit get, limits.
 * With the kernel module loaded, its limits (netlink), which hold every
 * client; without it, axond's own for socket clients (dlimit.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "axonctl.h"

/* The module's netlink, or NULL: *daemon set when it is not loaded (the
 * daemon's limits then), else the error said. */
static struct axon_nl *kopen_or_daemon(char *err, size_t errlen, bool *daemon)
{
	struct axon_nl *nl;
	int ret = axon_nl_open(&nl, err, errlen);

	*daemon = ret == -ENOENT;
	if (ret && !*daemon)
		errmsg("%s", err);
	return ret ? NULL : nl;
}

/*
 * The module's limit of a cgroup, named by an open descriptor of its
 * directory where it can be opened (AXON_A_CGROUP_FD: what lets a
 * delegatee without CAP_NET_ADMIN set the cgroups below its subtree), else
 * by its path.
 */
static int kernel_limit_set(struct axon_nl *nl, const char *cgroup, uint64_t limit)
{
	int fd = open_cgroup_dir(cgroup), ret;

	if (fd < 0)
		return axon_nl_limit_set(nl, cgroup_arg(cgroup), limit);
	ret = axon_nl_limit_set_fd(nl, fd, limit);
	close(fd);
	return ret;
}

static int kernel_limit_get(struct axon_nl *nl, const char *cgroup, uint64_t *limit,
			    uint64_t *usage, uint64_t *peak, uint64_t *failcnt)
{
	int fd = open_cgroup_dir(cgroup), ret;

	if (fd < 0)
		return axon_nl_limit_get(nl, cgroup_arg(cgroup), limit, usage, peak, failcnt);
	ret = axon_nl_limit_get_fd(nl, fd, limit, usage, peak, failcnt);
	close(fd);
	return ret;
}

static void print_figures(const struct ctl *ctl, const char *cgroup, uint64_t limit,
			  uint64_t usage, uint64_t peak, uint64_t failcnt)
{
	char a[32], b[32], c[32];

	printf("cgroup:  %s\n", cgroup);
	printf("limit:   %s\n", fmt_limit(ctl, limit, a, sizeof(a)));
	printf("usage:   %s\n", fmt_size(ctl, usage, b, sizeof(b)));
	printf("peak:    %s\n", fmt_size(ctl, peak, c, sizeof(c)));
	printf("failcnt: %" PRIu64 "\n", failcnt);
}

int cmd_limit_set(struct ctl *ctl, int argc, char **argv)
{
	const char *use = "set CGROUP BYTES|none";
	char err[512], a[32];
	struct kargs ka;
	struct axon_nl *nl;
	uint64_t limit;
	bool daemon;
	int ret;

	ret = kparse(ctl, "limit", use, 0, 2, 2, argc, argv, &ka);
	if (ret)
		return ret;
	if (parse_size(ka.pos[1], &limit)) {
		errmsg("limit set: '%s' is not a size (BYTES with an optional K, M, G or T "
		       "suffix, or none)", ka.pos[1]);
		return 2;
	}
	nl = kopen_or_daemon(err, sizeof(err), &daemon);
	if (!nl && !daemon)
		return 1;
	if (daemon) {
		struct axon_dlimit dl;

		if (daemon_limit(ctl, ka.pos[0], true, limit, &dl))
			return 1;
		printf("(axond's limit for socket clients: no kernel module)\n");
	} else {
		ret = kernel_limit_set(nl, ka.pos[0], limit);
		axon_nl_close(nl);
		if (ret) {
			errmsg("%s", err);
			return 1;
		}
	}
	if (limit == AXON_LIMIT_NONE)
		printf("%s: no device-memory limit\n", cgroup_arg(ka.pos[0]));
	else
		printf("%s: device-memory limit %s\n", cgroup_arg(ka.pos[0]),
		       fmt_size(ctl, limit, a, sizeof(a)));
	return 0;
}

int cmd_limit_get(struct ctl *ctl, int argc, char **argv)
{
	uint64_t limit, usage, peak, failcnt;
	struct axon_nl *nl;
	struct kargs ka;
	char err[512];
	bool daemon;
	int ret;

	ret = kparse(ctl, "limit", "get CGROUP [--bytes]", 0, 1, 1, argc, argv, &ka);
	if (ret)
		return ret;
	nl = kopen_or_daemon(err, sizeof(err), &daemon);
	if (!nl && !daemon)
		return 1;
	if (daemon) {
		struct axon_dlimit dl;

		if (daemon_limit(ctl, ka.pos[0], false, 0, &dl))
			return 1;
		print_figures(ctl, cgroup_arg(ka.pos[0]), dl.limit, dl.usage, dl.peak, dl.failcnt);
		printf("(axond's limit for socket clients: no kernel module)\n");
		return 0;
	}
	ret = kernel_limit_get(nl, ka.pos[0], &limit, &usage, &peak, &failcnt);
	axon_nl_close(nl);
	if (ret) {
		errmsg("%s", err);
		return 1;
	}
	print_figures(ctl, cgroup_arg(ka.pos[0]), limit, usage, peak, failcnt);
	return 0;
}

static int print_limit(const struct axon_klimit *l, void *arg)
{
	const struct ctl *ctl = arg;
	char a[32], b[32], c[32];

	printf("%-32s %12s %12s %12s %8" PRIu64 "\n", l->cgroup_path,
	       fmt_size(ctl, l->usage, a, sizeof(a)), fmt_limit(ctl, l->limit, b, sizeof(b)),
	       fmt_size(ctl, l->peak, c, sizeof(c)), l->failcnt);
	return 0;
}

int cmd_limits(struct ctl *ctl, int argc, char **argv)
{
	struct axon_nl *nl;
	struct kargs ka;
	char err[512];
	int ret;

	ret = kparse(ctl, "limits", "[--bytes]", 0, 0, 0, argc, argv, &ka);
	if (ret)
		return ret;
	nl = kopen(err, sizeof(err), &ret);
	if (!nl)
		return 1;
	printf("%-32s %12s %12s %12s %8s\n", "CGROUP", "USAGE", "LIMIT", "PEAK", "FAILCNT");
	ret = axon_nl_limits(nl, print_limit, ctl);
	axon_nl_close(nl);
	if (ret) {
		errmsg("%s", err);
		return 1;
	}
	return 0;
}
