// SPDX-License-Identifier: GPL-2.0
/*
 * Clients: one per open of /dev/axon. Identity is captured at open from the
 * opener and never taken from the client afterwards. SETUP allocates the
 * region in the caller's context and waits for the daemon's ACCEPT; ENTER is
 * the doorbell and the client's sleep.
 *
 * States (struct axon_client.state, under axon_dev.lock):
 *
 *   NEW --SETUP--> PENDING --ACCEPT--> ACTIVE <--ACCEPT-- ORPHAN
 *                     |                  |  \--daemon detaches--^
 *                     +--DISCONNECT / daemon gone (no wait)--> DEAD
 *   any --release--> GONE;  NEW --ATTACH--> daemon (AXON_CS_DAEMON)
 */
#include <linux/capability.h>
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/hrtimer.h>
#include <linux/pid.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "axon_drv.h"
#include "charge.h"
#include "client.h"
#include "daemon.h"
#include "netlink.h"
#include "region.h"
#include "user.h"

static const char *const axon_kstate_names[] = {
	[AXON_KSTATE_NEW]	= "new",
	[AXON_KSTATE_PENDING]	= "pending",
	[AXON_KSTATE_ACTIVE]	= "active",
	[AXON_KSTATE_ORPHAN]	= "orphan",
	[AXON_KSTATE_DEAD]	= "dead",
	[AXON_KSTATE_GONE]	= "gone",
};

const char *axon_kstate_name(int state)
{
	if (state < 0 || state >= ARRAY_SIZE(axon_kstate_names))
		return "daemon";
	return axon_kstate_names[state];
}

/* The state userspace sees; the daemon's own file reports GONE. */
int axon_client_kstate(struct axon_client *c)
{
	int state = axon_client_state(c);

	return state < AXON_KSTATE_LAST ? state : AXON_KSTATE_GONE;
}

/*
 * The opener's cgroup on the default hierarchy, with a reference: the loop
 * of cgroup_sk_alloc(). tryget only fails while the task's css_set is being
 * switched and the old cgroup's last reference is going away.
 */
static struct cgroup *axon_current_cgroup(void)
{
	struct cgroup *cgrp;

	rcu_read_lock();
	for (;;) {
		cgrp = task_dfl_cgroup(current);
		if (likely(cgroup_tryget(cgrp)))
			break;
		cpu_relax();
	}
	rcu_read_unlock();
	return cgrp;
}

/* Everything the client holds but its region and the struct itself. */
static void axon_client_free_identity(struct axon_client *c)
{
	axon_dmem_acct_release(&c->dmem);
	if (c->user)
		axon_user_put(c->user);
	if (c->mm)
		mmdrop(c->mm);
	cgroup_put(c->cgrp);
	put_cred(c->cred);
	put_pid(c->pid);
}

static void axon_client_end(struct axon_client *c);

/*
 * One per mm with clients: the mmu notifier on it and those clients. It is
 * shared through mmu_notifier_get(), so registering (mm_take_all_locks())
 * happens once per process, not at every open.
 */
struct axon_mm {
	struct mmu_notifier mn;
	spinlock_t lock;		/* @clients; a leaf lock */
	struct list_head clients;	/* axon_client.mm_node */
};

static struct mmu_notifier *axon_mm_alloc(struct mm_struct *mm)
{
	struct axon_mm *am = kzalloc(sizeof(*am), GFP_KERNEL_ACCOUNT);

	if (!am)
		return ERR_PTR(-ENOMEM);
	spin_lock_init(&am->lock);
	INIT_LIST_HEAD(&am->clients);
	return &am->mn;
}

static void axon_mm_free(struct mmu_notifier *mn)
{
	kfree(container_of(mn, struct axon_mm, mn));
}

/*
 * The opener's mm is being torn down (its last thread exited, or it
 * called execve()): its clients end now, even if a fork child or another
 * process still holds a copy of an fd. Runs in process context before the
 * mm's files are closed, under the notifier's SRCU (sleeping is allowed;
 * @am lives until its grace period after the last mmu_notifier_put()).
 */
static void axon_mm_release(struct mmu_notifier *mn, struct mm_struct *mm)
{
	struct axon_mm *am = container_of(mn, struct axon_mm, mn);
	struct axon_client *c;
	bool live;

	for (;;) {
		spin_lock(&am->lock);
		c = list_first_entry_or_null(&am->clients, struct axon_client,
					     mm_node);
		live = false;
		if (c) {
			list_del_init(&c->mm_node);
			/* a client already dying is ended by its file */
			live = kref_get_unless_zero(&c->ref);
		}
		spin_unlock(&am->lock);
		if (!c)
			break;
		if (!live)
			continue;
		if (axon_client_state(c) != AXON_CS_DAEMON)
			axon_client_end(c);
		axon_client_put(c);
	}
}

