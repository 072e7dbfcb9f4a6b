// SPDX-License-Identifier: GPL-2.0
/*
 * The ioctls that act on one client: AXON_IOC_ACCEPT, AXON_IOC_DISCONNECT,
 * AXON_IOC_NOTIFY, AXON_IOC_CHARGE and AXON_IOC_UNCHARGE. Each is split in
 * two: axon_<op>_args() copies in and checks the argument, and
 * axon_<op>_client() does the work on a client the caller holds. The
 * daemon's fd (axon_daemon_<op>(), any client, looked up by id) and a
 * delegate (delegate.c, its own client only) share both halves.
 */
#include <linux/overflow.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "axon_drv.h"
#include "charge.h"
#include "client.h"
#include "clientops.h"
#include "region.h"

#define AXON_FEAT_ALL		((1U << AXON_FEAT_LAST) - 1)
/*
 * A DISCONNECT error reaches user space from the client's SETUP and ENTER:
 * it must be a user errno, none of the kernel's internal codes
 * (-ERESTARTSYS and up would restart or leak as errno 512...).
 */
#define AXON_MAX_USER_ERRNO	(ERESTARTSYS - 1)
#define AXON_NOTIFY_CHUNK	32

/**
 * axon_accept_args() - copy in and check an AXON_IOC_ACCEPT argument
 * @a:	out: the argument
 * @ua:	struct axon_accept
 *
 * Return: 0, -EFAULT, -EINVAL (reserved fields, unknown features, a
 * minting window that wraps past 2^64).
 */
int axon_accept_args(struct axon_accept *a, const void __user *ua)
{
	u64 va_end;

	if (copy_from_user(a, ua, sizeof(*a)))
		return -EFAULT;
	if (a->resv0 || memchr_inv(a->resv, 0, sizeof(a->resv)) ||
	    (a->features & ~AXON_FEAT_ALL) ||
	    check_add_overflow(a->va_base, a->va_size, &va_end))
		return -EINVAL;
	return 0;
}

/**
 * axon_accept_client() - ACCEPT one client, through the daemon's fd or a
 * delegate
 * @c:	the client (a reference held)
 * @a:	the checked argument
 *
 * Return: 0, -ENOENT (gone), -EALREADY (already served), -EINVAL (a state
 * that cannot be accepted).
 */
long axon_accept_client(struct axon_client *c, const struct axon_accept *a)
{
	long ret = 0;

	spin_lock(&axon_dev.lock);
	switch (c->state) {
	case AXON_KSTATE_PENDING:
		c->params.features = a->features;
		c->params.va_base = a->va_base;
		c->params.va_size = a->va_size;
		c->params.mint_credit = a->mint_credit;
		c->flags |= AXON_CF_ANNOUNCED;
		axon_client_set_state(c, AXON_KSTATE_ACTIVE);
		wake_up_all(&c->wq);
		break;
	case AXON_KSTATE_ORPHAN:
		c->region->dpage->sq_flags &= ~AXON_SQ_F_DAEMON_GONE;
		c->flags |= AXON_CF_ANNOUNCED;
		axon_client_set_state(c, AXON_KSTATE_ACTIVE);
		wake_up_all(&c->wq);
		break;
	case AXON_KSTATE_ACTIVE:
		ret = -EALREADY;
		break;
	case AXON_KSTATE_GONE:
		ret = -ENOENT;
		break;
	default:
		ret = -EINVAL;
		break;
	}
	spin_unlock(&axon_dev.lock);
	axon_dbg(FILE, "client %llu accept: %ld\n", c->id, ret);
	return ret;
}

/**
 * axon_daemon_accept() - AXON_IOC_ACCEPT on the daemon's fd
 * @ua:	struct axon_accept
 *
 * Return: as axon_accept_args() and axon_accept_client(), or -ENOENT (no
 * such client).
 */
long axon_daemon_accept(struct axon_accept __user *ua)
{
	struct axon_accept a;
	struct axon_client *c;
	long ret;

	ret = axon_accept_args(&a, ua);
	if (ret)
		return ret;
	c = axon_client_lookup(a.client_id);
	if (!c)
		return -ENOENT;
	ret = axon_accept_client(c, &a);
	axon_client_put(c);
	return ret;
}

