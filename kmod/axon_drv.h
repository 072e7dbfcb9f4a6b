/* SPDX-License-Identifier: GPL-2.0 */
/*
 * axon.ko: shared definitions of the /dev/axon module.
 *
 * Objects and who holds them
 * --------------------------
 * struct axon_client is one open of /dev/axon. References (client->ref):
 *   - the client's own file (dropped in its ->release);
 *   - each daemon-side fd from AXON_IOC_CLIENT_FD, plain or delegate
 *     (dropped in its ->release; the mappings made through it hold that
 *     file, so the region lives until the daemon, or whoever the delegate
 *     was passed to, has unmapped and closed it);
 *   - a queued event record (dropped when the daemon reads it, or when the
 *     daemon detaches);
 *   - short-lived lookups (ioctl, netlink, /proc), taken with
 *     kref_get_unless_zero() under RCU because a dying client is still in
 *     the id xarray until its last reference goes.
 * The user mappings hold page references of their own (vm_insert_pages), so
 * pages outlive even the client object if a mapping does.
 *
 * Death has two phases. The end comes first, once, at whichever comes
 * first of the opener's exit (its mm's release, through @amm: a copy of
 * the fd held by a fork child or passed on does not keep the client
 * alive) and the release of the client's file: the client is marked
 * GONE, its charges go back, its region is retired (the kernel's page
 * references dropped but for the two header pages) and the GONE event is
 * queued (nothing waits on the daemon). The last kref_put() erases it
 * from the xarray, frees the region and identity, and frees the struct
 * after an RCU grace period (lookups may still see it).
 * The last put can come from any of the holders above, always in process
 * context and with no axon lock held.
 *
 * A delegate (delegate.c) is owned by its file alone. The client points
 * to it (@delegate, under axon_dev.lock) from its link until its release
 * or until the daemon detaches and cuts it off, whichever comes first.
 *
 * Locks, outermost first:
 *   axon_dev.attach_mutex	attach/detach of the daemon, whole sequences
 *   axon_dev.delegate_sem	(rwsem) read: a delegate's ioctl; write:
 *				detach, while it cuts the delegates off
 *   client->setup_mutex	one client's AXON_IOC_SETUP
 *   axon_tree.lock		(charge.c, charge_tree.c) the counter tree and
 *				client charges
 *   axon_dev.lock		(spinlock) daemon attached/gen/file, the event
 *				list, every client's state, flags and ev_bits
 *   wait queue locks
 * Leaves, taken with none of the above held:
 *   region->lock		(region.c) a region's pages and mappings
 *				against retirement; taken under mmap_lock by
 *				mmap and by its vmas' open and close
 *   axon_users_lock		(user.c, spinlock) the per-user counts; also
 *				under region->lock (a region's bytes going
 *				back)
 *   axon_mm.lock		(client.c, spinlock) one mm's client list
 * cgroup_mutex (via cgroup_path_ns) is taken under the charge mutex only.
 */
#ifndef AXON_KMOD_AXON_DRV_H
#define AXON_KMOD_AXON_DRV_H

#include <linux/types.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <linux/atomic.h>
#include <linux/sched.h>
#include <linux/mmu_notifier.h>
#include <linux/workqueue.h>
#include <linux/axon.h>

#include "charge_tree.h"
#include "charge_dmem.h"

#define AXON_DRV_NAME	"axon"

struct axon_delegate;
struct axon_mm;
struct axon_region;
struct axon_user;
struct cgroup;
struct pid;
struct cred;
struct mm_struct;
struct file;

/* Debug areas for the dbg_mask module parameter. */
#define AXON_DBG_FILE	BIT(0)	/* open/release, setup, accept */
#define AXON_DBG_DAEMON	BIT(1)	/* attach/detach, events */
#define AXON_DBG_CHARGE	BIT(2)	/* charges and limits */
#define AXON_DBG_KREF	BIT(3)	/* client created/destroyed */

extern unsigned int axon_dbg_mask;

