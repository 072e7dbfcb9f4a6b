// SPDX-License-Identifier: MIT
/*
 * The info page from the driver (info.h): what each device is, as clients
 * read it without asking the daemon (the shim's Local calls).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../axond.h"
#include "info.h"
#include "state.h"
#include "vendor.h"

int cu_fill_info(struct axond *d, char *err, size_t errlen)
{
	int n = 0, i, a, drv = 0;
	CUresult r;

	r = vd.cuDeviceGetCount(&n);
	if (r || n <= 0) {
		snprintf(err, errlen, "no CUDA device (%s)", r ? vendor_err(r) : "count 0");
		return -ENODEV;
	}
	if (n > AXON_MAX_DEVICES)
		n = AXON_MAX_DEVICES;
	vd.cuDriverGetVersion(&drv);
	/* Never report more than the cuda.h we serve (cuGetProcAddress). */
	d->info->driver_version = drv > CUDA_VERSION ? CUDA_VERSION : (uint32_t)drv;
	d->info->ndevices = (uint32_t)n;
	strcpy(d->info->backend, "cuda");
	for (i = 0; i < n; i++) {
		struct axon_device_info *di = &d->info->device[i];
		CUmemAllocationProp prop = {
			.type = CU_MEM_ALLOCATION_TYPE_PINNED,
			.location = { .type = CU_MEM_LOCATION_TYPE_DEVICE, .id = i },
		};
		CUdevice dev;
		size_t mem = 0, g = 0;

		vd.cuDeviceGet(&dev, i);
		vd.cuDeviceGetName(di->name, sizeof(di->name) - 1, dev);
		vd.cuDeviceTotalMem(&mem, dev);
		di->total_mem = mem;
		vd.cuDeviceGetUuid((CUuuid *)di->uuid, dev);
		for (a = 1; a < CU_DEVICE_ATTRIBUTE_MAX && a < AXON_MAX_ATTRIBUTES; a++) {
			int v = 0;

			if (vd.cuDeviceGetAttribute(&v, (CUdevice_attribute)a, dev) == CUDA_SUCCESS)
				di->attr[a] = v;
		}
		/* Memory pools and VMM are served (libcuda-shim/mempool.c,
		 * vmm.c); sharing them between processes is not: say so, so
		 * runtimes do not ask for exportable memory. */
		di->attr[CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED] = 0;
		di->attr[CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES] = 0;
		di->cc_major = (uint32_t)di->attr[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR];
		di->cc_minor = (uint32_t)di->attr[CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR];
		di->pci_domain = (uint32_t)di->attr[CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID];
		di->pci_bus = (uint32_t)di->attr[CU_DEVICE_ATTRIBUTE_PCI_BUS_ID];
		di->pci_device = (uint32_t)di->attr[CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID];
		vd.cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
		di->vmm_granularity = g;
		vd.cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
		di->vmm_granularity_recommended = g;
		cu.dev[i].ordinal = i;
		cu.dev[i].dev = dev;
		cu.dev[i].gran = di->vmm_granularity ? di->vmm_granularity : (2 << 20);
	}
	cu.ndev = n;
	return 0;
}
