// SPDX-License-Identifier: MIT
/*
 * cudatrace: a research libcuda.so.1 that sits in front of NVIDIA's.
 *
 * Every function cuda.h declares is a two-instruction trampoline into the
 * vendor's library (path in CUDATRACE_LIB), counting its calls; the counts of
 * those called at least once are written at exit. cuGetProcAddress[_v2]
 * hands out the trampolines too, so calls made through the pointers cudart
 * collects are counted as well. cuGetExportTable requests are logged, and
 * the private tables whose UUIDs start with the 8 hex digits listed in
 * CUDATRACE_TABLES (e.g. "21318c60,6e163fbe") are replaced by copies whose
 * every slot logs its six integer arguments, its result and, after the call,
 * the 8 bytes each pointer argument points at. That is how axon learns which
 * private entry points a library (cuFFT, cuBLAS, PyTorch) really uses, on a
 * GPU machine, without disassembling anything.
 *
 * Output goes to CUDATRACE_OUT (appended) or stderr. Not installed; built by
 * `make cudatrace` into $(BUILD)/tools/cudatrace/libcuda.so.1.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include "shim_gen_lists.h"

#define HIDDEN __attribute__((visibility("hidden")))

/* One counter and one target per exported name; the asm reads both. */
#define X(n) HIDDEN void *real_##n; HIDDEN unsigned long cnt_##n;
AXON_SHIM_FOR_EACH_EXPORT(X)
#undef X

#define X(n)								\
	__asm__(".text\n.globl " #n "\n.type " #n ",@function\n" #n ":\n"	\
		"\tlock incq cnt_" #n "(%rip)\n"			\
		"\tjmp *real_" #n "(%rip)\n"				\
		".size " #n ",.-" #n "\n");
AXON_SHIM_FOR_EACH_EXPORT(X)
#undef X

struct entry {
	const char *name;
	void **real;
	unsigned long *cnt;
	void *tramp;
};

#define X(n) extern char n##_tramp_sym __asm__(#n);
AXON_SHIM_FOR_EACH_EXPORT(X)
#undef X

static struct entry entries[] = {
#define X(n) { #n, &real_##n, &cnt_##n, &n##_tramp_sym },
	AXON_SHIM_FOR_EACH_EXPORT(X)
#undef X
};
#define NENTRIES (sizeof(entries) / sizeof(entries[0]))

static FILE *out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static void *vendor;
static void *vendor_gpa, *vendor_gpa2, *vendor_get;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&out_lock);
	va_start(ap, fmt);
	fprintf(out, "cudatrace[%d]: ", (int)getpid());
	vfprintf(out, fmt, ap);
	fputc('\n', out);
	fflush(out);
	va_end(ap);
	pthread_mutex_unlock(&out_lock);
}

/* Translate a vendor function pointer into our counting trampoline. */
static void *tramp_of(void *real)
{
	size_t i;

	for (i = 0; i < NENTRIES; i++)
		if (*entries[i].real == real && real)
			return entries[i].tramp;
	return real;
}

/*
 * The vendor's cuGetProcAddress hands out internal addresses that are not
 * its exported symbols, so tramp_of() cannot translate them; the entry
 * points that lead to more (the export tables and cuGetProcAddress itself)
 * are translated by name so that every table request is seen.
 */
static void *by_name(const char *sym, void *p)
{
	if (!strcmp(sym, "cuGetExportTable"))
		return (void *)&cuGetExportTable_tramp_sym;
	if (!strcmp(sym, "cuGetProcAddress"))
		return (void *)&cuGetProcAddress_v2_tramp_sym;
	return p;
}

static CUresult wrap_gpa2(const char *sym, void **pfn, int ver, cuuint64_t flags,
			  CUdriverProcAddressQueryResult *status)
{
	CUresult r = ((CUresult (*)(const char *, void **, int, cuuint64_t,
				    CUdriverProcAddressQueryResult *))vendor_gpa2)(sym, pfn, ver, flags, status);

	if (r == CUDA_SUCCESS && pfn && *pfn)
		*pfn = by_name(sym, tramp_of(*pfn));
	return r;
}

