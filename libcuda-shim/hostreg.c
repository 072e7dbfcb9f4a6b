// SPDX-License-Identifier: MIT
/*
 * Memory the application already has, registered with cuMemHostRegister,
 * made memory the daemon can reach: the range's pages are moved onto a
 * memfd shared with the daemon, at the same address, with the same
 * contents (hostmem.c keeps the table and does the registration).
 *
 * Natively the driver pins the pages where they are, and with unified
 * addressing the device pointer of registered memory is its host pointer
 * (CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM is 1 on the H200): programs
 * such as XLA hand the host pointer to memsets, copies and kernels. The GPU
 * belongs to the daemon, which cannot reach another process's private
 * pages. So the shim copies the range's whole pages into a new memfd, the
 * daemon maps that memfd at the very same address (MAP_FIXED_NOREPLACE,
 * ops/hostmem.c) and registers it with the driver, and only then does the
 * shim map the memfd over the original pages (MAP_FIXED, which replaces
 * them in one step): both processes then see one set of pages at one
 * address, and the device pointer is the host pointer again. Pinning the
 * client's own pages through /dev/axon instead (as RDMA drivers pin user
 * memory) would avoid the copy, but only on the kernel transport, and the
 * daemon would still need a mapping of them to copy from: see
 * Documentation/architecture.md, "Registered host memory".
 *
 * Only private anonymous read-write memory (malloc, mmap(MAP_ANONYMOUS |
 * MAP_PRIVATE), the heap) can be moved so: a file's pages or memory shared
 * with another process would stop being that file's or that process's.
 * Anything else, a range whose first or last page another registration
 * already moved, or an address taken in the daemon, is not shared (the
 * caller stages copies, and a DEVICEMAP registration fails).
 *
 * The move is a copy: bytes written into the range while cuMemHostRegister
 * runs may be lost (the program must leave the memory alone until the call
 * returns, as it would a buffer it hands to a copy). The bytes beyond the
 * range on its first and last page are other data of the program's, which
 * other threads may be writing: those two pages are copied again just
 * before the mapping replaces them, after the daemon's round trip, so
 * what a thread writes there is lost only in the microseconds between
 * that copy and the mmap. Page-aligned ranges (cuMemHostAlloc's, large
 * malloc chunks' interiors, XLA's) have no such bytes. Unregistering moves the pages back onto
 * private anonymous memory, again by copy, so that fork semantics are the
 * ordinary ones afterwards; a forked child gets a private copy of every
 * registered range at once (hostmem.c's atfork handler), never a mapping
 * it would share with its parent.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "shim.h"

static uintptr_t page_size(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (uintptr_t)page : 4096;
}

/* Pages [start, end) of one /proc/self/maps line, and what they are. */
struct vma {
	uintptr_t start, end;
	char perms[5];
	unsigned long long inode;
	bool anon;		/* no file: no path, or [heap] */
};

/* A number in base 16 or 10 at *s, which moves past it; false if none. */
static bool number(const char **s, unsigned int base, unsigned long long *v)
{
	const char *p = *s;

	*v = 0;
	for (;; p++) {
		unsigned int d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned int)(*p - '0');
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = (unsigned int)(*p - 'a' + 10);
		else
			break;
		if (*v > (~0ULL - d) / base)
			return false;
		*v = *v * base + d;
	}
	if (p == *s)
		return false;
	*s = p;
	return true;
}

/* Past one field and the spaces after it. */
static const char *next_field(const char *p)
{
	while (*p && *p != ' ')
		p++;
	while (*p == ' ')
		p++;
	return p;
}

/*
 * Parses "start-end perms offset dev inode [path]"; false if it is not one.
 * By hand: this also runs in a forked child (the atfork handler), where
 * only async-signal-safe calls belong.
 */
static bool parse_vma(const char *line, struct vma *v)
{
	unsigned long long s, e, ino;
	const char *p = line;

	if (!number(&p, 16, &s) || *p++ != '-' || !number(&p, 16, &e) || *p++ != ' ')
		return false;
	if (strlen(p) < 5 || p[4] != ' ')
		return false;
	memcpy(v->perms, p, 4);
	v->perms[4] = '\0';
	p = next_field(p);		/* perms */
	p = next_field(p);		/* offset */
	p = next_field(p);		/* dev */
	if (!number(&p, 10, &ino))
		return false;
	while (*p == ' ')
		p++;
	v->start = (uintptr_t)s;
	v->end = (uintptr_t)e;
	v->inode = ino;
	v->anon = ino == 0 && (!*p || !strncmp(p, "[heap]", 6));
	return true;
}

/*
 * Calls fn for each mapping overlapping [start, end), in address order,
 * until it returns false; returns false when a mapping is missing in the
 * range (a hole), /proc/self/maps cannot be read, or fn said false.
 */
static bool each_vma(uintptr_t start, uintptr_t end, bool (*fn)(const struct vma *, void *),
		     void *arg)
{
	char buf[4096], line[512];
	size_t used = 0;
	uintptr_t next = start;
	bool ok = true;
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	while (ok && next < end && (n = read(fd, buf, sizeof(buf))) > 0) {
		ssize_t i;

		for (i = 0; i < n && ok && next < end; i++) {
			struct vma v;

			if (buf[i] != '\n') {
				/* Only the first fields matter; a long path is cut. */
				if (used < sizeof(line) - 1)
					line[used++] = buf[i];
				continue;
			}
			line[used] = '\0';
			used = 0;
			if (!parse_vma(line, &v)) {
				ok = false;
				break;
			}
			if (v.end <= next)
				continue;
			if (v.start > next) {
				ok = false;	/* a hole */
				break;
			}
			ok = fn(&v, arg);
			next = v.end;
		}
	}
	close(fd);
	return ok && next >= end;
}

