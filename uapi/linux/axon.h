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
#ifndef __KERNEL__
/*
 * enum axon_op and each op's named SQE fields, generated at build time from
 * uapi/axon-ops.def (installed next to this header). The kernel module only
 * carries SQEs and needs neither.
 */
#include <linux/axon_ops.h>
#endif

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
	AXON_HANDLE_GRAPH	= 6,	/* a captured graph (CUgraph) */
	AXON_HANDLE_GRAPH_EXEC	= 7,	/* an instantiated graph (CUgraphExec) */
	AXON_HANDLE_MEM		= 8,	/* physical memory (CUmemGenericAllocationHandle) */
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
	/* Set by a daemon that ends the connection (a device fault made it
	 * restart): the CUresult the client should answer from then on. */
	__u32 gone_error;
	__u32 resv2[6];
};

/* AXON_OP_DEVOUT_READ devout_read.which: which of the client's outputs */
#define AXON_DEVOUT_STDOUT	0	/* a kernel's printf */
#define AXON_DEVOUT_STDERR	1	/* the driver's messages (failed assert) */

/* The daemon is asleep: a client that submitted must ring the doorbell. */
#define AXON_SQ_F_NEED_WAKEUP	(1U << 0)
/* The daemon disconnected the client or shut down in order; no further
 * completions will arrive. A daemon that crashed cannot say so: clients see
 * their socket close (libaxon's axon_daemon_alive). */
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
 * The rest is a union of 40 bytes, five 64-bit words: one named member per
 * operation (sqe->mem_map.handle for AXON_OP_MEM_MAP; linux/axon_ops.h,
 * generated from uapi/axon-ops.def), written by libaxon's axon_prep_<op>().
 * Every word no field of the op occupies must be zero. The ABI 1.0 family
 * members (copy, mem, obj) name the same bytes for several ops at once and
 * stay as aliases; raw[] is the five words.
 */