static CUresult wrap_gpa(const char *sym, void **pfn, int ver, cuuint64_t flags)
{
	CUresult r = ((CUresult (*)(const char *, void **, int, cuuint64_t))vendor_gpa)(sym, pfn, ver, flags);

	if (r == CUDA_SUCCESS && pfn && *pfn)
		*pfn = by_name(sym, tramp_of(*pfn));
	return r;
}

/* ---- export tables ------------------------------------------------------ */

#define MAXT 8
#define MAXS 160
typedef uint64_t (*slot_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
static char tname[MAXT][40];
static const void *orig_table[MAXT];
static slot_fn orig[MAXT][MAXS];
static void *wrapped[MAXT][MAXS];
static int ntables;

static void peek(char *buf, size_t len, uint64_t p)
{
	uint64_t v;
	struct iovec l = { &v, sizeof(v) }, r = { (void *)(uintptr_t)p, sizeof(v) };

	if (p < 4096 || process_vm_readv(getpid(), &l, 1, &r, 1, 0) != sizeof(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%" PRIx64, v);
}

static uint64_t slot_call(int t, int s, uint64_t a, uint64_t b, uint64_t c,
			  uint64_t d, uint64_t e, uint64_t f)
{
	uint64_t arg[6] = { a, b, c, d, e, f }, r;
	char post[6][24];
	Dl_info di;
	int i;

	say("%s[%d] call (%" PRIx64 ", %" PRIx64 ", %" PRIx64 ", %" PRIx64 ", %" PRIx64
	    ", %" PRIx64 ")", tname[t], s, a, b, c, d, e, f);
	r = orig[t][s](a, b, c, d, e, f);
	for (i = 0; i < 6; i++)
		peek(post[i], sizeof(post[i]), arg[i]);
	say("%s[%d] ret %" PRIx64 " (int %d); *args after: %s %s %s %s %s %s", tname[t], s, r,
	    (int)r, post[0], post[1], post[2], post[3], post[4], post[5]);
	for (i = 0; i < 6; i++)
		if (arg[i] > 4096 && dladdr((void *)(uintptr_t)arg[i], &di) && di.dli_fname)
			say("%s[%d]   arg%d in %s (+%#lx)", tname[t], s, i, di.dli_fname,
			    (unsigned long)((uintptr_t)arg[i] - (uintptr_t)di.dli_fbase));
	return r;
}

#define W(t, s) static uint64_t w_##t##_##s(uint64_t a, uint64_t b, uint64_t c, \
	uint64_t d, uint64_t e, uint64_t f) { return slot_call(t, s, a, b, c, d, e, f); }
#define W10(t, s) W(t, s##0) W(t, s##1) W(t, s##2) W(t, s##3) W(t, s##4) \
	W(t, s##5) W(t, s##6) W(t, s##7) W(t, s##8) W(t, s##9)
#define WT(t) W(t, 0) W(t, 1) W(t, 2) W(t, 3) W(t, 4) W(t, 5) W(t, 6) W(t, 7) W(t, 8) \
	W(t, 9) W10(t, 1) W10(t, 2) W10(t, 3) W10(t, 4) W10(t, 5) W10(t, 6) \
	W10(t, 7) W10(t, 8) W10(t, 9) W10(t, 10) W10(t, 11) W10(t, 12) W10(t, 13) \
	W10(t, 14) W10(t, 15)
WT(0) WT(1) WT(2) WT(3) WT(4) WT(5) WT(6) WT(7)
#define R(t, s) (void *)w_##t##_##s,
#define R10(t, s) R(t, s##0) R(t, s##1) R(t, s##2) R(t, s##3) R(t, s##4) \
	R(t, s##5) R(t, s##6) R(t, s##7) R(t, s##8) R(t, s##9)
#define RT(t) { R(t, 0) R(t, 1) R(t, 2) R(t, 3) R(t, 4) R(t, 5) R(t, 6) R(t, 7) \
	R(t, 8) R(t, 9) R10(t, 1) R10(t, 2) R10(t, 3) R10(t, 4) R10(t, 5) \
	R10(t, 6) R10(t, 7) R10(t, 8) R10(t, 9) R10(t, 10) R10(t, 11) R10(t, 12) \
	R10(t, 13) R10(t, 14) R10(t, 15) }
static void *const wrappers[MAXT][MAXS] = { RT(0), RT(1), RT(2), RT(3), RT(4), RT(5), RT(6), RT(7) };

static const void *wrap_table(const char *name, const void *table)
{
	const uint64_t *src = table;
	uint64_t size = src[0];
	int t, s, n;

	for (t = 0; t < ntables; t++)
		if (orig_table[t] == table)
			return wrapped[t];
	if (ntables == MAXT)
		return table;
	if (size >= 0x10000 || size % 8 || size / 8 > MAXS) {
		say("%s: first word %#" PRIx64 " is not a size; not wrapped", name, size);
		return table;
	}
	n = (int)(size / 8);
	t = ntables++;
	snprintf(tname[t], sizeof(tname[t]), "%.8s", name);
	orig_table[t] = table;
	wrapped[t][0] = (void *)(uintptr_t)size;
	for (s = 1; s < n; s++) {
		orig[t][s] = (slot_fn)(uintptr_t)src[s];
		wrapped[t][s] = src[s] ? wrappers[t][s] : NULL;
		if (src[s]) {
			Dl_info di;
			unsigned long off = 0;

			if (dladdr((void *)(uintptr_t)src[s], &di) && di.dli_fbase)
				off = (unsigned long)(src[s] - (uintptr_t)di.dli_fbase);
			say("%s slot %d = vendor+%#lx", tname[t], s, off);
		} else {
			say("%s slot %d = NULL", tname[t], s);
		}
	}
	return wrapped[t];
}

static CUresult wrap_get_export_table(const void **tab, const CUuuid *id)
{
	CUresult r = ((CUresult (*)(const void **, const CUuuid *))vendor_get)(tab, id);
	const unsigned char *b = (const unsigned char *)id->bytes;
	const char *want = getenv("CUDATRACE_TABLES");
	char name[48];

	snprintf(name, sizeof(name), "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
		 b[12], b[13], b[14], b[15]);
	say("cuGetExportTable %s -> %d, first word %#" PRIx64, name, (int)r,
	    r == CUDA_SUCCESS && *tab ? *(const uint64_t *)*tab : 0);
	if (r == CUDA_SUCCESS && *tab && want && strstr(want, (char[9]){ name[0], name[1], name[2],
			name[3], name[4], name[5], name[6], name[7], 0 }))
		*tab = wrap_table(name, *tab);
	return r;
}

__attribute__((constructor)) static void cudatrace_init(void)
{
	const char *lib = getenv("CUDATRACE_LIB");
	const char *o = getenv("CUDATRACE_OUT");
	size_t i;

	out = o ? fopen(o, "a") : NULL;
	if (!out)
		out = stderr;
	vendor = dlopen(lib ? lib : "/usr/local/nvidia/lib64/libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!vendor) {
		say("cannot open the vendor library: %s", dlerror());
		abort();
	}
	for (i = 0; i < NENTRIES; i++)
		*entries[i].real = dlsym(vendor, entries[i].name);
	vendor_gpa = real_cuGetProcAddress;
	vendor_gpa2 = real_cuGetProcAddress_v2;
	vendor_get = real_cuGetExportTable;
	real_cuGetProcAddress = (void *)wrap_gpa;
	real_cuGetProcAddress_v2 = (void *)wrap_gpa2;
	real_cuGetExportTable = (void *)wrap_get_export_table;
}

__attribute__((destructor)) static void cudatrace_fini(void)
{
	size_t i;

	for (i = 0; i < NENTRIES; i++)
		if (*entries[i].cnt)
			say("calls %s %lu", entries[i].name, *entries[i].cnt);
}
