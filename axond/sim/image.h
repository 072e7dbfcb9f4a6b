/* SPDX-License-Identifier: MIT */
/*
 * sim/image: parse a CUDA module image, as given to cuModuleLoadData,
 * cuModuleLoadFatBinary or cuLibraryLoadData, and list its kernels (with
 * their parameter layouts) and its globals. Self-contained: no dependency
 * on the rest of axond.
 *
 * Accepted images (all untrusted; every offset and size is checked):
 *
 *   ELF cubin   EM_CUDA (190), ELFCLASS64, little-endian, ET_EXEC or ET_REL.
 *               Kernels: STT_FUNC symbols marked as entries (st_other
 *               STO_CUDA_ENTRY, or having a .nv.constant0.<name> bank)
 *               whose section is .text.<name>. Parameters from the
 *               EIATTR_KPARAM_INFO / EIATTR_KPARAM_INFO_V2 records of
 *               .nv.info.<name>; args_size from EIATTR_CBANK_PARAM_SIZE,
 *               else EIATTR_PARAM_CBANK, else the end of the last parameter.
 *               Globals: data symbols in .nv.global (zero),
 *               .nv.global.init and .nv.constant* (initial bytes kept).
 *   fatbin      the data a __fatBinC_Wrapper_t points to (magic 0xBA55ED50),
 *               one container or several back to back. Entries may be
 *               uncompressed, LZ4- or ZSTD-compressed. The entry used is,
 *               as the driver would on a 9.0 device, the ELF for the
 *               highest sm_9x <= SIM_IMAGE_SM, else the PTX for the
 *               highest compute_XX <= SIM_IMAGE_SM, else none (-ENOEXEC):
 *               SASS does not run across major versions (sm_80 on 9.0).
 *   PTX         text starting (after blanks and comments) with .version.
 *               Kernels from .entry parameter lists, laid out with natural
 *               alignment as the ABI does. Globals from module-scope .global
 *               and .const declarations; numeric initialisers are decoded,
 *               others (addresses of symbols: generic(x), x+4, ...) leave
 *               init NULL and set SIM_GLOBAL_F_INIT_UNKNOWN. This reads
 *               declarations, it does not validate PTX: text ptxas would
 *               reject may parse.
 *
 * A cubin for an sm a 9.0 device cannot run, or PTX whose .target is above
 * sm_90, is refused with -ENOEXEC too.
 *
 * The __fatBinC_Wrapper_t itself (magic 0x466243B1) holds a host pointer to
 * the fatbin, meaningless in another process: rejected with -ENOTSUP.
 *
 * Errors are negative errno values with a message in err:
 *   -EINVAL   malformed or unrecognised image   -> CUDA_ERROR_INVALID_IMAGE
 *   -ENOEXEC  no entry usable for SIM_IMAGE_SM  -> CUDA_ERROR_NO_BINARY_FOR_GPU
 *   -ENOTSUP  wrapper struct, 32-bit cubin, entry flagged both LZ4 and ZSTD
 *                                               -> CUDA_ERROR_INVALID_IMAGE
 *   -E2BIG    a limit below was exceeded        -> CUDA_ERROR_INVALID_IMAGE
 *   -ENOMEM                                     -> CUDA_ERROR_OUT_OF_MEMORY
 */
#ifndef AXOND_SIM_IMAGE_H
#define AXOND_SIM_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* The compute capability the sim claims, as 10 * major + minor. */
#define SIM_IMAGE_SM			90

/* Limits on untrusted images. */
#define SIM_IMAGE_MAX_PARAMS		512	/* == AXON_MAX_KERNEL_PARAMS */
#define SIM_IMAGE_MAX_ARGS_SIZE		32768	/* == AXON_MAX_ARGS_SIZE */
#define SIM_IMAGE_MAX_KERNELS		65536
#define SIM_IMAGE_MAX_GLOBALS		65536
#define SIM_IMAGE_MAX_NAME		4096	/* bytes, without the NUL */
#define SIM_IMAGE_MAX_DECOMPRESSED	(256U << 20)
#define SIM_IMAGE_MAX_INIT		(256U << 20)	/* all init bytes */

