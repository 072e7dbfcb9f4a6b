/* SPDX-License-Identifier: MIT */
/*
 * Who may look at a client (access.c): tracing it and seeing it in the
 * stats are allowed to the client's own uid and to administrators only.
 * Identity is the connecting process's, from the kernel (SO_PEERCRED,
 * SO_PEERGROUPS), never from anything the peer sends.
 */
#ifndef AXOND_ACCESS_H
#define AXOND_ACCESS_H

#include <stdbool.h>
#include <sys/types.h>

struct axond;

struct access_peer {
	pid_t pid;
	uid_t uid;		/* (uid_t)-1 when the kernel could not say */
	gid_t gid;
	bool admin;		/* uid 0, axond's uid, or in --admin-group */
};

/* The group --admin-group names if none is given (a missing one: none). */
#define ACCESS_DEFAULT_ADMIN_GROUP	"axon-admin"

/*
 * At start: resolves --admin-group (d->cfg.admin_group; NULL: the default,
 * "": none). A group named on the command line that does not exist is an
 * error (-ENOENT, message printed); the default group missing means none.
 */
int access_init(struct axond *d);

/* The identity of the process at the other end of socket fd. One the
 * kernel cannot give is nobody: no uid, no administrator. */
void access_peer_of(int fd, struct access_peer *p);

/* May p trace, or see in the stats, a client of uid owner? */
static inline bool access_may_see(const struct access_peer *p, uid_t owner)
{
	return p->admin || (p->uid != (uid_t)-1 && p->uid == owner);
}

#endif
