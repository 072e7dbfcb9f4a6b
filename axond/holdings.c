// SPDX-License-Identifier: MIT
/*
 * Per-client, per-user and daemon-wide bounds on the mappings and VMM
 * objects clients make axond hold (holdings.h). Once, 65 477 pinned regions
 * of one client filled vm.max_map_count: new clients were refused and a
 * bystander's module load failed with OUT_OF_MEMORY.
 *
 * The per-user count is summed over the connected clients of the uid at each
 * take: the list is at most --max-clients long, and takes are synchronous
 * calls (a registration, a cuMemCreate, a cuMemMap), never a hot path.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/resource.h>

#include "axond.h"
#include "holdings.h"

/* Kept free for what the daemon itself maps and opens: every client's
 * region, doorbell and socket, the vendor driver, module images, logs. */
#define MAP_RESERVE	16384u
#define FD_RESERVE	4096u

static const char *const names[HOLD_KINDS] = {
	[HOLD_MAPPING] = "mappings",
	[HOLD_VMM_OBJECT] = "vmm_objects",
};

const char *holdings_name(enum hold_kind k)
{
	return k < HOLD_KINDS ? names[k] : "?";
}

static unsigned long read_max_map_count(void)
{
	unsigned long v = 65530;	/* the kernel's default */
	FILE *f = fopen("/proc/sys/vm/max_map_count", "re");

	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 65530;
		fclose(f);
	}
	return v;
}

void holdings_init(struct axond *d)
{
	unsigned long maps = read_max_map_count();
	struct rlimit rl;
	rlim_t fds = 1024;

	/* Descriptors: as many as the hard limit lets a daemon have. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rlim_t want = rl.rlim_max > (1u << 20) ? (1u << 20) : rl.rlim_max;

			rl.rlim_cur = want;
			if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
				fds = want;
			else if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
				fds = rl.rlim_cur;
		} else {
			fds = rl.rlim_cur;
		}
	}
	d->held_max[HOLD_MAPPING] = maps > 2 * MAP_RESERVE ? (unsigned int)(maps - MAP_RESERVE)
							   : (unsigned int)(maps / 2);
	/* A VMM object holds a descriptor in the sim; on cuda a driver handle,
	 * bounded the same way for the same reason. */
	d->held_max[HOLD_VMM_OBJECT] = fds > 2 * FD_RESERVE ? (unsigned int)(fds - FD_RESERVE)
							    : (unsigned int)(fds / 2);
}

static unsigned int client_limit(const struct axond *d, enum hold_kind k)
{
	return k == HOLD_MAPPING ? d->cfg.max_maps_per_client : d->cfg.max_vmm_per_client;
}

static unsigned int user_limit(const struct axond *d, enum hold_kind k)
{
	return k == HOLD_MAPPING ? d->cfg.max_maps_per_user : d->cfg.max_vmm_per_user;
}

static unsigned int user_count(const struct axond *d, uid_t uid, enum hold_kind k)
{
	const struct client *c;
	unsigned int n = 0;

	for (c = d->clients; c; c = c->next)
		if (c->uid == uid)
			n += c->held[k];
	return n;
}

int holdings_take(struct axond *d, struct client *c, enum hold_kind k)
{
	static uint64_t last_log[HOLD_KINDS];
	const char *who = NULL;
	uint64_t now;

	if (c->held[k] >= client_limit(d, k))
		who = "the client";
	else if (d->held[k] >= d->held_max[k])
		who = "axond (all clients)";
	else if (user_count(d, c->uid, k) >= user_limit(d, k))
		who = "its user";
	if (!who) {
		c->held[k]++;
		d->held[k]++;
		return 0;
	}
	c->stats.limit_refused++;
	now = axond_now_ns();
	if (now - last_log[k] > 1000000000ULL) {
		log_warn("client %llu (uid %u): %s holds its limit of %s",
			 (unsigned long long)c->id, (unsigned int)c->uid, who, names[k]);
		last_log[k] = now;
	}
	return -ENOSPC;
}

void holdings_give(struct axond *d, struct client *c, enum hold_kind k, unsigned int n)
{
	c->held[k] = c->held[k] > n ? c->held[k] - n : 0;
	d->held[k] = d->held[k] > n ? d->held[k] - n : 0;
}
