// SPDX-License-Identifier: MIT
/*
 * Page-locked host memory: cuMemHostAlloc, cuMemAllocHost, cuMemFreeHost,
 * cuMemHostGetFlags, cuMemHostGetDevicePointer, cuMemHostRegister,
 * cuMemHostUnregister (cudart's cudaMallocHost, cudaHostAlloc,
 * cudaFreeHost, cudaHostGetDevicePointer, cudaHostRegister), and the
 * pointer attributes of host memory.
 *
 * Pinning exists so the GPU can DMA from host memory, and the GPU belongs
 * to the daemon. So an allocation is a memfd shared with it: the shim maps
 * it, sends the descriptor over its socket (struct axon_hostmem_fd) and
 * registers it (AXON_OP_HOSTMEM_REGISTER); the daemon maps it too and pins
 * it for the device. Copies whose host side lies inside one such region
 * are sent with AXON_COPY_F_HOSTMEM and done from/to the daemon's mapping
 * with no staging (copy.c). The region is MADV_DONTFORK, as the driver
 * makes its pinned memory: a forked child does not inherit it, so it can
 * never write into the parent's buffers through a shared mapping.
 *
 * Where memory cannot be shared (the /dev/axon transport has no socket to
 * pass a descriptor on, and the module offers no other way), or the daemon
 * refuses it, an allocation is ordinary page-aligned memory the shim
 * remembers, and copies are staged through the data area as for pageable
 * memory; DEVICEMAP then answers NOT_SUPPORTED.
 *
 * cuMemHostRegister of memory the application already has moves the
 * range's pages onto a memfd shared with the daemon, at the same address
 * and with the same contents (hostreg.c), and registers it as above, with
 * any flags: the device pointer is then the host pointer, as natively
 * under unified addressing, so memsets, copies and kernels may name it
 * (XLA does), and copies from and to it go in place. Memory that cannot
 * move (not private anonymous memory, a page another registration moved
 * already, the address taken in the daemon, the kernel transport) is only
 * recorded (to answer flags and refuse double registration): copies from
 * it are staged, it has no device pointer, and a DEVICEMAP registration
 * of it answers NOT_SUPPORTED. IOMEMORY (another device's memory) answers
 * NOT_SUPPORTED: the daemon can map no such thing of a client's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "shim.h"

struct host_range {
	char *base;
	size_t len;
	size_t map_len;		/* shared: bytes mapped */
	unsigned int flags;
	bool allocated;		/* ours to free; else registered */
	bool shared;		/* a memfd the daemon maps too */
	bool moved;		/* registered, moved onto a memfd (hostreg.c) */
	struct shim_hostreg reg;	/* moved: its pages */
	uint64_t devptr;	/* shared: the device's address of base */
};

/* Protects the table. Taken before shim.lock, never inside it. */
static pthread_mutex_t host_lock = PTHREAD_MUTEX_INITIALIZER;
static struct host_range *ranges;
static size_t nranges, cap;
static uint64_t next_cookie;
/*
 * One registration in flight per process: the daemon holds at most
 * AXON_HOSTMEM_MAX_PENDING unclaimed descriptors per client and ends a
 * client that sends more, so threads allocating at once must not each send
 * theirs before the first REGISTER ran. (The driver serialises pinning
 * much the same way.)
 */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static size_t page_size(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (size_t)page : 4096;
}

/* The range starting at p (exact) or, if !exact, containing p. */
static struct host_range *find(const void *p, bool exact)
{
	const char *c = p;
	size_t i;

	for (i = 0; i < nranges; i++) {
		if (c == ranges[i].base)
			return &ranges[i];
		if (!exact && c > ranges[i].base && c < ranges[i].base + ranges[i].len)
			return &ranges[i];
	}
	return NULL;
}

static bool overlaps(const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < nranges; i++)
		if (p < ranges[i].base + ranges[i].len && ranges[i].base < p + len)
			return true;
	return false;
}

static struct host_range *add(void *p, size_t len, unsigned int flags, bool allocated)
{
	struct host_range *r;

