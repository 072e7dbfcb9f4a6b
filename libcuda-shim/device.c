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
	CUresult r = check_dev(dev);

	if (r)
		return r;
	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	snprintf(name, (size_t)len, "%s", dev_info(dev)->name);
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
	CUresult r = check_dev(dev);

	if (r)
		return r;
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	*bytes = dev_info(dev)->total_mem;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuDeviceTotalMem(unsigned int *bytes, CUdevice dev)
{
	CUresult r = check_dev(dev);

	if (r)
		return r;
	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	*bytes = dev_info(dev)->total_mem > 0xffffffffULL ? 0xffffffffU
		 : (unsigned int)dev_info(dev)->total_mem;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	CUresult r = check_dev(dev);

	if (r)
		return r;
	if (!pi || (int)attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX ||
	    attrib >= AXON_MAX_ATTRIBUTES)
		return CUDA_ERROR_INVALID_VALUE;
	*pi = dev_info(dev)->attr[attrib];
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	CUresult r = check_dev(dev);

	if (r)
		return r;
	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(uuid->bytes, dev_info(dev)->uuid, sizeof(uuid->bytes));
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
	return cuDeviceGetUuid(uuid, dev);
}

SHIM_EXPORT CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
	CUresult r = check_dev(dev);

	if (r)
		return r;
	if (!major || !minor)
		return CUDA_ERROR_INVALID_VALUE;
	*major = (int)dev_info(dev)->cc_major;
	*minor = (int)dev_info(dev)->cc_minor;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuDeviceGetProperties(CUdevprop *p, CUdevice dev)
{
	const struct axon_device_info *i;
	CUresult r = check_dev(dev);

	if (r)
		return r;
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	i = dev_info(dev);
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
	CUresult r = check_dev(dev);

	if (r)
		return r;
	if (!pciBusId || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	i = dev_info(dev);
	snprintf(pciBusId, (size_t)len, "%08x:%02x:%02x.0", i->pci_domain, i->pci_bus,
		 i->pci_device);
	return CUDA_SUCCESS;
}
