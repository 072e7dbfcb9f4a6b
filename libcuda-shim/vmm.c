// SPDX-License-Identifier: MIT
/*
 * The virtual memory management API: cuMemAddressReserve,
 * cuMemCreate, cuMemMap and the rest.
 *
 * Addresses are the client's, as for cuMemAlloc: a reservation is a range
 * of the minting window (shim.va), aligned to the device's granularity, and
 * the daemon never hears of it. Physical memory is the daemon's: cuMemCreate
 * is a synchronous MEM_CREATE that returns an axon handle (the
 * CUmemGenericAllocationHandle the caller sees), and cuMemMap a synchronous
 * MEM_MAP naming that handle, which the daemon backs at the same address
 * (sim: a shared mapping of a memfd; cuda: the driver's cuMemMap), so one
 * handle mapped twice shows the same bytes at both addresses. cuMemUnmap is
 * a deferred MEM_UNMAP per mapping; the daemon unmaps after the work queued
 * before it.
 *
 * The daemon checks every handle and range against the client's own tables;
 * the lists here are what the driver API answers locally (granularity,
 * properties, access flags, pointer attributes) and what gives the driver's
 * errors for a range that is not reserved or already mapped without a
 * crossing.
 *
 * Mappings and handles belong to no context (cuCtxDestroy leaves them, as
 * the driver does): the daemon sees them in the device's primary context,
 * which the shim never destroys.
 *
 * Not supported: exporting or importing physical memory between processes
 * (cuMemExportToShareableHandle, cuMemImportFromShareableHandle) answer
 * CUDA_ERROR_NOT_SUPPORTED with a log line. A POSIX file-descriptor handle
 * type may be requested at cuMemCreate (PyTorch's expandable segments ask
 * for it) but cannot be exported. Access set read-only is recorded and
 * reported, but the memory stays writable.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "rangemap.h"
#include "shim.h"
#include "forkreg.h"

/* How often cuMemMap asks again while an unmap is still pending. */
#define MAP_RETRIES	200

struct vmm_res {
	uint64_t base, size;
	bool unmapped;		/* an unmap since the range was reserved */
};

struct vmm_handle {
	uint64_t handle;	/* the daemon's AXON_HANDLE_MEM */
	uint64_t size;
	CUmemAllocationProp prop;
	unsigned int refs;	/* the caller's: cuMemCreate, retains */
	unsigned int maps;	/* mappings of it */
};

struct vmm_map {
	struct vmm_handle *h;
	uint64_t offset;
	struct shim_vmm_info info;
};

static struct {
	bool init;
	struct rangemap res;	/* reservations, by address */
	struct rangemap maps;	/* mappings, by address */
	struct rangemap handles;	/* handle -> vmm_handle, one byte each */
} vmm;

static void vmm_init(void)
{
	if (vmm.init)
		return;
	rangemap_init(&vmm.res);
	rangemap_init(&vmm.maps);
	rangemap_init(&vmm.handles);
	vmm.init = true;
}

static void free_value(uint64_t base, uint64_t len, void *value, void *arg)
{
	(void)base;
	(void)len;
	(void)arg;
	free(value);
}

static void vmm_forget(void)
{
	if (!vmm.init)
		return;
	rangemap_destroy(&vmm.res, free_value, NULL);
	rangemap_destroy(&vmm.maps, free_value, NULL);
	rangemap_destroy(&vmm.handles, free_value, NULL);
}

__attribute__((constructor)) static void register_vmm_forget(void)
{
	shim_fork_register(vmm_forget);
}

int shim_vmm_lookup(uint64_t ptr, uint64_t *base, uint64_t *size,
		    const struct shim_vmm_info **info)
{
	struct rangemap_entry *e;

	if (!vmm.init || !rangemap_find(&vmm.res, ptr))
		return 0;
	e = rangemap_find(&vmm.maps, ptr);
	if (!e)
		return -1;
	*base = e->base;
	*size = e->len;
	*info = &((struct vmm_map *)e->value)->info;
	return 1;
}