	if (nranges == cap) {
		size_t n = cap ? cap * 2 : 16;
		struct host_range *nr = realloc(ranges, n * sizeof(*nr));

		if (!nr)
			return NULL;
		ranges = nr;
		cap = n;
	}
	r = &ranges[nranges++];
	memset(r, 0, sizeof(*r));
	r->base = p;
	r->len = len;
	r->flags = flags;
	r->allocated = allocated;
	return r;
}

static void drop(struct host_range *r)
{
	*r = ranges[--nranges];
}

/*
 * A forked child has none of the allocated shared regions (MADV_DONTFORK)
 * and is a new client of the daemon: forget them, keep the rest (ordinary
 * memory is inherited). The program's own registered memory it inherits,
 * as natively, but as a private copy: a MAP_SHARED mapping would let
 * parent and child write into each other's memory. Runs in the child
 * only, single-threaded.
 */
static void child_forgets_shared(void)
{
	size_t i = 0;

	while (i < nranges) {
		if (ranges[i].moved)
			shim_hostreg_unshare_or_wipe(&ranges[i].reg);
		if (ranges[i].shared)
			drop(&ranges[i]);
		else
			i++;
	}
	pthread_mutex_init(&host_lock, NULL);
	pthread_mutex_init(&reg_lock, NULL);
}

/* Order: reg_lock, host_lock, then conn.c's shim.lock (its handler was
 * installed first, so it runs after this one). */
static void before_fork(void)
{
	pthread_mutex_lock(&reg_lock);
	pthread_mutex_lock(&host_lock);
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&host_lock);
	pthread_mutex_unlock(&reg_lock);
}

static void install_atfork(void)
{
	pthread_atfork(before_fork, after_fork_parent, child_forgets_shared);
}

bool shim_hostmem_shared(const void *p, size_t len)
{
	const char *c = p;
	bool ok = false;
	size_t i;

	pthread_mutex_lock(&host_lock);
	for (i = 0; i < nranges && !ok; i++)
		ok = ranges[i].shared && c >= ranges[i].base &&
		     len <= ranges[i].len && (size_t)(c - ranges[i].base) <= ranges[i].len - len;
	pthread_mutex_unlock(&host_lock);
	return ok;
}

/* Hands the daemon the descriptor, over the ring's transport. */
static int send_fd(int fd, uint64_t cookie)
{
	const struct axon_hostmem_fd m = {
		.magic = AXON_MAGIC, .kind = AXON_HOSTMEM_FD_KIND, .cookie = cookie,
	};

	return axon_send_fd(&shim.ring, &m, sizeof(m), fd);
}

/* The daemon drops the region (after work queued before). Lock held. */
static void unregister_locked(const void *base, bool deferred)
{
	struct shim_waiter w = { 0 };
	struct axon_sqe *sqe = shim_sqe();

	if (!sqe)
		return;
	axon_prep_hostmem_unregister(sqe, (uint64_t)(uintptr_t)base);
	if (deferred) {
		axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
		shim_flush();
	} else {
		(void)shim_sync_op(sqe, &w);
	}
}

/*
 * Places to try for a shared region after the daemon found the address
 * the kernel gave it taken in the daemon (HOSTMEM_REGISTER answers
 * ALREADY_MAPPED: the daemon maps the region at our address, so that the
 * device pointer is the host pointer, or nowhere). Both processes put their
 * mappings near the top of the address space, the daemon large ones (a sim
 * client's window is tens of GiB), so the next address down is likely
 * taken too: try random ones between the device windows' start and where
 * programs and their mappings usually live, never in our own window.
 */
#define SHARED_TRIES		16
#define SHARED_HINT_LO		0x100200000000ULL	/* 2^44 + 8 GiB */
#define SHARED_HINT_HI		0x500000000000ULL

