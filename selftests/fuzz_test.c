// SPDX-License-Identifier: GPL-2.0
/*
 * A fuzzer of /dev/axon's whole user interface, for `make vmcheck` (the
 * debug kernel's KASAN, lockdep, kmemleak and UBSAN do most of the
 * judging; the VM harness fails the run on any report in the log).
 *
 * Several processes of several threads each, sharing their descriptors
 * and mappings, issue random operations:
 *   - every ioctl of uapi/linux/axon.h on client fds, on the attached
 *     daemon's fd and on CLIENT_FD fds (plain and delegates), with
 *     random, boundary and
 *     valid-but-wrong arguments (sizes, offsets, ids, error codes, huge
 *     counts, pointers to unmapped, read-only, straddling or kernel
 *     memory), and ioctl numbers outside the set;
 *   - mmap with random offsets, lengths, protections and flags, then
 *     mprotect (read-only parts made writable), madvise (DOFORK/DONTFORK
 *     among others), mremap (grow, shrink, move), munmap of whole and
 *     partial mappings, reads and writes of the pages, fork with the
 *     mappings, close and munmap racing with the other threads;
 *   - doorbells and waits (ENTER, poll, epoll, read) with random
 *     arguments, interrupted by signals sent at random;
 *   - the daemon side: attach, events read with random sizes and bad
 *     buffers, ACCEPT/DISCONNECT/CHARGE/UNCHARGE/CLIENT_FD/NOTIFY with
 *     random and known client ids, on the daemon's fd and on delegates
 *     (for their own client and others), delegates read, polled and
 *     closed, the daemon killed and restarted;
 *   - the generic netlink family with random messages, /proc/axon read at
 *     random offsets.
 * Besides the kernel's own checks the fuzzer judges what comes back: no
 * kernel-internal errno (512 and up) ever reaches user space, SETUP's
 * geometry is consistent with what was asked, a read-only part never
 * becomes writable, mremap never grows a mapping, a forked child never
 * uses its parent's client fd, unknown ioctls get ENOTTY, event records
 * are well formed. After each test no client, charge or region memory is
 * left in /proc/axon.
 *
 * Environment:
 *   AXON_FUZZ_SEED     seed (decimal or 0x hex); default: from the clock.
 *                      Printed at the start; every thread's sequence of
 *                      operations derives from it (the interleaving of
 *                      threads does not), so a finding can be replayed.
 *   AXON_FUZZ_SECONDS  seconds per fuzzing test (default 8)
 *   AXON_FUZZ_OPS      operations per thread (default 0: until the time is up)
 *   AXON_FUZZ_VERBOSE  1: log every operation of every thread to stderr
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "axon_test.h"
#include "kselftest_harness.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#define MADV_POPULATE_WRITE	23
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif
#ifndef MAP_SYNC
#define MAP_SYNC		0x80000
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP	4
#endif

#define PG		4096UL
#define PG_UP(x)	(((x) + PG - 1) & ~(PG - 1))
#define INFO_LEN	((sizeof(struct axon_info) + PG - 1) & ~(PG - 1))
#define FZ_MAX_ERRNO	133	/* EHWPOISON: the last errno user space knows */
#define FZ_USER_ERRNO	511	/* below the kernel's internal codes (512..) */
#define FZ_FDS		16
#define FZ_MAPS		48
#define FZ_THREADS	4
#define FZ_IDS		64
#define FZ_SCRATCH	(256 * PG)
#define FZ_SCRATCH_AT	((unsigned char *)0x200000000000ULL)
#define FZ_BUF		(64 * 1024)
#define FZ_CG		"/sys/fs/cgroup/axfuzz"
#define FZ_MAX_DATA	"1048576"	/* max_data_size while fuzzing */
#define FZ_DEF_DATA	"65536"		/* default_data_size while fuzzing */

/* ---- configuration, seed, shared counters ------------------------------ */

static uint64_t fz_seed;
static unsigned int fz_seconds = 8;
static uint64_t fz_max_ops;
static int fz_verbose;

enum fz_op {
	OP_OPEN, OP_SETUP, OP_ENTER, OP_POLL, OP_EPOLL, OP_RDWR, OP_FDINFO,
	OP_IOCTL_UNKNOWN, OP_IOCTL_ANY, OP_MMAP, OP_TOUCH, OP_MPROTECT,
	OP_MADVISE, OP_MREMAP, OP_MUNMAP, OP_FORK, OP_CLOSE, OP_DUP,
	OP_TRAFFIC, OP_ATTACH,
	OP_D_ACCEPT, OP_D_DISCONNECT, OP_D_CHARGE, OP_D_CLIENT_FD, OP_D_NOTIFY,
	OP_D_READ, OP_D_WRONG, OP_D_FORK,
	OP_NL_RANDOM, OP_NL_VALID, OP_NL_MCAST, OP_PROC, OP_SERVE,
	OP_NR
};

static const char *const fz_op_names[OP_NR] = {
	"open", "setup", "enter", "poll", "epoll", "rdwr", "fdinfo",
	"ioctl-unknown", "ioctl-any", "mmap", "touch", "mprotect",
	"madvise", "mremap", "munmap", "fork", "close", "dup",
	"traffic", "attach",
	"d-accept", "d-disconnect", "d-charge", "d-client-fd", "d-notify",
	"d-read", "d-wrong", "d-fork",
	"nl-random", "nl-valid", "nl-mcast", "proc", "serve",
};

/* In a MAP_SHARED page: seen by every worker process and the test. */
struct fz_shared {
	uint64_t ops[OP_NR];
	uint64_t op_ns[OP_NR];	/* time spent in each */
	uint64_t fails;
	uint64_t ids[FZ_IDS];	/* recently seen client ids */
	uint32_t ids_pos;
	int stop;
	int test_no;
};

static struct fz_shared *sh;

struct rng {
	uint64_t s;
};

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t rnd(struct rng *r)
{
	return splitmix(&r->s);
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

static bool chance(struct rng *r, unsigned int pct)
{
	return below(r, 100) < pct;
}

static uint64_t fz_mix(uint64_t a, uint64_t b)
{
	uint64_t x = a ^ (b * 0x9e3779b97f4a7c15ULL);

	return splitmix(&x);
}

static const uint64_t fz_interesting[] = {
	0, 1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 65, 127, 128, 255, 256,
	511, 512, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 4097, 8191, 8192,
	8193, 0x7fff, 0x8000, 0xffff, 0x10000, 0x100000, 0x100001, 0x7ffffff,
	0x8000000, 0x8000001, 0xfffffff, 0x10000000, 0x10001000, 0x7fffffff,
	0x80000000, 0xffffffff, 0x100000000ULL, 0x7fffffffffffffffULL,
	0x8000000000000000ULL, 0x8000000000000001ULL, 0xfffffffffffff000ULL,
	0xfffffffffffff001ULL, 0xfffffffffffffffeULL, 0xffffffffffffffffULL,
	0xffffffff00000000ULL, 0x4000000000000000ULL,
};

/* A value that is often at a boundary. */
static uint64_t fz_val(struct rng *r)
{
	switch (below(r, 10)) {
	case 0: case 1: case 2: case 3:
		return fz_interesting[below(r, sizeof(fz_interesting) /
					      sizeof(fz_interesting[0]))];
	case 4: case 5:
		return below(r, 64);
	case 6:
		return (uint32_t)rnd(r);
	case 7: {
		uint64_t p = 1ULL << below(r, 64);

		return p + below(r, 3) - 1;
	}
	default:
		return rnd(r);
	}
}

/* ---- per process and per thread state ---------------------------------- */

enum fz_kind { FK_CLIENT, FK_DAEMON, FK_CLIENT_FD, FK_DELEGATE };

struct fz_fd {
	int fd;			/* -1: free slot */
	int kind;
	bool have_params;	/* p is this client's geometry */
	struct axon_params p;
	uint64_t id;		/* a delegate's client */
};

struct fz_map {
	unsigned char *addr;	/* NULL: free slot */
	size_t len;
	int prot;		/* every protection it may have had */
	bool ro_part;		/* a part this side may never write */
	bool scratch;		/* inside the scratch reservation */
	int kind;
};

enum fz_worker {
	W_CLIENT,	/* client fds, mmap, fork */
	W_NOBODY,	/* the same as uid 65534 */
	W_DAEMON,	/* attaches, serves, fuzzes the daemon ioctls */
	W_NETLINK,	/* netlink and /proc */
	W_NR
};

static const char *const fz_worker_names[W_NR] = {
	"client", "nobody", "daemon", "netlink",
};

struct fz_proc {
	pthread_mutex_t lock;	/* fds, maps, the scratch area */
	struct fz_fd fds[FZ_FDS];
	struct fz_map maps[FZ_MAPS];
	unsigned char *mem;	/* pointer kinds: see fz_mem_init() */
	unsigned char *scratch;	/* PROT_NONE reservation for MAP_FIXED */
	int worker;
	int index;
	uint64_t seed;
	int dfd;		/* the daemon fd (W_DAEMON) */
	pthread_mutex_t td_lock;	/* td */
	struct tdaemon *td;
	uint16_t nl_family;
	uint32_t nl_group;
	pid_t tids[FZ_THREADS];
	int nthreads;
	int stop_signaller;
};

struct fz_nlmsg {
	struct nlmsghdr n;
	struct genlmsghdr g;
	unsigned char attrs[8192];
};

struct fz_thread {
	struct fz_proc *p;
	struct rng r;
	int idx;
	uint64_t n;		/* operations done */
	enum fz_op op;		/* the current one */
	unsigned char *buf;	/* FZ_BUF bytes, private */
	int private_fd;		/* never shared: strict ENOTTY checks */
	int nl;			/* netlink socket */
	struct fz_nlmsg *msg;	/* netlink message being built */
};

static __thread sigjmp_buf fz_jmp;
static __thread volatile sig_atomic_t fz_armed;
static __thread struct fz_thread *fz_self;

static void fz_fault(int sig, siginfo_t *si, void *uc)
{
	struct fz_thread *t = fz_self;

	(void)uc;
	if (fz_armed) {
		fz_armed = 0;
		siglongjmp(fz_jmp, sig);
	}
	/* a fault of the fuzzer's own: say where, then die of it */
	if (t)
		dprintf(2, "# fuzz: %s worker %d thread %d op #%llu (%s): signal %d at %p (scratch %p mem %p)\n",
			fz_worker_names[t->p->worker], t->p->index, t->idx,
			(unsigned long long)t->n, fz_op_names[t->op], sig, si->si_addr,
			(void *)t->p->scratch, (void *)t->p->mem);
	if (t && t->p->td)
		for (int i = 0; i < TD_MAX_CLIENTS; i++)
			if (t->p->td->c[i].fd > 0)
				dprintf(2, "#   td %d: fd %d cp %p dp %p sqes %p cqes %p data %p\n",
					i, t->p->td->c[i].fd, (void *)t->p->td->c[i].cp,
					(void *)t->p->td->c[i].dp, (void *)t->p->td->c[i].sqes,
					(void *)t->p->td->c[i].cqes, (void *)t->p->td->c[i].data);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void fz_nop(int sig)
{
	(void)sig;
}

static void fz_signals(void)
{
	struct sigaction sa = { .sa_sigaction = fz_fault };

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NODEFER | SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	/* no SA_RESTART: interrupted waits come back with EINTR */
	sa.sa_handler = fz_nop;
	sa.sa_flags = 0;
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void fz_fail(struct fz_thread *t, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr,
		"# fuzz FAIL: %s worker %d thread %d op #%llu (%s): %s [AXON_FUZZ_SEED=%llu]\n",
		fz_worker_names[t->p->worker], t->p->index, t->idx,
		(unsigned long long)t->n, fz_op_names[t->op], msg,
		(unsigned long long)fz_seed);
	__atomic_add_fetch(&sh->fails, 1, __ATOMIC_RELAXED);
}

/* errno of a failed call: a code user space knows (max 133 or 511). */
static void fz_errno(struct fz_thread *t, const char *what, int e, int max)
{
	if (e <= 0 || e > max)
		fz_fail(t, "%s: errno %d is not a user-space error code", what, e);
}

/* ioctl, judged: returns the result, errno in *err (0 on success). */
static long fz_ioctl(struct fz_thread *t, int fd, unsigned long cmd,
		     unsigned long arg, int max_errno, int *err)
{
	long ret = ioctl(fd, cmd, arg);
	int e = ret < 0 ? errno : 0;

	if (ret < 0)
		fz_errno(t, "ioctl", e, max_errno);
	if (err)
		*err = e;
	return ret;
}

static void fz_id_add(uint64_t id)
{
	uint32_t pos;

	if (!id)
		return;
	pos = __atomic_fetch_add(&sh->ids_pos, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&sh->ids[pos % FZ_IDS], id, __ATOMIC_RELAXED);
}

/* A client id: mostly one seen recently, else a boundary value. */
static uint64_t fz_id(struct rng *r)
{
	if (chance(r, 80)) {
		uint64_t id = __atomic_load_n(&sh->ids[below(r, FZ_IDS)],
					      __ATOMIC_RELAXED);

		if (id)
			return id + (chance(r, 5) ? below(r, 3) - 1 : 0);
	}
	return fz_val(r);
}

/*
 * The pointer kinds, in one mapping of 8 pages: 0-1 rw, 2 read-only
 * (holding valid structs, written before it was protected), 3 none, 4 rw,
 * 5 none, 6-7 rw.
 */
#define MEM_RO		(2 * PG)
#define MEM_NONE	(3 * PG)
#define MEM_RW2		(4 * PG)
#define MEM_NONE2	(5 * PG)

static int fz_mem_init(struct fz_proc *p)
{
	struct axon_params *params;
	struct axon_enter *enter;

	p->mem = mmap(NULL, 8 * PG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p->mem == MAP_FAILED)
		return -errno;
	params = (void *)(p->mem + MEM_RO);
	params->sq_entries = 8;
	params->data_size = PG;
	enter = (void *)(p->mem + MEM_RO + 512);
	enter->flags = AXON_ENTER_GETEVENTS;
	enter->min_complete = 1;
	if (mprotect(p->mem + MEM_RO, PG, PROT_READ) ||
	    mprotect(p->mem + MEM_NONE, PG, PROT_NONE) ||
	    mprotect(p->mem + MEM_NONE2, PG, PROT_NONE))
		return -errno;
	/*
	 * Far below where mmap places things (top-down from near 2^47): a
	 * hole a failing MAP_FIXED or mremap leaves in it must never be
	 * filled by a mapping the fuzzer does not know of (the daemon's
	 * view of its clients), which a later MAP_FIXED would clobber.
	 */
	p->scratch = mmap(FZ_SCRATCH_AT, FZ_SCRATCH, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			  MAP_FIXED_NOREPLACE, -1, 0);
	return p->scratch == FZ_SCRATCH_AT ? 0 : -EEXIST;
}

/*
 * Where an argument of len bytes lives: usually the valid buffer, else
 * somewhere bad. The struct is copied where it can be.
 */
static void *fz_ptr(struct fz_thread *t, const void *valid, size_t len)
{
	unsigned char *m = t->p->mem;
	/* at most a page before the edge: the pages below are rw */
	size_t half = len / 2 ? (len / 2 < PG ? len / 2 : PG) : 1;

	if (chance(&t->r, 75))
		return (void *)valid;
	switch (below(&t->r, 9)) {
	case 0:
		return NULL;
	case 1:
		return m + MEM_RO + (chance(&t->r, 50) ? 0 : 512);
	case 2:
		return m + MEM_NONE;
	case 3:	/* rw, then read-only */
		memcpy(m + MEM_RO - half, valid, half);
		return m + MEM_RO - half;
	case 4:	/* rw, then nothing */
		memcpy(m + MEM_NONE2 - half, valid, half);
		return m + MEM_NONE2 - half;
	case 5:
		return (void *)0xffff888000000000ULL;
	case 6:
		return (void *)0x8000000000000000ULL;
	case 7:	/* unaligned but fine */
		memcpy(m + MEM_RW2 + 1, valid, len < PG - 1 ? len : PG - 1);
		return m + MEM_RW2 + 1;
	default:
		return (void *)(uintptr_t)fz_val(&t->r);
	}
}

/* ---- the fd and mapping tables ----------------------------------------- */

static int fz_fd_add(struct fz_proc *p, int fd, int kind,
		     const struct axon_params *params)
{
	int i;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < FZ_FDS; i++) {
		if (p->fds[i].fd >= 0)
			continue;
		p->fds[i].fd = fd;
		p->fds[i].kind = kind;
		p->fds[i].have_params = params != NULL;
		if (params)
			p->fds[i].p = *params;
		p->fds[i].id = 0;
		pthread_mutex_unlock(&p->lock);
		return i;
	}
	pthread_mutex_unlock(&p->lock);
	close(fd);
	return -1;
}

/* A copy of a random used slot; false if there is none. */
static bool fz_fd_pick(struct fz_thread *t, struct fz_fd *out, int *slot)
{
	struct fz_proc *p = t->p;
	int i, start = below(&t->r, FZ_FDS);

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < FZ_FDS; i++) {
		int s = (start + i) % FZ_FDS;

		if (p->fds[s].fd < 0)
			continue;
		*out = p->fds[s];
		if (slot)
			*slot = s;
		pthread_mutex_unlock(&p->lock);
		return true;
	}
	pthread_mutex_unlock(&p->lock);
	return false;
}

