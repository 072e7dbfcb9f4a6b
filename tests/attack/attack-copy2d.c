// SPDX-License-Identifier: MIT
/*
 * attack-copy2d: hostile MEMCPY_2D requests. A rectangle names height rows,
 * pitch apart, on each side; every row of each side must lie inside one
 * allocation of the client, its data area, or one of its shared regions.
 * Rows past the end of the window's allocation, a pitch below the width, a
 * span that wraps the address space (height * pitch added to an address
 * near 2^64), host rows past the end of the data area, the shared-region
 * flag with no region, unknown flags and directions: each refused with
 * INVALID_VALUE, while real rectangles (pitched both ways, one row, one
 * column) copy byte for byte. Afterwards not one byte around the targets
 * changed, in device memory or in the data area, and the daemon lives.
 */
#include <check.h>
#include <string.h>
#include <cuda.h>

#include "attack.h"

#define BUF	(1u << 20)	/* the device allocation */
#define GUARD	0xa7		/* what the allocation holds around targets */
#define DGUARD	0x3c		/* what the data area holds */

static struct axon_sqe rect(uint64_t stream, uint32_t dir, uint64_t dst, uint64_t src,
			    uint32_t width, uint32_t height, uint32_t dpitch, uint32_t spitch,
			    uint32_t flags)
{
	struct axon_sqe s = { .opcode = AXON_OP_MEMCPY_2D, .stream = stream };

	s.memcpy_2d.dir = dir;
	s.memcpy_2d.dst = dst;
	s.memcpy_2d.src = src;
	s.memcpy_2d.width = width;
	s.memcpy_2d.height = height;
	s.memcpy_2d.dst_pitch = dpitch;
	s.memcpy_2d.src_pitch = spitch;
	s.memcpy_2d.host_flags = flags;
	return s;
}

static struct axon_sqe flat(uint64_t stream, unsigned int op, uint64_t dst, uint64_t src,
			    uint64_t len)
{
	struct axon_sqe s = { .opcode = (uint8_t)op, .stream = stream };

	s.copy.dst = dst;
	s.copy.src = src;
	s.copy.len = len;
	return s;
}

static void fill_guard(struct axon_ring *r, uint64_t stream, uint64_t buf)
{
	struct axon_sqe s = { .opcode = AXON_OP_MEMSET, .stream = stream };

	s.memset.dst = buf;
	s.memset.width = BUF;
	s.memset.height = 1;
	s.memset.value = GUARD;
	s.memset.elem_size = 1;
	ck_assert_int_eq(h_ring_res(r, &s, NULL, NULL), CUDA_SUCCESS);
}

/* The allocation, read back into data[0, BUF). */
static const unsigned char *read_back(struct axon_ring *r, uint64_t stream, uint64_t buf)
{
	struct axon_sqe s = flat(stream, AXON_OP_MEMCPY_DTOH, 0, buf, BUF);

	ck_assert_int_eq(h_ring_res(r, &s, NULL, NULL), CUDA_SUCCESS);
	return r->data;
}

