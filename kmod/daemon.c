// SPDX-License-Identifier: GPL-2.0
/*
 * The daemon side of /dev/axon. One file at a time is attached; it reads
 * struct axon_event records from a queue that holds at most one record per
 * client (bits coalesce), so posting an event never allocates and never
 * fails. Each queued client holds a reference, so a GONE record keeps the
 * client (and its region) until the daemon has read it.
 *
 * Detach (release of the daemon's file) turns ACTIVE clients into ORPHANs
 * (AXON_SQ_F_DAEMON_GONE in their daemon page, sleepers woken with
 * -ECONNRESET), fails pending SETUPs unless wait_for_daemon is set, drops
 * the queue and gives back every charge: device memory does not outlive
 * the daemon that allocated it. The next daemon is told about the clients
 * that remain with AXON_EV_EXISTING records.
 */
#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/cgroup.h>

#include "axon_drv.h"
#include "charge.h"
#include "client.h"
#include "daemon.h"
#include "delegate.h"
#include "netlink.h"
#include "region.h"

#define AXON_READ_BATCH		8

static bool axon_may_attach(void)
{
	if (capable(CAP_SYS_ADMIN))
		return true;
	return axon_daemon_uid >= 0 &&
	       uid_eq(current_euid(), make_kuid(&init_user_ns, axon_daemon_uid));
}

/**
 * axon_daemon_queue_locked() - post events for a client
 * @c:		the client
 * @events:	AXON_EV_* bits
 *
 * A delegated client's DOORBELL goes to its delegate instead, its GONE to
 * both. Nothing reaches the queue unless a daemon is attached and knows the
 * client. The caller holds a reference on @c (its file, or the lock
 * guarantees a state that implies one).
 */
void axon_daemon_queue_locked(struct axon_client *c, u32 events)
{
	lockdep_assert_held(&axon_dev.lock);
	if (c->delegate) {
		axon_delegate_post_locked(c->delegate,
					  events & (AXON_EV_DOORBELL | AXON_EV_GONE));
		events &= ~AXON_EV_DOORBELL;
	}
	if (!events || !axon_dev.attached || !(c->flags & AXON_CF_ANNOUNCED))
		return;
	c->ev_bits |= events;
	if (list_empty(&c->ev_node)) {
		kref_get(&c->ref);
		list_add_tail(&c->ev_node, &axon_dev.ev_list);
	}
	wake_up_interruptible(&axon_dev.ev_wq);
}

/**
 * axon_daemon_doorbell() - a client rang (AXON_IOC_ENTER with to_submit)
 * @c:	an ACTIVE client
 */
void axon_daemon_doorbell(struct axon_client *c)
{
	atomic64_inc(&axon_dev.stats.doorbells);
	/*
	 * The SQ tail was published before this call. If a DOORBELL record is
	 * still queued the daemon has not read it yet and will look at the SQ
	 * after reading it; the barrier pairs with the one in read(). A
	 * delegated client never has DOORBELL in @ev_bits: delegation moves a
	 * queued one to the delegate (axon_delegate_link()), which a doorbell
	 * racing with it has then rung.
	 */
	smp_mb();
	if (READ_ONCE(c->ev_bits) & AXON_EV_DOORBELL)
		return;
	spin_lock(&axon_dev.lock);
	if (c->state == AXON_KSTATE_ACTIVE)
		axon_daemon_queue_locked(c, AXON_EV_DOORBELL);
	spin_unlock(&axon_dev.lock);
}

/**
 * axon_daemon_attach() - AXON_IOC_ATTACH: make this file the daemon's
 * @file:	the caller's /dev/axon file (not set up)
 * @c:		its client object, which stops being a client
 * @flags:	must be 0
 *
 * Return: the number of clients announced with AXON_EV_EXISTING, or
 * -EPERM (no CAP_SYS_ADMIN and not daemon_uid), -EBUSY (a daemon is
 * attached), -EINVAL.
 */
