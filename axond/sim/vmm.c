// SPDX-License-Identifier: MIT
/*
 * The sim's physical memory for the VMM API (cuMemCreate): a memfd of the
 * allocation's size, its pages appearing on first touch. Mapping it at a
 * device address maps the memfd, shared, over that part of the client's
 * window (the window is host memory at a constant offset, sim.c), so two
 * mappings of one allocation are the same pages: a write through one is
 * read through the other, as on the device. Unmapping puts fresh anonymous
 * memory back, as the rest of the window is.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cuda.h>

#include "../axond.h"
#include "../backend.h"
#include "sim.h"

static int fd_of(const struct vmm_phys *p)
{
	return (int)(intptr_t)p->backend_priv;
}

int sim_phys_create(struct axond *d, struct client *c, struct vmm_phys *p)
{
	int fd;

	(void)d;
	(void)c;
	fd = memfd_create("axon-vmm", MFD_CLOEXEC);
	if (fd < 0)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (ftruncate(fd, (off_t)p->len) < 0) {
		close(fd);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	p->backend_priv = (void *)(intptr_t)fd;
	return CUDA_SUCCESS;
}

void sim_phys_free(struct axond *d, struct vmm_phys *p)
{
	(void)d;
	/* Mappings left (none: they go first) would keep the pages alive. */
	close(fd_of(p));
}

int sim_phys_map(struct axond *d, struct client *c, uint64_t addr, uint64_t len,
		 struct vmm_phys *p, uint64_t off)
{
	void *at = sim_host_ptr(c, addr);

	(void)d;
	if (mmap(at, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 fd_of(p), (off_t)off) == MAP_FAILED) {
		log_warn("client %llu: mapping physical memory failed: %s",
			 (unsigned long long)c->id, strerror(errno));
		/* MAP_FIXED may have dropped what was there: anonymous again. */
		sim_phys_unmap(d, c, addr, len, p);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	return CUDA_SUCCESS;
}

void sim_phys_unmap(struct axond *d, struct client *c, uint64_t addr, uint64_t len,
		    struct vmm_phys *p)
{
	void *at = sim_host_ptr(c, addr);

	(void)d;
	(void)p;
	if (mmap(at, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
		 -1, 0) == MAP_FAILED)
		log_err("client %llu: restoring window at 0x%llx failed: %s",
			(unsigned long long)c->id, (unsigned long long)addr,
			strerror(errno));
}
