// SPDX-License-Identifier: MIT
/*
 * Two private driver tables that the CUDA math libraries ask for, which
 * cudart itself never needs (cuGetExportTable in exporttable.c serves them):
 *
 *   21318c60-9714-3248-8ca6-41ff7324c8f2  asked for by cuBLAS 13.1 and
 *       cuFFT 12.0. Slot 4 is (CUcontext, unsigned long long *id) -> the
 *       context's unique id, what cuCtxGetId answers (GX, research note
 *       remoting-anchors.md §13.2 (8); seen on the H200: cuFFT calls
 *       [4](ctx, &id, ...) and gets 1 for the first context).
 *       cuBLAS calls it once per cluster-occupancy probe during cublasCreate
 *       and fails with CUBLAS_STATUS_NOT_SUPPORTED if it is refused.
 *       On its first GEMM cuBLAS also calls slot 51 (ctx, 0, &obj, 0) and
 *       then slot 39 (ctx, obj, &value) (value 7 on the H200); what they
 *       mean is not known, so the daemon makes the same two calls on the
 *       client's context with the real driver (AXON_OP_PRIVATE_CALL) and
 *       the object stays in the daemon: cuBLAS gets a stand-in here.
 *       That is enough for cuBLAS's FP32 GEMMs; cuBLASLt's half-precision
 *       heuristics read the object itself (a driver structure: a ring of
 *       16 descriptors of 2 KiB pieces of device memory, with pointers
 *       into the driver's heap, dumped on the H200) and crash on the
 *       stand-in. Not solved yet (Documentation/testing-gpu.md §6).
 *   6e163fbe-b958-444d-835c-e182aff1991e  asked for by cuFFT 12.0, which
 *       fails cufftPlan* with CUFFT_INTERNAL_ERROR when the table is refused.
 *       Its only call, traced on the H200 (driver 580.159.04, 2026-11-29,
 *       tools/cudatrace), is slot 7: it walks the functions of a module
 *       cuFFT loaded (fft_slot7 below). Without the walk cuFFT has no
 *       kernel and every plan fails.
 *   1734dc26-800d-4745-8726-c0f1e7dd8bca  asked for by cuBLASLt 13.1 in
 *       its half-precision heuristics (cublasLtHSHMatmulAlgoGetHeuristic,
 *       so every FP16 GEMM of PyTorch), which keeps the table in a static
 *       and calls slot 4 through it without checking: refusing the table
 *       crashes it (seen on the H200 under cuda-gdb, the NULL table at
 *       libcublasLt+0x1bbd8360). Traced on the H200: slot 4 (&a, &b) gives
 *       two objects of the process, slot 13 (a, b, 2, 1, &int, 0) a value of
 *       them (1). The daemon makes both calls (AXON_PRIV_LT_*); the client
 *       gets two stand-ins.
 *
 * The tables are served at the size NVIDIA's 580 driver reports (93, 99
 * and 17 slots: the first word, 0x2e8, 0x318 and 0x88), because callers may
 * check it.
 * Every slot whose meaning is not established is a function that logs its
 * table and slot once and refuses with CUDA_ERROR_NOT_SUPPORTED: a caller
 * that needs one then fails cleanly and says which, instead of jumping
 * through NULL.
 */
#include <pthread.h>
#include <stdio.h>

#include "shim.h"
#include "exportlibs.h"

#define SIZE_WORD(nslots)	((const void *)(uintptr_t)((nslots) * sizeof(void *)))

static void refuse_log(const char *table, int slot)
{
	static unsigned char seen[3][128];
	int t = table[0] == '2' ? 0 : table[0] == '6' ? 1 : 2;

	if (slot >= 0 && slot < 128 &&
	    !__atomic_exchange_n(&seen[t][slot], 1, __ATOMIC_RELAXED))
		shim_log("export table %s slot %d is not implemented", table, slot);
}

/* One refusing function per slot, so the log can name the slot. */
#define REFUSE(tab, name, n)						\
	static CUresult name##_##n(void) { refuse_log(tab, n); return CUDA_ERROR_NOT_SUPPORTED; }