static const struct mmu_notifier_ops axon_mm_ops = {
	.alloc_notifier	= axon_mm_alloc,
	.release	= axon_mm_release,
	.free_notifier	= axon_mm_free,
};

/* Ends the clients whose opener's exit was seen (axon_client_exit_wake()). */
static struct workqueue_struct *axon_client_wq;

#ifndef AXON_HAVE_THREAD_GROUP_EXITED
/* 6.1's own, gone since; pidfs's pidfd_poll() still follows its rule. */
static bool thread_group_exited(struct pid *pid)
{
	struct task_struct *task;
	bool exited;

	rcu_read_lock();
	task = pid_task(pid, PIDTYPE_PID);
	exited = !task ||
		 (READ_ONCE(task->exit_state) && thread_group_empty(task));
	rcu_read_unlock();
	return exited;
}
#endif

/*
 * The opener's thread group may have exited: wake-ups of the pidfd queue
 * come from do_notify_parent(), for the whole group's exit and also for a
 * traced leader's own; thread_group_exited() tells them apart.
 */
static void axon_client_exit_work(struct work_struct *work)
{
	struct axon_client *c = container_of(work, struct axon_client,
					     exit_work);

	clear_bit(AXON_CAF_EXIT_QUEUED, &c->atomic_flags);
	/* pairs with the waker's test_and_set_bit(), a full barrier */
	smp_mb__after_atomic();
	if (thread_group_exited(c->pid) &&
	    axon_client_state(c) != AXON_CS_DAEMON)
		axon_client_end(c);
	axon_client_put(c);
}

/*
 * Called under the pidfd wait queue's lock, from the exit path (atomic,
 * tasklist_lock held): queue the end, with a reference, once at a time.
 * axon_client_free() takes the entry off the queue before the struct goes.
 */
static int axon_client_exit_wake(struct wait_queue_entry *wait,
				 unsigned int mode, int sync, void *key)
{
	struct axon_client *c = container_of(wait, struct axon_client,
					     exit_wait);

	if (test_and_set_bit(AXON_CAF_EXIT_QUEUED, &c->atomic_flags))
		return 0;
	if (kref_get_unless_zero(&c->ref))
		queue_work(axon_client_wq, &c->exit_work);
	else
		clear_bit(AXON_CAF_EXIT_QUEUED, &c->atomic_flags);
	return 0;
}

/* Only the opener's own process: its thread group and its mm. */
bool axon_client_is_opener(struct axon_client *c)
{
	return current->mm == c->mm && task_tgid(current) == c->pid;
}

/* Watches the opener's mm for its release (axon_mm_release()). */
static int axon_client_watch(struct axon_client *c)
{
	struct mmu_notifier *mn = mmu_notifier_get(&axon_mm_ops, c->mm);

	if (IS_ERR(mn)) {
		/* mm_take_all_locks() gives up on a signal: open again */
		return PTR_ERR(mn) == -EINTR ? -ERESTARTNOINTR : PTR_ERR(mn);
	}
	c->amm = container_of(mn, struct axon_mm, mn);
	spin_lock(&c->amm->lock);
	list_add_tail(&c->mm_node, &c->amm->clients);
	spin_unlock(&c->amm->lock);
	return 0;
}

static void axon_client_unwatch(struct axon_client *c)
{
	if (!c->amm)
		return;
	spin_lock(&c->amm->lock);
	list_del_init(&c->mm_node);
	spin_unlock(&c->amm->lock);
	mmu_notifier_put(&c->amm->mn);
}

/**
 * axon_client_create() - a client for the current task
 *
 * Counts the client against its user (max_user_clients), captures the
 * identity (tgid, credentials, cgroup, mm, comm, start time), registers
 * for the mm's release (the opener's exit ends the client) and publishes
 * the client in the id xarray.
 *
 * Return: the client with one reference (the file's) or an ERR_PTR
 * (-EMFILE: the user's limit).
 */
struct axon_client *axon_client_create(void)
{
	struct axon_client *c;
	int ret;

