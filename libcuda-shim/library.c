// SPDX-License-Identifier: MIT
/*
 * Libraries and kernels (cuLibrary*, cuKernel*): the context-independent
 * way to load code, which cudart 12+/13 uses for every fatbin it registers.
 *
 * The daemon only knows per-context modules, so a library is a client-side
 * object: the image (the caller's, if it promised to keep it with
 * CU_LIBRARY_BINARY_IS_PRESERVED, else our copy) and the module it became
 * in each context that needed it. Loading into a context happens on first
 * use there (a kernel, the module or a global asked for), which is what
 * lazy loading does, and cuModuleGetLoadingMode says LAZY, as NVIDIA's
 * driver does unless CUDA_MODULE_LOADING=EAGER. (Saying EAGER, as the shim
 * once did for fear of cudart skipping per-device set-up, remoting-anchors
 * §13.6 (9), made cuDNN 9 load, probe and unload libraries on every use:
 * 4825 cuLibraryLoadData in a 35-step CNN run, 24.6 step/s; saying LAZY,
 * 493.6 step/s, native 464.8; H200, 2026-11-29 17:42 UTC.)
 *
 * A CUkernel is the CUfunction handle of the kernel in the context that was
 * current when it was first asked for (the primary context of device 0 if
 * none was), so it can be passed to cuLaunchKernel as the driver allows;
 * cuKernelGetFunction gives the function in the current context, loading
 * the library there if need be.
 *
 * Lock order: lib_lock, then whatever the cu* functions called take
 * (shim.lock). Nothing holds shim.lock while taking lib_lock.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fatbin.h"
#include "shim.h"

struct lib_module {
	uint64_t ctx;
	CUmodule mod;
};

/* An attribute cuKernelSetAttribute set for one device. */
struct kernel_attr {
	CUfunction_attribute attr;
	int value;
	CUdevice dev;
};

#define MAX_KERNEL_ATTRS 16

struct lib_kernel {
	CUfunction handle;		/* what the CUkernel is */
	uint64_t ctx;			/* ...valid in this context */
	struct shim_library *lib;
	/* Set with cuKernelSetAttribute: applied again in every context the
	 * library is loaded into later (function_in). */
	struct kernel_attr attrs[MAX_KERNEL_ATTRS];
	unsigned int nattrs;
	struct lib_kernel *next;
	char name[];
};

struct shim_library {
	const void *image;
	size_t len;
	bool preserved;			/* image is the caller's, kept */
	void *copy;			/* image, when we own it */
	struct lib_module *mods;
	unsigned int nmods, capmods;
	struct lib_kernel *kernels;
	struct shim_library *next;
};

static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shim_library *libs;

/* Handles are checked against the list: never dereference a stranger. */
static struct shim_library *lib_of(CUlibrary l)
{
	struct shim_library *p;

	for (p = libs; p; p = p->next)
		if (p == (struct shim_library *)l)
			return p;
	return NULL;
}

static struct lib_kernel *kernel_of(CUkernel k)
{
	struct shim_library *p;
	struct lib_kernel *kr;

	if (!k)
		return NULL;
	for (p = libs; p; p = p->next)
		for (kr = p->kernels; kr; kr = kr->next)
			if (kr->handle == (CUfunction)k)
				return kr;
	return NULL;
}

/* The context to load into: the current one, else device 0's primary. */
static CUresult target_ctx(struct shim_ctx **out)
{
	struct shim_ctx *sc;
	uint64_t h;
	CUresult r;

	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	sc = shim_current_ctx();
	if (!sc) {
		r = shim_primary_peek(0, &h);
		if (r)
			return r;
		sc = shim_ctx_of((CUcontext)(uintptr_t)h);
		if (!sc)
			return CUDA_ERROR_INVALID_CONTEXT;
	}
	*out = sc;
	return CUDA_SUCCESS;
}

