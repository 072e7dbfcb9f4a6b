/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * axon: the one ABI between GPU clients, the axon daemon (axond) and the
 * /dev/axon kernel module.
 *
 * Protocol
 * --------
 * A client owns one shared region made of
 *
 *   - a client page, written only by the client: SQ tail, CQ head, flags;
 *   - a daemon page, written only by the daemon: SQ head, CQ tail, flags,
 *     the client's latched error and its allocation credit;
 *   - the frontier: one __u64 per stream slot, the number of that stream's
 *     operations the device has finished (written by the daemon);
 *   - the submission queue (SQ): sq_entries 64-byte struct axon_sqe;
 *   - the completion queue (CQ): cq_entries 32-byte struct axon_cqe;
 *   - the data area: bulk payloads (copies, module images, kernel
 *     arguments), placed by the client, named by offset in an SQE.
 *
 * Where each part lies is returned in struct axon_params at connect time, as
 * io_uring returns its ring offsets, so the layout can change without
 * breaking clients. The two header pages are separate so that each side can
 * map the other's page read-only (the kernel transport does).
 *
 * Both rings are single-producer single-consumer and power-of-two sized.
 * Indices are free-running __u32 counters; an entry lives at index & mask.
 * The producer writes entries, then publishes its index with a release
 * store; the consumer reads the index with an acquire load, reads entries,
 * then publishes its own index with a release store. Everything in the
 * region is untrusted by the daemon: it reads each SQE once into private
 * memory and validates the copy.
 *
 * Admission: the daemon takes an SQE only when the CQ has room for the
 * completion it may produce, so the CQ never overflows. An SQE with
 * AXON_SQE_F_DEFERRED produces no completion when it succeeds; its failure
 * is latched as the client's pending error and returned by the next
 * synchronising operation (as CUDA returns asynchronous errors).
 *
 * The info page is global and read-only for clients: devices, every
 * CUdevice_attribute value, names, UUIDs, memory sizes, versions. Queries
 * about devices are answered from it without crossing.
 *
 * Transports carry the same bytes:
 *   unix:PATH  SOCK_SEQPACKET; struct axon_hello / struct axon_welcome,
 *              then the region memfd, the info memfd and an eventfd
 *              doorbell in one SCM_RIGHTS message; identity from
 *              SO_PEERCRED.
 *   /dev/axon  the kernel allocates and maps the region (reserved below:
 *              ioctl numbers, mmap offsets, netlink names).
 *   tcp:H:P    reserved.
 *
 * Status codes in completions are CUDA driver API codes (CUresult); 0 is
 * success.
 */
#ifndef _UAPI_LINUX_AXON_H
#define _UAPI_LINUX_AXON_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define AXON_MAGIC		0x4e4f5841U	/* "AXON" little-endian */
#define AXON_ABI_MAJOR		1	/* incompatible changes */
#define AXON_ABI_MINOR		0	/* compatible additions */

#define AXON_DEFAULT_SOCKET	"/run/axon/axond.sock"
#define AXON_DEVICE_PATH	"/dev/axon"

#define AXON_SQE_SIZE		64
#define AXON_CQE_SIZE		32
#define AXON_PAGE_SIZE		4096
#define AXON_MAX_SQ_ENTRIES	4096
#define AXON_MAX_FRONTIER	2048	/* stream slots per client */
#define AXON_MAX_DATA_SIZE	(1ULL << 30)
#define AXON_MAX_DEVICES	16
#define AXON_MAX_ATTRIBUTES	256	/* > CU_DEVICE_ATTRIBUTE_MAX */
#define AXON_MAX_KERNEL_PARAMS	512
#define AXON_MAX_ARGS_SIZE	32768	/* kernel parameter bytes (CUDA 12.1+) */

