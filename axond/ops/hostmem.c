// SPDX-License-Identifier: MIT
/*
 * AXON_OP_HOSTMEM_REGISTER / AXON_OP_HOSTMEM_UNREGISTER: pinned host memory
 * shared between a client and the daemon.
 *
 * The client makes a memfd, maps it, and sends it over its socket as a
 * struct axon_hostmem_fd message (SCM_RIGHTS); REGISTER then names it by
 * cookie, with the client address it is mapped at. The daemon checks that
 * the descriptor is a sealed memfd it can map read-write (so the client can
 * pass no other file and cannot shrink it into a SIGBUS), maps it, records
 * [base, base + len) -> mapping in the client's own table and lets the
 * backend register it for DMA. Copies naming a client address
 * (AXON_COPY_F_HOSTMEM) are translated through that table only, so one
 * client can never name another's region.
 *
 * The memory is the client's: its pages are charged to the client's memory
 * cgroup when the client fills the memfd (the shim fallocates it), and a
 * region is a mapping of axond's, within the client's, its user's and the
 * daemon's limits of mappings (holdings.c), and the bytes axond pins for it
 * within --max-pinned-per-client and --max-pinned-per-user (memquota.c):
 * pinned pages cannot be reclaimed, so a client could otherwise lock the
 * host's memory through the daemon.
 *
 * The kernel transport has no socket to carry a descriptor, and the module
 * offers no way to share client memory with the daemon: REGISTER answers
 * NOT_SUPPORTED there and the shim stages copies as before.
 *
 * A region is also device memory of the client's, at its own address
 * (unified addressing: the device pointer of pinned memory is its host
 * pointer): copies, memsets and the sim's kernels may name it as a device
 * address (hostmem_device_span). Those lookups come from executors too (a
 * kernel's pointer arguments are checked when it runs), so the table's
 * regions and dying list change under the client's alloc_lock; the
 * dispatcher, their only writer, reads them without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cuda.h>

#include "ops.h"
#include "hostmem.h"
#include "../hostregion.h"
#include "../holdings.h"
#include "../memquota.h"

#define PAGE			4096ULL

/*
 * A descriptor received and not yet named by a REGISTER. Its file's identity
 * is kept with it: should the number ever be closed under the stash and
 * reused (it once was, by a stale event on a reused descriptor), take_fd
 * sees another file behind it and refuses, never maps it.
 */
struct pending_fd {
	uint64_t cookie;
	int fd;
	dev_t dev;
	ino_t ino;
};

struct hostmem_table {
	struct rangemap regions;	/* client base -> struct hostmem */
	struct hostmem *dying;		/* unregistered, release queued */
	struct pending_fd pending[AXON_HOSTMEM_MAX_PENDING];
	unsigned int npending;
	uint64_t bytes;			/* live regions */
};

static struct hostmem_table *table(struct client *c)
{
	struct hostmem_table *t;

	if (!c->hostmem) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return NULL;
		rangemap_init(&t->regions);
		pthread_mutex_lock(&c->alloc_lock);
		c->hostmem = t;
		pthread_mutex_unlock(&c->alloc_lock);
	}
	return c->hostmem;
}

/* Receives one message; 1: stashed, 0: nothing waiting, -1: violation. */
static int recv_one(struct client *c, struct hostmem_table *t)
{
	char cbuf[CMSG_SPACE(sizeof(int) * 4)];
	struct axon_hostmem_fd m;
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	struct stat st;
	int fds[4], nfds = 0, i;
	ssize_t n;
	bool ok;

	n = c->xport->recvmsg(c, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return n == -EAGAIN ? 0 : -1;
	for (cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm)) {
		int cnt;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		cnt = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (i = 0; i < cnt; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
			if (nfds < 4)
				fds[nfds++] = fd;
			else
				close(fd);
		}
	}
	/* n == 0 is the peer's close (SOCK_SEQPACKET). */
	ok = n == sizeof(m) && nfds == 1 && !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) &&
	     fstat(fds[0], &st) == 0 &&
	     m.magic == AXON_MAGIC && m.kind == AXON_HOSTMEM_FD_KIND && m.cookie &&
	     t->npending < AXON_HOSTMEM_MAX_PENDING;
	for (i = 0; ok && i < (int)t->npending; i++)
		ok = t->pending[i].cookie != m.cookie;
	if (!ok) {
		while (nfds)
			close(fds[--nfds]);
		return -1;
	}
	t->pending[t->npending].cookie = m.cookie;
	t->pending[t->npending].fd = fds[0];
	t->pending[t->npending].dev = st.st_dev;
	t->pending[t->npending].ino = st.st_ino;
	t->npending++;
	return 1;
}