	c = kzalloc(sizeof(*c), GFP_KERNEL_ACCOUNT);
	if (!c)
		return ERR_PTR(-ENOMEM);
	c->limited = !ns_capable_noaudit(&init_user_ns, CAP_SYS_RESOURCE);
	c->user = axon_user_get(current_uid(), c->limited);
	if (IS_ERR(c->user)) {
		ret = PTR_ERR(c->user);
		kfree(c);
		return ERR_PTR(ret);
	}
	kref_init(&c->ref);
	mutex_init(&c->setup_mutex);
	INIT_LIST_HEAD(&c->ev_node);
	axon_charge_acct_init(&c->charge);
	axon_dmem_acct_init(&c->dmem);
	init_waitqueue_head(&c->wq);
	c->state = AXON_KSTATE_NEW;
	c->pid = get_task_pid(current, PIDTYPE_TGID);
	c->cred = get_current_cred();
	c->cgrp = axon_current_cgroup();
	c->mm = current->mm;
	if (c->mm)
		mmgrab(c->mm);
	get_task_comm(c->comm, current);
	c->start_boottime = current->group_leader->start_boottime;
	atomic64_set(&c->enters, 0);

	INIT_LIST_HEAD(&c->mm_node);
	if (c->mm) {
		ret = axon_client_watch(c);
		if (ret)
			goto err_identity;
	}
	INIT_WORK(&c->exit_work, axon_client_exit_work);
	init_waitqueue_func_entry(&c->exit_wait, axon_client_exit_wake);
	add_wait_queue(&c->pid->wait_pidfd, &c->exit_wait);

	c->id = atomic64_inc_return(&axon_dev.next_id);
	ret = xa_insert(&axon_dev.clients, c->id, c, GFP_KERNEL_ACCOUNT);
	if (ret)
		goto err_exit_wait;
	atomic64_inc(&axon_dev.stats.opens);
	atomic64_inc(&axon_dev.stats.clients);
	axon_dbg(KREF, "client %llu created (pid %d)\n", c->id,
		 pid_nr(c->pid));
	return c;

err_exit_wait:
	/* the exit cannot have come: the opener is the current task */
	remove_wait_queue(&c->pid->wait_pidfd, &c->exit_wait);
	axon_client_unwatch(c);
err_identity:
	axon_client_free_identity(c);
	kfree(c);
	return ERR_PTR(ret);
}

static void axon_client_free(struct kref *ref)
{
	struct axon_client *c = container_of(ref, struct axon_client, ref);

	WARN_ON(!list_empty(&c->ev_node));
	/* a wake-up after this cannot see the struct; none holds a ref now */
	remove_wait_queue(&c->pid->wait_pidfd, &c->exit_wait);
	xa_erase(&axon_dev.clients, c->id);
	axon_region_free(c->region);
	axon_client_free_identity(c);
	atomic64_dec(&axon_dev.stats.clients);
	axon_dbg(KREF, "client %llu destroyed\n", c->id);
	axon_client_unwatch(c);
	/* Lookups under RCU may still be looking at it. */
	kfree_rcu(c, rcu);
}

void axon_client_get(struct axon_client *c)
{
	kref_get(&c->ref);
}

/* Process context only, with no axon lock held: the last put frees. */
void axon_client_put(struct axon_client *c)
{
	might_sleep();
	kref_put(&c->ref, axon_client_free);
}

/**
 * axon_client_lookup() - find a client by id
 * @id:	the client id
 *
 * Return: the client with a reference, or NULL if there is none or it is
 * dying.
 */
struct axon_client *axon_client_lookup(u64 id)
{
	struct axon_client *c;

	rcu_read_lock();
	c = xa_load(&axon_dev.clients, id);
	if (c && !kref_get_unless_zero(&c->ref))
		c = NULL;
	rcu_read_unlock();
	return c;
}

/**
 * axon_client_next() - iterate over clients in id order
 * @id:	in: the last id seen (0 to start); out: the returned client's id
 *
 * Return: the next live client with a reference, or NULL at the end.
 */
struct axon_client *axon_client_next(unsigned long *id)
{
	struct axon_client *c;
	unsigned long idx = *id + 1;

	rcu_read_lock();
	for (;;) {
		c = xa_find(&axon_dev.clients, &idx, ULONG_MAX, XA_PRESENT);
		if (!c || kref_get_unless_zero(&c->ref))
			break;
		idx++;
	}
	rcu_read_unlock();
	if (c)
		*id = idx;
	return c;
}