/* ------------------------------------------------------------------------ */
/* Handles                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * A handle names one object in the daemon's per-client table:
 * bits 63..56 type, 55..32 generation, 31..0 slot index. Type and
 * generation are never zero, so 0 is never a valid handle and a freed slot's
 * old handle (stale generation) or a handle of another type is detected.
 * Clients treat handles as opaque; the CUDA shim hands them out as
 * CUcontext, CUstream, CUevent, CUmodule and CUfunction values.
 */
enum axon_handle_type {
	AXON_HANDLE_NONE	= 0,
	AXON_HANDLE_CTX		= 1,
	AXON_HANDLE_STREAM	= 2,
	AXON_HANDLE_EVENT	= 3,
	AXON_HANDLE_MODULE	= 4,
	AXON_HANDLE_FUNC	= 5,
	AXON_HANDLE_TYPE_LAST
};

#define AXON_HANDLE_TYPE(h)	((__u32)((__u64)(h) >> 56))
#define AXON_HANDLE_GEN(h)	((__u32)(((__u64)(h) >> 32) & 0xffffffU))
#define AXON_HANDLE_INDEX(h)	((__u32)((__u64)(h) & 0xffffffffU))
#define AXON_HANDLE_MAKE(type, gen, index)				\
	(((__u64)(type) << 56) | (((__u64)(gen) & 0xffffffU) << 32) |	\
	 (__u64)(__u32)(index))

/* ------------------------------------------------------------------------ */
/* Shared region                                                            */
/* ------------------------------------------------------------------------ */

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
#define AXON_CQ_F_WAITING	(1U << 0)

/**
 * struct axon_daemon_page - written by the daemon, read by the client
 * @sq_head:	next SQ index the daemon will take
 * @sq_flags:	AXON_SQ_F_* (NEED_WAKEUP: ring the doorbell after submitting)
 * @sq_dropped:	SQEs rejected as malformed (diagnostic)
 * @cq_tail:	next CQ index the daemon will fill
 * @cq_overflow: completions that did not fit (always 0 under admission)
 * @sq_mask, @sq_entries, @cq_mask, @cq_entries: ring geometry (constant)
 * @pending_error: CUresult latched from a failed deferred operation, 0 if
 *		none; the next synchronising completion returns and clears it
 * @state:	AXON_CLIENT_STATE_*
 * @mint_credit: bytes the client may still mint (deferred AXON_OP_MEM_MAP)
 *		without asking; the daemon has reserved them. Informational:
 *		the client tracks its credit from AXON_OP_MEM_MAP completions.
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
	__u32 resv2[8];
};

/* The daemon is asleep: a client that submitted must ring the doorbell. */
#define AXON_SQ_F_NEED_WAKEUP	(1U << 0)
/* The daemon went away; no further completions will arrive. */
#define AXON_SQ_F_DAEMON_GONE	(1U << 1)

enum axon_client_state {
	AXON_CLIENT_STATE_ACTIVE	= 0,
	AXON_CLIENT_STATE_DRAINING	= 1,
	AXON_CLIENT_STATE_DEAD		= 2,
};

/* ------------------------------------------------------------------------ */
/* Submission and completion entries                                        */
/* ------------------------------------------------------------------------ */

/* SQE flags */
enum {
	AXON_SQE_DEFERRED_BIT,	/* no completion on success; errors latch */
	AXON_SQE_FLAG_LAST
};
#define AXON_SQE_F_DEFERRED	(1U << AXON_SQE_DEFERRED_BIT)
#define AXON_SQE_F_ALL		((1U << AXON_SQE_FLAG_LAST) - 1)

/**
 * struct axon_sqe - one request, 64 bytes
 * @opcode:	AXON_OP_*
 * @flags:	AXON_SQE_F_*
 * @resv0:	must be zero
 * @resv1:	must be zero
 * @user_data:	returned unchanged in the completion
 * @stream:	stream handle for stream-ordered operations, else 0. The
 *		client resolves CUDA's NULL stream to its context's default
 *		stream handle before submitting.
 * The rest is one union member per operation family; unused bytes must be
 * zero.
 */
