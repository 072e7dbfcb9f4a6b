/* SPDX-License-Identifier: MIT */
/*
 * Socket clients charged against per-cgroup limits (sockcg.c): without the
 * kernel module nothing else holds a socket client's device memory to its
 * cgroup, so the daemon keeps a tree of cgroup v2 paths with limits set
 * through AXON_HELLO_LIMIT and charges each socket client's device memory
 * to its cgroup and every ancestor, as the module does. Advisory: the
 * cgroup is read from /proc/PID/cgroup of the SO_PEERCRED pid, which can
 * race with the process's exit and the pid's reuse (Documentation/
 * admin.md). Dispatcher only.
 */
#ifndef AXOND_SOCKCG_H
#define AXOND_SOCKCG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct axond;
struct client;
struct cg_node;

/* What one client has charged to one cgroup (a move starts another). */
#define SOCKCG_SLOTS	8
struct sockcg_client {
	struct cg_node *node;	/* its cgroup as last read */
	uint64_t read_ns;	/* when */
	struct {
		struct cg_node *node;
		uint64_t bytes;
	} slot[SOCKCG_SLOTS];
};

/* A socket client joins (its cgroup read now) and leaves (all it charged
 * given back). */
void sockcg_attach(struct axond *d, struct client *c);
void sockcg_detach(struct axond *d, struct client *c);

/* bytes for c, its cgroup read again if it is older than 100 ms: 0, or
 * -ENOMEM past a limit of the cgroup or an ancestor (failcnt counts it). */
int sockcg_charge(struct axond *d, struct client *c, uint64_t bytes);
void sockcg_uncharge(struct axond *d, struct client *c, uint64_t bytes);

/* A cgroup's limit (path relative to the cgroup v2 root, "/a/b"):
 * AXON_LIMIT_NONE removes it. 0 or -EINVAL (bad path), -ENOMEM. */
int sockcg_limit_set(struct axond *d, const char *path, uint64_t limit);
/* 0 and its figures (none: AXON_LIMIT_NONE and zeros). */
int sockcg_limit_get(struct axond *d, const char *path, uint64_t *limit,
		     uint64_t *usage, uint64_t *peak, uint64_t *failcnt);

/* Each cgroup the daemon tracks, for the stats. */
typedef void (*sockcg_visit)(const char *path, uint64_t limit, uint64_t usage,
			     uint64_t peak, uint64_t failcnt, void *arg);
void sockcg_for_each(sockcg_visit fn, void *arg);

/*
 * AXON_HELLO_LIMIT: the cgroup directory cgfd names; whether uid may set
 * its limit (an administrator may; anyone else needs write and search
 * permission on its parent directory, the kernel's rule of delegation);
 * the path relative to the cgroup v2 root into path (len bytes). 0 or a
 * negative errno.
 */
int sockcg_path_of_fd(int cgfd, char *path, size_t len);
bool sockcg_may_set(int cgfd, uid_t uid, gid_t gid);

#endif