/*
 * The fd a daemon-side op is issued on: mostly the daemon's, sometimes a
 * delegate, with its own client's id in *id (else *id is left alone).
 */
static int fz_acting_fd(struct fz_thread *t, __u64 *id)
{
	struct fz_proc *p = t->p;
	int i, fd = p->dfd, start = below(&t->r, FZ_FDS);

	if (!chance(&t->r, 30))
		return fd;
	pthread_mutex_lock(&p->lock);
	for (i = 0; i < FZ_FDS; i++) {
		int s = (start + i) % FZ_FDS;

		if (p->fds[s].fd < 0 || p->fds[s].kind != FK_DELEGATE)
			continue;
		fd = p->fds[s].fd;
		if (chance(&t->r, 70))
			*id = p->fds[s].id;
		break;
	}
	pthread_mutex_unlock(&p->lock);
	return fd;
}

static void fz_fd_set_params(struct fz_proc *p, int fd,
			     const struct axon_params *params)
{
	int i;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < FZ_FDS; i++)
		if (p->fds[i].fd == fd && p->fds[i].kind == FK_CLIENT) {
			p->fds[i].p = *params;
			p->fds[i].have_params = true;
		}
	pthread_mutex_unlock(&p->lock);
}

static int fz_fd_count(struct fz_proc *p)
{
	int i, n = 0;

	pthread_mutex_lock(&p->lock);
	for (i = 0; i < FZ_FDS; i++)
		n += p->fds[i].fd >= 0;
	pthread_mutex_unlock(&p->lock);
	return n;
}

