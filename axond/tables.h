/* SPDX-License-Identifier: MIT */
/*
 * A client's handle tables (tables.c): the object a handle names, or NULL
 * for a stale, forged or dying one. The dispatcher and every op family
 * look up through here. Dispatcher thread.
 */
#ifndef AXOND_TABLES_H
#define AXOND_TABLES_H

#include <stdint.h>

struct client;
struct handle_table;

/* fn on every object of t, live or dying (client teardown). */
void handle_table_for_each(struct handle_table *t, void (*fn)(void *obj, void *arg),
			   void *arg);

struct ctx *ctx_lookup(struct client *c, uint64_t handle);
struct stream *stream_lookup(struct client *c, uint64_t handle);
struct event *event_lookup(struct client *c, uint64_t handle);
struct module *module_lookup(struct client *c, uint64_t handle);
/* A function of a module not being unloaded. */
struct func *func_lookup(struct client *c, uint64_t handle);

#endif
