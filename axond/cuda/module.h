/* SPDX-License-Identifier: MIT */
/* The cuda backend's modules and functions (module.c). */
#ifndef AXOND_CUDA_MODULE_H
#define AXOND_CUDA_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cuda.h>

struct axond;
struct client;
struct cu_gctx;
struct func;
struct module;

/* A module's backend_priv. */
struct cu_module {
	CUmodule mod;
	struct cu_gctx *g;	/* the client's context it is loaded in */
	bool loaded;		/* mod is the driver's */
	bool prints;		/* may printf: flush after its launches */
	/* What the driver places for its globals (image_globals_mem),
	 * charged to the client while it is loaded. */
	uint64_t mem;
	uint64_t *globals;	/* registered global addresses */
	unsigned int nglobals, capglobals;
	/* The image as the loader's parser read it (its kernels' calls),
	 * NULL when the parser does not know it. */
	struct sim_image *img;
};

/* backend.h's module and function hooks. */
int cuda_module_prepare(struct axond *d, struct client *c, int dev, void **priv);
int cuda_module_parse(struct axond *d, struct client *c, void *priv,
		      const void *image, size_t len, uint32_t calls_charged,
		      uint32_t *calls, char *err, size_t errlen);
int cuda_module_commit(struct axond *d, struct client *c, struct module *m,
		       void *priv, char *err, size_t errlen);
void cuda_module_discard(struct axond *d, struct client *c, void *priv);
void cuda_module_unload(struct axond *d, struct client *c, struct module *m);
int cuda_module_get_func(struct axond *d, struct client *c, struct module *m,
			 const char *name, struct func *f);
int cuda_module_func_names(struct axond *d, struct client *c, struct module *m,
			   char *buf, size_t len, uint32_t *count, size_t *need);
int cuda_module_get_global(struct axond *d, struct client *c, struct module *m,
			   const char *name, uint64_t *addr, uint64_t *size);
int cuda_func_get_attr(struct axond *d, struct func *f, int attr, int64_t *value);
void cuda_func_free(struct axond *d, struct func *f);

#endif