bool shim_vmm_reserved(uint64_t addr)
{
	struct rangemap_entry *e = vmm.init ? rangemap_find(&vmm.res, addr) : NULL;

	return e && e->base == addr;
}

static struct vmm_handle *handle_of(CUmemGenericAllocationHandle h)
{
	struct rangemap_entry *e;

	if (!vmm.init || !h || h == UINT64_MAX)
		return NULL;
	e = rangemap_find(&vmm.handles, h);
	return e && e->base == h ? e->value : NULL;
}

/* Forgets h once the daemon has freed it: no reference, no mapping. */
static void handle_drop_if_unused(struct vmm_handle *h)
{
	if (h->refs || h->maps)
		return;
	rangemap_remove(&vmm.handles, h->handle, NULL);
	free(h);
}

static bool connected(void)
{
	return __atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE);
}

static uint64_t granularity(int dev, bool recommended)
{
	const struct axon_device_info *di = &shim.ring.info->device[dev];
	uint64_t g = recommended ? di->vmm_granularity_recommended : di->vmm_granularity;

	if (!g)
		g = recommended ? di->vmm_granularity : 0;
	return g ? g : 2ULL << 20;	/* what every current GPU reports */
}

/* What cuMemCreate and cuMemGetAllocationGranularity accept; *dev gets the
 * device. */