struct axon_sqe {
	__u8	opcode;
	__u8	flags;
	__u16	resv0;
	__u32	resv1;
	__u64	user_data;
	__u64	stream;
	union {
		/* AXON_OP_MEMCPY_*: dst/src are device addresses or, for the
		 * host side, a data-area offset */
		struct {
			__u64 dst;
			__u64 src;
			__u64 len;
			__u64 resv[2];
		} copy;
		/* AXON_OP_MEMSET: count elements of elem_size (1, 2, 4)
		 * bytes holding value, in rows of width elements, pitch
		 * bytes apart (height 1 for a flat memset) */
		struct {
			__u64 dst;
			__u64 width;
			__u64 height;
			__u64 pitch;
			__u32 value;
			__u32 elem_size;
		} memset;
		/* AXON_OP_LAUNCH: args_off is a data-area offset holding the
		 * packed kernel parameters laid out as the function's
		 * parameter table says */
		struct {
			__u64 func;
			__u32 grid[3];
			__u32 block[3];
			__u32 shared_bytes;
			__u32 args_off;
		} launch;
		/* AXON_OP_MEM_MAP / AXON_OP_MEM_UNMAP */
		struct {
			__u64 ctx;
			__u64 addr;
			__u64 len;
			__u64 resv[2];
		} mem;
		/* Everything else: an object handle, a payload in the data
		 * area and up to three arguments. */
		struct {
			__u64 handle;
			__u64 arg0;
			__u64 arg1;
			__u32 data_off;
			__u32 data_len;
			__u64 arg2;
		} obj;
		__u64 raw[5];
	};
};

/**
 * struct axon_cqe - one completion, 32 bytes
 * @user_data:	from the SQE
 * @res:	CUresult
 * @flags:	AXON_CQE_F_*
 * @aux:	returned values (new handle, address, sizes), per operation
 */
struct axon_cqe {
	__u64	user_data;
	__s32	res;
	__u32	flags;
	__u64	aux[2];
};

/* ------------------------------------------------------------------------ */
/* Operations                                                               */
/* ------------------------------------------------------------------------ */

/*
 * Every operation's arguments and results, in the SQE / CQE fields named:
 *
 * NOP              -                          -> res 0
 * CTX_CREATE       obj.arg0 device, obj.arg1 CUctx_flags
 *                                             -> aux0 ctx, aux1 default stream
 * CTX_DESTROY      obj.handle ctx
 * CTX_SYNC         obj.handle ctx             -> res: pending error or 0,
 *                                                once all its streams drained
 * MEM_MAP          mem.ctx, mem.addr, mem.len: back a client-minted range
 *                  (inside the client's VA window, aligned to
 *                  AXON_MINT_ALIGN). Deferred within credit; otherwise sync,
 *                  and aux0 returns the new credit.
 * MEM_UNMAP        mem.addr (base of a mapped range), mem.ctx
 *                                             -> aux0 bytes released
 * MEM_GET_INFO     obj.arg0 device            -> aux0 free, aux1 total
 * MEMCPY_HTOD      copy.dst device, copy.src data offset, copy.len, stream
 * MEMCPY_DTOH      copy.dst data offset, copy.src device, copy.len, stream
 * MEMCPY_DTOD      copy.dst, copy.src device, copy.len, stream
 * MEMSET           memset.*, stream
 * MODULE_LOAD      obj.handle ctx, image at obj.data_off/data_len
 *                                             -> aux0 module
 * MODULE_UNLOAD    obj.handle module
 * MODULE_GET_FUNC  obj.handle module, NUL-terminated name in the data area;
 *                  the daemon overwrites the same data-area bytes with a
 *                  struct axon_func_info (data_len must hold it)
 *                                             -> aux0 function
 * MODULE_GET_GLOBAL obj.handle module, name in the data area
 *                                             -> aux0 address, aux1 size
 * LAUNCH           launch.*, stream
 * STREAM_CREATE    obj.handle ctx, obj.arg0 flags, obj.arg1 priority
 *                                             -> aux0 stream, aux1 frontier slot
 * STREAM_DESTROY   obj.handle stream
 * STREAM_SYNC      stream                     -> res: pending error or 0,
 *                                                once everything submitted to
 *                                                the stream before it is done
 * STREAM_WAIT_EVENT stream, obj.handle event
 * EVENT_CREATE     obj.handle ctx, obj.arg0 flags -> aux0 event
 * EVENT_DESTROY    obj.handle event
 * EVENT_RECORD     stream, obj.handle event
 * EVENT_ELAPSED    obj.handle start, obj.arg0 end event
 *                                             -> aux0 nanoseconds
 * FUNC_GET_ATTR    obj.handle function, obj.arg0 CUfunction_attribute
 *                                             -> aux0 value
 *
 * Stream-ordered operations (MEMCPY_*, MEMSET, LAUNCH, EVENT_RECORD,
 * STREAM_WAIT_EVENT) each advance their stream's sequence by one, on both
 * sides, whether they succeed or not; frontier[slot] counts those the device
 * finished. A data-area buffer named by a stream-ordered operation stays in
 * use until the frontier passes it; any other buffer is free once the
 * daemon has taken the SQE (sq_head passed it).
 */