/* Gives a range back: to the scratch reservation, or to nobody. */
static void fz_unmap_range(struct fz_proc *p, unsigned char *a, size_t len)
{
	if (a >= p->scratch && a + len <= p->scratch + FZ_SCRATCH)
		mmap(a, len, PROT_NONE,
		     MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	else
		munmap(a, len);
}

/* Forgets the entries overlapping [a, a+len) (the caller holds the lock). */
static void fz_map_forget_range(struct fz_proc *p, unsigned char *a, size_t len)
{
	int i;

	for (i = 0; i < FZ_MAPS; i++) {
		struct fz_map *m = &p->maps[i];

		if (m->addr && m->addr < a + len && a < m->addr + m->len)
			m->addr = NULL;
	}
}

static struct fz_map *fz_map_pick(struct fz_thread *t)
{
	int i, start = below(&t->r, FZ_MAPS);

	for (i = 0; i < FZ_MAPS; i++) {
		struct fz_map *m = &t->p->maps[(start + i) % FZ_MAPS];

		if (m->addr)
			return m;
	}
	return NULL;
}

/* ---- client operations ------------------------------------------------- */

static void op_open(struct fz_thread *t)
{
	static const int flags[] = {
		O_RDWR | O_CLOEXEC, O_RDWR | O_CLOEXEC | O_NONBLOCK, O_RDONLY,
		O_WRONLY | O_CLOEXEC,
	};
	int fd;

	if (fz_fd_count(t->p) >= FZ_FDS - 2)
		return;
	fd = open(AXON_DEV, flags[below(&t->r, 4)]);
	if (fd < 0) {
		if (errno != EMFILE && errno != ENOMEM)
			fz_fail(t, "open: %s", strerror(errno));
		return;
	}
	fz_fd_add(t->p, fd, FK_CLIENT, NULL);
}

/*
 * Checks the geometry SETUP returned: consistent in itself, and (q given)
 * at least what was asked. A SETUP on an fd another thread set up or is
 * setting up returns that one's geometry (Documentation/kmod.rst §3), so
 * only a thread's own private fd can be held to its request.
 */
static const char *fz_geo_bad(const struct axon_params *q,
			      const struct axon_params *p)
{
	static const struct axon_params none;
	uint64_t off;

	if (!q)
		q = &none;
	if (!p->sq_entries || (p->sq_entries & (p->sq_entries - 1)) ||
	    p->sq_entries > AXON_MAX_SQ_ENTRIES || p->sq_entries < q->sq_entries)
		return "sq_entries";
	if (!p->cq_entries || (p->cq_entries & (p->cq_entries - 1)) ||
	    p->cq_entries > 2 * AXON_MAX_SQ_ENTRIES ||
	    p->cq_entries < p->sq_entries || p->cq_entries < q->cq_entries)
		return "cq_entries";
	if (p->data_size % PG || p->data_size < PG ||
	    p->data_size > AXON_KMOD_MAX_DATA_SIZE || p->data_size < q->data_size)
		return "data_size";
	if (p->frontier_entries != AXON_MAX_FRONTIER || !p->client_id)
		return "frontier_entries or client_id";
	if (p->features & ~((1U << AXON_FEAT_LAST) - 1))
		return "features";
	off = 0;
	if (p->off_client != off)
		return "off_client";
	off += PG;
	if (p->off_daemon != off)
		return "off_daemon";
	off += PG;
	if (p->off_frontier != off)
		return "off_frontier";
	off += (AXON_MAX_FRONTIER * 8 + PG - 1) & ~(PG - 1);
	if (p->off_sqes != off)
		return "off_sqes";
	off += ((uint64_t)p->sq_entries * AXON_SQE_SIZE + PG - 1) & ~(PG - 1);
	if (p->off_cqes != off)
		return "off_cqes";
	off += ((uint64_t)p->cq_entries * AXON_CQE_SIZE + PG - 1) & ~(PG - 1);
	if (p->off_data != off)
		return "off_data";
	if (p->region_size != off + p->data_size)
		return "region_size";
	return NULL;
}

/* SETUP sizes: mostly valid and small, else anything. */
static void fz_setup_req(struct fz_thread *t, struct axon_params *q)
{
	memset(q, 0, sizeof(*q));
	if (chance(&t->r, 75)) {
		q->sq_entries = chance(&t->r, 30) ? 0 : 1 + below(&t->r, 64);
		q->cq_entries = chance(&t->r, 50) ? 0 :
				q->sq_entries + below(&t->r, 64);
		q->data_size = chance(&t->r, 30) ? 0 : 1 + below(&t->r, 256 * 1024);
	} else {
		q->sq_entries = fz_val(&t->r);
		q->cq_entries = fz_val(&t->r);
		q->data_size = fz_val(&t->r);
		if (chance(&t->r, 30))
			q->flags = fz_val(&t->r);
		if (chance(&t->r, 30))
			q->resv0 = fz_val(&t->r);
		if (chance(&t->r, 30))
			q->resv[below(&t->r, 6)] = fz_val(&t->r);
		if (chance(&t->r, 30))
			q->client_id = fz_val(&t->r);
	}
}

static void op_setup(struct fz_thread *t)
{
	struct axon_params q, *arg, *buf = (void *)t->buf;
	struct fz_fd f;
	const char *bad;
	int e;

	if (!fz_fd_pick(t, &f, NULL))
		return;
	fz_setup_req(t, &q);
	*buf = q;
	arg = fz_ptr(t, buf, sizeof(q));
	if (fz_ioctl(t, f.fd, AXON_IOC_SETUP, (unsigned long)arg, FZ_USER_ERRNO,
		     &e) < 0)
		return;
	if (arg != buf)
		return;	/* the same struct elsewhere: not ours to check */
	if (f.kind != FK_CLIENT)
		fz_fail(t, "SETUP succeeded on a %s fd",
			f.kind == FK_DAEMON ? "daemon" : "CLIENT_FD");
	bad = fz_geo_bad(NULL, buf);
	if (bad) {
		fz_fail(t, "SETUP(sq %u cq %u data %#llx) gave bad %s: sq %u cq %u data %#llx region %#llx",
			q.sq_entries, q.cq_entries, (unsigned long long)q.data_size,
			bad, buf->sq_entries, buf->cq_entries,
			(unsigned long long)buf->data_size,
			(unsigned long long)buf->region_size);
		return;
	}
	fz_id_add(buf->client_id);
	fz_fd_set_params(t->p, f.fd, buf);
}

static void op_enter(struct fz_thread *t)
{
	struct axon_enter e = { 0 }, *buf = (void *)t->buf, *arg;
	struct fz_fd f;
	long ret;
	int err;

	if (!fz_fd_pick(t, &f, NULL))
		return;
	switch (below(&t->r, 4)) {
	case 0:
		e.to_submit = fz_val(&t->r);
		break;
	case 1:
		e.to_submit = 1;
		break;
	case 2:
		e.to_submit = f.have_params ? f.p.sq_entries + below(&t->r, 2) : 0;
		break;
	}
	if (chance(&t->r, 60))
		e.flags = AXON_ENTER_GETEVENTS;
	else if (chance(&t->r, 20))
		e.flags = fz_val(&t->r);
	e.min_complete = chance(&t->r, 50) ? below(&t->r, 3) : fz_val(&t->r);
	if (chance(&t->r, 10))
		e.resv = fz_val(&t->r);
	switch (below(&t->r, 10)) {
	case 0:
		e.timeout_ns = 0;	/* a signal ends it */
		break;
	case 1: case 2:
		e.timeout_ns = now_ns() - below(&t->r, NSEC_PER_SEC);
		break;
	case 3:
		e.timeout_ns = fz_val(&t->r);
		break;
	default:
		e.timeout_ns = now_ns() + below(&t->r, 3000000);
	}
	*buf = e;
	arg = fz_ptr(t, buf, sizeof(e));
	ret = fz_ioctl(t, f.fd, AXON_IOC_ENTER, (unsigned long)arg,
		       FZ_USER_ERRNO, &err);
	if (ret > 2 * AXON_MAX_SQ_ENTRIES ||
	    (ret > 0 && f.have_params && ret > f.p.cq_entries && arg == buf))
		fz_fail(t, "ENTER returned %ld CQEs", ret);
}

static void op_poll(struct fz_thread *t)
{
	struct pollfd pfd[4];
	int i, n = 1 + below(&t->r, 4), ret;
	struct fz_fd f;

	for (i = 0; i < n; i++) {
		pfd[i].fd = fz_fd_pick(t, &f, NULL) ? f.fd : -1;
		pfd[i].events = chance(&t->r, 70) ? POLLIN | POLLOUT : rnd(&t->r);
		pfd[i].revents = 0;
	}
	ret = poll(pfd, n, below(&t->r, 4));
	if (ret < 0)
		fz_errno(t, "poll", errno, FZ_MAX_ERRNO);
	for (i = 0; ret > 0 && i < n; i++)
		if (pfd[i].revents & ~(pfd[i].events | POLLHUP | POLLERR | POLLNVAL))
			fz_fail(t, "poll revents %#x for events %#x",
				pfd[i].revents, pfd[i].events);
}

static void op_epoll(struct fz_thread *t)
{
	struct epoll_event ev[4];
	int ep, i, n = 1 + below(&t->r, 4);
	struct fz_fd f;

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return;
	for (i = 0; i < n; i++) {
		struct epoll_event e = {
			.events = EPOLLIN | EPOLLOUT |
				  (chance(&t->r, 30) ? EPOLLET : 0) |
				  (chance(&t->r, 10) ? EPOLLONESHOT : 0),
		};

		if (fz_fd_pick(t, &f, NULL))
			epoll_ctl(ep, EPOLL_CTL_ADD, f.fd, &e);
	}
	epoll_wait(ep, ev, 4, below(&t->r, 3));
	/* closing the epoll fd later than the watched fds is the race */
	if (chance(&t->r, 50))
		usleep(below(&t->r, 2000));
	close(ep);
}

static void op_rdwr(struct fz_thread *t)
{
	size_t count = chance(&t->r, 50) ? below(&t->r, 700) : fz_val(&t->r);
	struct fz_fd f;
	ssize_t n;

	if (!fz_fd_pick(t, &f, NULL) || f.kind == FK_DAEMON)
		return;
	if (count > FZ_BUF && chance(&t->r, 50))
		count = FZ_BUF;
	if (chance(&t->r, 50))
		n = read(f.fd, fz_ptr(t, t->buf, 64), count);
	else
		n = write(f.fd, fz_ptr(t, t->buf, 64), count);
	/* a delegate reads one record, or 0 at its end */
	if (f.kind == FK_DELEGATE) {
		if (n > 0 && n != sizeof(struct axon_event))
			fz_fail(t, "read/write on a delegate returned %zd", n);
	} else if (n >= 0 && (t->p->worker == W_NOBODY ||
			      f.kind == FK_CLIENT_FD)) {
		/* (only nobody can be sure its fd never became a daemon's) */
		fz_fail(t, "read/write on a %s fd returned %zd",
			f.kind == FK_CLIENT ? "client" : "CLIENT_FD", n);
	}
	if (n < 0)
		fz_errno(t, "read/write", errno, FZ_MAX_ERRNO);
}

static void op_fdinfo(struct fz_thread *t)
{
	char path[64];
	struct fz_fd f;

	if (!fz_fd_pick(t, &f, NULL))
		return;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", f.fd);
	read_file(path, (char *)t->buf, 4096);
}

static const unsigned long fz_cmds[] = {
	AXON_IOC_SETUP, AXON_IOC_ENTER, AXON_IOC_RESERVE, AXON_IOC_ATTACH,
	AXON_IOC_CHARGE, AXON_IOC_UNCHARGE, AXON_IOC_ACCEPT,
	AXON_IOC_CLIENT_FD, AXON_IOC_NOTIFY, AXON_IOC_DISCONNECT,
};
#define FZ_NCMDS	(sizeof(fz_cmds) / sizeof(fz_cmds[0]))

static bool fz_known_cmd(unsigned int cmd)
{
	unsigned int i;

	for (i = 0; i < FZ_NCMDS; i++)
		if (cmd == (unsigned int)fz_cmds[i])
			return true;
	return false;
}

/* An ioctl number of axon's type that is not one of axon's. */
static unsigned int fz_unknown_cmd(struct rng *r)
{
	unsigned int cmd;

	do {
		switch (below(r, 3)) {
		case 0:	/* a known number with another size or direction */
			cmd = fz_cmds[below(r, FZ_NCMDS)];
			cmd ^= chance(r, 50) ? (1U << (16 + below(r, 14))) :
					       (1U << (30 + below(r, 2)));
			break;
		case 1:
			cmd = _IOC(below(r, 4), AXON_IOC_MAGIC, below(r, 256),
				   below(r, 1 << 14));
			break;
		default:
			cmd = _IOC(below(r, 4), AXON_IOC_MAGIC, 0x17 + below(r, 16),
				   fz_val(r) & 0x3fff);
		}
	} while (fz_known_cmd(cmd) || _IOC_TYPE(cmd) != AXON_IOC_MAGIC);
	return cmd;
}

/* Numbers of axon's type outside the set: ENOTTY on every kind of fd. */
static void op_ioctl_unknown(struct fz_thread *t)
{
	unsigned int cmd = fz_unknown_cmd(&t->r);
	struct fz_fd f;
	int fd = t->private_fd, e;
	bool strict = true;

	if (chance(&t->r, 50) && fz_fd_pick(t, &f, NULL)) {
		fd = f.fd;
		strict = false;	/* another thread may close and reuse it */
	}
	if (fd < 0)
		return;
	if (fz_ioctl(t, fd, cmd, (unsigned long)fz_ptr(t, t->buf, 64),
		     FZ_MAX_ERRNO, &e) >= 0 || (strict && e != ENOTTY))
		fz_fail(t, "unknown ioctl %#x: %s instead of ENOTTY", cmd,
			e ? strerror(e) : "success");
}

/* A known ioctl on any fd with random bytes behind a random pointer. */
static void op_ioctl_any(struct fz_thread *t)
{
	unsigned long cmd = fz_cmds[below(&t->r, FZ_NCMDS)];
	struct fz_fd f;
	unsigned int i;
	int e;

	if (!fz_fd_pick(t, &f, NULL))
		return;
	if (cmd == AXON_IOC_SETUP || cmd == AXON_IOC_ATTACH)
		return;		/* op_setup; attaching is op_attach's */
	for (i = 0; i < 128; i += 8) {
		uint64_t v = chance(&t->r, 30) ? 0 : fz_val(&t->r);

		memcpy(t->buf + i, &v, 8);
	}
	if (cmd == AXON_IOC_ENTER) {
		struct axon_enter *en = (void *)t->buf;

		/* never sleep without end, unless a signal comes */
		if (en->flags & AXON_ENTER_GETEVENTS)
			en->timeout_ns = now_ns() + below(&t->r, 2000000);
	}
	fz_ioctl(t, f.fd, cmd, (unsigned long)fz_ptr(t, t->buf, 128),
		 FZ_USER_ERRNO, &e);
	/* (only nobody can be sure its fd never became a daemon's) */
	if (!e && f.kind == FK_CLIENT && cmd != AXON_IOC_ENTER &&
	    cmd != AXON_IOC_RESERVE &&
	    t->p->worker == W_NOBODY)
		fz_fail(t, "daemon ioctl %#lx succeeded on a client fd", cmd);
}

static void op_attach(struct fz_thread *t)
{
	struct fz_fd f;
	long ret;
	int e;

	if (!fz_fd_pick(t, &f, NULL))
		return;
	ret = fz_ioctl(t, f.fd, AXON_IOC_ATTACH,
		       chance(&t->r, 80) ? 0 : fz_val(&t->r), FZ_MAX_ERRNO, &e);
	if (ret >= 0) {
		/* only the daemon worker may attach; nobody else is root... */
		if (t->p->worker != W_CLIENT)
			fz_fail(t, "ATTACH succeeded in a %s worker",
				fz_worker_names[t->p->worker]);
		/*
		 * ...and a client worker that did closes it at once, with
		 * every dup of it (the same file, now the daemon's).
		 */
		pthread_mutex_lock(&t->p->lock);
		for (int i = 0; i < FZ_FDS; i++) {
			char path[64], info[256];
			int fd = t->p->fds[i].fd;

			snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
			if (fd < 0 || (fd != f.fd &&
				       (read_file(path, info, sizeof(info)) < 0 ||
					!strstr(info, "axon-role:\tdaemon"))))
				continue;
			t->p->fds[i].fd = -1;
			close(fd);
		}
		pthread_mutex_unlock(&t->p->lock);
	}
}

/* ---- mmap and friends -------------------------------------------------- */

struct fz_part {
	uint64_t off;	/* mmap offset */
	uint64_t len;
	bool ro;	/* read-only for this side */
};

/* The parts an fd of this kind may map, from its params. */
static int fz_parts(const struct fz_fd *f, struct fz_part *parts)
{
	const struct axon_params *p = &f->p;
	bool d = f->kind == FK_CLIENT_FD || f->kind == FK_DELEGATE;
	int n = 0;

	if (f->kind == FK_DAEMON) {
		parts[n++] = (struct fz_part){ AXON_OFF_INFO, INFO_LEN, false };
		return n;
	}
	if (!f->have_params)
		return 0;
	parts[n++] = (struct fz_part){ AXON_OFF_CLIENT_PAGE,
				       p->off_daemon - p->off_client, d };
	parts[n++] = (struct fz_part){ AXON_OFF_DAEMON_PAGE,
				       p->off_frontier - p->off_daemon, !d };
	parts[n++] = (struct fz_part){ AXON_OFF_FRONTIER,
				       p->off_sqes - p->off_frontier, !d };
	parts[n++] = (struct fz_part){ AXON_OFF_SQES,
				       p->off_cqes - p->off_sqes, d };
	parts[n++] = (struct fz_part){ AXON_OFF_CQES,
				       p->off_data - p->off_cqes, !d };
	parts[n++] = (struct fz_part){ AXON_OFF_DATA, p->data_size, false };
	if (!d)
		parts[n++] = (struct fz_part){ AXON_OFF_INFO, INFO_LEN, true };
	return n;
}

static void op_mmap(struct fz_thread *t)
{
	static const int extra[] = {
		MAP_POPULATE, MAP_LOCKED, MAP_NORESERVE, MAP_GROWSDOWN,
		MAP_32BIT, MAP_SYNC, MAP_HUGETLB, MAP_NONBLOCK, MAP_STACK,
		MAP_DENYWRITE, MAP_EXECUTABLE,
	};
	struct fz_part parts[8], *part = NULL;
	struct fz_proc *p = t->p;
	uint64_t off, len;
	int prot, flags, n, i;
	unsigned char *hint = NULL, *a;
	struct fz_fd f;
	bool fixed = false;

	if (!fz_fd_pick(t, &f, NULL))
		return;
	n = fz_parts(&f, parts);
	if (n && chance(&t->r, 75)) {
		part = &parts[below(&t->r, n)];
		off = part->off;
		len = part->len;
		if (chance(&t->r, 30) && len > PG) {
			uint64_t skip = below(&t->r, len / PG) * PG;

			off += skip;
			len = PG * (1 + below(&t->r, (len - skip) / PG));
		}
		if (chance(&t->r, 15))	/* one page too many */
			len += PG;
	} else {
		off = chance(&t->r, 70) ? fz_val(&t->r) & ~(PG - 1) : fz_val(&t->r);
		len = chance(&t->r, 70) ? PG * (1 + below(&t->r, 8)) : fz_val(&t->r);
	}
	prot = below(&t->r, 8);	/* R W X in any combination, or none */
	if (chance(&t->r, 60))
		prot &= ~PROT_EXEC;
	switch (below(&t->r, 10)) {
	case 0: case 1:
		flags = MAP_PRIVATE;
		break;
	case 2:
		flags = MAP_SHARED_VALIDATE;
		break;
	default:
		flags = MAP_SHARED;
	}
	if (chance(&t->r, 15))
		flags |= extra[below(&t->r, sizeof(extra) / sizeof(extra[0]))];
	if (chance(&t->r, 20) && len <= FZ_SCRATCH / 4) {
		/* the kernel rounds len up: so must the room kept for it */
		hint = p->scratch + PG * below(&t->r, (FZ_SCRATCH - PG_UP(len)) / PG);
		flags |= chance(&t->r, 50) ? MAP_FIXED : MAP_FIXED_NOREPLACE;
		fixed = true;
	}

	if (fixed)
		pthread_mutex_lock(&p->lock);
	a = mmap(hint, len, prot, flags, f.fd, off);
	if (a == MAP_FAILED) {
		fz_errno(t, "mmap", errno, FZ_MAX_ERRNO);
		if (fixed && (flags & MAP_FIXED)) {
			/*
			 * A MAP_FIXED that fails has unmapped the range
			 * already: reserve it again before anything else
			 * lands in it.
			 */
			fz_map_forget_range(p, hint, PG_UP(len));
			fz_unmap_range(p, hint, PG_UP(len));
		}
		if (fixed)
			pthread_mutex_unlock(&p->lock);
		return;
	}
	len = PG_UP(len);
	if (!fixed)
		pthread_mutex_lock(&p->lock);
	else
		fz_map_forget_range(p, a, len);
	/* What the kernel must have refused. */
	if (!(flags & MAP_SHARED) && (flags & MAP_PRIVATE))
		fz_fail(t, "MAP_PRIVATE mapping of offset %#llx allowed",
			(unsigned long long)off);
	if (prot & PROT_EXEC)
		fz_fail(t, "executable mapping of offset %#llx allowed",
			(unsigned long long)off);
	for (i = 0; i < n; i++) {
		if (off < parts[i].off || off >= parts[i].off + parts[i].len)
			continue;
		part = &parts[i];
		if (off + len > part->off + part->len)
			fz_fail(t, "mapping of %#llx bytes at %#llx passes the part's end %#llx",
				(unsigned long long)len, (unsigned long long)off,
				(unsigned long long)(part->off + part->len));
		if (part->ro && (prot & PROT_WRITE))
			fz_fail(t, "writable mapping of read-only part %#llx allowed",
				(unsigned long long)part->off);
		break;
	}
	if (i == n) {
		part = NULL;
		if (n)
			fz_fail(t, "mapping at offset %#llx, outside every part, allowed",
				(unsigned long long)off);
	}
	for (i = 0; i < FZ_MAPS; i++)
		if (!p->maps[i].addr)
			break;
	if (i == FZ_MAPS) {
		pthread_mutex_unlock(&p->lock);
		fz_unmap_range(p, a, len);
		return;
	}
	p->maps[i] = (struct fz_map){
		.addr = a, .len = len, .prot = prot,
		/* an unknown part (or a daemon's info page): prot alone */
		.ro_part = part ? part->ro : false,
		.scratch = a >= p->scratch && a < p->scratch + FZ_SCRATCH,
		.kind = f.kind,
	};
	pthread_mutex_unlock(&p->lock);
}

/* Reads or writes one byte; returns the signal it raised, or 0. */
static int fz_poke(unsigned char *addr, bool write, unsigned char v)
{
	int sig;

	fz_armed = 1;
	sig = sigsetjmp(fz_jmp, 1);
	if (sig == 0) {
		if (write)
			*(volatile unsigned char *)addr = v;
		else
			(void)*(volatile unsigned char *)addr;
	}
	fz_armed = 0;
	return sig;
}

static void op_touch(struct fz_thread *t)
{
	struct fz_proc *p = t->p;
	struct fz_map *m;
	bool write = chance(&t->r, 50);
	unsigned char *a;

	pthread_mutex_lock(&p->lock);
	m = fz_map_pick(t);
	if (m) {
		a = m->addr + below(&t->r, m->len);
		if (!fz_poke(a, write, rnd(&t->r)) && write &&
		    (m->ro_part || !(m->prot & PROT_WRITE)))
			fz_fail(t, "a write to a read-only %s mapping went through",
				m->kind == FK_CLIENT ? "client" : "daemon");
	}
	pthread_mutex_unlock(&p->lock);
}

static void op_mprotect(struct fz_thread *t)
{
	struct fz_proc *p = t->p;
	struct fz_map *m;
	size_t skip, len;
	int prot = below(&t->r, 8);

	pthread_mutex_lock(&p->lock);
	m = fz_map_pick(t);
	if (m) {
		skip = chance(&t->r, 30) ? PG * below(&t->r, m->len / PG) : 0;
		len = m->len - skip;
		if (chance(&t->r, 30))
			len = PG * (1 + below(&t->r, len / PG));
		if (!mprotect(m->addr + skip, len, prot)) {
			if (prot & PROT_EXEC)
				fz_fail(t, "mprotect(PROT_EXEC) of an axon mapping allowed");
			if ((prot & PROT_WRITE) && m->ro_part)
				fz_fail(t, "mprotect(PROT_WRITE) of a read-only part allowed");
			m->prot |= prot;
		} else {
			fz_errno(t, "mprotect", errno, FZ_MAX_ERRNO);
		}
	}
	pthread_mutex_unlock(&p->lock);
}

static void op_madvise(struct fz_thread *t)
{
	/* Not MADV_HWPOISON / SOFT_OFFLINE: they poison real pages. */
	static const int advice[] = {
		MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED,
		MADV_DONTNEED, MADV_FREE, MADV_REMOVE, MADV_DONTFORK,
		MADV_DOFORK, MADV_DOFORK, MADV_DOFORK, MADV_MERGEABLE,
		MADV_UNMERGEABLE, MADV_HUGEPAGE, MADV_NOHUGEPAGE,
		MADV_DONTDUMP, MADV_DODUMP, MADV_WIPEONFORK, MADV_KEEPONFORK,
		MADV_COLD, MADV_PAGEOUT, MADV_POPULATE_READ,
		MADV_POPULATE_WRITE,
	};
	struct fz_proc *p = t->p;
	struct fz_map *m;
	size_t skip, len;
	int adv;

	adv = advice[below(&t->r, sizeof(advice) / sizeof(advice[0]))];
	pthread_mutex_lock(&p->lock);
	m = fz_map_pick(t);
	if (m) {
		skip = chance(&t->r, 30) ? PG * below(&t->r, m->len / PG) : 0;
		len = chance(&t->r, 30) ? PG : m->len - skip;
		if (madvise(m->addr + skip, len, adv))
			fz_errno(t, "madvise", errno, FZ_MAX_ERRNO);
	}
	pthread_mutex_unlock(&p->lock);
}

static void op_mremap(struct fz_thread *t)
{
	struct fz_proc *p = t->p;
	struct fz_map *m;
	unsigned char *a, *to;
	size_t len;

	pthread_mutex_lock(&p->lock);
	m = fz_map_pick(t);
	if (!m)
		goto out;
	switch (below(&t->r, 5)) {
	case 0:	/* grow: never */
	case 1:
		len = m->len + PG * (1 + below(&t->r, 4));
		a = mremap(m->addr, m->len, len,
			   chance(&t->r, 50) ? MREMAP_MAYMOVE : 0);
		if (a != MAP_FAILED) {
			fz_fail(t, "mremap grew an axon mapping from %zu to %zu",
				m->len, len);
			if (m->scratch && a != m->addr)
				fz_unmap_range(p, m->addr, m->len);
			m->addr = a;
			m->len = len;
			m->scratch = false;
		}
		break;
	case 2:	/* shrink */
		if (m->len < 2 * PG)
			break;
		len = PG * (1 + below(&t->r, m->len / PG - 1));
		if (mremap(m->addr, m->len, len, 0) != MAP_FAILED) {
			if (m->scratch)
				fz_unmap_range(p, m->addr + len, m->len - len);
			m->len = len;
		}
		break;
	case 3:	/* move into the scratch area */
		if (m->len > FZ_SCRATCH / 4)
			break;
		to = p->scratch + PG * below(&t->r, (FZ_SCRATCH - m->len) / PG);
		if (to < m->addr + m->len && m->addr < to + m->len)
			break;
		a = mremap(m->addr, m->len, m->len,
			   MREMAP_MAYMOVE | MREMAP_FIXED, to);
		if (a == MAP_FAILED) {
			/* the target may be unmapped already: reserve it */
			fz_map_forget_range(p, to, m->len);
			fz_unmap_range(p, to, m->len);
		} else {
			unsigned char *old = m->addr;
			size_t olen = m->len;
			struct fz_map moved = *m;

			m->addr = NULL;
			fz_map_forget_range(p, a, olen);
			if (moved.scratch)
				fz_unmap_range(p, old, olen);
			moved.addr = a;
			moved.scratch = true;
			*m = moved;
		}
		break;
	default:	/* DONTUNMAP: refused for VM_DONTEXPAND */
		a = mremap(m->addr, m->len, m->len,
			   MREMAP_MAYMOVE | MREMAP_DONTUNMAP);
		if (a != MAP_FAILED) {
			fz_fail(t, "mremap(MREMAP_DONTUNMAP) of an axon mapping allowed");
			fz_unmap_range(p, a, m->len);
		}
	}
out:
	pthread_mutex_unlock(&p->lock);
}

static void op_munmap(struct fz_thread *t)
{
	struct fz_proc *p = t->p;
	struct fz_map *m;
	size_t cut;

	pthread_mutex_lock(&p->lock);
	m = fz_map_pick(t);
	if (m) {
		if (m->len >= 2 * PG && chance(&t->r, 40)) {
			cut = PG * (1 + below(&t->r, m->len / PG - 1));
			if (chance(&t->r, 50)) {	/* the head */
				fz_unmap_range(p, m->addr, cut);
				m->addr += cut;
			} else {			/* the tail */
				fz_unmap_range(p, m->addr + m->len - cut, cut);
			}
			m->len -= cut;
		} else {
			fz_unmap_range(p, m->addr, m->len);
			m->addr = NULL;
		}
	}
	pthread_mutex_unlock(&p->lock);
}

static void op_close(struct fz_thread *t)
{
	struct fz_fd f;
	int slot;

	if (!fz_fd_pick(t, &f, &slot))
		return;
	pthread_mutex_lock(&t->p->lock);
	if (t->p->fds[slot].fd != f.fd) {
		pthread_mutex_unlock(&t->p->lock);
		return;
	}
	t->p->fds[slot].fd = -1;
	pthread_mutex_unlock(&t->p->lock);
	if (f.kind == FK_DAEMON)
		t->p->dfd = -1;
	close(f.fd);
}

static void op_dup(struct fz_thread *t)
{
	struct fz_fd f;
	int fd;

	if (fz_fd_count(t->p) >= FZ_FDS - 2 || !fz_fd_pick(t, &f, NULL))
		return;
	fd = fcntl(f.fd, F_DUPFD_CLOEXEC, 3);
	if (fd >= 0)
		fz_fd_add(t->p, fd, f.kind, f.have_params ? &f.p : NULL);
}

/*
 * The child gets the mappings madvise(MADV_DOFORK) made inheritable and
 * the fds; it must not be able to use its parent's client fds.
 */
static void fz_child(struct fz_thread *t, const struct fz_fd *fds,
		     const struct fz_map *maps)
{
	struct axon_enter e = { .timeout_ns = 1 };
	struct axon_params q = { .sq_entries = 8 };
	int i, bad = 0;
	void *a;

	for (i = 0; i < FZ_MAPS; i++)
		if (maps[i].addr)
			fz_poke(maps[i].addr + below(&t->r, maps[i].len),
				chance(&t->r, 30) && !maps[i].ro_part, 0x5a);
	for (i = 0; i < FZ_FDS; i++) {
		if (fds[i].fd < 0 || fds[i].kind != FK_CLIENT)
			continue;
		if (ioctl(fds[i].fd, AXON_IOC_ENTER, &e) >= 0 ||
		    ioctl(fds[i].fd, AXON_IOC_SETUP, &q) >= 0)
			bad |= 1;
		a = mmap(NULL, PG, PROT_READ, MAP_SHARED, fds[i].fd,
			 chance(&t->r, 50) ? AXON_OFF_DATA : AXON_OFF_CLIENT_PAGE);
		if (a != MAP_FAILED)
			bad |= 2;
		if (chance(&t->r, 30))
			close(fds[i].fd);
	}
	if (chance(&t->r, 20))
		usleep(below(&t->r, 20000));	/* killed meanwhile, maybe */
	_exit(bad ? 10 + bad : 0);
}

static void op_fork(struct fz_thread *t)
{
	struct fz_fd fds[FZ_FDS];
	struct fz_map maps[FZ_MAPS];
	struct fz_proc *p = t->p;
	uint64_t end;
	pid_t pid;
	int st;

	pthread_mutex_lock(&p->lock);
	memcpy(fds, p->fds, sizeof(fds));
	memcpy(maps, p->maps, sizeof(maps));
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fz_child(t, fds, maps);
	}
	pthread_mutex_unlock(&p->lock);
	if (pid < 0)
		return;
	end = now_ns() + (chance(&t->r, 70) ? 500 : below(&t->r, 10)) * 1000000ULL;
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now_ns() > end) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return;
		}
		usleep(500);
	}
	if (WIFEXITED(st) && WEXITSTATUS(st))
		fz_fail(t, "a forked child used its parent's client fd (%s)",
			WEXITSTATUS(st) & 2 ? "mmap" : "SETUP/ENTER");
	else if (WIFSIGNALED(st))
		fz_fail(t, "a forked child died of signal %d", WTERMSIG(st));
}

