// SPDX-License-Identifier: GPL-2.0
/*
 * Delegates: AXON_IOC_CLIENT_FD with AXON_CLIENT_FD_DELEGATE. A delegate
 * maps its client's region as a plain client fd does, and also acts for
 * that one client: ACCEPT, CHARGE, UNCHARGE, NOTIFY and DISCONNECT with
 * the daemon's own code (clientops.c), and its own event record, so that
 * the daemon can hand a client to another process through SCM_RIGHTS. The
 * fd is the capability: nothing checks who calls.
 *
 * A client has at most one live delegate (client->delegate). From its link
 * on, the client's DOORBELL events are posted to the delegate and not to
 * the daemon's queue; GONE is posted to both (axon_daemon_queue_locked()).
 * When the daemon that made it detaches, the delegate is cut off: unlinked,
 * its ioctls refused with -ENOTCONN, EPOLLHUP, EOF once its record is
 * read. axon_dev.delegate_sem makes the cut a point in time: every
 * delegate ioctl runs before it, under the read side, or sees it. When a
 * linked delegate is released, doorbells go back to the daemon's queue
 * with one DOORBELL at once, for whatever was rung in between.
 *
 * Who can hold it: only its file (private_data). The client's pointer is
 * cleared, under axon_dev.lock, by the release or the cut before the
 * struct is freed, so every poster (under that lock) sees a live one.
 */
#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "axon_drv.h"
#include "client.h"
#include "clientops.h"
#include "daemon.h"
#include "delegate.h"
#include "region.h"

/**
 * struct axon_delegate - a client fd that also acts for its client
 * @c:		the client (a reference held, dropped at release)
 * @ev_bits:	AXON_EV_* not yet read; under axon_dev.lock
 * @cut:	its daemon detached; written under axon_dev.lock with
 *		axon_dev.delegate_sem held for writing, never cleared
 * @gone_read:	a record with AXON_EV_GONE has been read; under
 *		axon_dev.lock
 * @wq:		readers and pollers
 */
struct axon_delegate {
	struct axon_client *c;
	u32 ev_bits;
	bool cut;
	bool gone_read;
	wait_queue_head_t wq;
};

/**
 * axon_delegate_post_locked() - post events to a delegate's record
 * @d:		the client's linked delegate
 * @events:	AXON_EV_* bits (0: nothing)
 */
void axon_delegate_post_locked(struct axon_delegate *d, u32 events)
{
	lockdep_assert_held(&axon_dev.lock);
	if (!events)
		return;
	d->ev_bits |= events;
	wake_up_interruptible(&d->wq);
}

/**
 * axon_delegate_cut_locked() - the daemon detaches: cut off the client's
 * delegate, if it has one
 * @c:	the client
 */
void axon_delegate_cut_locked(struct axon_client *c)
{
	struct axon_delegate *d = c->delegate;

	lockdep_assert_held(&axon_dev.lock);
	lockdep_assert_held_write(&axon_dev.delegate_sem);
	if (!d)
		return;
	WRITE_ONCE(d->cut, true);
	c->delegate = NULL;
	wake_up_interruptible(&d->wq);
}

/*
 * Begins a delegate's ioctl for client @id: refused unless that is its
 * own client and its daemon is still attached. Holds the read side of
 * axon_dev.delegate_sem until axon_delegate_end().
 */
static int axon_delegate_begin(struct axon_delegate *d, u64 id)
{
	if (id != d->c->id)
		return -EPERM;
	down_read(&axon_dev.delegate_sem);
	if (d->cut) {
		up_read(&axon_dev.delegate_sem);
		return -ENOTCONN;
	}
	return 0;
}

static void axon_delegate_end(void)
{
	up_read(&axon_dev.delegate_sem);
}

static long axon_delegate_accept(struct axon_delegate *d, void __user *u)
{
	struct axon_accept a;
	long ret;

	ret = axon_accept_args(&a, u);
	if (!ret)
		ret = axon_delegate_begin(d, a.client_id);
	if (ret)
		return ret;
	ret = axon_accept_client(d->c, &a);
	axon_delegate_end();
	return ret;
}

static long axon_delegate_disconnect(struct axon_delegate *d, void __user *u)
{
	struct axon_disconnect a;
	long ret;

	ret = axon_disconnect_args(&a, u);
	if (!ret)
		ret = axon_delegate_begin(d, a.client_id);
	if (ret)
		return ret;
	ret = axon_disconnect_client(d->c, &a);
	axon_delegate_end();
	return ret;
}