enum axon_op {
	AXON_OP_NOP,
	AXON_OP_CTX_CREATE,
	AXON_OP_CTX_DESTROY,
	AXON_OP_CTX_SYNC,
	AXON_OP_MEM_MAP,
	AXON_OP_MEM_UNMAP,
	AXON_OP_MEM_GET_INFO,
	AXON_OP_MEMCPY_HTOD,
	AXON_OP_MEMCPY_DTOH,
	AXON_OP_MEMCPY_DTOD,
	AXON_OP_MEMSET,
	AXON_OP_MODULE_LOAD,
	AXON_OP_MODULE_UNLOAD,
	AXON_OP_MODULE_GET_FUNC,
	AXON_OP_MODULE_GET_GLOBAL,
	AXON_OP_LAUNCH,
	AXON_OP_STREAM_CREATE,
	AXON_OP_STREAM_DESTROY,
	AXON_OP_STREAM_SYNC,
	AXON_OP_STREAM_WAIT_EVENT,
	AXON_OP_EVENT_CREATE,
	AXON_OP_EVENT_DESTROY,
	AXON_OP_EVENT_RECORD,
	AXON_OP_EVENT_ELAPSED,
	AXON_OP_FUNC_GET_ATTR,
	AXON_OP_LAST
};

/* Device addresses minted by clients are aligned to this. */
#define AXON_MINT_ALIGN		256

/**
 * struct axon_func_info - a kernel's parameter layout, returned by
 * AXON_OP_MODULE_GET_FUNC so the client can pack cuLaunchKernel arguments
 * @nparams:	number of parameters
 * @args_size:	bytes of the packed parameter buffer
 * @param:	offset (low 16 bits) and size (high 16 bits) of each parameter
 */
struct axon_func_info {
	__u32 nparams;
	__u32 args_size;
	__u32 param[AXON_MAX_KERNEL_PARAMS];
};

#define AXON_PARAM_OFFSET(p)	((p) & 0xffffU)
#define AXON_PARAM_SIZE(p)	((p) >> 16)
#define AXON_PARAM_MAKE(off, size) (((__u32)(size) << 16) | ((off) & 0xffffU))

/* ------------------------------------------------------------------------ */
/* Connect                                                                  */
/* ------------------------------------------------------------------------ */

/* Feature bits returned at connect (struct axon_params.features). */
enum {
	AXON_FEAT_DEFERRED_BIT,		/* AXON_SQE_F_DEFERRED */
	AXON_FEAT_MINT_BIT,		/* client-minted addresses */
	AXON_FEAT_FRONTIER_BIT,		/* per-stream frontier */
	AXON_FEAT_LAST
};
#define AXON_FEAT_DEFERRED	(1U << AXON_FEAT_DEFERRED_BIT)
#define AXON_FEAT_MINT		(1U << AXON_FEAT_MINT_BIT)
#define AXON_FEAT_FRONTIER	(1U << AXON_FEAT_FRONTIER_BIT)

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

