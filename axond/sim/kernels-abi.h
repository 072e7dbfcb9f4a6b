/* SPDX-License-Identifier: MIT */
/*
 * sim/kernels-abi: what passes between axond's sim backend and a kernels
 * object, the shared object that gives the sim host implementations of
 * kernels (axond --sim-kernels=PATH; Documentation/sim.md). The build makes
 * one, $(BUILD)/lib/axon-sim-kernels.so, from the test kernels (kernels.c);
 * it is not installed, so the installed axond holds no test code.
 *
 * The object exports one function, named with the ABI version it speaks:
 *
 *	const struct sim_kernels_ops *
 *	axon_sim_kernels_register_v1(uint32_t abi_version);
 *
 * axond calls it with SIM_KERNELS_ABI_VERSION; the object returns its ops,
 * or NULL if it does not speak that version. axond checks the ops' own
 * version and the sizes of the structs below as the object was built
 * with, and refuses the object (and so to start) on any difference. Any
 * change to these structs, the ops or their meaning bumps the version and
 * the entry point's name.
 *
 * Everything the object returns must stay valid until it is unloaded
 * (axond never unloads it while running).
 */
#ifndef AXOND_SIM_KERNELS_ABI_H
#define AXOND_SIM_KERNELS_ABI_H

#include <stddef.h>
#include <stdint.h>

#define SIM_KERNELS_ABI_VERSION	1
#define SIM_KERNELS_ENTRY	"axon_sim_kernels_register_v1"

/*
 * Launches of more threads (grid x block) than this are refused with
 * CUDA_ERROR_NOT_SUPPORTED: the sim runs threads one by one, twice.
 */
#define SIM_KERNELS_MAX_THREADS	(1ULL << 28)

struct sim_launch {
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t shared_bytes;	/* dynamic shared memory; unused so far */
	const void *args;	/* packed parameters, as the image lays out */
	size_t args_size;
	/*
	 * Host address of device range [devaddr, devaddr + len), or NULL if
	 * any byte of it is not valid device memory for this launch. The
	 * range returned must be writable and stay valid during run().
	 */
	void *(*translate)(void *ctx, uint64_t devaddr, uint64_t len);
	void *ctx;
	/*
	 * Device output (a kernel's printf), one formatted line at a time in
	 * execution order; NULL: discarded. Called only in the executing
	 * pass, so a launch that fails its checks prints nothing.
	 */
	void (*output)(void *ctx, const char *text, size_t len);
};

struct sim_kernel_param {
	uint32_t offset;
	uint32_t size;
};

struct sim_kernel {
	const char *name;	/* base name: "vectorAdd" */
	const char *proto;	/* CUDA prototype, for logs */
	uint32_t nparams;
	uint32_t args_size;	/* run() insists on exactly this */
	const struct sim_kernel_param *params;	/* expected layout */
	/*
	 * Runs the whole grid to completion, synchronously. Returns a
	 * CUresult: CUDA_SUCCESS, CUDA_ERROR_INVALID_VALUE (args_size,
	 * launch dimensions, NULL translate), CUDA_ERROR_ILLEGAL_ADDRESS,
	 * CUDA_ERROR_MISALIGNED_ADDRESS, CUDA_ERROR_ASSERT, CUDA_ERROR_NOT_SUPPORTED (grid
	 * larger than SIM_KERNELS_MAX_THREADS). Thread-safe: no state.
	 */
	int (*run)(const struct sim_launch *l);
};

struct sim_kernels_ops {
	uint32_t abi_version;	/* SIM_KERNELS_ABI_VERSION */
	uint32_t ops_size;	/* sizeof(struct sim_kernels_ops) */
	uint32_t kernel_size;	/* sizeof(struct sim_kernel) */
	uint32_t launch_size;	/* sizeof(struct sim_launch) */
	const char *name;	/* what the object is, for axond's log */
	/*
	 * The kernel for an image's symbol (exact name, or the identifier
	 * of an Itanium-mangled name), or NULL. Kernels are matched by
	 * name; axond compares the image's parameter layout with params
	 * and args_size before it uses one. Thread-safe.
	 */
	const struct sim_kernel *(*find)(const char *symbol);
	/* The i-th kernel, NULL past the end. */
	const struct sim_kernel *(*get)(size_t i);
};

typedef const struct sim_kernels_ops *sim_kernels_register_fn(uint32_t abi_version);

/* The entry point, as the object defines it (kernels-entry.c). */
sim_kernels_register_fn axon_sim_kernels_register_v1;

#endif /* AXOND_SIM_KERNELS_ABI_H */
