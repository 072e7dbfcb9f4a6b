// SPDX-License-Identifier: MIT
/*
 * Per-cgroup limits for socket clients (sockcg.h). The tree holds a node
 * per cgroup path that has a limit, a charge, a client in it or a child
 * that does; a node's usage is what its own clients and every descendant's
 * were charged, so a limit on /a holds /a/b as the kernel's does. A charge
 * goes to the cgroup the client is in when it is made (memcg's rule: a
 * move does not carry what was charged before), and comes back from the
 * cgroup it went to; a client keeps what it charged per cgroup in a few
 * slots, and one that moved through more cgroups than that while holding
 * memory in each is refused more until it frees some.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/axon.h>

#include "axond.h"
#include "clock.h"
#include "sockcg.h"

#define MAX_NODES	4096
#define MAX_PATH	1024
#define REREAD_NS	(100 * 1000000ULL)

struct cg_node {
	char *path;
	struct cg_node *parent, *next;
	unsigned int refs;	/* children, clients' current cgroup and slots */
	uint64_t limit, usage, peak, failcnt;
};

static struct cg_node *nodes;
static unsigned int nnodes;

/* "/", or "/a/b": no empty, "." or ".." component, no trailing '/'. */
static bool path_ok(const char *p)
{
	size_t n = strnlen(p, MAX_PATH);
	const char *s;

	if (n == 0 || n >= MAX_PATH || p[0] != '/')
		return false;
	if (n == 1)
		return true;
	if (p[n - 1] == '/')
		return false;
	for (s = p; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
		if (s[0] == '/' && (s[1] == '/' || (s[1] == '.' && (s[2] == '/' || !s[2] ||
			(s[2] == '.' && (s[3] == '/' || !s[3]))))))
			return false;
	}
	return true;
}

static struct cg_node *find(const char *path)
{
	struct cg_node *n;

	for (n = nodes; n; n = n->next)
		if (!strcmp(n->path, path))
			return n;
	return NULL;
}

/* Drops one reference; a node nothing holds goes, and its parent's. */
static void node_put(struct cg_node *n)
{
	while (n && !--n->refs && !n->usage && n->limit == AXON_LIMIT_NONE) {
		struct cg_node *parent = n->parent, **pp;

		for (pp = &nodes; *pp; pp = &(*pp)->next) {
			if (*pp == n) {
				*pp = n->next;
				break;
			}
		}
		nnodes--;
		free(n->path);
		free(n);
		n = parent;
	}
}

/* The node of a valid path, made with its ancestors if new, with a
 * reference taken; NULL: no memory or too many nodes. */
static struct cg_node *node_get(const char *path)
{
	struct cg_node *n = find(path), *parent = NULL;
	char up[MAX_PATH];
	char *slash;