struct axon_sqe {
	__u8	opcode;
	__u8	flags;
	__u16	resv0;
	__u32	resv1;
	__u64	user_data;
	__u64	stream;
	union {
#ifdef AXON_SQE_OP_MEMBERS
		AXON_SQE_OP_MEMBERS
#endif
		/* AXON_OP_MEMCPY_*: dst/src are device addresses or, for the
		 * host side, a data-area offset; with AXON_COPY_F_HOSTMEM in
		 * host_flags (HTOD, DTOH only) the host side is instead an
		 * address in the client inside one of its shared host regions
		 * (AXON_OP_HOSTMEM_REGISTER), which the daemon reads or writes
		 * directly */
		struct {
			__u64 dst;
			__u64 src;
			__u64 len;
			union {
				struct {
					__u64 host_flags;
					__u64 resv1;	/* must be zero */
				};
				__u64 resv[2];	/* the ABI 1.0 name */
			};
		} copy;
		/* AXON_OP_MEM_MAP / AXON_OP_MEM_UNMAP; resv[0..1] are
		 * mem_map.handle and mem_map.offset */
		struct {
			__u64 ctx;
			__u64 addr;
			__u64 len;
			__u64 resv[2];
		} mem;
		/* The object ops: an object handle, a payload in the data
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

/*
 * AXON_OP_PRIVATE_CALL: private_call.ctx context, private_call.call
 * AXON_PRIV_*, private_call.arg the object (for AXON_PRIV_CTX_OBJ_QUERY: a
 * token CTX_OBJ gave this client); aux[0] the answer. Entry points of the
 * driver's private table 21318c60 that cuBLAS calls and whose meaning is
 * not known: the daemon makes the same call on the client's own context, so
 * the answer is the driver's, and hands out only tokens for the objects it
 * returns.
 */
enum axon_priv_call {
	AXON_PRIV_CTX_OBJ,		/* 21318c60 slot 51: (ctx, 0, &obj, 0) */
	AXON_PRIV_CTX_OBJ_QUERY,	/* 21318c60 slot 39: (ctx, obj, &value) */
	/* 1734dc26 slot 4: (&a, &b), two objects of the process (cuBLASLt's
	 * half-precision heuristics); arg 0 -> aux[0] a token for the
	 * pair. */
	AXON_PRIV_LT_OBJS,
	/* 1734dc26 slot 13: (a, b, x, y, &int value, 0); arg the pair's
	 * token | x << 32 | y << 48, x and y below AXON_PRIV_LT_ARG_MAX ->
	 * aux[0] the value. */
	AXON_PRIV_LT_QUERY,
};

#define AXON_PRIV_LT_ARG_MAX	256

/* AXON_OP_OCCUPANCY queries; the answer is aux[0]. */
enum axon_occ_query {
	AXON_OCC_MAX_ACTIVE_CLUSTERS,		/* cuOccupancyMaxActiveClusters */
	AXON_OCC_MAX_POTENTIAL_CLUSTER_SIZE,	/* cuOccupancyMaxPotentialClusterSize */
};

/**
 * struct axon_cqe - one completion, 32 bytes
 * @user_data:	from the SQE
 * @res:	CUresult
 * @flags:	reserved, 0
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
 * The operations (enum axon_op) and each one's fields, flags and result are
 * described once, in uapi/axon-ops.def: linux/axon_ops.h is generated from
 * it, and Documentation/abi.md (section 6) says what each op checks.
 *
 * Stream-ordered operations (MEMCPY_*, MEMSET, LAUNCH, EVENT_RECORD,
 * STREAM_WAIT_EVENT) each advance their stream's sequence by one, on both
 * sides, whether they succeed or not; frontier[slot] counts those the device
 * finished. A data-area buffer read or written by the device (MEMCPY_*)
 * stays in use until the frontier passes its operation. Kernel parameters
 * (LAUNCH), module images and names are copied out when the daemon takes
 * the SQE, so their buffers are free once sq_head passed it; a buffer an
 * operation answers into (MODULE_GET_FUNC) is free once its CQE is seen.
 */

/* struct axon_sqe: memcpy_htod.host_flags, memcpy_dtoh.host_flags */
#define AXON_COPY_F_HOSTMEM	(1ULL << 0)	/* host side in a shared region */
#define AXON_COPY_F_ALL		AXON_COPY_F_HOSTMEM

/**
 * struct axon_hostmem_fd - the socket message that hands the daemon the
 * memfd behind a shared host region (unix transport only), with the
 * descriptor attached as SCM_RIGHTS; AXON_OP_HOSTMEM_REGISTER then names it
 * by @cookie. Any other message on the socket after the hello ends the
 * connection, as does holding more than AXON_HOSTMEM_MAX_PENDING unclaimed
 * descriptors.
 * @magic:	AXON_MAGIC
 * @kind:	AXON_HOSTMEM_FD_KIND
 * @cookie:	the client's non-zero name for the descriptor, unique among
 *		its unclaimed ones
 *
 * Only a daemon that sets AXON_FEAT_HOSTMEM in the client's features takes
 * these messages (an older one ends the connection).
 *
 * The descriptor must be a memfd (MFD_ALLOW_SEALING) sealed against
 * shrinking (F_SEAL_SHRINK), opened read-write, at least as large as the
 * region rounded up to whole pages: the daemon maps it MAP_SHARED, so a
 * client can neither make it SIGBUS nor pass any other file.
 */
struct axon_hostmem_fd {
	__u32 magic;
	__u32 kind;
	__u64 cookie;
};

#define AXON_HOSTMEM_FD_KIND		1
#define AXON_HOSTMEM_MAX_PENDING	64

/**
 * struct axon_hostmem_info - written by AXON_OP_HOSTMEM_REGISTER into the
 * data-area buffer its SQE names, before its completion
 * @devptr:	the address kernels use for the region's first byte: the
 *		client's own address (hostmem_register.addr), where the
 *		daemon maps the region too (unified addressing, as CUDA gives all pinned
 *		memory; an address taken in the daemon fails the REGISTER
 *		with ALREADY_MAPPED); 0 where the driver's device pointer
 *		differs (no device pointer; copies still work). Never an
 *		address of the daemon's own
 * @resv:	zero
 */
struct axon_hostmem_info {
	__u64 devptr;
	__u64 resv[3];
};

/* Stream priorities (stream_create.priority) run from 0 (lowest) to this. */
#define AXON_STREAM_PRIORITY_GREATEST	(-5)

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

/**
 * struct axon_launch_attr - one cuLaunchKernelEx attribute (LAUNCH_EX)
 * @id:		CUlaunchAttributeID
 * @resv:	must be zero
 * @val:	the value, by id: CLUSTER_DIMENSION and PREFERRED_CLUSTER_DIMENSION
 *		x, y, z in the low/high halves of val[0] and the low half of
 *		val[1]; ACCESS_POLICY_WINDOW base_ptr (a device address of the
 *		client) in val[0], num_bytes in val[1], hitRatio's float bits
 *		in the low half of val[2], hitProp and missProp in the low and
 *		high halves of val[3]; MEM_SYNC_DOMAIN_MAP default and remote
 *		in bits 0-7 and 8-15 of val[0]; every other id one int in
 *		val[0], sign-extended. Unused words must be zero.
 */
struct axon_launch_attr {
	__u32 id;
	__u32 resv;
	__u64 val[4];
};

/**
 * struct axon_launch_ex - AXON_OP_LAUNCH_EX's data-area payload
 * @grid, @block, @shared_bytes: as AXON_OP_LAUNCH's
 * @nattrs:	attributes following this header (at most AXON_MAX_LAUNCH_ATTRS)
 * @args_off:	offset of the packed parameters from the start of this
 *		header (8-byte aligned, after the attributes)
 * @resv:	must be zero
 * The payload is the header, @nattrs struct axon_launch_attr, and the
 * function's args_size bytes of parameters at @args_off.
 */
struct axon_launch_ex {
	__u32 grid[3];
	__u32 block[3];
	__u32 shared_bytes;
	__u32 nattrs;
	__u32 args_off;
	__u32 resv;
	struct axon_launch_attr attrs[];
};

#define AXON_MAX_LAUNCH_ATTRS	32

/* struct axon_tensor_map_req.kind */
enum {
	AXON_TENSOR_MAP_TILED		= 0,
	AXON_TENSOR_MAP_IM2COL		= 1,
	AXON_TENSOR_MAP_IM2COL_WIDE	= 2,
};

#define AXON_TENSOR_MAP_BYTES	128	/* sizeof(CUtensorMap) */

/**
 * struct axon_tensor_map_req - AXON_OP_TENSOR_MAP_ENCODE's request: the
 * arguments of cuTensorMapEncodeTiled / Im2col / Im2colWide, by @kind
 * @kind:	AXON_TENSOR_MAP_*
 * @data_type, @rank, @interleave, @swizzle, @l2_promotion, @oob_fill:
 *		the CUtensorMap* enums and the rank
 * @wide_mode:	CUtensorMapIm2ColWideMode (IM2COL_WIDE), else 0
 * @channels_per_pixel, @pixels_per_column: IM2COL and IM2COL_WIDE, else 0
 * @lower, @upper: IM2COL: rank - 2 pixel box corners; IM2COL_WIDE: the
 *		width corners in [0]; else 0
 * @box_dim:	TILED: rank entries, else 0
 * @elem_strides: rank entries
 * @global_addr: a device address of the client
 * @global_dim:	rank entries
 * @global_strides: rank - 1 entries, in bytes
 * Entries past the rank must be zero.
 */
struct axon_tensor_map_req {
	__u32 kind;
	__u32 data_type;
	__u32 rank;
	__u32 interleave;
	__u32 swizzle;
	__u32 l2_promotion;
	__u32 oob_fill;
	__u32 wide_mode;
	__u32 channels_per_pixel;
	__u32 pixels_per_column;
	__s32 lower[3];
	__s32 upper[3];
	__u32 box_dim[5];
	__u32 elem_strides[5];
	__u64 global_addr;
	__u64 global_dim[5];
	__u64 global_strides[4];
};

/* AXON_OP_HOST_FUNC host_func.kind */
#define AXON_HOST_FUNC_WAIT	0
#define AXON_HOST_FUNC_DONE	1
#define AXON_HOST_FUNC_NODE	2	/* in a capture: a node (GRAPH_LAUNCH) */

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
	AXON_FEAT_HOSTMEM_BIT,		/* shared host memory: HOSTMEM_*, AXON_COPY_F_HOSTMEM */
	AXON_FEAT_LAST
};
#define AXON_FEAT_DEFERRED	(1U << AXON_FEAT_DEFERRED_BIT)
#define AXON_FEAT_MINT		(1U << AXON_FEAT_MINT_BIT)
#define AXON_FEAT_FRONTIER	(1U << AXON_FEAT_FRONTIER_BIT)
#define AXON_FEAT_HOSTMEM	(1U << AXON_FEAT_HOSTMEM_BIT)

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
 *		-EINVAL: bad hello, -EBUSY: too many clients, -ENOMEM,
 *		-ESRCH: no such trace target, or the errno of a failed
 *		setup step), with @message saying which
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
	/* CU_LIMIT_PRINTF_FIFO_SIZE of a new context (0: unknown) */
	__u32	printf_fifo_size;
	__u32	resv[12];
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
/* Kernel transport: /dev/axon (Documentation/kmod.md is the reference)     */
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

