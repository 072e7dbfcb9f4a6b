// SPDX-License-Identifier: MIT
/*
 * shim-procaddr: cuGetProcAddress / cuGetProcAddress_v2 of the libcuda shim
 * ($AXON_BUILD/lib/libcuda.so.1, dlopened; no daemon, no cuInit).
 *
 * The expectations are NVIDIA's driver's (580.159.04, CUDA 13.0), measured
 * on a real driver: the version breakpoints, the per-thread (_ptds/_ptsz)
 * variants, and what comes back for unknown symbols, versions too old or too
 * new, and bad flags. Every returned pointer must be the library's own
 * exported symbol (dlsym of the variant's name).
 */
#define __CUDA_API_VERSION_INTERNAL 1
#include <check.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cudaTypedefs.h>
#include <cudaProfilerTypedefs.h>

#include "shim_gen_lists.h"
#include "shim_proctable.h"

#define REQUIRE(expr)							\
	do {								\
		if (__builtin_expect(!(expr), 0))			\
			ck_abort_msg("requirement failed: %s", #expr);	\
	} while (0)

#define LEGACY	CU_GET_PROC_ADDRESS_LEGACY_STREAM
#define PTDS	CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM
static const char not_sufficient[] = "(version not sufficient)";
#define NS	not_sufficient		/* expected: VERSION_NOT_SUFFICIENT */

static void *lib;
static PFN_cuGetProcAddress_v12000 gpa2;
static PFN_cuGetProcAddress_v11030 gpa1;

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
	*(void **)&gpa2 = dlsym(lib, "cuGetProcAddress_v2");
	*(void **)&gpa1 = dlsym(lib, "cuGetProcAddress");
	ck_assert_ptr_nonnull(gpa2);
	ck_assert_ptr_nonnull(gpa1);
}

static void *sym(const char *name)
{
	void *p = dlsym(lib, name);

	ck_assert_msg(p, "%s is not exported", name);
	return p;
}

/*
 * Asks for @base at @version with @flags through both entry points and
 * checks the answer: the variant named @want, NS, or NULL (symbol unknown).
 */
static void expect(const char *base, int version, cuuint64_t flags, const char *want)
{
	void *pfn = (void *)1;
	CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)99;
	CUresult r = gpa2(base, &pfn, version, flags, &st);

	ck_assert_msg(r == CUDA_SUCCESS, "%s@%d/%llu: _v2 returned %d", base, version,
		      (unsigned long long)flags, r);
	if (!want || want == NS) {
		ck_assert_msg(pfn == NULL, "%s@%d/%llu: pfn %p, want NULL", base, version,
			      (unsigned long long)flags, pfn);
		ck_assert_int_eq(st, want ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT
					  : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
	} else {
		ck_assert_int_eq(st, CU_GET_PROC_ADDRESS_SUCCESS);
		ck_assert_msg(pfn == sym(want), "%s@%d/%llu: got %p, want %s (%p)", base,
			      version, (unsigned long long)flags, pfn, want, sym(want));
	}

	/* the CUDA 11.3 form: an error instead of a status */
	pfn = (void *)1;
	r = gpa1(base, &pfn, version, flags);
	if (!want || want == NS) {
		ck_assert_int_eq(r, CUDA_ERROR_NOT_FOUND);
		ck_assert_ptr_null(pfn);
	} else {
		ck_assert_int_eq(r, CUDA_SUCCESS);
		ck_assert_ptr_eq(pfn, sym(want));
	}
}

/* legacy and default flags agree */
static void expect_legacy(const char *base, int version, const char *want)
{
	expect(base, version, 0, want);
	expect(base, version, LEGACY, want);
}