static bool anon_rw(const struct vma *v, void *arg)
{
	(void)arg;
	return v->anon && !strcmp(v->perms, "rw-p");
}

static bool from_inode(const struct vma *v, void *arg)
{
	return v->inode == *(const unsigned long long *)arg && !strcmp(v->perms, "rw-s");
}

/*
 * Whole pages are copied, the program's bytes beyond the range too, and
 * the kernel does the reading (raw system calls): a sanitizer's redzones
 * on those pages are the program's, no error of ours, and its interceptors
 * of pwrite and memcpy would call them one.
 */

/* Copies [p, p + len) into fd at offset off; 0 or -errno. */
static int fill(int fd, const char *p, size_t len, size_t off)
{
	size_t done = 0;

	while (done < len) {
		size_t chunk = len - done > (1u << 30) ? (1u << 30) : len - done;
		ssize_t n = syscall(SYS_pwrite64, fd, p + done, chunk, (off_t)(off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		done += (size_t)n;
	}
	return 0;
}

CUresult shim_hostreg_share(void *p, size_t len, unsigned int flags, struct shim_hostreg *out)
{
	const uintptr_t page = page_size();
	uintptr_t start = (uintptr_t)p & ~(page - 1), end;
	struct stat st;
	CUresult r;
	void *m;
	int fd;

	if ((uintptr_t)p + len < (uintptr_t)p || (uintptr_t)p + len > UINTPTR_MAX - page)
		return CUDA_ERROR_INVALID_VALUE;
	end = ((uintptr_t)p + len + page - 1) & ~(page - 1);
	if (!(shim.ring.params.features & AXON_FEAT_HOSTMEM))
		return CUDA_ERROR_NOT_SUPPORTED;	/* no socket to pass it on */
	if (!each_vma(start, end, anon_rw, NULL))
		return CUDA_ERROR_NOT_SUPPORTED;
	fd = memfd_create("axon-hostreg", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return CUDA_ERROR_NOT_SUPPORTED;
	/* The pages are the program's: charged to its cgroup here, now. */
	if (ftruncate(fd, (off_t)(end - start)) < 0 ||
	    fill(fd, (const char *)start, end - start, 0)) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0 ||
	    fstat(fd, &st) < 0) {
		close(fd);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	r = shim_hostmem_register_fd(fd, (uint64_t)(uintptr_t)p, len, flags, &out->devptr);
	if (r) {
		close(fd);
		return r;
	}
	/* The daemon maps it; now this process, over the original pages,
	 * with the other data on the partial end pages copied afresh. */
	if ((start != (uintptr_t)p && fill(fd, (const char *)start, page, 0)) ||
	    (end != (uintptr_t)p + len && fill(fd, (const char *)(end - page), page,
					       end - page - start))) {
		close(fd);
		shim_hostmem_unregister_addr(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	/* Populated now, as pinning populates natively: one pass over the
	 * pages here is much cheaper than a fault on each later. */
	m = mmap((void *)start, end - start, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd, 0);
	close(fd);
	if (m != (void *)start) {
		shim_hostmem_unregister_addr(p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	out->map_base = (char *)start;
	out->map_len = end - start;
	out->ino = (unsigned long long)st.st_ino;
	return CUDA_SUCCESS;
}

/* Copies len bytes from src to dst, both this process's. */
static void copy_pages(void *dst, const void *src, size_t len)
{
	size_t done = 0;

	while (done < len) {
		size_t chunk = len - done > (1u << 30) ? (1u << 30) : len - done;
		struct iovec l = { (char *)dst + done, chunk };
		struct iovec r = { (char *)src + done, chunk };
		ssize_t n = syscall(SYS_process_vm_readv, getpid(), &l, 1UL, &r, 1UL, 0UL);

		if (n <= 0)
			break;
		done += (size_t)n;
	}
	/* Where the kernel does not let a process read itself so. */
	if (done < len)
		memcpy((char *)dst + done, (const char *)src + done, len - done);
}

bool shim_hostreg_unshare(const struct shim_hostreg *r)
{
	unsigned long long ino = r->ino;
	void *tmp;

	/* Still the memfd it was? The program may have unmapped it since:
	 * then there is nothing of ours there to move back. */
	if (!each_vma((uintptr_t)r->map_base, (uintptr_t)r->map_base + r->map_len, from_inode,
		      &ino))
		return false;
	tmp = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (tmp == MAP_FAILED)
		return false;
	copy_pages(tmp, r->map_base, r->map_len);
	/* The end pages may hold other data threads write: copied last. */
	copy_pages(tmp, r->map_base, page_size());
	copy_pages((char *)tmp + r->map_len - page_size(), r->map_base + r->map_len - page_size(),
		   page_size());
	/* One step: the range is never unmapped in between. */
	if (mremap(tmp, r->map_len, r->map_len, MREMAP_MAYMOVE | MREMAP_FIXED, r->map_base) ==
	    MAP_FAILED) {
		munmap(tmp, r->map_len);
		return false;
	}
	return true;
}

void shim_hostreg_unshare_or_wipe(const struct shim_hostreg *r)
{
	unsigned long long ino = r->ino;

	if (shim_hostreg_unshare(r))
		return;
	/* A child that cannot copy must still never share the parent's
	 * pages: it gets zeroes there instead. */
	if (each_vma((uintptr_t)r->map_base, (uintptr_t)r->map_base + r->map_len, from_inode,
		     &ino))
		mmap(r->map_base, r->map_len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}
