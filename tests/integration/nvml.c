// SPDX-License-Identifier: MIT
/*
 * nvml - a client of axon's libnvidia-ml.so.1 (linked against it and our
 * libcuda.so.1, both found in $(BUILD)/lib through the rpath), run by
 * integration-nvml against a private axond. Each part runs in a process of
 * its own, so that "before init" really is before any init:
 *
 *   nvml uninit | init | identity | pci | memory | procs | refuse |
 *        unsupported | errors | exports | nodaemon | hold
 *
 * uninit       every call that needs init answers UNINITIALIZED before the
 *              first nvmlInit and after the last nvmlShutdown (a handle
 *              from before included); those that need none answer
 * init         nvmlInit/_v2/WithFlags count, nvmlShutdown counts down,
 *              one more shutdown is UNINITIALIZED
 * identity     count 1 = cuDeviceGetCount; name, UUID, compute capability
 *              and CUDA version as the driver API answers them; the UUID
 *              finds the handle again
 * pci          nvmlPciInfo_t against cuDeviceGetPCIBusId and the PCI
 *              attributes; every form of the bus id finds the same handle;
 *              "_v1" writes only the 36 bytes of NVML's first layout
 * memory       total = cuDeviceTotalMem, used = total - free, _v2 and its
 *              version check; the caller's current context is untouched
 * procs        success with 0 processes, in every layout, while this
 *              process holds device memory
 * refuse       forged handles, NULL pointers, bad indices and short
 *              buffers are refused with NVML's codes, never a crash
 * unsupported  NVLink, fabric, sensors and current clocks answer
 *              NOT_SUPPORTED, logged once per name only with AXON_LOG set;
 *              the maximum clocks are the rated ones
 * errors       nvmlErrorString's texts
 * exports      the library's ELF: only nvml* names exported, all of ours;
 *              SONAME, NEEDED libcuda.so.1, RPATH $ORIGIN
 * nodaemon     (AXON_ADDR naming no daemon) init answers DRIVER_NOT_LOADED,
 *              or success with 0 devices when asked to start without GPUs
 * hold         init, a memory query, then "holding" on stdout until
 *              SIGUSR1 (the test looks at the daemon's stats meanwhile)
 *
 * Every part ends with the isolation check: no /dev/nvidia* descriptor or
 * mapping, and the only libnvidia-ml and libcuda mapped are ours.
 * Exit 0 pass, 1 fail (the first failure, on stderr).
 */
#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cuclient.h"
#include "nvml-abi.h"

#define NV_EQ(call, want)						\
	do {								\
		nvmlReturn_t nv_r_ = (call);				\
		if (nv_r_ != (want))					\
			cu_fail("%s:%d: %s returned %d (%s), expected %d (%s)", \
				__FILE__, __LINE__, #call, (int)nv_r_,	\
				nvmlErrorString(nv_r_), (int)(want),	\
				nvmlErrorString(want));			\
	} while (0)
#define NV_OK(call)	NV_EQ(call, NVML_SUCCESS)
#define CHECKF(cond, fmt, ...)						\
	do {								\
		if (!(cond))						\
			cu_fail("%s:%d: %s: " fmt, __FILE__, __LINE__, #cond, \
				##__VA_ARGS__);				\
	} while (0)

static nvmlDevice_t dev0;

static void init_one(void)
{
	unsigned int n = 0;

	NV_OK(nvmlInit_v2());
	NV_OK(nvmlDeviceGetCount_v2(&n));
	CHECKF(n >= 1, "%u devices", n);
	NV_OK(nvmlDeviceGetHandleByIndex_v2(0, &dev0));
}

/* ---- isolation -------------------------------------------------------------- */

static const char *lib_dir(void)
{
	static char dir[PATH_MAX];
	char *slash;

	if (!realpath(cu_driver_path(), dir))
		cu_fail("realpath %s: %s", cu_driver_path(), strerror(errno));
	slash = strrchr(dir, '/');
	*slash = '\0';
	return dir;
}

/* The file our NVML was loaded from: libnvidia-ml.so.1 beside our shim. */
static const char *nvml_path(void)
{
	static char path[PATH_MAX];
	char want[PATH_MAX + 32];
	Dl_info info;

	CHECKF(dladdr((void *)nvmlInit_v2, &info) && info.dli_fname, "dladdr(nvmlInit_v2)");
	CHECKF(realpath(info.dli_fname, path), "realpath %s", info.dli_fname);
	snprintf(want, sizeof(want), "%s/libnvidia-ml.so.1", lib_dir());
	CHECKF(!strcmp(path, want), "NVML loaded from %s, not %s", path, want);
	return path;
}

static void check_isolation(void)
{
	char line[PATH_MAX + 256], target[PATH_MAX], shim[PATH_MAX];
	const char *nvml = nvml_path();
	bool saw_nvml = false;
	struct dirent *de;
	FILE *f;
	DIR *d;

	CHECKF(realpath(cu_driver_path(), shim), "realpath %s", cu_driver_path());
	f = fopen("/proc/self/maps", "re");
	CHECKF(f, "/proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		char *p = strchr(line, '/');
		const char *base;

		if (!p)
			continue;
		p[strcspn(p, "\n")] = '\0';
		CHECKF(strncmp(p, "/dev/nvidia", 11), "maps a GPU device node: %s", p);
		base = strrchr(p, '/') + 1;
		if (!strncmp(base, "libnvidia-ml", 12)) {
			CHECKF(!strcmp(p, nvml), "maps a libnvidia-ml not axon's: %s", p);
			saw_nvml = true;
		}
		if (!strncmp(base, "libcuda.so", 10))
			CHECKF(!strcmp(p, shim), "maps a libcuda not axon's: %s", p);
	}
	fclose(f);
	CHECKF(saw_nvml, "%s is not mapped", nvml);

	d = opendir("/proc/self/fd");
	CHECKF(d, "/proc/self/fd: %s", strerror(errno));
	while ((de = readdir(d))) {
		ssize_t n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);

		if (n <= 0)
			continue;
		target[n] = '\0';
		CHECKF(strncmp(target, "/dev/nvidia", 11), "fd %s on a GPU device node: %s",
		       de->d_name, target);
	}
	closedir(d);
}

