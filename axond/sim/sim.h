/* SPDX-License-Identifier: MIT */
/* The sim backend's internal interface. */
#ifndef AXOND_SIM_H
#define AXOND_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <axon/protocol.h>

void sim_fill_info(struct axon_info *info, uint64_t mem);

struct axond;
struct client;
struct func;

/* ctxlimits.c: one client's context limits on one device (CTX_LIMIT). */
struct sim_limits {
	bool init;
	uint64_t stack, heap, fifo;
};
int sim_limit(struct sim_limits *l, const struct axon_device_info *dev, int limit,
	      bool set, uint64_t *value);

/* occupancy.c: AXON_OP_OCCUPANCY */
int sim_occupancy(struct axond *d, struct client *c, struct func *f,
		  const struct axon_sqe *q, int *value);
struct vmm_phys;

/* launchex.c: a function's settable attributes, enforced at launch. */
struct work;
struct sim_fattr {
	int32_t max_dyn_shared;
	int32_t carveout;
	uint32_t cluster[3];	/* REQUIRED_CLUSTER_*, 0: not fixed */
	int32_t non_portable;
	int32_t sched;
};
void sim_fattr_init(struct sim_fattr *fa);
bool sim_fattr_get(const struct sim_fattr *fa, int attr, int64_t *value);
int sim_fattr_set(struct sim_fattr *fa, const struct axon_info *info, int dev,
		  int attr, int value);
int32_t sim_launch_check(const struct sim_fattr *fa, const struct work *w);
/* tensormap.c */
int sim_tensor_map_encode(struct axond *d, struct client *c, int dev,
			  const struct axon_tensor_map_req *req, void *out);

/* The host address of a device address in the client's window (sim.c). */
void *sim_host_ptr(struct client *c, uint64_t addr);

/* vmm.c: physical memory of the VMM API (backend hooks, see backend.h). */
int sim_phys_create(struct axond *d, struct client *c, struct vmm_phys *p);
void sim_phys_free(struct axond *d, struct vmm_phys *p);
int sim_phys_map(struct axond *d, struct client *c, uint64_t addr, uint64_t len,
		 struct vmm_phys *p, uint64_t off);
void sim_phys_unmap(struct axond *d, struct client *c, uint64_t addr, uint64_t len,
		    struct vmm_phys *p);

/* graph.c: capture and replay (backend hooks, see backend.h). */
struct work;
struct graph;
struct graph_exec;
int32_t sim_execute(struct work *w);
bool sim_graph_record(struct work *w, int32_t *res);
int32_t sim_graph_execute(struct work *w);
int sim_graph_instantiate(struct axond *d, struct client *c, struct graph *g,
			  struct graph_exec *x, uint64_t flags);
void sim_graph_fini(struct axond *d, struct graph *g);
void sim_graph_exec_fini(struct axond *d, struct graph_exec *x);

#endif