START_TEST(breakpoints)
{
	static const struct { const char *base; int v; const char *want; } t[] = {
		{ "cuCtxCreate", 1999, NS },
		{ "cuCtxCreate", 2000, "cuCtxCreate" },
		{ "cuCtxCreate", 3019, "cuCtxCreate" },
		{ "cuCtxCreate", 3020, "cuCtxCreate_v2" },
		{ "cuCtxCreate", 11039, "cuCtxCreate_v2" },
		{ "cuCtxCreate", 11040, "cuCtxCreate_v3" },
		{ "cuCtxCreate", 12049, "cuCtxCreate_v3" },
		{ "cuCtxCreate", 12050, "cuCtxCreate_v4" },
		{ "cuCtxCreate", 13000, "cuCtxCreate_v4" },
		{ "cuCtxSynchronize", 12090, "cuCtxSynchronize" },
		{ "cuCtxSynchronize", 13000, "cuCtxSynchronize_v2" },
		{ "cuEventElapsedTime", 12079, "cuEventElapsedTime" },
		{ "cuEventElapsedTime", 12080, "cuEventElapsedTime_v2" },
		{ "cuStreamGetCaptureInfo", 10009, NS },
		{ "cuStreamGetCaptureInfo", 10010, "cuStreamGetCaptureInfo" },
		{ "cuStreamGetCaptureInfo", 11029, "cuStreamGetCaptureInfo" },
		{ "cuStreamGetCaptureInfo", 11030, "cuStreamGetCaptureInfo_v2" },
		{ "cuStreamGetCaptureInfo", 12029, "cuStreamGetCaptureInfo_v2" },
		{ "cuStreamGetCaptureInfo", 12030, "cuStreamGetCaptureInfo_v3" },
		{ "cuGraphInstantiate", 10000, "cuGraphInstantiate" },
		{ "cuGraphInstantiate", 10999, "cuGraphInstantiate" },
		{ "cuGraphInstantiate", 11000, "cuGraphInstantiate_v2" },
		{ "cuGraphInstantiate", 13000, "cuGraphInstantiate_v2" },
		{ "cuMemAdvise", 12019, "cuMemAdvise" },
		{ "cuMemAdvise", 12020, "cuMemAdvise_v2" },
		{ "cuMemPrefetchAsync", 7999, NS },
		{ "cuMemPrefetchAsync", 12019, "cuMemPrefetchAsync" },
		{ "cuMemPrefetchAsync", 12020, "cuMemPrefetchAsync_v2" },
		{ "cuGetProcAddress", 11029, NS },
		{ "cuGetProcAddress", 11030, "cuGetProcAddress" },
		{ "cuGetProcAddress", 11999, "cuGetProcAddress" },
		{ "cuGetProcAddress", 12000, "cuGetProcAddress_v2" },
		{ "cuDeviceGetUuid", 9019, NS },
		{ "cuDeviceGetUuid", 9020, "cuDeviceGetUuid" },
		{ "cuDeviceGetUuid", 11039, "cuDeviceGetUuid" },
		{ "cuDeviceGetUuid", 11040, "cuDeviceGetUuid_v2" },
		{ "cuDevicePrimaryCtxRelease", 10999, "cuDevicePrimaryCtxRelease" },
		{ "cuDevicePrimaryCtxRelease", 11000, "cuDevicePrimaryCtxRelease_v2" },
		{ "cuMemHostRegister", 6049, "cuMemHostRegister" },
		{ "cuMemHostRegister", 6050, "cuMemHostRegister_v2" },
		{ "cuMemAlloc", 3019, "cuMemAlloc" },
		{ "cuMemAlloc", 3020, "cuMemAlloc_v2" },
		{ "cuMemFree", 3019, "cuMemFree" },
		{ "cuMemFree", 3020, "cuMemFree_v2" },
		{ "cuMemcpyHtoD", 3019, "cuMemcpyHtoD" },
		{ "cuMemcpyHtoD", 3020, "cuMemcpyHtoD_v2" },
		{ "cuMemcpyHtoD", 13000, "cuMemcpyHtoD_v2" },
		{ "cuCtxDestroy", 3999, "cuCtxDestroy" },
		{ "cuCtxDestroy", 4000, "cuCtxDestroy_v2" },
		{ "cuStreamDestroy", 3999, "cuStreamDestroy" },
		{ "cuStreamDestroy", 4000, "cuStreamDestroy_v2" },
		{ "cuEventDestroy", 3999, "cuEventDestroy" },
		{ "cuEventDestroy", 4000, "cuEventDestroy_v2" },
		{ "cuInit", 0, NS },
		{ "cuInit", 1999, NS },
		{ "cuInit", 2000, "cuInit" },
		{ "cuInit", 13000, "cuInit" },
		{ "cuLaunchKernel", 3999, NS },
		{ "cuLaunchKernel", 6999, "cuLaunchKernel" },
		{ "cuLaunchKernel", 13000, "cuLaunchKernel" },
		{ "cuStreamSynchronize", 13000, "cuStreamSynchronize" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		expect_legacy(t[i].base, t[i].v, t[i].want);
}
END_TEST

START_TEST(per_thread)
{
	static const struct { const char *base; int v; const char *want; } t[] = {
		{ "cuLaunchKernel", 7000, "cuLaunchKernel_ptsz" },
		{ "cuLaunchKernel", 13000, "cuLaunchKernel_ptsz" },
		/* the driver does not fall back to the legacy variant */
		{ "cuLaunchKernel", 6999, NS },
		{ "cuMemcpyHtoD", 7000, "cuMemcpyHtoD_v2_ptds" },
		{ "cuMemcpyHtoD", 13000, "cuMemcpyHtoD_v2_ptds" },
		{ "cuMemcpyHtoD", 6999, NS },
		{ "cuMemcpyHtoDAsync", 13000, "cuMemcpyHtoDAsync_v2_ptsz" },
		{ "cuMemcpy", 13000, "cuMemcpy_ptds" },
		{ "cuMemsetD8", 13000, "cuMemsetD8_v2_ptds" },
		{ "cuStreamSynchronize", 7000, "cuStreamSynchronize_ptsz" },
		{ "cuStreamSynchronize", 13000, "cuStreamSynchronize_ptsz" },
		{ "cuStreamQuery", 13000, "cuStreamQuery_ptsz" },
		{ "cuEventRecord", 13000, "cuEventRecord_ptsz" },
		{ "cuStreamGetCaptureInfo", 10010, "cuStreamGetCaptureInfo_ptsz" },
		{ "cuStreamGetCaptureInfo", 11030, "cuStreamGetCaptureInfo_v2_ptsz" },
		{ "cuStreamGetCaptureInfo", 12030, "cuStreamGetCaptureInfo_v3_ptsz" },
		{ "cuMemPrefetchAsync", 8000, "cuMemPrefetchAsync_ptsz" },
		{ "cuMemPrefetchAsync", 12020, "cuMemPrefetchAsync_v2_ptsz" },
		{ "cuStreamBeginCapture", 10000, "cuStreamBeginCapture_ptsz" },
		{ "cuStreamBeginCapture", 10010, "cuStreamBeginCapture_v2_ptsz" },
		{ "cuStreamGetCtx", 12050, "cuStreamGetCtx_v2_ptsz" },
		{ "cuMemcpyBatchAsync", 12080, "cuMemcpyBatchAsync_ptsz" },
		{ "cuMemcpyBatchAsync", 13000, "cuMemcpyBatchAsync_v2_ptsz" },
		/* no per-thread variant: the legacy one */
		{ "cuMemAlloc", 13000, "cuMemAlloc_v2" },
		{ "cuCtxSynchronize", 13000, "cuCtxSynchronize_v2" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		expect(t[i].base, t[i].v, PTDS, t[i].want);
		/* both bits: per-thread wins */
		expect(t[i].base, t[i].v, PTDS | LEGACY, t[i].want);
	}
	/* and the legacy flags never see a per-thread variant */
	expect_legacy("cuMemcpyHtoD", 13000, "cuMemcpyHtoD_v2");
	expect_legacy("cuStreamSynchronize", 13000, "cuStreamSynchronize");
	expect_legacy("cuMemPrefetchAsync", 13000, "cuMemPrefetchAsync_v2");
}
END_TEST

/*
 * Every table entry, asked for at its own version in its own class, comes
 * back as itself, and as this library's exported symbol of that name.
 */
START_TEST(every_variant)
{
	static const struct {
		const char *base, *variant;
		int version, pt;
	} t[] = {
#define ENTRY(base, variant, version, pt) { #base, #variant, version, pt },
		AXON_SHIM_FOR_EACH_PROC(ENTRY)
#undef ENTRY
	};

	ck_assert_uint_eq(sizeof(t) / sizeof(t[0]), AXON_PROC_NVARIANTS);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		void *pfn = NULL;
		CUdriverProcAddressQueryResult st;
		cuuint64_t fl = t[i].pt == AXON_PROC_PT_NONE ? LEGACY : PTDS;
		void *want = dlsym(lib, t[i].variant);

		if (!want)
			ck_abort_msg("%s is not exported", t[i].variant);
		REQUIRE(gpa2(t[i].base, &pfn, t[i].version, fl, &st) == CUDA_SUCCESS);
		if (pfn != want)
			ck_abort_msg("%s@%d: not %s", t[i].base, t[i].version, t[i].variant);
		REQUIRE(st == CU_GET_PROC_ADDRESS_SUCCESS);
	}
}
END_TEST

START_TEST(unknown_symbols)
{
	static const char *const names[] = {
		"cuNotAThing", "", "cu", "cuMemAlloc_v2", "cuMemcpyHtoD_v2_ptds",
		"cuLaunchKernel_ptsz", "cumemalloc", "cuMemAllocX", "cuMemAllo",
		"aaa", "zzz", "cuGLGetDevices",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		expect(names[i], 13000, 0, NULL);
		expect(names[i], 13000, PTDS, NULL);
		expect(names[i], 0, 0, NULL);
	}
}
END_TEST

START_TEST(version_not_sufficient)
{
	expect_legacy("cuMemAlloc", 0, NS);
	expect_legacy("cuMemAlloc", 1999, NS);
	expect_legacy("cuCheckpointProcessLock", 12079, NS);
	expect_legacy("cuCtxGetDevice", 1999, NS);
	expect("cuStreamSynchronize", 6999, PTDS, NS);
	expect("cuMemcpyHtoD", 3020, PTDS, NS);
}
END_TEST

START_TEST(invalid_arguments)
{
	void *pfn = (void *)1;
	CUdriverProcAddressQueryResult st = (CUdriverProcAddressQueryResult)99;
	static const cuuint64_t bad_flags[] = { 4, 8, 5, 7, 1ULL << 32, 1ULL << 63, ~0ULL };

	for (size_t i = 0; i < sizeof(bad_flags) / sizeof(bad_flags[0]); i++) {
		pfn = (void *)1;
		ck_assert_int_eq(gpa2("cuMemAlloc", &pfn, 13000, bad_flags[i], &st),
				 CUDA_ERROR_INVALID_VALUE);
		ck_assert_ptr_null(pfn);
		ck_assert_int_eq(st, 99);	/* untouched, as the driver does */
		ck_assert_int_eq(gpa2("cuNotAThing", &pfn, 13000, bad_flags[i], &st),
				 CUDA_ERROR_INVALID_VALUE);
		ck_assert_int_eq(gpa1("cuMemAlloc", &pfn, 13000, bad_flags[i]),
				 CUDA_ERROR_INVALID_VALUE);
	}

	/* newer than the CUDA version the table knows: invalid, as the driver */
	ck_assert_int_eq(gpa2("cuMemAlloc", &pfn, AXON_PROC_CUDA_VERSION + 10, 0, &st),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(gpa2("cuMemAlloc", &pfn, INT_MAX, 0, &st), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(gpa1("cuMemAlloc", &pfn, 99999, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(st, 99);

	ck_assert_int_eq(gpa2(NULL, &pfn, 13000, 0, &st), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(gpa2("cuMemAlloc", NULL, 13000, 0, &st), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(gpa2(NULL, NULL, 13000, 0, NULL), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(gpa1(NULL, &pfn, 13000, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(gpa1("cuMemAlloc", NULL, 13000, 0), CUDA_ERROR_INVALID_VALUE);
}
END_TEST

START_TEST(optional_status_and_odd_versions)
{
	void *pfn = NULL;

	/* symbolStatus may be NULL, found or not */
	ck_assert_int_eq(gpa2("cuMemAlloc", &pfn, 13000, 0, NULL), CUDA_SUCCESS);
	ck_assert_ptr_eq(pfn, sym("cuMemAlloc_v2"));
	pfn = (void *)1;
	ck_assert_int_eq(gpa2("cuNotAThing", &pfn, 13000, 0, NULL), CUDA_SUCCESS);
	ck_assert_ptr_null(pfn);
	pfn = (void *)1;
	ck_assert_int_eq(gpa2("cuMemAlloc", &pfn, 1000, 0, NULL), CUDA_SUCCESS);
	ck_assert_ptr_null(pfn);

	/* the driver compares a negative version as unsigned: the newest */
	expect_legacy("cuMemAlloc", -1, "cuMemAlloc_v2");
	expect_legacy("cuCtxCreate", -5, "cuCtxCreate_v4");
}
END_TEST

/* the entry points themselves, through the table */
START_TEST(self_lookup)
{
	void *pfn = NULL;

	ck_assert_int_eq(gpa2("cuGetProcAddress", &pfn, 13000, 0, NULL), CUDA_SUCCESS);
	ck_assert_ptr_eq(pfn, (void *)gpa2);
	ck_assert_int_eq(gpa1("cuGetProcAddress", &pfn, 11080, 0), CUDA_SUCCESS);
	ck_assert_ptr_eq(pfn, (void *)gpa1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("shim-procaddr");
	TCase *tc = tcase_create("procaddr");
	SRunner *sr;
	int failed;

	if (find_lib() != 0) {
		fprintf(stderr, "skip: %s not built\n", lib_path);
		return 77;
	}
	tcase_add_unchecked_fixture(tc, load, NULL);
	tcase_add_test(tc, breakpoints);
	tcase_add_test(tc, per_thread);
	tcase_add_test(tc, every_variant);
	tcase_add_test(tc, unknown_symbols);
	tcase_add_test(tc, version_not_sufficient);
	tcase_add_test(tc, invalid_arguments);
	tcase_add_test(tc, optional_status_and_odd_versions);
	tcase_add_test(tc, self_lookup);
	suite_add_tcase(s, tc);

	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