/*
 * Well-formed use with hostile ring contents: a thread's own client, set
 * up and mapped, submits garbage SQEs, writes random indices into its
 * own pages and waits.
 */
static void op_traffic(struct fz_thread *t)
{
	struct axon_params q;
	struct tclient c;
	struct axon_cqe cqe;
	const char *bad;
	int i, n, ret;

	if (tclient_open(&c))
		return;
	/* this fd is the thread's own: its geometry must be what it asked */
	fz_setup_req(t, &q);
	c.p = q;
	if (ioctl(c.fd, AXON_IOC_SETUP, &c.p) < 0) {
		fz_errno(t, "SETUP", errno, FZ_USER_ERRNO);
		tclient_close(&c);
		return;
	}
	bad = fz_geo_bad(&q, &c.p);
	if (bad)
		fz_fail(t, "SETUP(sq %u cq %u data %#llx) gave bad %s: sq %u cq %u data %#llx region %#llx",
			q.sq_entries, q.cq_entries, (unsigned long long)q.data_size,
			bad, c.p.sq_entries, c.p.cq_entries,
			(unsigned long long)c.p.data_size,
			(unsigned long long)c.p.region_size);
	if (bad || tclient_map(&c)) {
		tclient_close(&c);
		return;
	}
	fz_id_add(c.p.client_id);
	n = 1 + below(&t->r, 2 * c.p.sq_entries);
	for (i = 0; i < n; i++) {
		if (tclient_queue(&c, i, rnd(&t->r), below(&t->r, 2 * c.p.data_size),
				  below(&t->r, 2 * PG)))
			break;
		if (chance(&t->r, 20)) {	/* a garbage SQE */
			struct axon_sqe *sqe =
				&c.sqes[(c.sq_tail - 1) & (c.p.sq_entries - 1)];

			memset(sqe, 0, sizeof(*sqe));
			sqe->opcode = rnd(&t->r);
			sqe->flags = rnd(&t->r);
			sqe->resv0 = chance(&t->r, 50) ? rnd(&t->r) : 0;
			sqe->obj.data_off = fz_val(&t->r);
			sqe->obj.data_len = fz_val(&t->r);
		}
	}
	if (chance(&t->r, 10))
		c.sq_tail += fz_val(&t->r);	/* lie about the tail */
	if (chance(&t->r, 10))
		c.cp->cq_head = fz_val(&t->r);
	if (chance(&t->r, 10))
		c.cp->cq_flags = fz_val(&t->r);
	ret = tclient_submit(&c, i);
	while (!ret && i-- > 0)
		ret = tclient_wait_cqe(&c, &cqe, 2 + below(&t->r, 20));
	if (ret < 0 && -ret > FZ_USER_ERRNO)
		fz_fail(t, "traffic: errno %d", -ret);
	if (chance(&t->r, 20)) {	/* the mappings keep it alive */
		close(c.fd);
		c.fd = -1;
	}
	tclient_close(&c);
}

