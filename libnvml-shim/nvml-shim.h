/* SPDX-License-Identifier: MIT */
/*
 * nvml-shim.h - what the sources of axon's libnvidia-ml.so.1 share.
 *
 * The library answers NVML from the CUDA driver API of axon's libcuda.so.1
 * (and so from axond), never from NVIDIA's driver: NVIDIA's NVML opens
 * /dev/nvidiactl, /dev/nvidia0, /dev/nvidia-uvm and /dev/nvidia-caps/ in
 * the client, which axon forbids (only axond touches the GPU).
 */
#ifndef AXON_NVML_SHIM_H
#define AXON_NVML_SHIM_H

#include <stdatomic.h>
#include <cuda.h>

#include "nvml-abi.h"

/* Everything is hidden (-fvisibility=hidden) except the NVML names. */
#define NVML_EXPORT __attribute__((visibility("default")))

/* More devices than axond can publish (AXON_MAX_DEVICES in uapi). */
#define NVML_SHIM_MAX_DEVICES	64

/*
 * What an nvmlDevice_t points to: one slot of a static array, one per
 * device that axond publishes to this client, in the order cuDeviceGet sees
 * them (NVML index == CUDA ordinal here). Handles stay the same across
 * shutdown and a later init, as NVML's do.
 */
struct nvmlDevice_st {
	CUdevice cu;
};

/* init.c */
/* NVML_SUCCESS when nvmlInit has succeeded more often than nvmlShutdown. */
nvmlReturn_t nvml_check_init(void);
/*
 * Initialized, and h is one of our handles for a device that exists:
 * *dev is its CUDA device. A forged handle is judged by its address alone
 * (never dereferenced): NVML_ERROR_INVALID_ARGUMENT.
 */
nvmlReturn_t nvml_device(nvmlDevice_t h, CUdevice *dev);
unsigned int nvml_count(void);
nvmlDevice_t nvml_handle(unsigned int index);
nvmlReturn_t nvml_from_cu(CUresult r);
/* Copies src with its NUL, or NVML_ERROR_INSUFFICIENT_SIZE. */
nvmlReturn_t nvml_copy_string(char *dst, unsigned int length, const char *src);

/*
 * NVML_ERROR_NOT_SUPPORTED, the name logged to stderr once per process,
 * only when AXON_LOG is set (and not "0"). Unlike the driver API's stubs
 * (libcuda-shim/unimplemented.c, which log unless AXON_LOG=0), an NVML
 * query that is not supported is an ordinary answer that monitoring code
 * expects and handles (a GPU without NVLink answers the same), so it is not
 * worth a line on every client's stderr by default; and gpucheck compares
 * clients' stderr with the native run's.
 */
nvmlReturn_t nvml_unsupported(const char *name, atomic_int *logged);
#define NVML_NOT_SUPPORTED()						\
	do {								\
		static atomic_int logged_;				\
		return nvml_unsupported(__func__, &logged_);		\
	} while (0)

/* A query axon cannot answer: the handle and the out pointer are still
 * checked first, as NVML checks them, then NOT_SUPPORTED. */
#define NVML_UNSUPPORTED_QUERY(device, out)				\
	do {								\
		CUdevice dev_;						\
		nvmlReturn_t r_ = nvml_device((device), &dev_);		\
									\
		if (r_)							\
			return r_;					\
		if (!(out))						\
			return NVML_ERROR_INVALID_ARGUMENT;		\
		NVML_NOT_SUPPORTED();					\
	} while (0)

/* device.c */
struct nvml_pci {
	unsigned int domain, bus, device, function;
};
/*
 * Parses a PCI bus id in the forms NVML accepts (hexadecimal):
 * domain:bus:device.function, domain:bus:device, bus:device.function.
 * 0, or -1 when it is none of them or a field is out of range.
 */
int nvml_parse_pci(const char *s, struct nvml_pci *p);

#endif /* AXON_NVML_SHIM_H */
