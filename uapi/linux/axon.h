/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * axon: the /dev/axon kernel module's interface.
 *
 * The module is the kernel transport between GPU clients and the axon
 * daemon (axond): it allocates each client's shared region, maps its parts
 * with the right permissions into the client and into the daemon, carries
 * doorbells and wake-ups, charges device memory to cgroups and reports
 * clients over generic netlink. It never interprets a submission or a
 * completion: what the entries, the info page and the socket messages mean
 * is the daemon protocol, <axon/protocol.h>, which includes this header.
 *
 * A client's shared region is made of
 *
 *   - a client page, written only by the client: SQ tail, CQ head, flags;
 *   - a daemon page, written only by the daemon: SQ head, CQ tail, flags,
 *     the ring geometry, the client's state;
 *   - the frontier: one __u64 per stream slot (AXON_MAX_FRONTIER);
 *   - the submission queue (SQ): sq_entries entries of AXON_SQE_SIZE bytes;
 *   - the completion queue (CQ): cq_entries entries of AXON_CQE_SIZE bytes;
 *   - the data area: bulk payloads, placed by the client.
 *
 * Where each part lies is returned in struct axon_params by AXON_IOC_SETUP
 * (axon_region_layout() in <linux/axon-layout.h> lays it out, for the
 * module, axond and libaxon alike). Both rings are single-producer
 * single-consumer and power-of-two sized; indices are free-running __u32
 * counters, an entry lives at index & mask. The producer writes entries,
 * then publishes its index with a release store; the consumer reads the
 * index with an acquire load. The kernel reads the indices only to report
 * them and to decide whether a sleeper has something to wake for.
 */
#ifndef _UAPI_LINUX_AXON_H
#define _UAPI_LINUX_AXON_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* The version of both halves, this header and <axon/protocol.h>. */
#define AXON_ABI_MAJOR		2	/* incompatible changes */
#define AXON_ABI_MINOR		1	/* compatible additions */

#define AXON_DEVICE_PATH	"/dev/axon"

/*
 * Sizes the kernel lays regions out with. The entries' and the info page's
 * contents are the protocol's; <axon/protocol.h> checks its structs against
 * these sizes at compile time.
 */
#define AXON_SQE_SIZE		64
#define AXON_CQE_SIZE		32
#define AXON_INFO_SIZE		22376	/* sizeof(struct axon_info) */
#define AXON_PAGE_SIZE		4096
#define AXON_MAX_SQ_ENTRIES	4096
#define AXON_MAX_FRONTIER	2048	/* stream slots per client */
#define AXON_MAX_DATA_SIZE	0x40000000ULL	/* 1 GiB */

/* ------------------------------------------------------------------------ */
/* Shared region                                                            */
/* ------------------------------------------------------------------------ */

/* The pages keep each side's hot indices a cache line apart. */
#define AXON_CACHELINE		64

/**
 * struct axon_client_page - written by the client, read by the daemon
 * @sq_tail:	next SQ index the client will fill; release-stored after the
 *		SQEs below it are written
 * @cq_head:	next CQ index the client will read; release-stored after the
 *		CQEs below it are consumed
 * @cq_flags:	AXON_CQ_F_* (WAITING: the client may sleep on cq_tail)
 * @local_ops:	calls the client answered without crossing (Local and
 *		Frontier classes); informational, for stats and tools
 */
struct axon_client_page {
	__u32 sq_tail;
	__u32 resv0[15];
	__u32 cq_head;
	__u32 resv1[15];
	__u32 cq_flags;
	__u32 resv2;
	__u64 local_ops;
	__u32 resv3[12];
};

/* The client is (about to be) asleep waiting for cq_tail to move. */
#define AXON_CQ_F_WAITING	0x1U