	if (n) {
		n->refs++;
		return n;
	}
	if (nnodes >= MAX_NODES)
		return NULL;
	if (strcmp(path, "/")) {
		snprintf(up, sizeof(up), "%s", path);
		slash = strrchr(up, '/');
		if (slash == up)
			slash[1] = 0;
		else
			*slash = 0;
		parent = node_get(up);
		if (!parent)
			return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (n)
		n->path = strdup(path);
	if (!n || !n->path) {
		free(n);
		node_put(parent);
		return NULL;
	}
	n->parent = parent;	/* its reference is the child's */
	n->limit = AXON_LIMIT_NONE;
	n->refs = 1;
	n->next = nodes;
	nodes = n;
	nnodes++;
	return n;
}

/* The cgroup v2 path of pid ("0::/a/b" in /proc/PID/cgroup), or -1. */
static int read_cgroup(pid_t pid, char *path, size_t len)
{
	char file[64], buf[4096], *line, *end;
	ssize_t n;
	int fd;

	snprintf(file, sizeof(file), "/proc/%d/cgroup", (int)pid);
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	for (line = buf; line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		if (end)
			*end = 0;
		if (!strncmp(line, "0::", 3)) {
			if (strlen(line + 3) >= len || !path_ok(line + 3))
				return -1;
			strcpy(path, line + 3);
			return 0;
		}
	}
	return -1;
}

/*
 * The client's cgroup, read again when the last reading is old. One that
 * cannot be read (the process gone, no cgroup v2) keeps the last known;
 * a client never read is charged to the root, whose limits hold it.
 */
static void refresh(struct axond *d, struct client *c, bool force)
{
	struct sockcg_client *s = &c->sockcg;
	uint64_t now = axond_now_ns();
	char path[MAX_PATH];
	struct cg_node *n;

	(void)d;
	if (!force && s->node && now - s->read_ns < REREAD_NS)
		return;
	s->read_ns = now;
	if (read_cgroup(c->pid, path, sizeof(path))) {
		if (s->node)
			return;
		snprintf(path, sizeof(path), "/");
		log_info("client %llu: no cgroup v2 for pid %d: charged to /",
			 (unsigned long long)c->id, (int)c->pid);
	}
	if (s->node && !strcmp(s->node->path, path))
		return;
	n = node_get(path);
	if (!n)
		return;	/* keeps the last known; a first is the root below */
	node_put(s->node);
	s->node = n;
}

void sockcg_attach(struct axond *d, struct client *c)
{
	memset(&c->sockcg, 0, sizeof(c->sockcg));
	refresh(d, c, true);
	if (!c->sockcg.node)
		c->sockcg.node = node_get("/");
}

static void give(struct cg_node *n, uint64_t bytes)
{
	for (; n; n = n->parent)
		n->usage -= bytes;
}

void sockcg_detach(struct axond *d, struct client *c)
{
	struct sockcg_client *s = &c->sockcg;
	unsigned int i;

	(void)d;
	for (i = 0; i < SOCKCG_SLOTS; i++) {
		if (!s->slot[i].node)
			continue;
		give(s->slot[i].node, s->slot[i].bytes);
		node_put(s->slot[i].node);
		s->slot[i].node = NULL;
		s->slot[i].bytes = 0;
	}
	node_put(s->node);
	s->node = NULL;
}

int sockcg_charge(struct axond *d, struct client *c, uint64_t bytes)
{
	struct sockcg_client *s = &c->sockcg;
	struct cg_node *n, *a;
	int i, slot = -1;

	refresh(d, c, false);
	n = s->node;
	if (!n)
		return -ENOMEM;	/* never charged nothing: refused */
	for (i = 0; i < SOCKCG_SLOTS; i++) {
		if (s->slot[i].node == n) {
			slot = i;
			break;
		}
		if (!s->slot[i].node && slot < 0)
			slot = i;
	}
	if (slot < 0)
		return -ENOMEM;
	for (a = n; a; a = a->parent) {
		if (a->limit != AXON_LIMIT_NONE &&
		    (a->usage > a->limit || bytes > a->limit - a->usage)) {
			a->failcnt++;
			return -ENOMEM;
		}
		if (a->usage > UINT64_MAX - bytes)
			return -ENOMEM;
	}
	for (a = n; a; a = a->parent) {
		a->usage += bytes;
		if (a->usage > a->peak)
			a->peak = a->usage;
	}
	if (!s->slot[slot].node) {
		s->slot[slot].node = n;
		n->refs++;
	}
	s->slot[slot].bytes += bytes;
	return 0;
}

static void uncharge_slot(struct sockcg_client *s, int i, uint64_t *bytes)
{
	uint64_t take = *bytes < s->slot[i].bytes ? *bytes : s->slot[i].bytes;

	give(s->slot[i].node, take);
	s->slot[i].bytes -= take;
	*bytes -= take;
	if (!s->slot[i].bytes) {
		node_put(s->slot[i].node);
		s->slot[i].node = NULL;
	}
}

/* From the cgroup the client is in first (what it charged most lately),
 * then the others'. */
void sockcg_uncharge(struct axond *d, struct client *c, uint64_t bytes)
{
	struct sockcg_client *s = &c->sockcg;
	int i;

	(void)d;
	for (i = 0; i < SOCKCG_SLOTS && bytes; i++)
		if (s->slot[i].node && s->slot[i].node == s->node)
			uncharge_slot(s, i, &bytes);
	for (i = 0; i < SOCKCG_SLOTS && bytes; i++)
		if (s->slot[i].node)
			uncharge_slot(s, i, &bytes);
}

int sockcg_limit_set(struct axond *d, const char *path, uint64_t limit)
{
	struct cg_node *n;

	(void)d;
	if (!path_ok(path))
		return -EINVAL;
	n = node_get(path);
	if (!n)
		return -ENOMEM;
	n->limit = limit;
	node_put(n);	/* stays while it has a limit */
	return 0;
}

int sockcg_limit_get(struct axond *d, const char *path, uint64_t *limit,
		     uint64_t *usage, uint64_t *peak, uint64_t *failcnt)
{
	const struct cg_node *n;

	(void)d;
	if (!path_ok(path))
		return -EINVAL;
	n = find(path);
	*limit = n ? n->limit : AXON_LIMIT_NONE;
	*usage = n ? n->usage : 0;
	*peak = n ? n->peak : 0;
	*failcnt = n ? n->failcnt : 0;
	return 0;
}

void sockcg_for_each(sockcg_visit fn, void *arg)
{
	const struct cg_node *n;

	for (n = nodes; n; n = n->next)
		if (n->limit != AXON_LIMIT_NONE || n->usage)
			fn(n->path, n->limit, n->usage, n->peak, n->failcnt, arg);
}

/* Where cgroup v2 is mounted (/proc/self/mountinfo), "" if nowhere. */
static const char *cgroup2_root(void)
{
	static char root[PATH_MAX];
	static bool looked;
	char line[4096];
	FILE *f;

	if (looked)
		return root;
	looked = true;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return root;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], *sep = strstr(line, " - ");

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 && strlen(mnt) < sizeof(root)) {
			strcpy(root, mnt);
			break;
		}
	}
	fclose(f);
	return root;
}