enum axon_hello_kind {
	AXON_HELLO_CLIENT	= 1,	/* become a client: rings follow */
	AXON_HELLO_STATS	= 2,	/* read the stats document, then close */
	AXON_HELLO_TRACE	= 3,	/* follow one client's calls */
};

/**
 * struct axon_trace_event - one record of AXON_HELLO_TRACE
 * A tracer says hello with kind AXON_HELLO_TRACE and target_client set to
 * the client to follow, or target_pid (the newest client of that process).
 * After the welcome the daemon sends these records, several per message,
 * until either side closes. Records the tracer is too slow to take are
 * dropped and counted in @dropped of the next record sent; clients that
 * nobody traces pay one predictable branch.
 * @time_ns:	CLOCK_MONOTONIC when the daemon took the SQE or posted the CQE
 * @client_id:	the traced client
 * @user_data:	from the SQE
 * @kind:	AXON_TRACE_SUBMIT (SQE taken) or AXON_TRACE_COMPLETE
 * @opcode:	AXON_OP_*
 * @sqe_flags:	the SQE's flags
 * @res:	CUresult (COMPLETE only; deferred successes have none)
 * @latency_ns:	COMPLETE: from taking the SQE to posting the CQE
 * @stream:	the SQE's stream handle
 * @args:	the op's first four argument words (SQE union, raw)
 * @dropped:	records lost since the previous one sent
 */
struct axon_trace_event {
	__u64 time_ns;
	__u64 client_id;
	__u64 user_data;
	__u8  kind;
	__u8  opcode;
	__u8  sqe_flags;
	__u8  resv0;
	__s32 res;
	__u64 latency_ns;
	__u64 stream;
	__u64 args[4];
	__u32 dropped;
	__u32 resv1;
};

#define AXON_TRACE_SUBMIT	1
#define AXON_TRACE_COMPLETE	2

/**
 * struct axon_hello - first message from a socket client
 * @magic:	AXON_MAGIC
 * @abi_major, @abi_minor: the client's ABI; the major must match
 * @kind:	AXON_HELLO_*
 * @flags:	must be zero
 * @target_client, @target_pid: AXON_HELLO_TRACE only, else zero
 * @resv:	must be zero
 * @params:	requested sizes (AXON_HELLO_CLIENT)
 */
struct axon_hello {
	__u32 magic;
	__u16 abi_major;
	__u16 abi_minor;
	__u32 kind;
	__u32 flags;
	__u64 target_client;
	__u32 target_pid;
	__u32 resv;
	struct axon_params params;
};

/**
 * struct axon_welcome - the daemon's answer
 * @status:	0, or a negative errno (-EPROTO: ABI major mismatch,
 *		-EINVAL: bad hello, -EBUSY: too many clients, -ENOMEM)
 * @message:	NUL-terminated explanation when status is not 0
 * With status 0 it carries three descriptors (SCM_RIGHTS): the region, the
 * info page, the doorbell eventfd. For AXON_HELLO_STATS it is followed by the
 * stats document (JSON) in messages of up to AXON_STATS_CHUNK bytes, then the
 * daemon closes the connection.
 */
struct axon_welcome {
	__u32 magic;
	__u16 abi_major;
	__u16 abi_minor;
	__s32 status;
	__u32 resv0;
	struct axon_params params;
	char message[128];
};

#define AXON_STATS_CHUNK	65536

/* ------------------------------------------------------------------------ */
/* Info page                                                                */
/* ------------------------------------------------------------------------ */