/**
 * struct axon_daemon_page - written by the daemon, read by the client
 * @sq_head:	next SQ index the daemon will take
 * @sq_flags:	AXON_SQ_F_* (NEED_WAKEUP: ring the doorbell after submitting);
 *		the kernel sets and clears DAEMON_GONE in it too, so every
 *		writer changes it with atomic read-modify-writes only
 * @sq_dropped:	SQEs rejected as malformed (diagnostic)
 * @cq_tail:	next CQ index the daemon will fill
 * @cq_overflow: completions that did not fit (always 0 under admission)
 * @sq_mask, @sq_entries, @cq_mask, @cq_entries: ring geometry (constant)
 * @pending_error: CUresult latched from a failed deferred operation, 0 if
 *		none; the next synchronising completion returns and clears it.
 *		A context-poisoning (sticky) error stays here once seen.
 * @state:	AXON_CLIENT_STATE_*
 * @mint_credit: bytes the client may still mint (deferred AXON_OP_MEM_MAP)
 *		without asking; the daemon has reserved them. Informational:
 *		the client tracks its credit from AXON_OP_MEM_MAP completions.
 * @devout_pending: bytes of device output (kernel printf, the driver's
 *		assertion messages) the daemon holds for the client, both
 *		kinds; nonzero: fetch them with AXON_OP_DEVOUT_READ and write
 *		them to stdout and stderr. Written before the completion or
 *		frontier update of the synchronisation that produced them.
 */
struct axon_daemon_page {
	__u32 sq_head;
	__u32 sq_flags;
	__u32 sq_dropped;
	__u32 resv0[13];
	__u32 cq_tail;
	__u32 cq_overflow;
	__u32 resv1[14];
	__u32 sq_mask;
	__u32 sq_entries;
	__u32 cq_mask;
	__u32 cq_entries;
	__u32 pending_error;
	__u32 state;
	__u64 mint_credit;
	__u32 devout_pending;
	/*
	 * Set by a daemon that ends the connection (a device fault made it
	 * restart): the CUresult the client should answer from then on.
	 */
	__u32 gone_error;
	/*
	 * Where charges go through the dmem controller (struct axon_reserve):
	 * the bytes of the last charge refused for want of a reservation
	 * (written before the completion marked AXON_CQE_F_RESERVE), so that
	 * the client reserves them and asks again.
	 */
	__u64 reserve_want;
	__u32 resv2[4];
};

/* The daemon is asleep: a client that submitted must ring the doorbell. */
#define AXON_SQ_F_NEED_WAKEUP	0x1U
/*
 * The daemon disconnected the client or shut down in order; no further
 * completions will arrive. A daemon that crashed cannot say so: clients see
 * their socket close (libaxon's axon_daemon_alive).
 */
#define AXON_SQ_F_DAEMON_GONE	0x2U

enum axon_client_state {
	AXON_CLIENT_STATE_ACTIVE	= 0,
	AXON_CLIENT_STATE_DRAINING	= 1,
	AXON_CLIENT_STATE_DEAD		= 2,
};

/* ------------------------------------------------------------------------ */
/* Connect: AXON_IOC_SETUP here, the socket hello in <axon/protocol.h>     */
/* ------------------------------------------------------------------------ */

/*
 * Feature bits returned at connect (struct axon_params.features). The daemon
 * chooses them; the kernel refuses an AXON_IOC_ACCEPT with a bit it does
 * not know.
 */
enum {
	AXON_FEAT_DEFERRED_BIT,		/* AXON_SQE_F_DEFERRED */
	AXON_FEAT_MINT_BIT,		/* client-minted addresses */
	AXON_FEAT_FRONTIER_BIT,		/* per-stream frontier */
	AXON_FEAT_HOSTMEM_BIT,		/* shared host memory: HOSTMEM_*, AXON_COPY_F_HOSTMEM */
	AXON_FEAT_LAST
};

/* The masks of the bits above (tests/ring/abi-layout.c pins both). */
#define AXON_FEAT_DEFERRED	0x1U
#define AXON_FEAT_MINT		0x2U
#define AXON_FEAT_FRONTIER	0x4U
#define AXON_FEAT_HOSTMEM	0x8U

