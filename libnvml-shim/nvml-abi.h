/* SPDX-License-Identifier: MIT */
/*
 * nvml-abi.h - the part of NVIDIA's NVML ABI that axon's libnvidia-ml.so.1
 * implements: exactly the types, constants, struct layouts and prototypes
 * libnvml-shim/ uses, nothing more.
 *
 * No nvml.h is installed here (no Debian main package ships one, and the CI
 * installs only Debian packages), so these are written from the NVML API
 * reference (docs.nvidia.com/deploy/nvml-api) and checked, value by value
 * and field by field, against NVML's public header as of NVML 13.3
 * (cuda_nvml_dev 13.3.29, as carried by NVIDIA/go-nvml gen/nvml/nvml.h).
 * The layouts are ABI: programs built against NVIDIA's header pass these
 * structs to us, so each one is pinned by a static assertion at the end
 * (sizes as NVML's own version macros encode them, e.g. nvmlMemory_v2 =
 * 0x02000028: 40 bytes, version 2).
 *
 * Types that only pass through as pointers to functions that answer
 * NVML_ERROR_NOT_SUPPORTED (the fabric-info structs) are left incomplete:
 * we never read or write them, so their layout must not matter here.
 */
#ifndef AXON_NVML_ABI_H
#define AXON_NVML_ABI_H

#include <stddef.h>

/* ---- return codes (nvmlReturn_t) ----------------------------------------- */

typedef enum nvmlReturn_enum {
	NVML_SUCCESS				= 0,
	NVML_ERROR_UNINITIALIZED		= 1,
	NVML_ERROR_INVALID_ARGUMENT		= 2,
	NVML_ERROR_NOT_SUPPORTED		= 3,
	NVML_ERROR_NO_PERMISSION		= 4,
	NVML_ERROR_ALREADY_INITIALIZED		= 5,
	NVML_ERROR_NOT_FOUND			= 6,
	NVML_ERROR_INSUFFICIENT_SIZE		= 7,
	NVML_ERROR_INSUFFICIENT_POWER		= 8,
	NVML_ERROR_DRIVER_NOT_LOADED		= 9,
	NVML_ERROR_TIMEOUT			= 10,
	NVML_ERROR_IRQ_ISSUE			= 11,
	NVML_ERROR_LIBRARY_NOT_FOUND		= 12,
	NVML_ERROR_FUNCTION_NOT_FOUND		= 13,
	NVML_ERROR_CORRUPTED_INFOROM		= 14,
	NVML_ERROR_GPU_IS_LOST			= 15,
	NVML_ERROR_RESET_REQUIRED		= 16,
	NVML_ERROR_OPERATING_SYSTEM		= 17,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH	= 18,
	NVML_ERROR_IN_USE			= 19,
	NVML_ERROR_MEMORY			= 20,
	NVML_ERROR_NO_DATA			= 21,
	NVML_ERROR_VGPU_ECC_NOT_SUPPORTED	= 22,
	NVML_ERROR_INSUFFICIENT_RESOURCES	= 23,
	NVML_ERROR_FREQ_NOT_SUPPORTED		= 24,
	NVML_ERROR_ARGUMENT_VERSION_MISMATCH	= 25,
	NVML_ERROR_DEPRECATED			= 26,
	NVML_ERROR_NOT_READY			= 27,
	NVML_ERROR_GPU_NOT_FOUND		= 28,
	NVML_ERROR_INVALID_STATE		= 29,
	NVML_ERROR_RESET_TYPE_NOT_SUPPORTED	= 30,
	NVML_ERROR_UNKNOWN			= 999,
} nvmlReturn_t;

/* ---- handles, flags, buffer sizes --------------------------------------- */

/* Opaque to callers; what it points to is ours (libnvml-shim/nvml-shim.h). */
typedef struct nvmlDevice_st *nvmlDevice_t;

