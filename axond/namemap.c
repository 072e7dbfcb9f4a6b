// SPDX-License-Identifier: MIT
/*
 * (owner, name) -> object, hashed with a secret key (see namemap.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>

#include "namemap.h"

#define MIN_CAP		16
#define TOMB		((const char *)1)	/* a removed entry's name */

struct namemap_slot {
	const char *name;	/* NULL: never used; TOMB: removed */
	uintptr_t owner;
	void *value;
	uint64_t hash;
};

static uint64_t key[2];
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static void key_init(void)
{
	if (getrandom(key, sizeof(key), 0) != sizeof(key)) {
		/* No entropy source: still unpredictable enough that a
		 * client does not know the key in advance. */
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		key[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
		key[1] = (uint64_t)ts.tv_sec ^ (uint64_t)(uintptr_t)&ts;
	}
}

#define ROTL(x, b)	(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND() do { \
	v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32); \
	v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2; \
	v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0; \
	v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32); \
} while (0)

/* SipHash-2-4 of the owner's 8 bytes followed by the name's. */
static uint64_t siphash(uintptr_t owner, const char *name)
{
	uint64_t v0 = key[0] ^ 0x736f6d6570736575ULL, v1 = key[1] ^ 0x646f72616e646f6dULL;
	uint64_t v2 = key[0] ^ 0x6c7967656e657261ULL, v3 = key[1] ^ 0x7465646279746573ULL;
	size_t len = strlen(name), total = len + 8, i;
	uint64_t m, b = (uint64_t)total << 56;
	const unsigned char *p = (const unsigned char *)name;

	m = (uint64_t)owner;
	v3 ^= m;
	SIPROUND();
	SIPROUND();
	v0 ^= m;
	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&m, p + i, 8);	/* little-endian hosts only, as axon is */
		v3 ^= m;
		SIPROUND();
		SIPROUND();
		v0 ^= m;
	}
	for (m = 0; i < len; i++)
		m |= (uint64_t)p[i] << (8 * (i & 7));
	b |= m;
	v3 ^= b;
	SIPROUND();
	SIPROUND();
	v0 ^= b;
	v2 ^= 0xff;
	SIPROUND();
	SIPROUND();
	SIPROUND();
	SIPROUND();
	return v0 ^ v1 ^ v2 ^ v3;
}

static uint64_t hash_of(uintptr_t owner, const char *name)
{
	pthread_once(&key_once, key_init);
	return siphash(owner, name);
}

static struct namemap_slot *find_slot(const struct namemap *m, uint64_t h,
				      uintptr_t owner, const char *name)
{
	uint32_t mask = m->cap - 1, i;

	for (i = (uint32_t)h & mask;; i = (i + 1) & mask) {
		struct namemap_slot *s = &m->slots[i];

		if (!s->name)
			return NULL;
		if (s->name != TOMB && s->hash == h && s->owner == owner &&
		    !strcmp(s->name, name))
			return s;
	}
}

/* Rebuilds into cap slots (tombstones dropped). */
static int rehash(struct namemap *m, uint32_t cap)
{
	struct namemap_slot *old = m->slots, *slots = calloc(cap, sizeof(*slots));
	uint32_t i, n = m->cap;

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		uint32_t j;

		if (!old[i].name || old[i].name == TOMB)
			continue;
		for (j = (uint32_t)old[i].hash & (cap - 1); slots[j].name; j = (j + 1) & (cap - 1))
			;
		slots[j] = old[i];
	}
	free(old);
	m->slots = slots;
	m->cap = cap;
	m->used = m->live;
	return 0;
}

int namemap_insert(struct namemap *m, uintptr_t owner, const char *name, void *value)
{
	uint64_t h = hash_of(owner, name);
	uint32_t mask, i;

	/* At most 3/4 full counting tombstones, so probes end; grow only
	 * when the live entries need it, else rebuild in place. */
	if (!m->cap || (uint64_t)(m->used + 1) * 4 > (uint64_t)m->cap * 3) {
		uint32_t cap = m->cap ? m->cap : MIN_CAP;

		while ((uint64_t)(m->live + 1) * 2 > cap) {
			if (cap > UINT32_MAX / 2)
				return -ENOMEM;
			cap *= 2;
		}
		if (rehash(m, cap))
			return -ENOMEM;
	}
	if (find_slot(m, h, owner, name))
		return -EEXIST;
	mask = m->cap - 1;
	for (i = (uint32_t)h & mask; m->slots[i].name && m->slots[i].name != TOMB;
	     i = (i + 1) & mask)
		;
	if (!m->slots[i].name)
		m->used++;
	m->slots[i] = (struct namemap_slot){
		.name = name, .owner = owner, .value = value, .hash = h,
	};
	m->live++;
	return 0;
}

void *namemap_find(const struct namemap *m, uintptr_t owner, const char *name)
{
	struct namemap_slot *s;

	if (!m->live)
		return NULL;
	s = find_slot(m, hash_of(owner, name), owner, name);
	return s ? s->value : NULL;
}

void *namemap_remove(struct namemap *m, uintptr_t owner, const char *name)
{
	struct namemap_slot *s;
	void *v;

	if (!m->live)
		return NULL;
	s = find_slot(m, hash_of(owner, name), owner, name);
	if (!s)
		return NULL;
	v = s->value;
	s->name = TOMB;
	s->value = NULL;
	m->live--;
	return v;
}

void namemap_destroy(struct namemap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