/**
 * axon_disconnect_args() - copy in and check an AXON_IOC_DISCONNECT argument
 * @d:	out: the argument
 * @ud:	struct axon_disconnect
 *
 * Return: 0, -EFAULT, -EINVAL (reserved bits, an error outside -511..-1).
 */
int axon_disconnect_args(struct axon_disconnect *d, const void __user *ud)
{
	if (copy_from_user(d, ud, sizeof(*d)))
		return -EFAULT;
	if (d->resv || d->error >= 0 || d->error < -AXON_MAX_USER_ERRNO)
		return -EINVAL;
	return 0;
}

/**
 * axon_disconnect_client() - refuse or end one client, through the daemon's
 * fd or a delegate
 * @c:	the client (a reference held)
 * @d:	the checked argument
 *
 * The client becomes DEAD: its pending SETUP and every later ENTER return
 * the error, sleepers wake, its charges and its region are given back.
 *
 * Return: 0, -ENOENT (gone), -EALREADY (already dead), -EINVAL.
 */
long axon_disconnect_client(struct axon_client *c,
			    const struct axon_disconnect *d)
{
	long ret = 0;

	spin_lock(&axon_dev.lock);
	switch (c->state) {
	case AXON_KSTATE_PENDING:
	case AXON_KSTATE_ACTIVE:
	case AXON_KSTATE_ORPHAN:
		c->error = d->error;
		c->region->dpage->state = AXON_CLIENT_STATE_DEAD;
		axon_client_set_state(c, AXON_KSTATE_DEAD);
		wake_up_all(&c->wq);
		break;
	case AXON_KSTATE_DEAD:
		ret = -EALREADY;
		break;
	case AXON_KSTATE_GONE:
		ret = -ENOENT;
		break;
	default:
		ret = -EINVAL;
		break;
	}
	spin_unlock(&axon_dev.lock);
	if (!ret) {
		axon_charge_client_close(c, true);
		axon_client_retire(c);
	}
	return ret;
}

/**
 * axon_daemon_disconnect() - AXON_IOC_DISCONNECT on the daemon's fd
 * @ud:	struct axon_disconnect
 *
 * Return: as axon_disconnect_args() and axon_disconnect_client(), or
 * -ENOENT (no such client).
 */
long axon_daemon_disconnect(struct axon_disconnect __user *ud)
{
	struct axon_disconnect d;
	struct axon_client *c;
	long ret;

	ret = axon_disconnect_args(&d, ud);
	if (ret)
		return ret;
	c = axon_client_lookup(d.client_id);
	if (!c)
		return -ENOENT;
	ret = axon_disconnect_client(c, &d);
	axon_client_put(c);
	return ret;
}

/**
 * axon_notify_args() - copy in and check an AXON_IOC_NOTIFY argument
 * @a:	out: the argument (its ids still in user memory)
 * @un:	struct axon_notify
 *
 * Return: 0, -EFAULT, -EINVAL (flags, reserved words, too many ids).
 */
int axon_notify_args(struct axon_notify *a, const void __user *un)
{
	if (copy_from_user(a, un, sizeof(*a)))
		return -EFAULT;
	if (a->flags || memchr_inv(a->resv, 0, sizeof(a->resv)) ||
	    a->count > AXON_NOTIFY_MAX)
		return -EINVAL;
	return 0;
}

/**
 * axon_notify_client() - wake one client if it is ACTIVE, through the
 * daemon's fd or a delegate
 * @c:	the client, under RCU or with a reference
 *
 * Return: whether it was woken.
 */
bool axon_notify_client(struct axon_client *c)
{
	if (axon_client_state(c) != AXON_KSTATE_ACTIVE)
		return false;
	/* Freed only after a grace period: safe under RCU. */
	wake_up_all(&c->wq);
	return true;
}

