// SPDX-License-Identifier: MIT
/*
 * Modules, functions and globals. cuModuleLoadData gets no size, so the
 * shim finds the image's extent from its own headers (ELF, fatbin, fatbin
 * wrapper, PTX text) before copying it through the data area. The daemon
 * parses it; a function's parameter layout comes back so cuLaunchKernel can
 * pack arguments without asking again.
 */
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fatbin.h"
#include "shim.h"
#include "forkreg.h"

/* Client-side copies of function layouts, by handle index. */
static struct shim_func **funcs;
static uint32_t nfuncs;

struct shim_func *shim_func_of(CUfunction f)
{
	uint64_t h = (uint64_t)(uintptr_t)f;
	uint32_t i = AXON_HANDLE_INDEX(h);

	if (AXON_HANDLE_TYPE(h) != AXON_HANDLE_FUNC || i >= nfuncs || !funcs[i] ||
	    funcs[i]->handle != h)
		return NULL;
	return funcs[i];
}

/* After fork: the parent's functions mean nothing to the child. */
static void funcs_forget(void)
{
	uint32_t i;

	for (i = 0; i < nfuncs; i++)
		free(funcs[i]);
	free(funcs);
	funcs = NULL;
	nfuncs = 0;
}

__attribute__((constructor)) static void register_funcs_forget(void)
{
	shim_fork_register(funcs_forget);
}

/* Bytes of an image given only its address; 0 if unrecognised. */
static size_t image_size(const void *image)
{
	const unsigned char *p = image;
	uint32_t magic;

	memcpy(&magic, p, 4);
	if (!memcmp(p, ELFMAG, SELFMAG)) {
		const Elf64_Ehdr *eh = image;
		size_t end = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
		size_t ph = eh->e_phoff + (size_t)eh->e_phnum * eh->e_phentsize;
		unsigned int i;

		if (eh->e_ident[EI_CLASS] != ELFCLASS64)
			return 0;
		if (ph > end)
			end = ph;
		for (i = 0; i < eh->e_shnum; i++) {
			const Elf64_Shdr *sh = (const void *)(p + eh->e_shoff +
							      (size_t)i * eh->e_shentsize);

			if (sh->sh_type != SHT_NOBITS && sh->sh_offset + sh->sh_size > end)
				end = sh->sh_offset + sh->sh_size;
		}
		return end;
	}
	if (magic == FATBIN_MAGIC)
		return (size_t)fatbin_container_extent(p);
	/* PTX: text. */
	return strlen(image) + 1;
}

/* Unwraps the in-process fatbin wrapper {magic, version, data, ...}. */
static const void *unwrap(const void *image)
{
	uint32_t magic;

	memcpy(&magic, image, 4);
	if (magic == FATBIN_WRAPPER_MAGIC) {
		const void *data;

		memcpy(&data, (const char *)image + 8, sizeof(data));
		return data;
	}
	return image;
}

const void *shim_module_image(const void *image, size_t *len)
{
	image = unwrap(image);
	*len = image_size(image);
	return image;
}

static CUresult load(CUmodule *mod, const void *image, size_t len)
{
	struct shim_waiter w = { 0 };
	struct shim_ctx *sc;
	struct axon_sqe *sqe;
	uint64_t id, off;
	CUresult r;

	if (!mod || !image)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_get_ctx(&sc);
	if (r)
		return r;
	if (!len)
		return CUDA_ERROR_INVALID_IMAGE;
	/* Refused before: fails at once, as the driver would (refused.c). */
	r = shim_image_refused(image, len, sc->device, false);
	if (r)
		return r;
	if (len > shim_data_max() / 2) {
		shim_log("module image of %zu bytes exceeds half the data area (%llu bytes); "
			 "raise it with axond --data-size (socket clients) or the axon "
			 "module's max_data_size/default_data_size (/dev/axon clients)", len,
			 (unsigned long long)shim_data_max());
		return CUDA_ERROR_INVALID_VALUE;
	}
	shim_lock();
	off = shim_data_alloc(len, &id);
	memcpy(shim.ring.data + off, image, len);
	sqe = shim_sqe();
	if (!sqe) {
		shim_data_done(id);
		shim_unlock();
		return shim_gone_error();
	}
	axon_prep_module_load(sqe, sc->handle, (uint32_t)off, (uint32_t)len);
	r = shim_sync_op(sqe, &w);
	shim_data_done(id);
	if (!r)
		*mod = (CUmodule)(uintptr_t)w.aux[0];
	shim_unlock();
	if (r)
		shim_image_remember_refused(image, len, sc->device, r);
	return r;
}