static void *shared_hint(size_t map_len)
{
	const uint64_t lo = shim.ring.params.va_base, hi = lo + shim.ring.params.va_size;
	uint64_t v = 0, a;
	int i;

	if (map_len >= SHARED_HINT_HI - SHARED_HINT_LO)
		return NULL;
	for (i = 0; i < 8; i++) {
		if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v))
			v = (uint64_t)(uintptr_t)&v * 0x9e3779b97f4a7c15ULL ^ (uint64_t)i << 40;
		a = SHARED_HINT_LO + (v % (SHARED_HINT_HI - SHARED_HINT_LO - map_len));
		a &= ~(uint64_t)(page_size() - 1);
		if (a + map_len <= lo || a >= hi)
			return (void *)(uintptr_t)a;
	}
	return NULL;
}

CUresult shim_hostmem_register_fd(int fd, uint64_t addr, uint64_t len, unsigned int flags,
				  uint64_t *devptr)
{
	struct axon_hostmem_info info;
	struct shim_waiter w = { 0 };
	struct axon_sqe *sqe;
	uint64_t cookie, id, off;
	CUresult r;

	*devptr = 0;
	shim_lock();
	cookie = ++next_cookie;
	if (send_fd(fd, cookie)) {
		shim_unlock();
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	off = shim_data_alloc(sizeof(info), &id);
	sqe = shim_sqe();
	if (!sqe) {
		shim_data_done(id);
		shim_unlock();
		return shim_gone_error();
	}
	axon_prep_hostmem_register(sqe, cookie, addr, len, (uint32_t)off, sizeof(info), flags);
	r = shim_sync_op(sqe, &w);
	memcpy(&info, shim.ring.data + off, sizeof(info));
	shim_data_done(id);
	/* A failed registration may be in the daemon's table (the device
	 * refused it): take it out before the address is reused. Where the
	 * address was taken nothing was recorded. */
	if (r && r != CUDA_ERROR_ALREADY_MAPPED)
		unregister_locked((const void *)(uintptr_t)addr, false);
	shim_unlock();
	if (!r)
		*devptr = info.devptr;
	return r;
}

void shim_hostmem_unregister_addr(const void *addr)
{
	shim_lock();
	if (shim.connected)
		unregister_locked(addr, true);
	shim_unlock();
}

/*
 * Maps len bytes of a new memfd and registers it with the daemon. Returns
 * CUDA_ERROR_NOT_SUPPORTED when sharing is impossible here (the caller
 * falls back to ordinary memory), another error when memory ran out.
 */
static CUresult shared_alloc(size_t len, unsigned int flags, void **out, size_t *map_out,
			     uint64_t *devptr)
{
	const size_t page = page_size();
	size_t map_len;
	unsigned int tries = 0;
	CUresult r;
	void *p;
	int fd;

	/* An older daemon would end the connection at the descriptor; a
	 * transport that carries none has the feature off. */
	if (!(shim.ring.params.features & AXON_FEAT_HOSTMEM))
		return CUDA_ERROR_NOT_SUPPORTED;
	if (len > SIZE_MAX - page)
		return CUDA_ERROR_OUT_OF_MEMORY;
	map_len = (len + page - 1) & ~(page - 1);
	fd = memfd_create("axon-pinned", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return CUDA_ERROR_NOT_SUPPORTED;
	/* Commit the pages now, in this process: running out shows here, not
	 * as a SIGBUS later, and they are charged to our memory cgroup. */
	if (ftruncate(fd, (off_t)map_len) < 0 || fallocate(fd, 0, 0, (off_t)map_len) < 0) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	/* The daemon maps it: it must not be able to shrink under it. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		close(fd);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
again:
	p = mmap(tries ? shared_hint(map_len) : NULL, map_len, PROT_READ | PROT_WRITE,
		 MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	madvise(p, map_len, MADV_DONTFORK);

	pthread_mutex_lock(&reg_lock);
	r = shim_hostmem_register_fd(fd, (uint64_t)(uintptr_t)p, len, flags, devptr);
	pthread_mutex_unlock(&reg_lock);
	if (r == CUDA_ERROR_ALREADY_MAPPED && ++tries < SHARED_TRIES) {
		/* Taken in the daemon; it mapped nothing. Elsewhere. */
		munmap(p, map_len);
		goto again;
	}
	close(fd);
	if (r) {
		munmap(p, map_len);
		return r == shim_gone_error() ? r : CUDA_ERROR_NOT_SUPPORTED;
	}
	*out = p;
	*map_out = map_len;
	return CUDA_SUCCESS;
}

/* An allocation of either kind into the table (undone if it cannot be). */
static CUresult alloc_add(void *p, size_t bytesize, unsigned int flags, bool shared,
			  size_t map_len, uint64_t devptr);

SHIM_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytesize, unsigned int flags)
{
	const unsigned int known = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
				   CU_MEMHOSTALLOC_WRITECOMBINED;
	struct shim_ctx *sc;
	uint64_t devptr = 0;
	size_t map_len = 0;
	bool shared;
	void *p = NULL;
	CUresult r;

	if (!pp || !bytesize || (flags & ~known))
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_get_ctx(&sc);
	if (r)
		return r;
	pthread_once(&atfork_once, install_atfork);
	r = shared_alloc(bytesize, flags, &p, &map_len, &devptr);
	shared = r == CUDA_SUCCESS;
	if (r == CUDA_ERROR_NOT_SUPPORTED) {
		if (flags & CU_MEMHOSTALLOC_DEVICEMAP)
			return CUDA_ERROR_NOT_SUPPORTED;	/* the device cannot reach it */
		if (posix_memalign(&p, page_size(), bytesize))
			return CUDA_ERROR_OUT_OF_MEMORY;
	} else if (r) {
		return r;
	}
	r = alloc_add(p, bytesize, flags, shared, map_len, devptr);
	if (!r)
		*pp = p;
	return r;
}