static long axon_delegate_charge(struct axon_delegate *d, void __user *u,
				 bool charge)
{
	struct axon_charge a;
	long ret;

	ret = axon_charge_args(&a, u);
	if (!ret)
		ret = axon_delegate_begin(d, a.client_id);
	if (ret)
		return ret;
	ret = axon_charge_client(d->c, &a, charge);
	axon_delegate_end();
	return ret;
}

/*
 * Every listed id must be the delegate's client (checked before anything
 * is done, and not read again); it is woken once for all of them.
 */
static long axon_delegate_notify(struct axon_delegate *d, void __user *u)
{
	struct axon_notify a;
	long ret;

	ret = axon_notify_args(&a, u);
	if (!ret)
		ret = axon_notify_only(&a, d->c->id);
	if (!ret)
		ret = axon_delegate_begin(d, d->c->id);
	if (ret)
		return ret;
	if (a.count && axon_notify_client(d->c))
		ret = a.count;
	axon_delegate_end();
	atomic64_inc(&axon_dev.stats.notifies);
	return ret;
}

static long axon_delegate_ioctl(struct file *file, unsigned int cmd,
				unsigned long arg)
{
	struct axon_delegate *d = file->private_data;
	void __user *u = (void __user *)arg;

	switch (cmd) {
	case AXON_IOC_ACCEPT:
	case AXON_IOC_DISCONNECT:
	case AXON_IOC_CHARGE:
	case AXON_IOC_UNCHARGE:
	case AXON_IOC_NOTIFY:
		break;
	default:
		return -ENOTTY;
	}
	/* a cut-off delegate refuses everything; checked again under the sem */
	if (READ_ONCE(d->cut))
		return -ENOTCONN;
	switch (cmd) {
	case AXON_IOC_ACCEPT:
		return axon_delegate_accept(d, u);
	case AXON_IOC_DISCONNECT:
		return axon_delegate_disconnect(d, u);
	case AXON_IOC_CHARGE:
		return axon_delegate_charge(d, u, true);
	case AXON_IOC_UNCHARGE:
		return axon_delegate_charge(d, u, false);
	default:
		return axon_delegate_notify(d, u);
	}
}

/* Nothing more will come: cut off, or the client's GONE has been read. */
static bool axon_delegate_ended(struct axon_delegate *d)
{
	return READ_ONCE(d->cut) || READ_ONCE(d->gone_read);
}

/**
 * axon_delegate_read() - read(2): the delegate's one record
 * @file:	the delegate's file
 * @buf:	room for a struct axon_event
 * @count:	bytes of room
 * @ppos:	unused
 *
 * Blocks until bits are pending unless O_NONBLOCK. The bits are cleared
 * only once the record has been copied out.
 *
 * Return: the record's size, 0 (nothing pending and nothing more to come),
 * -EAGAIN, -EINVAL (@count too small), -EFAULT, -ERESTARTSYS.
 */
static ssize_t axon_delegate_read(struct file *file, char __user *buf,
				  size_t count, loff_t *ppos)
{
	struct axon_delegate *d = file->private_data;
	struct axon_client *c = d->c;
	struct axon_event ev;
	int ret;

	if (count < sizeof(ev))
		return -EINVAL;
	memset(&ev, 0, sizeof(ev));
	for (;;) {
		spin_lock(&axon_dev.lock);
		ev.events = d->ev_bits;
		d->ev_bits = 0;
		ev.state = axon_client_kstate(c);
		spin_unlock(&axon_dev.lock);
		if (ev.events)
			break;
		if (axon_delegate_ended(d))
			return 0;
		if (file->f_flags & O_NONBLOCK)
			return -EAGAIN;
		ret = wait_event_interruptible(d->wq,
					       READ_ONCE(d->ev_bits) ||
					       axon_delegate_ended(d));
		if (ret)
			return ret;
	}
	/* Pairs with the barrier in axon_daemon_doorbell(). */
	smp_mb();
	ev.client_id = c->id;
	axon_event_identity(&ev, c);
	if (copy_to_user(buf, &ev, sizeof(ev))) {
		spin_lock(&axon_dev.lock);
		d->ev_bits |= ev.events;
		spin_unlock(&axon_dev.lock);
		return -EFAULT;
	}
	if (ev.events & AXON_EV_GONE) {
		spin_lock(&axon_dev.lock);
		WRITE_ONCE(d->gone_read, true);
		spin_unlock(&axon_dev.lock);
		wake_up_interruptible(&d->wq);
	}
	return sizeof(ev);
}

/**
 * axon_delegate_poll() - poll(2) on a delegate
 * @file:	the delegate's file
 * @pt:		poll table
 *
 * Return: EPOLLIN | EPOLLRDNORM while bits are pending; EPOLLHUP once the
 * client's GONE has been read or the delegate is cut off.
 */