/**
 * struct axon_params - ring sizes in, geometry out
 * @sq_entries:	in: requested SQ size (0: default); out: actual, a power of
 *		two no larger than AXON_MAX_SQ_ENTRIES
 * @cq_entries:	in: requested CQ size (0: 2 * sq); out: actual (>= sq)
 * @data_size:	in: requested data area bytes (0: default); out: actual
 * @flags:	in: must be zero
 * @features:	out: AXON_FEAT_*
 * @client_id:	out: the client's id in stats, /proc and netlink
 * @region_size: out: bytes of the whole shared region
 * @off_client, @off_daemon, @off_frontier, @off_sqes, @off_cqes, @off_data:
 *		out: byte offsets of each part inside the region
 * @frontier_entries: out: stream slots in the frontier
 * @va_base, @va_size: out: the client's device-address window for minting
 * @mint_credit: out: initial minting credit in bytes
 * @resv:	must be zero
 */
struct axon_params {
	__u32 sq_entries;
	__u32 cq_entries;
	__u64 data_size;
	__u32 flags;
	__u32 features;
	__u64 client_id;
	__u64 region_size;
	__u64 off_client;
	__u64 off_daemon;
	__u64 off_frontier;
	__u64 off_sqes;
	__u64 off_cqes;
	__u64 off_data;
	__u32 frontier_entries;
	__u32 resv0;
	__u64 va_base;
	__u64 va_size;
	__u64 mint_credit;
	__u64 resv[6];
};

/* ------------------------------------------------------------------------ */
/* Kernel transport: /dev/axon (Documentation/kmod.rst is the reference)     */
/* ------------------------------------------------------------------------ */

/*
 * Every open of /dev/axon is a client. AXON_IOC_SETUP takes the same struct
 * axon_params the socket hello carries; the kernel allocates the region
 * (memcg-charged to the caller), tells the attached daemon (AXON_EV_OPEN)
 * and sleeps until the daemon answers with AXON_IOC_ACCEPT (or refuses with
 * AXON_IOC_DISCONNECT). The region offsets in the returned params give each
 * part's order and size, exactly as on the socket transport; through the
 * kernel each part is mapped on its own at its AXON_OFF_* offset, with the
 * permissions of the table below, so one side cannot write the other's page:
 *
 *   part          offset               client   daemon (client fd)
 *   client page   AXON_OFF_CLIENT_PAGE rw       ro
 *   daemon page   AXON_OFF_DAEMON_PAGE ro       rw
 *   frontier      AXON_OFF_FRONTIER    ro       rw
 *   SQEs          AXON_OFF_SQES        rw       ro
 *   CQEs          AXON_OFF_CQES        ro       rw
 *   data area     AXON_OFF_DATA        rw       rw   (at most 128 MiB)
 *   info page     AXON_OFF_INFO        ro       rw   (daemon: on its own fd)
 *
 * A mapping must be MAP_SHARED and lie inside one part (a sub-range of a
 * part is allowed, from its offset plus a page multiple). Mappings are not
 * inherited across fork() and cannot grow with mremap().
 *
 * One process holding CAP_SYS_ADMIN (or the uid named by the daemon_uid
 * module parameter) attaches as the daemon with AXON_IOC_ATTACH on an fd that
 * has not been set up. It reads struct axon_event records from that fd
 * (read(2), poll(2)); the queue is in the kernel, one slot per client, and
 * never drops an event. It maps a client's region through the fd that
 * AXON_IOC_CLIENT_FD returns, wakes clients with AXON_IOC_NOTIFY after
 * posting completions, and charges device memory to a client's cgroup with
 * AXON_IOC_CHARGE / AXON_IOC_UNCHARGE (-EDQUOT past a limit).
 *
 * Wake-ups: the client sleeps in AXON_IOC_ENTER (AXON_ENTER_GETEVENTS) or in
 * poll(2) on its fd, the daemon in poll(2) on its own fd; futexes do not work
 * on these kernel pages. A client that sleeps sets AXON_CQ_F_WAITING, issues
 * a full barrier and re-checks the CQ first; the daemon publishes cq_tail,
 * issues a full barrier and calls AXON_IOC_NOTIFY for clients that have
 * AXON_CQ_F_WAITING set. A client that submits while the daemon page has
 * AXON_SQ_F_NEED_WAKEUP calls AXON_IOC_ENTER with to_submit > 0 (the
 * doorbell: an AXON_EV_DOORBELL event for the daemon).
 */

