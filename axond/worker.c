// SPDX-License-Identifier: MIT
/*
 * A worker process's side of process isolation (supervisor.c says why it
 * exists). A worker is axond started by the supervisor with
 * --worker-ctl=FD: it opens the driver and makes its client's context as
 * any axond would, but listens nowhere. It tells the supervisor when it is
 * ready, then takes the connections the supervisor hands it over FD (one
 * client, and tracers of that client) through the ordinary hello path.
 * Once its client has left (and what it held is given back) it says so
 * and ends when the supervisor tells it to: tearing a context and a
 * process down costs the driver as much as making them (~100 ms each
 * natively on the H200), in locks the clients being served need too, so
 * the supervisor lets it happen while no client is starting. Its parent's
 * death ends it too.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "axond.h"
#include "server.h"
#include "ctl.h"
#include "report.h"

static bool adopted_client;
static bool said_idle;		/* CTL_IDLE sent */
static bool client_faulted;	/* worker_client_faulted */
static bool told_to_end;	/* CTL_END received, or the word cannot be sent */


int worker_start(struct axond *d)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP, .data.u64 = EV_CTL };
	int fd = d->cfg.worker_ctl;

	/* The supervisor's end closing says the same, but a worker busy in
	 * the driver may not look for a while: the signal ends it anyway.
	 * (Not getppid() == 1: the supervisor may be a container's init. A
	 * supervisor gone before this line is seen by CTL_READY failing.) */
	if (prctl(PR_SET_PDEATHSIG, SIGTERM) < 0)
		return -errno;
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0 ||
	    epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	if (ctl_send(fd, CTL_CTX_COST, d->ctx_cost, -1))
		return -EIO;
	/* With the info page: a supervisor attached to /dev/axon publishes
	 * it to the module's clients (supervisor-kmod.c). */
	return ctl_send(fd, CTL_READY, d->info->device[0].total_mem, d->info_fd);
}

/* The stats report (report.h), all of it: the supervisor filters for
 * whoever asked it. It goes in a memfd, as it is larger than a control
 * message; if it cannot be sent the supervisor gives up waiting. */
static void send_report(struct axond *d)
{
	struct worker_report *r = malloc(sizeof(*r));
	int mfd;

	if (!r)
		return;
	report_fill(d, r);
	mfd = memfd_create("axon-stats", MFD_CLOEXEC);
	if (mfd >= 0 && write(mfd, r, sizeof(*r)) == (ssize_t)sizeof(*r))
		ctl_send(d->cfg.worker_ctl, CTL_STATS_REPORT, sizeof(*r), mfd);
	if (mfd >= 0)
		close(mfd);
	free(r);
}

void worker_ctl_event(struct axond *d)
{
	for (;;) {
		struct ctl_kclient kc;
		struct ctl_msg m;
		int fd;
		ssize_t n = ctl_recv(d->cfg.worker_ctl, &m, &kc, &fd);

		if (n == -EAGAIN)
			return;
		if (n == 0) {
			/* The supervisor is gone: nobody will send clients,
			 * and ours is better ended in order than orphaned. */
			log_info("worker: the supervisor went away; stopping");
			epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, d->cfg.worker_ctl, NULL);
			d->stop = true;
			return;
		}
		switch (m.type) {
		case CTL_CLIENT:
			if (fd < 0 || adopted_client)
				goto drop;
			/* The id the supervisor gave: unique across workers,
			 * so stats and traces name one client. */
			d->next_client_id = m.value - 1;
			adopted_client = true;
			server_adopt(d, fd);
			break;
		case CTL_KCLIENT:
			/* A /dev/axon client, with the delegate that acts
			 * for it; who it is, as the kernel said. */
			if (fd < 0 || adopted_client)
				goto drop;
			d->next_client_id = m.value - 1;
			adopted_client = true;
			kmod_adopt(d, fd, &kc.ev, &kc.params);	/* takes fd */
			break;
		case CTL_TRACE:
			if (fd < 0)
				goto drop;
			server_adopt(d, fd);
			break;
		case CTL_STATS:
			send_report(d);
			goto drop;
		case CTL_END:
			told_to_end = true;
			goto drop;
		default:
			log_warn("worker: unknown message %u from the supervisor", m.type);
			goto drop;
		}
		continue;
drop:
		if (fd >= 0)
			close(fd);
	}
}

void worker_client_faulted(void)
{
	client_faulted = true;
}

/*
 * The client came and went (or never said a usable hello) and its objects
 * are freed, its device memory given back: say so once, then end when
 * told. After a device fault the driver refuses every call of this
 * process, frees included, so only its end gives the memory back: the
 * supervisor is asked to end it at once (CTL_IDLE's value 1).
 */
bool worker_done(struct axond *d)
{
	if (!adopted_client || d->nclients || server_npending() ||
	    atomic_load(&d->clients_live))
		return false;
	if (!said_idle) {
		said_idle = true;
		if (ctl_send(d->cfg.worker_ctl, CTL_IDLE, client_faulted, -1))
			told_to_end = true;	/* nobody to wait for */
	}
	return told_to_end;
}