/* nvmlInitWithFlags */
#define NVML_INIT_FLAG_NO_GPUS		(1 << 0)
#define NVML_INIT_FLAG_NO_ATTACH	(1 << 1)
#define NVML_INIT_FLAG_FORCE_INIT	(1 << 2)

#define NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE	32	/* nvmlPciInfo_t.busId */
#define NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE	16	/* .busIdLegacy */
#define NVML_DEVICE_UUID_ASCII_LEN		41	/* "GPU-" 36 chars, NUL */
#define NVML_DEVICE_UUID_BUFFER_SIZE		80
#define NVML_DEVICE_UUID_V2_BUFFER_SIZE		96
#define NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE	80
#define NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE	80
#define NVML_DEVICE_NAME_BUFFER_SIZE		64
#define NVML_DEVICE_NAME_V2_BUFFER_SIZE		96
#define NVML_NVLINK_MAX_LINKS			36	/* (NVML 12.2: 18) */

/* The text forms of a PCI location in nvmlPciInfo_t (domain, bus, device). */
#define NVML_DEVICE_PCI_BUS_ID_LEGACY_FMT	"%04X:%02X:%02X.0"
#define NVML_DEVICE_PCI_BUS_ID_FMT		"%08X:%02X:%02X.0"

/* A versioned struct's version word: its size, and the version in bits 24+. */
#define NVML_STRUCT_VERSION(data, ver) \
	(unsigned int)(sizeof(nvml ## data ## _v ## ver ## _t) | ((ver) << 24U))

/* ---- structs ----------------------------------------------------------------- */

/*
 * nvmlPciInfo_t, the layout of NVML >= 9 (busIdLegacy first, 32-byte busId
 * last). NVML's first layout (nvmlDeviceGetPciInfo "_v1") had a 16-byte
 * busId where busIdLegacy is and four reserved words after pciSubSystemId:
 * the first 36 bytes are common to both.
 */
typedef struct nvmlPciInfo_st {
	char busIdLegacy[NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE];
	unsigned int domain;		/* 0 to 0xffffffff */
	unsigned int bus;		/* 0 to 0xff */
	unsigned int device;		/* 0 to 31 */
	unsigned int pciDeviceId;	/* device id << 16 | vendor id */
	unsigned int pciSubSystemId;
	char busId[NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE];
} nvmlPciInfo_t;

/* nvmlDeviceGetMemoryInfo: total = free + used */
typedef struct nvmlMemory_st {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_t;

/* nvmlDeviceGetMemoryInfo_v2: used includes reserved */
typedef struct nvmlMemory_v2_st {
	unsigned int version;		/* must be nvmlMemory_v2 */
	unsigned long long total;
	unsigned long long reserved;
	unsigned long long free;
	unsigned long long used;
} nvmlMemory_v2_t;

#define nvmlMemory_v2 NVML_STRUCT_VERSION(Memory, 2)

/* nvmlDeviceGet*RunningProcesses (unversioned name: this layout) */
typedef struct nvmlProcessInfo_v1_st {
	unsigned int pid;
	unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;

/* ..._v2 and ..._v3 */
typedef struct nvmlProcessInfo_v2_st {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;	/* 0xffffffff without MIG */
	unsigned int computeInstanceId;
} nvmlProcessInfo_v2_t, nvmlProcessInfo_t;

typedef struct nvmlUtilization_st {
	unsigned int gpu;		/* percent */
	unsigned int memory;
} nvmlUtilization_t;

/* Only ever passed through (NOT_SUPPORTED): incomplete on purpose. */
typedef struct axon_nvmlGpuFabricInfo nvmlGpuFabricInfo_t;
typedef struct axon_nvmlGpuFabricInfoV nvmlGpuFabricInfoV_t;

/* ---- enums --------------------------------------------------------------- */

typedef enum nvmlEnableState_enum {
	NVML_FEATURE_DISABLED	= 0,
	NVML_FEATURE_ENABLED	= 1,
} nvmlEnableState_t;

typedef enum nvmlIntNvLinkDeviceType_enum {
	NVML_NVLINK_DEVICE_TYPE_GPU	= 0x00,
	NVML_NVLINK_DEVICE_TYPE_IBMNPU	= 0x01,
	NVML_NVLINK_DEVICE_TYPE_SWITCH	= 0x02,
	NVML_NVLINK_DEVICE_TYPE_UNKNOWN	= 0xFF,
} nvmlIntNvLinkDeviceType_t;

typedef enum nvmlTemperatureSensors_enum {
	NVML_TEMPERATURE_GPU	= 0,
	NVML_TEMPERATURE_COUNT,
} nvmlTemperatureSensors_t;

typedef enum nvmlClockType_enum {
	NVML_CLOCK_GRAPHICS	= 0,
	NVML_CLOCK_SM		= 1,
	NVML_CLOCK_MEM		= 2,
	NVML_CLOCK_VIDEO	= 3,
	NVML_CLOCK_COUNT,
} nvmlClockType_t;

/* ---- functions (every one libnvidia-ml.so.1 exports) -------------------- */

nvmlReturn_t nvmlInit(void);
nvmlReturn_t nvmlInit_v2(void);
nvmlReturn_t nvmlInitWithFlags(unsigned int flags);
nvmlReturn_t nvmlShutdown(void);
const char *nvmlErrorString(nvmlReturn_t result);

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length);
nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length);
nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion);
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion);