static int drain(struct client *c)
{
	struct hostmem_table *t = table(c);
	int r;

	if (!c->xport->recvmsg || c->dead)
		return 0;
	if (!t)
		return -1;
	while ((r = recv_one(c, t)) > 0)
		;
	return r;
}

int hostmem_sock_readable(struct axond *d, struct client *c)
{
	(void)d;
	return drain(c);
}

/* The descriptor sent under cookie, taken out of the stash; -1 if none. */
static int take_fd(struct client *c, uint64_t cookie)
{
	struct hostmem_table *t = c->hostmem;
	struct pending_fd p;
	struct stat st;
	unsigned int i;

	for (i = 0; t && i < t->npending; i++) {
		if (t->pending[i].cookie != cookie)
			continue;
		p = t->pending[i];
		t->pending[i] = t->pending[--t->npending];
		if (fstat(p.fd, &st) < 0 || st.st_dev != p.dev || st.st_ino != p.ino) {
			log_err("client %llu: a stashed descriptor changed under us; refused",
				(unsigned long long)c->id);
			return -1;	/* not ours to close any more */
		}
		return p.fd;
	}
	return -1;
}

/*
 * A memfd that cannot shrink, large enough, mapped read-write at the
 * client's own address base, into *map: 0, or the CUresult to answer.
 *
 * Only there: the device pointer then equals the host pointer in both
 * processes, as unified addressing promises for pinned memory (a kernel
 * or cuMemcpy given the host pointer works). Where the address is taken in
 * the daemon the answer is ALREADY_MAPPED and nothing is mapped: the shim
 * maps its memfd at another address and asks again. (The daemon once
 * mapped it elsewhere and answered that address as the device pointer,
 * telling the client where the daemon's memory lies.)
 */
static int map_memfd(int fd, size_t map_len, uint64_t start, unsigned char **map)
{
	struct stat st;
	int seals;
	void *p;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < map_len)
		return CUDA_ERROR_INVALID_VALUE;
	/* Only memfds made with MFD_ALLOW_SEALING can carry F_SEAL_SHRINK:
	 * this rejects every other file, and a shrink could SIGBUS us. */
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return CUDA_ERROR_INVALID_VALUE;
	p = mmap((void *)(uintptr_t)start, map_len, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	if (p == MAP_FAILED)
		return errno == EEXIST ? CUDA_ERROR_ALREADY_MAPPED :
		       errno == ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
	/* Kernels before 4.17 take the flag for a hint and may place it
	 * elsewhere: that is taken too, and not for the client to know. */
	if (p != (void *)(uintptr_t)start) {
		munmap(p, map_len);
		return CUDA_ERROR_ALREADY_MAPPED;
	}
	*map = p;
	return 0;
}

/* Does [base, base + len) overlap one of the client's regions? */
static bool overlaps_region(const struct hostmem_table *t, uint64_t base, uint64_t len)
{
	const struct rangemap_entry *e;

	if (rangemap_find(&t->regions, base))
		return true;
	e = rangemap_find_ge(&t->regions, base);
	return e && e->base - base < len;
}

static void hostmem_free(struct axond *d, struct client *c, struct hostmem *h)
{
	if (h->backend_priv && d->backend->hostmem_unregister)
		d->backend->hostmem_unregister(d, h);
	munmap(hostmem_map_start(h), h->map_len);
	holdings_give(d, c, HOLD_MAPPING, 1);
	mq_pinned_give(d, c, h->map_len);
	free(h);
}

struct hostmem_req {
	void *info;			/* REGISTER: the data-area answer */
	struct rangemap_entry *region;	/* UNREGISTER: the region named */
};

int32_t op_hostmem_register_prep(struct op_ctx *o)
{
	const unsigned int known = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
				   CU_MEMHOSTALLOC_WRITECOMBINED | AXON_HOSTMEM_F_READ_ONLY;
	const typeof(o->sqe->obj) *a = &o->sqe->obj;
	const uint64_t va = o->c->params.va_base, va_size = o->c->params.va_size;
	void *info;

	if (!o->c->xport->recvmsg)
		return CUDA_ERROR_NOT_SUPPORTED;
	/* Whole pages from base's to the end's must not wrap either. */
	if (!a->handle || !a->arg1 || a->arg0 + a->arg1 < a->arg0 ||
	    a->arg0 + a->arg1 > UINT64_MAX - PAGE || (a->arg2 & ~(uint64_t)known))
		return CUDA_ERROR_INVALID_VALUE;
	/* A region is a device address of the client's too: never inside
	 * its device window, where the address already means device memory. */
	if (a->arg0 < va + va_size && va < a->arg0 + a->arg1)
		return CUDA_ERROR_INVALID_VALUE;
	info = a->data_len >= sizeof(struct axon_hostmem_info) ?
	       data_range(o->c, a->data_off, sizeof(struct axon_hostmem_info)) : NULL;
	if (!info)
		return CUDA_ERROR_INVALID_VALUE;
	op_req(o, struct hostmem_req)->info = info;
	return CUDA_SUCCESS;
}

