// SPDX-License-Identifier: MIT
/*
 * The cuda backend's physical memory for clients' VMM calls: a client's
 * cuMemCreate is the driver's cuMemCreate, its handle kept by the daemon
 * (the client gets an axon handle, ops/vmm.c); its cuMemMap maps that
 * handle at the same address inside the client's window, which the daemon
 * reserved for it (window.c:cuda_client_init), so kernels see the client's
 * addresses unchanged, and two mappings of one handle alias as they do
 * natively. Minted memory never shares a granularity page with such a
 * mapping: the daemon refuses a mapping that overlaps anything the client
 * has mapped or is still releasing (ops/vmm.c), and every mapping covers
 * whole pages.
 */
#include <stdint.h>
#include <cuda.h>

#include "../axond.h"
#include "../backend.h"
#include "vendor.h"
#include "vmm.h"

static CUmemGenericAllocationHandle handle_of(const struct vmm_phys *p)
{
	return (CUmemGenericAllocationHandle)(uintptr_t)p->backend_priv;
}

int cuda_phys_create(struct axond *d, struct client *c, struct vmm_phys *p)
{
	CUmemAllocationProp prop = {
		.type = CU_MEM_ALLOCATION_TYPE_PINNED,
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = p->device },
	};
	CUmemGenericAllocationHandle h = 0;
	CUresult r;

	(void)d;
	r = vd.cuMemCreate(&h, p->len, &prop, 0);
	if (r) {
		log_info("client %llu: cuMemCreate of %llu bytes failed: %s",
			 (unsigned long long)c->id, (unsigned long long)p->len,
			 vendor_err(r));
		return r == CUDA_ERROR_INVALID_VALUE ? r : CUDA_ERROR_OUT_OF_MEMORY;
	}
	p->backend_priv = (void *)(uintptr_t)h;
	return CUDA_SUCCESS;
}

void cuda_phys_free(struct axond *d, struct vmm_phys *p)
{
	CUresult r = vd.cuMemRelease(handle_of(p));

	(void)d;
	if (r)
		log_err("cuda: cuMemRelease failed: %s", vendor_err(r));
}

int cuda_phys_map(struct axond *d, struct client *c, uint64_t addr, uint64_t len,
		  struct vmm_phys *p, uint64_t off)
{
	CUmemAccessDesc acc = {
		.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = p->device },
		.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
	};
	CUresult r;

	(void)d;
	r = vd.cuMemMap((CUdeviceptr)addr, len, off, handle_of(p), 0);
	if (!r) {
		r = vd.cuMemSetAccess((CUdeviceptr)addr, len, &acc, 1);
		if (r)
			vd.cuMemUnmap((CUdeviceptr)addr, len);
	}
	if (r) {
		log_info("client %llu: mapping at 0x%llx failed: %s",
			 (unsigned long long)c->id, (unsigned long long)addr,
			 vendor_err(r));
		return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}

void cuda_phys_unmap(struct axond *d, struct client *c, uint64_t addr, uint64_t len,
		     struct vmm_phys *p)
{
	CUresult r = vd.cuMemUnmap((CUdeviceptr)addr, len);

	(void)d;
	(void)p;
	if (r)
		log_err("client %llu: cuMemUnmap at 0x%llx failed: %s",
			(unsigned long long)c->id, (unsigned long long)addr,
			vendor_err(r));
}
