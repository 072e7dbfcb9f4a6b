// SPDX-License-Identifier: MIT
/*
 * cuGetExportTable: the driver's private interfaces, found by UUID, that
 * the CUDA runtime (cudart, static and shared) needs before it will run a
 * program. Facts from the research note /work/shared/research/
 * remoting-anchors.md §13 (which cites ZLUDA, LUPINE/scuda, wine nvcuda, GX,
 * pantheonsim, MetaFlux); the code is ours.
 *
 * Conventions (§13.1): a table is an array of pointer-sized slots; slot 0
 * holds the table's size in bytes (slots x 8) and functions follow, except
 * the context-local-storage table, which has no size word and ends with a
 * NULL slot. UUID bytes compare in the order the textual UUID is written.
 * Slots whose meaning nobody has established are NULL, as in ZLUDA.
 *
 * Served (§13.4, what cudart 13.0 needs):
 *   6bd5fb6c  CUDART_INTERFACE: [1][6][8] load a fatbin as a module,
 *             [2] primary context without activating it, [7] no-op,
 *             [12] (13 slots, CUDA >= 13.1 only) success
 *   a094798c  TOOLS_RUNTIME_CALLBACK_HOOKS: [2][6] process-lifetime zeroed
 *             buffers
 *   42d85a81  TOOLS_TLS: [2] current context
 *   c693336e  CONTEXT_LOCAL_STORAGE_INTERFACE_V0301: put, delete, get
 *             (ctxstore.c)
 *   263e8860  CONTEXT_CHECKS: [2] "not a wrapped context", [3] 0
 *   d4082055  INTEGRITY_CHECK: [1] the HMAC-MD2 answer (§13.5)
 * and, for cuBLAS and cuFFT, 21318c60 and 6e163fbe (exportlibs.c).
 * Every other UUID (f8cff951 included: refusing it is harmless for cudart
 * 13.0, serving it half is not, §13.2 (7)) gets CUDA_ERROR_INVALID_VALUE
 * and *table = NULL.
 *
 * Nothing here crosses to axond: the integrity answer must be computed in
 * this process (its pid, thread and table addresses are inputs) from the
 * same device identity and driver version the shim reports.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exportlibs.h"
#include "md2.h"
#include "shim.h"

#define SIZE_WORD(nslots)	((const void *)(uintptr_t)((nslots) * sizeof(void *)))

/* ---- 6bd5fb6c: CUDART_INTERFACE ------------------------------------------ */

/*
 * [1] and [6] get the __fatBinC_Wrapper_t that __cudaRegisterFatBinary was
 * given; [8] the fatbin header it points to. cuModuleLoadData unwraps the
 * wrapper (its data pointer means nothing to the daemon) and sizes the
 * fatbin from its header, so all three end there. cudart may register
 * fatbins before any context is current (§13.4, MetaFlux): the module then
 * goes to device 0's primary context, as library.c does for cuLibrary*.
 */
static CUresult rt_module_from_fatbin(CUmodule *mod, const void *wrapper)
{
	uint64_t h;
	CUresult r;

	if (!mod || !wrapper)
		return CUDA_ERROR_INVALID_VALUE;
	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE) || shim_current_ctx())
		return cuModuleLoadData(mod, wrapper);
	r = shim_primary_peek(0, &h);
	if (!r)
		r = cuCtxPushCurrent_v2((CUcontext)(uintptr_t)h);
	if (r)
		return r;
	r = cuModuleLoadData(mod, wrapper);
	cuCtxPopCurrent_v2(NULL);
	return r;
}

/* a3/a4/a5 are something we do not know how to honour: refuse, as ZLUDA. */
static CUresult rt_module_from_fatbin_ext1(CUmodule *mod, const void *wrapper,
					   void *a3, void *a4, unsigned int a5)
{
	if (a3 || a4 || a5)
		return CUDA_ERROR_NOT_SUPPORTED;
	return rt_module_from_fatbin(mod, wrapper);
}

static CUresult rt_module_from_fatbin_ext2(const void *fatbin, CUmodule *mod,
					   void *a3, void *a4, unsigned int a5)
{
	if (a3 || a4 || a5)
		return CUDA_ERROR_NOT_SUPPORTED;
	return rt_module_from_fatbin(mod, fatbin);
}

/*
 * The device's primary context, NOT retained: cuDevicePrimaryCtxGetState
 * must still say inactive, and a later cuDevicePrimaryCtxRetain must return
 * the same handle (ZLUDA's test cudart_interface_fn2_creates_inactive_
 * primary_ctx, §13.2 (1)).
 */