/* ---- parts --------------------------------------------------------------------- */

static void part_uninit(void)
{
	nvmlDevice_t h = NULL, fake = (nvmlDevice_t)&h;
	char buf[128];
	unsigned int n = 7, idx;
	nvmlPciInfo_t pci;
	nvmlMemory_t mem;
	int v = 0;

	NV_EQ(nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
	NV_EQ(nvmlDeviceGetCount(&n), NVML_ERROR_UNINITIALIZED);
	CHECKF(n == 7, "count written before init: %u", n);
	NV_EQ(nvmlDeviceGetHandleByIndex_v2(0, &h), NVML_ERROR_UNINITIALIZED);
	NV_EQ(nvmlDeviceGetHandleByUUID("GPU-00000000-0000-0000-0000-000000000000", &h),
	      NVML_ERROR_UNINITIALIZED);
	NV_EQ(nvmlDeviceGetHandleByPciBusId_v2("00000000:00:00.0", &h), NVML_ERROR_UNINITIALIZED);
	NV_EQ(nvmlSystemGetDriverVersion(buf, sizeof(buf)), NVML_ERROR_UNINITIALIZED);
	/* Any handle, forged or NULL: not looked at before init. */
	NV_EQ(nvmlDeviceGetName(fake, buf, sizeof(buf)), NVML_ERROR_UNINITIALIZED);
	NV_EQ(nvmlDeviceGetUUID(NULL, buf, sizeof(buf)), NVML_ERROR_UNINITIALIZED);
	NV_EQ(nvmlDeviceGetPciInfo_v3(fake, &pci), NVML_ERROR_UNINITIALIZED);
	NV_EQ(nvmlDeviceGetMemoryInfo(fake, &mem), NVML_ERROR_UNINITIALIZED);
	NV_EQ(nvmlDeviceGetIndex(fake, &idx), NVML_ERROR_UNINITIALIZED);
	NV_EQ(nvmlDeviceGetComputeRunningProcesses_v3(fake, &n, NULL), NVML_ERROR_UNINITIALIZED);
	NV_EQ(nvmlDeviceGetTemperature(fake, NVML_TEMPERATURE_GPU, &idx),
	      NVML_ERROR_UNINITIALIZED);
	NV_EQ(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
	/* What needs no init, in NVML as here. */
	CHECKF(!strcmp(nvmlErrorString(NVML_ERROR_UNINITIALIZED), "Uninitialized"), "text");
	NV_OK(nvmlSystemGetNVMLVersion(buf, sizeof(buf)));
	NV_OK(nvmlSystemGetCudaDriverVersion_v2(&v));
	CHECKF(v > 0, "CUDA driver version %d", v);

	/* After the last shutdown the old handle is refused the same way. */
	init_one();
	NV_OK(nvmlDeviceGetName(dev0, buf, sizeof(buf)));
	NV_OK(nvmlShutdown());
	NV_EQ(nvmlDeviceGetName(dev0, buf, sizeof(buf)), NVML_ERROR_UNINITIALIZED);
	NV_EQ(nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
	printf("nvml: uninit: refused before init and after shutdown\n");
}

static void part_init(void)
{
	unsigned int n;

	NV_OK(nvmlInit());
	NV_OK(nvmlInit_v2());
	NV_OK(nvmlInitWithFlags(0));
	NV_OK(nvmlInitWithFlags(NVML_INIT_FLAG_NO_GPUS | NVML_INIT_FLAG_NO_ATTACH));
	for (int left = 3; left >= 0; left--) {
		NV_OK(nvmlDeviceGetCount_v2(&n));
		NV_OK(nvmlShutdown());
		if (left)
			NV_OK(nvmlDeviceGetCount_v2(&n));
	}
	NV_EQ(nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
	NV_EQ(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
	/* And again from zero. */
	init_one();
	NV_OK(nvmlShutdown());
	NV_EQ(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
	init_one();		/* (left initialised: the isolation check needs it loaded) */
	printf("nvml: init: 4 inits, 4 shutdowns, the 5th refused\n");
}

static void uuid_of(CUdevice d, char *buf, size_t size)
{
	CUuuid u;
	const unsigned char *b = (const unsigned char *)u.bytes;

	CK(cuDeviceGetUuid(&u, d));
	snprintf(buf, size, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
		 b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

static void part_identity(void)
{
	char name[NVML_DEVICE_NAME_V2_BUFFER_SIZE], cuname[256];
	char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE], want[64], drv[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	int cucount = 0, major, minor, cumajor, cuminor, v = 0, cuv = 0;
	unsigned int n = 0, idx = 99;
	nvmlDevice_t h;
	CUdevice d;

	init_one();
	CK(cuInit(0));
	CK(cuDeviceGetCount(&cucount));
	NV_OK(nvmlDeviceGetCount_v2(&n));
	CHECKF(n == 1 && cucount == 1, "NVML counts %u, CUDA %d (the sim has 1)", n, cucount);
	NV_OK(nvmlDeviceGetCount(&n));
	CHECKF(n == 1, "nvmlDeviceGetCount %u", n);
	CK(cuDeviceGet(&d, 0));
	NV_OK(nvmlDeviceGetHandleByIndex(0, &h));
	CHECKF(h == dev0, "v1 and v2 handles of index 0 differ");
	NV_OK(nvmlDeviceGetIndex(dev0, &idx));
	CHECKF(idx == 0, "index %u", idx);

	NV_OK(nvmlDeviceGetName(dev0, name, sizeof(name)));
	CK(cuDeviceGetName(cuname, sizeof(cuname), d));
	CHECKF(!strcmp(name, cuname), "name '%s', cuDeviceGetName '%s'", name, cuname);

	NV_OK(nvmlDeviceGetUUID(dev0, uuid, sizeof(uuid)));
	uuid_of(d, want, sizeof(want));
	CHECKF(!strcmp(uuid, want), "UUID %s, cuDeviceGetUuid %s", uuid, want);
	printf("nvml: identity: %s %s\n", name, uuid);
	CHECKF(strlen(uuid) == NVML_DEVICE_UUID_ASCII_LEN - 1, "UUID length %zu", strlen(uuid));
	NV_OK(nvmlDeviceGetHandleByUUID(uuid, &h));
	CHECKF(h == dev0, "the UUID finds another handle");
	for (char *p = uuid; *p; p++)
		*p = (char)(*p >= 'a' && *p <= 'f' ? *p - 'a' + 'A' : *p);
	NV_OK(nvmlDeviceGetHandleByUUID(uuid, &h));
	CHECKF(h == dev0, "the upper-case UUID finds another handle");
	uuid[strlen(uuid) - 1] = uuid[strlen(uuid) - 1] == '0' ? '1' : '0';
	NV_EQ(nvmlDeviceGetHandleByUUID(uuid, &h), NVML_ERROR_NOT_FOUND);
	NV_EQ(nvmlDeviceGetHandleByUUID("MIG-whatever", &h), NVML_ERROR_NOT_FOUND);

	NV_OK(nvmlDeviceGetCudaComputeCapability(dev0, &major, &minor));
	CK(cuDeviceGetAttribute(&cumajor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d));
	CK(cuDeviceGetAttribute(&cuminor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d));
	CHECKF(major == cumajor && minor == cuminor, "cc %d.%d, CUDA %d.%d", major, minor,
	       cumajor, cuminor);

	CK(cuDriverGetVersion(&cuv));
	NV_OK(nvmlSystemGetCudaDriverVersion(&v));
	CHECKF(v == cuv, "CUDA driver version %d, cuDriverGetVersion %d", v, cuv);
	NV_OK(nvmlSystemGetCudaDriverVersion_v2(&v));
	CHECKF(v == cuv, "_v2: %d, cuDriverGetVersion %d", v, cuv);
	NV_OK(nvmlSystemGetDriverVersion(drv, sizeof(drv)));
	snprintf(want, sizeof(want), "%d.%d", cuv / 1000, cuv % 1000 / 10);
	CHECKF(!strcmp(drv, want), "driver version '%s', want '%s'", drv, want);
	NV_OK(nvmlSystemGetNVMLVersion(drv, sizeof(drv)));
	printf("nvml: identity: cc %d.%d, driver %s, NVML %s\n", major, minor, want, drv);
}

static int attr(CUdevice_attribute a, CUdevice d)
{
	int v = -1;

	CK(cuDeviceGetAttribute(&v, a, d));
	return v;
}

static void part_pci(void)
{
	unsigned int domain, bus, device, function;
	char cubus[64], text[64];
	nvmlPciInfo_t pci, v1;
	nvmlDevice_t h;
	CUdevice d;

	init_one();
	CK(cuDeviceGet(&d, 0));
	CK(cuDeviceGetPCIBusId(cubus, sizeof(cubus), d));
	CHECKF(sscanf(cubus, "%x:%x:%x.%x", &domain, &bus, &device, &function) == 4,
	       "cuDeviceGetPCIBusId: '%s'", cubus);

	memset(&pci, 0xa5, sizeof(pci));
	NV_OK(nvmlDeviceGetPciInfo_v3(dev0, &pci));
	CHECKF(pci.domain == (unsigned int)attr(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, d) &&
	       pci.bus == (unsigned int)attr(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, d) &&
	       pci.device == (unsigned int)attr(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, d),
	       "PCI %x:%x:%x against the attributes", pci.domain, pci.bus, pci.device);
	CHECKF(pci.domain == domain && pci.bus == bus && pci.device == device,
	       "PCI %x:%x:%x against cuDeviceGetPCIBusId %s", pci.domain, pci.bus, pci.device,
	       cubus);
	snprintf(text, sizeof(text), NVML_DEVICE_PCI_BUS_ID_FMT, domain, bus, device);
	CHECKF(!strcmp(pci.busId, text), "busId '%s', want '%s'", pci.busId, text);
	snprintf(text, sizeof(text), NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT, domain, bus, device);
	CHECKF(!strcmp(pci.busIdLegacy, text), "busIdLegacy '%s', want '%s'", pci.busIdLegacy,
	       text);
	CHECKF((pci.pciDeviceId & 0xffff) == 0x10de, "pciDeviceId %#x", pci.pciDeviceId);

	memset(&v1, 0xa5, sizeof(v1));
	NV_OK(nvmlDeviceGetPciInfo_v2(dev0, &v1));
	CHECKF(!memcmp(&v1, &pci, offsetof(nvmlPciInfo_t, busId)), "_v2's first 36 bytes");
	/* NVML 8's struct ends 16 bytes after them: nothing past it. */
	for (size_t b = offsetof(nvmlPciInfo_t, busId) + 16; b < sizeof(v1); b++)
		CHECKF(((unsigned char *)&v1)[b] == 0xa5, "_v2 wrote byte %zu", b);
	memset(&v1, 0xa5, sizeof(v1));
	NV_OK(nvmlDeviceGetPciInfo(dev0, &v1));
	CHECKF(!memcmp(&v1, &pci, offsetof(nvmlPciInfo_t, busId)), "_v1's first 36 bytes");
	for (size_t i = offsetof(nvmlPciInfo_t, busId); i < sizeof(v1); i++)
		CHECKF(((unsigned char *)&v1)[i] == 0xa5, "_v1 wrote byte %zu", i);

	/*
	 * Every form finds the same device: NVML's, the legacy one, the
	 * driver's own text, PyTorch's (upper case from cudaDeviceProp), and
	 * the short forms NVML documents.
	 */
	{
		char forms[6][64];

		snprintf(forms[0], 64, "%s", pci.busId);
		snprintf(forms[1], 64, "%s", pci.busIdLegacy);
		snprintf(forms[2], 64, "%s", cubus);
		snprintf(forms[3], 64, "%08X:%02X:%02X.0", domain, bus, device);
		snprintf(forms[4], 64, "%x:%x:%x", domain, bus, device);
		snprintf(forms[5], 64, "%x:%x.0", bus, device);
		for (int i = 0; i < 6; i++) {
			if (i == 5 && domain)
				continue;	/* (bus:device.function means domain 0) */
			h = NULL;
			NV_OK(nvmlDeviceGetHandleByPciBusId_v2(forms[i], &h));
			CHECKF(h == dev0, "'%s' finds another handle", forms[i]);
			h = NULL;
			NV_OK(nvmlDeviceGetHandleByPciBusId(forms[i], &h));
			CHECKF(h == dev0, "v1: '%s' finds another handle", forms[i]);
		}
	}
	snprintf(text, sizeof(text), NVML_DEVICE_PCI_BUS_ID_FMT, domain, bus ^ 1, device);
	NV_EQ(nvmlDeviceGetHandleByPciBusId_v2(text, &h), NVML_ERROR_NOT_FOUND);
	snprintf(text, sizeof(text), "%08X:%02X:%02X.1", domain, bus, device);
	NV_EQ(nvmlDeviceGetHandleByPciBusId_v2(text, &h), NVML_ERROR_NOT_FOUND);
	NV_EQ(nvmlDeviceGetHandleByPciBusId_v2("garbage", &h), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetHandleByPciBusId_v2("0:0:0:0.0", &h), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetHandleByPciBusId_v2("0000:100:00.0", &h), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetHandleByPciBusId_v2(" 0:0:0.0", &h), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetHandleByPciBusId_v2(pci.busId, NULL), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetHandleByPciBusId_v2(NULL, &h), NVML_ERROR_INVALID_ARGUMENT);
	printf("nvml: pci: %s (legacy %s, driver %s)\n", pci.busId, pci.busIdLegacy, cubus);
}

static void part_memory(void)
{
	unsigned long long mib = 1ULL << 20;
	CUcontext mine, cur;
	nvmlMemory_v2_t m2;
	nvmlMemory_t m;
	CUdeviceptr p;
	size_t total;
	CUdevice d;

	init_one();
	CK(cuInit(0));
	CK(cuDeviceGet(&d, 0));
	CK(cuDeviceTotalMem(&total, d));

	/* Before this process has any context: the primary one is made. */
	NV_OK(nvmlDeviceGetMemoryInfo(dev0, &m));
	CHECKF(m.total == total, "total %llu, cuDeviceTotalMem %zu", m.total, total);
	CHECKF(m.free <= m.total && m.used == m.total - m.free, "free %llu used %llu total %llu",
	       m.free, m.used, m.total);
	CK(cuCtxGetCurrent(&cur));
	CHECKF(cur == NULL, "the query left a context current");

	/* With a context of the caller's current: still current after it. */
	CK(cuCtxCreate(&mine, NULL, 0, d));
	CK(cuMemAlloc(&p, 64 * mib));
	NV_OK(nvmlDeviceGetMemoryInfo(dev0, &m));
	CK(cuCtxGetCurrent(&cur));
	CHECKF(cur == mine, "the query changed the current context");
	CHECKF(m.total == total && m.free <= m.total && m.used == m.total - m.free,
	       "free %llu used %llu total %llu", m.free, m.used, m.total);

	memset(&m2, 0, sizeof(m2));
	m2.version = nvmlMemory_v2;
	NV_OK(nvmlDeviceGetMemoryInfo_v2(dev0, &m2));
	CHECKF(m2.total == total && m2.reserved == 0 && m2.free <= m2.total &&
	       m2.used == m2.total - m2.free, "v2: free %llu used %llu total %llu",
	       m2.free, m2.used, m2.total);
	m2.version = 1U << 24 | (unsigned int)sizeof(m2);
	NV_EQ(nvmlDeviceGetMemoryInfo_v2(dev0, &m2), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	m2.version = 0;
	NV_EQ(nvmlDeviceGetMemoryInfo_v2(dev0, &m2), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
	NV_EQ(nvmlDeviceGetMemoryInfo(dev0, NULL), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetMemoryInfo_v2(dev0, NULL), NVML_ERROR_INVALID_ARGUMENT);
	CK(cuMemFree(p));
	CK(cuCtxDestroy(mine));
	printf("nvml: memory: total %llu MiB, free %llu MiB\n", m.total / mib, m.free / mib);
}

static void part_procs(void)
{
	nvmlProcessInfo_v1_t p1[8];
	nvmlProcessInfo_v2_t p2[8];
	nvmlProcessInfo_t p3[8];
	unsigned int n;
	CUcontext ctx;
	CUdeviceptr p;
	CUdevice d;

	init_one();
	/* This process holds a context and memory: NVIDIA's NVML would list it. */
	CK(cuInit(0));
	CK(cuDeviceGet(&d, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, d));
	CK(cuMemAlloc(&p, 1 << 20));

	n = 8;
	NV_OK(nvmlDeviceGetComputeRunningProcesses(dev0, &n, p1));
	CHECKF(n == 0, "v1: %u processes", n);
	n = 8;
	NV_OK(nvmlDeviceGetComputeRunningProcesses_v2(dev0, &n, p2));
	CHECKF(n == 0, "v2: %u processes", n);
	n = 8;
	NV_OK(nvmlDeviceGetComputeRunningProcesses_v3(dev0, &n, p3));
	CHECKF(n == 0, "v3: %u processes", n);
	n = 0;
	NV_OK(nvmlDeviceGetComputeRunningProcesses_v3(dev0, &n, NULL));
	CHECKF(n == 0, "counting: %u processes", n);
	NV_EQ(nvmlDeviceGetComputeRunningProcesses_v3(dev0, NULL, p3), NVML_ERROR_INVALID_ARGUMENT);
	n = 8;
	NV_EQ(nvmlDeviceGetComputeRunningProcesses_v3(dev0, &n, NULL),
	      NVML_ERROR_INVALID_ARGUMENT);
	CK(cuMemFree(p));
	CK(cuCtxDestroy(ctx));
	printf("nvml: procs: 0 listed, in every layout\n");
}

static void part_refuse(void)
{
	char buf[128], name[256];
	int local, *heap = malloc(64);
	nvmlDevice_t h, last, forged[11];
	unsigned int n = 0, idx, u, nf = 0;
	nvmlMemory_t mem;
	nvmlPciInfo_t pci;
	int a, b;

	init_one();
	NV_OK(nvmlDeviceGetCount_v2(&n));
	NV_OK(nvmlDeviceGetHandleByIndex_v2(n - 1, &last));
	/*
	 * Pointers to anything, and addresses around our handles that none of
	 * them is (past the last one, before the first, inside one).
	 */
	forged[nf++] = NULL;
	forged[nf++] = (nvmlDevice_t)(uintptr_t)1;
	forged[nf++] = (nvmlDevice_t)(uintptr_t)-1;
	forged[nf++] = (nvmlDevice_t)&local;
	forged[nf++] = (nvmlDevice_t)heap;
	forged[nf++] = (nvmlDevice_t)((char *)last + 1);
	forged[nf++] = (nvmlDevice_t)((char *)last + 4);
	forged[nf++] = (nvmlDevice_t)((char *)last + 8);
	forged[nf++] = (nvmlDevice_t)((char *)last + 4096);
	forged[nf++] = (nvmlDevice_t)((char *)dev0 - 1);
	forged[nf++] = (nvmlDevice_t)((char *)dev0 - 8);
	for (unsigned int i = 0; i < nf; i++) {
		nvmlDevice_t f = forged[i];

		NV_EQ(nvmlDeviceGetName(f, buf, sizeof(buf)), NVML_ERROR_INVALID_ARGUMENT);
		NV_EQ(nvmlDeviceGetUUID(f, buf, sizeof(buf)), NVML_ERROR_INVALID_ARGUMENT);
		NV_EQ(nvmlDeviceGetIndex(f, &idx), NVML_ERROR_INVALID_ARGUMENT);
		NV_EQ(nvmlDeviceGetPciInfo_v3(f, &pci), NVML_ERROR_INVALID_ARGUMENT);
		NV_EQ(nvmlDeviceGetMemoryInfo(f, &mem), NVML_ERROR_INVALID_ARGUMENT);
		NV_EQ(nvmlDeviceGetCudaComputeCapability(f, &a, &b), NVML_ERROR_INVALID_ARGUMENT);
		u = 0;
		NV_EQ(nvmlDeviceGetComputeRunningProcesses(f, &u, NULL),
		      NVML_ERROR_INVALID_ARGUMENT);
		NV_EQ(nvmlDeviceGetNvLinkState(f, 0, (nvmlEnableState_t *)&u),
		      NVML_ERROR_INVALID_ARGUMENT);
		NV_EQ(nvmlDeviceGetTemperature(f, NVML_TEMPERATURE_GPU, &u),
		      NVML_ERROR_INVALID_ARGUMENT);
		NV_EQ(nvmlDeviceGetMaxClockInfo(f, NVML_CLOCK_SM, &u), NVML_ERROR_INVALID_ARGUMENT);
	}
	free(heap);

	/* Indices, NULL results */
	NV_EQ(nvmlDeviceGetHandleByIndex_v2(n, &h), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetHandleByIndex_v2(~0U, &h), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetHandleByIndex_v2(0, NULL), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetCount_v2(NULL), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetHandleByUUID(NULL, &h), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetName(dev0, NULL, 64), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetUUID(dev0, NULL, 96), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetIndex(dev0, NULL), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetPciInfo_v3(dev0, NULL), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetCudaComputeCapability(dev0, &a, NULL), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlSystemGetDriverVersion(NULL, 80), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlSystemGetNVMLVersion(NULL, 80), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlSystemGetCudaDriverVersion(NULL), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlSystemGetCudaDriverVersion_v2(NULL), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetTemperature(dev0, NVML_TEMPERATURE_COUNT, &u),
	      NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetMaxClockInfo(dev0, NVML_CLOCK_COUNT, &u), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetClockInfo(dev0, NVML_CLOCK_SM, NULL), NVML_ERROR_INVALID_ARGUMENT);

	/* Buffers one byte short of the text and its NUL; then exactly enough. */
	NV_OK(nvmlDeviceGetName(dev0, name, sizeof(name)));
	memset(buf, 'x', sizeof(buf));
	NV_EQ(nvmlDeviceGetName(dev0, buf, (unsigned int)strlen(name)),
	      NVML_ERROR_INSUFFICIENT_SIZE);
	NV_EQ(nvmlDeviceGetName(dev0, buf, 0), NVML_ERROR_INSUFFICIENT_SIZE);
	CHECKF(buf[0] == 'x', "a refused name was written");
	NV_OK(nvmlDeviceGetName(dev0, buf, (unsigned int)strlen(name) + 1));
	NV_EQ(nvmlDeviceGetUUID(dev0, buf, NVML_DEVICE_UUID_ASCII_LEN - 1),
	      NVML_ERROR_INSUFFICIENT_SIZE);
	NV_OK(nvmlDeviceGetUUID(dev0, buf, NVML_DEVICE_UUID_ASCII_LEN));
	NV_OK(nvmlSystemGetDriverVersion(name, sizeof(name)));
	NV_EQ(nvmlSystemGetDriverVersion(buf, (unsigned int)strlen(name)),
	      NVML_ERROR_INSUFFICIENT_SIZE);
	NV_OK(nvmlSystemGetDriverVersion(buf, (unsigned int)strlen(name) + 1));
	NV_OK(nvmlSystemGetNVMLVersion(name, sizeof(name)));
	NV_EQ(nvmlSystemGetNVMLVersion(buf, (unsigned int)strlen(name)),
	      NVML_ERROR_INSUFFICIENT_SIZE);
	NV_EQ(nvmlSystemGetNVMLVersion(buf, 1), NVML_ERROR_INSUFFICIENT_SIZE);
	printf("nvml: refuse: %u forged handles, NULLs and short buffers refused\n", nf);
}

/* Runs fn with stderr going to a file; returns what it wrote. */
static const char *stderr_of(void (*fn)(void))
{
	static char out[4096];
	char path[] = "/tmp/axon-nvml-XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	ssize_t n;

	CHECKF(fd >= 0 && saved >= 0, "mkstemp/dup: %s", strerror(errno));
	unlink(path);
	fflush(stderr);
	dup2(fd, 2);
	fn();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, out, sizeof(out) - 1, 0);
	close(fd);
	out[n > 0 ? n : 0] = '\0';
	return out;
}

/* (results checked once stderr is back, so that a failure is seen) */
static nvmlReturn_t logged_r[2];

static void temperature_twice(void)
{
	unsigned int t;

	logged_r[0] = nvmlDeviceGetTemperature(dev0, NVML_TEMPERATURE_GPU, &t);
	logged_r[1] = nvmlDeviceGetTemperature(dev0, NVML_TEMPERATURE_GPU, &t);
}

static void power_twice(void)
{
	unsigned int p;

	logged_r[0] = nvmlDeviceGetPowerUsage(dev0, &p);
	logged_r[1] = nvmlDeviceGetPowerUsage(dev0, &p);
}

static const char *logged(void (*fn)(void))
{
	const char *err = stderr_of(fn);

	NV_EQ(logged_r[0], NVML_ERROR_NOT_SUPPORTED);
	NV_EQ(logged_r[1], NVML_ERROR_NOT_SUPPORTED);
	return err;
}

static void part_unsupported(void)
{
	nvmlIntNvLinkDeviceType_t type;
	nvmlEnableState_t state;
	nvmlUtilization_t util;
	nvmlPciInfo_t pci;
	unsigned int u = 0;
	const char *err;
	CUdevice d;
	int khz;

	init_one();
	CK(cuDeviceGet(&d, 0));
	for (unsigned int link = 0; link < NVML_NVLINK_MAX_LINKS; link++) {
		NV_EQ(nvmlDeviceGetNvLinkState(dev0, link, &state), NVML_ERROR_NOT_SUPPORTED);
		NV_EQ(nvmlDeviceGetNvLinkRemoteDeviceType(dev0, link, &type),
		      NVML_ERROR_NOT_SUPPORTED);
		NV_EQ(nvmlDeviceGetNvLinkRemotePciInfo_v2(dev0, link, &pci),
		      NVML_ERROR_NOT_SUPPORTED);
	}
	/* (the structs are never touched: any non-NULL pointer will do) */
	NV_EQ(nvmlDeviceGetGpuFabricInfo(dev0, (nvmlGpuFabricInfo_t *)&pci),
	      NVML_ERROR_NOT_SUPPORTED);
	NV_EQ(nvmlDeviceGetGpuFabricInfoV(dev0, (nvmlGpuFabricInfoV_t *)&pci),
	      NVML_ERROR_NOT_SUPPORTED);
	NV_EQ(nvmlDeviceGetUtilizationRates(dev0, &util), NVML_ERROR_NOT_SUPPORTED);
	for (int c = 0; c < NVML_CLOCK_COUNT; c++)
		NV_EQ(nvmlDeviceGetClockInfo(dev0, (nvmlClockType_t)c, &u),
		      NVML_ERROR_NOT_SUPPORTED);

	khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, d);
	if (khz > 0) {
		NV_OK(nvmlDeviceGetMaxClockInfo(dev0, NVML_CLOCK_SM, &u));
		CHECKF(u == (unsigned int)khz / 1000, "SM max %u MHz, CLOCK_RATE %d kHz", u, khz);
		NV_OK(nvmlDeviceGetMaxClockInfo(dev0, NVML_CLOCK_GRAPHICS, &u));
		CHECKF(u == (unsigned int)khz / 1000, "graphics max %u MHz", u);
	}
	khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, d);
	if (khz > 0) {
		NV_OK(nvmlDeviceGetMaxClockInfo(dev0, NVML_CLOCK_MEM, &u));
		CHECKF(u == (unsigned int)khz / 1000, "memory max %u MHz, %d kHz", u, khz);
	}
	NV_EQ(nvmlDeviceGetMaxClockInfo(dev0, NVML_CLOCK_VIDEO, &u), NVML_ERROR_NOT_SUPPORTED);

	/* The log: nothing without AXON_LOG or with AXON_LOG=0; else once a name. */
	unsetenv("AXON_LOG");
	err = logged(temperature_twice);
	CHECKF(!*err, "AXON_LOG unset, yet logged: %s", err);
	setenv("AXON_LOG", "0", 1);
	err = logged(temperature_twice);
	CHECKF(!*err, "AXON_LOG=0, yet logged: %s", err);
	setenv("AXON_LOG", "1", 1);
	err = logged(temperature_twice);
	CHECKF(!strcmp(err, "axon: nvmlDeviceGetTemperature is not supported (NVML)\n"),
	       "AXON_LOG=1: logged '%s'", err);
	err = logged(temperature_twice);
	CHECKF(!*err, "logged a second time: %s", err);
	err = logged(power_twice);
	CHECKF(!strcmp(err, "axon: nvmlDeviceGetPowerUsage is not supported (NVML)\n"),
	       "power: logged '%s'", err);
	unsetenv("AXON_LOG");
	printf("nvml: unsupported: NVLink, fabric, sensors, current clocks\n");
}

static void part_errors(void)
{
	static const struct {
		nvmlReturn_t r;
		const char *text;
	} want[] = {
		{ NVML_SUCCESS, "Success" },
		{ NVML_ERROR_UNINITIALIZED, "Uninitialized" },
		{ NVML_ERROR_INVALID_ARGUMENT, "Invalid Argument" },
		{ NVML_ERROR_NOT_SUPPORTED, "Not Supported" },
		{ NVML_ERROR_NO_PERMISSION, "Insufficient Permissions" },
		{ NVML_ERROR_NOT_FOUND, "Not Found" },
		{ NVML_ERROR_INSUFFICIENT_SIZE, "Insufficient Size" },
		{ NVML_ERROR_DRIVER_NOT_LOADED, "Driver Not Loaded" },
		{ NVML_ERROR_GPU_IS_LOST, "GPU is lost" },
		{ NVML_ERROR_LIB_RM_VERSION_MISMATCH, "Driver/library version mismatch" },
		{ NVML_ERROR_MEMORY, "Insufficient Memory" },
		{ NVML_ERROR_ARGUMENT_VERSION_MISMATCH, "Argument version mismatch" },
		{ NVML_ERROR_UNKNOWN, "Unknown Error" },
		{ (nvmlReturn_t)31, "Unknown Error" },
		{ (nvmlReturn_t)-1, "Unknown Error" },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECKF(!strcmp(nvmlErrorString(want[i].r), want[i].text), "%d: '%s', want '%s'",
		       (int)want[i].r, nvmlErrorString(want[i].r), want[i].text);
	/* Every code NVML has: a text of its own. */
	for (int r = 0; r <= NVML_ERROR_RESET_TYPE_NOT_SUPPORTED; r++) {
		const char *s = nvmlErrorString((nvmlReturn_t)r);

		CHECKF(s && *s && strcmp(s, "Unknown Error"), "code %d has no text", r);
	}
	init_one();
	printf("nvml: errors: every code has NVML's text\n");
}

/* ---- exports ------------------------------------------------------------------ */

static const char *const exported[] = {
	"nvmlInit", "nvmlInit_v2", "nvmlInitWithFlags", "nvmlShutdown", "nvmlErrorString",
	"nvmlSystemGetDriverVersion", "nvmlSystemGetNVMLVersion",
	"nvmlSystemGetCudaDriverVersion", "nvmlSystemGetCudaDriverVersion_v2",
	"nvmlDeviceGetCount", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex",
	"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByUUID",
	"nvmlDeviceGetHandleByPciBusId", "nvmlDeviceGetHandleByPciBusId_v2",
	"nvmlDeviceGetIndex", "nvmlDeviceGetName", "nvmlDeviceGetUUID", "nvmlDeviceGetPciInfo",
	"nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetMemoryInfo",
	"nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetCudaComputeCapability",
	"nvmlDeviceGetComputeRunningProcesses", "nvmlDeviceGetComputeRunningProcesses_v2",
	"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetNvLinkState",
	"nvmlDeviceGetNvLinkRemoteDeviceType", "nvmlDeviceGetNvLinkRemotePciInfo_v2",
	"nvmlDeviceGetGpuFabricInfo", "nvmlDeviceGetGpuFabricInfoV",
	"nvmlDeviceGetUtilizationRates", "nvmlDeviceGetTemperature", "nvmlDeviceGetPowerUsage",
	"nvmlDeviceGetClockInfo", "nvmlDeviceGetMaxClockInfo",
};

#define NEXPORTED (sizeof(exported) / sizeof(exported[0]))

static void part_exports(void)
{
	const char *path = nvml_path(), *soname = NULL, *rpath = NULL;
	bool found[NEXPORTED] = { false }, needs_cuda = false;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	const char *m;
	unsigned int nsyms = 0;
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECKF(fd >= 0 && !fstat(fd, &st), "%s: %s", path, strerror(errno));
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	CHECKF(m != MAP_FAILED, "mmap %s", path);
	eh = (const Elf64_Ehdr *)m;
	CHECKF(!memcmp(eh->e_ident, ELFMAG, SELFMAG) && eh->e_ident[EI_CLASS] == ELFCLASS64,
	       "%s is no 64-bit ELF", path);
	sh = (const Elf64_Shdr *)(m + eh->e_shoff);
	for (unsigned int i = 0; i < eh->e_shnum; i++) {
		const char *str = m + sh[sh[i].sh_link].sh_offset;

		if (sh[i].sh_type == SHT_DYNSYM) {
			const Elf64_Sym *sym = (const Elf64_Sym *)(m + sh[i].sh_offset);
			size_t n = sh[i].sh_size / sizeof(*sym);

			for (size_t j = 1; j < n; j++) {
				const char *name = str + sym[j].st_name;
				int bind = ELF64_ST_BIND(sym[j].st_info);

				if (sym[j].st_shndx == SHN_UNDEF ||
				    (bind != STB_GLOBAL && bind != STB_WEAK) ||
				    ELF64_ST_VISIBILITY(sym[j].st_other) != STV_DEFAULT)
					continue;
				CHECKF(!strncmp(name, "nvml", 4), "%s exports %s", path, name);
				nsyms++;
				for (size_t k = 0; k < NEXPORTED; k++)
					if (!strcmp(name, exported[k]))
						found[k] = true;
			}
		} else if (sh[i].sh_type == SHT_DYNAMIC) {
			const Elf64_Dyn *dyn = (const Elf64_Dyn *)(m + sh[i].sh_offset);

			for (; dyn->d_tag != DT_NULL; dyn++) {
				if (dyn->d_tag == DT_SONAME)
					soname = str + dyn->d_un.d_val;
				else if (dyn->d_tag == DT_RPATH)
					rpath = str + dyn->d_un.d_val;
				else if (dyn->d_tag == DT_NEEDED &&
					 !strcmp(str + dyn->d_un.d_val, "libcuda.so.1"))
					needs_cuda = true;
			}
		}
	}
	for (size_t k = 0; k < NEXPORTED; k++)
		CHECKF(found[k], "%s is not exported", exported[k]);
	CHECKF(nsyms == NEXPORTED, "%u names exported, %zu expected", nsyms, NEXPORTED);
	CHECKF(soname && !strcmp(soname, "libnvidia-ml.so.1"), "SONAME %s",
	       soname ? soname : "(none)");
	CHECKF(needs_cuda, "no DT_NEEDED libcuda.so.1");
	CHECKF(rpath && !strcmp(rpath, "$ORIGIN"), "DT_RPATH %s", rpath ? rpath : "(none)");
	printf("nvml: exports: %u nvml* names and nothing else; SONAME %s, RPATH %s\n", nsyms,
	       soname, rpath);
	munmap((void *)m, (size_t)st.st_size);
	init_one();
}

/* Run with AXON_ADDR naming no daemon: init fails as without a driver. */
static void part_nodaemon(void)
{
	char buf[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE];
	unsigned int n;

	nvmlDevice_t h;

	NV_EQ(nvmlInit_v2(), NVML_ERROR_DRIVER_NOT_LOADED);
	NV_EQ(nvmlInit(), NVML_ERROR_DRIVER_NOT_LOADED);
	NV_EQ(nvmlDeviceGetCount_v2(&n), NVML_ERROR_UNINITIALIZED);
	NV_EQ(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
	NV_OK(nvmlSystemGetNVMLVersion(buf, sizeof(buf)));
	/* Asked to start without GPUs: up, with none. */
	NV_OK(nvmlInitWithFlags(NVML_INIT_FLAG_NO_GPUS));
	NV_OK(nvmlDeviceGetCount_v2(&n));
	CHECKF(n == 0, "%u devices without a daemon", n);
	NV_EQ(nvmlDeviceGetHandleByIndex_v2(0, &h), NVML_ERROR_INVALID_ARGUMENT);
	NV_EQ(nvmlDeviceGetHandleByPciBusId_v2("0:0:0", &h), NVML_ERROR_NOT_FOUND);
	NV_OK(nvmlShutdown());
	NV_EQ(nvmlShutdown(), NVML_ERROR_UNINITIALIZED);
	printf("nvml: nodaemon: init refused (%s)\n",
	       nvmlErrorString(NVML_ERROR_DRIVER_NOT_LOADED));
}

/* ---- hold ------------------------------------------------------------------------ */

static void part_hold(void)
{
	struct timespec ts = { .tv_sec = 120 };
	nvmlMemory_t m;
	sigset_t usr1;
	int sig;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	init_one();
	NV_OK(nvmlDeviceGetMemoryInfo(dev0, &m));
	check_isolation();
	printf("nvml: holding (pid %d); SIGUSR1 ends it\n", (int)getpid());
	fflush(stdout);
	do {
		sig = sigtimedwait(&usr1, NULL, &ts);
	} while (sig < 0 && errno == EINTR);
	NV_OK(nvmlShutdown());
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*fn)(void);
	} parts[] = {
		{ "uninit", part_uninit }, { "init", part_init }, { "identity", part_identity },
		{ "pci", part_pci }, { "memory", part_memory }, { "procs", part_procs },
		{ "refuse", part_refuse }, { "unsupported", part_unsupported },
		{ "errors", part_errors }, { "exports", part_exports },
		{ "nodaemon", part_nodaemon }, { "hold", part_hold },
	};

	cu_prog = "nvml";
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 2)
		cu_fail("usage: nvml PART");
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		if (strcmp(argv[1], parts[i].name))
			continue;
		parts[i].fn();
		if (strcmp(argv[1], "hold")) {
			check_isolation();
			/* (uninit ends shut down, nodaemon never got up; the
			 * others leave one init) */
			if (strcmp(argv[1], "uninit") && strcmp(argv[1], "nodaemon"))
				NV_OK(nvmlShutdown());
		}
		return 0;
	}
	cu_fail("no part '%s'", argv[1]);
}