/**
 * axon_client_retire() - a dead or gone client gives its region back
 * @c:	the client, DEAD or GONE
 *
 * The region's pages but the headers are released; its bytes stop
 * counting against the user once no mapping holds its pages any more
 * (axon_region_retire()). Idempotent; may sleep.
 */
void axon_client_retire(struct axon_client *c)
{
	/* region and params are visible: the state is past NEW */
	if (axon_client_state(c) == AXON_KSTATE_NEW || !c->region)
		return;
	axon_region_retire(c->region);
}

/*
 * The end of a client, once: marks it GONE, queues the GONE event if the
 * attached daemon knows it, gives back every charge and its region. Never
 * waits for the daemon.
 */
static void axon_client_end(struct axon_client *c)
{
	int was;

	spin_lock(&axon_dev.lock);
	if (c->flags & AXON_CF_ENDED) {
		spin_unlock(&axon_dev.lock);
		return;
	}
	c->flags |= AXON_CF_ENDED;
	was = c->state;
	axon_client_set_state(c, AXON_KSTATE_GONE);
	axon_daemon_queue_locked(c, AXON_EV_GONE);
	spin_unlock(&axon_dev.lock);

	axon_charge_client_close(c, true);
	if (was != AXON_KSTATE_NEW) {
		axon_client_retire(c);
		axon_nl_client_event(AXON_NLEV_CLIENT_EXIT, c);
	}
	axon_dbg(FILE, "client %llu ended (was %s)\n", c->id,
		 axon_kstate_name(was));
}

/**
 * axon_client_release() - the client's file is being released
 * @c:	the client; the file's reference is dropped here
 *
 * Ends the client unless its opener's exit already did.
 */
void axon_client_release(struct axon_client *c)
{
	axon_client_end(c);
	axon_client_put(c);
}

/* The error for a client that is not ACTIVE, 0 if it is. */
static int axon_client_live_error(struct axon_client *c, int state)
{
	switch (state) {
	case AXON_KSTATE_ACTIVE:
		return 0;
	case AXON_KSTATE_ORPHAN:
		return -ECONNRESET;
	case AXON_KSTATE_DEAD:
		return READ_ONCE(c->error);
	default:
		return -EINVAL;
	}
}

static long axon_client_setup_wait(struct axon_client *c,
				   struct axon_params __user *up)
{
	struct axon_params p;
	int state, ret;

	ret = wait_event_interruptible(c->wq, axon_client_state(c) !=
				       AXON_KSTATE_PENDING);
	if (ret)
		return ret;	/* -ERESTARTSYS: a restarted SETUP waits again */

	spin_lock(&axon_dev.lock);
	state = c->state;
	p = c->params;
	ret = c->error;
	spin_unlock(&axon_dev.lock);

	if (state != AXON_KSTATE_ACTIVE && state != AXON_KSTATE_ORPHAN)
		return state == AXON_KSTATE_DEAD ? ret : -EINVAL;
	if (copy_to_user(up, &p, sizeof(p)))
		return -EFAULT;
	return 0;
}

/*
 * SETUP's input is the three sizes; every other field is reserved or
 * written by the kernel, and must be zero (a stale geometry is refused,
 * not silently overwritten).
 */
static bool axon_params_only_sizes(const struct axon_params *p)
{
	const struct axon_params in = {
		.sq_entries = p->sq_entries,
		.cq_entries = p->cq_entries,
		.data_size = p->data_size,
	};

	BUILD_BUG_ON(sizeof(in) != 168);	/* no padding to compare */
	return !memcmp(&in, p, sizeof(in));
}

/**
 * axon_client_setup() - AXON_IOC_SETUP
 * @c:	the client
 * @up:	struct axon_params: sizes in, geometry and the daemon's answer out
 *
 * Counts the region against the user, allocates it (memcg-charged to the
 * caller), publishes the client
 * to the daemon (AXON_EV_OPEN) and waits, interruptibly, for ACCEPT or
 * DISCONNECT. Interrupted, it can be called again and waits for the same
 * request.
 *
 * Return: 0; -ECONNREFUSED (no daemon, wait_for_daemon off); -ECONNRESET
 * (the daemon went away meanwhile); the daemon's error; -EINVAL (bad
 * sizes, a non-zero output or reserved field), -EDQUOT (the user's
 * max_user_region_bytes), -ENOMEM, -EBUSY (already set up), -EPERM (not
 * the opener's process), -EOPNOTSUPP (no cgroup v2 in use).
 */
