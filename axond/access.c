// SPDX-License-Identifier: MIT
/*
 * The access policy for looking at other clients (access.h): a trace of a
 * client, and the client's row in the stats, are the business of the
 * client's own uid and of administrators only. Administrators are uid 0,
 * axond's own uid (it can read everything of its own anyway) and members
 * of the --admin-group, primary or supplementary, as the kernel saw the
 * peer when it connected (SO_PEERCRED, SO_PEERGROUPS).
 */
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "axond.h"
#include "access.h"

static bool have_admin_gid;
static gid_t admin_gid;

int access_init(struct axond *d)
{
	const char *name = d->cfg.admin_group;
	bool named = name != NULL;
	struct group *g;

	have_admin_gid = false;
	if (!name)
		name = ACCESS_DEFAULT_ADMIN_GROUP;
	if (!*name)
		return 0;	/* --admin-group= : root and axond's uid only */
	errno = 0;
	g = getgrnam(name);
	if (!g) {
		if (named) {
			fprintf(stderr, "axond: --admin-group=%s: no such group%s%s\n", name,
				errno ? ": " : "", errno ? strerror(errno) : "");
			return -ENOENT;
		}
		/* The default is a convention, not a requirement. */
		return 0;
	}
	admin_gid = g->gr_gid;
	have_admin_gid = true;
	return 0;
}

/* Is the peer of fd in the administrators' group (supplementary)? */
static bool in_admin_group(int fd)
{
	gid_t small[64], *gids = small;
	socklen_t len = sizeof(small);
	bool found = false;
	size_t i, n;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, gids, &len) < 0) {
		/* ERANGE: more groups than fit; len says how many bytes. */
		if (errno != ERANGE || !len || len > 65536 * sizeof(gid_t))
			return false;
		gids = malloc(len);
		if (!gids)
			return false;
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, gids, &len) < 0) {
			free(gids);
			return false;
		}
	}
	n = len / sizeof(gid_t);
	for (i = 0; i < n && !found; i++)
		found = gids[i] == admin_gid;
	if (gids != small)
		free(gids);
	return found;
}

void access_peer_of(int fd, struct access_peer *p)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	p->pid = 0;
	p->uid = (uid_t)-1;
	p->gid = (gid_t)-1;
	p->admin = false;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    len != sizeof(cred) || cred.uid == (uid_t)-1)
		return;
	p->pid = cred.pid;
	p->uid = cred.uid;
	p->gid = cred.gid;
	p->admin = cred.uid == 0 || cred.uid == geteuid() ||
		   (have_admin_gid && (cred.gid == admin_gid || in_admin_group(fd)));
}
