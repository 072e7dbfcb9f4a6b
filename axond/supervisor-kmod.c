// SPDX-License-Identifier: MIT
/*
 * Process isolation with the kernel module loaded: the supervisor is the
 * daemon attached to /dev/axon (transport-kmod.c attaches it), and its
 * workers serve the module's clients.
 *
 * The supervisor sees a client's OPEN (or, at attach, EXISTING) and its
 * GONE, nothing else. A client that opened is admitted as a socket client
 * is (supervisor.c: its user's share, the waiting list), then handed to a
 * ready worker: the supervisor makes a delegate descriptor for it
 * (AXON_IOC_CLIENT_FD with AXON_CLIENT_FD_DELEGATE) and sends it over the
 * worker's socket (SCM_RIGHTS) with the identity the kernel reported and
 * the client's geometry, then closes its own copy. From then on the worker
 * maps, accepts, charges, wakes and disconnects the client through that
 * descriptor, and its doorbells and its end arrive there
 * (transport-kmod.c), off the supervisor's path. A worker that dies with
 * its client still there takes the client's device state with it: the
 * supervisor disconnects the client (-ECONNRESET).
 *
 * Clients that were there when the supervisor attached: one still waiting
 * for its SETUP (PENDING) is served like a new one; an ORPHAN was served
 * by a worker of a previous supervisor, which ended with it, so its device
 * state is gone and it is disconnected with -ECONNRESET.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "axond.h"
#include "ctl.h"
#include "supervisor.h"

void supervisor_kmod_refuse(struct axond *d, uint64_t id, int error)
{
	struct axon_disconnect dc = { .client_id = id, .error = error };

	if (d->kmod_fd >= 0)
		ioctl(d->kmod_fd, AXON_IOC_DISCONNECT, &dc);
}

int supervisor_kmod_give(struct axond *d, struct wproc *w, const struct axon_event *ev,
			 uint64_t value)
{
	struct ctl_kclient kc;
	struct axon_client_fd cf = {
		.client_id = ev->client_id,
		.flags = AXON_CLIENT_FD_DELEGATE,
	};
	int ret;

	memset(&kc, 0, sizeof(kc));
	kc.ev = *ev;
	cf.params = (uint64_t)(uintptr_t)&kc.params;
	if (ioctl(d->kmod_fd, AXON_IOC_CLIENT_FD, &cf) < 0) {
		ret = -errno;
		if (ret != -ENOENT) {
			log_warn("supervisor: refusing kmod client %llu: no delegate: %s",
				 (unsigned long long)ev->client_id, strerror(-ret));
			supervisor_kmod_refuse(d, ev->client_id, ret);
		}
		return ret;	/* -ENOENT: gone already */
	}
	ret = ctl_send_kclient(w->ctl, value, &kc, cf.fd);
	/* Sent, the worker holds its own; unsent, closing it gives the
	 * client's doorbells back to us, where they wake nobody. */
	close(cf.fd);
	return ret ? -EPIPE : 0;
}

void supervisor_kmod_info(struct axond *d, int fd)
{
	static bool copied;
	size_t size = (sizeof(struct axon_info) + 4095) & ~4095UL;
	void *m;

	if (copied || !d->kmod_info)
		return;
	m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		log_warn("supervisor: cannot map a worker's info page: %s", strerror(errno));
		return;
	}
	memcpy(d->kmod_info, m, sizeof(struct axon_info));
	munmap(m, size);
	copied = true;
}

static void opened(struct axond *d, const struct axon_event *ev)
{
	struct waiting e = { .fd = -1, .uid = ev->uid, .kev = *ev };

	if (supervisor_kclient_known(ev->client_id))
		return;	/* a coalesced record of one already ours */
	supervisor_hand(d, &e);
}

/* Reads every queued client event of the daemon's fd. */
void supervisor_kmod_events(struct axond *d)
{
	struct axon_event evs[32];

	while (d->kmod_fd >= 0) {
		ssize_t n = read(d->kmod_fd, evs, sizeof(evs));
		size_t i;

		if (n <= 0) {
			if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
				log_err("/dev/axon: %s; detaching",
					n == 0 ? "end of events" : strerror(errno));
				kmod_detach(d);
			}
			return;
		}
		for (i = 0; i < (size_t)n / sizeof(evs[0]); i++) {
			const struct axon_event *ev = &evs[i];

			if (ev->events & AXON_EV_GONE) {
				/* A worker's client ends there too (its
				 * delegate has the GONE): only a waiting one
				 * is ours to forget. */
				supervisor_kclient_gone(ev->client_id);
				continue;
			}
			if (ev->events & AXON_EV_EXISTING && ev->state == AXON_KSTATE_ORPHAN) {
				/* Its worker ended with the previous
				 * supervisor, and its device state too. */
				supervisor_kmod_refuse(d, ev->client_id, -ECONNRESET);
				continue;
			}
			if (ev->events & (AXON_EV_OPEN | AXON_EV_EXISTING) &&
			    ev->state == AXON_KSTATE_PENDING)
				opened(d, ev);
			/* DOORBELL: only a client not yet handed, or whose
			 * worker has just gone (its delegate closed), rings
			 * here; neither is served by us. */
		}
	}
}