/* ---- daemon operations ------------------------------------------------- */

static void fz_ev_check(struct fz_thread *t, const struct axon_event *ev)
{
	if (!ev->client_id || !ev->events || (ev->events & ~AXON_EV_ALL) ||
	    ev->state >= AXON_KSTATE_LAST || ev->resv0 ||
	    !memchr(ev->comm, 0, sizeof(ev->comm)))
		fz_fail(t, "bad event record: id %llu events %#x state %u",
			(unsigned long long)ev->client_id, ev->events, ev->state);
	fz_id_add(ev->client_id);
}

/* Handles one record as a daemon must (map, accept or refuse, forget). */
static void fz_ev_handle(struct fz_thread *t, const struct axon_event *ev)
{
	struct fz_proc *p = t->p;
	struct tdclient *c;

	pthread_mutex_lock(&p->td_lock);
	p->td->fd = p->dfd;
	if (ev->events & AXON_EV_GONE) {
		tdaemon_forget(p->td, ev->client_id);
	} else if ((ev->events & (AXON_EV_OPEN | AXON_EV_EXISTING)) &&
		   !tdaemon_find(p->td, ev->client_id)) {
		c = tdaemon_map(p->td, ev->client_id);
		if (c && chance(&t->r, 5)) {
			struct axon_disconnect dc = {
				.client_id = ev->client_id,
				.error = -(1 + (int)below(&t->r, FZ_USER_ERRNO)),
			};

			ioctl(p->dfd, AXON_IOC_DISCONNECT, &dc);
		} else if (c) {
			tdaemon_accept(p->td, ev->client_id);
			if (chance(&t->r, 30))
				tdaemon_charge(p->td, ev->client_id,
					       PG * (1 + below(&t->r, 1000)), true);
		} else if (errno != ENOENT) {
			struct axon_disconnect dc = {
				.client_id = ev->client_id, .error = -ENOSPC,
			};

			ioctl(p->dfd, AXON_IOC_DISCONNECT, &dc);
		}
	}
	c = tdaemon_find(p->td, ev->client_id);
	if (c)
		tdaemon_serve(p->td, c);
	pthread_mutex_unlock(&p->td_lock);
}

/* The daemon's server thread: what a daemon must do, interleaved. */
static void fz_serve(struct fz_thread *t)
{
	struct fz_proc *p = t->p;
	struct axon_event ev[4];
	struct pollfd pfd = { .fd = p->dfd, .events = POLLIN };
	ssize_t n;
	int i;

	if (p->dfd < 0)
		return;
	if (poll(&pfd, 1, 5) > 0) {
		n = read(p->dfd, ev, sizeof(ev));
		for (i = 0; n > 0 && i < n / (ssize_t)sizeof(ev[0]); i++) {
			fz_ev_check(t, &ev[i]);
			fz_ev_handle(t, &ev[i]);
		}
	}
	pthread_mutex_lock(&p->td_lock);
	for (i = 0; i < TD_MAX_CLIENTS; i++)
		if (p->td->c[i].fd > 0)
			tdaemon_serve(p->td, &p->td->c[i]);
	pthread_mutex_unlock(&p->td_lock);
}

static void op_d_accept(struct fz_thread *t)
{
	struct axon_accept a = {
		.client_id = fz_id(&t->r),
		.features = chance(&t->r, 80) ? below(&t->r, 1U << AXON_FEAT_LAST) :
						fz_val(&t->r),
		.va_base = fz_val(&t->r),
		.va_size = fz_val(&t->r),
		.mint_credit = fz_val(&t->r),
	}, *buf = (void *)t->buf;
	int fd;

	if (chance(&t->r, 10))
		a.resv0 = fz_val(&t->r);
	if (chance(&t->r, 10))
		a.resv[below(&t->r, 3)] = fz_val(&t->r);
	fd = fz_acting_fd(t, &a.client_id);
	*buf = a;
	fz_ioctl(t, fd, AXON_IOC_ACCEPT,
		 (unsigned long)fz_ptr(t, buf, sizeof(a)), FZ_MAX_ERRNO, NULL);
}

static void op_d_disconnect(struct fz_thread *t)
{
	static const int errs[] = {
		-1, -4095, -4096, 0, 1, INT_MIN, INT_MAX, -511, -512, -513,
		-514, -515, -516, -517, -530, -1000, -ECONNRESET, -EIO,
	};
	struct axon_disconnect d = {
		.client_id = fz_id(&t->r),
	}, *buf = (void *)t->buf;
	int fd;

	d.error = chance(&t->r, 60) ? errs[below(&t->r, sizeof(errs) / sizeof(errs[0]))] :
				      -(int)below(&t->r, 5000);
	if (chance(&t->r, 10))
		d.resv = fz_val(&t->r);
	fd = fz_acting_fd(t, &d.client_id);
	*buf = d;
	fz_ioctl(t, fd, AXON_IOC_DISCONNECT,
		 (unsigned long)fz_ptr(t, buf, sizeof(d)), FZ_MAX_ERRNO, NULL);
}

static void op_d_charge(struct fz_thread *t)
{
	struct axon_charge c = {
		.client_id = fz_id(&t->r),
		.bytes = chance(&t->r, 50) ? PG * below(&t->r, 1 << 20) : fz_val(&t->r),
		.kind = chance(&t->r, 90) ? AXON_CHARGE_DEVICE_MEM : fz_val(&t->r),
	}, *buf = (void *)t->buf;
	int fd;

	if (chance(&t->r, 10))
		c.resv = fz_val(&t->r);
	fd = fz_acting_fd(t, &c.client_id);
	*buf = c;
	fz_ioctl(t, fd, chance(&t->r, 60) ? AXON_IOC_CHARGE : AXON_IOC_UNCHARGE,
		 (unsigned long)fz_ptr(t, buf, sizeof(c)), FZ_MAX_ERRNO, NULL);
}

static bool fz_is_delegate(int fd)
{
	char path[64], link[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return false;
	link[n] = 0;
	return strstr(link, "[axon-delegate]") != NULL;
}

static void op_d_client_fd(struct fz_thread *t)
{
	struct axon_client_fd a = { .client_id = fz_id(&t->r) }, *buf = (void *)t->buf;
	struct axon_params *params = (void *)(t->buf + 1024), *parg;
	struct axon_client_fd *arg;
	bool delegate;
	int slot;
	long ret;

	if (fz_fd_count(t->p) >= FZ_FDS - 2)
		return;
	if (chance(&t->r, 25))
		a.flags = AXON_CLIENT_FD_DELEGATE;
	else if (chance(&t->r, 10))
		a.flags = fz_val(&t->r);
	if (chance(&t->r, 10))
		a.fd = fz_val(&t->r);
	if (chance(&t->r, 10))
		a.resv = fz_val(&t->r);
	parg = chance(&t->r, 20) ? NULL : fz_ptr(t, params, sizeof(*params));
	a.params = (uintptr_t)parg;
	*buf = a;
	arg = fz_ptr(t, buf, sizeof(a));
	ret = fz_ioctl(t, t->p->dfd, AXON_IOC_CLIENT_FD, (unsigned long)arg,
		       FZ_MAX_ERRNO, NULL);
	if (ret < 0)
		return;
	/* success: the kernel could write the struct where it was */
	if (arg->fd < 0) {
		fz_fail(t, "CLIENT_FD returned fd %d", arg->fd);
		return;
	}
	/* the kernel says which it made (arg may be shared memory) */
	delegate = fz_is_delegate(arg->fd);
	slot = fz_fd_add(t->p, arg->fd, delegate ? FK_DELEGATE : FK_CLIENT_FD,
			 parg == params ? params : NULL);
	if (delegate && slot >= 0) {
		pthread_mutex_lock(&t->p->lock);
		t->p->fds[slot].id = arg->client_id;
		pthread_mutex_unlock(&t->p->lock);
	}
}

static void op_d_notify(struct fz_thread *t)
{
	__u64 *ids = (void *)(t->buf + 1024);
	struct axon_notify a = { 0 }, *buf = (void *)t->buf;
	unsigned int i, max = (FZ_BUF - 1024) / 8;
	long ret;

	a.count = chance(&t->r, 70) ? below(&t->r, 40) : fz_val(&t->r);
	for (i = 0; i < max && i < a.count; i++)
		ids[i] = fz_id(&t->r);
	/* a count beyond the buffer makes the kernel read past it */
	a.ids = (uintptr_t)fz_ptr(t, ids, 8 * (a.count < max ? a.count : max));
	if (chance(&t->r, 10))
		a.flags = fz_val(&t->r);
	if (chance(&t->r, 10))
		a.resv[below(&t->r, 2)] = fz_val(&t->r);
	*buf = a;
	ret = fz_ioctl(t, fz_acting_fd(t, &ids[0]), AXON_IOC_NOTIFY,
		       (unsigned long)fz_ptr(t, buf, sizeof(a)), FZ_MAX_ERRNO, NULL);
	if (ret > (long)a.count)
		fz_fail(t, "NOTIFY of %u ids woke %ld", a.count, ret);
}

static void op_d_read(struct fz_thread *t)
{
	struct axon_event *ev = (void *)t->buf;
	size_t count;
	void *arg;
	ssize_t n;
	int i;

	switch (below(&t->r, 4)) {
	case 0:
		count = fz_val(&t->r);
		break;
	case 1:
		count = sizeof(*ev) * below(&t->r, 10) + below(&t->r, 2) - 1;
		break;
	default:
		count = sizeof(*ev) * (1 + below(&t->r, 8));
	}
	if (chance(&t->r, 20))
		fcntl(t->p->dfd, F_SETFL, chance(&t->r, 80) ? O_NONBLOCK : 0);
	/* at most 8 records are ever written: 512 bytes */
	arg = fz_ptr(t, ev, 512);
	n = read(t->p->dfd, arg, count);
	if (n < 0) {
		fz_errno(t, "read", errno, FZ_MAX_ERRNO);
		return;
	}
	if (n % sizeof(*ev) || (size_t)n > count || n > 8 * (ssize_t)sizeof(*ev))
		fz_fail(t, "read of %zu bytes returned %zd", count, n);
	if (arg != ev)
		return;
	for (i = 0; i < n / (ssize_t)sizeof(*ev); i++) {
		fz_ev_check(t, &ev[i]);
		fz_ev_handle(t, &ev[i]);
	}
}

/* What a daemon fd must refuse, and its own info page. */
static void op_d_wrong(struct fz_thread *t)
{
	struct axon_params q = { .sq_entries = 8 };
	struct axon_enter e = { 0 };
	unsigned char *a;
	int err;

	switch (below(&t->r, 4)) {
	case 0:
		if (fz_ioctl(t, t->p->dfd, AXON_IOC_SETUP, (unsigned long)&q,
			     FZ_MAX_ERRNO, &err) >= 0 || (err != EINVAL && err != EBADF))
			fz_fail(t, "SETUP on the daemon fd: %s", strerror(err));
		break;
	case 1:
		if (fz_ioctl(t, t->p->dfd, AXON_IOC_ENTER, (unsigned long)&e,
			     FZ_MAX_ERRNO, &err) >= 0 || (err != EINVAL && err != EBADF))
			fz_fail(t, "ENTER on the daemon fd: %s", strerror(err));
		break;
	case 2:
		if (fz_ioctl(t, t->p->dfd, AXON_IOC_ATTACH, 0, FZ_MAX_ERRNO, &err) >= 0)
			fz_fail(t, "a second ATTACH succeeded");
		break;
	default:
		a = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_SHARED, t->p->dfd,
			 AXON_OFF_INFO);
		if (a != MAP_FAILED) {
			fz_poke(a + below(&t->r, PG), true, 0);
			munmap(a, PG);
		}
	}
}

/* A forked child of the daemon holds the daemon fd: it can use it. */
static void op_d_fork(struct fz_thread *t)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct axon_notify a = { .count = 0 };
		uint64_t id = fz_id(&t->r);
		struct axon_charge c = { .client_id = id, .bytes = PG };

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		ioctl(t->p->dfd, AXON_IOC_NOTIFY, &a);
		ioctl(t->p->dfd, AXON_IOC_CHARGE, &c);
		ioctl(t->p->dfd, AXON_IOC_UNCHARGE, &c);
		if (chance(&t->r, 50))
			close(t->p->dfd);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* ---- netlink and /proc ------------------------------------------------- */