long axon_client_setup(struct axon_client *c, struct axon_params __user *up)
{
	struct axon_params req, geo;
	struct axon_region *r;
	long ret;

	if (copy_from_user(&req, up, sizeof(req)))
		return -EFAULT;
	if (req.flags || req.resv0 || memchr_inv(req.resv, 0, sizeof(req.resv)))
		return -EINVAL;
	if (!axon_client_is_opener(c))
		return -EPERM;

	ret = mutex_lock_interruptible(&c->setup_mutex);
	if (ret)
		return ret;
	switch (axon_client_state(c)) {
	case AXON_KSTATE_NEW:
		break;
	case AXON_KSTATE_PENDING:
		mutex_unlock(&c->setup_mutex);
		return axon_client_setup_wait(c, up);
	case AXON_KSTATE_ACTIVE:
	case AXON_KSTATE_ORPHAN:
		ret = -EBUSY;
		goto out_unlock;
	case AXON_KSTATE_DEAD:
		ret = READ_ONCE(c->error);
		goto out_unlock;
	default:
		ret = -EINVAL;
		goto out_unlock;
	}

	/* a set-up client's own params back get EBUSY above, as always */
	ret = -EINVAL;
	if (!axon_params_only_sizes(&req))
		goto out_unlock;
	ret = axon_region_geometry(&req, &geo);
	if (ret)
		goto out_unlock;
	if (!axon_wait_for_daemon && !READ_ONCE(axon_dev.attached)) {
		ret = -ECONNREFUSED;
		goto out_unlock;
	}
	ret = axon_charge_cgroup_ok();
	if (ret)
		goto out_unlock;
	ret = axon_user_charge_region(c->user, geo.region_size, c->limited);
	if (ret)
		goto out_unlock;
	r = axon_region_alloc(&geo, c->user);
	if (IS_ERR(r)) {
		ret = PTR_ERR(r);
		goto out_uncharge;
	}
	geo.client_id = c->id;
	axon_dmem_setup(&c->dmem);

	spin_lock(&axon_dev.lock);
	/* Another thread may have made this file the daemon's meanwhile. */
	if (c->state != AXON_KSTATE_NEW ||
	    (!axon_dev.attached && !axon_wait_for_daemon)) {
		ret = c->state != AXON_KSTATE_NEW ? -EINVAL : -ECONNREFUSED;
		spin_unlock(&axon_dev.lock);
		axon_region_free(r);	/* gives the user's bytes back */
		axon_dmem_unsetup(&c->dmem);
		goto out_unlock;
	}
	c->region = r;
	c->params = geo;
	axon_client_set_state(c, AXON_KSTATE_PENDING);
	if (axon_dev.attached) {
		c->flags |= AXON_CF_ANNOUNCED;
		axon_daemon_queue_locked(c, AXON_EV_OPEN);
	}
	spin_unlock(&axon_dev.lock);
	mutex_unlock(&c->setup_mutex);

	axon_dbg(FILE, "client %llu setup: sq %u cq %u data %llu\n", c->id,
		 geo.sq_entries, geo.cq_entries, geo.data_size);
	axon_nl_client_event(AXON_NLEV_CLIENT_OPEN, c);
	return axon_client_setup_wait(c, up);

out_uncharge:
	axon_user_uncharge_region(c->user, geo.region_size);
out_unlock:
	mutex_unlock(&c->setup_mutex);
	return ret;
}

/* CQEs the client has not consumed yet, as the shared indices say. */
static u32 axon_cq_avail(struct axon_client *c)
{
	struct axon_region *r = c->region;
	/* the daemon release-stores cq_tail after writing the CQEs */
	u32 tail = smp_load_acquire(&r->dpage->cq_tail);
	u32 head = READ_ONCE(r->cpage->cq_head);

	return min(tail - head, c->params.cq_entries);
}

/**
 * axon_client_enter() - AXON_IOC_ENTER: ring the doorbell, wait for CQEs
 * @c:	the client
 * @ue:	struct axon_enter
 *
 * Sleeps (interruptibly, until the absolute CLOCK_MONOTONIC deadline) until
 * min_complete CQEs are available, the daemon goes away or disconnects the
 * client. The daemon wakes it with AXON_IOC_NOTIFY.
 *
 * Return: the number of CQEs available, or a negative errno.
 */
