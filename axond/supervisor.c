// SPDX-License-Identifier: MIT
/*
 * Process isolation (--isolation=process, the cuda backend's default): the
 * supervisor's side.
 *
 * NVIDIA's driver does not keep a device fault to the context it happened
 * in. Seen on the H200 (driver 580.159.04, 2026-11-29): after an assert in
 * one context every other context of the process answered
 * CUDA_ERROR_ASSERT, new contexts too, even once the faulting one was
 * destroyed. A fault is therefore contained only by a process of its own.
 *
 * So the axond that listens opens no driver. It keeps --context-pool worker
 * processes ready, each a fresh exec of this binary with --worker-ctl
 * (worker.c) that has opened the driver, made its client's context and
 * prepared a region, and hands each new client's connection, hello unread,
 * to one of them (SCM_RIGHTS over the socketpair it started the worker
 * with). The worker serves that client alone and ends when it leaves; a
 * fault ends that worker and no other. A replacement starts as soon as a
 * worker is taken, each in its own process, so back-to-back starts do not
 * queue behind one cuInit. A client that finds none ready waits for the
 * next. Workers that die before they are ready (a broken driver) are
 * restarted with a growing delay, and waiting clients are told why they
 * got none once no worker has become ready for WAIT_LIMIT_NS.
 *
 * Tools still talk to one socket: a stats request is answered from the
 * workers' reports (supervisor-stats.c asks each over its socket); a trace
 * is handed to the worker of the client it names.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "axond.h"
#include "server.h"
#include "ctl.h"
#include "supervisor.h"
#include "welcome.h"
#include "hello.h"

/* A waiting client is refused once no worker has become ready for this
 * long (workers are failing to start), or after WAIT_MAX_NS in any case;
 * not while workers keep becoming ready: 32 clients at once on the H200
 * took 24-35 s to be served, each start slowing the others in the driver.
 * libaxon waits 120 s for the answer (lib/setup.c). */
#define WAIT_LIMIT_NS		(30ULL * 1000 * 1000 * 1000)
#define WAIT_MAX_NS		(100ULL * 1000 * 1000 * 1000)
#define BACKOFF_MAX_NS		(30ULL * 1000 * 1000 * 1000)
#define STOP_GRACE_MS		5000
/* Workers starting at once: each makes contexts and pins memory in the
 * driver, which serialises much of it; more at once only slows the
 * clients being served meanwhile. */
#define MAX_STARTING		4
/* ...but clients waiting for one are worse off than clients slowed. */
#define MAX_STARTING_WAITED	16
/* A worker starting competes in the driver with the clients being served
 * (cuInit, cuCtxCreate and host registration take the driver's locks):
 * while clients keep coming and a few workers are still ready, their
 * replacements wait until the clients have been quiet this long. */
#define QUIET_NS		(200ULL * 1000 * 1000)
#define QUIET_READY		2
/* A worker whose client has gone tears its context and process down, as
 * much driver work as starting one (natively on the H200 ~100 ms at exit,
 * start.exit), and it slowed the next client's first module load (session
 * 6). So it waits (W_ENDING) until no client has been given one for
 * QUIET_NS, unless more than this many are waiting: each holds a context's
 * device memory and a process. */
#define MAX_ENDING		8
/* A worker told to end that has not within this long (a kernel that never
 * finishes keeps its executor, and so its end, waiting) is killed: the
 * workers after it are told one at a time. */
#define END_GRACE_NS		(10ULL * 1000 * 1000 * 1000)

struct supervisor sv;




/* ---- starting and losing workers ----------------------------------------- */

static unsigned int argv_len(char **argv)
{
	unsigned int n = 0;

	while (argv[n])
		n++;
	return n;
}