START_TEST(hostile)
{
	struct axon_ring r;
	uint64_t ctx, stream, buf, ds;
	const unsigned char *dev;
	unsigned char *data;
	unsigned int i, k;

	ck_assert_int_eq(h_ring_connect(&r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&r, &ctx, &stream), 0);
	ck_assert_int_eq(h_ring_map(&r, ctx, 0, BUF, &buf), 0);
	data = r.data;
	ds = r.data_size;
	ck_assert_uint_ge(ds, 2 * BUF);

	/* Real rectangles first: 3 rows of 100 bytes from the data area
	 * (pitch 128) to the device (pitch 256), back again (pitch 300),
	 * device to device, one row, one column. */
	fill_guard(&r, stream, buf);
	for (i = 0; i < 3 * 128; i++)
		data[BUF + i] = (unsigned char)(i * 13 + 1);
	{
		struct axon_sqe s = rect(stream, AXON_COPY_2D_HTOD, buf + 7, BUF, 100, 3,
					 256, 128, 0);

		ck_assert_int_eq(h_ring_res(&r, &s, NULL, NULL), CUDA_SUCCESS);
		s = rect(stream, AXON_COPY_2D_DTOD, buf + 4096, buf + 7, 100, 3, 100, 256, 0);
		ck_assert_int_eq(h_ring_res(&r, &s, NULL, NULL), CUDA_SUCCESS);
		memset(data + BUF + 4096, 0, 3 * 300);
		s = rect(stream, AXON_COPY_2D_DTOH, BUF + 4096, buf + 7, 100, 3, 300, 256, 0);
		ck_assert_int_eq(h_ring_res(&r, &s, NULL, NULL), CUDA_SUCCESS);
		/* One row of 5000 bytes (pitches unused), a column of 9. */
		s = rect(stream, AXON_COPY_2D_DTOD, buf + 8192, buf, 5000, 1, 0, 0, 0);
		ck_assert_int_eq(h_ring_res(&r, &s, NULL, NULL), CUDA_SUCCESS);
		s = rect(stream, AXON_COPY_2D_DTOD, buf + 16384, buf + 7, 1, 9, 64, 32, 0);
		ck_assert_int_eq(h_ring_res(&r, &s, NULL, NULL), CUDA_SUCCESS);
	}
	for (k = 0; k < 3; k++)
		for (i = 0; i < 300; i++)
			ck_assert_uint_eq(data[BUF + 4096 + k * 300 + i],
					  i < 100 ? (unsigned char)((k * 128 + i) * 13 + 1) : 0);
	dev = read_back(&r, stream, buf);
	for (k = 0; k < 3; k++) {
		for (i = 0; i < 100; i++) {
			unsigned char want = (unsigned char)((k * 128 + i) * 13 + 1);

			ck_assert_uint_eq(dev[7 + k * 256 + i], want);
			ck_assert_uint_eq(dev[4096 + k * 100 + i], want);
		}
		ck_assert_uint_eq(dev[7 + k * 256 + 100], GUARD);
	}
	ck_assert_uint_eq(dev[6], GUARD);
	for (k = 0; k < 9; k++)
		ck_assert_uint_eq(dev[16384 + k * 64], dev[7 + k * 32]);
	ck_assert_uint_eq(dev[16384 + 1], GUARD);

	/* Now the attacks, on a fresh guard. */
	fill_guard(&r, stream, buf);
	memset(data, DGUARD, ds);
	{
		const uint64_t top = UINT64_MAX - 4095;
		const struct axon_sqe bad[] = {
			/* device rows past the allocation's end, either side */
			rect(stream, AXON_COPY_2D_HTOD, buf, 0, 4096, 257, 4096, 4096, 0),
			rect(stream, AXON_COPY_2D_HTOD, buf + BUF - 100, 0, 101, 1, 0, 0, 0),
			rect(stream, AXON_COPY_2D_DTOH, 0, buf + 4096, 16, 2, 16, BUF, 0),
			rect(stream, AXON_COPY_2D_DTOD, buf, buf + BUF - 8, 16, 1, 0, 0, 0),
			rect(stream, AXON_COPY_2D_DTOD, buf + BUF - 32, buf, 16, 3, 16, 16, 0),
			/* a pitch below the width */
			rect(stream, AXON_COPY_2D_DTOD, buf, buf + 4096, 64, 2, 63, 64, 0),
			rect(stream, AXON_COPY_2D_HTOD, buf, 0, 64, 2, 64, 1, 0),
			/* the largest pitch and height: a span past any window */
			rect(stream, AXON_COPY_2D_HTOD, buf, 0, 16, UINT32_MAX, UINT32_MAX, 16, 0),
			rect(stream, AXON_COPY_2D_DTOD, buf, buf, 16, UINT32_MAX, 16, UINT32_MAX, 0),
			/* height * pitch wrapping past 2^64 from a high address */
			rect(stream, AXON_COPY_2D_DTOD, top, buf, 4096, UINT32_MAX, UINT32_MAX,
			     0, 0),
			rect(stream, AXON_COPY_2D_DTOD, buf, top, 4096, 2, 4096, 4096, 0),
			rect(stream, AXON_COPY_2D_DTOH, top, buf, 4096, 2, 4096, 4096,
			     AXON_COPY_F_HOSTMEM),
			rect(stream, AXON_COPY_2D_DTOH, UINT64_MAX - 10, buf, 16, 1, 0, 0, 0),
			/* data-area rows past its end */
			rect(stream, AXON_COPY_2D_HTOD, buf, ds - 100, 64, 2, 64, 64, 0),
			rect(stream, AXON_COPY_2D_DTOH, ds - 4096, buf, 100, 2, 4096, 100, 0),
			rect(stream, AXON_COPY_2D_DTOH, ds, buf, 1, 1, 0, 0, 0),
			rect(stream, AXON_COPY_2D_DTOH, 0, buf, 4096, 1u << 20, 1u << 20, 4096, 0),
			/* a shared region that does not exist */
			rect(stream, AXON_COPY_2D_DTOH, (uint64_t)(uintptr_t)data, buf, 16, 2, 16,
			     16, AXON_COPY_F_HOSTMEM),
			/* unknown flags, a flag on a device-only copy, a bad dir */
			rect(stream, AXON_COPY_2D_HTOD, buf, 0, 16, 1, 0, 0, 2),
			rect(stream, AXON_COPY_2D_DTOD, buf, buf + 64, 16, 1, 0, 0,
			     AXON_COPY_F_HOSTMEM),
			rect(stream, AXON_COPY_2D_DTOD + 1, buf, 0, 16, 1, 0, 0, 0),
			rect(stream, UINT32_MAX, buf, 0, 16, 1, 0, 0, 0),
		};

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			int32_t res = h_ring_res(&r, &bad[i], NULL, NULL);

			ck_assert_msg(res == CUDA_ERROR_INVALID_VALUE,
				      "case %u (dir %u dst %#llx src %#llx %ux%u): res %d", i,
				      bad[i].memcpy_2d.dir,
				      (unsigned long long)bad[i].memcpy_2d.dst,
				      (unsigned long long)bad[i].memcpy_2d.src,
				      bad[i].memcpy_2d.width, bad[i].memcpy_2d.height, res);
		}
	}
	/* Nothing to copy: nothing checked, nothing done, as the driver. */
	{
		struct axon_sqe z = rect(stream, AXON_COPY_2D_DTOD, 0, UINT64_MAX, 0, 5, 0, 0, 0);

		ck_assert_int_eq(h_ring_res(&r, &z, NULL, NULL), CUDA_SUCCESS);
		z = rect(stream, AXON_COPY_2D_HTOD, UINT64_MAX, ds, 4096, 0, 0, 0, 0);
		ck_assert_int_eq(h_ring_res(&r, &z, NULL, NULL), CUDA_SUCCESS);
	}
	for (i = 0; i < ds; i++)
		if (data[i] != DGUARD)
			ck_abort_msg("data area byte %u changed to %#x", i, data[i]);
	dev = read_back(&r, stream, buf);
	for (i = 0; i < BUF; i++)
		if (dev[i] != GUARD)
			ck_abort_msg("device byte %u changed to %#x", i, dev[i]);
	axon_close(&r);
	ck_assert_msg(h_daemon_running(&h_daemon), "axond died");
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, hostile);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("attack-copy2d", "1G", NULL, add, 60);
}