static CUresult rt_primary_ctx(CUcontext *pctx, CUdevice dev)
{
	uint64_t h;
	CUresult r;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	r = shim_primary_peek(dev, &h);
	if (!r)
		*pctx = (CUcontext)(uintptr_t)h;
	return r;
}

/* Takes a size; does nothing observable (ZLUDA, LUPINE). */
static void rt_fn7(size_t arg)
{
	(void)arg;
}

/* CUDA >= 13.1: loads the PTX compiler, libnvvm, tileir; the daemon
 * compiles for us, so there is nothing to load. */
static CUresult rt_load_compilers(void)
{
	return CUDA_SUCCESS;
}

/* CUDA 13.0 cudart and older expect 10 slots, 13.1 and newer 13 (§13.1;
 * ZLUDA commit d9a5304f "Add CUDA 13.1 compatibility"). The other tables'
 * sizes (7, 4, 4, 3 slots) are ZLUDA's dark_api! sizes too. */
/* Slots [1] to [9], the same in both: a macro, since the two tables must
 * each be one array behind their own size word. */
#define CUDART_IFACE_1_TO_9 \
	(const void *)rt_module_from_fatbin, \
	(const void *)rt_primary_ctx, \
	NULL, NULL, NULL, \
	(const void *)rt_module_from_fatbin_ext1, \
	(const void *)rt_fn7, \
	(const void *)rt_module_from_fatbin_ext2, \
	NULL

static const void *const cudart_iface10[10] = {
	SIZE_WORD(10),
	CUDART_IFACE_1_TO_9,
};

static const void *const cudart_iface13[13] = {
	SIZE_WORD(13),
	CUDART_IFACE_1_TO_9,
	NULL, NULL,
	(const void *)rt_load_compilers,
};

static int reported_driver_version(void)
{
	int v = CUDA_VERSION;

	cuDriverGetVersion(&v);
	return v;
}

static const void *const *cudart_iface(void)
{
	return reported_driver_version() >= 13010 ? cudart_iface13 : cudart_iface10;
}

/* ---- a094798c: TOOLS_RUNTIME_CALLBACK_HOOKS ----------------------------- */

/*
 * Two buffers cudart writes into for the lifetime of the process. The sizes
 * reported are ZLUDA's (1024, 14); the first is backed with 4 KiB because
 * cudart was seen reading at offset 0x6e0 (MetaFlux, §13.2 (2), §13.6 (6)).
 */
static _Alignas(64) unsigned char hook_buf1[4096];
static _Alignas(64) unsigned char hook_buf2[64];

static void hooks_buf1(void **ptr, size_t *size)
{
	if (ptr)
		*ptr = hook_buf1;
	if (size)
		*size = 1024;
}

static void hooks_buf2(void **ptr, size_t *size)
{
	if (ptr)
		*ptr = hook_buf2;
	if (size)
		*size = 14;
}

static const void *const tools_hooks[7] = {
	SIZE_WORD(7),
	NULL,
	(const void *)hooks_buf1,
	NULL, NULL, NULL,
	(const void *)hooks_buf2,
};

/* ---- 42d85a81: TOOLS_TLS -------------------------------------------------- */

/* [2]: the current context (GX: cuBLASLt's kernel registry uses it). */
static CUresult tls_current_ctx(CUcontext *pctx)
{
	struct shim_ctx *sc;

	if (!pctx)
		return CUDA_ERROR_INVALID_VALUE;
	sc = shim_current_ctx();
	*pctx = sc ? (CUcontext)(uintptr_t)sc->handle : NULL;
	return CUDA_SUCCESS;
}

static const void *const tools_tls[4] = {
	SIZE_WORD(4),
	NULL,
	(const void *)tls_current_ctx,
	NULL,
};

/* ---- c693336e: CONTEXT_LOCAL_STORAGE_INTERFACE_V0301 ------------------- */

/* No size word: put, delete, get, then the NULL terminator. */
static const void *const ctx_storage[4] = {
	(const void *)shim_cls_put,
	(const void *)shim_cls_delete,
	(const void *)shim_cls_get,
	NULL,
};

/* ---- 263e8860: CONTEXT_CHECKS ------------------------------------------- */

/* "Is this a wrapped context, and which": ours never are. */
static CUresult check_ctx(CUcontext ctx, unsigned int *wrapped, const void **inner)
{
	(void)ctx;
	if (wrapped)
		*wrapped = 0;
	if (inner)
		*inner = NULL;
	return CUDA_SUCCESS;
}

static unsigned int check_fn3(void)
{
	return 0;
}

static const void *const ctx_checks[4] = {
	SIZE_WORD(4),
	NULL,
	(const void *)check_ctx,
	(const void *)check_fn3,
};

/* ---- d4082055: INTEGRITY_CHECK ------------------------------------------ */