static int spawn(struct axond *d)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
	struct wproc *w;
	int sp[2];
	pid_t pid;

	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
		free(w);
		return -errno;
	}
	pid = fork();
	if (pid == 0) {
		unsigned int n = argv_len(sv.argv);
		char **args = calloc(n + 3, sizeof(*args));
		char arg[32], cost[48];
		sigset_t none;

		/* The worker's own setup blocks what it reads from its
		 * signalfd; nothing of ours is to stay blocked. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (!args || fcntl(sp[1], F_SETFD, 0) < 0)
			_exit(127);
		memcpy(args, sv.argv, n * sizeof(*args));
		snprintf(arg, sizeof(arg), "--worker-ctl=%d", sp[1]);
		args[n] = arg;
		if (sv.ctx_cost && !d->cfg.ctx_mem) {
			snprintf(cost, sizeof(cost), "--ctx-mem=%llu",
				 (unsigned long long)sv.ctx_cost);
			args[n + 1] = cost;
		}
		execv("/proc/self/exe", args);
		_exit(127);
	}
	close(sp[1]);
	if (pid < 0) {
		close(sp[0]);
		free(w);
		return -errno;
	}
	w->pid = pid;
	w->ctl = sp[0];
	w->state = W_STARTING;
	ev.data.ptr = w;
	if (epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, w->ctl, &ev) < 0) {
		/* Unreachable, so useless: the worker ends when it sees its
		 * socket closed. */
		close(w->ctl);
		free(w);
		return -errno;
	}
	w->next = sv.list;
	sv.list = w;
	sv.nstarting++;
	log_debug("supervisor: starting worker %d", (int)pid);
	return 0;
}

/* Start workers until the target are ready or starting, one more for each
 * client waiting; not while backing off after workers that died young. */
static void top_up(struct axond *d)
{
	/* Workers ending are not counted: at most MAX_ENDING of them wait,
	 * and those told to end are going. */
	unsigned int live = sv.nstarting + sv.nready + sv.nbusy;

	if (!sv.nwait && sv.nready >= QUIET_READY &&
	    axond_now_ns() - sv.last_give_ns < QUIET_NS)
		return;	/* the loop looks again once it is quiet */

	while (sv.nstarting + sv.nready < sv.target + sv.nwait &&
	       sv.nstarting < (sv.nwait ? MAX_STARTING_WAITED : MAX_STARTING) &&
	       (sv.first_ready || d->cfg.ctx_mem || !sv.nstarting) &&
	       live < d->cfg.max_clients + sv.target &&
	       axond_now_ns() >= sv.next_spawn_ns) {
		int ret = spawn(d);

		if (ret) {
			log_err("supervisor: cannot start a worker: %s", strerror(-ret));
			sv.next_spawn_ns = axond_now_ns() + 1000000000ULL;
			return;
		}
		live++;
	}
}

void supervisor_worker_lost(struct axond *d, struct wproc *w)
{
	unsigned int i;

	for (i = 0; i < AXON_MAX_DEVICES; i++)
		sv.busy_retired[i] += w->busy_seen[i];
	memset(w->busy_seen, 0, sizeof(w->busy_seen));
	epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, w->ctl, NULL);
	close(w->ctl);
	w->ctl = -1;
	switch (w->state) {
	case W_STARTING:
		sv.nstarting--;
		/* Died before it was ready: the driver or the options are at
		 * fault, and starting the next at once would only spin. */
		sv.early_deaths++;
		{
			unsigned int sh = sv.early_deaths > 5 ? 5 : sv.early_deaths;
			uint64_t delay = (1000000000ULL << sh) / 2;

			if (delay > BACKOFF_MAX_NS)
				delay = BACKOFF_MAX_NS;
			sv.next_spawn_ns = axond_now_ns() + delay;
			log_err("supervisor: worker %d ended before it was ready "
				"(%u in a row; see its log above); next try in %.1f s",
				(int)w->pid, sv.early_deaths, (double)delay / 1e9);
		}
		break;
	case W_READY:
		sv.nready--;
		break;
	case W_BUSY:
		sv.nbusy--;
		/* Its /dev/axon client's device state died with it: the
		 * kernel answers the client -ECONNRESET, as a socket client
		 * sees its connection reset. */
		if (w->kmod_id) {
			log_warn("supervisor: worker %d of kmod client %llu is gone; ending the client",
				 (int)w->pid, (unsigned long long)w->kmod_id);
			supervisor_kmod_refuse(d, w->kmod_id, -ECONNRESET);
		}
		break;
	case W_ENDING:
		sv.nending--;
		break;
	case W_RETIRING:
		if (w->told_end)
			sv.nquitting--;
		break;
	case W_GONE:
		break;
	}
	w->state = W_GONE;	/* freed once reaped too (sweep) */
}