/* The library's module in sc, loaded now if it is not there yet. */
static CUresult module_in(struct shim_library *l, struct shim_ctx *sc, CUmodule *out)
{
	struct shim_ctx *cur = shim_current_ctx();
	CUmodule mod;
	unsigned int i;
	CUresult r;

	for (i = 0; i < l->nmods; i++) {
		if (l->mods[i].ctx == sc->handle) {
			*out = l->mods[i].mod;
			return CUDA_SUCCESS;
		}
	}
	if (l->nmods == l->capmods) {
		unsigned int n = l->capmods ? l->capmods * 2 : 4;
		struct lib_module *nm = realloc(l->mods, n * sizeof(*nm));

		if (!nm)
			return CUDA_ERROR_OUT_OF_MEMORY;
		l->mods = nm;
		l->capmods = n;
	}
	/* cuModuleLoadData loads into the current context: make sc current
	 * for the call if it is not. */
	if (cur != sc) {
		r = cuCtxPushCurrent_v2((CUcontext)(uintptr_t)sc->handle);
		if (r)
			return r;
	}
	r = cuModuleLoadData(&mod, l->image);
	if (cur != sc)
		cuCtxPopCurrent_v2(NULL);
	if (r)
		return r;
	l->mods[l->nmods].ctx = sc->handle;
	l->mods[l->nmods].mod = mod;
	l->nmods++;
	*out = mod;
	return CUDA_SUCCESS;
}

static CUresult function_in(struct shim_library *l, struct shim_ctx *sc, const char *name,
			    CUfunction *out)
{
	struct lib_kernel *k;
	CUmodule mod;
	unsigned int i;
	CUresult r = module_in(l, sc, &mod);

	if (!r)
		r = cuModuleGetFunction(out, mod, name);
	/* What cuKernelSetAttribute set for this device holds here too. */
	for (k = l->kernels; !r && k; k = k->next)
		if (!strcmp(k->name, name))
			for (i = 0; !r && i < k->nattrs; i++)
				if (k->attrs[i].dev == sc->device)
					r = cuFuncSetAttribute(*out, k->attrs[i].attr,
							       k->attrs[i].value);
	return r;
}

SHIM_EXPORT CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *mode)
{
	const char *want = getenv("CUDA_MODULE_LOADING");

	if (!mode)
		return CUDA_ERROR_INVALID_VALUE;
	/* As the driver: lazy unless the environment asks for eager. */
	*mode = want && !strcasecmp(want, "EAGER") ? CU_MODULE_EAGER_LOADING
						   : CU_MODULE_LAZY_LOADING;
	return CUDA_SUCCESS;
}

static CUresult library_load(CUlibrary *library, const void *code, bool preserved)
{
	struct shim_library *l;
	const void *image;
	size_t len;
	CUresult r;

	if (!library || !code)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_ensure_init();
	if (r)
		return r;
	image = shim_module_image(code, &len);
	if (!len)
		return CUDA_ERROR_INVALID_IMAGE;
	if (getenv("AXON_LOG") && !strcmp(getenv("AXON_LOG"), "2")) {
		uint32_t next;

		/* Diagnostic: does another fatbin block follow the one
		 * measured (the caller's memory, as the driver reads it)? */
		memcpy(&next, (const char *)image + len, 4);
		shim_log("cuLibraryLoadData: %zu bytes%s, %spreserved", len,
			 next == FATBIN_MAGIC ? ", followed by another fatbin" : "",
			 preserved ? "" : "not ");
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (preserved) {
		struct shim_ctx *cur = shim_current_ctx();

		/* As an eager load into the current context (device 0's
		 * primary one if none) would fail (refused.c). */
		r = shim_image_refused(image, len, cur ? cur->device : 0, true);
		if (r) {
			free(l);
			return r;
		}
		l->image = image;
		l->preserved = true;
	} else {
		l->copy = malloc(len);
		if (!l->copy) {
			free(l);
			return CUDA_ERROR_OUT_OF_MEMORY;
		}
		memcpy(l->copy, image, len);
		l->image = l->copy;
	}
	l->len = len;
	pthread_mutex_lock(&lib_lock);
	l->next = libs;
	libs = l;
	pthread_mutex_unlock(&lib_lock);
	*library = (CUlibrary)l;
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuLibraryLoadData(CUlibrary *library, const void *code,
				       CUjit_option *jitOptions, void **jitOptionsValues,
				       unsigned int numJitOptions,
				       CUlibraryOption *libraryOptions,
				       void **libraryOptionValues,
				       unsigned int numLibraryOptions)
{
	bool preserved = false;
	unsigned int i;

	/* JIT options are advice: the daemon compiles (as cuModuleLoadDataEx). */
	(void)jitOptions;
	(void)jitOptionsValues;
	(void)numJitOptions;
	if (numLibraryOptions && !libraryOptions)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < numLibraryOptions; i++) {
		switch (libraryOptions[i]) {
		case CU_LIBRARY_BINARY_IS_PRESERVED:
			/* The value travels in the pointer slot itself, as
			 * for integer JIT options (cudart passes (void *)1). */
			preserved = libraryOptionValues && libraryOptionValues[i];
			break;
		case CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE:
			break;	/* for cuLibraryGetUnifiedFunction, unsupported */
		default:
			return CUDA_ERROR_INVALID_VALUE;
		}
	}
	return library_load(library, code, preserved);
}

SHIM_EXPORT CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
					   CUjit_option *jitOptions, void **jitOptionsValues,
					   unsigned int numJitOptions,
					   CUlibraryOption *libraryOptions,
					   void **libraryOptionValues,
					   unsigned int numLibraryOptions)
{
	unsigned int i;
	size_t size;
	char *buf;
	CUresult r;

	(void)jitOptions;
	(void)jitOptionsValues;
	(void)numJitOptions;
	(void)libraryOptionValues;
	if (!library || !fileName || (numLibraryOptions && !libraryOptions))
		return CUDA_ERROR_INVALID_VALUE;
	/* Nothing to preserve: the file's bytes are ours (cuda.h says so). */
	for (i = 0; i < numLibraryOptions; i++)
		if (libraryOptions[i] != CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE)
			return CUDA_ERROR_INVALID_VALUE;
	r = shim_read_image_file(fileName, &buf, &size);
	if (r)
		return r;
	r = library_load(library, buf, false);	/* copies what it needs */
	free(buf);
	return r;
}