SHIM_EXPORT CUresult cuModuleLoadData(CUmodule *mod, const void *image)
{
	if (!image)
		return CUDA_ERROR_INVALID_VALUE;
	image = unwrap(image);
	return load(mod, image, image_size(image));
}

SHIM_EXPORT CUresult cuModuleLoadDataEx(CUmodule *mod, const void *image, unsigned int n,
					CUjit_option *options, void **values)
{
	(void)n;
	(void)options;
	(void)values;	/* JIT options are advice; the daemon compiles */
	return cuModuleLoadData(mod, image);
}

SHIM_EXPORT CUresult cuModuleLoadFatBinary(CUmodule *mod, const void *fatbin)
{
	return cuModuleLoadData(mod, fatbin);
}

/* The whole of file name and its size, with a NUL after it (for PTX), in a
 * buffer to free (cuModuleLoad, cuLibraryLoadFromFile). */
CUresult shim_read_image_file(const char *name, char **buf, size_t *size)
{
	struct stat st;
	FILE *f;

	f = fopen(name, "rbe");
	if (!f)
		return CUDA_ERROR_FILE_NOT_FOUND;
	if (fstat(fileno(f), &st) < 0 || st.st_size <= 0) {
		fclose(f);
		return CUDA_ERROR_INVALID_IMAGE;
	}
	*buf = calloc(1, (size_t)st.st_size + 1);
	if (!*buf) {
		fclose(f);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (fread(*buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		fclose(f);
		free(*buf);
		return CUDA_ERROR_FILE_NOT_FOUND;
	}
	fclose(f);
	*size = (size_t)st.st_size;
	return CUDA_SUCCESS;
}

SHIM_EXPORT CUresult cuModuleLoad(CUmodule *mod, const char *fname)
{
	size_t size;
	char *buf;
	CUresult r;

	if (!fname || !mod)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_read_image_file(fname, &buf, &size);
	if (r)
		return r;
	r = load(mod, buf, image_size(buf) > size + 1 ? size : image_size(buf));
	free(buf);
	return r;
}

SHIM_EXPORT CUresult cuModuleUnload(CUmodule mod)
{
	struct axon_sqe *sqe;

	if (AXON_HANDLE_TYPE((uint64_t)(uintptr_t)mod) != AXON_HANDLE_MODULE)
		return CUDA_ERROR_INVALID_HANDLE;
	shim_lock();
	sqe = shim_sqe();
	if (sqe) {
		axon_prep_module_unload(sqe, (uint64_t)(uintptr_t)mod);
		axon_sqe_set_flags(sqe, AXON_SQE_F_DEFERRED);
		shim_flush();
	}
	shim_unlock();
	return sqe ? CUDA_SUCCESS : shim_gone_error();
}

/* Names travel in the data area; the reply overwrites the same bytes. */
static CUresult named_op(unsigned int op, CUmodule mod, const char *name,
			 size_t reply, struct shim_waiter *w, void *out)
{
	size_t n = name ? strnlen(name, 1024) : 0;
	size_t len = n + 1 > reply ? n + 1 : reply;
	struct axon_sqe *sqe;
	uint64_t id, off;
	CUresult r;

	if (!name || n == 0 || n >= 1024)
		return CUDA_ERROR_INVALID_VALUE;
	off = shim_data_alloc(len, &id);
	memcpy(shim.ring.data + off, name, n + 1);
	sqe = shim_sqe();
	if (!sqe) {
		shim_data_done(id);
		return shim_gone_error();
	}
	if (op == AXON_OP_MODULE_GET_FUNC)
		axon_prep_module_get_func(sqe, (uint64_t)(uintptr_t)mod, (uint32_t)off,
					  (uint32_t)len);
	else
		axon_prep_module_get_global(sqe, (uint64_t)(uintptr_t)mod, (uint32_t)off,
					    (uint32_t)len);
	r = shim_sync_op(sqe, w);
	if (!r && out)
		memcpy(out, shim.ring.data + off, reply);
	shim_data_done(id);
	return r;
}

static int remember_func(uint64_t h, const struct axon_func_info *info, CUmodule mod,
			 const char *name)
{
	uint32_t i = AXON_HANDLE_INDEX(h);
	struct shim_func *f;

	if (info->nparams > AXON_MAX_KERNEL_PARAMS || info->args_size > AXON_MAX_ARGS_SIZE)
		return -EINVAL;
	if (i < nfuncs && funcs[i] && funcs[i]->handle == h)
		return 0;
	if (i >= nfuncs) {
		uint32_t n = nfuncs ? nfuncs : 64;
		struct shim_func **nf;

		while (n <= i)
			n *= 2;
		nf = realloc(funcs, n * sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		memset(nf + nfuncs, 0, (n - nfuncs) * sizeof(*nf));
		funcs = nf;
		nfuncs = n;
	}
	f = calloc(1, sizeof(*f) + info->nparams * sizeof(uint32_t) + strlen(name) + 1);
	if (!f)
		return -ENOMEM;
	f->handle = h;
	f->nparams = info->nparams;
	f->args_size = info->args_size;
	f->param = (uint32_t *)(f + 1);
	memcpy(f->param, info->param, info->nparams * sizeof(uint32_t));
	f->module = (uint64_t)(uintptr_t)mod;
	f->name = strcpy((char *)(f->param + info->nparams), name);
	f->max_dyn_shared = -1;
	if (funcs[i])
		free(funcs[i]);
	funcs[i] = f;
	return 0;
}

SHIM_EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule mod, const char *name)
{
	struct shim_waiter w = { 0 };
	struct axon_func_info *info;
	CUresult r;

	if (!hfunc)
		return CUDA_ERROR_INVALID_VALUE;
	if (AXON_HANDLE_TYPE((uint64_t)(uintptr_t)mod) != AXON_HANDLE_MODULE)
		return CUDA_ERROR_INVALID_HANDLE;
	info = malloc(sizeof(*info));
	if (!info)
		return CUDA_ERROR_OUT_OF_MEMORY;
	shim_lock();
	r = named_op(AXON_OP_MODULE_GET_FUNC, mod, name, sizeof(*info), &w, info);
	if (!r) {
		int ret = remember_func(w.aux[0], info, mod, name);

		if (ret)
			r = ret == -ENOMEM ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_IMAGE;
		else
			*hfunc = (CUfunction)(uintptr_t)w.aux[0];
	}
	shim_unlock();
	free(info);
	return r;
}

/*
 * The names of mod's functions (MODULE_FUNCS), NUL-separated, in a malloc'd
 * buffer (*names, NULL when there are none) and their count. Asks with a
 * 4 KiB buffer, then once more with what the daemon says it needs.
 */
CUresult shim_module_func_names(CUmodule mod, char **names, uint32_t *count)
{
	uint64_t len = 4096;
	int tries;

	*names = NULL;
	*count = 0;
	if (AXON_HANDLE_TYPE((uint64_t)(uintptr_t)mod) != AXON_HANDLE_MODULE)
		return CUDA_ERROR_INVALID_HANDLE;
	for (tries = 0; tries < 2; tries++) {
		struct shim_waiter w = { 0 };
		struct axon_sqe *sqe;
		uint64_t id, off;
		CUresult r;

		if (len > shim.ring.params.data_size / 2)
			return CUDA_ERROR_OUT_OF_MEMORY;
		shim_lock();
		off = shim_data_alloc(len, &id);
		sqe = shim_sqe();
		if (!sqe) {
			shim_data_done(id);
			shim_unlock();
			return shim_gone_error();
		}
		axon_prep_module_funcs(sqe, (uint64_t)(uintptr_t)mod, (uint32_t)off,
				       (uint32_t)len);
		r = shim_sync_op(sqe, &w);
		if (!r && w.aux[1] <= len && w.aux[0] <= w.aux[1]) {
			*names = w.aux[1] ? malloc(w.aux[1]) : NULL;
			if (w.aux[1] && !*names)
				r = CUDA_ERROR_OUT_OF_MEMORY;
			else if (*names)
				memcpy(*names, shim.ring.data + off, w.aux[1]);
			*count = (uint32_t)w.aux[0];
		}
		shim_data_done(id);
		shim_unlock();
		if (r == CUDA_ERROR_INVALID_VALUE && w.aux[1] > len) {
			len = (w.aux[1] + 4095) & ~4095ULL;
			continue;
		}
		/* Each name is NUL-terminated: a daemon that says otherwise is
		 * not believed. */
		if (!r && *count && (*names)[w.aux[1] - 1]) {
			free(*names);
			*names = NULL;
			*count = 0;
			return CUDA_ERROR_UNKNOWN;
		}
		return r;
	}
	return CUDA_ERROR_UNKNOWN;
}

SHIM_EXPORT CUresult cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
	uint32_t n;
	char *names;
	CUresult r;

	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_module_func_names(mod, &names, &n);
	free(names);
	if (!r)
		*count = n;
	return r;
}

SHIM_EXPORT CUresult cuModuleEnumerateFunctions(CUfunction *functions, unsigned int num,
						CUmodule mod)
{
	uint32_t n, i;
	char *names, *p;
	CUresult r;

	if (!functions)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_module_func_names(mod, &names, &n);
	/* Fewer slots than functions: the driver fills what fits. */
	for (i = 0, p = names; !r && i < n && i < num; i++, p += strlen(p) + 1)
		r = cuModuleGetFunction(&functions[i], mod, p);
	free(names);
	return r;
}

SHIM_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule mod,
					  const char *name)
{
	struct shim_waiter w = { 0 };
	CUresult r;

	if (AXON_HANDLE_TYPE((uint64_t)(uintptr_t)mod) != AXON_HANDLE_MODULE)
		return CUDA_ERROR_INVALID_HANDLE;
	shim_lock();
	r = named_op(AXON_OP_MODULE_GET_GLOBAL, mod, name, 0, &w, NULL);
	shim_unlock();
	if (r)
		return r;
	if (dptr)
		*dptr = w.aux[0];
	if (bytes)
		*bytes = w.aux[1];
	return CUDA_SUCCESS;
}

