// SPDX-License-Identifier: MIT
/*
 * fuzz-hello: the input is a connection's first message, as recv() with
 * MSG_TRUNC would hand it to server_hello_read (axond/server.c): its
 * length is the input's, its first sizeof(struct axon_hello) bytes the
 * hello.
 * server_hello_check() runs on it; a client hello then goes through
 * client_create() (axond/transport-unix.c: negotiate, the region, the
 * doorbell, the backend's client state, activation) on the in-process sim
 * daemon, and the client is disconnected and freed again. Besides the
 * sanitizers, the geometry a client is given is checked: rings of powers
 * of two within the limits, parts of the region in order without overlap,
 * all of it mapped.
 * (Stats and trace hellos are answered by stats.c and trace.c: not here.)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "server.h"

#define PAGE 4096ULL

static void fail(const char *what, const struct axon_params *p)
{
	fprintf(stderr, "fuzz-hello: %s (sq %u cq %u data %llu region %llu)\n", what,
		p->sq_entries, p->cq_entries, (unsigned long long)p->data_size,
		(unsigned long long)p->region_size);
	abort();
}

static bool pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/* A refusal says why: a negative status and a terminated message. */
static void check_refusal(const struct axon_welcome *w)
{
	if (w->status >= 0 || !memchr(w->message, 0, sizeof(w->message)))
		fail("a refusal without a negative status and a message", &w->params);
}

/* What a client may rely on in the geometry it was given for hello h. */
static void check_geometry(const struct axon_hello *h, const struct axon_params *p,
			   const struct client *c)
{
	const struct axon_params *req = &h->params;

	if (!pow2(p->sq_entries) || p->sq_entries > AXON_MAX_SQ_ENTRIES ||
	    !pow2(p->cq_entries) || p->cq_entries > 2 * AXON_MAX_SQ_ENTRIES ||
	    p->cq_entries < p->sq_entries)
		fail("ring sizes", p);
	if ((req->sq_entries && p->sq_entries < req->sq_entries) ||
	    (req->cq_entries && p->cq_entries < req->cq_entries) ||
	    (req->data_size && p->data_size < req->data_size))
		fail("less than the hello asked for", p);
	if (!p->data_size || p->data_size % PAGE || p->data_size > AXON_MAX_DATA_SIZE)
		fail("data area size", p);
	if (p->off_client % PAGE || p->off_daemon < p->off_client + PAGE ||
	    p->off_frontier < p->off_daemon + PAGE ||
	    p->off_sqes < p->off_frontier + (uint64_t)p->frontier_entries * 8 ||
	    p->off_cqes < p->off_sqes + (uint64_t)p->sq_entries * AXON_SQE_SIZE ||
	    p->off_data < p->off_cqes + (uint64_t)p->cq_entries * AXON_CQE_SIZE ||
	    p->region_size < p->off_data + p->data_size ||
	    p->off_sqes % PAGE || p->off_cqes % PAGE || p->off_data % PAGE)
		fail("region layout", p);
	if (c->region_size != p->region_size || c->sq_entries != p->sq_entries ||
	    c->cq_entries != p->cq_entries)
		fail("the client's view differs from its welcome", p);
	if (!p->va_size || p->va_base + p->va_size < p->va_base)
		fail("device-address window", p);
	/* All of it is mapped: the last byte of the data area is writable. */
	c->data[p->data_size - 1] = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct axond *d = fuzz_daemon();
	struct axon_hello h;
	struct axon_welcome w = {
		.magic = AXON_MAGIC,
		.abi_major = AXON_ABI_MAJOR,
		.abi_minor = AXON_ABI_MINOR,
	};
	struct client *c;
	int ret;

	memset(&h, 0, sizeof(h));
	memcpy(&h, data, size < sizeof(h) ? size : sizeof(h));
	ret = server_hello_check(&h, (ssize_t)size, &w);
	if (ret) {
		if (ret != w.status)
			fail("server_hello_check's status differs from the welcome's", &w.params);
		check_refusal(&w);
		return 0;
	}
	if (h.kind != AXON_HELLO_CLIENT)
		return 0;
	c = client_create(d, -1, &h, &w);
	if (!c) {
		check_refusal(&w);
		return 0;
	}
	if (w.status)
		fail("a client made with a nonzero status", &w.params);
	check_geometry(&h, &w.params, c);
	fuzz_client_end(d, c);
	return 0;
}