#define AXON_ENTER_GETEVENTS	(1U << 0)
#define AXON_ENTER_F_ALL	AXON_ENTER_GETEVENTS

/**
 * struct axon_charge - AXON_IOC_CHARGE / AXON_IOC_UNCHARGE argument (daemon)
 * @client_id:	the client charged
 * @bytes:	amount (0 is a no-op)
 * @kind:	AXON_CHARGE_*
 * @resv:	must be zero
 *
 * CHARGE adds @bytes to the client's cgroup (the one it was in when it
 * opened /dev/axon) and to every ancestor; if any of them would pass its
 * limit nothing is charged and the ioctl fails with -EDQUOT. UNCHARGE gives
 * back at most what the client holds (-EINVAL otherwise). Unknown or gone
 * client: -ENOENT.
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
 * @flags:	in: must be zero
 * @fd:		out: a new O_RDWR | O_CLOEXEC descriptor on which the daemon
 *		mmaps that client's region (daemon permissions); it keeps the
 *		client's memory alive until it is closed and unmapped
 * @params:	in: user pointer to a struct axon_params that receives the
 *		client's geometry (sizes and offsets; the fields the daemon
 *		gives in ACCEPT are zero until then), or 0
 * @resv:	must be zero
 */
struct axon_client_fd {
	__u64 client_id;
	__u32 flags;
	__s32 fd;
	__u64 params;
	__u64 resv;
};

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
#define AXON_EV_OPEN		(1U << AXON_EV_OPEN_BIT)
#define AXON_EV_EXISTING	(1U << AXON_EV_EXISTING_BIT)
#define AXON_EV_DOORBELL	(1U << AXON_EV_DOORBELL_BIT)
#define AXON_EV_GONE		(1U << AXON_EV_GONE_BIT)
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

#define AXON_IOC_MAGIC		0xAE
/* client */
#define AXON_IOC_SETUP		_IOWR(AXON_IOC_MAGIC, 0x00, struct axon_params)
#define AXON_IOC_ENTER		_IOW(AXON_IOC_MAGIC, 0x01, struct axon_enter)
/* daemon; ATTACH's argument is a flags word (must be 0); it returns the
 * number of clients announced with AXON_EV_EXISTING */
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
 *   AXON_CMD_GET_LIMIT   doit with CGROUP_PATH or CGROUP_ID (+ KIND);
 *                        dumpit: every cgroup the module tracks. Reply:
 *                        CGROUP_ID, CGROUP_PATH, KIND, USAGE, LIMIT, PEAK,
 *                        FAILCNT
 *   AXON_CMD_SET_LIMIT   doit, CAP_NET_ADMIN: CGROUP_PATH or CGROUP_ID,
 *                        KIND (default device memory), LIMIT (bytes;
 *                        AXON_LIMIT_NONE removes the limit)
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