int sockcg_path_of_fd(int cgfd, char *path, size_t len)
{
	const char *root = cgroup2_root();
	char link[64], target[PATH_MAX];
	size_t rl = strlen(root);
	struct stat st;
	ssize_t n;

	if (!rl || fstat(cgfd, &st) || !S_ISDIR(st.st_mode))
		return -EINVAL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", cgfd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n <= 0)
		return -EINVAL;
	target[n] = 0;
	if (strncmp(target, root, rl) || (target[rl] && target[rl] != '/'))
		return -EINVAL;	/* not a cgroup v2 directory */
	if (snprintf(path, len, "%s", target[rl] ? target + rl : "/") >= (int)len)
		return -EINVAL;
	return path_ok(path) ? 0 : -EINVAL;
}

/* Write and search permission on the parent for uid by the mode bits (no
 * ACLs, and of the groups only the primary one). */
bool sockcg_may_set(int cgfd, uid_t uid, gid_t gid)
{
	struct stat st;
	int pfd;
	bool ok;

	pfd = openat(cgfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return false;
	ok = !fstat(pfd, &st);
	close(pfd);
	if (!ok)
		return false;
	if (st.st_uid == uid)
		return (st.st_mode & (S_IWUSR | S_IXUSR)) == (S_IWUSR | S_IXUSR);
	if (st.st_gid == gid)
		return (st.st_mode & (S_IWGRP | S_IXGRP)) == (S_IWGRP | S_IXGRP);
	return (st.st_mode & (S_IWOTH | S_IXOTH)) == (S_IWOTH | S_IXOTH);
}