/* The staging memory of captured copies (copy.c): shared or nothing. */
CUresult shim_hostmem_alloc_shared(size_t len, void **out)
{
	uint64_t devptr = 0;
	size_t map_len = 0;
	void *p = NULL;
	CUresult r;

	if (!len)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_once(&atfork_once, install_atfork);
	r = shared_alloc(len, 0, &p, &map_len, &devptr);
	if (!r)
		r = alloc_add(p, len, 0, true, map_len, devptr);
	if (!r)
		*out = p;
	return r;
}

static CUresult alloc_add(void *p, size_t bytesize, unsigned int flags, bool shared,
			  size_t map_len, uint64_t devptr)
{
	struct host_range *hr;

	pthread_mutex_lock(&host_lock);
	hr = add(p, bytesize, flags, true);
	if (hr) {
		hr->shared = shared;
		hr->map_len = map_len;
		hr->devptr = devptr;
	}
	pthread_mutex_unlock(&host_lock);
	if (!hr) {
		if (shared) {
			shim_lock();
			unregister_locked(p, true);
			shim_unlock();
			munmap(p, map_len);
		} else {
			free(p);
		}
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t bytesize)
{
	return cuMemHostAlloc(pp, bytesize, 0);
}

SHIM_EXPORT CUresult cuMemAllocHost(void **pp, unsigned int bytesize)
{
	return cuMemHostAlloc(pp, bytesize, 0);
}

/*
 * CUDA's cuMemFreeHost waits for work using the memory. Here the daemon
 * keeps its own mapping until the work queued before the unregistration is
 * done, so this returns at once and copies still in flight land in memory
 * nobody else can see.
 */
SHIM_EXPORT CUresult cuMemFreeHost(void *p)
{
	struct host_range *r;
	struct host_range copy = { 0 };

	pthread_mutex_lock(&host_lock);
	r = find(p, true);
	if (r && r->allocated) {
		copy = *r;
		drop(r);
	}
	pthread_mutex_unlock(&host_lock);
	if (!copy.base)
		return CUDA_ERROR_INVALID_VALUE;
	if (copy.shared) {
		shim_lock();
		/* After a fork the child has no connection and no region. */
		if (shim.connected)
			unregister_locked(copy.base, true);
		shim_unlock();
		munmap(copy.base, copy.map_len);
	} else {
		free(copy.base);
	}
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
	struct host_range *r;

	if (!pFlags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&host_lock);
	r = find(p, false);
	if (r)
		*pFlags = r->flags;
	pthread_mutex_unlock(&host_lock);
	SHIM_LOCAL();
	return r ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* Every shared region has a device address (all pinned memory is mapped
 * under unified addressing); staged memory has none. */
SHIM_EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *pdptr, void *p, unsigned int flags)
{
	struct host_range *r;
	CUresult res = CUDA_ERROR_INVALID_VALUE;

	if (!pdptr || flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&host_lock);
	r = find(p, false);
	if (r && r->shared && r->devptr) {
		*pdptr = r->devptr + (uint64_t)((char *)p - r->base);
		res = CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&host_lock);
	SHIM_LOCAL();
	return res;
}

CUresult shim_hostmem_pointer_attr(void *data, CUpointer_attribute attr, CUdeviceptr ptr)
{
	const char *p = (const char *)(uintptr_t)ptr;
	struct host_range *r, hr;
	struct shim_ctx *sc;

	pthread_mutex_lock(&host_lock);
	r = find(p, false);
	if (r)
		hr = *r;
	pthread_mutex_unlock(&host_lock);
	if (!r)
		return CUDA_ERROR_INVALID_VALUE;
	sc = shim_current_ctx();
	switch (attr) {
	case CU_POINTER_ATTRIBUTE_CONTEXT:
		*(CUcontext *)data = sc ? (CUcontext)(uintptr_t)sc->handle : NULL;
		break;
	case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
		*(unsigned int *)data = CU_MEMORYTYPE_HOST;
		break;
	case CU_POINTER_ATTRIBUTE_HOST_POINTER:
		*(void **)data = (void *)p;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
		if (!hr.shared || !hr.devptr)
			return CUDA_ERROR_INVALID_VALUE;
		*(CUdeviceptr *)data = hr.devptr + (uint64_t)(p - hr.base);
		break;
	case CU_POINTER_ATTRIBUTE_MAPPED:
		*(int *)data = hr.shared && hr.devptr;
		break;
	case CU_POINTER_ATTRIBUTE_IS_MANAGED:
	case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
		*(int *)data = 0;
		break;
	case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
		*(int *)data = sc ? sc->device : 0;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
		*(CUdeviceptr *)data = (CUdeviceptr)(uintptr_t)hr.base;
		break;
	case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
		*(size_t *)data = hr.len;
		break;
	case CU_POINTER_ATTRIBUTE_BUFFER_ID:
		*(unsigned long long *)data = (unsigned long long)(uintptr_t)hr.base;
		break;
	case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
		*(int *)data = 1;
		break;
	default:
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

/* Does a moved or allocated shared range hold a page of [p, p + len)? Its
 * pages are a memfd's already: they cannot move again. Lock held. */
static bool shares_a_page(const char *p, size_t len)
{
	const uintptr_t page = page_size();
	const uintptr_t start = (uintptr_t)p & ~(page - 1);
	const uintptr_t end = ((uintptr_t)p + len + page - 1) & ~(page - 1);
	size_t i;

	for (i = 0; i < nranges; i++) {
		uintptr_t s = (uintptr_t)ranges[i].base & ~(page - 1);
		uintptr_t e = s + ranges[i].map_len;

		if (ranges[i].moved) {
			s = (uintptr_t)ranges[i].reg.map_base;
			e = s + ranges[i].reg.map_len;
		}
		if (ranges[i].shared && s < end && start < e)
			return true;
	}
	return false;
}

/*
 * Natively the driver pins the range where it is and, under unified
 * addressing, maps it for the device at its own address whatever the
 * flags. Here it moves onto memory shared with the daemon (hostreg.c) when
 * it can; otherwise it is recorded and staged, and only a DEVICEMAP
 * registration, which asks for the device pointer, fails.
 */
SHIM_EXPORT CUresult cuMemHostRegister_v2(void *p, size_t bytesize, unsigned int flags)
{
	const unsigned int known = CU_MEMHOSTREGISTER_PORTABLE | CU_MEMHOSTREGISTER_DEVICEMAP |
				   CU_MEMHOSTREGISTER_IOMEMORY | CU_MEMHOSTREGISTER_READ_ONLY;
	struct shim_hostreg reg = { 0 };
	struct host_range *hr;
	struct shim_ctx *sc;
	bool busy, moved = false;
	CUresult r;

	if (!p || !bytesize || (flags & ~known) || (uintptr_t)p + bytesize < (uintptr_t)p)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_get_ctx(&sc);
	if (r)
		return r;
	if (flags & CU_MEMHOSTREGISTER_IOMEMORY)
		return CUDA_ERROR_NOT_SUPPORTED;
	pthread_once(&atfork_once, install_atfork);
	/* One registration at a time: the check and the add are one step. */
	pthread_mutex_lock(&reg_lock);
	pthread_mutex_lock(&host_lock);
	if (overlaps(p, bytesize))
		r = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
	busy = shares_a_page(p, bytesize);
	pthread_mutex_unlock(&host_lock);
	if (!r && !busy) {
		r = shim_hostreg_share(p, bytesize, flags & (CU_MEMHOSTREGISTER_PORTABLE |
							     CU_MEMHOSTREGISTER_DEVICEMAP |
							     CU_MEMHOSTREGISTER_READ_ONLY), &reg);
		moved = !r;
		/* Not memory that can be shared: staged, as before. */
		if (r == CUDA_ERROR_NOT_SUPPORTED || r == CUDA_ERROR_ALREADY_MAPPED)
			r = CUDA_SUCCESS;
	}
	if (!r && !moved && (flags & CU_MEMHOSTREGISTER_DEVICEMAP))
		r = CUDA_ERROR_NOT_SUPPORTED;	/* the device cannot reach it */
	if (!r) {
		pthread_mutex_lock(&host_lock);
		hr = add(p, bytesize, flags, false);
		if (hr && moved) {
			hr->shared = hr->moved = true;
			hr->reg = reg;
			hr->map_len = reg.map_len;
			hr->devptr = reg.devptr;
		}
		pthread_mutex_unlock(&host_lock);
		if (!hr) {
			if (moved) {
				shim_hostreg_unshare(&reg);
				shim_hostmem_unregister_addr(p);
			}
			r = CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	pthread_mutex_unlock(&reg_lock);
	SHIM_LOCAL();
	return r;
}

SHIM_EXPORT CUresult cuMemHostRegister(void *p, size_t bytesize, unsigned int flags)
{
	return cuMemHostRegister_v2(p, bytesize, flags);
}

/* Waits for the current context's work, if there is a context. */
static CUresult sync_current(void)
{
	if (!shim_current_ctx() || !__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_SUCCESS;
	return shim_ctx_sync_current();
}

/*
 * Moved memory moves back onto private pages, contents in place, once the
 * device is done with it: the current context is synchronised first (the
 * driver's unregistration cannot unpin pages under a copy either), and an
 * error of earlier asynchronous work it reports is returned, as the
 * driver's calls may, with the unregistration done all the same. It is
 * synchronised again after the unregistration, whose release in the
 * daemon follows the work queued before it: once this returns the daemon
 * maps nothing there, so the same range can be registered again at once
 * (a mapping still there would make the daemon refuse the address).
 */
SHIM_EXPORT CUresult cuMemHostUnregister(void *p)
{
	struct host_range *r, copy = { 0 };
	CUresult res = CUDA_SUCCESS;
	bool ok;

	pthread_mutex_lock(&host_lock);
	r = find(p, true);
	ok = r && !r->allocated;
	if (ok) {
		copy = *r;
		drop(r);
	}
	pthread_mutex_unlock(&host_lock);
	if (ok && copy.moved) {
		CUresult again;

		res = sync_current();
		/* Should memory run out for the copy, the range stays on the
		 * memfd, which only this process maps once the daemon lets
		 * go: the contents are in place all the same. */
		shim_hostreg_unshare(&copy.reg);
		shim_hostmem_unregister_addr(copy.base);
		again = sync_current();
		if (!res)
			res = again;
	}
	SHIM_LOCAL();
	return ok ? res : CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED;
}