#define AXON_OFF_CLIENT_PAGE	0x00000000ULL
#define AXON_OFF_DAEMON_PAGE	0x01000000ULL
#define AXON_OFF_FRONTIER	0x02000000ULL
#define AXON_OFF_SQES		0x03000000ULL
#define AXON_OFF_CQES		0x04000000ULL
#define AXON_OFF_DATA		0x08000000ULL
#define AXON_OFF_INFO		0x10000000ULL

/* The data area of a kernel-transport client ends before AXON_OFF_INFO. */
#define AXON_KMOD_MAX_DATA_SIZE	(AXON_OFF_INFO - AXON_OFF_DATA)

/**
 * struct axon_enter - AXON_IOC_ENTER argument
 * @to_submit:	SQEs just published (> 0 rings the daemon's doorbell);
 *		at most sq_entries
 * @min_complete: with AXON_ENTER_GETEVENTS, wait until this many CQEs are
 *		available (cq_tail - cq_head); at most cq_entries
 * @flags:	AXON_ENTER_*
 * @resv:	must be zero
 * @timeout_ns:	absolute CLOCK_MONOTONIC deadline, 0 for none
 *
 * Returns the number of CQEs available, or -ETIME (deadline passed),
 * -EINTR (signal), -ECONNRESET (the daemon went away), the error the daemon
 * gave in AXON_IOC_DISCONNECT, -EINVAL (not set up, bad arguments), -EPERM
 * (called from another process than the opener's).
 */
struct axon_enter {
	__u32 to_submit;
	__u32 min_complete;
	__u32 flags;
	__u32 resv;
	__u64 timeout_ns;
};

#define AXON_ENTER_GETEVENTS	0x1U
#define AXON_ENTER_F_ALL	AXON_ENTER_GETEVENTS

/**
 * struct axon_charge - AXON_IOC_CHARGE / AXON_IOC_UNCHARGE argument (daemon)
 * @client_id:	the client charged
 * @bytes:	amount (0 is a no-op)
 * @kind:	AXON_CHARGE_*
 * @resv:	must be zero
 *
 * CHARGE adds @bytes to the client's cgroup (the one its process is in now:
 * what it charged before a migration stays where it was charged) and to
 * every ancestor; if any of them would pass its limit nothing is charged
 * and the ioctl fails with -EDQUOT; -ENOSPC if the client already holds
 * charges in 8 other cgroups. UNCHARGE gives back at most what the client
 * holds (-EINVAL otherwise), from the cgroup charged most recently first.
 * Unknown or gone client: -ENOENT. Where the client charges through the dmem
 * controller (struct axon_reserve), a device-memory CHARGE past what it has
 * reserved fails with -ENOBUFS, nothing charged.
 */
struct axon_charge {
	__u64 client_id;
	__u64 bytes;
	__u32 kind;
	__u32 resv;
};

#define AXON_CHARGE_DEVICE_MEM	0
#define AXON_CHARGE_KINDS	1

/**
 * struct axon_reserve - AXON_IOC_RESERVE argument (client)
 * @bytes:	in: the unconsumed reservation wanted: it is topped up to at
 *		least this (rounded up to whole AXON_RESERVE_UNITs), so a
 *		repeated call reserves nothing more; with AXON_RESERVE_F_RELEASE, the
 *		unconsumed reservation to give back (rounded down; ~0 for all);
 *		with AXON_RESERVE_F_FLOOR, the floor (rounded up)
 * @flags:	AXON_RESERVE_F_*, at most one
 * @resv:	must be zero
 * @reserved:	out: bytes reserved and not yet consumed
 * @used:	out: bytes consumed by the daemon's charges
 * @floor:	out: the floor
 *
 * Where the module charges device memory through the kernel's dmem cgroup
 * controller (the dmem_capacity module parameter, on a kernel with
 * CONFIG_CGROUP_DMEM), dmem charges the cgroup of the calling task, and
 * the daemon's AXON_IOC_CHARGE runs in the daemon's: so the client reserves
 * in its own context, charged to its cgroup of the moment (memcg's rule)
 * against dmem.max of it and every ancestor, and a device-memory CHARGE of
 * the daemon consumes whole units of the reservation (-ENOBUFS when it
 * falls short, nothing charged). An UNCHARGE gives consumed units back to
 * the reservation while it is below the client's floor (0 until set with
 * AXON_RESERVE_F_FLOOR: what the client may allocate again without a new
 * reservation), to dmem above it, so that dmem.current is what is in use
 * plus what is reserved; the end of the client gives back everything.
 *
 * The out fields are written on every return past the argument, opener
 * and dmem checks (-EINVAL, -EPERM, -EOPNOTSUPP, -EFAULT), so a refused
 * reservation tells what the client still holds.
 *
 * Returns 0, -EOPNOTSUPP (charges need no reservation: no dmem here, dmem
 * off when the client called AXON_IOC_SETUP, or no SETUP yet),
 * -EDQUOT (dmem.max of the caller's cgroup or an ancestor, or past 1 TiB
 * or the region's capacity reserved and used by one client), -ENOSPC (reservations in 8 cgroups),
 * -EPERM (not the opener's process), -ENOENT (the client has ended),
 * -EINTR (a fatal signal; nothing of this call is kept), -EINVAL.
 */
