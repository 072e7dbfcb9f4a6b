// SPDX-License-Identifier: MIT
/*
 * Where a hello goes in the daemon that serves clients itself (not the
 * supervisor, whose loop hands every connection to a worker): a client to
 * the socket transport (transport-unix.c, which answers with the welcome
 * and the client's descriptors), a stats request to the stats document, a
 * tracer to trace.c. Above the listener (server.c), which reads and
 * checks the hello and knows none of these.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "axond.h"
#include "trace.h"
#include "stats.h"
#include "server.h"
#include "access.h"
#include "hello.h"
#include "welcome.h"
#include "client.h"

static void send_stats(struct axond *d, int fd, struct axon_welcome *w)
{
	struct access_peer viewer;
	char *doc = NULL;
	size_t len = 0;

	/* Other users' clients only for administrators (access.c). */
	access_peer_of(fd, &viewer);
	if (stats_render(d, &viewer, &doc, &len))
		doc = NULL;
	welcome_send_stats(fd, w, doc, len);
	free(doc);
}

void hello_route(struct axond *d, uint64_t tag)
{
	struct axon_hello h;
	struct axon_welcome w;
	int fd = server_hello_read(d, tag, &h, &w);

	if (fd < 0)
		return;
	if (h.kind == AXON_HELLO_STATS) {
		send_stats(d, fd, &w);
		close(fd);
		return;
	}
	if (h.kind == AXON_HELLO_TRACE) {
		trace_hello(d, fd, &h, &w);	/* answers, and owns fd */
		return;
	}
	if (h.kind != AXON_HELLO_CLIENT) {
		w.status = -EINVAL;
		snprintf(w.message, sizeof(w.message), "unknown hello kind %u", h.kind);
		welcome_send(fd, &w, NULL, 0);
		close(fd);
		return;
	}
	if (d->cfg.kmod_only) {
		log_info("refused a socket client: --transport=kmod");
		welcome_error(&w, -EPERM, HELLO_KMOD_ONLY);
		welcome_send(fd, &w, NULL, 0);
		close(fd);
		return;
	}
	unix_client_hello(d, fd, &h, &w);	/* owns fd */
}
