// SPDX-License-Identifier: MIT
/*
 * Where a hello goes in the daemon that serves clients itself (not the
 * supervisor, whose loop hands every connection to a worker): a client to
 * the socket transport (transport-unix.c, which answers with the welcome
 * and the client's descriptors), a stats request to the stats document, a
 * tracer to trace.c, a cgroup's limit for socket clients to sockcg.c. Above the listener (server.c), which reads and
 * checks the hello and knows none of these.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/*
 * AXON_HELLO_LIMIT: the cgroup is the directory sent with the hello, so a
 * caller names only a cgroup it could open; setting takes an administrator
 * or the right to manage the cgroup's parent (sockcg_may_set).
 */
static void limit_hello(struct axond *d, int fd, int cgfd, const struct axon_hello *h,
			struct axon_welcome *w)
{
	char path[1024];
	struct access_peer peer;
	uint64_t v[4] = { 0 };
	int ret = -EINVAL;

	access_peer_of(fd, &peer);
	if (cgfd < 0 || (h->target_pid != AXON_LIMIT_OP_GET && h->target_pid != AXON_LIMIT_OP_SET) ||
	    (h->target_pid == AXON_LIMIT_OP_GET && h->target_client)) {
		welcome_error(w, -EINVAL, "a limit request names a cgroup directory (sent with "
			      "it) and AXON_LIMIT_OP_GET or _SET");
	} else if ((ret = sockcg_path_of_fd(cgfd, path, sizeof(path)))) {
		welcome_error(w, ret, "not a cgroup v2 directory");
	} else if (h->target_pid == AXON_LIMIT_OP_SET && !peer.admin &&
		   !sockcg_may_set(cgfd, peer.uid, peer.gid)) {
		ret = -EPERM;
		welcome_error(w, ret, "an administrator, or write access to the cgroup's "
			      "parent directory, needed");
	} else if (h->target_pid == AXON_LIMIT_OP_SET &&
		   (ret = sockcg_limit_set(d, path, h->target_client))) {
		welcome_error(w, ret, "cannot keep the limit");
	} else {
		ret = sockcg_limit_get(d, path, &v[0], &v[1], &v[2], &v[3]);
		memcpy(w->params.resv, v, sizeof(v));
		if (h->target_pid == AXON_LIMIT_OP_SET)
			log_info("cgroup %s: socket clients' limit %llu set by uid %u", path,
				 (unsigned long long)h->target_client, (unsigned int)peer.uid);
	}
	w->status = ret;
	welcome_send(fd, w, NULL, 0);
}

void hello_route(struct axond *d, uint64_t tag)
{
	struct axon_hello h;
	struct axon_welcome w;
	int passed = -1;
	int fd = server_hello_read(d, tag, &h, &w, &passed);

	if (fd < 0)
		return;
	if (h.kind == AXON_HELLO_LIMIT) {
		limit_hello(d, fd, passed, &h, &w);
		if (passed >= 0)
			close(passed);
		close(fd);
		return;
	}
	if (passed >= 0)
		close(passed);	/* no other hello carries one */
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