/*
 * A function's attributes are asked from the daemon once each and then
 * answered here: cuBLAS asks for them (directly and through the occupancy
 * calculator, five per occupancy query) for every GEMM it plans, and each
 * was a synchronous crossing: ~40 per step of the MLP training benchmark,
 * whose steps took ~150 us longer than natively for the same GPU time
 * (H200, 2026-11-29). They change only by cuFuncSetAttribute (funcattr.c),
 * which forgets what was cached.
 */
_Static_assert(CU_FUNC_ATTRIBUTE_MAX <= 32, "attribute cache too small");

SHIM_EXPORT CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction f)
{
	struct shim_waiter w = { 0 };
	struct shim_func *sf;
	CUresult r;

	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	shim_lock();
	sf = shim_func_of(f);
	if (!sf) {
		shim_unlock();
		return CUDA_ERROR_INVALID_HANDLE;
	}
	if ((unsigned int)attrib < CU_FUNC_ATTRIBUTE_MAX &&
	    (sf->attr_known & (1U << attrib))) {
		*pi = sf->attr[attrib];
		shim_unlock();
		return CUDA_SUCCESS;
	}
	r = shim_call_locked(&w, axon_prep_func_get_attr, (uint64_t)(uintptr_t)f,
			     (uint64_t)attrib);
	if (!r) {
		*pi = (int)(int64_t)w.aux[0];
		/* The entry may have been replaced while the lock was
		 * dropped: cache only in the one asked about. */
		if ((unsigned int)attrib < CU_FUNC_ATTRIBUTE_MAX && shim_func_of(f) == sf) {
			sf->attr[attrib] = *pi;
			sf->attr_known |= 1U << attrib;
		}
	}
	shim_unlock();
	return r;
}