long axon_daemon_attach(struct file *file, struct axon_client *c,
			unsigned long flags)
{
	struct axon_client *x;
	unsigned long id;
	long n = 0;

	if (flags)
		return -EINVAL;
	if (!axon_may_attach())
		return -EPERM;

	mutex_lock(&axon_dev.attach_mutex);
	spin_lock(&axon_dev.lock);
	if (axon_dev.attached) {
		n = -EBUSY;
		goto out_unlock;
	}
	if (c->state != AXON_KSTATE_NEW) {
		n = -EINVAL;
		goto out_unlock;
	}
	axon_client_set_state(c, AXON_CS_DAEMON);
	axon_dev.attached = true;
	axon_dev.gen++;
	axon_dev.daemon_file = file;
	axon_dev.daemon_pid = get_pid(task_tgid(current));
	xa_for_each(&axon_dev.clients, id, x) {
		if (x->state != AXON_KSTATE_PENDING &&
		    x->state != AXON_KSTATE_ORPHAN)
			continue;
		/* PENDING and ORPHAN clients hold their file's reference. */
		x->flags |= AXON_CF_ANNOUNCED;
		axon_daemon_queue_locked(x, AXON_EV_EXISTING);
		n++;
	}
	spin_unlock(&axon_dev.lock);
	xa_erase(&axon_dev.clients, c->id);
	atomic64_inc(&axon_dev.stats.attaches);
	mutex_unlock(&axon_dev.attach_mutex);

	axon_dbg(DAEMON, "daemon attached (pid %d), %ld clients exist\n",
		 task_tgid_nr(current), n);
	axon_nl_daemon_event(AXON_NLEV_DAEMON_ATTACH, task_tgid_nr(current));
	return n;

out_unlock:
	spin_unlock(&axon_dev.lock);
	mutex_unlock(&axon_dev.attach_mutex);
	return n;
}

/**
 * axon_daemon_detach() - the daemon's file is being released
 * @file:	the daemon's file
 * @c:		its (former) client object
 */
void axon_daemon_detach(struct file *file, struct axon_client *c)
{
	struct axon_client *x, *tmp;
	struct pid *pid;
	unsigned long id;
	LIST_HEAD(drop);

	mutex_lock(&axon_dev.attach_mutex);
	/* no delegate ioctl runs while its delegate is cut off */
	down_write(&axon_dev.delegate_sem);
	spin_lock(&axon_dev.lock);
	if (WARN_ON(axon_dev.daemon_file != file)) {
		spin_unlock(&axon_dev.lock);
		up_write(&axon_dev.delegate_sem);
		mutex_unlock(&axon_dev.attach_mutex);
		return;
	}
	axon_dev.attached = false;
	axon_dev.daemon_file = NULL;
	pid = axon_dev.daemon_pid;
	axon_dev.daemon_pid = NULL;
	list_splice_init(&axon_dev.ev_list, &drop);
	xa_for_each(&axon_dev.clients, id, x) {
		x->flags &= ~AXON_CF_ANNOUNCED;
		axon_delegate_cut_locked(x);
		switch (x->state) {
		case AXON_KSTATE_ACTIVE:
			axon_client_set_state(x, AXON_KSTATE_ORPHAN);
			x->region->dpage->sq_flags |= AXON_SQ_F_DAEMON_GONE;
			wake_up_all(&x->wq);
			break;
		case AXON_KSTATE_PENDING:
			if (axon_wait_for_daemon)
				break;
			x->error = -ECONNRESET;
			axon_client_set_state(x, AXON_KSTATE_DEAD);
			wake_up_all(&x->wq);
			break;
		}
	}
	axon_client_set_state(c, AXON_KSTATE_GONE);
	spin_unlock(&axon_dev.lock);
	up_write(&axon_dev.delegate_sem);

	/* Nothing is queued any more while detached: the list is ours. */
	list_for_each_entry_safe(x, tmp, &drop, ev_node) {
		spin_lock(&axon_dev.lock);
		list_del_init(&x->ev_node);
		x->ev_bits = 0;
		spin_unlock(&axon_dev.lock);
		axon_client_put(x);
	}

	id = 0;
	while ((x = axon_client_next(&id))) {
		axon_charge_client_close(x, false);
		/* pending SETUPs failed above give their region back */
		if (axon_client_state(x) == AXON_KSTATE_DEAD)
			axon_client_retire(x);
		axon_client_put(x);
	}
	mutex_unlock(&axon_dev.attach_mutex);

	axon_dbg(DAEMON, "daemon detached (pid %d)\n", pid_nr(pid));
	axon_nl_daemon_event(AXON_NLEV_DAEMON_DETACH, pid_nr(pid));
	put_pid(pid);
}