/* Signals a worker whose process has not been reaped (a reaped pid may
 * be another process's by now). */
static void signal_worker(const struct wproc *w, int sig)
{
	if (w->pid > 0 && !w->reaped)
		kill(w->pid, sig);
}

/* Tells w (W_ENDING) to end. */
static void tell_end(struct wproc *w)
{
	w->state = W_RETIRING;
	w->told_end = true;
	w->end_ns = axond_now_ns();
	sv.nending--;
	sv.nquitting++;
	if (ctl_send(w->ctl, CTL_END, 0, -1))
		signal_worker(w, SIGTERM);
}

/*
 * Tells the workers whose client has gone to end, oldest first: one at a
 * time (the next once the last has gone) while no client has been given
 * one for QUIET_NS and none waits for one; at once, beyond MAX_ENDING or
 * while workers die before they are ready (their memory may be what the
 * new ones lack). All at once after a burst of short clients, their
 * teardowns slowed the next client's module loads 7-fold on the H200
 * (session 6). One told to end that has not within END_GRACE_NS is
 * killed and no longer holds the others back.
 */
static void end_idle(void)
{
	uint64_t now = axond_now_ns();
	bool quiet = !sv.nwait && now - sv.last_give_ns >= QUIET_NS;
	struct wproc *w;

	for (w = sv.list; w; w = w->next) {
		if (w->state == W_RETIRING && w->told_end && now - w->end_ns > END_GRACE_NS) {
			log_warn("supervisor: worker %d did not end within %llu s of being told; "
				 "killing it", (int)w->pid,
				 (unsigned long long)(END_GRACE_NS / 1000000000ULL));
			signal_worker(w, SIGKILL);
			w->told_end = false;
			sv.nquitting--;
		}
	}
	while (sv.nending && ((quiet && !sv.nquitting) || sv.nending > MAX_ENDING ||
			      sv.early_deaths)) {
		struct wproc *oldest = NULL;

		for (w = sv.list; w; w = w->next)
			if (w->state == W_ENDING && (!oldest || w->idle_ns < oldest->idle_ns))
				oldest = w;
		if (!oldest)
			break;
		tell_end(oldest);
	}
}

static void reap(struct axond *d)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		struct wproc **pp, *w;

		for (pp = &sv.list; (w = *pp); pp = &w->next)
			if (w->pid == pid)
				break;
		if (WIFSIGNALED(status))
			log_warn("supervisor: worker %d%s ended by signal %d", (int)pid,
				 w && w->client_id ? " of a client" : "", WTERMSIG(status));
		else if (WIFEXITED(status) && WEXITSTATUS(status))
			log_info("supervisor: worker %d exited with status %d", (int)pid,
				 WEXITSTATUS(status));
		if (!w)
			continue;
		w->reaped = true;
		if (w->ctl >= 0)
			supervisor_worker_lost(d, w);	/* before its hang-up is read */
	}
}

/* Frees the workers that are gone and reaped. Between event batches only. */
static void sweep(void)
{
	struct wproc **pp = &sv.list, *w;

	while ((w = *pp)) {
		if (w->ctl < 0 && w->reaped) {
			*pp = w->next;
			free(w);
		} else {
			pp = &w->next;
		}
	}
}

/* ---- clients -------------------------------------------------------------- */

/* The hello the supervisor only peeked at: read it before answering, as
 * closing a socket with unread data resets it, losing the answer. */
void supervisor_consume_hello(int fd)
{
	struct axon_hello h;

	(void)!recv(fd, &h, sizeof(h), MSG_DONTWAIT | MSG_TRUNC);
}

