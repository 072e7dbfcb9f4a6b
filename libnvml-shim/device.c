// SPDX-License-Identifier: MIT
/*
 * Device queries, each answered from the driver API of axon's
 * libcuda.so.1: most from axond's info page without crossing (names,
 * UUIDs, attributes), free memory by one request to axond.
 *
 * Every query checks, in this order, that NVML is initialised
 * (NVML_ERROR_UNINITIALIZED), that the handle is ours and its pointers are
 * there (NVML_ERROR_INVALID_ARGUMENT), then that buffers are large enough
 * (NVML_ERROR_INSUFFICIENT_SIZE).
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nvml-shim.h"

/* ---- count and handles ------------------------------------------------------ */

/*
 * _v2 counts every device, including those the caller may not open; the
 * original only those it may. Through axon a client may use every device
 * axond publishes to it, so both are the same.
 */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount)
{
	if (nvml_check_init())
		return NVML_ERROR_UNINITIALIZED;
	if (!deviceCount)
		return NVML_ERROR_INVALID_ARGUMENT;
	*deviceCount = nvml_count();
	return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount)
{
	return nvmlDeviceGetCount_v2(deviceCount);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device)
{
	if (nvml_check_init())
		return NVML_ERROR_UNINITIALIZED;
	if (!device || index >= nvml_count())
		return NVML_ERROR_INVALID_ARGUMENT;
	*device = nvml_handle(index);
	return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device)
{
	return nvmlDeviceGetHandleByIndex_v2(index, device);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index)
{
	CUdevice dev;
	nvmlReturn_t r = nvml_device(device, &dev);

	if (r)
		return r;
	if (!index)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned int i = 0; i < nvml_count(); i++) {
		if (nvml_handle(i) == device) {
			*index = i;
			return NVML_SUCCESS;
		}
	}
	return NVML_ERROR_INVALID_ARGUMENT;	/* (nvml_device said it is ours) */
}

/* ---- name and UUID ------------------------------------------------------------ */

NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length)
{
	char buf[256];
	CUdevice dev;
	nvmlReturn_t r = nvml_device(device, &dev);

	if (r)
		return r;
	if (!name)
		return NVML_ERROR_INVALID_ARGUMENT;
	r = nvml_from_cu(cuDeviceGetName(buf, (int)sizeof(buf), dev));
	if (r)
		return r;
	return nvml_copy_string(name, length, buf);
}

/* NVML's text form of the 16 bytes cuDeviceGetUuid answers (the same bytes). */
static nvmlReturn_t uuid_text(CUdevice dev, char buf[NVML_DEVICE_UUID_ASCII_LEN])
{
	CUuuid u;
	const unsigned char *b = (const unsigned char *)u.bytes;
	nvmlReturn_t r = nvml_from_cu(cuDeviceGetUuid(&u, dev));

	if (r)
		return r;
	snprintf(buf, NVML_DEVICE_UUID_ASCII_LEN,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
		 b[12], b[13], b[14], b[15]);
	return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length)
{
	char buf[NVML_DEVICE_UUID_ASCII_LEN];
	CUdevice dev;
	nvmlReturn_t r = nvml_device(device, &dev);

	if (r)
		return r;
	if (!uuid)
		return NVML_ERROR_INVALID_ARGUMENT;
	r = uuid_text(dev, buf);
	if (r)
		return r;
	return nvml_copy_string(uuid, length, buf);
}

/* Hex digits compared without case: a UUID typed in upper case is the same. */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device)
{
	char buf[NVML_DEVICE_UUID_ASCII_LEN];

	if (nvml_check_init())
		return NVML_ERROR_UNINITIALIZED;
	if (!uuid || !device)
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned int i = 0; i < nvml_count(); i++) {
		CUdevice dev;

		if (nvml_device(nvml_handle(i), &dev) || uuid_text(dev, buf))
			continue;
		if (!strcasecmp(uuid, buf)) {
			*device = nvml_handle(i);
			return NVML_SUCCESS;
		}
	}
	return NVML_ERROR_NOT_FOUND;
}

/* ---- PCI ---------------------------------------------------------------------- */

static int hex_field(const char **s, unsigned long max, unsigned int *out)
{
	unsigned long v;
	char *end;

	/* strtoul alone would take spaces, signs and "0x" */
	if (!isxdigit((unsigned char)**s) || ((*s)[0] == '0' && ((*s)[1] | 0x20) == 'x'))
		return -1;
	errno = 0;
	v = strtoul(*s, &end, 16);
	if (errno || v > max)
		return -1;
	*out = (unsigned int)v;
	*s = end;
	return 0;
}

