// SPDX-License-Identifier: MIT
/*
 * Initialisation, versions and device queries. Everything after cuInit is
 * Local: answered from the daemon's read-only info page without crossing.
 */
#include <stdio.h>
#include <string.h>

#include "shim.h"

static CUresult check_dev(CUdevice dev)
{
	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || (unsigned int)dev >= shim.ring.info->ndevices)
		return CUDA_ERROR_INVALID_DEVICE;
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

static const struct axon_device_info *dev_info(CUdevice dev)
{
	return &shim.ring.info->device[dev];
}

/* The info of dev for a query: NULL with the error in *r when dev is not a
 * device (checked first) or bad_args says the arguments are not valid. */
static const struct axon_device_info *query(CUdevice dev, bool bad_args, CUresult *r)
{
	*r = check_dev(dev);
	if (!*r && bad_args)
		*r = CUDA_ERROR_INVALID_VALUE;
	return *r ? NULL : dev_info(dev);
}

SHIM_EXPORT CUresult cuInit(unsigned int flags)
{
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	return shim_ensure_init();
}

SHIM_EXPORT CUresult cuDriverGetVersion(int *version)
{
	if (!version)
		return CUDA_ERROR_INVALID_VALUE;
	/* Before cuInit this is the version the shim was built for. */
	*version = __atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE)
		   ? (int)shim.ring.info->driver_version : CUDA_VERSION;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuDeviceGetCount(int *count)
{
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	SHIM_LOCAL();
	*count = (int)shim.ring.info->ndevices;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
	CUresult r;

	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	r = check_dev(ordinal);
	if (r)
		return r;
	*device = ordinal;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	const struct axon_device_info *d;
	CUresult r;

	d = query(dev, !name || len <= 0, &r);
	if (!d)
		return r;
	snprintf(name, (size_t)len, "%s", d->name);
	return CUDA_SUCCESS;
}

/* Both widths of cuDeviceTotalMem read it here. */
static CUresult total_mem(CUdevice dev, bool bad_args, uint64_t *bytes)
{
	const struct axon_device_info *d;
	CUresult r;

	d = query(dev, bad_args, &r);
	if (d)
		*bytes = d->total_mem;
	return r;
}

SHIM_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	uint64_t t;
	CUresult r = total_mem(dev, !bytes, &t);

	if (!r)
		*bytes = t;
	return r;
}

/* The 32-bit form saturates. */
SHIM_EXPORT CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
	uint64_t t;
	CUresult r = total_mem(dev, !bytes, &t);

	if (!r)
		*bytes = t > 0xffffffffULL ? 0xffffffffU : (unsigned int)t;
	return r;
}

SHIM_EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	const struct axon_device_info *d;
	CUresult r;

	d = query(dev, !pi || (int)attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX ||
		       attrib >= AXON_MAX_ATTRIBUTES, &r);
	if (!d)
		return r;
	*pi = d->attr[attrib];
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	const struct axon_device_info *d;
	CUresult r;

	d = query(dev, !uuid, &r);
	if (!d)
		return r;
	memcpy(uuid->bytes, d->uuid, sizeof(uuid->bytes));
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	return cuDeviceGetUuid(uuid, dev);
}

SHIM_EXPORT CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
	const struct axon_device_info *d;
	CUresult r;

	d = query(dev, !major || !minor, &r);
	if (!d)
		return r;
	*major = (int)d->cc_major;
	*minor = (int)d->cc_minor;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuDeviceGetProperties(CUdevprop *p, CUdevice dev)
{
	const struct axon_device_info *i;
	CUresult r;

	i = query(dev, !p, &r);
	if (!i)
		return r;
	p->maxThreadsPerBlock = i->attr[CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK];
	p->maxThreadsDim[0] = i->attr[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X];
	p->maxThreadsDim[1] = i->attr[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y];
	p->maxThreadsDim[2] = i->attr[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z];
	p->maxGridSize[0] = i->attr[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X];
	p->maxGridSize[1] = i->attr[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y];
	p->maxGridSize[2] = i->attr[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z];
	p->sharedMemPerBlock = i->attr[CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK];
	p->totalConstantMemory = i->attr[CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY];
	p->SIMDWidth = i->attr[CU_DEVICE_ATTRIBUTE_WARP_SIZE];
	p->memPitch = i->attr[CU_DEVICE_ATTRIBUTE_MAX_PITCH];
	p->regsPerBlock = i->attr[CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK];
	p->clockRate = i->attr[CU_DEVICE_ATTRIBUTE_CLOCK_RATE];
	p->textureAlign = i->attr[CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT];
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	const struct axon_device_info *i;
	CUresult r;

	i = query(dev, !pciBusId || len <= 0, &r);
	if (!i)
		return r;
	snprintf(pciBusId, (size_t)len, "%08x:%02x:%02x.0", i->pci_domain, i->pci_bus,
		 i->pci_device);
	return CUDA_SUCCESS;
}
