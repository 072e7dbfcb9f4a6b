/* SPDX-License-Identifier: MIT */
/* The CUresult table generated from cuda.h (gen/gen_errors.py). */
#ifndef AXON_SHIM_ERRORS_H
#define AXON_SHIM_ERRORS_H

struct shim_error {
	int code;
	const char *name;
	const char *text;
};

extern const struct shim_error shim_errors[] __attribute__((visibility("hidden")));	/* by code */
extern const unsigned int shim_nerrors __attribute__((visibility("hidden")));

#endif