/**
 * axon_daemon_notify() - AXON_IOC_NOTIFY on the daemon's fd: wake many
 * clients at once
 * @un:	struct axon_notify
 *
 * Return: the number of listed clients that are ACTIVE (and were woken),
 * or as axon_notify_args().
 */
long axon_daemon_notify(struct axon_notify __user *un)
{
	u64 ids[AXON_NOTIFY_CHUNK];
	const u64 __user *uids;
	struct axon_notify a;
	u32 done = 0;
	long woken = 0;
	int ret;

	ret = axon_notify_args(&a, un);
	if (ret)
		return ret;
	uids = u64_to_user_ptr(a.ids);
	while (done < a.count) {
		u32 n = min_t(u32, a.count - done, AXON_NOTIFY_CHUNK);
		u32 i;

		if (copy_from_user(ids, uids + done, n * sizeof(ids[0])))
			return -EFAULT;
		rcu_read_lock();
		for (i = 0; i < n; i++) {
			struct axon_client *c;

			c = xa_load(&axon_dev.clients, ids[i]);
			if (c && axon_notify_client(c))
				woken++;
		}
		rcu_read_unlock();
		done += n;
	}
	atomic64_inc(&axon_dev.stats.notifies);
	return woken;
}

/**
 * axon_notify_only() - check that every id of an AXON_IOC_NOTIFY names
 * one client
 * @a:	the checked argument
 * @id:	the only id allowed
 *
 * Return: 0, -EPERM (another id), -EFAULT.
 */
int axon_notify_only(const struct axon_notify *a, u64 id)
{
	const u64 __user *uids = u64_to_user_ptr(a->ids);
	u64 ids[AXON_NOTIFY_CHUNK];
	u32 done = 0;

	while (done < a->count) {
		u32 n = min_t(u32, a->count - done, AXON_NOTIFY_CHUNK);
		u32 i;

		if (copy_from_user(ids, uids + done, n * sizeof(ids[0])))
			return -EFAULT;
		for (i = 0; i < n; i++)
			if (ids[i] != id)
				return -EPERM;
		done += n;
	}
	return 0;
}

/**
 * axon_charge_args() - copy in and check an AXON_IOC_(UN)CHARGE argument
 * @a:	out: the argument
 * @uc:	struct axon_charge
 *
 * Return: 0, -EFAULT, -EINVAL (bad kind, reserved bits).
 */
int axon_charge_args(struct axon_charge *a, const void __user *uc)
{
	if (copy_from_user(a, uc, sizeof(*a)))
		return -EFAULT;
	if (a->resv || a->kind >= AXON_CHARGE_KINDS)
		return -EINVAL;
	return 0;
}

/**
 * axon_charge_client() - charge or uncharge one client, through the
 * daemon's fd or a delegate
 * @c:		the client (a reference held)
 * @a:		the checked argument
 * @charge:	charge (true) or uncharge
 *
 * Return: 0, -EDQUOT (a limit of the client's cgroup or an ancestor would
 * be passed), -ENOENT (the client is gone or disconnected), -EINVAL
 * (uncharging more than charged).
 */
long axon_charge_client(struct axon_client *c, const struct axon_charge *a,
			bool charge)
{
	if (charge)
		return axon_charge(c, a->kind, a->bytes);
	return axon_uncharge(c, a->kind, a->bytes);
}

/**
 * axon_daemon_charge() - AXON_IOC_CHARGE / AXON_IOC_UNCHARGE on the
 * daemon's fd
 * @uc:		struct axon_charge
 * @charge:	charge (true) or uncharge
 *
 * Return: as axon_charge_args() and axon_charge_client(), or -ENOENT (no
 * such client).
 */
long axon_daemon_charge(struct axon_charge __user *uc, bool charge)
{
	struct axon_charge a;
	struct axon_client *c;
	long ret;

	ret = axon_charge_args(&a, uc);
	if (ret)
		return ret;
	c = axon_client_lookup(a.client_id);
	if (!c)
		return -ENOENT;
	ret = axon_charge_client(c, &a, charge);
	axon_client_put(c);
	return ret;
}
