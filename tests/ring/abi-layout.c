// SPDX-License-Identifier: MIT
/*
 * abi-layout: pins the axon ABI (uapi/linux/axon.h, the kernel interface,
 * and uapi/axon/protocol.h, the daemon protocol). Every struct's size and
 * every field's offset is written out here by hand from the header's
 * documentation, together with the constants, the op numbers, the handle
 * and parameter macros and the ioctl numbers. A change to any of them is an
 * ABI change and must fail here first (then bump AXON_ABI_* and update this
 * file on purpose).
 */
#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <axon/libaxon.h>

#define SIZE(type, n)							\
	ck_assert_msg(sizeof(type) == (n), "sizeof(%s) is %zu, ABI says %zu", \
		      #type, sizeof(type), (size_t)(n))
#define OFF(type, field, n)						\
	ck_assert_msg(offsetof(type, field) == (n),			\
		      "offsetof(%s, %s) is %zu, ABI says %zu", #type, #field, \
		      offsetof(type, field), (size_t)(n))
#define FSIZE(type, field, n)						\
	ck_assert_msg(sizeof(((type *)0)->field) == (n),		\
		      "sizeof(%s.%s) is %zu, ABI says %zu", #type, #field, \
		      sizeof(((type *)0)->field), (size_t)(n))
/* A field at offset n of n bytes. */
#define FIELD(type, field, off, size)					\
	do {								\
		OFF(type, field, off);					\
		FSIZE(type, field, size);				\
	} while (0)

/* ---- constants ---------------------------------------------------------- */

START_TEST(test_constants)
{
	const char magic[4] = { 'A', 'X', 'O', 'N' };
	uint32_t m;

	memcpy(&m, magic, 4);
	ck_assert_uint_eq(AXON_MAGIC, 0x4e4f5841U);
	ck_assert_uint_eq(AXON_MAGIC, m);	/* little-endian "AXON" */
	ck_assert_uint_eq(AXON_ABI_MAJOR, 2);
	ck_assert_uint_eq(AXON_SQE_SIZE, 64);
	ck_assert_uint_eq(AXON_CQE_SIZE, 32);
	ck_assert_uint_eq(AXON_INFO_SIZE, 22376);
	ck_assert_uint_eq(AXON_PAGE_SIZE, 4096);
	ck_assert_uint_eq(AXON_CACHELINE, 64);
	ck_assert_uint_eq(AXON_MAX_SQ_ENTRIES, 4096);
	ck_assert_uint_eq(AXON_MAX_SQ_ENTRIES & (AXON_MAX_SQ_ENTRIES - 1), 0);
	ck_assert_uint_eq(AXON_MAX_FRONTIER, 2048);
	ck_assert_uint_eq(AXON_MAX_DATA_SIZE, 1ULL << 30);
	ck_assert_uint_eq(AXON_MAX_DEVICES, 16);
	ck_assert_uint_eq(AXON_MAX_ATTRIBUTES, 256);
	ck_assert_uint_eq(AXON_MAX_KERNEL_PARAMS, 512);
	ck_assert_uint_eq(AXON_MAX_ARGS_SIZE, 32768);
	ck_assert_uint_eq(AXON_MINT_ALIGN, 256);
	ck_assert_uint_eq(AXON_STATS_CHUNK, 65536);
	ck_assert_str_eq(AXON_DEFAULT_SOCKET, "/run/axon/axond.sock");
	ck_assert_str_eq(AXON_DEVICE_PATH, "/dev/axon");

	/* Flags and feature bits. */
	ck_assert_uint_eq(AXON_CQ_F_WAITING, 1);
	ck_assert_uint_eq(AXON_SQ_F_NEED_WAKEUP, 1);
	ck_assert_uint_eq(AXON_SQ_F_DAEMON_GONE, 2);
	ck_assert_uint_eq(AXON_SQE_F_DEFERRED, 1);
	ck_assert_uint_eq(AXON_SQE_F_ALL, 1);
	ck_assert_uint_eq(AXON_FEAT_DEFERRED, 1);
	ck_assert_uint_eq(AXON_FEAT_MINT, 2);
	ck_assert_uint_eq(AXON_FEAT_FRONTIER, 4);
	ck_assert_uint_eq(AXON_FEAT_HOSTMEM, 8);
	ck_assert_uint_eq(AXON_FEAT_LAST, 4);
	ck_assert_uint_eq(AXON_FEAT_DEFERRED, 1U << AXON_FEAT_DEFERRED_BIT);
	ck_assert_uint_eq(AXON_FEAT_MINT, 1U << AXON_FEAT_MINT_BIT);
	ck_assert_uint_eq(AXON_FEAT_FRONTIER, 1U << AXON_FEAT_FRONTIER_BIT);
	ck_assert_uint_eq(AXON_FEAT_HOSTMEM, 1U << AXON_FEAT_HOSTMEM_BIT);
	ck_assert_uint_eq(AXON_CLIENT_STATE_ACTIVE, 0);
	ck_assert_uint_eq(AXON_CLIENT_STATE_DRAINING, 1);
	ck_assert_uint_eq(AXON_CLIENT_STATE_DEAD, 2);
	ck_assert_uint_eq(AXON_HELLO_CLIENT, 1);
	ck_assert_uint_eq(AXON_HELLO_STATS, 2);
	ck_assert_uint_eq(AXON_HELLO_TRACE, 3);
	ck_assert_uint_eq(AXON_ENTER_GETEVENTS, 1);
	ck_assert_uint_eq(AXON_CLIENT_FD_DELEGATE, 1);
	ck_assert_uint_eq(AXON_CLIENT_FD_F_ALL, 1);
	ck_assert_uint_eq(AXON_CHARGE_DEVICE_MEM, 0);

	/* Handle types. */
	ck_assert_uint_eq(AXON_HANDLE_NONE, 0);
	ck_assert_uint_eq(AXON_HANDLE_CTX, 1);
	ck_assert_uint_eq(AXON_HANDLE_STREAM, 2);
	ck_assert_uint_eq(AXON_HANDLE_EVENT, 3);
	ck_assert_uint_eq(AXON_HANDLE_MODULE, 4);
	ck_assert_uint_eq(AXON_HANDLE_FUNC, 5);
	ck_assert_uint_eq(AXON_HANDLE_GRAPH, 6);
	ck_assert_uint_eq(AXON_HANDLE_GRAPH_EXEC, 7);
	ck_assert_uint_eq(AXON_HANDLE_MEM, 8);
	ck_assert_uint_eq(AXON_HANDLE_TYPE_LAST, 9);
}
END_TEST

/* Kernel-transport mmap offsets (selectors, as io_uring's): fixed, ascending,
 * page-aligned. */
START_TEST(test_mmap_offsets)
{
	const unsigned long long off[] = {
		AXON_OFF_CLIENT_PAGE, AXON_OFF_DAEMON_PAGE, AXON_OFF_FRONTIER,
		AXON_OFF_SQES, AXON_OFF_CQES, AXON_OFF_DATA, AXON_OFF_INFO,
	};
	const unsigned long long want[] = {
		0, 0x01000000ULL, 0x02000000ULL, 0x03000000ULL, 0x04000000ULL,
		0x08000000ULL, 0x10000000ULL,
	};
	size_t i;

	for (i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
		ck_assert_uint_eq(off[i], want[i]);
		ck_assert_uint_eq(off[i] % AXON_PAGE_SIZE, 0);
		if (i)
			ck_assert_uint_gt(off[i], off[i - 1]);
	}
}
END_TEST

/* ---- shared region pages ------------------------------------------------ */

START_TEST(test_client_page)
{
	typedef struct axon_client_page T;

	SIZE(T, 3 * AXON_CACHELINE);
	/* One field per cache line: the daemon polls sq_tail while the
	 * client's reaper writes cq_head and cq_flags. */
	FIELD(T, sq_tail, 0, 4);
	FIELD(T, resv0, 4, 60);
	FIELD(T, cq_head, 64, 4);
	FIELD(T, resv1, 68, 60);
	FIELD(T, cq_flags, 128, 4);
	FIELD(T, resv2, 132, 4);
	FIELD(T, local_ops, 136, 8);	/* informational counter */
	FIELD(T, resv3, 144, 48);
	ck_assert_uint_ne(offsetof(T, sq_tail) / AXON_CACHELINE,
			  offsetof(T, cq_head) / AXON_CACHELINE);
	ck_assert_uint_ne(offsetof(T, cq_head) / AXON_CACHELINE,
			  offsetof(T, cq_flags) / AXON_CACHELINE);
	ck_assert_uint_le(sizeof(T), AXON_PAGE_SIZE);
}
END_TEST

START_TEST(test_daemon_page)
{
	typedef struct axon_daemon_page T;

	SIZE(T, 3 * AXON_CACHELINE);
	/* Line 0: the SQ side (head and flags the submitter reads). */
	FIELD(T, sq_head, 0, 4);
	FIELD(T, sq_flags, 4, 4);
	FIELD(T, sq_dropped, 8, 4);
	FIELD(T, resv0, 12, 52);
	/* Line 1: the CQ side (tail the reaper polls and futex-waits on). */
	FIELD(T, cq_tail, 64, 4);
	FIELD(T, cq_overflow, 68, 4);
	FIELD(T, resv1, 72, 56);
	/* Line 2: constant geometry and rarely written state. */
	FIELD(T, sq_mask, 128, 4);
	FIELD(T, sq_entries, 132, 4);
	FIELD(T, cq_mask, 136, 4);
	FIELD(T, cq_entries, 140, 4);
	FIELD(T, pending_error, 144, 4);
	FIELD(T, state, 148, 4);
	FIELD(T, mint_credit, 152, 8);
	FIELD(T, devout_pending, 160, 4);
	FIELD(T, gone_error, 164, 4);
	FIELD(T, reserve_want, 168, 8);
	FIELD(T, resv2, 176, 16);
	ck_assert_uint_ne(offsetof(T, sq_head) / AXON_CACHELINE,
			  offsetof(T, cq_tail) / AXON_CACHELINE);
	ck_assert_uint_ne(offsetof(T, cq_tail) / AXON_CACHELINE,
			  offsetof(T, sq_mask) / AXON_CACHELINE);
	/* cq_tail is a futex word: 4 bytes, 4-aligned. */
	ck_assert_uint_eq(offsetof(T, cq_tail) % 4, 0);
	ck_assert_uint_le(sizeof(T), AXON_PAGE_SIZE);
}
END_TEST

/* ---- entries ------------------------------------------------------------ */

START_TEST(test_sqe)
{
	typedef struct axon_sqe T;

	SIZE(T, 64);
	SIZE(T, AXON_SQE_SIZE);
	ck_assert_uint_eq(_Alignof(T), 8);
	FIELD(T, opcode, 0, 1);
	FIELD(T, flags, 1, 1);
	FIELD(T, resv0, 2, 2);
	FIELD(T, resv1, 4, 4);
	FIELD(T, user_data, 8, 8);
	FIELD(T, stream, 16, 8);
	/* The union: 40 bytes from 24. */
	FIELD(T, raw, 24, 40);

	FIELD(T, copy, 24, 40);
	FIELD(T, copy.dst, 24, 8);
	FIELD(T, copy.src, 32, 8);
	FIELD(T, copy.len, 40, 8);
	FIELD(T, copy.resv, 48, 16);

	FIELD(T, memset, 24, 40);
	FIELD(T, memset.dst, 24, 8);
	FIELD(T, memset.width, 32, 8);
	FIELD(T, memset.height, 40, 8);
	FIELD(T, memset.pitch, 48, 8);
	FIELD(T, memset.value, 56, 4);
	FIELD(T, memset.elem_size, 60, 4);

	FIELD(T, launch, 24, 40);
	FIELD(T, launch.func, 24, 8);
	FIELD(T, launch.grid, 32, 12);
	FIELD(T, launch.grid[1], 36, 4);
	FIELD(T, launch.grid[2], 40, 4);
	FIELD(T, launch.block, 44, 12);
	FIELD(T, launch.block[1], 48, 4);
	FIELD(T, launch.block[2], 52, 4);
	FIELD(T, launch.shared_bytes, 56, 4);
	FIELD(T, launch.args_off, 60, 4);

	FIELD(T, mem, 24, 40);
	FIELD(T, mem.ctx, 24, 8);
	FIELD(T, mem.addr, 32, 8);
	FIELD(T, mem.len, 40, 8);
	FIELD(T, mem.resv, 48, 16);

	FIELD(T, obj, 24, 40);
	FIELD(T, obj.handle, 24, 8);
	FIELD(T, obj.arg0, 32, 8);
	FIELD(T, obj.arg1, 40, 8);
	FIELD(T, obj.data_off, 48, 4);
	FIELD(T, obj.data_len, 52, 4);
	FIELD(T, obj.arg2, 56, 8);
}
END_TEST

START_TEST(test_cqe)
{
	typedef struct axon_cqe T;

	SIZE(T, 32);
	SIZE(T, AXON_CQE_SIZE);
	FIELD(T, user_data, 0, 8);
	FIELD(T, res, 8, 4);
	FIELD(T, flags, 12, 4);
	FIELD(T, aux, 16, 16);
	FIELD(T, aux[1], 24, 8);
	/* res is signed (CUresult, or a negative errno in some paths). */
	ck_assert_int_lt((__typeof__(((T *)0)->res))-1, 0);
	/* Two CQEs per cache line, exactly. */
	ck_assert_uint_eq(AXON_CACHELINE % sizeof(T), 0);
}
END_TEST

/* ---- connect ------------------------------------------------------------ */

START_TEST(test_params)
{
	typedef struct axon_params T;

	SIZE(T, 168);
	FIELD(T, sq_entries, 0, 4);
	FIELD(T, cq_entries, 4, 4);
	FIELD(T, data_size, 8, 8);
	FIELD(T, flags, 16, 4);
	FIELD(T, features, 20, 4);
	FIELD(T, client_id, 24, 8);
	FIELD(T, region_size, 32, 8);
	FIELD(T, off_client, 40, 8);
	FIELD(T, off_daemon, 48, 8);
	FIELD(T, off_frontier, 56, 8);
	FIELD(T, off_sqes, 64, 8);
	FIELD(T, off_cqes, 72, 8);
	FIELD(T, off_data, 80, 8);
	FIELD(T, frontier_entries, 88, 4);
	FIELD(T, resv0, 92, 4);
	FIELD(T, va_base, 96, 8);
	FIELD(T, va_size, 104, 8);
	FIELD(T, mint_credit, 112, 8);
	FIELD(T, resv, 120, 48);
}
END_TEST

START_TEST(test_hello_welcome)
{
	SIZE(struct axon_hello, 200);
	FIELD(struct axon_hello, magic, 0, 4);
	FIELD(struct axon_hello, abi_major, 4, 2);
	FIELD(struct axon_hello, abi_minor, 6, 2);
	FIELD(struct axon_hello, kind, 8, 4);
	FIELD(struct axon_hello, flags, 12, 4);
	FIELD(struct axon_hello, target_client, 16, 8);
	FIELD(struct axon_hello, target_pid, 24, 4);
	FIELD(struct axon_hello, resv, 28, 4);
	FIELD(struct axon_hello, params, 32, 168);

	SIZE(struct axon_welcome, 312);
	FIELD(struct axon_welcome, magic, 0, 4);
	FIELD(struct axon_welcome, abi_major, 4, 2);
	FIELD(struct axon_welcome, abi_minor, 6, 2);
	FIELD(struct axon_welcome, status, 8, 4);
	FIELD(struct axon_welcome, resv0, 12, 4);
	FIELD(struct axon_welcome, params, 16, 168);
	FIELD(struct axon_welcome, message, 184, 128);
	ck_assert_int_lt((__typeof__(((struct axon_welcome *)0)->status))-1, 0);
}
END_TEST

START_TEST(test_trace_event)
{
	typedef struct axon_trace_event T;

	SIZE(T, 88);
	FIELD(T, time_ns, 0, 8);
	FIELD(T, client_id, 8, 8);
	FIELD(T, user_data, 16, 8);
	FIELD(T, kind, 24, 1);
	FIELD(T, opcode, 25, 1);
	FIELD(T, sqe_flags, 26, 1);
	FIELD(T, resv0, 27, 1);
	FIELD(T, res, 28, 4);
	FIELD(T, latency_ns, 32, 8);
	FIELD(T, stream, 40, 8);
	FIELD(T, args, 48, 32);
	FIELD(T, dropped, 80, 4);
	FIELD(T, resv1, 84, 4);
	ck_assert_uint_eq(AXON_TRACE_SUBMIT, 1);
	ck_assert_uint_eq(AXON_TRACE_COMPLETE, 2);
}
END_TEST

START_TEST(test_func_info)
{
	typedef struct axon_func_info T;

	SIZE(T, 8 + 4 * AXON_MAX_KERNEL_PARAMS);
	FIELD(T, nparams, 0, 4);
	FIELD(T, args_size, 4, 4);
	FIELD(T, param, 8, 4 * AXON_MAX_KERNEL_PARAMS);
}
END_TEST

/* ---- info page ---------------------------------------------------------- */

START_TEST(test_info)
{
	typedef struct axon_device_info D;
	typedef struct axon_info I;

	SIZE(D, 1392);
	FIELD(D, name, 0, 256);
	FIELD(D, uuid, 256, 16);
	FIELD(D, total_mem, 272, 8);
	FIELD(D, attr, 280, 4 * AXON_MAX_ATTRIBUTES);
	FIELD(D, cc_major, 1304, 4);
	FIELD(D, cc_minor, 1308, 4);
	FIELD(D, vmm_granularity, 1312, 8);
	FIELD(D, vmm_granularity_recommended, 1320, 8);
	FIELD(D, pci_domain, 1328, 4);
	FIELD(D, pci_bus, 1332, 4);
	FIELD(D, pci_device, 1336, 4);
	FIELD(D, printf_fifo_size, 1340, 4);
	FIELD(D, resv, 1344, 48);

	SIZE(I, 104 + AXON_MAX_DEVICES * 1392);
	FIELD(I, magic, 0, 4);
	FIELD(I, abi_major, 4, 2);
	FIELD(I, abi_minor, 6, 2);
	FIELD(I, driver_version, 8, 4);
	FIELD(I, ndevices, 12, 4);
	FIELD(I, backend, 16, 16);
	FIELD(I, start_time_ns, 32, 8);
	FIELD(I, resv, 40, 64);
	FIELD(I, device, 104, AXON_MAX_DEVICES * 1392);
	FIELD(I, device[1], 104 + 1392, 1392);
}
END_TEST

/* ---- kernel transport --------------------------------------------------- */

START_TEST(test_enter_charge)
{
	SIZE(struct axon_enter, 24);
	FIELD(struct axon_enter, to_submit, 0, 4);
	FIELD(struct axon_enter, min_complete, 4, 4);
	FIELD(struct axon_enter, flags, 8, 4);
	FIELD(struct axon_enter, resv, 12, 4);
	FIELD(struct axon_enter, timeout_ns, 16, 8);

	SIZE(struct axon_charge, 24);
	FIELD(struct axon_charge, client_id, 0, 8);
	FIELD(struct axon_charge, bytes, 8, 8);
	FIELD(struct axon_charge, kind, 16, 4);
	FIELD(struct axon_charge, resv, 20, 4);

	SIZE(struct axon_reserve, 40);
	FIELD(struct axon_reserve, bytes, 0, 8);
	FIELD(struct axon_reserve, flags, 8, 4);
	FIELD(struct axon_reserve, resv, 12, 4);
	FIELD(struct axon_reserve, reserved, 16, 8);
	FIELD(struct axon_reserve, used, 24, 8);
	FIELD(struct axon_reserve, floor, 32, 8);
	ck_assert_uint_eq(AXON_RESERVE_UNIT, 2u << 20);
	ck_assert_uint_eq(AXON_RESERVE_F_RELEASE, 1);
	ck_assert_uint_eq(AXON_RESERVE_F_FLOOR, 2);
}
END_TEST

START_TEST(test_ioctls)
{
	const unsigned long nr[] = {
		AXON_IOC_SETUP, AXON_IOC_ENTER, AXON_IOC_RESERVE, AXON_IOC_ATTACH,
		AXON_IOC_CHARGE, AXON_IOC_UNCHARGE,
#ifdef AXON_IOC_ACCEPT
		AXON_IOC_ACCEPT, AXON_IOC_CLIENT_FD, AXON_IOC_NOTIFY,
		AXON_IOC_DISCONNECT,
#endif
	};
	size_t i, j;

	ck_assert_uint_eq(AXON_IOC_MAGIC, 0xA6);
	for (i = 0; i < sizeof(nr) / sizeof(nr[0]); i++) {
		ck_assert_uint_eq(_IOC_TYPE(nr[i]), AXON_IOC_MAGIC);
		for (j = i + 1; j < sizeof(nr) / sizeof(nr[0]); j++)
			ck_assert_msg(nr[i] != nr[j], "ioctl %zu and %zu share 0x%lx",
				      i, j, nr[i]);
	}
	/* Number, direction and size of each, as documented. */
	ck_assert_uint_eq(_IOC_NR(AXON_IOC_SETUP), 0x00);
	ck_assert_uint_eq(_IOC_DIR(AXON_IOC_SETUP), _IOC_READ | _IOC_WRITE);
	ck_assert_uint_eq(_IOC_SIZE(AXON_IOC_SETUP), sizeof(struct axon_params));
	ck_assert_uint_eq(_IOC_NR(AXON_IOC_ENTER), 0x01);
	ck_assert_uint_eq(_IOC_DIR(AXON_IOC_ENTER), _IOC_WRITE);
	ck_assert_uint_eq(_IOC_SIZE(AXON_IOC_ENTER), sizeof(struct axon_enter));
	ck_assert_uint_eq(_IOC_NR(AXON_IOC_RESERVE), 0x02);
	ck_assert_uint_eq(_IOC_DIR(AXON_IOC_RESERVE), _IOC_READ | _IOC_WRITE);
	ck_assert_uint_eq(_IOC_SIZE(AXON_IOC_RESERVE), sizeof(struct axon_reserve));
	ck_assert_uint_eq(_IOC_NR(AXON_IOC_ATTACH), 0x10);
	ck_assert_uint_eq(_IOC_DIR(AXON_IOC_ATTACH), _IOC_NONE);
	ck_assert_uint_eq(_IOC_SIZE(AXON_IOC_ATTACH), 0);
	ck_assert_uint_eq(_IOC_NR(AXON_IOC_CHARGE), 0x11);
	ck_assert_uint_eq(_IOC_DIR(AXON_IOC_CHARGE), _IOC_WRITE);
	ck_assert_uint_eq(_IOC_SIZE(AXON_IOC_CHARGE), sizeof(struct axon_charge));
	ck_assert_uint_eq(_IOC_NR(AXON_IOC_UNCHARGE), 0x12);
	ck_assert_uint_eq(_IOC_DIR(AXON_IOC_UNCHARGE), _IOC_WRITE);
	ck_assert_uint_eq(_IOC_SIZE(AXON_IOC_UNCHARGE), sizeof(struct axon_charge));
#ifdef AXON_IOC_ACCEPT
	ck_assert_uint_eq(_IOC_NR(AXON_IOC_ACCEPT), 0x13);
	ck_assert_uint_eq(_IOC_DIR(AXON_IOC_ACCEPT), _IOC_WRITE);
	ck_assert_uint_eq(_IOC_SIZE(AXON_IOC_ACCEPT), sizeof(struct axon_accept));
	ck_assert_uint_eq(_IOC_NR(AXON_IOC_CLIENT_FD), 0x14);
	ck_assert_uint_eq(_IOC_DIR(AXON_IOC_CLIENT_FD), _IOC_READ | _IOC_WRITE);
	ck_assert_uint_eq(_IOC_SIZE(AXON_IOC_CLIENT_FD), sizeof(struct axon_client_fd));
	ck_assert_uint_eq(_IOC_NR(AXON_IOC_NOTIFY), 0x15);
	ck_assert_uint_eq(_IOC_DIR(AXON_IOC_NOTIFY), _IOC_WRITE);
	ck_assert_uint_eq(_IOC_SIZE(AXON_IOC_NOTIFY), sizeof(struct axon_notify));
	ck_assert_uint_eq(_IOC_NR(AXON_IOC_DISCONNECT), 0x16);
	ck_assert_uint_eq(_IOC_DIR(AXON_IOC_DISCONNECT), _IOC_WRITE);
	ck_assert_uint_eq(_IOC_SIZE(AXON_IOC_DISCONNECT), sizeof(struct axon_disconnect));
#endif
	ck_assert_str_eq(AXON_GENL_NAME, "axon");
	ck_assert_uint_eq(AXON_GENL_VERSION, 1);
	ck_assert_str_eq(AXON_GENL_MCGRP_EVENTS, "events");
}
END_TEST

#ifdef AXON_IOC_ACCEPT
/* The daemon side of /dev/axon (present once the kernel transport is). */
START_TEST(test_kmod_structs)
{
	SIZE(struct axon_accept, 64);
	FIELD(struct axon_accept, client_id, 0, 8);
	FIELD(struct axon_accept, features, 8, 4);
	FIELD(struct axon_accept, resv0, 12, 4);
	FIELD(struct axon_accept, va_base, 16, 8);
	FIELD(struct axon_accept, va_size, 24, 8);
	FIELD(struct axon_accept, mint_credit, 32, 8);
	FIELD(struct axon_accept, resv, 40, 24);

	SIZE(struct axon_disconnect, 16);
	FIELD(struct axon_disconnect, client_id, 0, 8);
	FIELD(struct axon_disconnect, error, 8, 4);
	FIELD(struct axon_disconnect, resv, 12, 4);

	SIZE(struct axon_client_fd, 32);
	FIELD(struct axon_client_fd, client_id, 0, 8);
	FIELD(struct axon_client_fd, flags, 8, 4);
	FIELD(struct axon_client_fd, fd, 12, 4);
	FIELD(struct axon_client_fd, params, 16, 8);
	FIELD(struct axon_client_fd, resv, 24, 8);

	SIZE(struct axon_notify, 32);
	FIELD(struct axon_notify, count, 0, 4);
	FIELD(struct axon_notify, flags, 4, 4);
	FIELD(struct axon_notify, ids, 8, 8);
	FIELD(struct axon_notify, resv, 16, 16);

	SIZE(struct axon_event, 64);
	FIELD(struct axon_event, client_id, 0, 8);
	FIELD(struct axon_event, events, 8, 4);
	FIELD(struct axon_event, state, 12, 4);
	FIELD(struct axon_event, pid, 16, 4);
	FIELD(struct axon_event, uid, 20, 4);
	FIELD(struct axon_event, gid, 24, 4);
	FIELD(struct axon_event, resv0, 28, 4);
	FIELD(struct axon_event, cgroup_id, 32, 8);
	FIELD(struct axon_event, start_time_ns, 40, 8);
	FIELD(struct axon_event, comm, 48, 16);

	ck_assert_uint_eq(AXON_EV_OPEN, 1);
	ck_assert_uint_eq(AXON_EV_EXISTING, 2);
	ck_assert_uint_eq(AXON_EV_DOORBELL, 4);
	ck_assert_uint_eq(AXON_EV_GONE, 8);
	ck_assert_uint_eq(AXON_EV_OPEN, 1U << AXON_EV_OPEN_BIT);
	ck_assert_uint_eq(AXON_EV_EXISTING, 1U << AXON_EV_EXISTING_BIT);
	ck_assert_uint_eq(AXON_EV_DOORBELL, 1U << AXON_EV_DOORBELL_BIT);
	ck_assert_uint_eq(AXON_EV_GONE, 1U << AXON_EV_GONE_BIT);
	ck_assert_uint_eq(AXON_KSTATE_NEW, 0);
	ck_assert_uint_eq(AXON_KSTATE_PENDING, 1);
	ck_assert_uint_eq(AXON_KSTATE_ACTIVE, 2);
	ck_assert_uint_eq(AXON_KSTATE_ORPHAN, 3);
	ck_assert_uint_eq(AXON_KSTATE_DEAD, 4);
	ck_assert_uint_eq(AXON_KSTATE_GONE, 5);
	ck_assert_uint_eq(AXON_KMOD_MAX_DATA_SIZE, AXON_OFF_INFO - AXON_OFF_DATA);
}
END_TEST
#endif

/* ---- macros ------------------------------------------------------------- */

START_TEST(test_handles)
{
	static const uint32_t gens[] = { 1, 2, 0x7fffff, 0xffffff };
	static const uint32_t idx[] = { 0, 1, 0x12345678, 0xffffffffU };
	uint32_t t, g, i;

	ck_assert_uint_eq(AXON_HANDLE_MAKE(AXON_HANDLE_STREAM, 3, 7),
			  0x0200000300000007ULL);
	ck_assert_uint_eq(AXON_HANDLE_MAKE(0xff, 0xffffff, 0xffffffffU), UINT64_MAX);
	/* Generation is 24 bits: higher bits are dropped, not smeared. */
	ck_assert_uint_eq(AXON_HANDLE_MAKE(1, 0x1000001, 5),
			  AXON_HANDLE_MAKE(1, 1, 5));
	for (t = AXON_HANDLE_CTX; t < AXON_HANDLE_TYPE_LAST; t++)
		for (g = 0; g < sizeof(gens) / sizeof(gens[0]); g++)
			for (i = 0; i < sizeof(idx) / sizeof(idx[0]); i++) {
				uint64_t h = AXON_HANDLE_MAKE(t, gens[g], idx[i]);

				ck_assert_uint_eq(AXON_HANDLE_TYPE(h), t);
				ck_assert_uint_eq(AXON_HANDLE_GEN(h), gens[g]);
				ck_assert_uint_eq(AXON_HANDLE_INDEX(h), idx[i]);
				/* type and gen non-zero: never 0 */
				ck_assert_uint_ne(h, 0);
			}
	ck_assert_uint_eq(AXON_HANDLE_TYPE(0), AXON_HANDLE_NONE);
}
END_TEST

START_TEST(test_params_macros)
{
	uint32_t off, size;

	ck_assert_uint_eq(AXON_PARAM_MAKE(8, 4), 0x00040008U);
	ck_assert_uint_eq(AXON_PARAM_MAKE(0xffff, 0xffff), 0xffffffffU);
	for (off = 0; off < 0x10000; off += 0x3fd)
		for (size = 0; size < 0x10000; size += 0x1ff) {
			uint32_t p = AXON_PARAM_MAKE(off, size);

			ck_assert_uint_eq(AXON_PARAM_OFFSET(p), off);
			ck_assert_uint_eq(AXON_PARAM_SIZE(p), size);
		}
	/* The largest argument buffer is addressable by a 16-bit offset. */
	ck_assert_uint_le(AXON_MAX_ARGS_SIZE, 0x10000);
}
END_TEST

/* ---- operations --------------------------------------------------------- */

static const char *const op_names[] = {
	"NOP", "CTX_CREATE", "CTX_DESTROY", "CTX_SYNC", "MEM_MAP", "MEM_UNMAP",
	"MEM_GET_INFO", "MEMCPY_HTOD", "MEMCPY_DTOH", "MEMCPY_DTOD", "MEMSET",
	"MODULE_LOAD", "MODULE_UNLOAD", "MODULE_GET_FUNC", "MODULE_GET_GLOBAL",
	"LAUNCH", "STREAM_CREATE", "STREAM_DESTROY", "STREAM_SYNC",
	"STREAM_WAIT_EVENT", "EVENT_CREATE", "EVENT_DESTROY", "EVENT_RECORD",
	"EVENT_ELAPSED", "FUNC_GET_ATTR", "CAPTURE_BEGIN", "CAPTURE_END",
	"GRAPH_INSTANTIATE", "GRAPH_LAUNCH", "GRAPH_DESTROY",
	"GRAPH_EXEC_DESTROY", "GRAPH_EXEC_UPDATE", "LAUNCH_EX", "FUNC_SET_ATTR",
	"TENSOR_MAP_ENCODE", "HOST_FUNC", "HOSTMEM_REGISTER",
	"HOSTMEM_UNREGISTER", "MEM_CREATE", "MEM_RELEASE", "DEVOUT_READ",
	"OCCUPANCY", "PRIVATE_CALL", "MODULE_FUNCS",
};

/* The ops released so far, whose numbers and names are pinned here. */
#define PINNED_OPS (sizeof(op_names) / sizeof(op_names[0]))

START_TEST(test_op_numbers)
{
	/* Op numbers are ABI: appended, never renumbered or removed. The
	 * ops of op_names[] keep their numbers; a new op only raises
	 * AXON_OP_LAST (adding one touches its description, its handler
	 * and its own test, not this one). */
	ck_assert_uint_ge(AXON_OP_LAST, PINNED_OPS);
	ck_assert_uint_eq(AXON_OP_PRIVATE_CALL, 42);
	ck_assert_uint_eq(AXON_OP_MODULE_FUNCS, 43);
	ck_assert_uint_eq(AXON_OP_NOP, 0);
	ck_assert_uint_eq(AXON_OP_CTX_CREATE, 1);
	ck_assert_uint_eq(AXON_OP_CTX_DESTROY, 2);
	ck_assert_uint_eq(AXON_OP_CTX_SYNC, 3);
	ck_assert_uint_eq(AXON_OP_MEM_MAP, 4);
	ck_assert_uint_eq(AXON_OP_MEM_UNMAP, 5);
	ck_assert_uint_eq(AXON_OP_MEM_GET_INFO, 6);
	ck_assert_uint_eq(AXON_OP_MEMCPY_HTOD, 7);
	ck_assert_uint_eq(AXON_OP_MEMCPY_DTOH, 8);
	ck_assert_uint_eq(AXON_OP_MEMCPY_DTOD, 9);
	ck_assert_uint_eq(AXON_OP_MEMSET, 10);
	ck_assert_uint_eq(AXON_OP_MODULE_LOAD, 11);
	ck_assert_uint_eq(AXON_OP_MODULE_UNLOAD, 12);
	ck_assert_uint_eq(AXON_OP_MODULE_GET_FUNC, 13);
	ck_assert_uint_eq(AXON_OP_MODULE_GET_GLOBAL, 14);
	ck_assert_uint_eq(AXON_OP_LAUNCH, 15);
	ck_assert_uint_eq(AXON_OP_STREAM_CREATE, 16);
	ck_assert_uint_eq(AXON_OP_STREAM_DESTROY, 17);
	ck_assert_uint_eq(AXON_OP_STREAM_SYNC, 18);
	ck_assert_uint_eq(AXON_OP_STREAM_WAIT_EVENT, 19);
	ck_assert_uint_eq(AXON_OP_EVENT_CREATE, 20);
	ck_assert_uint_eq(AXON_OP_EVENT_DESTROY, 21);
	ck_assert_uint_eq(AXON_OP_EVENT_RECORD, 22);
	ck_assert_uint_eq(AXON_OP_EVENT_ELAPSED, 23);
	ck_assert_uint_eq(AXON_OP_FUNC_GET_ATTR, 24);
	/* The opcode travels in a __u8. */
	ck_assert_uint_le(AXON_OP_LAST, 256);
}
END_TEST

START_TEST(test_op_names)
{
	unsigned int i, j;

	for (i = 0; i < AXON_OP_LAST; i++) {
		const char *n = axon_op_name(i);

		ck_assert_ptr_nonnull(n);
		ck_assert_msg(strcmp(n, "?") != 0, "op %u has no name", i);
		/* Past the pinned ops, only a name of its own is asked for. */
		ck_assert_msg(i >= PINNED_OPS || strcmp(n, op_names[i]) == 0,
			      "op %u is named '%s', expected '%s'", i, n,
			      i < PINNED_OPS ? op_names[i] : "");
		for (j = 0; j < i; j++)
			ck_assert_msg(strcmp(n, axon_op_name(j)) != 0,
				      "ops %u and %u share the name '%s'", j, i, n);
	}
	ck_assert_str_eq(axon_op_name(AXON_OP_LAST), "?");
	ck_assert_str_eq(axon_op_name(255), "?");
	ck_assert_str_eq(axon_op_name(~0u), "?");
}
END_TEST

/* ---- libaxon's inline ring helpers agree with the ABI ------------------- */

START_TEST(test_prep_helpers)
{
	struct axon_sqe sqe;
	unsigned char zero[sizeof(sqe.raw)] = { 0 };

	memset(&sqe, 0, sizeof(sqe));
	axon_prep_nop(&sqe);
	ck_assert_uint_eq(sqe.opcode, AXON_OP_NOP);
	ck_assert_int_eq(memcmp(sqe.raw, zero, sizeof(zero)), 0);

	memset(&sqe, 0, sizeof(sqe));
	axon_prep_copy(&sqe, AXON_OP_MEMCPY_HTOD, 11, 22, 33, 44);
	ck_assert_uint_eq(sqe.opcode, AXON_OP_MEMCPY_HTOD);
	ck_assert_uint_eq(sqe.stream, 11);
	ck_assert_uint_eq(sqe.raw[0], 22);
	ck_assert_uint_eq(sqe.raw[1], 33);
	ck_assert_uint_eq(sqe.raw[2], 44);
	ck_assert_uint_eq(sqe.raw[3], 0);
	ck_assert_uint_eq(sqe.raw[4], 0);

	memset(&sqe, 0, sizeof(sqe));
	axon_prep_mem(&sqe, AXON_OP_MEM_MAP, 5, 6, 7);
	ck_assert_uint_eq(sqe.raw[0], 5);
	ck_assert_uint_eq(sqe.raw[1], 6);
	ck_assert_uint_eq(sqe.raw[2], 7);
	ck_assert_uint_eq(sqe.stream, 0);

	memset(&sqe, 0, sizeof(sqe));
	axon_prep_obj(&sqe, AXON_OP_FUNC_GET_ATTR, 8, 9, 10);
	ck_assert_uint_eq(sqe.opcode, AXON_OP_FUNC_GET_ATTR);
	ck_assert_uint_eq(sqe.raw[0], 8);
	ck_assert_uint_eq(sqe.raw[1], 9);
	ck_assert_uint_eq(sqe.raw[2], 10);
	ck_assert_uint_eq(sqe.flags, 0);
	ck_assert_uint_eq(sqe.resv0 | sqe.resv1, 0);
}
END_TEST

static Suite *abi_suite(void)
{
	Suite *s = suite_create("abi-layout");
	TCase *tc = tcase_create("abi");

	tcase_add_test(tc, test_constants);
	tcase_add_test(tc, test_mmap_offsets);
	tcase_add_test(tc, test_client_page);
	tcase_add_test(tc, test_daemon_page);
	tcase_add_test(tc, test_sqe);
	tcase_add_test(tc, test_cqe);
	tcase_add_test(tc, test_params);
	tcase_add_test(tc, test_hello_welcome);
	tcase_add_test(tc, test_trace_event);
	tcase_add_test(tc, test_func_info);
	tcase_add_test(tc, test_info);
	tcase_add_test(tc, test_enter_charge);
	tcase_add_test(tc, test_ioctls);
#ifdef AXON_IOC_ACCEPT
	tcase_add_test(tc, test_kmod_structs);
#endif
	tcase_add_test(tc, test_handles);
	tcase_add_test(tc, test_params_macros);
	tcase_add_test(tc, test_op_numbers);
	tcase_add_test(tc, test_op_names);
	tcase_add_test(tc, test_prep_helpers);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(abi_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