struct axon_reserve {
	__u64 bytes;
	__u32 flags;
	__u32 resv;
	__u64 reserved;
	__u64 used;
	__u64 floor;
};

#define AXON_RESERVE_UNIT	(2ULL << 20)
#define AXON_RESERVE_F_RELEASE	0x1U
#define AXON_RESERVE_F_FLOOR	0x2U
#define AXON_RESERVE_F_ALL	(AXON_RESERVE_F_RELEASE | AXON_RESERVE_F_FLOOR)

/**
 * struct axon_accept - AXON_IOC_ACCEPT argument (daemon)
 * @client_id:	a client in state PENDING (its AXON_IOC_SETUP is waiting) or
 *		ORPHAN (set up under a previous daemon)
 * @features:	AXON_FEAT_* returned to a PENDING client in its params
 * @resv0:	must be zero
 * @va_base, @va_size, @mint_credit: returned to a PENDING client in its
 *		params; ignored for an ORPHAN
 * @resv:	must be zero
 */
struct axon_accept {
	__u64 client_id;
	__u32 features;
	__u32 resv0;
	__u64 va_base;
	__u64 va_size;
	__u64 mint_credit;
	__u64 resv[3];
};

/**
 * struct axon_disconnect - AXON_IOC_DISCONNECT argument (daemon)
 * @client_id:	the client
 * @error:	negative errno (-511..-1; the kernel's internal codes from
 *		512 up are refused): what the client's pending
 *		AXON_IOC_SETUP and every later AXON_IOC_ENTER return
 * @resv:	must be zero
 */
struct axon_disconnect {
	__u64 client_id;
	__s32 error;
	__u32 resv;
};

/**
 * struct axon_client_fd - AXON_IOC_CLIENT_FD argument (daemon)
 * @client_id:	in: a client that has called AXON_IOC_SETUP
 * @flags:	in: AXON_CLIENT_FD_* (other bits: -EINVAL)
 * @fd:		out: a new O_RDWR | O_CLOEXEC descriptor on which the daemon
 *		mmaps that client's region (daemon permissions); it keeps the
 *		client's memory alive until it is closed and unmapped
 * @params:	in: user pointer to a struct axon_params that receives the
 *		client's geometry (sizes and offsets; the fields the daemon
 *		gives in ACCEPT are zero until then), or 0
 * @resv:	must be zero
 *
 * A plain client fd (no flags) only maps: every ioctl on it is -ENOTTY.
 *
 * With AXON_CLIENT_FD_DELEGATE the fd is also a *delegate*: it acts for its
 * one client, so that the daemon can hand the client to another process
 * (SCM_RIGHTS, any uid: the fd is the capability). The client must be
 * PENDING or ACTIVE (else -ENOENT), and a client has at most one delegate
 * open at a time (-EBUSY). On a delegate, AXON_IOC_ACCEPT, AXON_IOC_CHARGE,
 * AXON_IOC_UNCHARGE, AXON_IOC_NOTIFY and AXON_IOC_DISCONNECT work as on the
 * daemon's fd, with the same structs, but only for the delegate's client:
 * any other client_id (for NOTIFY, any listed id) fails with -EPERM and
 * does nothing. Every other ioctl on a delegate is -ENOTTY. The daemon's fd
 * keeps working for every client, delegated or not.
 *
 * From the moment of delegation the client's AXON_EV_DOORBELL goes to the
 * delegate instead of the daemon's queue (a DOORBELL the daemon had not
 * read yet moves to the delegate); AXON_EV_GONE goes to both. read(2) on a
 * delegate returns exactly one struct axon_event (the buffer must hold
 * one, else -EINVAL) with the bits accumulated since the last read and the
 * identity filled in as on the daemon's fd; it blocks unless O_NONBLOCK
 * (-EAGAIN), and returns 0 (end of file) once nothing is pending and
 * nothing more can come: after the record with GONE, or once the delegate
 * is cut off. poll(2) reports EPOLLIN | EPOLLRDNORM while bits are
 * pending, and EPOLLHUP once GONE has been read or the delegate is cut off.
 *
 * A delegate belongs to the daemon attachment that made it. When that
 * daemon's file is released, the client becomes ORPHAN as usual and the
 * delegate is cut off: its ioctls fail with -ENOTCONN, poll(2) reports
 * EPOLLHUP and read(2) returns 0 once nothing is pending. When a delegate
 * is closed, the client's doorbells go back to the daemon's queue; if the
 * client is ACTIVE the daemon gets one AXON_EV_DOORBELL at once, so that
 * nothing rung since the delegate's last read is lost.
 */
