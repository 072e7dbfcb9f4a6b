/* SPDX-License-Identifier: MIT */
/*
 * shim-internal-gen.h - what the generated parts of the libcuda shim
 * (shim_stubs.c, shim_proctable.c, made by gen/gen_shim.py into
 * $(BUILD)/gen) share with the hand-written ones.
 *
 * Every function cuda.h declares has a weak stub in shim_stubs.c that
 * returns axon_shim_unimplemented("<name>"). To implement a function, define
 * it normally (a strong definition, cuda.h's prototype, with
 * __CUDA_API_VERSION_INTERNAL defined before <cuda.h> so that the versioned
 * names are not macros): the linker picks it over the stub, and
 * cuGetProcAddress returns it too.
 */
#ifndef AXON_SHIM_INTERNAL_GEN_H
#define AXON_SHIM_INTERNAL_GEN_H

#include <cuda.h>

/*
 * Reports that @name (a string with static storage duration, normally a
 * literal) is not implemented: "axon: <name> is not implemented" on stderr,
 * once per name per process, unless AXON_LOG=0. Thread-safe, async-signal-
 * unsafe, allocates nothing. Returns CUDA_ERROR_NOT_SUPPORTED.
 */
CUresult axon_shim_unimplemented(const char *name)
	__attribute__((visibility("hidden"), cold));

#endif