/*
 * The rest of the checks are issue's: taking the descriptor named by the
 * cookie is the check that it came (and consumes it, reading the socket
 * when it is not stashed yet), and the overlap check follows it, so that a
 * refused region has used up its descriptor as it always did; the mapping
 * is the check that the file is one axond can map there.
 */
enum op_status op_hostmem_register_issue(struct op_ctx *o)
{
	const typeof(o->sqe->obj) *a = &o->sqe->obj;
	struct client *c = o->c;
	void *info = op_req(o, struct hostmem_req)->info;
	struct hostmem_table *t;
	struct hostmem *h;
	uint64_t map_len, start, end;
	unsigned char *map;
	struct work *w;
	int fd, ret;

	o->res = CUDA_ERROR_INVALID_VALUE;
	t = table(c);
	if (!t) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	fd = take_fd(c, a->handle);
	if (fd < 0) {
		/* The message was sent before the SQE, so it is queued on the
		 * socket by now unless the client lied. */
		if (drain(c) < 0) {
			/* Let the event loop see it and disconnect. */
			c->xport->disconnect(o->d, c, -EPROTO);
			return OP_COMPLETE;
		}
		fd = take_fd(c, a->handle);
		if (fd < 0)
			return OP_COMPLETE;
	}
	/* Whole pages: the memfd starts at base's page (prep checked that
	 * the end rounded up does not wrap). */
	start = a->arg0 & ~(PAGE - 1);
	end = (a->arg0 + a->arg1 + PAGE - 1) & ~(PAGE - 1);
	map_len = end - start;
	/* Before mapping: the client's own region there is not "taken". */
	if (overlaps_region(t, a->arg0, a->arg1)) {
		close(fd);
		o->res = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
		return OP_COMPLETE;
	}
	/* Each region is a mapping of axond's: bounded (holdings.c), and
	 * its bytes are pinned: bounded too (memquota.c). */
	if (holdings_take(o->d, c, HOLD_MAPPING)) {
		close(fd);
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	if (mq_pinned_take(o->d, c, map_len)) {
		close(fd);
		holdings_give(o->d, c, HOLD_MAPPING, 1);
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	ret = map_memfd(fd, map_len, start, &map);
	close(fd);
	if (ret) {
		holdings_give(o->d, c, HOLD_MAPPING, 1);
		mq_pinned_give(o->d, c, map_len);
		o->res = ret;
		return OP_COMPLETE;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		munmap(map, map_len);
		holdings_give(o->d, c, HOLD_MAPPING, 1);
		mq_pinned_give(o->d, c, map_len);
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	h->base = a->arg0;
	h->len = a->arg1;
	h->map_off = (size_t)(a->arg0 - start);
	h->map = map + h->map_off;
	h->map_len = map_len;
	h->flags = (unsigned int)a->arg2;
	h->info = info;
	/* Without a backend hook the daemon's mapping is what the device
	 * reads (the sim): the client's address. A backend that registers
	 * sets its own once the driver knows the region (until then the
	 * region is no device address). Every region gets one: with unified
	 * addressing CUDA maps all pinned memory, DEVICEMAP or not. */
	h->devptr = o->d->backend->hostmem_register ? 0 : h->base;
	pthread_mutex_lock(&c->alloc_lock);
	ret = rangemap_insert(&t->regions, h->base, h->len, h, NULL);
	pthread_mutex_unlock(&c->alloc_lock);
	if (ret) {
		munmap(map, map_len);
		holdings_give(o->d, c, HOLD_MAPPING, 1);
		mq_pinned_give(o->d, c, map_len);
		free(h);
		o->res = ret == -EEXIST ? CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED
					: CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	t->bytes += h->len;
	if (!o->d->backend->hostmem_register) {
		struct axon_hostmem_info out = { .devptr = hostmem_client_devptr(h) };

		memcpy(info, &out, sizeof(out));
		o->res = 0;
		return OP_COMPLETE;
	}
	/* The backend completes it when the device can use the region. */
	w = work_new(o, WORK_MARKER);
	if (!w) {
		pthread_mutex_lock(&c->alloc_lock);
		rangemap_remove(&t->regions, h->base, NULL);
		pthread_mutex_unlock(&c->alloc_lock);
		t->bytes -= h->len;
		hostmem_free(o->d, c, h);
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	client_get(c);
	atomic_fetch_add(&c->queued, 1);
	o->d->backend->hostmem_register(o->d, h, w);
	return OP_QUEUED;
}

/* Runs once every work item queued before the unregistration finished. */
static void release_dying(struct axond *d, struct client *c, void *obj)
{
	struct hostmem *h = obj, **pp;

	pthread_mutex_lock(&c->alloc_lock);
	for (pp = &c->hostmem->dying; *pp; pp = &(*pp)->next_dying) {
		if (*pp == h) {
			*pp = h->next_dying;
			break;
		}
	}
	pthread_mutex_unlock(&c->alloc_lock);
	hostmem_free(d, c, h);
}

int32_t op_hostmem_unregister_prep(struct op_ctx *o)
{
	struct hostmem_table *t = o->c->hostmem;
	struct rangemap_entry *e;

	e = t ? rangemap_find(&t->regions, o->sqe->obj.arg0) : NULL;
	if (!e || e->base != o->sqe->obj.arg0)
		return CUDA_ERROR_INVALID_VALUE;
	op_req(o, struct hostmem_req)->region = e;
	return CUDA_SUCCESS;
}

enum op_status op_hostmem_unregister_issue(struct op_ctx *o)
{
	struct client *c = o->c;
	struct hostmem_table *t = c->hostmem;
	struct rangemap_entry *e = op_req(o, struct hostmem_req)->region;
	struct hostmem *h = e->value;

	/* Copies queued before this may still read or write the mapping:
	 * it goes after them, as cuMemFreeHost waits for them natively. */
	if (work_release_later(o->d, c, release_dying, h)) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	pthread_mutex_lock(&c->alloc_lock);
	rangemap_erase(&t->regions, e);
	h->next_dying = t->dying;
	t->dying = h;
	pthread_mutex_unlock(&c->alloc_lock);
	t->bytes -= h->len;
	return OP_COMPLETE;
}

unsigned char *hostmem_translate(struct client *c, uint64_t addr, uint64_t len)
{
	struct rangemap_entry *e;
	struct hostmem *h;

	if (!c->hostmem)
		return NULL;
	e = rangemap_find_span(&c->hostmem->regions, addr, len);
	if (!e)
		return NULL;
	h = e->value;
	return h->map + (addr - h->base);
}

/* [addr, addr + len) inside h, which is a device address, writable if asked. */
static unsigned char *device_span_of(const struct hostmem *h, uint64_t addr, uint64_t len,
				     bool write)
{
	if (!hostmem_client_devptr(h) || (write && (h->flags & AXON_HOSTMEM_F_READ_ONLY)))
		return NULL;
	if (addr < h->base || addr - h->base > h->len || len > h->len - (addr - h->base))
		return NULL;
	return h->map + (addr - h->base);
}

unsigned char *hostmem_device_span(struct client *c, uint64_t addr, uint64_t len, bool write,
				   bool dying)
{
	struct hostmem_table *t;
	struct rangemap_entry *e;
	unsigned char *p = NULL;
	struct hostmem *h;

	if (!len)
		len = 1;
	if (addr + len < addr)
		return NULL;
	pthread_mutex_lock(&c->alloc_lock);
	t = c->hostmem;
	e = t ? rangemap_find_span(&t->regions, addr, len) : NULL;
	if (e)
		p = device_span_of(e->value, addr, len, write);
	for (h = t && dying ? t->dying : NULL; h && !p; h = h->next_dying)
		p = device_span_of(h, addr, len, write);
	pthread_mutex_unlock(&c->alloc_lock);
	return p;
}

bool hostmem_read_only(struct client *c, uint64_t addr, uint64_t len)
{
	struct rangemap_entry *e;

	e = c->hostmem ? rangemap_find_span(&c->hostmem->regions, addr, len) : NULL;
	return e && (((struct hostmem *)e->value)->flags & AXON_HOSTMEM_F_READ_ONLY);
}

struct fini_arg {
	struct axond *d;
	struct client *c;
};

static void free_region(uint64_t base, uint64_t len, void *value, void *arg)
{
	struct fini_arg *a = arg;

	(void)base;
	(void)len;
	hostmem_free(a->d, a->c, value);
}

/* Client teardown (last reference): every region, live or dying. */
static void hostmem_client_fini(struct axond *d, struct client *c)
{
	struct hostmem_table *t = c->hostmem;
	struct fini_arg arg = { d, c };
	unsigned int i;

	if (!t)
		return;
	rangemap_destroy(&t->regions, free_region, &arg);
	while (t->dying) {
		struct hostmem *h = t->dying;

		t->dying = h->next_dying;
		hostmem_free(d, c, h);
	}
	for (i = 0; i < t->npending; i++)
		close(t->pending[i].fd);
	free(t);
	c->hostmem = NULL;
}

static const struct client_family_ops hostmem_family = {
	.family = CLIENT_FAMILY_HOSTMEM,
	.fini = hostmem_client_fini,
	.fini_stage = CLIENT_FINI_BACKEND,
};

static void __attribute__((constructor)) hostmem_register_family(void)
{
	client_family_register(&hostmem_family);
}