struct axon_client_fd {
	__u64 client_id;
	__u32 flags;
	__s32 fd;
	__u64 params;
	__u64 resv;
};

#define AXON_CLIENT_FD_DELEGATE	0x1U	/* the fd also acts for its client */
#define AXON_CLIENT_FD_F_ALL	AXON_CLIENT_FD_DELEGATE

/**
 * struct axon_notify - AXON_IOC_NOTIFY argument (daemon)
 * @count:	number of ids, at most AXON_NOTIFY_MAX
 * @flags:	must be zero
 * @ids:	user pointer to @count __u64 client ids
 * @resv:	must be zero
 *
 * Wakes every listed client sleeping in AXON_IOC_ENTER or poll(2); unknown
 * or gone ids are skipped. Returns how many listed clients were served by
 * this daemon (and so were woken).
 */
struct axon_notify {
	__u32 count;
	__u32 flags;
	__u64 ids;
	__u64 resv[2];
};

#define AXON_NOTIFY_MAX		4096

/* Client states, as events, /proc/axon/clients and netlink report them. */
enum axon_kstate {
	AXON_KSTATE_NEW		= 0,	/* opened, not set up */
	AXON_KSTATE_PENDING	= 1,	/* SETUP waits for the daemon */
	AXON_KSTATE_ACTIVE	= 2,	/* served by the attached daemon */
	AXON_KSTATE_ORPHAN	= 3,	/* set up, its daemon went away */
	AXON_KSTATE_DEAD	= 4,	/* refused or disconnected */
	AXON_KSTATE_GONE	= 5,	/* file released */
	AXON_KSTATE_LAST
};

/* Event bits (struct axon_event.events) */
enum {
	AXON_EV_OPEN_BIT,	/* SETUP called: map, then ACCEPT or DISCONNECT */
	AXON_EV_EXISTING_BIT,	/* existed when this daemon attached */
	AXON_EV_DOORBELL_BIT,	/* the client rang (ENTER with to_submit) */
	AXON_EV_GONE_BIT,	/* the client's file was released; last event */
	AXON_EV_LAST
};

/* The masks of the bits above (tests/ring/abi-layout.c pins both). */
#define AXON_EV_OPEN		0x1U
#define AXON_EV_EXISTING	0x2U
#define AXON_EV_DOORBELL	0x4U
#define AXON_EV_GONE		0x8U
#define AXON_EV_ALL		((1U << AXON_EV_LAST) - 1)

/**
 * struct axon_event - one record read(2) from the daemon's fd
 * @client_id:	the client
 * @events:	AXON_EV_* that happened since its last record (coalesced: a
 *		client has at most one record queued)
 * @state:	AXON_KSTATE_* when the record was read
 * @pid:	the opener's tgid in the reader's pid namespace (0 if not
 *		visible there)
 * @uid, @gid:	the opener's credentials in the reader's user namespace
 * @resv0:	zero
 * @cgroup_id:	the cgroup (v2) the client was in at open: its charges go
 *		there; equals the inode number of its cgroupfs directory
 * @start_time_ns: the opener's process start, ns since boot (CLOCK_BOOTTIME)
 * @comm:	the opener's command name, NUL-terminated
 */