/**
 * struct axon_device_info - one device, as the daemon's backend reports it
 * @name:	NUL-terminated device name
 * @uuid:	16-byte UUID
 * @total_mem:	bytes of device memory
 * @attr:	value of every CUdevice_attribute, indexed by its number
 * @cc_major, @cc_minor: compute capability
 * @vmm_granularity, @vmm_granularity_recommended: for
 *		cuMemGetAllocationGranularity
 * @pci_domain, @pci_bus, @pci_device: PCI location
 */
struct axon_device_info {
	char	name[256];
	__u8	uuid[16];
	__u64	total_mem;
	__s32	attr[AXON_MAX_ATTRIBUTES];
	__u32	cc_major;
	__u32	cc_minor;
	__u64	vmm_granularity;
	__u64	vmm_granularity_recommended;
	__u32	pci_domain;
	__u32	pci_bus;
	__u32	pci_device;
	__u32	resv[13];
};

/**
 * struct axon_info - the global read-only info page
 * @magic:	AXON_MAGIC
 * @abi_major, @abi_minor: the daemon's ABI
 * @driver_version: what cuDriverGetVersion returns (e.g. 13000)
 * @ndevices:	devices visible to clients
 * @backend:	NUL-terminated backend name ("sim", "cuda")
 * @start_time_ns: daemon start, CLOCK_REALTIME
 * @device:	per device
 */
struct axon_info {
	__u32	magic;
	__u16	abi_major;
	__u16	abi_minor;
	__u32	driver_version;
	__u32	ndevices;
	char	backend[16];
	__u64	start_time_ns;
	__u64	resv[8];
	struct axon_device_info device[AXON_MAX_DEVICES];
};

/* ------------------------------------------------------------------------ */
/* Kernel transport (reserved for /dev/axon; see Documentation/abi.md)      */
/* ------------------------------------------------------------------------ */

#define AXON_OFF_CLIENT_PAGE	0x00000000ULL
#define AXON_OFF_DAEMON_PAGE	0x01000000ULL
#define AXON_OFF_FRONTIER	0x02000000ULL
#define AXON_OFF_SQES		0x03000000ULL
#define AXON_OFF_CQES		0x04000000ULL
#define AXON_OFF_DATA		0x08000000ULL
#define AXON_OFF_INFO		0x10000000ULL

/**
 * struct axon_enter - AXON_IOC_ENTER argument
 * @to_submit:	SQEs just published
 * @min_complete: wait until this many CQEs are available
 * @flags:	AXON_ENTER_*
 * @timeout_ns:	absolute CLOCK_MONOTONIC deadline, 0 for none
 */
struct axon_enter {
	__u32 to_submit;
	__u32 min_complete;
	__u32 flags;
	__u32 resv;
	__u64 timeout_ns;
};

#define AXON_ENTER_GETEVENTS	(1U << 0)

/**
 * struct axon_charge - AXON_IOC_CHARGE / AXON_IOC_UNCHARGE argument (daemon)
 * @client_id:	the client charged
 * @bytes:	amount
 * @kind:	AXON_CHARGE_*
 */
struct axon_charge {
	__u64 client_id;
	__u64 bytes;
	__u32 kind;
	__u32 resv;
};

#define AXON_CHARGE_DEVICE_MEM	0

#define AXON_IOC_MAGIC		0xAE
#define AXON_IOC_SETUP		_IOWR(AXON_IOC_MAGIC, 0x00, struct axon_params)
#define AXON_IOC_ENTER		_IOW(AXON_IOC_MAGIC, 0x01, struct axon_enter)
#define AXON_IOC_ATTACH		_IO(AXON_IOC_MAGIC, 0x10)
#define AXON_IOC_CHARGE		_IOW(AXON_IOC_MAGIC, 0x11, struct axon_charge)
#define AXON_IOC_UNCHARGE	_IOW(AXON_IOC_MAGIC, 0x12, struct axon_charge)

/* Generic netlink family (reserved) */
#define AXON_GENL_NAME		"axon"
#define AXON_GENL_VERSION	1
#define AXON_GENL_MCGRP_EVENTS	"events"

#endif /* _UAPI_LINUX_AXON_H */
