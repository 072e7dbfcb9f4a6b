/* SPDX-License-Identifier: MIT */
/* The sim backend's internal interface. */
#ifndef AXOND_SIM_H
#define AXOND_SIM_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/axon.h>

void sim_fill_info(struct axon_info *info, uint64_t mem);

/* graph.c: capture and replay (backend hooks, see backend.h). */
struct axond;
struct client;
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