#define REFUSE10(tab, name, d)						\
	REFUSE(tab, name, d##0) REFUSE(tab, name, d##1) REFUSE(tab, name, d##2)	\
	REFUSE(tab, name, d##3) REFUSE(tab, name, d##4) REFUSE(tab, name, d##5)	\
	REFUSE(tab, name, d##6) REFUSE(tab, name, d##7) REFUSE(tab, name, d##8)	\
	REFUSE(tab, name, d##9)
#define REFUSE_ALL(tab, name)						\
	REFUSE(tab, name, 1) REFUSE(tab, name, 2) REFUSE(tab, name, 3)		\
	REFUSE(tab, name, 4) REFUSE(tab, name, 5) REFUSE(tab, name, 6)		\
	REFUSE(tab, name, 7) REFUSE(tab, name, 8) REFUSE(tab, name, 9)		\
	REFUSE10(tab, name, 1) REFUSE10(tab, name, 2) REFUSE10(tab, name, 3)	\
	REFUSE10(tab, name, 4) REFUSE10(tab, name, 5) REFUSE10(tab, name, 6)	\
	REFUSE10(tab, name, 7) REFUSE10(tab, name, 8) REFUSE10(tab, name, 9)
#define F(name, n)	(const void *)name##_##n,
#define F10(name, d)	F(name, d##0) F(name, d##1) F(name, d##2) F(name, d##3)	\
	F(name, d##4) F(name, d##5) F(name, d##6) F(name, d##7) F(name, d##8) F(name, d##9)
/* Slots 1..99 in order. */
#define F_ALL(name)							\
	F(name, 1) F(name, 2) F(name, 3) F(name, 4) F(name, 5) F(name, 6)	\
	F(name, 7) F(name, 8) F(name, 9) F10(name, 1) F10(name, 2)		\
	F10(name, 3) F10(name, 4) F10(name, 5) F10(name, 6) F10(name, 7)	\
	F10(name, 8) F10(name, 9)

REFUSE_ALL("21318c60", ctxid)
REFUSE_ALL("6e163fbe", fft)
REFUSE_ALL("1734dc26", lt)

#define CTXID_SLOTS	93
#define FFT_SLOTS	99
#define LT_SLOTS	17

/* The context's unique id, as cuCtxGetId; NULL means the current one. */
static CUresult ctxid_context_id(CUcontext ctx, unsigned long long *id)
{
	return cuCtxGetId(ctx, id);
}

/* Stand-ins for the driver objects slot 51 gives out, by daemon token. */
#define PRIV_OBJS	16
static uint64_t priv_obj[PRIV_OBJS][8];

static CUresult priv_call(CUcontext ctx, unsigned int call, uint64_t arg, uint64_t *out)
{
	struct shim_waiter w = { 0 };
	struct shim_ctx *sc;
	CUresult r = shim_ensure_init();

	if (r)
		return r;
	sc = ctx ? shim_ctx_of(ctx) : shim_current_ctx();
	if (!sc)
		return CUDA_ERROR_INVALID_CONTEXT;
	r = shim_call(&w, axon_prep_private_call, sc->handle, call, arg);
	if (!r)
		*out = w.aux[0];
	return r;
}

static CUresult ctxid_slot51(CUcontext ctx, void *zero, void **obj, void *zero2)
{
	uint64_t token = 0;
	CUresult r;

	if (zero || zero2 || !obj) {
		shim_log("export table 21318c60 slot 51: arguments not as seen (%p, %p, %p)",
			 zero, (void *)obj, zero2);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	r = priv_call(ctx, AXON_PRIV_CTX_OBJ, 0, &token);
	if (r)
		return r;
	if (!token || token > PRIV_OBJS)
		return CUDA_ERROR_UNKNOWN;
	*obj = priv_obj[token - 1];
	return CUDA_SUCCESS;
}

static CUresult ctxid_slot39(CUcontext ctx, void *obj, uint32_t *value, void *zero)
{
	uint64_t token, v = 0;
	CUresult r;

	(void)zero;
	if (!value || (uint64_t *)obj < priv_obj[0] || (uint64_t *)obj >= priv_obj[PRIV_OBJS] ||
	    ((uintptr_t)obj - (uintptr_t)priv_obj[0]) % sizeof(priv_obj[0]))
		return CUDA_ERROR_INVALID_VALUE;
	token = ((uintptr_t)obj - (uintptr_t)priv_obj[0]) / sizeof(priv_obj[0]) + 1;
	r = priv_call(ctx, AXON_PRIV_CTX_OBJ_QUERY, token, &v);
	if (!r)
		*value = (uint32_t)v;
	return r;
}

/* The stand-ins for 1734dc26's two objects (one pair per process). */
static uint64_t lt_obj[2][8];

static CUresult lt_slot4(void **a, void **b)
{
	uint64_t token = 0;
	CUresult r;

	if (!a || !b)
		return CUDA_ERROR_INVALID_VALUE;
	r = priv_call(NULL, AXON_PRIV_LT_OBJS, 0, &token);
	if (r)
		return r;
	*a = lt_obj[0];
	*b = lt_obj[1];
	return CUDA_SUCCESS;
}

static CUresult lt_slot13(void *a, void *b, int x, int y, int *value, void *zero)
{
	uint64_t v = 0;
	CUresult r;

	if (a != lt_obj[0] || b != lt_obj[1] || !value)
		return CUDA_ERROR_INVALID_VALUE;
	if (zero || x < 0 || y < 0 || x >= AXON_PRIV_LT_ARG_MAX || y >= AXON_PRIV_LT_ARG_MAX) {
		shim_log("export table 1734dc26 slot 13: arguments not as seen (%d, %d, %p)",
			 x, y, zero);
		return CUDA_ERROR_NOT_SUPPORTED;
	}
	r = priv_call(NULL, AXON_PRIV_LT_QUERY,
		      1 | (uint64_t)x << 32 | (uint64_t)y << 48, &v);
	if (!r)
		*value = (int)v;
	return r;
}

/*
 * 6e163fbe slot 7: (ctx, module, fn, user, module, cookie) calls
 * fn(user, function) for each function of the module. Traced on the H200:
 * cuFFT passes a module it has just loaded with cuModuleLoadData and a fn
 * that stores its second argument through its first (libcufft+0x350ef0:
 * mov %rsi,(%rdi); ret), then uses that function (cuFuncGetAttribute,
 * cuOccupancy*, cuLaunchKernel); the driver returned 1 for cuFFT's modules,
 * which hold one kernel each: the count, as far as can be told, and so
 * answered here.
 */
static CUresult fft_slot7(CUcontext ctx, CUmodule mod, void (*fn)(void *, void *),
			  void *user, CUmodule mod2, void *cookie)
{
	uint32_t n, i;
	char *names, *p;
	CUresult r;

	(void)ctx;
	(void)cookie;
	if (!fn || mod2 != mod)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_module_func_names(mod, &names, &n);
	for (i = 0, p = names; !r && i < n; i++, p += strlen(p) + 1) {
		CUfunction f;

		r = cuModuleGetFunction(&f, mod, p);
		if (!r)
			fn(user, f);
	}
	free(names);
	return r ? r : (CUresult)n;
}

static const void *ctxid_table[100] = { SIZE_WORD(CTXID_SLOTS), F_ALL(ctxid) };
static const void *fft_table[100] = { SIZE_WORD(FFT_SLOTS), F_ALL(fft) };
static const void *lt_table[100] = { SIZE_WORD(LT_SLOTS), F_ALL(lt) };

/* The known slots, set once before any table is handed out. */
static pthread_once_t tables_once = PTHREAD_ONCE_INIT;

static void tables_init(void)
{
	ctxid_table[4] = (const void *)ctxid_context_id;
	ctxid_table[39] = (const void *)ctxid_slot39;
	ctxid_table[51] = (const void *)ctxid_slot51;
	fft_table[7] = (const void *)fft_slot7;
	lt_table[4] = (const void *)lt_slot4;
	lt_table[13] = (const void *)lt_slot13;
}

const void *shim_export_lt_table(void)
{
	pthread_once(&tables_once, tables_init);
	return lt_table;
}

const void *shim_export_ctxid_table(void)
{
	pthread_once(&tables_once, tables_init);
	return ctxid_table;
}

const void *shim_export_fft_table(void)
{
	pthread_once(&tables_once, tables_init);
	return fft_table;
}