int nvml_parse_pci(const char *s, struct nvml_pci *p)
{
	unsigned int f[3];
	int n = 0;
	bool fn = false;

	for (;;) {
		if (n == 3 || hex_field(&s, 0xffffffffUL, &f[n]))
			return -1;
		n++;
		if (*s != ':')
			break;
		s++;
	}
	p->function = 0;
	if (*s == '.') {
		s++;
		if (hex_field(&s, 7, &p->function))
			return -1;
		fn = true;
	}
	if (*s)
		return -1;
	if (n == 3) {
		p->domain = f[0];
		p->bus = f[1];
		p->device = f[2];
	} else if (n == 2 && fn) {
		p->domain = 0;
		p->bus = f[0];
		p->device = f[1];
	} else {
		return -1;
	}
	return p->bus <= 0xff && p->device <= 0x1f ? 0 : -1;
}

static nvmlReturn_t attr(CUdevice dev, CUdevice_attribute a, int *v)
{
	return nvml_from_cu(cuDeviceGetAttribute(v, a, dev));
}

/* The device's PCI location as the driver API's PCI attributes give it. */
static nvmlReturn_t pci_attrs(CUdevice dev, struct nvml_pci *p)
{
	int domain, bus, device;
	nvmlReturn_t r;

	r = attr(dev, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, &domain);
	if (!r)
		r = attr(dev, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, &bus);
	if (!r)
		r = attr(dev, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, &device);
	if (r)
		return r;
	p->domain = (unsigned int)domain;
	p->bus = (unsigned int)bus;
	p->device = (unsigned int)device;
	p->function = 0;
	return NVML_SUCCESS;
}

/*
 * nvmlPciInfo_t: the numbers from the PCI attributes (what cudart's
 * cudaDeviceProp.pciDomainID/pciBusID/pciDeviceID hold, and so what
 * PyTorch formats and looks up with nvmlDeviceGetHandleByPciBusId_v2); the
 * bus id texts from cuDeviceGetPCIBusId, rewritten in NVML's two formats
 * (the attributes when its text cannot be parsed). The driver API has no
 * PCI device or subsystem id: pciDeviceId holds NVIDIA's vendor id 0x10de
 * with device id 0, pciSubSystemId 0.
 *
 * full = false is nvmlDeviceGetPciInfo "_v1", whose callers may pass
 * NVML's first, 52-byte layout: only the 36 bytes common to both layouts
 * are written (its 16-byte busId is our busIdLegacy).
 */
static nvmlReturn_t pci_info(nvmlDevice_t device, nvmlPciInfo_t *pci, bool full)
{
	struct nvml_pci a, t;
	char text[64];
	CUdevice dev;
	nvmlReturn_t r = nvml_device(device, &dev);

	if (r)
		return r;
	if (!pci)
		return NVML_ERROR_INVALID_ARGUMENT;
	r = pci_attrs(dev, &a);
	if (r)
		return r;
	r = nvml_from_cu(cuDeviceGetPCIBusId(text, (int)sizeof(text), dev));
	if (r)
		return r;
	if (nvml_parse_pci(text, &t))
		t = a;
	snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT,
		 t.domain, t.bus, t.device);
	pci->domain = a.domain;
	pci->bus = a.bus;
	pci->device = a.device;
	pci->pciDeviceId = 0x10de;
	pci->pciSubSystemId = 0;
	if (full)
		snprintf(pci->busId, sizeof(pci->busId), NVML_DEVICE_PCI_BUS_ID_FMT,
			 t.domain, t.bus, t.device);
	return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	return pci_info(device, pci, true);
}

/*
 * Programs built with NVML 8's header call nvmlDeviceGetPciInfo as _v2
 * with the old 52-byte struct (a 16-byte busId, then the numbers and four
 * reserved words): only the first 36 bytes, which both layouts share, are
 * written, or the 32-byte busId would run past the caller's struct.
 */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	return pci_info(device, pci, false);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t *pci)
{
	return pci_info(device, pci, false);
}

/*
 * Matched by domain, bus and device number, so any of NVML's forms (and
 * cuDeviceGetPCIBusId's own text) finds the device; function must be 0.
 */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId,
							  nvmlDevice_t *device)
{
	struct nvml_pci want, a;

	if (nvml_check_init())
		return NVML_ERROR_UNINITIALIZED;
	if (!pciBusId || !device || nvml_parse_pci(pciBusId, &want))
		return NVML_ERROR_INVALID_ARGUMENT;
	for (unsigned int i = 0; i < nvml_count(); i++) {
		CUdevice dev;

		if (nvml_device(nvml_handle(i), &dev) || pci_attrs(dev, &a))
			continue;
		if (a.domain == want.domain && a.bus == want.bus && a.device == want.device &&
		    want.function == 0) {
			*device = nvml_handle(i);
			return NVML_SUCCESS;
		}
	}
	return NVML_ERROR_NOT_FOUND;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device)
{
	return nvmlDeviceGetHandleByPciBusId_v2(pciBusId, device);
}