enum sim_image_format {
	SIM_IMAGE_CUBIN = 1,	/* an ELF cubin given directly */
	SIM_IMAGE_FATBIN,	/* a fatbin; see code_kind for the entry used */
	SIM_IMAGE_PTX,		/* PTX text given directly */
};

enum sim_image_code {
	SIM_CODE_ELF = 1,
	SIM_CODE_PTX,
};

struct sim_param {
	uint32_t offset;	/* in the packed argument buffer */
	uint32_t size;
};

struct sim_kernel_desc {
	char *name;		/* exact symbol, e.g. _Z9vectorAddPKfS0_Pfi */
	uint32_t nparams;	/* <= SIM_IMAGE_MAX_PARAMS */
	uint32_t args_size;	/* <= SIM_IMAGE_MAX_ARGS_SIZE */
	struct sim_param *params;	/* nparams, by ordinal; offsets rise */
	/* SIM_IMAGE_CALLS_* this kernel's code makes, itself or through
	 * the functions it calls: a cubin's EIATTR_EXTERNS; PTX: the
	 * image's calls when its body calls anything, else none; where
	 * the reader cannot tell per kernel (a relocatable cubin), the
	 * image's calls. */
	uint32_t calls;
};

enum sim_global_space {
	SIM_GLOBAL_DEVICE = 1,	/* __device__: .nv.global[.init] / .global */
	SIM_GLOBAL_CONSTANT,	/* __constant__: .nv.constant* / .const */
};

/* The initial value is not known (PTX initialiser naming addresses). */
#define SIM_GLOBAL_F_INIT_UNKNOWN	(1U << 0)

struct sim_global_desc {
	char *name;
	uint64_t size;		/* bytes; may be large, nothing is allocated */
	enum sim_global_space space;
	uint32_t flags;		/* SIM_GLOBAL_F_* */
	uint8_t *init;		/* size bytes of initial value, NULL: zeroes */
};

/*
 * Device runtime functions an image's code calls (an undefined function
 * symbol of a cubin, an .extern .func of PTX): the driver reserves memory
 * for them in the context at the first load of such an image (localmem.h).
 */
#define SIM_IMAGE_CALLS_PRINTF	(1U << 0)	/* vprintf, __assertfail */
#define SIM_IMAGE_CALLS_MALLOC	(1U << 1)	/* malloc, free */

/* Read-only for users; sim_image_free() frees it all. */
struct sim_image {
	enum sim_image_format format;
	enum sim_image_code code_kind;	/* what the kernels were read from */
	uint32_t sm_arch;	/* sm / compute version of that code, 0 if unknown */
	size_t nkernels;
	struct sim_kernel_desc *kernels;	/* sorted by name, unique */
	size_t nglobals;
	struct sim_global_desc *globals;	/* in image order */
	uint32_t calls;		/* SIM_IMAGE_CALLS_* */
};

/*
 * Parses data[0..len). On success returns 0 and *out (free with
 * sim_image_free); the image keeps its own copies, data may be freed. On
 * failure returns a negative errno, *out = NULL and a message in err
 * (always NUL-terminated when errlen > 0).
 */
int sim_image_parse(const void *data, size_t len, struct sim_image **out,
		    char *err, size_t errlen);
void sim_image_free(struct sim_image *img);

/* Exact symbol name; NULL if absent. */
const struct sim_kernel_desc *
sim_image_find_kernel(const struct sim_image *img, const char *name);
/* Exact symbol name; the first one if several (static in two units). */
const struct sim_global_desc *
sim_image_find_global(const struct sim_image *img, const char *name);

#endif /* AXOND_SIM_IMAGE_H */
