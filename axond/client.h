/* SPDX-License-Identifier: MIT */
/*
 * A client's life (client.c): made by its transport, activated, torn down
 * on disconnect and freed with its last reference; and the hooks through
 * which the parts that keep state of their own in a client (the op
 * families, the loader, the tracers) take part in that life.
 *
 * The core calls no family: a family registers its hooks
 * (client_family_register, from a constructor as the work hooks in work.h
 * are), and client.c and stats.c walk the registered ones. So the families
 * sit above the core and call down into it, never the other way round
 * (issue 19, scripts/check-layering).
 */
#ifndef AXOND_CLIENT_H
#define AXOND_CLIENT_H

#include <stdint.h>

struct axond;
struct axon_welcome;
struct client;
struct client_transport;
struct stats_client;

/*
 * The families, in the order their hooks run: the order of what names
 * what, as each one's state may name the state of those after it.
 *
 *   TRACE     its tracers name the client; they end first, flushing the
 *             records of what the client did.
 *   HOSTFUNC  work parked behind the client's host functions goes to the
 *             executor, which skips a dead client's work, so none of it
 *             reaches a tracer either way.
 *   GRAPH     graphs and execs: their nodes name the client's functions,
 *             modules and streams, so they go before those.
 *   LOADER    module loads left unfinished: the backend's images of them,
 *             in no module of the client's yet, are discarded while the
 *             contexts they were loaded in are still there.
 *   VMM       cuMemMap'd ranges name cuMemCreate'd objects and sit in the
 *             client's allocation maps: undone before those maps go.
 *   HOSTMEM   shared host regions: the backend's client state may hold
 *             their registrations, so they go before it.
 */
enum client_family {
	CLIENT_FAMILY_TRACE,
	CLIENT_FAMILY_HOSTFUNC,
	CLIENT_FAMILY_GRAPH,
	CLIENT_FAMILY_LOADER,
	CLIENT_FAMILY_VMM,
	CLIENT_FAMILY_HOSTMEM,
	CLIENT_FAMILY_MAX
};

/*
 * Where in client_free a family's fini runs, between the core's own steps:
 * before the core frees what the family's state names.
 */
enum client_fini_stage {
	CLIENT_FINI_HANDLES = 1,	/* before the handle tables (functions...) */
	CLIENT_FINI_ALLOCS,		/* before the allocation maps */
	CLIENT_FINI_BACKEND,		/* before the backend's client state */
};

struct client_family_ops {
	enum client_family family;
	/* client_disconnect, once the client is out of the daemon's list and
	 * its accounting, before the dispatcher drops its reference; NULL:
	 * nothing to do then. */
	void (*gone)(struct axond *d, struct client *c);
	/* client_free (last reference: no work of the client is queued), at
	 * fini_stage; NULL: no state to free. */
	void (*fini)(struct axond *d, struct client *c);
	enum client_fini_stage fini_stage;
	/* stats_collect_client: the family's fields of the client's stats. */
	void (*stats)(const struct client *c, struct stats_client *out);
};

/* Before the dispatcher starts; one registration per family (a second
 * one is a bug, and aborts). */
void client_family_register(const struct client_family_ops *ops);
/* Every registered family's stats hook, in family order. */
void client_family_stats(const struct client *c, struct stats_client *out);

struct client *client_alloc(struct axond *d, const struct client_transport *t);
int welcome_error(struct axon_welcome *w, int status, const char *msg);
int client_activate(struct axond *d, struct client *c, struct axon_welcome *w);
void client_free(struct client *c);
/* Device memory through the client's transport (kernel: its cgroup);
 * -EDQUOT past a limit. */
int client_charge(struct axond *d, struct client *c, uint64_t bytes);
void client_uncharge(struct axond *d, struct client *c, uint64_t bytes);

void client_get(struct client *c);
void client_put(struct axond *d, struct client *c);
void client_disconnect(struct axond *d, struct client *c);

#endif
