// SPDX-License-Identifier: MIT
/*
 * shim-exports: $AXON_BUILD/lib/libcuda.so.1 exports every function cuda.h
 * declares under __CUDA_API_VERSION_INTERNAL (all versioned, _ptds and _ptsz
 * names), has the SONAME libcuda.so.1, keeps its internals hidden, and its
 * unimplemented stubs return CUDA_ERROR_NOT_SUPPORTED, logging
 * "axon: <name> is not implemented" once per name unless AXON_LOG=0.
 * dlopen only: no daemon, no cuInit.
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <check.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cudaTypedefs.h>
#include <cudaProfilerTypedefs.h>

#include "shim_gen_lists.h"

static void *lib;
static char lib_path[PATH_MAX + 32];

static int find_lib(void)
{
	const char *b = getenv("AXON_BUILD");

	if (b && *b) {
		snprintf(lib_path, sizeof(lib_path), "%s/lib/libcuda.so.1", b);
	} else {
		/* $BUILD/tests/<me> -> $BUILD/lib/libcuda.so.1 */
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		char *s;

		if (n <= 0)
			return -1;
		exe[n] = '\0';
		for (int i = 0; i < 2 && (s = strrchr(exe, '/')); i++)
			*s = '\0';
		snprintf(lib_path, sizeof(lib_path), "%s/lib/libcuda.so.1", exe);
	}
	return access(lib_path, R_OK);
}

static void load(void)
{
	lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(lib, "dlopen %s: %s", lib_path, dlerror());
}

START_TEST(every_cuda_h_function_is_exported)
{
	static const char *const names[] = {
#define NAME(name) #name,
		AXON_SHIM_FOR_EACH_EXPORT(NAME)
#undef NAME
	};
	size_t n = sizeof(names) / sizeof(names[0]);
	unsigned int missing = 0;

	for (size_t i = 0; i < n; i++) {
		void *p = dlsym(lib, names[i]);
		Dl_info di;

		if (!p) {
			fprintf(stderr, "not exported: %s\n", names[i]);
			missing++;
		} else if (!dladdr(p, &di) || !di.dli_fname ||
			   !strstr(di.dli_fname, "libcuda.so.1")) {
			fprintf(stderr, "%s is not the shim's\n", names[i]);
			missing++;
		}
	}
	ck_assert_uint_eq(missing, 0);
	/* CUDA 13.0's cuda.h: 634 functions. More is fine (a newer cuda.h). */
	ck_assert_uint_ge(n, 634);

	/* a few by hand, in case the list itself were short */
	ck_assert_ptr_nonnull(dlsym(lib, "cuInit"));
	ck_assert_ptr_nonnull(dlsym(lib, "cuMemAlloc"));
	ck_assert_ptr_nonnull(dlsym(lib, "cuMemAlloc_v2"));
	ck_assert_ptr_nonnull(dlsym(lib, "cuCtxCreate_v4"));
	ck_assert_ptr_nonnull(dlsym(lib, "cuMemcpyHtoD_v2_ptds"));
	ck_assert_ptr_nonnull(dlsym(lib, "cuLaunchKernel_ptsz"));
	ck_assert_ptr_nonnull(dlsym(lib, "cuStreamGetCaptureInfo_v3_ptsz"));
	ck_assert_ptr_nonnull(dlsym(lib, "cuGetProcAddress"));
	ck_assert_ptr_nonnull(dlsym(lib, "cuGetProcAddress_v2"));
	ck_assert_ptr_nonnull(dlsym(lib, "cuGetExportTable"));
}
END_TEST