/* ---- memory --------------------------------------------------------------------- */

/*
 * total is cuDeviceTotalMem. free is cuMemGetInfo's answer, asked in the
 * device's primary context, retained and pushed for the call and popped
 * and released after it, so that the caller's current context (any thread
 * state) is as it was. Two consequences, deliberate:
 *
 *  - free is what axond would still give this client (its share of the
 *    arena, limits included), not the device-wide free memory that NVIDIA's
 *    NVML reports, which would tell a tenant what the others use;
 *  - a process that never used CUDA gets its primary context made in
 *    axond by its first memory query (the shim keeps primary contexts for
 *    the life of the process, and so does NVIDIA's driver once made).
 *
 * used = total - free; nothing is reported as reserved.
 */
static nvmlReturn_t mem_info(nvmlDevice_t device, unsigned long long *total,
			     unsigned long long *free_bytes)
{
	size_t t = 0, f = 0, ctx_total = 0;
	CUcontext ctx, popped;
	CUdevice dev;
	CUresult cr;
	nvmlReturn_t r = nvml_device(device, &dev);

	if (r)
		return r;
	cr = cuDeviceTotalMem(&t, dev);
	if (cr == CUDA_SUCCESS)
		cr = cuDevicePrimaryCtxRetain(&ctx, dev);
	if (cr != CUDA_SUCCESS)
		return nvml_from_cu(cr);
	cr = cuCtxPushCurrent(ctx);
	if (cr == CUDA_SUCCESS) {
		cr = cuMemGetInfo(&f, &ctx_total);
		cuCtxPopCurrent(&popped);
	}
	cuDevicePrimaryCtxRelease(dev);
	if (cr != CUDA_SUCCESS)
		return nvml_from_cu(cr);
	*total = t;
	*free_bytes = f < t ? f : t;
	return NVML_SUCCESS;
}

static nvmlReturn_t memory_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
	unsigned long long total = 0, free_bytes = 0;
	CUdevice dev;
	nvmlReturn_t r = nvml_device(device, &dev);

	if (r)
		return r;
	if (!memory)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (memory->version != nvmlMemory_v2)
		return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
	r = mem_info(device, &total, &free_bytes);
	if (r)
		return r;
	memory->total = total;
	memory->reserved = 0;
	memory->free = free_bytes;
	memory->used = total - free_bytes;
	return NVML_SUCCESS;
}

/* The v1 struct is the v2 one without version and reserved. */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory)
{
	nvmlMemory_v2_t m = { .version = nvmlMemory_v2 };
	nvmlReturn_t r = memory_v2(device, memory ? &m : NULL);

	if (r)
		return r;
	memory->total = m.total;
	memory->free = m.free;
	memory->used = m.used;
	return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory)
{
	return memory_v2(device, memory);
}

/* ---- compute capability, processes ------------------------------------------- */

NVML_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major,
							    int *minor)
{
	CUdevice dev;
	nvmlReturn_t r = nvml_device(device, &dev);

	if (r)
		return r;
	if (!major || !minor)
		return NVML_ERROR_INVALID_ARGUMENT;
	r = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, major);
	if (!r)
		r = attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, minor);
	return r;
}

/*
 * Deliberate isolation: axon does not show one tenant another's processes
 * (their pids, their memory), so the answer is always success with none,
 * whichever of the three layouts the caller passes. NVIDIA's NVML would
 * list every process with a context on the GPU, other containers' too.
 * The calling process itself is not listed either: its own use is what
 * cuMemGetInfo and the memory query above account for. A caller counting
 * first (*infoCount = 0, infos NULL) gets success and 0, as NVML answers
 * when nothing runs.
 */
static nvmlReturn_t no_processes(nvmlDevice_t device, unsigned int *infoCount, const void *infos)
{
	CUdevice dev;
	nvmlReturn_t r = nvml_device(device, &dev);

	if (r)
		return r;
	if (!infoCount || (*infoCount && !infos))
		return NVML_ERROR_INVALID_ARGUMENT;
	*infoCount = 0;
	return NVML_SUCCESS;
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device,
							      unsigned int *infoCount,
							      nvmlProcessInfo_v1_t *infos)
{
	return no_processes(device, infoCount, infos);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
								 unsigned int *infoCount,
								 nvmlProcessInfo_v2_t *infos)
{
	return no_processes(device, infoCount, infos);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
								 unsigned int *infoCount,
								 nvmlProcessInfo_t *infos)
{
	return no_processes(device, infoCount, infos);
}