static void refuse(int fd, int status, const char *msg)
{
	struct axon_welcome w = {
		.magic = AXON_MAGIC,
		.abi_major = AXON_ABI_MAJOR,
		.abi_minor = AXON_ABI_MINOR,
		.status = status,
	};

	snprintf(w.message, sizeof(w.message), "%s", msg);
	supervisor_consume_hello(fd);
	welcome_send(fd, &w, NULL, 0);
	close(fd);
}

/* Refuses a client of either transport with status (and msg, which a
 * socket client reads in its welcome). */
static void refuse_entry(struct axond *d, const struct waiting *e, int status,
			 const char *msg)
{
	if (e->fd >= 0) {
		refuse(e->fd, status, msg);
		return;
	}
	log_info("supervisor: refusing kmod client %llu (pid %u): %s",
		 (unsigned long long)e->kev.client_id, e->kev.pid, msg);
	supervisor_kmod_refuse(d, e->kev.client_id, status);
}

/* Hands e to a ready worker; false when none is, e still ours. True also
 * when a /dev/axon client could not be handed (it is refused). */
static bool give(struct axond *d, const struct waiting *e)
{
	struct ucred cred = { 0 };
	socklen_t len = sizeof(cred);
	struct wproc *w;
	int ret;

	if (e->fd < 0) {
		cred.pid = (pid_t)e->kev.pid;
		cred.uid = e->kev.uid;
	} else {
		getsockopt(e->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len);
	}
	for (;;) {
		for (w = sv.list; w; w = w->next)
			if (w->state == W_READY)
				break;
		if (!w)
			return false;
		if (e->fd >= 0)
			ret = ctl_send(w->ctl, CTL_CLIENT, sv.next_client_id + 1, e->fd) ? -EPIPE : 0;
		else
			ret = supervisor_kmod_give(d, w, &e->kev, sv.next_client_id + 1);
		if (ret == 0)
			break;
		if (ret != -EPIPE)
			return true;	/* refused: nothing to hand */
		/* It died between ready and now: next one. */
		supervisor_worker_lost(d, w);
		signal_worker(w, SIGKILL);
	}
	if (e->fd >= 0)
		close(e->fd);
	w->state = W_BUSY;
	sv.last_give_ns = axond_now_ns();
	w->client_id = ++sv.next_client_id;
	w->kmod_id = e->fd < 0 ? e->kev.client_id : 0;
	w->client_pid = cred.pid;
	w->client_uid = cred.uid;
	sv.nready--;
	sv.nbusy++;
	sv.total_clients++;
	log_debug("supervisor: client %llu (pid %d%s) to worker %d",
		  (unsigned long long)w->client_id, (int)cred.pid,
		  e->fd < 0 ? ", kmod" : "", (int)w->pid);
	return true;
}

static void drop_waiting(unsigned int i)
{
	memmove(&sv.wait[i], &sv.wait[i + 1], (sv.nwait - i - 1) * sizeof(sv.wait[0]));
	sv.nwait--;
}

static void serve_waiting(struct axond *d)
{
	uint64_t now = axond_now_ns();
	unsigned int i = 0;

	while (i < sv.nwait) {
		uint64_t since = sv.wait[i].since;
		/* Since when this client has seen no worker become ready. */
		uint64_t stuck = sv.last_ready_ns > since ? sv.last_ready_ns : since;

		if (give(d, &sv.wait[i])) {
			drop_waiting(i);
			continue;
		}
		if (now - stuck > WAIT_LIMIT_NS || now - since > WAIT_MAX_NS) {
			refuse_entry(d, &sv.wait[i], -EAGAIN,
				     now - since > WAIT_MAX_NS
				     ? "no axond worker process was free for 100 s (see axond's log)"
				     : "no axond worker process became ready for 30 s (see axond's log)");
			drop_waiting(i);
			continue;
		}
		i++;
	}
	top_up(d);
}

bool supervisor_kclient_gone(uint64_t id)
{
	unsigned int i;

	for (i = 0; i < sv.nwait; i++) {
		if (sv.wait[i].fd < 0 && sv.wait[i].kev.client_id == id) {
			drop_waiting(i);
			return true;
		}
	}
	return false;
}