static __poll_t axon_delegate_poll(struct file *file,
				   struct poll_table_struct *pt)
{
	struct axon_delegate *d = file->private_data;
	__poll_t mask = 0;

	poll_wait(file, &d->wq, pt);
	/* wait-queue insertion before the checks; pairs with wake_up */
	smp_mb();
	if (READ_ONCE(d->ev_bits))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (axon_delegate_ended(d))
		mask |= EPOLLHUP;
	return mask;
}

static int axon_delegate_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct axon_delegate *d = file->private_data;

	return axon_region_mmap(d->c->region, vma, true);
}

static int axon_delegate_release(struct inode *inode, struct file *file)
{
	struct axon_delegate *d = file->private_data;
	struct axon_client *c = d->c;

	spin_lock(&axon_dev.lock);
	if (c->delegate == d) {
		c->delegate = NULL;
		/* whatever was rung since the delegate's last read */
		if (c->state == AXON_KSTATE_ACTIVE)
			axon_daemon_queue_locked(c, AXON_EV_DOORBELL);
	}
	spin_unlock(&axon_dev.lock);
	axon_client_put(c);
	kfree(d);
	return 0;
}

static void axon_delegate_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct axon_delegate *d = file->private_data;

	seq_printf(m, "axon-role:\tdelegate\naxon-client-id:\t%llu\n",
		   d->c->id);
	seq_printf(m, "axon-cut-off:\t%d\n", READ_ONCE(d->cut));
}

static const struct file_operations axon_delegate_fops = {
	.owner		= THIS_MODULE,
	.release	= axon_delegate_release,
	.read		= axon_delegate_read,
	.poll		= axon_delegate_poll,
	.mmap		= axon_delegate_mmap,
	.unlocked_ioctl	= axon_delegate_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
	.show_fdinfo	= axon_delegate_show_fdinfo,
};

/**
 * axon_delegate_file_client() - the client a delegate's file acts for
 * @file:	any file
 *
 * Return: the client (the file holds a reference), or NULL when @file is
 * not a delegate.
 */
struct axon_client *axon_delegate_file_client(struct file *file)
{
	struct axon_delegate *d;

	if (file->f_op != &axon_delegate_fops)
		return NULL;
	d = file->private_data;
	return d->c;
}

/**
 * axon_delegate_file() - a new, unlinked delegate file for a client
 * @c:	the client; the file takes over the caller's reference
 *
 * Return: the file, or an ERR_PTR (the caller keeps its reference).
 */
struct file *axon_delegate_file(struct axon_client *c)
{
	struct axon_delegate *d;
	struct file *f;

	d = kzalloc(sizeof(*d), GFP_KERNEL_ACCOUNT);
	if (!d)
		return ERR_PTR(-ENOMEM);
	d->c = c;
	init_waitqueue_head(&d->wq);
	f = anon_inode_getfile("[axon-delegate]", &axon_delegate_fops, d,
			       O_RDWR | O_CLOEXEC);
	if (IS_ERR(f))
		kfree(d);
	return f;
}

/**
 * axon_delegate_link() - make a delegate file its client's delegate
 * @file:	from axon_delegate_file(), not yet installed
 *
 * Called on the attached daemon's ioctl (it cannot detach meanwhile). A
 * DOORBELL the daemon has not read yet moves to the delegate.
 *
 * Return: 0, -ENOENT (the client is no longer PENDING or ACTIVE), -EBUSY
 * (it has a delegate).
 */
int axon_delegate_link(struct file *file)
{
	struct axon_delegate *d = file->private_data;
	struct axon_client *c = d->c;
	bool unqueued = false;
	int ret = 0;

	spin_lock(&axon_dev.lock);
	if (c->state != AXON_KSTATE_PENDING &&
	    c->state != AXON_KSTATE_ACTIVE) {
		ret = -ENOENT;
		goto out;
	}
	if (c->delegate) {
		ret = -EBUSY;
		goto out;
	}
	c->delegate = d;
	if (c->ev_bits & AXON_EV_DOORBELL) {
		c->ev_bits &= ~AXON_EV_DOORBELL;
		d->ev_bits |= AXON_EV_DOORBELL;
		if (!c->ev_bits) {
			list_del_init(&c->ev_node);
			unqueued = true;
		}
	}
out:
	spin_unlock(&axon_dev.lock);
	/* the queue's reference; the file still holds one */
	if (unqueued)
		axon_client_put(c);
	return ret;
}