/**
 * axon_event_identity() - fill in a record's identity for the reader
 * @ev:	the record
 * @c:	its client (immutable fields only: no lock needed)
 */
void axon_event_identity(struct axon_event *ev, struct axon_client *c)
{
	struct user_namespace *ns = current_user_ns();

	ev->pid = pid_nr_ns(c->pid, task_active_pid_ns(current));
	ev->uid = from_kuid_munged(ns, c->cred->uid);
	ev->gid = from_kgid_munged(ns, c->cred->gid);
	ev->cgroup_id = cgroup_id(c->cgrp);
	ev->start_time_ns = c->start_boottime;
	BUILD_BUG_ON(sizeof(ev->comm) < TASK_COMM_LEN);
	memcpy(ev->comm, c->comm, TASK_COMM_LEN);
}

/* Puts records back at the head of the queue, in order, after a fault. */
static void axon_requeue(struct axon_client **cs, struct axon_event *evs,
			 unsigned int n)
{
	unsigned int i;

	spin_lock(&axon_dev.lock);
	for (i = n; i-- > 0;) {
		struct axon_client *c = cs[i];
		u32 events = evs[i].events;

		/* delegated meanwhile: its doorbells are the delegate's now */
		if (c->delegate) {
			axon_delegate_post_locked(c->delegate,
						  events & AXON_EV_DOORBELL);
			events &= ~AXON_EV_DOORBELL;
			if (!events)
				continue;
		}
		c->ev_bits |= events;
		if (list_empty(&c->ev_node)) {
			list_add(&c->ev_node, &axon_dev.ev_list);
			cs[i] = NULL;	/* the queue keeps our reference */
		}
	}
	spin_unlock(&axon_dev.lock);
}

/**
 * axon_daemon_read() - read(2) on the daemon's fd
 * @file:	the daemon's file
 * @buf:	room for one or more struct axon_event
 * @count:	bytes of room
 *
 * Blocks until a record is queued unless O_NONBLOCK. A record is removed
 * only once it has been copied out.
 *
 * Return: bytes read (a multiple of the record size), -EAGAIN, -EINVAL
 * (not the daemon, @count too small), -EFAULT, -ERESTARTSYS.
 */
ssize_t axon_daemon_read(struct file *file, char __user *buf, size_t count)
{
	struct axon_client *cs[AXON_READ_BATCH];
	struct axon_event evs[AXON_READ_BATCH];
	unsigned int n, got, i;
	int ret;

	n = min_t(size_t, count / sizeof(struct axon_event), AXON_READ_BATCH);
	if (!n)
		return -EINVAL;
	for (;;) {
		got = 0;
		spin_lock(&axon_dev.lock);
		while (got < n && !list_empty(&axon_dev.ev_list)) {
			struct axon_client *c;

			c = list_first_entry(&axon_dev.ev_list,
					     struct axon_client, ev_node);
			list_del_init(&c->ev_node);
			memset(&evs[got], 0, sizeof(evs[got]));
			evs[got].client_id = c->id;
			evs[got].events = c->ev_bits;
			evs[got].state = c->state < AXON_KSTATE_LAST ?
					 c->state : AXON_KSTATE_GONE;
			c->ev_bits = 0;
			cs[got++] = c;
		}
		spin_unlock(&axon_dev.lock);
		if (got)
			break;
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(axon_dev.ev_wq,
					       !list_empty(&axon_dev.ev_list));
		if (ret)
			return ret;
	}
	/* Pairs with the barrier in axon_daemon_doorbell(). */
	smp_mb();
	for (i = 0; i < got; i++)
		axon_event_identity(&evs[i], cs[i]);
	if (copy_to_user(buf, evs, got * sizeof(evs[0]))) {
		axon_requeue(cs, evs, got);
		ret = -EFAULT;
	} else {
		atomic64_add(got, &axon_dev.stats.events);
		ret = got * sizeof(evs[0]);
	}
	for (i = 0; i < got; i++)
		if (cs[i])
			axon_client_put(cs[i]);
	return ret;
}