bool supervisor_kclient_known(uint64_t id)
{
	struct wproc *w;
	unsigned int i;

	for (i = 0; i < sv.nwait; i++)
		if (sv.wait[i].fd < 0 && sv.wait[i].kev.client_id == id)
			return true;
	for (w = sv.list; w; w = w->next)
		if (w->state == W_BUSY && w->kmod_id == id)
			return true;
	return false;
}

/*
 * One user's share: its clients served and waiting together at most
 * --max-clients-per-user, and at most --max-pending-per-user of them waiting
 * for a worker, so one user cannot fill the waiting list and keep everyone
 * else out. The same for either transport. 0, or refuses e and returns
 * -EBUSY.
 */
static int user_share(struct axond *d, const struct waiting *e)
{
	unsigned int served = 0, waiting = 0, i;
	uid_t uid = e->uid;
	char msg[96];
	struct wproc *w;

	for (w = sv.list; w; w = w->next)
		served += w->state == W_BUSY && w->client_uid == uid;
	for (i = 0; i < sv.nwait; i++)
		waiting += sv.wait[i].uid == uid;
	if (served + waiting >= d->cfg.max_clients_per_user) {
		snprintf(msg, sizeof(msg), "too many clients of uid %u (--max-clients-per-user=%u)",
			 (unsigned int)uid, d->cfg.max_clients_per_user);
	} else if (waiting >= d->cfg.max_pending_per_user) {
		snprintf(msg, sizeof(msg),
			 "too many clients of uid %u waiting for a worker (--max-pending-per-user=%u)",
			 (unsigned int)uid, d->cfg.max_pending_per_user);
	} else {
		return 0;
	}
	d->clients_refused_user++;
	refuse_entry(d, e, -EBUSY, msg);
	return -EBUSY;
}

void supervisor_hand(struct axond *d, const struct waiting *entry)
{
	if (user_share(d, entry))
		return;
	if (sv.nwait == 0 && give(d, entry)) {
		top_up(d);
		return;
	}
	if (sv.nwait == MAX_WAITING) {
		refuse_entry(d, entry, -EBUSY, "too many clients waiting for an axond worker");
		return;
	}
	sv.wait[sv.nwait] = *entry;
	sv.wait[sv.nwait].since = axond_now_ns();
	sv.nwait++;
	serve_waiting(d);
}

static void hand_client(struct axond *d, int fd)
{
	struct ucred cred = { .uid = (uid_t)-1 };
	socklen_t len = sizeof(cred);
	struct waiting e = { .fd = fd };

	getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len);
	e.uid = cred.uid;
	supervisor_hand(d, &e);
}

static void hand_trace(int fd, const struct axon_hello *h)
{
	struct wproc *w, *found = NULL;

	if (h->flags || h->resv || (!h->target_client && !h->target_pid)) {
		refuse(fd, -EINVAL, "a trace names target_client or target_pid");
		return;
	}
	for (w = sv.list; w; w = w->next) {
		if (w->state != W_BUSY)
			continue;
		if (h->target_client ? w->client_id == h->target_client
				     : w->client_pid == (pid_t)h->target_pid) {
			if (!found || w->client_id > found->client_id)
				found = w;
		}
	}
	if (!found) {
		refuse(fd, -ESRCH, "no such client");
		return;
	}
	if (ctl_send(found->ctl, CTL_TRACE, 0, fd)) {
		refuse(fd, -ESRCH, "no such client (its worker is gone)");
		return;
	}
	close(fd);
}

/* ---- what workers say ---------------------------------------------------- */

/* A message a worker sends unasked (its start, its client's end), read
 * wherever it is read: in ctl_event or among the stats reports
 * (supervisor-stats.c). */