static size_t nl_put(unsigned char *at, size_t room, uint16_t type,
		     const void *data, size_t len)
{
	struct nlattr *a = (void *)at;
	size_t total = NLA_ALIGN(NLA_HDRLEN + len);

	if (total > room)
		return 0;
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy(at + NLA_HDRLEN, data, len);
	memset(at + NLA_HDRLEN + len, 0, total - NLA_HDRLEN - len);
	return total;
}

/* Drains replies for a while; judges the error codes in them. */
static void nl_drain(struct fz_thread *t, int ms)
{
	struct pollfd pfd = { .fd = t->nl, .events = POLLIN };
	unsigned char *buf = t->buf;
	ssize_t n;

	while (poll(&pfd, 1, ms) > 0) {
		struct nlmsghdr *h;

		n = recv(t->nl, buf, FZ_BUF, MSG_DONTWAIT);
		if (n <= 0)
			break;
		for (h = (void *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_ERROR &&
			    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct nlmsgerr))) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				/* axon's answers only: not nlctrl's */
				if (e->msg.nlmsg_type == t->p->nl_family &&
				    (e->error > 0 || -e->error > FZ_MAX_ERRNO))
					fz_fail(t, "netlink error %d", e->error);
			}
		}
		ms = 0;
	}
}

/* Resolves the family and the events group by name (raw, no libnl). */
static int nl_resolve(struct fz_thread *t)
{
	struct fz_nlmsg m = { 0 };
	unsigned char *buf = t->buf;
	struct nlmsghdr *h;
	ssize_t n;
	size_t len;

	m.n.nlmsg_type = GENL_ID_CTRL;
	m.n.nlmsg_flags = NLM_F_REQUEST;
	m.g.cmd = CTRL_CMD_GETFAMILY;
	m.g.version = 1;
	len = nl_put(m.attrs, sizeof(m.attrs), CTRL_ATTR_FAMILY_NAME,
		     AXON_GENL_NAME, sizeof(AXON_GENL_NAME));
	m.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN + len);
	if (send(t->nl, &m, m.n.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(t->nl, buf, FZ_BUF, 0);
	if (n < 0)
		return -errno;
	for (h = (void *)buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
		unsigned char *a = (unsigned char *)NLMSG_DATA(h) + GENL_HDRLEN;
		unsigned char *end = (unsigned char *)h + h->nlmsg_len;

		if (h->nlmsg_type != GENL_ID_CTRL)
			continue;
		while (a + NLA_HDRLEN <= end) {
			struct nlattr *at = (void *)a;

			if (at->nla_len < NLA_HDRLEN || a + at->nla_len > end)
				break;
			if ((at->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID)
				memcpy(&t->p->nl_family, a + NLA_HDRLEN, 2);
			if ((at->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_MCAST_GROUPS) {
				/* one nest per group: { NAME, ID } */
				unsigned char *g = a + NLA_HDRLEN, *gend = a + at->nla_len;

				while (g + NLA_HDRLEN <= gend) {
					struct nlattr *ga = (void *)g;
					unsigned char *x = g + NLA_HDRLEN;

					if (ga->nla_len < NLA_HDRLEN)
						break;
					while (x + NLA_HDRLEN <= g + ga->nla_len) {
						struct nlattr *xa = (void *)x;

						if (xa->nla_len < NLA_HDRLEN)
							break;
						if (xa->nla_type == CTRL_ATTR_MCAST_GRP_ID)
							memcpy(&t->p->nl_group, x + NLA_HDRLEN, 4);
						x += NLA_ALIGN(xa->nla_len);
					}
					g += NLA_ALIGN(ga->nla_len);
				}
			}
			a += NLA_ALIGN(at->nla_len);
		}
	}
	return t->p->nl_family ? 0 : -ENOENT;
}

static const char *const fz_paths[] = {
	"/", "/axfuzz", "/axfuzz/a", "/axfuzz/b", "", "//", "/../", "axfuzz",
	"/axfuzz/a/../b", "/nonexistent", "/axfuzz/a\n", ".",
};

/* One attribute, well typed or not. */
static size_t nl_attr(struct fz_thread *t, unsigned char *at, size_t room,
		      uint16_t type)
{
	unsigned char junk[64];
	uint64_t v64;
	uint32_t v32;
	size_t i, len;

	if (chance(&t->r, 10))
		type |= chance(&t->r, 50) ? NLA_F_NESTED : NLA_F_NET_BYTEORDER;
	switch (chance(&t->r, 75) ? type & NLA_TYPE_MASK : 0) {
	case AXON_A_CLIENT_ID:
		v64 = fz_id(&t->r);
		return nl_put(at, room, type, &v64, 8);
	case AXON_A_CGROUP_ID:
		v64 = chance(&t->r, 50) ? 1 + below(&t->r, 4000) : fz_val(&t->r);
		return nl_put(at, room, type, &v64, 8);
	case AXON_A_LIMIT:
		v64 = chance(&t->r, 30) ? AXON_LIMIT_NONE : fz_val(&t->r);
		return nl_put(at, room, type, &v64, 8);
	case AXON_A_KIND:
		v32 = chance(&t->r, 70) ? 0 : fz_val(&t->r);
		return nl_put(at, room, type, &v32, 4);
	case AXON_A_CGROUP_PATH:
		if (chance(&t->r, 80)) {
			const char *s = fz_paths[below(&t->r, sizeof(fz_paths) /
							       sizeof(fz_paths[0]))];

			return nl_put(at, room, type, s,
				      strlen(s) + (chance(&t->r, 90) ? 1 : 0));
		}
		len = chance(&t->r, 50) ? 4095 + below(&t->r, 3) : below(&t->r, 300);
		if (len > room / 2)
			len = room / 2;
		memset(t->buf, 'a' + below(&t->r, 3), len);
		if (len && chance(&t->r, 70))
			t->buf[len - 1] = 0;
		return nl_put(at, room, type, t->buf, len);
	default:
		len = below(&t->r, sizeof(junk));
		for (i = 0; i < len; i++)
			junk[i] = rnd(&t->r);
		return nl_put(at, room, type, junk, len);
	}
}

static void nl_send(struct fz_thread *t, struct fz_nlmsg *m, size_t attrs)
{
	size_t len = NLMSG_LENGTH(GENL_HDRLEN + attrs);

	m->n.nlmsg_len = len;
	if (chance(&t->r, 5))	/* lie about the length */
		m->n.nlmsg_len = chance(&t->r, 50) ? below(&t->r, len + 1) :
				 len + below(&t->r, 64);
	if (send(t->nl, m, chance(&t->r, 95) ? len : below(&t->r, len + 1), 0) < 0)
		fz_errno(t, "netlink send", errno, FZ_MAX_ERRNO);
	nl_drain(t, chance(&t->r, 50) ? 2 : 0);
}

static void op_nl_random(struct fz_thread *t)
{
	struct fz_nlmsg *m = t->msg;
	size_t off = 0;
	int i, n;

	if (t->nl < 0 || !t->p->nl_family || !m)
		return;
	memset(m, 0, sizeof(m->n) + sizeof(m->g));
	/*
	 * Mostly axon's family; else nlctrl, the netlink control types or
	 * an id nobody has: never another subsystem's family.
	 */
	switch (below(&t->r, 20)) {
	case 0:
		m->n.nlmsg_type = GENL_ID_CTRL;
		break;
	case 1:
		m->n.nlmsg_type = below(&t->r, NLMSG_MIN_TYPE);
		break;
	case 2:
		m->n.nlmsg_type = 0x8000 + below(&t->r, 0x8000);
		break;
	default:
		m->n.nlmsg_type = t->p->nl_family;
	}
	m->n.nlmsg_flags = NLM_F_REQUEST | (chance(&t->r, 50) ? NLM_F_ACK : 0) |
			   (chance(&t->r, 30) ? NLM_F_DUMP : 0) |
			   (chance(&t->r, 5) ? rnd(&t->r) : 0);
	m->n.nlmsg_seq = rnd(&t->r);
	m->g.cmd = chance(&t->r, 85) ? below(&t->r, AXON_CMD_MAX + 2) : fz_val(&t->r);
	m->g.version = chance(&t->r, 90) ? AXON_GENL_VERSION : fz_val(&t->r);
	m->g.reserved = chance(&t->r, 90) ? 0 : fz_val(&t->r);
	n = below(&t->r, 6);
	for (i = 0; i < n; i++)
		off += nl_attr(t, m->attrs + off, sizeof(m->attrs) - off,
			       chance(&t->r, 85) ? below(&t->r, AXON_A_MAX + 2) :
						   fz_val(&t->r));
	nl_send(t, m, off);
}

/* The commands with their own attributes, to get past validation. */
static void op_nl_valid(struct fz_thread *t)
{
	struct fz_nlmsg *m = t->msg;
	size_t off = 0;

	if (t->nl < 0 || !t->p->nl_family || !m)
		return;
	memset(m, 0, sizeof(m->n) + sizeof(m->g));
	m->n.nlmsg_type = t->p->nl_family;
	m->n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	m->g.version = AXON_GENL_VERSION;
	switch (below(&t->r, 6)) {
	case 0:
		m->g.cmd = AXON_CMD_GET_STATS;
		break;
	case 1:
		m->g.cmd = AXON_CMD_GET_CLIENT;
		m->n.nlmsg_flags |= NLM_F_DUMP;
		break;
	case 2:
		m->g.cmd = AXON_CMD_GET_CLIENT;
		off += nl_attr(t, m->attrs, sizeof(m->attrs), AXON_A_CLIENT_ID);
		break;
	case 3:
		m->g.cmd = AXON_CMD_GET_LIMIT;
		m->n.nlmsg_flags |= NLM_F_DUMP;
		break;
	default:
		m->g.cmd = chance(&t->r, 50) ? AXON_CMD_GET_LIMIT : AXON_CMD_SET_LIMIT;
		off += nl_attr(t, m->attrs, sizeof(m->attrs),
			       chance(&t->r, 50) ? AXON_A_CGROUP_PATH : AXON_A_CGROUP_ID);
		if (chance(&t->r, 50))
			off += nl_attr(t, m->attrs + off, sizeof(m->attrs) - off,
				       AXON_A_KIND);
		if (chance(&t->r, 90))
			off += nl_attr(t, m->attrs + off, sizeof(m->attrs) - off,
				       AXON_A_LIMIT);
	}
	nl_send(t, m, off);
}

static void op_nl_mcast(struct fz_thread *t)
{
	uint32_t grp = chance(&t->r, 80) ? t->p->nl_group : fz_val(&t->r);

	if (t->nl < 0)
		return;
	setsockopt(t->nl, SOL_NETLINK,
		   chance(&t->r, 60) ? NETLINK_ADD_MEMBERSHIP : NETLINK_DROP_MEMBERSHIP,
		   &grp, sizeof(grp));
	nl_drain(t, 1);
}

static void op_proc(struct fz_thread *t)
{
	static const char *const files[] = {
		"/proc/axon/stats", "/proc/axon/clients", "/proc/axon/cgroups",
	};
	int fd = open(files[below(&t->r, 3)], O_RDONLY | O_CLOEXEC);
	off_t off;
	size_t len;

	if (fd < 0)
		return;
	off = chance(&t->r, 50) ? 0 : (off_t)(fz_val(&t->r) & LLONG_MAX);
	len = chance(&t->r, 50) ? FZ_BUF : 1 + below(&t->r, 200);
	while (pread(fd, t->buf, len, off) > 0 && chance(&t->r, 80))
		off += len;
	close(fd);
}

/* ---- workers ----------------------------------------------------------- */

struct fz_weight {
	enum fz_op op;
	unsigned int w;
};

static const struct fz_weight fz_mix_client[] = {
	{ OP_OPEN, 8 }, { OP_SETUP, 10 }, { OP_ENTER, 8 }, { OP_POLL, 4 },
	{ OP_EPOLL, 2 }, { OP_RDWR, 2 }, { OP_FDINFO, 2 },
	{ OP_IOCTL_UNKNOWN, 3 }, { OP_IOCTL_ANY, 4 }, { OP_ATTACH, 1 },
	{ OP_MMAP, 14 }, { OP_TOUCH, 8 }, { OP_MPROTECT, 5 },
	{ OP_MADVISE, 5 }, { OP_MREMAP, 4 }, { OP_MUNMAP, 5 }, { OP_FORK, 1 },
	{ OP_CLOSE, 6 }, { OP_DUP, 2 }, { OP_TRAFFIC, 3 }, { OP_PROC, 1 },
};

static const struct fz_weight fz_mix_daemon[] = {
	{ OP_D_ACCEPT, 5 }, { OP_D_DISCONNECT, 2 }, { OP_D_CHARGE, 8 },
	{ OP_D_CLIENT_FD, 6 }, { OP_D_NOTIFY, 5 }, { OP_D_READ, 6 },
	{ OP_D_WRONG, 3 }, { OP_D_FORK, 1 }, { OP_MMAP, 8 }, { OP_TOUCH, 5 },
	{ OP_MPROTECT, 3 }, { OP_MADVISE, 3 }, { OP_MREMAP, 2 },
	{ OP_MUNMAP, 4 }, { OP_RDWR, 1 }, { OP_IOCTL_UNKNOWN, 2 },
	{ OP_IOCTL_ANY, 2 }, { OP_POLL, 2 }, { OP_FDINFO, 1 },
	{ OP_FORK, 1 }, { OP_DUP, 1 },
};

static const struct fz_weight fz_mix_netlink[] = {
	{ OP_NL_RANDOM, 10 }, { OP_NL_VALID, 8 }, { OP_NL_MCAST, 2 },
	{ OP_PROC, 4 },
};

static void (*const fz_ops[OP_NR])(struct fz_thread *t) = {
	[OP_OPEN] = op_open, [OP_SETUP] = op_setup, [OP_ENTER] = op_enter,
	[OP_POLL] = op_poll, [OP_EPOLL] = op_epoll, [OP_RDWR] = op_rdwr,
	[OP_FDINFO] = op_fdinfo, [OP_IOCTL_UNKNOWN] = op_ioctl_unknown,
	[OP_IOCTL_ANY] = op_ioctl_any, [OP_MMAP] = op_mmap,
	[OP_TOUCH] = op_touch, [OP_MPROTECT] = op_mprotect,
	[OP_MADVISE] = op_madvise, [OP_MREMAP] = op_mremap,
	[OP_MUNMAP] = op_munmap, [OP_FORK] = op_fork, [OP_CLOSE] = op_close,
	[OP_DUP] = op_dup, [OP_TRAFFIC] = op_traffic, [OP_ATTACH] = op_attach,
	[OP_D_ACCEPT] = op_d_accept, [OP_D_DISCONNECT] = op_d_disconnect,
	[OP_D_CHARGE] = op_d_charge, [OP_D_CLIENT_FD] = op_d_client_fd,
	[OP_D_NOTIFY] = op_d_notify, [OP_D_READ] = op_d_read,
	[OP_D_WRONG] = op_d_wrong, [OP_D_FORK] = op_d_fork,
	[OP_NL_RANDOM] = op_nl_random, [OP_NL_VALID] = op_nl_valid,
	[OP_NL_MCAST] = op_nl_mcast, [OP_PROC] = op_proc, [OP_SERVE] = fz_serve,
};

static enum fz_op fz_pick_op(struct fz_thread *t, const struct fz_weight *mix,
			     size_t n)
{
	unsigned int total = 0, x;
	size_t i;

	for (i = 0; i < n; i++)
		total += mix[i].w;
	x = below(&t->r, total);
	for (i = 0; i < n; i++) {
		if (x < mix[i].w)
			return mix[i].op;
		x -= mix[i].w;
	}
	return mix[0].op;
}

static uint64_t fz_deadline;

static bool fz_running(struct fz_thread *t)
{
	return !__atomic_load_n(&sh->stop, __ATOMIC_RELAXED) &&
	       now_ns() < fz_deadline && (!fz_max_ops || t->n < fz_max_ops);
}

static void *fz_thread_main(void *arg)
{
	struct fz_thread *t = arg;
	struct fz_proc *p = t->p;
	const struct fz_weight *mix;
	size_t nmix;

	p->tids[t->idx] = syscall(SYS_gettid);
	fz_self = t;
	t->buf = malloc(FZ_BUF);
	t->private_fd = open(AXON_DEV, O_RDWR | O_CLOEXEC);
	t->nl = -1;
	switch (p->worker) {
	case W_DAEMON:
		mix = fz_mix_daemon;
		nmix = sizeof(fz_mix_daemon) / sizeof(fz_mix_daemon[0]);
		break;
	case W_NETLINK:
		mix = fz_mix_netlink;
		nmix = sizeof(fz_mix_netlink) / sizeof(fz_mix_netlink[0]);
		t->nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
		t->msg = malloc(sizeof(*t->msg));
		if (t->nl >= 0 && !p->nl_family)
			nl_resolve(t);
		break;
	default:
		mix = fz_mix_client;
		nmix = sizeof(fz_mix_client) / sizeof(fz_mix_client[0]);
	}
	while (t->buf && fz_running(t)) {
		uint64_t t0 = now_ns();

		if (p->worker == W_DAEMON && p->dfd < 0)
			break;	/* its fd was closed: this daemon ends */
		/* the daemon's first thread does the daemon's job, promptly */
		if (p->worker == W_DAEMON && t->idx == 0)
			t->op = OP_SERVE;
		else
			t->op = fz_pick_op(t, mix, nmix);
		if (fz_verbose)
			fprintf(stderr, "# fz: %s %d.%d #%llu %s\n",
				fz_worker_names[p->worker], p->index, t->idx,
				(unsigned long long)t->n, fz_op_names[t->op]);
		fz_ops[t->op](t);
		__atomic_add_fetch(&sh->ops[t->op], 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&sh->op_ns[t->op], now_ns() - t0, __ATOMIC_RELAXED);
		t->n++;
	}
	if (t->private_fd >= 0)
		close(t->private_fd);
	if (t->nl >= 0)
		close(t->nl);
	free(t->msg);
	free(t->buf);
	return NULL;
}

/* Interrupts random threads: waits end with EINTR, SETUP restarts. */
static void *fz_signaller(void *arg)
{
	struct fz_proc *p = arg;
	struct rng r = { fz_mix(p->seed, 999) };
	pid_t pid = getpid();

	while (!__atomic_load_n(&p->stop_signaller, __ATOMIC_RELAXED)) {
		pid_t tid = p->tids[below(&r, p->nthreads)];

		if (tid)
			syscall(SYS_tgkill, pid, tid, SIGUSR1);
		usleep(1000 + below(&r, 7000));
	}
	return NULL;
}

/* Moves this process into one of the fuzzer's cgroups (or leaves it). */
static void fz_cgroup_join(struct rng *r)
{
	static const char *const cgs[] = {
		FZ_CG "/cgroup.procs", FZ_CG "/a/cgroup.procs",
		FZ_CG "/b/cgroup.procs",
	};
	char pid[16];

	if (chance(r, 25))
		return;
	snprintf(pid, sizeof(pid), "%d", getpid());
	write_file(cgs[below(r, 3)], pid);
}

/* A worker process: threads of one kind sharing fds and mappings. */
static int fz_worker(int worker, int index, uint64_t seed, int nthreads)
{
	struct fz_thread t[FZ_THREADS];
	pthread_t th[FZ_THREADS], sig;
	struct tdaemon td;
	struct fz_proc p;
	struct rng r = { seed };
	int i;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	memset(&p, 0, sizeof(p));
	pthread_mutex_init(&p.lock, NULL);
	pthread_mutex_init(&p.td_lock, NULL);
	for (i = 0; i < FZ_FDS; i++)
		p.fds[i].fd = -1;
	p.worker = worker;
	p.index = index;
	p.seed = seed;
	p.dfd = -1;
	p.nthreads = nthreads;
	fz_signals();
	if (fz_mem_init(&p))
		return 2;
	fz_cgroup_join(&r);

	if (worker == W_NOBODY) {
		if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
			return 3;
	}
	if (worker == W_DAEMON) {
		/* the previous daemon's file may still be in its release */
		for (i = 0; i < 200; i++) {
			int ret = tdaemon_attach(&td);

			if (ret >= 0)
				break;
			if (ret != -EBUSY)
				return 4;
			usleep(5000);
		}
		if (td.fd < 0)
			return 5;
		p.dfd = td.fd;
		p.td = &td;
		fz_fd_add(&p, td.fd, FK_DAEMON, NULL);
	}

	for (i = 0; i < nthreads; i++) {
		memset(&t[i], 0, sizeof(t[i]));
		t[i].p = &p;
		t[i].idx = i;
		t[i].r.s = fz_mix(seed, i + 1);
		pthread_create(&th[i], NULL, fz_thread_main, &t[i]);
	}
	pthread_create(&sig, NULL, fz_signaller, &p);
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	__atomic_store_n(&p.stop_signaller, 1, __ATOMIC_RELAXED);
	pthread_join(sig, NULL);
	return 0;
}

/* ---- the test ---------------------------------------------------------- */

struct fz_spec {
	int procs[W_NR];		/* worker processes of each kind */
	int threads;			/* threads per process */
	bool restart_daemon;		/* kill and restart it at random */
	bool wait_for_daemon;
};

static pid_t fz_spawn(int worker, int index, uint64_t seed, int threads)
{
	pid_t pid = fork();

	if (pid == 0) {
		close_inherited_fds(-1);
		_exit(fz_worker(worker, index, seed, threads));
	}
	return pid;
}

static uint64_t fz_stat(const char *name)
{
	char buf[2048], *s;
	size_t n = strlen(name);

	if (read_file("/proc/axon/stats", buf, sizeof(buf)) < 0)
		return ~0ULL;
	for (s = buf; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : s)
		if (!strncmp(s, name, n) && s[n] == ' ')
			return strtoull(s + n + 1, NULL, 10);
	return ~0ULL;
}

/*
 * Waits for a worker (or judges the status already collected, st >= 0);
 * false if it had to be killed or died badly.
 */
static bool fz_reap(struct __test_metadata *_metadata, pid_t pid, int st,
		    const char *what, int ms)
{
	uint64_t end = now_ns() + ms * 1000000ULL;

	while (st < 0 && waitpid(pid, &st, WNOHANG) == 0) {
		if (now_ns() > end) {
			TH_LOG("%s %d did not end in %d ms: killed (stuck in the kernel?)",
			       what, pid, ms);
			kill(pid, SIGKILL);
			end = now_ns() + 20 * NSEC_PER_SEC;
			while (waitpid(pid, &st, WNOHANG) == 0) {
				if (now_ns() > end) {
					TH_LOG("%s %d unkillable", what, pid);
					return false;
				}
				usleep(10000);
			}
			return false;
		}
		usleep(2000);
	}
	if (WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL) {
		TH_LOG("%s %d died of signal %d", what, pid, WTERMSIG(st));
		return false;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st)) {
		TH_LOG("%s %d exited with %d", what, pid, WEXITSTATUS(st));
		return false;
	}
	return true;
}

/* Removes every limit the netlink fuzzing may have set. */
static void fz_reset_limits(void)
{
	struct fz_thread t = { 0 };
	struct fz_proc p = { 0 };
	struct fz_nlmsg m = { 0 };
	uint64_t ids[256];
	int nids = 0, i;
	struct nlmsghdr *h;
	ssize_t n;
	bool done = false;

	t.p = &p;
	t.buf = malloc(FZ_BUF);
	t.nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (!t.buf || t.nl < 0 || nl_resolve(&t))
		goto out;
	m.n.nlmsg_type = p.nl_family;
	m.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	m.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	m.g.cmd = AXON_CMD_GET_LIMIT;
	m.g.version = AXON_GENL_VERSION;
	if (send(t.nl, &m, m.n.nlmsg_len, 0) < 0)
		goto out;
	while (!done && (n = recv(t.nl, t.buf, FZ_BUF, 0)) > 0) {
		for (h = (void *)t.buf; NLMSG_OK(h, (size_t)n); h = NLMSG_NEXT(h, n)) {
			unsigned char *a = (unsigned char *)NLMSG_DATA(h) + GENL_HDRLEN;
			unsigned char *end = (unsigned char *)h + h->nlmsg_len;

			if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
				done = true;
				break;
			}
			while (a + NLA_HDRLEN <= end && nids < 256) {
				struct nlattr *at = (void *)a;

				if (at->nla_len < NLA_HDRLEN)
					break;
				if (at->nla_type == AXON_A_CGROUP_ID)
					memcpy(&ids[nids++], a + NLA_HDRLEN, 8);
				a += NLA_ALIGN(at->nla_len);
			}
		}
	}
	for (i = 0; i < nids; i++) {
		uint64_t none = AXON_LIMIT_NONE;
		size_t off;

		memset(&m, 0, sizeof(m.n) + sizeof(m.g));
		m.n.nlmsg_type = p.nl_family;
		m.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
		m.g.cmd = AXON_CMD_SET_LIMIT;
		m.g.version = AXON_GENL_VERSION;
		off = nl_put(m.attrs, sizeof(m.attrs), AXON_A_CGROUP_ID, &ids[i], 8);
		off += nl_put(m.attrs + off, sizeof(m.attrs) - off, AXON_A_LIMIT,
			      &none, 8);
		m.n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN + off);
		if (send(t.nl, &m, m.n.nlmsg_len, 0) > 0)
			recv(t.nl, t.buf, FZ_BUF, 0);
	}
out:
	if (t.nl >= 0)
		close(t.nl);
	free(t.buf);
}