__poll_t axon_daemon_poll(struct file *file, struct poll_table_struct *pt)
{
	poll_wait(file, &axon_dev.ev_wq, pt);
	/* wait-queue insertion before the list check; pairs with wake_up */
	smp_mb();
	return list_empty(&axon_dev.ev_list) ? 0 : EPOLLIN | EPOLLRDNORM;
}

/* The daemon maps only the info page through its own fd, writable. */
int axon_daemon_mmap(struct vm_area_struct *vma)
{
	return axon_info_mmap(vma, true);
}

static int axon_client_fd_release(struct inode *inode, struct file *file)
{
	axon_client_put(file->private_data);
	return 0;
}

static int axon_client_fd_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct axon_client *c = file->private_data;

	return axon_region_mmap(c->region, vma, true);
}

/* No ioctl: a plain client fd only maps (-ENOTTY from the VFS). */
static const struct file_operations axon_client_fd_fops = {
	.owner		= THIS_MODULE,
	.release	= axon_client_fd_release,
	.mmap		= axon_client_fd_mmap,
	.llseek		= noop_llseek,
};

/**
 * axon_daemon_client_fd() - AXON_IOC_CLIENT_FD: a descriptor to map a
 * client's region with the daemon's permissions, and with
 * AXON_CLIENT_FD_DELEGATE to act for that client (delegate.c)
 * @uf:	struct axon_client_fd
 *
 * Return: 0 (fd filled in), -ENOENT (no such client, gone, or not set up;
 * a delegate also for an ORPHAN), -EBUSY (the client has a delegate
 * open), -EINVAL, -EMFILE.
 */
long axon_daemon_client_fd(struct axon_client_fd __user *uf)
{
	struct axon_client_fd a;
	struct axon_params p;
	struct axon_client *c;
	struct file *f;
	bool delegate;
	int fd, state;
	long ret;

	if (copy_from_user(&a, uf, sizeof(a)))
		return -EFAULT;
	if ((a.flags & ~AXON_CLIENT_FD_F_ALL) || a.fd || a.resv)
		return -EINVAL;
	delegate = a.flags & AXON_CLIENT_FD_DELEGATE;
	c = axon_client_lookup(a.client_id);
	if (!c)
		return -ENOENT;
	/* checked again under the lock when a delegate is linked */
	state = axon_client_state(c);
	if (state != AXON_KSTATE_PENDING && state != AXON_KSTATE_ACTIVE &&
	    (state != AXON_KSTATE_ORPHAN || delegate)) {
		ret = -ENOENT;
		goto err_put;
	}
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0) {
		ret = fd;
		goto err_put;
	}
	/* The new file owns our reference from here on. */
	if (delegate)
		f = axon_delegate_file(c);
	else
		f = anon_inode_getfile("[axon-client]", &axon_client_fd_fops,
				       c, O_RDWR | O_CLOEXEC);
	if (IS_ERR(f)) {
		ret = PTR_ERR(f);
		goto err_fd;
	}
	a.fd = fd;
	spin_lock(&axon_dev.lock);
	p = c->params;
	spin_unlock(&axon_dev.lock);
	if (copy_to_user(uf, &a, sizeof(a)) ||
	    (a.params && copy_to_user(u64_to_user_ptr(a.params), &p,
				      sizeof(p)))) {
		ret = -EFAULT;
		goto err_file;
	}
	/* the last step that can fail: from here on it acts for the client */
	if (delegate) {
		ret = axon_delegate_link(f);
		if (ret)
			goto err_file;
	}
	fd_install(fd, f);
	return 0;

err_file:
	fput(f);	/* its release drops the client reference */
	put_unused_fd(fd);
	return ret;
err_fd:
	put_unused_fd(fd);
err_put:
	axon_client_put(c);
	return ret;
}