long axon_client_enter(struct axon_client *c, struct axon_enter __user *ue)
{
	struct axon_enter e;
	bool timed_out = false;
	ktime_t expires;
	DEFINE_WAIT(wait);
	int state;
	long ret;

	if (copy_from_user(&e, ue, sizeof(e)))
		return -EFAULT;
	if ((e.flags & ~AXON_ENTER_F_ALL) || e.resv)
		return -EINVAL;
	if (!axon_client_is_opener(c))
		return -EPERM;
	state = axon_client_state(c);
	ret = axon_client_live_error(c, state);
	if (ret)
		return ret;
	if (e.to_submit > c->params.sq_entries ||
	    e.min_complete > c->params.cq_entries)
		return -EINVAL;

	atomic64_inc(&c->enters);
	atomic64_inc(&axon_dev.stats.enters);
	if (e.to_submit)
		axon_daemon_doorbell(c);
	if (!(e.flags & AXON_ENTER_GETEVENTS))
		return axon_cq_avail(c);

	expires = ns_to_ktime(e.timeout_ns);
	for (;;) {
		prepare_to_wait(&c->wq, &wait, TASK_INTERRUPTIBLE);
		state = axon_client_state(c);
		ret = axon_client_live_error(c, state);
		if (ret)
			break;
		ret = axon_cq_avail(c);
		if (ret >= e.min_complete)
			break;
		if (signal_pending(current)) {
			ret = -EINTR;
			break;
		}
		if (timed_out) {
			ret = -ETIME;
			break;
		}
		if (e.timeout_ns)
			timed_out = !schedule_hrtimeout(&expires,
							HRTIMER_MODE_ABS);
		else
			schedule();
	}
	finish_wait(&c->wq, &wait);
	return ret;
}

/**
 * axon_client_poll() - poll() on a client fd
 * @c:		the client
 * @file:	its file
 * @pt:		poll table
 *
 * EPOLLIN: CQEs available; EPOLLOUT: the SQ has room; EPOLLHUP|EPOLLERR:
 * the daemon went away or disconnected the client (CQEs already posted can
 * still be read). Nothing while SETUP is pending.
 *
 * Return: the poll mask.
 */
__poll_t axon_client_poll(struct axon_client *c, struct file *file,
			  struct poll_table_struct *pt)
{
	struct axon_region *r;
	__poll_t mask = 0;
	int state;

	poll_wait(file, &c->wq, pt);
	/*
	 * Order the wait-queue insertion before reading the indices; pairs
	 * with the barrier implied by the waker's wake_up_all().
	 */
	smp_mb();
	state = axon_client_state(c);
	if (state == AXON_KSTATE_NEW || state == AXON_KSTATE_PENDING)
		return 0;
	if (state != AXON_KSTATE_ACTIVE)
		mask |= EPOLLHUP | EPOLLERR;
	r = c->region;
	if (!r)
		return mask;
	if (axon_cq_avail(c))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (state == AXON_KSTATE_ACTIVE &&
	    READ_ONCE(r->cpage->sq_tail) - READ_ONCE(r->dpage->sq_head) <
	    c->params.sq_entries)
		mask |= EPOLLOUT | EPOLLWRNORM;
	return mask;
}

/**
 * axon_client_mmap() - mmap() on a client fd: the client's view
 * @c:		the client
 * @vma:	the new mapping
 *
 * Return: 0 or -EINVAL (not set up, bad offset or size, MAP_PRIVATE),
 * -EPERM (write to a read-only part, another process).
 */
int axon_client_mmap(struct axon_client *c, struct vm_area_struct *vma)
{
	int state = axon_client_state(c);

	if (state != AXON_KSTATE_ACTIVE && state != AXON_KSTATE_ORPHAN)
		return -EINVAL;
	if (!axon_client_is_opener(c))
		return -EPERM;
	if (vma->vm_pgoff >= (AXON_OFF_INFO >> PAGE_SHIFT))
		return axon_info_mmap(vma, false);
	return axon_region_mmap(c->region, vma, false);
}

int __init axon_client_init(void)
{
	/*
	 * The end of a client needs no particular CPU. Unbound says so:
	 * newer kernels warn at a workqueue that names neither
	 * WQ_UNBOUND nor WQ_PERCPU (seen at insmod on 7.2).
	 */
	axon_client_wq = alloc_workqueue("axon_exit", WQ_UNBOUND, 0);
	return axon_client_wq ? 0 : -ENOMEM;
}

/* Every client is gone; a queued end may still hold the last reference. */
void axon_client_uninit(void)
{
	destroy_workqueue(axon_client_wq);
}