SHIM_EXPORT CUresult cuLibraryUnload(CUlibrary library)
{
	struct shim_library *l, **pp;
	struct lib_kernel *k, *kn;
	unsigned int i;

	pthread_mutex_lock(&lib_lock);
	for (pp = &libs; *pp && *pp != (struct shim_library *)library; pp = &(*pp)->next)
		;
	l = *pp;
	if (!l) {
		pthread_mutex_unlock(&lib_lock);
		return CUDA_ERROR_INVALID_HANDLE;
	}
	*pp = l->next;
	pthread_mutex_unlock(&lib_lock);
	/* A module whose context is gone is gone with it: ignore errors. */
	for (i = 0; i < l->nmods; i++)
		if (shim_ctx_of((CUcontext)(uintptr_t)l->mods[i].ctx))
			cuModuleUnload(l->mods[i].mod);
	for (k = l->kernels; k; k = kn) {
		kn = k->next;
		free(k);
	}
	free(l->mods);
	free(l->copy);
	free(l);
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
	struct shim_library *l;
	struct lib_kernel *k;
	struct shim_ctx *sc;
	CUfunction f;
	size_t n;
	CUresult r;

	if (!pKernel || !name)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lib_lock);
	l = lib_of(library);
	if (!l) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	for (k = l->kernels; k; k = k->next) {
		if (!strcmp(k->name, name)) {
			*pKernel = (CUkernel)k->handle;
			r = CUDA_SUCCESS;
			goto out;
		}
	}
	r = target_ctx(&sc);
	if (r)
		goto out;
	r = function_in(l, sc, name, &f);
	if (r)
		goto out;
	n = strlen(name);
	k = malloc(sizeof(*k) + n + 1);
	if (!k) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	memcpy(k->name, name, n + 1);
	k->handle = f;
	k->nattrs = 0;
	k->ctx = sc->handle;
	k->lib = l;
	k->next = l->kernels;
	l->kernels = k;
	*pKernel = (CUkernel)f;
out:
	pthread_mutex_unlock(&lib_lock);
	return r;
}

SHIM_EXPORT CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	struct lib_kernel *k;
	struct shim_ctx *sc;
	CUresult r;

	if (!pFunc)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lib_lock);
	k = kernel_of(kernel);
	if (!k) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	r = shim_get_ctx(&sc);
	if (r)
		goto out;
	if (sc->handle == k->ctx) {
		*pFunc = k->handle;
		SHIM_LOCAL();
	} else {
		r = function_in(k->lib, sc, k->name, pFunc);
	}
out:
	pthread_mutex_unlock(&lib_lock);
	return r;
}