/* Nothing left behind: no client, no charge, no region memory. */
static bool fz_quiescent(struct __test_metadata *_metadata)
{
	uint64_t end = now_ns() + 15 * NSEC_PER_SEC;
	char *buf = malloc(1 << 16);
	bool ok = false;

	while (buf && now_ns() < end) {
		char *nl;

		/* deferred fput and RCU may take a moment */
		if (fz_stat("clients") == 0 && fz_stat("charged_bytes") == 0 &&
		    fz_stat("region_bytes") == 0 && fz_stat("daemon_attached") == 0 &&
		    read_file("/proc/axon/clients", buf, 1 << 16) > 0 &&
		    (nl = strchr(buf, '\n')) && !nl[1]) {
			ok = true;
			break;
		}
		usleep(50000);
	}
	if (!ok) {
		TH_LOG("left behind: clients %llu charged_bytes %llu region_bytes %llu daemon %llu",
		       (unsigned long long)fz_stat("clients"),
		       (unsigned long long)fz_stat("charged_bytes"),
		       (unsigned long long)fz_stat("region_bytes"),
		       (unsigned long long)fz_stat("daemon_attached"));
		if (buf && read_file("/proc/axon/clients", buf, 1 << 16) > 0)
			TH_LOG("/proc/axon/clients:\n%s", buf);
	}
	free(buf);
	return ok;
}

FIXTURE(fz) {
	uint64_t t0;
};