/* ---- NVLink and fabric: not supported --------------------------------------------- */

/*
 * The driver API has no NVLink or fabric query, and how the host's GPUs
 * are linked is axond's business, not a tenant's: every NVLink and fabric
 * query answers as on a GPU without NVLink, NVML_ERROR_NOT_SUPPORTED.
 * PyTorch reads that as "no NVLink peers" and "no multicast fabric".
 */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
						  nvmlEnableState_t *isActive)
{
	(void)link;
	NVML_UNSUPPORTED_QUERY(device, isActive);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link,
							     nvmlIntNvLinkDeviceType_t *type)
{
	(void)link;
	NVML_UNSUPPORTED_QUERY(device, type);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
							     nvmlPciInfo_t *pci)
{
	(void)link;
	NVML_UNSUPPORTED_QUERY(device, pci);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device,
						    nvmlGpuFabricInfo_t *gpuFabricInfo)
{
	NVML_UNSUPPORTED_QUERY(device, gpuFabricInfo);
}

/* (the version word is not checked: there is no struct version we fill) */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device,
						     nvmlGpuFabricInfoV_t *gpuFabricInfo)
{
	NVML_UNSUPPORTED_QUERY(device, gpuFabricInfo);
}

/* ---- sensors and clocks ------------------------------------------------------------ */

/*
 * Utilisation, temperature and power are read from the GPU's counters by
 * NVIDIA's driver; the driver API has none of them, and axond does not
 * forward them (a tenant's utilisation would include the others' work):
 * NVML_ERROR_NOT_SUPPORTED.
 */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
						       nvmlUtilization_t *utilization)
{
	NVML_UNSUPPORTED_QUERY(device, utilization);
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device,
						  nvmlTemperatureSensors_t sensorType,
						  unsigned int *temp)
{
	CUdevice dev;
	nvmlReturn_t r = nvml_device(device, &dev);

	if (r)
		return r;
	if (!temp || (unsigned int)sensorType >= NVML_TEMPERATURE_COUNT)
		return NVML_ERROR_INVALID_ARGUMENT;
	NVML_NOT_SUPPORTED();
}

NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power)
{
	NVML_UNSUPPORTED_QUERY(device, power);
}

/*
 * The current clocks change with load and power state and only NVIDIA's
 * driver reads them; the driver API knows the rated clocks only
 * (CU_DEVICE_ATTRIBUTE_CLOCK_RATE, the SM's, and MEMORY_CLOCK_RATE, in
 * kHz). Passing those off as current readings would mislead a monitor
 * (NVML itself says current clocks differ from the maximum), so
 * nvmlDeviceGetClockInfo answers NVML_ERROR_NOT_SUPPORTED.
 */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
						unsigned int *clock)
{
	CUdevice dev;
	nvmlReturn_t r = nvml_device(device, &dev);

	if (r)
		return r;
	if (!clock || (unsigned int)type >= NVML_CLOCK_COUNT)
		return NVML_ERROR_INVALID_ARGUMENT;
	NVML_NOT_SUPPORTED();
}

/*
 * The maximum clocks are the rated ones: graphics and SM from CLOCK_RATE
 * (one clock domain on NVIDIA's compute GPUs), memory from
 * MEMORY_CLOCK_RATE, in MHz; video has no attribute. A rate of 0 (a
 * backend that does not know it) is not an answer: NOT_SUPPORTED.
 */
NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
						   unsigned int *clock)
{
	CUdevice_attribute a;
	CUdevice dev;
	int khz = 0;
	nvmlReturn_t r = nvml_device(device, &dev);

	if (r)
		return r;
	if (!clock || (unsigned int)type >= NVML_CLOCK_COUNT)
		return NVML_ERROR_INVALID_ARGUMENT;
	switch (type) {
	case NVML_CLOCK_GRAPHICS:
	case NVML_CLOCK_SM:
		a = CU_DEVICE_ATTRIBUTE_CLOCK_RATE;
		break;
	case NVML_CLOCK_MEM:
		a = CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE;
		break;
	default:
		NVML_NOT_SUPPORTED();
	}
	r = attr(dev, a, &khz);
	if (r)
		return r;
	if (khz <= 0)
		NVML_NOT_SUPPORTED();
	*clock = (unsigned int)khz / 1000;
	return NVML_SUCCESS;
}