START_TEST(internals_are_hidden)
{
	static const char *const names[] = {
		"axon_shim_unimplemented", "axon_proc_bases", "axon_proc_variants",
		"axon_proc_strtab",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ck_assert_msg(!dlsym(lib, names[i]), "%s is exported", names[i]);
}
END_TEST

/* DT_SONAME, read from the file's dynamic section */
START_TEST(soname)
{
	int fd = open(lib_path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	const unsigned char *m;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	const char *soname = NULL;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &sb), 0);
	m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	close(fd);
	eh = (const Elf64_Ehdr *)m;
	ck_assert_int_eq(memcmp(eh->e_ident, ELFMAG, SELFMAG), 0);
	ck_assert_int_eq(eh->e_ident[EI_CLASS], ELFCLASS64);
	ck_assert_uint_le(eh->e_shoff + (Elf64_Off)eh->e_shnum * sizeof(*sh),
			  (Elf64_Off)sb.st_size);
	sh = (const Elf64_Shdr *)(m + eh->e_shoff);
	for (unsigned int i = 0; i < eh->e_shnum && !soname; i++) {
		const Elf64_Dyn *d;
		const Elf64_Shdr *str;

		if (sh[i].sh_type != SHT_DYNAMIC)
			continue;
		ck_assert_uint_lt(sh[i].sh_link, eh->e_shnum);
		str = &sh[sh[i].sh_link];
		d = (const Elf64_Dyn *)(m + sh[i].sh_offset);
		for (; (const unsigned char *)(d + 1) <= m + sh[i].sh_offset + sh[i].sh_size &&
		       d->d_tag != DT_NULL; d++)
			if (d->d_tag == DT_SONAME) {
				ck_assert_uint_lt(d->d_un.d_val, str->sh_size);
				soname = (const char *)m + str->sh_offset + d->d_un.d_val;
			}
	}
	ck_assert_ptr_nonnull(soname);
	ck_assert_str_eq(soname, "libcuda.so.1");
	munmap((void *)m, (size_t)sb.st_size);
}
END_TEST

/*
 * Runs @fn with stderr sent into a pipe; returns what it wrote. The stubs
 * used below are ones a GPU-sharing shim has no reason to implement
 * (graphics interop, texture references); if one gets implemented, pick
 * another stub.
 */
static char captured[4096];

static const char *capture_stderr(void (*fn)(void))
{
	int p[2], saved;
	ssize_t n;

	ck_assert_int_eq(pipe(p), 0);
	saved = dup(STDERR_FILENO);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_ge(dup2(p[1], STDERR_FILENO), 0);
	close(p[1]);
	fn();
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = read(p[0], captured, sizeof(captured) - 1);
	close(p[0]);
	captured[n > 0 ? n : 0] = '\0';
	return captured;
}

static void call_set_map_flags(void)
{
	PFN_cuGraphicsResourceSetMapFlags_v6050 f;

	*(void **)&f = dlsym(lib, "cuGraphicsResourceSetMapFlags_v2");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f(NULL, 0), CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(f(NULL, 0), CUDA_ERROR_NOT_SUPPORTED);
}

static void call_texref(void)
{
	PFN_cuTexRefSetAddress2D_v3020 f;

	*(void **)&f = dlsym(lib, "cuTexRefSetAddress2D_v2");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f(NULL, NULL, 0, 0), CUDA_ERROR_NOT_SUPPORTED);
}

static void call_old_set_map_flags(void)
{
	PFN_cuGraphicsResourceSetMapFlags_v3000 f;

	*(void **)&f = dlsym(lib, "cuGraphicsResourceSetMapFlags");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f(NULL, 0), CUDA_ERROR_NOT_SUPPORTED);
}

START_TEST(stub_returns_not_supported_and_logs_once)
{
	unsetenv("AXON_LOG");
	ck_assert_str_eq(capture_stderr(call_set_map_flags),
			 "axon: cuGraphicsResourceSetMapFlags_v2 is not implemented\n");
	/* already reported: silent */
	ck_assert_str_eq(capture_stderr(call_set_map_flags), "");
	/* another name is reported on its own */
	ck_assert_str_eq(capture_stderr(call_old_set_map_flags),
			 "axon: cuGraphicsResourceSetMapFlags is not implemented\n");
}
END_TEST

START_TEST(axon_log_0_silences)
{
	setenv("AXON_LOG", "0", 1);
	ck_assert_str_eq(capture_stderr(call_texref), "");
	/* any other value logs (at warning level); a silenced call did not count */
	setenv("AXON_LOG", "1", 1);
	ck_assert_str_eq(capture_stderr(call_texref),
			 "axon: cuTexRefSetAddress2D_v2 is not implemented\n");
	unsetenv("AXON_LOG");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("shim-exports");
	TCase *tc = tcase_create("exports");
	SRunner *sr;
	int failed;

	if (find_lib() != 0) {
		fprintf(stderr, "skip: %s not built\n", lib_path);
		return 77;
	}
	tcase_add_unchecked_fixture(tc, load, NULL);
	tcase_add_test(tc, every_cuda_h_function_is_exported);
	tcase_add_test(tc, internals_are_hidden);
	tcase_add_test(tc, soname);
	tcase_add_test(tc, stub_returns_not_supported_and_logs_once);
	tcase_add_test(tc, axon_log_0_silences);
	suite_add_tcase(s, tc);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
