// SPDX-License-Identifier: MIT
/*
 * Initialisation and shutdown, handles, error strings, system queries.
 *
 * nvmlInit is reference counted as NVML documents: every successful init
 * adds one, every nvmlShutdown takes one away, and the library is usable
 * while the count is above zero. The first init is cuInit (the connection
 * to axond) plus a look at the devices; later ones only count. Shutting
 * down does not disconnect: the connection belongs to libcuda.so.1 and so
 * to the whole process, whose CUDA calls share it.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nvml-shim.h"

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
/* Written under init_lock; read without it (acquire) by every call. */
static unsigned int refs;
/* Set before refs leaves zero (release), so a reader that saw refs sees it. */
static unsigned int ndev;
static struct nvmlDevice_st devs[NVML_SHIM_MAX_DEVICES];

nvmlReturn_t nvml_check_init(void)
{
	return __atomic_load_n(&refs, __ATOMIC_ACQUIRE) ? NVML_SUCCESS
							: NVML_ERROR_UNINITIALIZED;
}

unsigned int nvml_count(void)
{
	return ndev;
}

nvmlDevice_t nvml_handle(unsigned int index)
{
	return &devs[index];
}

nvmlReturn_t nvml_device(nvmlDevice_t h, CUdevice *dev)
{
	uintptr_t p = (uintptr_t)h, base = (uintptr_t)devs;
	size_t i;

	if (nvml_check_init())
		return NVML_ERROR_UNINITIALIZED;
	/* Integer arithmetic on the address: a forged pointer is not touched. */
	if (p < base || p - base >= sizeof(devs) || (p - base) % sizeof(devs[0]))
		return NVML_ERROR_INVALID_ARGUMENT;
	i = (p - base) / sizeof(devs[0]);
	if (i >= ndev)
		return NVML_ERROR_INVALID_ARGUMENT;
	*dev = devs[i].cu;
	return NVML_SUCCESS;
}

nvmlReturn_t nvml_from_cu(CUresult r)
{
	switch (r) {
	case CUDA_SUCCESS:
		return NVML_SUCCESS;
	case CUDA_ERROR_NOT_INITIALIZED:
	case CUDA_ERROR_DEINITIALIZED:
		return NVML_ERROR_UNINITIALIZED;
	case CUDA_ERROR_INVALID_VALUE:
	case CUDA_ERROR_INVALID_DEVICE:
		return NVML_ERROR_INVALID_ARGUMENT;
	case CUDA_ERROR_OUT_OF_MEMORY:
		return NVML_ERROR_MEMORY;
	case CUDA_ERROR_NOT_SUPPORTED:
		return NVML_ERROR_NOT_SUPPORTED;
	default:
		/* (axond gone, a device fault of this process: nothing NVML has) */
		return NVML_ERROR_UNKNOWN;
	}
}

nvmlReturn_t nvml_copy_string(char *dst, unsigned int length, const char *src)
{
	size_t n = strlen(src) + 1;

	if (!dst)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (length < n)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(dst, src, n);
	return NVML_SUCCESS;
}

static int log_enabled(void)
{
	const char *v = getenv("AXON_LOG");

	return v && *v && strcmp(v, "0") != 0;
}