void supervisor_ctl_note(struct axond *d, struct wproc *w, const struct ctl_msg *m, int fd)
{
	if (m->type == CTL_IDLE && w->state == W_BUSY) {
		w->state = W_ENDING;
		w->idle_ns = axond_now_ns();
		sv.nbusy--;
		sv.nending++;
		if (m->value) {
			/* Its memory goes only with its end (worker.c). */
			log_info("supervisor: worker %d: its client hit a device fault; ending it now",
				 (int)w->pid);
			tell_end(w);
		}
		end_idle();
	}
	if (m->type == CTL_CTX_COST && w->state == W_STARTING && !sv.ctx_cost && m->value) {
		sv.ctx_cost = m->value;
		log_info("supervisor: a context takes %llu MiB (worker %d); later workers are told",
			 (unsigned long long)(m->value >> 20), (int)w->pid);
	}
	if (m->type == CTL_READY && w->state == W_STARTING) {
		if (fd >= 0)
			supervisor_kmod_info(d, fd);
		sv.first_ready = true;
		w->state = W_READY;
		sv.last_ready_ns = axond_now_ns();
		sv.nstarting--;
		sv.nready++;
		sv.early_deaths = 0;
		sv.next_spawn_ns = 0;
		/* One ready worker per 16 GiB of device memory, 2 to 8,
		 * as the context pool; learnt from the first worker,
		 * the supervisor having no driver of its own. */
		if (!sv.target_set) {
			uint64_t per = m->value >> 34;

			sv.target = per < 2 ? 2 : per > 8 ? 8 : (unsigned int)per;
			sv.target_set = true;
		}
		serve_waiting(d);
	}
}

/* ---- the loop -------------------------------------------------------------- */

void supervisor_route(struct axond *d, int fd, const struct axon_hello *h,
		      struct axon_welcome *w)
{
	switch (h->kind) {
	case AXON_HELLO_CLIENT:
		if (d->cfg.kmod_only) {
			log_info("supervisor: refused a socket client: --transport=kmod");
			refuse(fd, -EPERM, HELLO_KMOD_ONLY);
			break;
		}
		hand_client(d, fd);
		break;
	case AXON_HELLO_STATS:
		supervisor_send_stats(d, fd, w);
		break;
	case AXON_HELLO_TRACE:
		hand_trace(fd, h);
		break;
	case AXON_HELLO_LIMIT:
		/* Each worker would keep its own: not yet. */
		refuse(fd, -EOPNOTSUPP, "socket clients' cgroup limits: not under "
		       "--isolation=process");
		break;
	default:
		refuse(fd, -EINVAL, "unknown hello kind");
		break;
	}
}

static void ctl_event(struct axond *d, struct wproc *w)
{
	for (;;) {
		struct ctl_msg m;
		int fd;
		ssize_t n;

		if (w->ctl < 0)
			return;	/* lost earlier in this batch */
		n = ctl_recv(w->ctl, &m, NULL, &fd);
		if (n == -EAGAIN)
			return;
		if (n == 0) {
			supervisor_worker_lost(d, w);
			serve_waiting(d);
			return;
		}
		supervisor_ctl_note(d, w, &m, fd);
		if (fd >= 0)
			close(fd);	/* a late stats report, an info page */
	}
}

static void stop_workers(struct axond *d)
{
	uint64_t deadline = axond_now_ns() + STOP_GRACE_MS * 1000000ULL;
	struct wproc *w;
	bool any;

	for (w = sv.list; w; w = w->next)
		signal_worker(w, SIGTERM);
	do {
		any = false;
		reap(d);
		for (w = sv.list; w; w = w->next)
			if (w->pid > 0 && !w->reaped)
				any = true;
		if (any)
			usleep(10000);
	} while (any && axond_now_ns() < deadline);
	for (w = sv.list; w; w = w->next)
		signal_worker(w, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0)
		;
}

/* A connection said hello: whatever it asks for, a worker answers it. */
static void hello_to_worker(struct axond *d, uint64_t tag)
{
	struct axon_hello h;
	struct axon_welcome w;
	int fd = server_hello_read(d, tag, &h, &w, NULL);

	if (fd >= 0)
		supervisor_route(d, fd, &h, &w);	/* owns fd */
}

