/* SPDX-License-Identifier: MIT */
/*
 * The context limits that spend memory (localmem.c): the per-thread stack,
 * the device malloc heap and the printf FIFO of a client's context, what
 * each costs, and its charge. A limit is charged before the backend
 * changes it (CTX_LIMIT, ops/ctxlimit.c) and before a launch whose frame
 * makes the driver grow the stack (ops/launch.c); a decrease gives back
 * what the client was charged for the part given up. Dispatcher only.
 */
#ifndef AXOND_LOCALMEM_H
#define AXOND_LOCALMEM_H

#include <stdbool.h>
#include <stdint.h>

struct axond;
struct client;
struct func;

/*
 * One client's limits on one device (all its contexts there are one
 * driver context, so one set of limits): the values in force, as the
 * backend last reported them or a launch grew them, and the charges.
 */
struct localmem {
	bool known;		/* read from the backend (first use) */
	uint64_t stack, heap, fifo;
	uint64_t stack_base;	/* a fresh context's, in its context charge */
	uint64_t stack_charged;	/* device memory, of c->local_mem */
	uint64_t heap_charged;	/* device memory, of c->local_mem */
	bool heap_spent;	/* a kernel calling malloc was launched */
	uint64_t fifo_base;	/* the FIFO a fresh context has */
	uint64_t fifo_pinned;	/* host memory, of c->host_pinned */
	uint32_t calls;		/* SIM_IMAGE_CALLS_* whose reserve is charged */
	uint64_t runtime_charged;	/* that reserve, of c->local_mem */
};

/* Device memory the driver reserves for a stack of bytes per thread on
 * device dev, and for a malloc heap of bytes (measured on an H200:
 * Documentation/architecture.md, "Local memory"). */
uint64_t localmem_stack_cost(const struct axond *d, int dev, uint64_t bytes);
uint64_t localmem_heap_cost(uint64_t bytes);

/*
 * CTX_LIMIT: limit (CU_LIMIT_STACK_SIZE, _MALLOC_HEAP_SIZE, _PRINTF_FIFO_SIZE)
 * of c's context on dev; with set, charged and then asked of the backend.
 * *value: in, what to set; out, the value in force. A CUresult.
 */
int localmem_limit(struct axond *d, struct client *c, int dev, int limit,
		   bool set, uint64_t *value);

/*
 * Before a launch of f: a frame larger than the stack in force makes the
 * driver grow the stack to it, at the launch, for good; the first launch
 * of a kernel that calls malloc makes it reserve the heap in force (one
 * the client set is charged already, the default one is not). Charged
 * here. CUDA_SUCCESS or CUDA_ERROR_OUT_OF_MEMORY (nothing charged).
 */
int localmem_launch(struct axond *d, struct client *c, struct func *f);
/* f's frame (CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES), read from the backend
 * once. */
uint64_t localmem_frame(struct axond *d, struct func *f);
/*
 * What localmem_launch does for a launch on dev whose largest frame is
 * frame and, with heap, that runs a kernel calling malloc (a graph's).
 */
int localmem_charge_launch(struct axond *d, struct client *c, int dev, uint64_t frame,
			   bool heap);

/*
 * Device memory the driver reserves in a context at the first load of a
 * module whose code calls the device runtime (calls: SIM_IMAGE_CALLS_*,
 * sim/image.h): printf's buffers, or malloc's (which hold printf's too).
 */
uint64_t localmem_runtime_cost(const struct axond *d, int dev, uint32_t calls);

/* The calls c was charged for on dev: a module calling no others loads
 * into its context without a charge. */
uint32_t localmem_calls_charged(const struct client *c, int dev);

/*
 * Before a module whose code makes calls loads into c's context on dev:
 * charges the runtime's reserve the load makes the driver take beyond
 * what c was charged for already. CUDA_SUCCESS or CUDA_ERROR_OUT_OF_MEMORY
 * (nothing charged).
 */
int localmem_module(struct axond *d, struct client *c, int dev, uint32_t calls);

#endif