static CUresult integrity_check(unsigned int version, uint64_t unix_seconds,
				uint64_t out[2]);

static const void *const integrity[3] = {
	SIZE_WORD(3),
	(const void *)integrity_check,
	NULL,
};

/*
 * HMAC-MD2 with this fixed key (§13.5; the bytes are ZLUDA's pass1_result,
 * vosen/ZLUDA dark_api/src/lib.rs, fn integrity_check).
 */
static const uint8_t integrity_key[16] = {
	0x14, 0x6a, 0xdd, 0xae, 0x53, 0xa9, 0xa7, 0x52,
	0xaa, 0x08, 0x41, 0x36, 0x0b, 0xf5, 0x5a, 0x9f,
};

/* The 48-byte record hashed first (§13.5 (a)); C layout, no padding. */
struct integrity_record {
	uint32_t driver_version;
	uint32_t version;
	uint32_t pid;
	uint32_t thread;
	const void *cudart_table;
	const void *integrity_table;
	const void *fn;
	uint64_t unix_seconds;
};

/* Then one of these per device, in ordinal order (§13.5 (b)). */
struct integrity_device {
	uint8_t uuid[16];
	int32_t pci_domain;
	int32_t pci_bus;
	int32_t pci_device;
};

_Static_assert(sizeof(struct integrity_record) == 48, "integrity record layout");
_Static_assert(sizeof(struct integrity_device) == 28, "integrity device layout");

static CUresult integrity_check(unsigned int version, uint64_t unix_seconds,
				uint64_t out[2])
{
	struct integrity_record rec;
	struct hmac_md2_ctx h;
	uint8_t digest[MD2_DIGEST];
	unsigned int i;

	if (!out)
		return CUDA_ERROR_INVALID_VALUE;
	/*
	 * For versions ending in 0 and 1 the answer is a constant (ZLUDA,
	 * dark_api/src/lib.rs, fn integrity_check: "match version % 10").
	 */
	switch (version % 10) {
	case 0:
		out[0] = 0x3341181C03CB675CULL;
		out[1] = 0x8ED383AA1F4CD1E8ULL;
		return CUDA_SUCCESS;
	case 1:
		out[0] = 0x1841181C03CB675CULL;
		out[1] = 0x8ED383AA1F4CD1E8ULL;
		return CUDA_SUCCESS;
	}
	if (!__atomic_load_n(&shim.connected, __ATOMIC_ACQUIRE))
		return CUDA_ERROR_NOT_INITIALIZED;

	memset(&rec, 0, sizeof(rec));
	rec.driver_version = (uint32_t)reported_driver_version();
	rec.version = version;
	rec.pid = (uint32_t)getpid();
	rec.thread = (uint32_t)pthread_self();
	rec.cudart_table = cudart_iface();
	rec.integrity_table = integrity;
	rec.fn = integrity[1];
	rec.unix_seconds = unix_seconds;

	hmac_md2_init(&h, integrity_key, sizeof(integrity_key));
	hmac_md2_update(&h, &rec, sizeof(rec));
	/* The device identity as cuDeviceGetUuid_v2 and cuDeviceGetAttribute
	 * (PCI_DOMAIN_ID, PCI_BUS_ID, PCI_DEVICE_ID) report it: cudart
	 * computes its side of the check from those. */
	for (i = 0; i < shim.ring.info->ndevices && i < AXON_MAX_DEVICES; i++) {
		const struct axon_device_info *d = &shim.ring.info->device[i];
		struct integrity_device dev;

		memcpy(dev.uuid, d->uuid, sizeof(dev.uuid));
		dev.pci_domain = d->attr[CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID];
		dev.pci_bus = d->attr[CU_DEVICE_ATTRIBUTE_PCI_BUS_ID];
		dev.pci_device = d->attr[CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID];
		hmac_md2_update(&h, &dev, sizeof(dev));
	}
	hmac_md2_final(&h, digest);
	memcpy(out, digest, sizeof(digest));
	SHIM_LOCAL();
	return CUDA_SUCCESS;
}

/* ---- cuGetExportTable ----------------------------------------------------- */

/*
 * The UUIDs, byte for byte as their textual forms are written (§13.1);
 * values and names from §13.2, which takes them from vosen/ZLUDA
 * dark_api/src/lib.rs (the dark_api! table) and SveSop/nvcuda.
 */
struct export_table {
	uint8_t uuid[16];
	const char *name;
};

enum {
	T_CUDART, T_HOOKS, T_TLS, T_STORAGE, T_CHECKS, T_INTEGRITY, T_CTXID, T_FFT,
	T_LT, T_COUNT
};