int supervisor_run(struct axond *d, char **argv)
{
	struct epoll_event evs[64];
	sigset_t mask;
	unsigned int i;
	int n;

	sv.argv = argv;
	sv.start_ns = axond_now_ns();
	sv.target = d->cfg.context_pool == ~0U ? 2 : d->cfg.context_pool;
	sv.target_set = d->cfg.context_pool != ~0U;
	/* Workers' ends are reported by SIGCHLD too: add it to the
	 * signalfd setup_fds made. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	if (signalfd(d->signal_fd, &mask, SFD_CLOEXEC | SFD_NONBLOCK) < 0) {
		log_err("supervisor: signalfd: %s", strerror(errno));
		return 1;
	}
	top_up(d);
	log_info("axond ready: process isolation, %u worker(s) kept ready (%s backend)",
		 sv.target, d->cfg.backend);
	/* Each worker would keep its own (sockcg.c): said, not hidden. */
	if (!d->cfg.kmod_only)
		log_info("supervisor: socket clients are held to --max-client-mem and "
			 "--max-user-mem only: per-cgroup limits need the kernel module "
			 "under process isolation (not yet in axond)");
	while (!d->stop) {
		int timeout = server_expire(d);

		/* Waiting clients and backed-off starts need a clock;
		 * replacements held back while clients come, a short one. */
		if ((sv.nwait || sv.next_spawn_ns) && (timeout < 0 || timeout > 1000))
			timeout = 1000;
		if ((sv.nstarting + sv.nready < sv.target || sv.nending) &&
		    (timeout < 0 || timeout > (int)(QUIET_NS / 1000000)))
			timeout = (int)(QUIET_NS / 1000000);
		if (sv.nquitting && (timeout < 0 || timeout > 1000))
			timeout = 1000;
		n = epoll_wait(d->epoll_fd, evs, 64, timeout);
		for (i = 0; i < (unsigned int)(n > 0 ? n : 0); i++) {
			uint64_t tag = evs[i].data.u64;

			if (tag == EV_LISTEN) {
				server_accept(d);
			} else if (tag == EV_KMOD) {
				supervisor_kmod_events(d);
			} else if (tag == EV_SIGNAL) {
				struct signalfd_siginfo si;

				while (read(d->signal_fd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo == SIGCHLD) {
						reap(d);
					} else if (si.ssi_signo == SIGHUP) {
						/* A new driver or configuration:
						 * ready workers make way for
						 * fresh ones; busy ones finish. */
						struct wproc *w;

						log_info("SIGHUP: replacing the ready workers");
						for (w = sv.list; w; w = w->next) {
							if (w->state != W_READY)
								continue;
							w->state = W_RETIRING;
							sv.nready--;
							signal_worker(w, SIGTERM);
						}
						top_up(d);
					} else {
						log_info("signal %u: shutting down", si.ssi_signo);
						d->stop = true;
					}
				}
			} else if (tag & EV_PENDING) {
				hello_to_worker(d, tag);
			} else if (tag <= EV_CTL) {
				/* Not the supervisor's (the executor's eventfd
				 * setup_fds made): nothing to do. */
				uint64_t v;

				if (tag == EV_WORKER)
					(void)!read(d->worker_fd, &v, sizeof(v));
			} else {
				ctl_event(d, (struct wproc *)evs[i].data.ptr);
			}
		}
		reap(d);
		sweep();
		if (sv.nwait || sv.next_spawn_ns)
			serve_waiting(d);
		else if (sv.nstarting + sv.nready < sv.target)
			top_up(d);
		end_idle();
	}
	for (i = 0; i < sv.nwait; i++)
		refuse_entry(d, &sv.wait[i], -ESHUTDOWN, "axond is shutting down");
	sv.nwait = 0;
	server_close(d);
	stop_workers(d);
	/* Its clients' workers are gone: the kernel ends what is left. */
	kmod_detach(d);
	while (sv.list) {
		struct wproc *w = sv.list;

		sv.list = w->next;
		if (w->ctl >= 0)
			close(w->ctl);
		free(w);
	}
	log_info("axond stopped");
	return 0;
}