static CUresult check_prop(const CUmemAllocationProp *prop, int *dev)
{
	if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED)
		return CUDA_ERROR_INVALID_VALUE;
	if (prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if (prop->location.id < 0 ||
	    (unsigned int)prop->location.id >= shim.ring.info->ndevices)
		return CUDA_ERROR_INVALID_DEVICE;
	if (prop->requestedHandleTypes & ~(unsigned int)CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
		shim_log("memory shareable between processes (handle type 0x%x) is not "
			 "supported", (unsigned int)prop->requestedHandleTypes);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	if (prop->allocFlags.compressionType)
		return CUDA_ERROR_NOT_SUPPORTED;
	*dev = prop->location.id;
	return CUDA_SUCCESS;
}

/* The device's primary context, where mappings live (lock not held). */
static CUresult owner_ctx(int dev, struct shim_ctx **out)
{
	uint64_t h;
	CUresult r = shim_primary_peek(dev, &h);

	if (r)
		return r;
	*out = shim_ctx_of((CUcontext)(uintptr_t)h);
	return *out ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

SHIM_EXPORT CUresult cuMemGetAllocationGranularity(size_t *granularity_out,
						   const CUmemAllocationProp *prop,
						   CUmemAllocationGranularity_flags option)
{
	CUresult r;
	int dev;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!granularity_out || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
				 option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
		return CUDA_ERROR_INVALID_VALUE;
	r = check_prop(prop, &dev);
	if (r)
		return r;
	SHIM_LOCAL();
	*granularity_out = granularity(dev, option == CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment,
					 CUdeviceptr addr, unsigned long long flags)
{
	uint64_t g, base;
	struct vmm_res *res;

	(void)addr;	/* a hint only; the window decides */
	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	g = granularity(0, false);
	if (!ptr || !size || size % g || flags ||
	    (alignment & (alignment - 1)))
		return CUDA_ERROR_INVALID_VALUE;
	if (alignment < g)
		alignment = g;
	res = calloc(1, sizeof(*res));
	if (!res)
		return CUDA_ERROR_OUT_OF_MEMORY;
	shim_lock();
	vmm_init();
	if (vaalloc_alloc(&shim.va, size, alignment, &base)) {
		shim_unlock();
		free(res);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	res->base = base;
	res->size = size;
	if (rangemap_insert(&vmm.res, base, size, res, NULL)) {
		vaalloc_free(&shim.va, base);
		shim_unlock();
		free(res);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	shim_unlock();
	SHIM_LOCAL();
	*ptr = base;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	struct rangemap_entry *e, *m;
	struct shim_ctx *sc = NULL;
	struct vmm_res *res;
	CUresult r = CUDA_SUCCESS;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	shim_lock();
	e = vmm.init ? rangemap_find(&vmm.res, ptr) : NULL;
	if (!e || e->base != ptr || e->len != size) {
		shim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	/* Still mapped: the caller unmaps first. */
	m = rangemap_find(&vmm.maps, ptr);
	if (!m)
		m = rangemap_find_ge(&vmm.maps, ptr);
	if (m && m->base < ptr + size) {
		shim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	res = e->value;
	shim_unlock();
	/*
	 * Once free, these addresses may be minted again, and the daemon
	 * backs minted memory at once: the unmaps it may still be doing
	 * behind queued work must be done first.
	 */
	if (res->unmapped) {
		r = owner_ctx(0, &sc);
		if (!r)
			r = shim_stream_sync(sc->default_stream);
	}
	shim_lock();
	rangemap_remove(&vmm.res, ptr, NULL);
	vaalloc_free(&shim.va, ptr);
	shim_unlock();
	free(res);
	return r;
}

SHIM_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size,
				 const CUmemAllocationProp *prop, unsigned long long flags)
{
	struct shim_waiter w = { 0 };
	struct vmm_handle *h;
	CUresult r;
	int dev;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!handle || flags)
		return CUDA_ERROR_INVALID_VALUE;
	r = check_prop(prop, &dev);
	if (r)
		return r;
	if (!size || size % granularity(dev, false))
		return CUDA_ERROR_INVALID_VALUE;
	h = calloc(1, sizeof(*h));
	if (!h)
		return CUDA_ERROR_OUT_OF_MEMORY;
	shim_lock();
	vmm_init();
	r = shim_call_locked(&w, axon_prep_mem_create, 0, size, (uint64_t)dev);
	if (!r) {
		h->handle = w.aux[0];
		h->size = size;
		h->prop = *prop;
		h->refs = 1;
		if (rangemap_insert(&vmm.handles, h->handle, 1, h, NULL)) {
			/* Cannot remember it: give it back. */
			struct shim_waiter w2 = { 0 };

			shim_call_locked(&w2, axon_prep_mem_release, h->handle);
			r = CUDA_ERROR_OUT_OF_MEMORY;
		}
	}
	shim_unlock();
	if (r) {
		free(h);
		return r;
	}
	*handle = h->handle;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	struct shim_waiter w = { 0 };
	struct vmm_handle *h;
	CUresult r;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	shim_lock();
	h = handle_of(handle);
	if (!h || !h->refs) {
		shim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	r = shim_call_locked(&w, axon_prep_mem_release, h->handle);
	if (!r) {
		h->refs--;
		handle_drop_if_unused(h);
	}
	shim_unlock();
	return r;
}

/* One synchronous MEM_MAP of a handle; lock held. */
static CUresult map_once(struct shim_ctx *sc, uint64_t ptr, uint64_t size,
			 uint64_t offset, uint64_t handle)
{
	struct shim_waiter w = { 0 };
	struct axon_sqe *sqe = shim_sqe();

	if (!sqe)
		return shim_gone_error();
	axon_prep_mem_map(sqe, sc->handle, ptr, size, handle, offset);
	return shim_sync_op(sqe, &w);
}

SHIM_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset,
			      CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	struct rangemap_entry *e;
	struct shim_ctx *sc;
	struct vmm_handle *h;
	struct vmm_map *m;
	uint64_t g, end;
	CUresult r;
	int tries;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (flags || !size || ptr + size < ptr)
		return CUDA_ERROR_INVALID_VALUE;
	r = owner_ctx(0, &sc);
	if (r)
		return r;
	m = calloc(1, sizeof(*m));
	if (!m)
		return CUDA_ERROR_OUT_OF_MEMORY;
	shim_lock();
	vmm_init();
	h = handle_of(handle);
	if (!h || !h->refs) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	g = granularity(h->prop.location.id, false);
	end = ptr + size;
	e = rangemap_find(&vmm.res, ptr);
	/* Inside one reservation, whole granules, within the handle. */
	if (!e || end > e->base + e->len || ptr % g || size % g || offset % g ||
	    offset > h->size || size > h->size - offset) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	e = rangemap_find(&vmm.maps, ptr);
	if (!e)
		e = rangemap_find_ge(&vmm.maps, ptr);
	if (e && e->base < end) {
		r = CUDA_ERROR_INVALID_VALUE;	/* already mapped */
		goto out;
	}
	for (tries = 0;; tries++) {
		r = map_once(sc, ptr, size, offset, h->handle);
		if (r != CUDA_ERROR_NOT_READY || tries == MAP_RETRIES)
			break;
		/* An earlier unmap of these addresses is behind queued work:
		 * wait for the work (ops/vmm.c), then ask again. The daemon
		 * forgets the unmap only once its executor reported it done,
		 * which may come a moment after the stream's synchronisation
		 * did: after the first, back off briefly (~50 ms in all). */
		shim_unlock();
		if (tries == 0) {
			r = shim_stream_sync(sc->default_stream);
		} else {
			usleep(250);
			r = CUDA_SUCCESS;
		}
		shim_lock();
		if (r)
			goto out;
		h = handle_of(handle);	/* may have gone while unlocked */
		if (!h || !h->refs) {
			r = CUDA_ERROR_INVALID_VALUE;
			goto out;
		}
	}
	if (r)
		goto out;
	m->h = h;
	m->offset = offset;
	m->info.device = h->prop.location.id;
	m->info.handle_types = h->prop.requestedHandleTypes;
	m->info.access = CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE;
	if (rangemap_insert(&vmm.maps, ptr, size, m, NULL)) {
		/* Another thread mapped there meanwhile; the daemon refused
		 * one of the two, so this cannot happen for both. */
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	h->maps++;
	m = NULL;
out:
	shim_unlock();
	free(m);
	return r;
}

/* The mappings covering exactly [ptr, ptr+size), first to last; NULL if
 * that range is not a run of whole mappings. Lock held. */
static struct rangemap_entry *whole_mappings(uint64_t ptr, uint64_t size)
{
	struct rangemap_entry *first, *e;
	uint64_t at = ptr;

	if (!vmm.init || !size || ptr + size < ptr)
		return NULL;
	first = e = rangemap_find(&vmm.maps, ptr);
	if (!e || e->base != ptr)
		return NULL;
	while (e && e->base == at) {
		at += e->len;
		if (at >= ptr + size)
			return at == ptr + size ? first : NULL;
		e = rangemap_next(&vmm.maps, e);
	}
	return NULL;
}

SHIM_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	struct rangemap_entry *e, *next;
	struct shim_ctx *sc;
	struct vmm_res *res;
	CUresult r;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	r = owner_ctx(0, &sc);
	if (r)
		return r;
	shim_lock();
	e = whole_mappings(ptr, size);
	if (!e) {
		shim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	res = rangemap_find(&vmm.res, ptr)->value;
	res->unmapped = true;
	while (e && e->base < ptr + size) {
		struct vmm_map *m = e->value;
		struct axon_sqe *sqe = shim_sqe();

		if (!sqe) {
			r = shim_gone_error();
			break;
		}
		axon_prep_mem_unmap(sqe, sc->handle, e->base);
		axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
		next = rangemap_next(&vmm.maps, e);
		rangemap_erase(&vmm.maps, e);
		m->h->maps--;
		handle_drop_if_unused(m->h);
		free(m);
		e = next;
	}
	shim_flush();
	shim_unlock();
	return r;
}

static bool access_ok(const CUmemAccessDesc *d)
{
	if (d->location.type != CU_MEM_LOCATION_TYPE_DEVICE || d->location.id < 0 ||
	    (unsigned int)d->location.id >= shim.ring.info->ndevices)
		return false;
	return d->flags == CU_MEM_ACCESS_FLAGS_PROT_NONE ||
	       d->flags == CU_MEM_ACCESS_FLAGS_PROT_READ ||
	       d->flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
}

/*
 * The daemon maps read-write for the owning device from the start; what
 * the caller sets is recorded for cuMemGetAccess and the pointer
 * attribute (a single device: no peer mappings to make).
 */
SHIM_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size,
				    const CUmemAccessDesc *desc, size_t count)
{
	struct rangemap_entry *e;
	size_t i;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!desc || !count)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < count; i++)
		if (!access_ok(&desc[i]))
			return desc[i].location.type == CU_MEM_LOCATION_TYPE_DEVICE
			       && desc[i].flags <= CU_MEM_ACCESS_FLAGS_PROT_READWRITE
			       ? CUDA_ERROR_INVALID_DEVICE : CUDA_ERROR_INVALID_VALUE;
	shim_lock();
	e = whole_mappings(ptr, size);
	if (!e) {
		shim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	for (; e && e->base < ptr + size; e = rangemap_next(&vmm.maps, e)) {
		struct vmm_map *m = e->value;

		for (i = 0; i < count; i++)
			if (desc[i].location.id == m->info.device)
				m->info.access = (unsigned int)desc[i].flags;
	}
	shim_unlock();
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemGetAccess(unsigned long long *flags, const CUmemLocation *location,
				    CUdeviceptr ptr)
{
	struct rangemap_entry *e;
	struct vmm_map *m;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!flags || !location || location->type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	if (location->id < 0 || (unsigned int)location->id >= shim.ring.info->ndevices)
		return CUDA_ERROR_INVALID_DEVICE;
	shim_lock();
	e = vmm.init ? rangemap_find(&vmm.maps, ptr) : NULL;
	if (!e) {
		shim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	m = e->value;
	*flags = location->id == m->info.device ? m->info.access
						: CU_MEM_ACCESS_FLAGS_PROT_NONE;
	shim_unlock();
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr)
{
	struct shim_waiter w = { 0 };
	struct rangemap_entry *e;
	struct vmm_handle *h;
	CUresult r;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!handle)
		return CUDA_ERROR_INVALID_VALUE;
	shim_lock();
	e = vmm.init ? rangemap_find(&vmm.maps, (uint64_t)(uintptr_t)addr) : NULL;
	if (!e) {
		shim_unlock();
		return CUDA_ERROR_INVALID_VALUE;
	}
	h = ((struct vmm_map *)e->value)->h;
	/* MEM_CREATE naming a handle: one more reference to it. */
	r = shim_call_locked(&w, axon_prep_mem_create, h->handle, 0, 0);
	if (!r) {
		h->refs++;
		*handle = h->handle;
	}
	shim_unlock();
	return r;
}

SHIM_EXPORT CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop,
							    CUmemGenericAllocationHandle handle)
{
	struct vmm_handle *h;

	if (!connected())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (!prop)
		return CUDA_ERROR_INVALID_VALUE;
	shim_lock();
	h = handle_of(handle);
	if (h && h->refs)
		*prop = h->prop;
	shim_unlock();
	if (!h || !h->refs)
		return CUDA_ERROR_INVALID_VALUE;
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

/*
 * Sharing physical memory with another process would need the daemon to
 * hand one client's memory to another: not built. Said plainly, once per
 * call, rather than by the generic "not implemented".
 */
SHIM_EXPORT CUresult cuMemExportToShareableHandle(void *shareableHandle,
						  CUmemGenericAllocationHandle handle,
						  CUmemAllocationHandleType handleType,
						  unsigned long long flags)
{
	(void)shareableHandle;
	(void)handle;
	(void)flags;
	shim_log("cuMemExportToShareableHandle (type 0x%x): sharing device memory "
		 "between processes is not supported", (unsigned int)handleType);
	return CUDA_ERROR_NOT_SUPPORTED;
}

SHIM_EXPORT CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *handle,
						    void *osHandle,
						    CUmemAllocationHandleType shHandleType)
{
	(void)handle;
	(void)osHandle;
	shim_log("cuMemImportFromShareableHandle (type 0x%x): sharing device memory "
		 "between processes is not supported", (unsigned int)shHandleType);
	return CUDA_ERROR_NOT_SUPPORTED;
}