struct axon_event {
	__u64 client_id;
	__u32 events;
	__u32 state;
	__u32 pid;
	__u32 uid;
	__u32 gid;
	__u32 resv0;
	__u64 cgroup_id;
	__u64 start_time_ns;
	char comm[16];
};

/*
 * The ioctl type, 0xA6, numbers 0x00-0x1F: a block free in the kernel's
 * registry (Documentation/userspace-api/ioctl/ioctl-number.rst, from 6.1 to
 * the current tree), with room for 32 commands, as the registry asks of a
 * new driver. Before ABI 2.0 these were 0xAE 0x00-0x16, inside KVM's
 * 0xAE 0x00-0x1F. Client commands are 0x00-0x0F, the daemon's 0x10-0x1F.
 */
#define AXON_IOC_MAGIC		0xA6
/* client */
#define AXON_IOC_SETUP		_IOWR(AXON_IOC_MAGIC, 0x00, struct axon_params)
#define AXON_IOC_ENTER		_IOW(AXON_IOC_MAGIC, 0x01, struct axon_enter)
#define AXON_IOC_RESERVE	_IOWR(AXON_IOC_MAGIC, 0x02, struct axon_reserve)
/*
 * daemon; ATTACH's argument is a flags word (must be 0); it returns the
 * number of clients announced with AXON_EV_EXISTING
 */
#define AXON_IOC_ATTACH		_IO(AXON_IOC_MAGIC, 0x10)
#define AXON_IOC_CHARGE		_IOW(AXON_IOC_MAGIC, 0x11, struct axon_charge)
#define AXON_IOC_UNCHARGE	_IOW(AXON_IOC_MAGIC, 0x12, struct axon_charge)
#define AXON_IOC_ACCEPT		_IOW(AXON_IOC_MAGIC, 0x13, struct axon_accept)
#define AXON_IOC_CLIENT_FD	_IOWR(AXON_IOC_MAGIC, 0x14, struct axon_client_fd)
#define AXON_IOC_NOTIFY		_IOW(AXON_IOC_MAGIC, 0x15, struct axon_notify)
#define AXON_IOC_DISCONNECT	_IOW(AXON_IOC_MAGIC, 0x16, struct axon_disconnect)

/*
 * Generic netlink family "axon" (version 1), init network namespace only.
 * Attributes are validated strictly; each command accepts only its own.
 *
 *   AXON_CMD_GET_STATS   doit; reply: AXON_A_STATS (nested AXON_STAT_*, u64)
 *   AXON_CMD_GET_CLIENT  dumpit: one message per client; doit with
 *                        AXON_A_CLIENT_ID. Reply attributes: CLIENT_ID, PID,
 *                        UID, GID, COMM, STATE, CGROUP_ID, CGROUP_PATH,
 *                        CHARGED, SUBMITS, COMPLETIONS, DEPTH
 *   AXON_CMD_GET_LIMIT   doit with CGROUP_PATH, CGROUP_ID or CGROUP_FD
 *                        (exactly one; + KIND);
 *                        dumpit: every cgroup the module tracks. Reply:
 *                        CGROUP_ID, CGROUP_PATH, KIND, USAGE, LIMIT, PEAK,
 *                        FAILCNT
 *   AXON_CMD_SET_LIMIT   doit: CGROUP_PATH, CGROUP_ID or CGROUP_FD, KIND
 *                        (default device memory), LIMIT (bytes;
 *                        AXON_LIMIT_NONE removes the limit). Allowed with
 *                        CAP_NET_ADMIN; without it, only by CGROUP_FD and
 *                        only to a caller who may write the cgroup's
 *                        parent directory (cgroup v2 delegation: the
 *                        delegatee limits the cgroups below the subtree
 *                        root it owns, never the root itself); else
 *                        -EPERM
 *   AXON_CMD_EVENT       multicast on group "events" (CAP_NET_ADMIN to
 *                        join): EVENT (AXON_NLEV_*) and, per event,
 *                        CLIENT_ID, PID, UID, CGROUP_ID, KIND, BYTES, USAGE,
 *                        LIMIT. Lossy; axond gets its events from its fd.
 * Cgroup paths are relative to the caller's cgroup namespace root ("/" is
 * the root); 64-bit values are padded with AXON_A_PAD.
 */
