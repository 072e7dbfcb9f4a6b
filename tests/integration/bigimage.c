// SPDX-License-Identifier: MIT
/*
 * bigimage - a module image larger than the shim can send (more than half
 * its data area; issue 15: NCCL's 58 MiB fatbin) is refused with a clean
 * CUresult on every path that loads one, and the process carries on:
 *
 *   - cuModuleLoadData of a fatbin, an ELF and PTX text that large
 *   - cuLibraryLoadData (not preserved and preserved), then everything
 *     that loads the library into a context: cuLibraryGetKernel,
 *     cuLibraryGetModule, cuLibraryGetGlobal; cuLibraryUnload
 *   - cuModuleLoad of such a file
 *   - afterwards a small module loads and its kernel runs
 *
 * Run against a daemon with a small data area (--data-size, given by
 * integration-bigimage); the size of the images is the first argument.
 */
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuclient.h"

#define FATBIN_MAGIC	0xba55ed50U
#define N		256

static void refused(const char *what, CUresult r)
{
	if (r == CUDA_SUCCESS)
		cu_fail("%s of an oversized image succeeded", what);
	printf("  ok    %s: %s\n", what, cu_name(r));
}

/* A fatbin container header claiming len bytes in all. */
static void *fatbin(size_t len)
{
	unsigned char *p = calloc(1, len);
	uint32_t magic = FATBIN_MAGIC;
	uint16_t version = 1, hdr = 16;
	uint64_t size = len - 16;

	if (!p)
		cu_fail("out of memory");
	memcpy(p, &magic, 4);
	memcpy(p + 4, &version, 2);
	memcpy(p + 6, &hdr, 2);
	memcpy(p + 8, &size, 8);
	return p;
}

/* An ELF header whose one section ends at len. */
static void *elf(size_t len)
{
	unsigned char *p = calloc(1, len);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)p;
	Elf64_Shdr *sh = (Elf64_Shdr *)(p + sizeof(*eh));

	if (!p)
		cu_fail("out of memory");
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_shoff = sizeof(*eh);
	eh->e_shnum = 1;
	eh->e_shentsize = sizeof(*sh);
	sh->sh_type = SHT_PROGBITS;
	sh->sh_offset = 4096;
	sh->sh_size = len - 4096;
	return p;
}

static void *ptx(size_t len)
{
	char *p = malloc(len);

	if (!p)
		cu_fail("out of memory");
	memset(p, ' ', len - 1);
	p[len - 1] = 0;
	memcpy(p, ".version 7.0\n", 13);
	return p;
}

static void libraries(void *image)
{
	static const unsigned int preserved[] = { 0, 1 };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		CUlibraryOption opt = CU_LIBRARY_BINARY_IS_PRESERVED;
		void *val = (void *)(uintptr_t)preserved[i];
		CUdeviceptr dptr;
		CUlibrary lib;
		CUkernel k;
		CUmodule m;
		size_t bytes;
		CUresult r;

		r = cuLibraryLoadData(&lib, image, NULL, NULL, 0, &opt, &val, 1);
		if (r) {	/* failing the load itself is a clean answer too */
			refused(preserved[i] ? "cuLibraryLoadData (preserved)"
					     : "cuLibraryLoadData", r);
			continue;
		}
		refused("cuLibraryGetKernel", cuLibraryGetKernel(&k, lib, "fill"));
		refused("cuLibraryGetModule", cuLibraryGetModule(&m, lib));
		refused("cuLibraryGetGlobal", cuLibraryGetGlobal(&dptr, &bytes, lib, "g"));
		refused("cuLibraryGetKernel again", cuLibraryGetKernel(&k, lib, "fill"));
		CK(cuLibraryUnload(lib));
	}
}

static void from_file(const void *image, size_t len)
{
	char path[] = "/tmp/axon-bigimage-XXXXXX";
	int fd = mkstemp(path);
	CUmodule m;

	if (fd < 0 || write(fd, image, len) != (ssize_t)len)
		cu_fail("cannot write %s", path);
	close(fd);
	refused("cuModuleLoad", cuModuleLoad(&m, path));
	unlink(path);
}

/* The process goes on: a small module loads and its kernel runs. */
static void still_works(void)
{
	CUdeviceptr d;
	CUfunction f;
	CUmodule m;
	float h[N], v = 3.0f;
	int n = N, i;
	void *params[] = { &d, &v, &n };
	void *image = cu_load_kernels("cubin", NULL);

	CK(cuModuleLoadData(&m, image));
	CK(cuModuleGetFunction(&f, m, K_FILL));
	CK(cuMemAlloc(&d, sizeof(h)));
	CK(cuLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, NULL, params, NULL));
	CK(cuMemcpyDtoH(h, d, sizeof(h)));
	for (i = 0; i < N; i++)
		if (h[i] != 3.0f)
			cu_fail("the kernel after the refusals wrote %g at %d", h[i], i);
	CK(cuMemFree(d));
	CK(cuModuleUnload(m));
	free(image);
	printf("  ok    a small module loads and runs afterwards\n");
}

int main(int argc, char **argv)
{
	size_t len = argc > 1 ? (size_t)strtoull(argv[1], NULL, 0) : 4u << 20;
	void *fb = fatbin(len), *el = elf(len), *tx = ptx(len);
	CUcontext ctx;
	CUdevice dev;
	CUmodule m;

	cu_prog = "bigimage";
	free(cu_load_kernels("cubin", NULL));	/* 77 without the images */
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	refused("cuModuleLoadData (fatbin)", cuModuleLoadData(&m, fb));
	refused("cuModuleLoadData (ELF)", cuModuleLoadData(&m, el));
	refused("cuModuleLoadData (PTX)", cuModuleLoadData(&m, tx));
	refused("cuModuleLoadData again", cuModuleLoadData(&m, fb));
	libraries(fb);
	from_file(el, len);
	still_works();
	CK(cuCtxDestroy(ctx));
	free(fb);
	free(el);
	free(tx);
	printf("bigimage: all checks passed\n");
	return 0;
}
