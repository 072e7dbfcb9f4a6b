// SPDX-License-Identifier: MIT
/*
 * dlimit.c - limit set and limit get without the kernel module: axond's own
 * per-cgroup limits for socket clients (AXON_HELLO_LIMIT, advisory). The
 * cgroup goes to the daemon as an open directory, so a caller names only a
 * cgroup it can open, and a cgroup's owner may limit the cgroups below it
 * without privilege, as with the module.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "axonctl.h"

/* Where cgroup v2 is mounted (/proc/self/mountinfo), or NULL. */
static const char *cgroup2_mount(void)
{
	static char root[PATH_MAX];
	char line[4096];
	FILE *f;

	if (root[0])
		return root;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], *sep = strstr(line, " - ");

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1) {
			snprintf(root, sizeof(root), "%s", mnt);
			break;
		}
	}
	fclose(f);
	return root[0] ? root : NULL;
}

int open_cgroup_dir(const char *cgroup)
{
	const char *root = cgroup2_mount();
	char path[PATH_MAX];
	int fd;

	/* A path under the mount as it is, else one relative to its root. */
	if (root && !strncmp(cgroup, root, strlen(root)))
		snprintf(path, sizeof(path), "%s", cgroup);
	else if (root)
		snprintf(path, sizeof(path), "%s%s", root, cgroup_arg(cgroup));
	else
		return -ENOENT;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int daemon_limit(struct ctl *ctl, const char *cgroup, bool set, uint64_t limit,
		 struct axon_dlimit *out)
{
	char err[512] = "";
	int fd, ret;

	fd = open_cgroup_dir(cgroup);
	if (fd < 0) {
		errmsg("cannot open cgroup %s: %s", cgroup, strerror(-fd));
		return 1;
	}
	ret = axon_daemon_limit(ctl->addr, fd, set, limit, out, err, sizeof(err));
	close(fd);
	if (ret) {
		errmsg("%s", err[0] ? err : strerror(-ret));
		return 1;
	}
	return 0;
}