#define AXON_GENL_NAME		"axon"
#define AXON_GENL_VERSION	1
#define AXON_GENL_MCGRP_EVENTS	"events"

enum axon_genl_cmd {
	AXON_CMD_UNSPEC,
	AXON_CMD_GET_STATS,
	AXON_CMD_GET_CLIENT,
	AXON_CMD_GET_LIMIT,
	AXON_CMD_SET_LIMIT,
	AXON_CMD_EVENT,
	__AXON_CMD_MAX
};

#define AXON_CMD_MAX		(__AXON_CMD_MAX - 1)

enum axon_genl_attr {
	AXON_A_UNSPEC,
	AXON_A_PAD,
	AXON_A_CLIENT_ID,	/* u64 */
	AXON_A_PID,		/* u32 */
	AXON_A_UID,		/* u32 */
	AXON_A_GID,		/* u32 */
	AXON_A_COMM,		/* string */
	AXON_A_STATE,		/* u32, AXON_KSTATE_* */
	AXON_A_CGROUP_ID,	/* u64 */
	AXON_A_CGROUP_PATH,	/* string, at most 4095 bytes */
	AXON_A_KIND,		/* u32, AXON_CHARGE_* */
	AXON_A_CHARGED,		/* u64 bytes */
	AXON_A_USAGE,		/* u64 bytes */
	AXON_A_LIMIT,		/* u64 bytes */
	AXON_A_PEAK,		/* u64 bytes */
	AXON_A_FAILCNT,		/* u64 */
	AXON_A_BYTES,		/* u64 */
	AXON_A_EVENT,		/* u32, AXON_NLEV_* */
	AXON_A_STATS,		/* nested AXON_STAT_* */
	AXON_A_SUBMITS,		/* u32 ring position */
	AXON_A_COMPLETIONS,	/* u32 ring position */
	AXON_A_DEPTH,		/* u32 */
	AXON_A_CGROUP_FD,	/* u32, the sender's fd of a cgroup2 directory */
	__AXON_A_MAX
};

#define AXON_A_MAX		(__AXON_A_MAX - 1)

#define AXON_LIMIT_NONE		(~0ULL)

/* Nested in AXON_A_STATS, all u64 */
enum axon_genl_stat {
	AXON_STAT_UNSPEC,
	AXON_STAT_PAD,
	AXON_STAT_CLIENTS,		/* client objects alive */
	AXON_STAT_OPENS,		/* opens since load */
	AXON_STAT_DAEMON_ATTACHED,	/* 0 or 1 */
	AXON_STAT_DAEMON_PID,
	AXON_STAT_ATTACHES,
	AXON_STAT_ENTERS,
	AXON_STAT_DOORBELLS,
	AXON_STAT_NOTIFIES,
	AXON_STAT_EVENTS,		/* records read by daemons */
	AXON_STAT_CHARGES,
	AXON_STAT_CHARGE_FAILS,
	AXON_STAT_UNCHARGES,
	AXON_STAT_CHARGED_BYTES,	/* currently charged, all kinds */
	AXON_STAT_REGION_BYTES,		/* region memory allocated */
	__AXON_STAT_MAX
};

#define AXON_STAT_MAX		(__AXON_STAT_MAX - 1)

enum axon_genl_event {
	AXON_NLEV_CLIENT_OPEN	= 1,	/* a client called SETUP */
	AXON_NLEV_CLIENT_EXIT	= 2,	/* a client's file was released */
	AXON_NLEV_LIMIT_HIT	= 3,	/* a charge failed: CGROUP_ID limited */
	AXON_NLEV_DAEMON_ATTACH	= 4,
	AXON_NLEV_DAEMON_DETACH	= 5,
};

#endif /* _UAPI_LINUX_AXON_H */