nvmlReturn_t nvml_unsupported(const char *name, atomic_int *logged)
{
	/* Marked only when the line is written: AXON_LOG set later still logs. */
	if (log_enabled() && !atomic_exchange(logged, 1)) {
		char line[160];
		int n = snprintf(line, sizeof(line), "axon: %s is not supported (NVML)\n", name);

		if (n > 0) {
			size_t len = (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
			ssize_t w = write(STDERR_FILENO, line, len);	/* one write: one line */

			(void)w;
		}
	}
	return NVML_ERROR_NOT_SUPPORTED;
}

/* ---- init and shutdown ------------------------------------------------------ */

static nvmlReturn_t init_locked(unsigned int flags)
{
	CUresult r;
	int n = 0;

	/*
	 * The devices axond publishes do not change while the process lives:
	 * once seen they are kept, so an init after a shutdown writes nothing
	 * that a racing reader of an old handle could see change.
	 */
	if (ndev)
		return NVML_SUCCESS;
	/*
	 * cuInit answers NO_DEVICE both when no axond can be reached and when
	 * it publishes no device (the shim does not stay connected to one
	 * without devices). To NVML's callers either is "no NVIDIA driver
	 * here" (DRIVER_NOT_LOADED, NVIDIA's NVML's answer on a machine
	 * without its driver), unless they asked to start without GPUs.
	 * The shim has said why on stderr. A shim and axond of different ABIs
	 * is NVML's driver/library mismatch.
	 */
	r = cuInit(0);
	if (r == CUDA_SUCCESS)
		r = cuDeviceGetCount(&n);
	if (r == CUDA_ERROR_NO_DEVICE || (r == CUDA_SUCCESS && n <= 0)) {
		if (!(flags & NVML_INIT_FLAG_NO_GPUS))
			return NVML_ERROR_DRIVER_NOT_LOADED;
		n = 0;
		r = CUDA_SUCCESS;
	}
	if (r == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)
		return NVML_ERROR_LIB_RM_VERSION_MISMATCH;
	if (r != CUDA_SUCCESS)
		return NVML_ERROR_DRIVER_NOT_LOADED;
	if (n > NVML_SHIM_MAX_DEVICES)
		n = NVML_SHIM_MAX_DEVICES;
	for (int i = 0; i < n; i++) {
		r = cuDeviceGet(&devs[i].cu, i);
		if (r != CUDA_SUCCESS)
			return nvml_from_cu(r);
	}
	ndev = (unsigned int)(n > 0 ? n : 0);
	return NVML_SUCCESS;
}

/*
 * NVML_INIT_FLAG_NO_ATTACH and _FORCE_INIT change nothing here: there is
 * no per-GPU attach, axond has done it. Unknown bits are ignored, as
 * flags added by a newer NVML should be.
 */
NVML_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags)
{
	nvmlReturn_t ret = NVML_SUCCESS;

	pthread_mutex_lock(&init_lock);
	if (!refs)
		ret = init_locked(flags);
	if (ret == NVML_SUCCESS)
		__atomic_store_n(&refs, refs + 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&init_lock);
	return ret;
}

NVML_EXPORT nvmlReturn_t nvmlInit_v2(void)
{
	return nvmlInitWithFlags(0);
}

/* NVML 4's nvmlInit initialised every GPU at once; here that is the same. */
NVML_EXPORT nvmlReturn_t nvmlInit(void)
{
	return nvmlInitWithFlags(0);
}

/*
 * One more shutdown than inits answers NVML_ERROR_UNINITIALIZED, as the
 * reference lists and current NVML does (its "no error for backwards
 * compatibility" note is about NVML 4).
 */
NVML_EXPORT nvmlReturn_t nvmlShutdown(void)
{
	nvmlReturn_t ret = NVML_SUCCESS;

	pthread_mutex_lock(&init_lock);
	if (refs)
		__atomic_store_n(&refs, refs - 1, __ATOMIC_RELEASE);
	else
		ret = NVML_ERROR_UNINITIALIZED;
	pthread_mutex_unlock(&init_lock);
	return ret;
}

/* ---- error strings ---------------------------------------------------------- */

/*
 * The texts NVIDIA's nvmlErrorString returns. Codes 0-20, 23 and 999 are
 * the library's own words (NVIDIA mirrors them in DCGM's
 * nvml_error_strings.h; "Driver/library version mismatch" is nvidia-smi's
 * famous line); 25 is what real nvmlErrorString output quoted in
 * monitoring code reads. 21, 22, 24 and 26-30 could not be checked against
 * NVIDIA's binary: they are the short forms of NVML's descriptions in its
 * header. Codes NVML does not know read "Unknown Error", as there.
 */