nvmlReturn_t nvmlDeviceGetCount(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount);
nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByPciBusId(const char *pciBusId, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *pciBusId, nvmlDevice_t *device);
nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index);
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length);
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length);
nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory);
nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory);
nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int *major, int *minor);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *infoCount,
						  nvmlProcessInfo_v1_t *infos);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device,
						     unsigned int *infoCount,
						     nvmlProcessInfo_v2_t *infos);
nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
						     unsigned int *infoCount,
						     nvmlProcessInfo_t *infos);
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned int link,
				      nvmlEnableState_t *isActive);
nvmlReturn_t nvmlDeviceGetNvLinkRemoteDeviceType(nvmlDevice_t device, unsigned int link,
						 nvmlIntNvLinkDeviceType_t *pNvLinkDeviceType);
nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned int link,
						 nvmlPciInfo_t *pci);
nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device, nvmlGpuFabricInfo_t *gpuFabricInfo);
nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device,
					 nvmlGpuFabricInfoV_t *gpuFabricInfo);
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *utilization);
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensorType,
				      unsigned int *temp);
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power);
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type,
				    unsigned int *clock);
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type,
				       unsigned int *clock);

/* ---- the layouts, pinned (LP64) ------------------------------------------- */

_Static_assert(sizeof(nvmlReturn_t) == 4, "nvmlReturn_t is an int-sized enum");
_Static_assert(sizeof(nvmlPciInfo_t) == 68 && offsetof(nvmlPciInfo_t, domain) == 16 &&
	       offsetof(nvmlPciInfo_t, pciSubSystemId) == 32 &&
	       offsetof(nvmlPciInfo_t, busId) == 36, "nvmlPciInfo_t layout");
_Static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t layout");
_Static_assert(nvmlMemory_v2 == 0x02000028 && offsetof(nvmlMemory_v2_t, total) == 8 &&
	       offsetof(nvmlMemory_v2_t, used) == 32, "nvmlMemory_v2_t layout");
_Static_assert(sizeof(nvmlProcessInfo_v1_t) == 16 &&
	       offsetof(nvmlProcessInfo_v1_t, usedGpuMemory) == 8, "nvmlProcessInfo_v1_t");
_Static_assert(sizeof(nvmlProcessInfo_v2_t) == 24 &&
	       offsetof(nvmlProcessInfo_v2_t, computeInstanceId) == 20, "nvmlProcessInfo_v2_t");
_Static_assert(sizeof(nvmlUtilization_t) == 8, "nvmlUtilization_t layout");

#endif /* AXON_NVML_ABI_H */