static const struct export_table tables[T_COUNT] = {
	[T_CUDART] = { { 0x6b, 0xd5, 0xfb, 0x6c, 0x5b, 0xf4, 0xe7, 0x4a,
			 0x89, 0x87, 0xd9, 0x39, 0x12, 0xfd, 0x9d, 0xf9 },
		       "CUDART_INTERFACE" },
	[T_HOOKS] = { { 0xa0, 0x94, 0x79, 0x8c, 0x2e, 0x74, 0x2e, 0x74,
			0x93, 0xf2, 0x08, 0x00, 0x20, 0x0c, 0x0a, 0x66 },
		      "TOOLS_RUNTIME_CALLBACK_HOOKS" },
	[T_TLS] = { { 0x42, 0xd8, 0x5a, 0x81, 0x23, 0xf6, 0xcb, 0x47,
		      0x82, 0x98, 0xf6, 0xe7, 0x8a, 0x3a, 0xec, 0xdc },
		    "TOOLS_TLS" },
	[T_STORAGE] = { { 0xc6, 0x93, 0x33, 0x6e, 0x11, 0x21, 0xdf, 0x11,
			  0xa8, 0xc3, 0x68, 0xf3, 0x55, 0xd8, 0x95, 0x93 },
			"CONTEXT_LOCAL_STORAGE_INTERFACE_V0301" },
	[T_CHECKS] = { { 0x26, 0x3e, 0x88, 0x60, 0x7c, 0xd2, 0x61, 0x43,
			 0x92, 0xf6, 0xbb, 0xd5, 0x00, 0x6d, 0xfa, 0x7e },
		       "CONTEXT_CHECKS" },
	[T_INTEGRITY] = { { 0xd4, 0x08, 0x20, 0x55, 0xbd, 0xe6, 0x70, 0x4b,
			    0x8d, 0x34, 0xba, 0x12, 0x3c, 0x66, 0xe1, 0xf2 },
			  "INTEGRITY_CHECK" },
	/* For the math libraries: exportlibs.c. */
	[T_CTXID] = { { 0x21, 0x31, 0x8c, 0x60, 0x97, 0x14, 0x32, 0x48,
			0x8c, 0xa6, 0x41, 0xff, 0x73, 0x24, 0xc8, 0xf2 },
		      "CONTEXT_ID (cuBLAS, cuFFT)" },
	[T_FFT] = { { 0x6e, 0x16, 0x3f, 0xbe, 0xb9, 0x58, 0x44, 0x4d,
		      0x83, 0x5c, 0xe1, 0x82, 0xaf, 0xf1, 0x99, 0x1e },
		    "6e163fbe (cuFFT)" },
	[T_LT] = { { 0x17, 0x34, 0xdc, 0x26, 0x80, 0x0d, 0x47, 0x45,
		     0x87, 0x26, 0xc0, 0xf1, 0xe7, 0xdd, 0x8b, 0xca },
		   "1734dc26 (cuBLASLt)" },
};

static const void *table_of(int t)
{
	switch (t) {
	case T_CUDART:		return cudart_iface();
	case T_HOOKS:		return tools_hooks;
	case T_TLS:		return tools_tls;
	case T_STORAGE:		return ctx_storage;
	case T_CHECKS:		return ctx_checks;
	case T_INTEGRITY:	return integrity;
	case T_CTXID:		return shim_export_ctxid_table();
	case T_FFT:		return shim_export_fft_table();
	case T_LT:		return shim_export_lt_table();
	}
	return NULL;
}

/*
 * With AXON_LOG=2, every request is logged: which tables a library wants is
 * the first thing to know when it does not start. Quiet otherwise, since
 * refusals are normal (cudart asks for f8cff951 first and copes without).
 */
static void log_request(const CUuuid *id, const char *served)
{
	const unsigned char *b = (const unsigned char *)id->bytes;
	const char *lvl = getenv("AXON_LOG");

	if (!lvl || strcmp(lvl, "2"))
		return;
	shim_log("cuGetExportTable %02x%02x%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x-%02x%02x%02x%02x%02x%02x: %s",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
		 b[10], b[11], b[12], b[13], b[14], b[15], served ? served : "refused");
}

SHIM_EXPORT CUresult cuGetExportTable(const void **ppExportTable, const CUuuid *pExportTableId)
{
	int t;

	if (!ppExportTable || !pExportTableId)
		return CUDA_ERROR_INVALID_VALUE;
	for (t = 0; t < T_COUNT; t++) {
		if (!memcmp(pExportTableId->bytes, tables[t].uuid, 16)) {
			*ppExportTable = table_of(t);
			log_request(pExportTableId, tables[t].name);
			return CUDA_SUCCESS;
		}
	}
	*ppExportTable = NULL;
	log_request(pExportTableId, NULL);
	return CUDA_ERROR_INVALID_VALUE;
}