FIXTURE_SETUP(fz)
{
	self->t0 = now_ns();
	if (access(AXON_DEV, F_OK))
		SKIP(return, "no %s", AXON_DEV);
	ASSERT_EQ(0, set_param("max_data_size", FZ_MAX_DATA));
	ASSERT_EQ(0, set_param("default_data_size", FZ_DEF_DATA));
	mkdir(FZ_CG, 0755);
	mkdir(FZ_CG "/a", 0755);
	mkdir(FZ_CG "/b", 0755);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	TH_LOG("AXON_FUZZ_SEED=%llu AXON_FUZZ_SECONDS=%u AXON_FUZZ_OPS=%llu",
	       (unsigned long long)fz_seed, fz_seconds,
	       (unsigned long long)fz_max_ops);
}

FIXTURE_TEARDOWN(fz)
{
	char line[2048];
	uint64_t total = 0;
	size_t off = 0;
	int i;

	fz_reset_limits();
	set_param("wait_for_daemon", "0");
	set_param("max_data_size", "134217728");
	set_param("default_data_size", "8388608");
	rmdir(FZ_CG "/a");
	rmdir(FZ_CG "/b");
	rmdir(FZ_CG);
	EXPECT_TRUE(fz_quiescent(_metadata));
	for (i = 0; i < OP_NR; i++) {
		total += sh->ops[i];
		if (sh->ops[i] && off < sizeof(line) - 40)
			off += snprintf(line + off, sizeof(line) - off, " %s %llu/%llums",
					fz_op_names[i], (unsigned long long)sh->ops[i],
					(unsigned long long)sh->op_ns[i] / 1000000);
	}
	/* one line per test for vmcheck's summary */
	printf("# fuzz: %s: %llu operations in %.1f s, %llu findings, seed %llu;%s\n",
	       _metadata->name, (unsigned long long)total,
	       (now_ns() - self->t0) / 1e9, (unsigned long long)sh->fails,
	       (unsigned long long)fz_seed, line);
	fflush(stdout);
	EXPECT_EQ(0, sh->fails);
	munmap(sh, sizeof(*sh));
}

/* Runs the workers of spec for fz_seconds; the daemon restarted at random. */
static void fz_run(struct __test_metadata *_metadata, int test_no,
		   const struct fz_spec *spec)
{
	uint64_t seed = fz_mix(fz_seed, test_no);
	struct rng r = { fz_mix(seed, 12345) };
	pid_t pids[16], daemon = 0;
	int st[16], n = 0, i, k, gen = 0;
	bool ok = true;

	sh->test_no = test_no;
	ASSERT_EQ(0, set_param("wait_for_daemon", spec->wait_for_daemon ? "1" : "0"));
	fz_deadline = now_ns() + fz_seconds * NSEC_PER_SEC;
	if (fz_max_ops)	/* bounded by operations, the time only caps it */
		fz_deadline = now_ns() + 10 * fz_seconds * NSEC_PER_SEC;
	if (spec->procs[W_DAEMON])
		daemon = fz_spawn(W_DAEMON, 0, fz_mix(seed, 1000), spec->threads);
	for (k = 0; k < W_NR; k++) {
		if (k == W_DAEMON)
			continue;
		for (i = 0; i < spec->procs[k] && n < 16; i++, n++) {
			pids[n] = fz_spawn(k, i, fz_mix(seed, k * 100 + i), spec->threads);
			st[n] = -1;
		}
	}
	/* until the time is up, or every non-daemon worker is done */
	for (;;) {
		uint64_t next = now_ns() + (200 + below(&r, 1300)) * 1000000ULL;
		bool alive = false;

		while (now_ns() < next && now_ns() < fz_deadline)
			usleep(10000);
		for (i = 0; i < n; i++)
			if (st[i] < 0 && waitpid(pids[i], &st[i], WNOHANG) == 0) {
				st[i] = -1;
				alive = true;
			}
		if (!alive || now_ns() >= fz_deadline)
			break;
		if (!spec->restart_daemon || !daemon)
			continue;
		/* kill it (the detach path) or let its fd close end it */
		kill(daemon, SIGKILL);
		ok &= fz_reap(_metadata, daemon, -1, "daemon", 10000);
		usleep(below(&r, 100000));
		gen++;
		daemon = fz_spawn(W_DAEMON, gen, fz_mix(seed, 1000 + gen),
				  spec->threads);
	}
	__atomic_store_n(&sh->stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < n; i++)
		ok &= fz_reap(_metadata, pids[i], st[i], "worker", 30000);
	if (daemon)
		ok &= fz_reap(_metadata, daemon, -1, "daemon", 30000);
	EXPECT_TRUE(ok);
}

/* ---- regressions: what the fuzzer found, as deterministic tests -------- */

/*
 * Accepts clients until n of them are served; the clients run in a
 * child (their SETUP waits for us). Returns the ids.
 */
static int fz_serve_n(struct tdaemon *d, uint64_t *ids, int n)
{
	uint64_t end = now_ns() + 10 * NSEC_PER_SEC;
	struct axon_event ev;
	int got = 0;

	while (got < n && now_ns() < end) {
		if (tdaemon_event(d, &ev, 100) <= 0)
			continue;
		tdaemon_handle(d, &ev);
		if (ev.events & (AXON_EV_OPEN | AXON_EV_EXISTING))
			ids[got++] = ev.client_id;
	}
	return got;
}

/*
 * A child with n set-up and mapped clients; it says so on *rd, waits for
 * an errno on *wr, then checks its first client's ENTER returns it.
 */
static pid_t fz_clients_child(int n, int *wr, int *rd)
{
	int pfd[2], rfd[2];
	pid_t pid;

	if (pipe(pfd) || pipe(rfd))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct tclient c[4];
		int i, want = 0, ret;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(pfd[1]);
		close(rfd[0]);
		for (i = 0; i < n; i++)
			if (tclient_open(&c[i]) || tclient_setup(&c[i], 8, PG))
				_exit(20 + i);
		if (write(rfd[1], &n, 1) != 1)
			_exit(29);
		if (read(pfd[0], &want, sizeof(want)) != sizeof(want))
			_exit(0);
		ret = tclient_enter(&c[0], 0, 0, 0, 0);
		if (ret != -want)
			fprintf(stderr, "# ENTER returned %d, not %d\n", ret, -want);
		_exit(ret == -want ? 0 : 30);
	}
	close(pfd[0]);
	close(rfd[1]);
	*wr = pfd[1];
	*rd = rfd[0];
	return pid;
}

/* Serves n clients of the child and waits until they are mapped. */
static int fz_serve_child(struct tdaemon *d, uint64_t *ids, int n, int rd)
{
	char c;

	if (fz_serve_n(d, ids, n) != n || read(rd, &c, 1) != 1)
		return -1;
	close(rd);
	return 0;
}

/*
 * SETUP's data size was rounded up to pages before its limit was
 * checked: a size within a page of 2^64 wrapped to 0 and was accepted,
 * giving a region without a data area (and so did a default_data_size
 * parameter that large).
 */
TEST_F(fz, setup_data_size_wraps)
{
	struct axon_params q = { .sq_entries = 8,
				 .data_size = 0xfffffffffffff001ULL };
	struct tclient c;
	pid_t d;

	/*
	 * No daemon: a size the kernel takes gets ECONNREFUSED, one it
	 * refuses EINVAL (a daemon would refuse the empty data area too).
	 */
	ASSERT_EQ(0, tclient_open(&c));
	EXPECT_EQ(-1, ioctl(c.fd, AXON_IOC_SETUP, &q));
	EXPECT_EQ(EINVAL, errno);
	q.data_size = ~0ULL;
	EXPECT_EQ(-1, ioctl(c.fd, AXON_IOC_SETUP, &q));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, set_param("default_data_size", "18446744073709551615"));
	q.data_size = 0;
	EXPECT_EQ(-1, ioctl(c.fd, AXON_IOC_SETUP, &q));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, set_param("default_data_size", FZ_DEF_DATA));
	/* still usable with a sane size */
	d = fake_daemon_spawn(true);
	ASSERT_GT(d, 0);
	EXPECT_EQ(0, tclient_setup(&c, 8, PG));
	EXPECT_EQ(PG, c.p.data_size);
	tclient_close(&c);
	fake_daemon_kill(d);
}

/*
 * A cgroup's counter was checked for overflow only when it had a limit:
 * two clients charging 2^63 each wrapped their common ancestors' usage
 * to 0, and giving the charges back then hit the WARN in the uncharge.
 */
TEST_F(fz, charge_sum_overflows)
{
	struct tdaemon d;
	uint64_t ids[2];
	pid_t kid;
	int wr, rd, st, ret;

	ASSERT_LE(0, tdaemon_attach(&d));
	kid = fz_clients_child(2, &wr, &rd);
	ASSERT_GT(kid, 0);
	ASSERT_EQ(0, fz_serve_child(&d, ids, 2, rd));
	EXPECT_EQ(0, tdaemon_charge(&d, ids[0], 1ULL << 63, true));
	ret = tdaemon_charge(&d, ids[1], 1ULL << 63, true);
	EXPECT_EQ(-EOVERFLOW, ret);
	EXPECT_EQ(1ULL << 63, fz_stat("charged_bytes"));
	if (!ret)
		tdaemon_charge(&d, ids[1], 1ULL << 63, false);
	EXPECT_EQ(0, tdaemon_charge(&d, ids[0], 1ULL << 63, false));
	EXPECT_EQ(0, fz_stat("charged_bytes"));
	close(wr);
	waitpid(kid, &st, 0);
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	tdaemon_close(&d);
}

/*
 * DISCONNECT took any error down to -4095, the kernel's internal codes
 * (-ERESTARTSYS and the others from 512 on) included, and the client's
 * SETUP and ENTER then returned them to user space.
 */
TEST_F(fz, disconnect_internal_errno)
{
	static const int internal[] = { -512, -513, -514, -516, -517, -530, -4095 };
	struct axon_disconnect dc = { 0 };
	struct tdaemon d;
	uint64_t id;
	unsigned int i;
	int wr, rd, st, want = 511;
	pid_t kid;

	ASSERT_LE(0, tdaemon_attach(&d));
	kid = fz_clients_child(1, &wr, &rd);
	ASSERT_GT(kid, 0);
	ASSERT_EQ(0, fz_serve_child(&d, &id, 1, rd));
	dc.client_id = id;
	for (i = 0; i < sizeof(internal) / sizeof(internal[0]); i++) {
		dc.error = internal[i];
		EXPECT_EQ(-1, ioctl(d.fd, AXON_IOC_DISCONNECT, &dc)) {
			TH_LOG("DISCONNECT with error %d accepted", dc.error);
		}
		EXPECT_EQ(EINVAL, errno);
	}
	dc.error = -want;	/* the highest one allowed */
	EXPECT_EQ(0, ioctl(d.fd, AXON_IOC_DISCONNECT, &dc));
	ASSERT_EQ(sizeof(want), write(wr, &want, sizeof(want)));
	close(wr);
	ASSERT_EQ(kid, waitpid(kid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		TH_LOG("client child status %#x", st);
	}
	tdaemon_close(&d);
}

/* Client fds and their mappings, served by a well-behaved daemon. */
TEST_F_TIMEOUT(fz, clients, 600)
{
	struct fz_spec spec = {
		.procs = { [W_CLIENT] = 3, [W_NOBODY] = 1, [W_DAEMON] = 1 },
		.threads = 3,
	};

	fz_run(_metadata, 1, &spec);
}

/* The daemon side under fire, killed and restarted underneath. */
TEST_F_TIMEOUT(fz, daemon, 600)
{
	struct fz_spec spec = {
		.procs = { [W_CLIENT] = 2, [W_DAEMON] = 1 },
		.threads = 3,
		.restart_daemon = true,
		.wait_for_daemon = true,
	};

	fz_run(_metadata, 2, &spec);
}

/* Netlink and /proc while clients come and go. */
TEST_F_TIMEOUT(fz, netlink, 600)
{
	struct fz_spec spec = {
		.procs = { [W_CLIENT] = 1, [W_DAEMON] = 1, [W_NETLINK] = 2 },
		.threads = 2,
		.restart_daemon = true,
	};

	fz_run(_metadata, 3, &spec);
}

/* Everything at once. */
TEST_F_TIMEOUT(fz, everything, 600)
{
	struct fz_spec spec = {
		.procs = { [W_CLIENT] = 2, [W_NOBODY] = 1, [W_DAEMON] = 1,
			   [W_NETLINK] = 1 },
		.threads = 4,
		.restart_daemon = true,
		.wait_for_daemon = true,
	};

	fz_run(_metadata, 4, &spec);
}

/* The harness's limit follows the time asked for. */
static void fz_timeouts(void)
{
	int t = (fz_max_ops ? 10 : 1) * fz_seconds + 120;

	_fz_clients_object.timeout = t;
	_fz_daemon_object.timeout = t;
	_fz_netlink_object.timeout = t;
	_fz_everything_object.timeout = t;
}

static void __attribute__((constructor)) fz_config(void)
{
	const char *s = getenv("AXON_FUZZ_SEED");

	fz_seed = s && *s ? strtoull(s, NULL, 0) :
		  (uint64_t)time(NULL) * 1000003ULL ^ (uint64_t)getpid();
	s = getenv("AXON_FUZZ_SECONDS");
	if (s && *s)
		fz_seconds = strtoul(s, NULL, 0);
	s = getenv("AXON_FUZZ_OPS");
	if (s && *s)
		fz_max_ops = strtoull(s, NULL, 0);
	s = getenv("AXON_FUZZ_VERBOSE");
	fz_verbose = s && *s == '1';
	fz_timeouts();
	printf("# fuzz: AXON_FUZZ_SEED=%llu\n", (unsigned long long)fz_seed);
}

TEST_HARNESS_MAIN
