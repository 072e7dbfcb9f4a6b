/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * axon: the protocol between GPU clients and the axon daemon (axond).
 *
 * A client owns one shared region (its parts, their order and the rings'
 * rules are in <linux/axon.h>, which this header includes):
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
 *   /dev/axon  the kernel allocates and maps the region (<linux/axon.h>:
 *              ioctls, mmap offsets, netlink).
 *   tcp:H:P    reserved.
 *
 * Status codes in completions are CUDA driver API codes (CUresult); 0 is
 * success.
 */
#ifndef _UAPI_AXON_PROTOCOL_H
#define _UAPI_AXON_PROTOCOL_H

#include <linux/types.h>
#include <linux/axon.h>
/*
 * enum axon_op and each op's named SQE fields, generated at build time from
 * uapi/axon-ops.def (installed next to this header).
 */
#include <axon/ops.h>

#define AXON_MAGIC		0x4e4f5841U	/* "AXON" little-endian */

#define AXON_DEFAULT_SOCKET	"/run/axon/axond.sock"

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

/* AXON_OP_DEVOUT_READ devout_read.which: which of the client's outputs */
#define AXON_DEVOUT_STDOUT	0	/* a kernel's printf */
#define AXON_DEVOUT_STDERR	1	/* the driver's messages (failed assert) */

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
 * operation (sqe->mem_map.handle for AXON_OP_MEM_MAP; <axon/ops.h>,
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
 * @flags:	AXON_CQE_F_*
 * @aux:	returned values (new handle, address, sizes), per operation
 */
struct axon_cqe {
	__u64	user_data;
	__s32	res;
	__u32	flags;
	__u64	aux[2];
};

/*
 * The op failed (CUDA_ERROR_OUT_OF_MEMORY) because the kernel charges
 * through the dmem controller and the client had not reserved enough
 * (<linux/axon.h>, struct axon_reserve): nothing was done; reserve the
 * daemon page's reserve_want bytes and make the call again.
 */
#define AXON_CQE_F_RESERVE	0x1U

/* ------------------------------------------------------------------------ */
/* Operations                                                               */
/* ------------------------------------------------------------------------ */

/*
 * The operations (enum axon_op) and each one's fields, flags and result are
 * described once, in uapi/axon-ops.def: <axon/ops.h> is generated from
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

/* struct axon_sqe: ctx_limit.flags */
#define AXON_CTX_LIMIT_SET	(1U << 0)	/* set the limit to value */
#define AXON_CTX_LIMIT_F_ALL	AXON_CTX_LIMIT_SET

/* struct axon_sqe: memcpy_2d.dir, which sides of the rectangle are device
 * addresses; the other one is the host side (memcpy_2d.host_flags). */
enum axon_copy_2d_dir {
	AXON_COPY_2D_HTOD,
	AXON_COPY_2D_DTOH,
	AXON_COPY_2D_DTOD,
};

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

/*
 * hostmem_register.flags: besides CU_MEMHOSTALLOC_PORTABLE, _DEVICEMAP and
 * _WRITECOMBINED (1, 2, 4), the device may only read the region
 * (cuMemHostRegister's CU_MEMHOSTREGISTER_READ_ONLY, the same bit): copies
 * and memsets that would write it are refused.
 */
#define AXON_HOSTMEM_F_READ_ONLY	0x08

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
/* Connect (socket): hello and welcome; struct axon_params in <linux/axon.h> */
/* ------------------------------------------------------------------------ */

enum axon_hello_kind {
	AXON_HELLO_CLIENT	= 1,	/* become a client: rings follow */
	AXON_HELLO_STATS	= 2,	/* read the stats document, then close */
	AXON_HELLO_TRACE	= 3,	/* follow one client's calls */
	AXON_HELLO_LIMIT	= 4,	/* a cgroup's limit for socket clients */
};

/*
 * AXON_HELLO_LIMIT: the hello carries the cgroup's directory (an open
 * descriptor, SCM_RIGHTS), target_pid AXON_LIMIT_OP_GET or _SET and, to
 * set, target_client the limit in bytes (AXON_LIMIT_NONE: none). The
 * welcome's status says how it went; its params.resv[0..3] carry the
 * cgroup's limit, usage, peak and failcnt, then the daemon closes. Setting
 * needs an administrator (access.c) or write and search permission on the
 * cgroup's parent directory. Socket clients only: the kernel module keeps
 * its own (netlink).
 */
#define AXON_LIMIT_OP_GET	1
#define AXON_LIMIT_OP_SET	2

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

/*
 * The kernel lays regions out and sizes the info page from the sizes in
 * <linux/axon.h> without seeing these structs.
 */
#ifdef __cplusplus
#define AXON_STATIC_ASSERT(c, m)	static_assert(c, m)
#else
#define AXON_STATIC_ASSERT(c, m)	_Static_assert(c, m)
#endif
AXON_STATIC_ASSERT(sizeof(struct axon_sqe) == AXON_SQE_SIZE,
		   "struct axon_sqe is AXON_SQE_SIZE bytes");
AXON_STATIC_ASSERT(sizeof(struct axon_cqe) == AXON_CQE_SIZE,
		   "struct axon_cqe is AXON_CQE_SIZE bytes");
AXON_STATIC_ASSERT(sizeof(struct axon_info) == AXON_INFO_SIZE,
		   "struct axon_info is AXON_INFO_SIZE bytes");
AXON_STATIC_ASSERT(sizeof(struct axon_client_page) <= AXON_PAGE_SIZE &&
		   sizeof(struct axon_daemon_page) <= AXON_PAGE_SIZE,
		   "each header page fits a page");
#undef AXON_STATIC_ASSERT

#endif /* _UAPI_AXON_PROTOCOL_H */