/* What the caller asks of a kernel (the pointers not NULL), read under the
 * lock; INVALID_HANDLE for a kernel that is not one. */
static CUresult kernel_get(CUkernel kernel, CUlibrary *lib, const char **name, CUfunction *f)
{
	struct lib_kernel *k;

	pthread_mutex_lock(&lib_lock);
	k = kernel_of(kernel);
	if (k && lib)
		*lib = (CUlibrary)k->lib;
	if (k && name)
		*name = k->name;	/* lives until cuLibraryUnload */
	if (k && f)
		*f = k->handle;
	pthread_mutex_unlock(&lib_lock);
	return k ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

SHIM_EXPORT CUresult cuKernelGetLibrary(CUlibrary *pLib, CUkernel kernel)
{
	if (!pLib)
		return CUDA_ERROR_INVALID_VALUE;
	return kernel_get(kernel, pLib, NULL, NULL);
}

SHIM_EXPORT CUresult cuKernelGetName(const char **name, CUkernel kernel)
{
	if (!name)
		return CUDA_ERROR_INVALID_VALUE;
	return kernel_get(kernel, NULL, name, NULL);
}

/* The device a cuKernel{Get,Set}Attribute call names. */
static CUresult attr_device(CUdevice dev)
{
	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || (unsigned int)dev >= shim.ring.info->ndevices)
		return CUDA_ERROR_INVALID_DEVICE;
	return CUDA_SUCCESS;
}

/* Attributes are the function's; the device only picks which context's
 * copy, and every copy of one image answers the same. */
SHIM_EXPORT CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel,
					  CUdevice dev)
{
	CUfunction f;
	CUresult r;

	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	r = attr_device(dev);
	if (!r)
		r = kernel_get(kernel, NULL, NULL, &f);
	return r ? r : cuFuncGetAttribute(pi, attrib, f);
}

/*
 * The kernel's function in every context of dev the library is loaded in
 * gets the attribute now; contexts it is loaded into later get it then.
 */
SHIM_EXPORT CUresult cuKernelSetAttribute(CUfunction_attribute attrib, int val,
					  CUkernel kernel, CUdevice dev)
{
	struct lib_kernel *k;
	struct shim_library *l;
	unsigned int i;
	CUresult r = attr_device(dev);

	if (r)
		return r;
	pthread_mutex_lock(&lib_lock);
	k = kernel_of(kernel);
	if (!k) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	l = k->lib;
	for (i = 0; !r && i < l->nmods; i++) {
		struct shim_ctx *sc = shim_ctx_of((CUcontext)(uintptr_t)l->mods[i].ctx);
		CUfunction f;

		if (!sc || sc->device != dev)
			continue;
		if (l->mods[i].ctx == k->ctx)
			f = k->handle;
		else if ((r = cuModuleGetFunction(&f, l->mods[i].mod, k->name)))
			break;
		r = cuFuncSetAttribute(f, attrib, val);
	}
	if (r)
		goto out;
	for (i = 0; i < k->nattrs; i++)
		if (k->attrs[i].attr == attrib && k->attrs[i].dev == dev)
			break;
	if (i == MAX_KERNEL_ATTRS) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	if (i == k->nattrs)
		k->nattrs++;
	k->attrs[i] = (struct kernel_attr){ attrib, val, dev };
out:
	pthread_mutex_unlock(&lib_lock);
	return r;
}

/* The library's module in the context its calls work in (loaded there if
 * need be). */
static CUresult lib_module(CUlibrary library, CUmodule *mod)
{
	struct shim_library *l;
	struct shim_ctx *sc;
	CUresult r;

	pthread_mutex_lock(&lib_lock);
	l = lib_of(library);
	r = l ? target_ctx(&sc) : CUDA_ERROR_INVALID_HANDLE;
	if (!r)
		r = module_in(l, sc, mod);
	pthread_mutex_unlock(&lib_lock);
	return r;
}

SHIM_EXPORT CUresult cuLibraryGetModule(CUmodule *pMod, CUlibrary library)
{
	if (!pMod)
		return CUDA_ERROR_INVALID_VALUE;
	return lib_module(library, pMod);
}

SHIM_EXPORT CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary library,
					const char *name)
{
	CUmodule mod;
	CUresult r = lib_module(library, &mod);

	return r ? r : cuModuleGetGlobal_v2(dptr, bytes, mod, name);
}