static const char *const error_text[] = {
	[NVML_SUCCESS]				= "Success",
	[NVML_ERROR_UNINITIALIZED]		= "Uninitialized",
	[NVML_ERROR_INVALID_ARGUMENT]		= "Invalid Argument",
	[NVML_ERROR_NOT_SUPPORTED]		= "Not Supported",
	[NVML_ERROR_NO_PERMISSION]		= "Insufficient Permissions",
	[NVML_ERROR_ALREADY_INITIALIZED]	= "Already Initialized",
	[NVML_ERROR_NOT_FOUND]			= "Not Found",
	[NVML_ERROR_INSUFFICIENT_SIZE]		= "Insufficient Size",
	[NVML_ERROR_INSUFFICIENT_POWER]		= "Insufficient External Power",
	[NVML_ERROR_DRIVER_NOT_LOADED]		= "Driver Not Loaded",
	[NVML_ERROR_TIMEOUT]			= "Timeout",
	[NVML_ERROR_IRQ_ISSUE]			= "Interrupt Request Issue",
	[NVML_ERROR_LIBRARY_NOT_FOUND]		= "NVML Shared Library Not Found",
	[NVML_ERROR_FUNCTION_NOT_FOUND]		= "Function Not Found",
	[NVML_ERROR_CORRUPTED_INFOROM]		= "Corrupted infoROM",
	[NVML_ERROR_GPU_IS_LOST]		= "GPU is lost",
	[NVML_ERROR_RESET_REQUIRED]		= "GPU requires reset",
	[NVML_ERROR_OPERATING_SYSTEM]		= "GPU access blocked by the operating system",
	[NVML_ERROR_LIB_RM_VERSION_MISMATCH]	= "Driver/library version mismatch",
	[NVML_ERROR_IN_USE]			= "In use by another client",
	[NVML_ERROR_MEMORY]			= "Insufficient Memory",
	[NVML_ERROR_NO_DATA]			= "No data",
	[NVML_ERROR_VGPU_ECC_NOT_SUPPORTED]	= "vGPU operation not available with ECC enabled",
	[NVML_ERROR_INSUFFICIENT_RESOURCES]	= "Insufficient Resources",
	[NVML_ERROR_FREQ_NOT_SUPPORTED]		= "Frequency not supported",
	[NVML_ERROR_ARGUMENT_VERSION_MISMATCH]	= "Argument version mismatch",
	[NVML_ERROR_DEPRECATED]			= "Deprecated",
	[NVML_ERROR_NOT_READY]			= "Not Ready",
	[NVML_ERROR_GPU_NOT_FOUND]		= "GPU not found",
	[NVML_ERROR_INVALID_STATE]		= "Invalid state",
	[NVML_ERROR_RESET_TYPE_NOT_SUPPORTED]	= "Reset type not supported",
};

/* Needs no init, as in NVML: it explains why init failed. */
NVML_EXPORT const char *nvmlErrorString(nvmlReturn_t result)
{
	unsigned int i = (unsigned int)result;

	if (i < sizeof(error_text) / sizeof(error_text[0]) && error_text[i])
		return error_text[i];
	return "Unknown Error";
}

/* ---- system queries --------------------------------------------------------- */

/*
 * The "driver version". NVIDIA's is its kernel module's ("580.65.06"),
 * which only NVIDIA's driver knows and a client must not ask. What the
 * client's driver API does know is the CUDA driver version axond reports
 * (cuDriverGetVersion), so that is the version, as "13.0": numeric, so
 * that code splitting it on dots still parses, but not to be mistaken
 * for the kernel module's.
 */
static void driver_version(char *buf, size_t size)
{
	int v = 0;

	if (cuDriverGetVersion(&v) != CUDA_SUCCESS)
		v = CUDA_VERSION;
	snprintf(buf, size, "%d.%d", v / 1000, v % 1000 / 10);
}

NVML_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	char buf[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];

	if (nvml_check_init())
		return NVML_ERROR_UNINITIALIZED;
	driver_version(buf, sizeof(buf));
	return nvml_copy_string(version, length, buf);
}

/*
 * NVIDIA composes its NVML version as "<CUDA major>.<driver version>"
 * ("13.580.65.06"); so do we, from the version above ("13.13.0"). Like
 * NVML's it needs no init.
 */
NVML_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length)
{
	char drv[NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	char buf[NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE + 16];
	int v = 0;

	if (cuDriverGetVersion(&v) != CUDA_SUCCESS)
		v = CUDA_VERSION;
	driver_version(drv, sizeof(drv));
	snprintf(buf, sizeof(buf), "%d.%s", v / 1000, drv);
	return nvml_copy_string(version, length, buf);
}

/*
 * Both versions are cuDriverGetVersion's answer (v2 is documented as
 * exactly that; v1 "from the installed CUDA", which here is the same
 * library). Neither needs init; before cuInit the shim answers the
 * version it was built for.
 */
NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *cudaDriverVersion)
{
	if (!cudaDriverVersion)
		return NVML_ERROR_INVALID_ARGUMENT;
	return nvml_from_cu(cuDriverGetVersion(cudaDriverVersion));
}

NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int *cudaDriverVersion)
{
	return nvmlSystemGetCudaDriverVersion_v2(cudaDriverVersion);
}