#define axon_dbg(area, fmt, ...)					\
	do {								\
		if (unlikely(axon_dbg_mask & AXON_DBG_##area))		\
			pr_info("axon: " fmt, ##__VA_ARGS__);		\
	} while (0)

/* Client flags (client->flags), under axon_dev.lock */
#define AXON_CF_CONNECTED	BIT(0)	/* bound to the attached daemon */
#define AXON_CF_ANNOUNCED	BIT(1)	/* the attached daemon knows it */
#define AXON_CF_ENDED		BIT(2)	/* its opener exited or its file went */

/* Client bits (client->atomic_flags), atomic */
#define AXON_CAF_EXIT_QUEUED	0	/* @exit_work queued, holding a ref */

/**
 * struct axon_client - one open of /dev/axon
 * @ref:	see the header comment
 * @id:		never reused
 * @rcu:	frees the struct after lookups are done
 * @setup_mutex: serialises AXON_IOC_SETUP; protects @region creation
 * @state:	AXON_KSTATE_* or AXON_CS_DAEMON; under axon_dev.lock, read
 *		locklessly with READ_ONCE() by fast paths
 * @flags:	AXON_CF_*; under axon_dev.lock
 * @error:	why the client is DEAD (negative errno); under axon_dev.lock
 * @ev_bits:	AXON_EV_* not yet read by the daemon; under axon_dev.lock
 * @ev_node:	on axon_dev.ev_list while @ev_bits != 0; under axon_dev.lock
 * @wq:		clients sleeping in SETUP, ENTER and poll()
 * @params:	geometry given back by SETUP; written under @setup_mutex and
 *		(the daemon's fields) under axon_dev.lock before ACTIVE
 * @region:	set once under @setup_mutex before the state leaves NEW,
 *		freed with the client
 * @pid:	the opener's thread group
 * @cred:	the opener's credentials at open (as file->f_cred)
 * @cgrp:	the opener's cgroup v2 at open (reference held): identity,
 *		visibility; charges go to the opener's cgroup of the moment
 * @mm:		the opener's mm (mmgrab): only that process may use the fd
 * @amm:	the mm notifier of @mm (client.c), shared by the clients of
 *		that mm: its release (the opener's exit or exec) ends them
 * @exit_wait:	on @pid's pidfd wait queue: the exit of the opener's whole
 *		thread group queues @exit_work, which ends the client even
 *		if a CLONE_VM child keeps @mm alive
 * @exit_work:	see @exit_wait; holds a reference while queued
 * @atomic_flags: AXON_CAF_*
 * @mm_node:	on @amm's list; under its lock
 * @user:	the opener's per-user counts (the daemon's file too: a
 *		SETUP racing with ATTACH on one file may still use it)
 * @limited:	the per-user limits apply (no CAP_SYS_RESOURCE at open)
 * @comm:	the opener's command name
 * @start_boottime: the opener's process start, ns since boot
 * @enters:	AXON_IOC_ENTER calls
 * @charge:	what is charged to which cgroup (charge_tree.c); under the
 *		charge mutex
 * @dmem:	the dmem controller's units of the client (charge_dmem.c)
 * @delegate:	its live delegate, which gets its DOORBELL events, or NULL;
 *		under axon_dev.lock
 */
struct axon_client {
	struct kref ref;
	u64 id;
	struct rcu_head rcu;
	struct mutex setup_mutex;	/* serialises SETUP; see above */
	int state;
	unsigned long flags;
	int error;
	u32 ev_bits;
	struct list_head ev_node;
	wait_queue_head_t wq;
	struct axon_params params;
	struct axon_region *region;

	struct pid *pid;
	const struct cred *cred;
	struct cgroup *cgrp;
	struct mm_struct *mm;
	struct axon_mm *amm;
	struct list_head mm_node;
	struct wait_queue_entry exit_wait;
	struct work_struct exit_work;
	unsigned long atomic_flags;
	struct axon_user *user;
	bool limited;
	char comm[TASK_COMM_LEN];
	u64 start_boottime;

	atomic64_t enters;
	struct axon_charge_acct charge;
	struct axon_dmem_acct dmem;

	struct axon_delegate *delegate;
};

/* The file became the daemon's (not a client state userspace sees). */
#define AXON_CS_DAEMON	(AXON_KSTATE_LAST + 1)

/**
 * struct axon_dev - the module's global state
 * @attach_mutex: serialises attach and the whole detach sequence
 * @delegate_sem: held for reading by each delegate ioctl and for writing by
 *		detach while it cuts the delegates off, so that no delegate
 *		acts once its daemon has begun to detach
 * @lock:	protects @attached, @gen, @daemon_file, @daemon_pid,
 *		@ev_list and the client fields listed in struct axon_client
 * @attached:	a daemon is attached
 * @gen:	attach generation, bumped at each attach
 * @daemon_file: the daemon's file while attached (not a reference: cleared
 *		by that file's ->release)
 * @daemon_pid:	the daemon's tgid (reference held while attached)
 * @ev_list:	clients with events not yet read, oldest first; each entry
 *		holds a client reference
 * @ev_wq:	the daemon sleeping in read()/poll()
 * @clients:	id -> client, for every client object alive (any state)
 * @next_id:	last id handed out
 * @stats:	counters for /proc/axon/stats and netlink
 */
struct axon_dev {
	struct mutex attach_mutex;	/* attach and detach sequences */
	struct rw_semaphore delegate_sem; /* delegate ioctls against detach */
	spinlock_t lock;		/* daemon state, events, client states */
	bool attached;
	u64 gen;
	struct file *daemon_file;
	struct pid *daemon_pid;
	struct list_head ev_list;
	wait_queue_head_t ev_wq;
	struct xarray clients;
	atomic64_t next_id;
	struct {
		atomic64_t opens;
		atomic64_t attaches;
		atomic64_t enters;
		atomic64_t doorbells;
		atomic64_t notifies;
		atomic64_t events;
		atomic64_t region_bytes;
		atomic64_t clients;
	} stats;
};

extern struct axon_dev axon_dev;

/* Module parameters (main.c) */
extern int axon_daemon_uid;
extern bool axon_wait_for_daemon;
extern unsigned long axon_default_data_size;
extern unsigned long axon_max_data_size;
extern unsigned int axon_max_user_clients;
extern unsigned long axon_max_user_region_bytes;

#endif
