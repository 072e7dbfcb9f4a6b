// SPDX-License-Identifier: MIT
/*
 * integration-hostreg: memory the program owns, registered with
 * cuMemHostRegister, used as device memory through its host pointer
 * (unified addressing), against a private axond (sim backend).
 *
 *   transcript   tests/gpu/drv-hostreg --edges (built as
 *                tests/bin/drv-hostreg) through the shim: registration
 *                at unaligned ends, memsets, copies and sim kernels through
 *                the host pointer, unregistration keeping the contents,
 *                malloc'd and DEVICEMAP memory, READ_ONLY, and the edges
 *                only axon defines (writes to READ_ONLY memory and past a
 *                range refused, file mappings and shared pages staged,
 *                IOMEMORY refused, fork gives a private copy); its stdout
 *                must be exactly the transcript below. Afterwards the
 *                daemon maps no client memfd.
 *   device_side  a raw client's region as a device address: memsets and
 *                device-to-device copies land in the client's own pages;
 *                a byte before or past the region is refused, so is a
 *                range running into the device window
 *   unaligned    a region whose base is not page-aligned: only
 *                [base, base + len) can be named, not the rest of its pages
 *   read_only    AXON_HOSTMEM_F_READ_ONLY: every write (memset, DTOD into
 *                it, DTOH with AXON_COPY_F_HOSTMEM into it, a 2D copy into
 *                it) is refused, reads work, the bytes stay
 *   isolation    another client names the first one's region as a device
 *                address (memset, DTOD both ways, a 2D copy): refused, the
 *                bytes untouched; it cannot map its own memfd over the
 *                first one's address in the daemon either (ALREADY_MAPPED)
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cuda.h>

#include "harness.h"

#define REGION	(1u << 20)

static const char *const transcript =
	"CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM: 1\n"
	"register PORTABLE, unaligned: contents kept\n"
	"registered: device pointer == host pointer, attribute ==, type HOST, host ==\n"
	"memset through the host pointer: OK\n"
	"copy device <- host pointer: OK\n"
	"copy pageable <- host pointer: OK\n"
	"copy host pointer <- device: OK\n"
	"kernels through the host pointer: add_one OK, iota OK, vectorAdd OK\n"
	"bytes around the range: untouched\n"
	"unregistered: contents kept\n"
	"unregistered: no device pointer, writable\n"
	"1000 bytes inside a page: device pointer == host pointer, attribute ==, type HOST, host ==\n"
	"1000 bytes inside a page: memset OK\n"
	"malloc 8 MiB, DEVICEMAP: device pointer == host pointer, attribute ==, type HOST, host ==\n"
	"registered again: device pointer == host pointer, attribute ==, type HOST, host ==\n"
	"overlapping registration: refused\n"
	"cuMemHostAlloc DEVICEMAP: device pointer == host pointer, attribute ==, type HOST, host ==\n"
	"cuMemHostAlloc DEVICEMAP: memset OK\n"
	"read-only: kernel read OK\n"
	"registration cost: measured (stderr)\n"
	"edges: read-only: writes refused, reads OK, contents kept\n"
	"edges: past the ends refused; a shared page: staged OK\n"
	"edges: a file's mapping: staged, the file sees the copy\n"
	"edges: registered again at once x20: identity each time, last byte 19\n"
	"edges: fork: child had a private copy, parent's memory kept\n"
	"done\n";

/* The daemon's mappings of client memfds. */
static int daemon_memfd_maps(void)
{
	char path[64], line[512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)h_daemon.pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "/memfd:axon-test") || strstr(line, "/memfd:axon-pinned") ||
		    strstr(line, "/memfd:axon-hostreg"))
			n++;
	fclose(f);
	return n;
}

static int wait_maps(int want, int timeout_ms)
{
	uint64_t end = h_now_ms() + (uint64_t)timeout_ms;
	int n;

	while ((n = daemon_memfd_maps()) != want && h_now_ms() < end)
		h_poll_pause();
	return n;
}

static ssize_t read_all(int fd, char *buf, size_t cap, int timeout_ms)
{
	uint64_t end = h_now_ms() + (uint64_t)timeout_ms;
	size_t len = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (h_now_ms() > end || len + 1 >= cap)
			return -1;
		if (poll(&p, 1, 100) <= 0)
			continue;
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0)
			return -1;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = 0;
	return (ssize_t)len;
}

START_TEST(test_transcript)
{
	static char out[16384];
	char *argv[] = { (char *)h_bin("drv-hostreg"), (char *)h_kernel_path("cubin"),
			 (char *)"--edges", NULL };
	int fd = -1, rc;
	pid_t pid = h_spawn(argv, &fd);
	ssize_t n;

	ck_assert(pid > 0);
	n = read_all(fd, out, sizeof(out), H_MS(240000));
	close(fd);
	rc = h_wait_child(pid, H_MS(10000), "drv-hostreg");
	if (n < 0 || rc != 0 || strcmp(out, transcript)) {
		printf("drv-hostreg exited %d; its stdout:\n%s\nexpected:\n%s", rc,
		       n < 0 ? "(unreadable)" : out, transcript);
		ck_abort_msg("drv-hostreg's transcript differs");
	}
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
	ck_assert_int_eq(wait_maps(0, H_MS(5000)), 0);
}
END_TEST

/* ---- raw rings ------------------------------------------------------------ */

static int32_t reg(struct axon_ring *r, int fd, uint64_t cookie, uint64_t addr, uint64_t len,
		   uint64_t flags)
{
	struct axon_sqe s = { 0 };

	ck_assert_int_eq(h_send_hostmem_fd(r, fd, cookie), 0);
	axon_prep_obj(&s, AXON_OP_HOSTMEM_REGISTER, cookie, addr, len);
	s.obj.arg2 = flags;
	s.obj.data_off = 0;
	s.obj.data_len = sizeof(struct axon_hostmem_info);
	return h_ring_res(r, &s, NULL, NULL);
}

static int32_t copy(struct axon_ring *r, unsigned int op, uint64_t stream, uint64_t dst,
		    uint64_t src, uint64_t len, bool hostmem)
{
	struct axon_sqe s = { 0 };

	axon_prep_copy(&s, op, stream, dst, src, len);
	s.copy.host_flags = hostmem ? AXON_COPY_F_HOSTMEM : 0;
	return h_ring_res(r, &s, NULL, NULL);
}

static int32_t mset(struct axon_ring *r, uint64_t stream, uint64_t dst, uint64_t len,
		    unsigned char v)
{
	struct axon_sqe s = { 0 };

	axon_prep_memset(&s, stream, dst, len, 1, 0, v, 1);
	return h_ring_res(r, &s, NULL, NULL);
}

static int32_t copy2d_dtod(struct axon_ring *r, uint64_t stream, uint64_t dst, uint64_t src)
{
	struct axon_sqe s = { 0 };

	axon_prep_memcpy_2d(&s, stream, dst, src, 64, 4, 128, 128, AXON_COPY_2D_DTOD, 0);
	return h_ring_res(r, &s, NULL, NULL);
}

/* A raw client with a context, 4 MiB of device memory and one region of
 * REGION bytes at host (flags, base offset off, length len). */
struct rc {
	struct axon_ring r;
	uint64_t ctx, stream, dev;
	unsigned char *host;
	int fd;
};

static void rc_open(struct rc *c)
{
	memset(c, 0, sizeof(*c));
	ck_assert_int_eq(h_ring_connect(&c->r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&c->r, &c->ctx, &c->stream), 0);
	ck_assert_int_eq(h_ring_map(&c->r, c->ctx, 0, 4u << 20, &c->dev), 0);
	c->fd = memfd_create("axon-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	ck_assert_int_ge(c->fd, 0);
	ck_assert_int_eq(ftruncate(c->fd, REGION), 0);
	ck_assert_int_eq(fcntl(c->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	c->host = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	ck_assert(c->host != MAP_FAILED);
}

/* Registers [host + off, + len) of c's region with cookie; c->host follows. */
static int32_t rc_reg(struct rc *c, uint64_t cookie, uint64_t off, uint64_t len,
		      uint64_t flags)
{
	return h_hostmem_register(&c->r, c->fd, cookie, &c->host, REGION, off, len, flags);
}

static void rc_close(struct rc *c)
{
	munmap(c->host, REGION);
	close(c->fd);
	axon_close(&c->r);
}

START_TEST(test_device_side)
{
	struct rc c;
	uint64_t h;

	rc_open(&c);
	ck_assert_int_eq(rc_reg(&c, 1, 0, REGION, CU_MEMHOSTALLOC_PORTABLE), 0);
	h = (uint64_t)(uintptr_t)c.host;
	/* The region's host address is a device address of this client. */
	ck_assert_int_eq(mset(&c.r, c.stream, h + 10, 100, 0xab), 0);
	ck_assert_uint_eq(c.host[10], 0xab);
	ck_assert_uint_eq(c.host[109], 0xab);
	ck_assert_uint_eq(c.host[110], 0);
	ck_assert_uint_eq(c.host[9], 0);
	ck_assert_int_eq(copy(&c.r, AXON_OP_MEMCPY_DTOD, c.stream, c.dev, h + 10, 100, false), 0);
	ck_assert_int_eq(copy(&c.r, AXON_OP_MEMCPY_DTOD, c.stream, h + 5000, c.dev, 100, false), 0);
	ck_assert_uint_eq(c.host[5000], 0xab);
	ck_assert_uint_eq(c.host[5099], 0xab);
	/* A byte before, a byte past, a length that wraps. */
	ck_assert_int_eq(mset(&c.r, c.stream, h - 1, 1, 1), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(mset(&c.r, c.stream, h + REGION - 1, 2, 1), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(copy(&c.r, AXON_OP_MEMCPY_DTOD, c.stream, c.dev, h + REGION - 8, 16,
			      false), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(copy(&c.r, AXON_OP_MEMCPY_DTOD, c.stream, h, c.dev, UINT64_MAX - h + 2,
			      false), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(copy(&c.r, AXON_OP_MEMCPY_HTOD, c.stream, h + REGION - 4, 0, 8, false),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_eq(c.host[REGION - 1], 0);
	/* Unregistered: no device address any more. */
	{
		struct axon_sqe s = { 0 };

		axon_prep_obj(&s, AXON_OP_HOSTMEM_UNREGISTER, 0, h, 0);
		ck_assert_int_eq(h_ring_res(&c.r, &s, NULL, NULL), 0);
	}
	ck_assert_int_eq(mset(&c.r, c.stream, h, 1, 1), CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_eq(c.host[0], 0);
	rc_close(&c);
	ck_assert_int_eq(wait_maps(0, H_MS(5000)), 0);
}
END_TEST

START_TEST(test_unaligned)
{
	struct rc c;
	uint64_t h;

	rc_open(&c);
	/* [h + 100, h + 8292): the memfd starts at h's page. */
	ck_assert_int_eq(rc_reg(&c, 2, 100, 8192, 0), 0);
	h = (uint64_t)(uintptr_t)c.host;
	ck_assert_int_eq(mset(&c.r, c.stream, h + 100, 8192, 0x3c), 0);
	ck_assert_uint_eq(c.host[100], 0x3c);
	ck_assert_uint_eq(c.host[8291], 0x3c);
	ck_assert_uint_eq(c.host[99], 0);
	ck_assert_uint_eq(c.host[8292], 0);
	/* The rest of its pages are mapped, and still not nameable. */
	ck_assert_int_eq(mset(&c.r, c.stream, h, 100, 1), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(mset(&c.r, c.stream, h + 8292, 1, 1), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(copy(&c.r, AXON_OP_MEMCPY_DTOH, c.stream, h + 99, c.dev, 2, true),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_eq(c.host[99], 0);
	ck_assert_int_eq(wait_maps(1, H_MS(2000)), 1);
	rc_close(&c);
	ck_assert_int_eq(wait_maps(0, H_MS(5000)), 0);
}
END_TEST

START_TEST(test_read_only)
{
	struct rc c;
	uint64_t h;

	rc_open(&c);
	memset(c.host, 0x77, REGION);
	ck_assert_int_eq(rc_reg(&c, 3, 0, REGION, AXON_HOSTMEM_F_READ_ONLY), 0);
	h = (uint64_t)(uintptr_t)c.host;
	ck_assert_int_eq(mset(&c.r, c.stream, h, 16, 1), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(copy(&c.r, AXON_OP_MEMCPY_DTOD, c.stream, h, c.dev, 16, false),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(copy(&c.r, AXON_OP_MEMCPY_HTOD, c.stream, h, 0, 16, false),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(copy(&c.r, AXON_OP_MEMCPY_DTOH, c.stream, h, c.dev, 16, true),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(copy2d_dtod(&c.r, c.stream, h, c.dev), CUDA_ERROR_INVALID_VALUE);
	/* Reading it is what it is for. */
	ck_assert_int_eq(copy(&c.r, AXON_OP_MEMCPY_DTOD, c.stream, c.dev, h, 4096, false), 0);
	ck_assert_int_eq(copy(&c.r, AXON_OP_MEMCPY_HTOD, c.stream, c.dev, h, 4096, true), 0);
	ck_assert_int_eq(copy2d_dtod(&c.r, c.stream, c.dev, h), 0);
	ck_assert_uint_eq(c.host[0], 0x77);
	ck_assert_uint_eq(c.host[15], 0x77);
	rc_close(&c);
	ck_assert_int_eq(wait_maps(0, H_MS(5000)), 0);
}
END_TEST

START_TEST(test_isolation)
{
	struct rc a, b;
	uint64_t ha;

	rc_open(&a);
	rc_open(&b);
	memset(a.host, 0x5a, REGION);
	ck_assert_int_eq(rc_reg(&a, 4, 0, REGION, 0), 0);
	ha = (uint64_t)(uintptr_t)a.host;
	/* b names a's region as device memory: not in b's table. */
	ck_assert_int_eq(mset(&b.r, b.stream, ha, 64, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(copy(&b.r, AXON_OP_MEMCPY_DTOD, b.stream, ha, b.dev, 64, false),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(copy(&b.r, AXON_OP_MEMCPY_DTOD, b.stream, b.dev, ha, 64, false),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(copy(&b.r, AXON_OP_MEMCPY_DTOH, b.stream, 0, ha, 64, false),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(copy2d_dtod(&b.r, b.stream, ha, b.dev), CUDA_ERROR_INVALID_VALUE);
	/* Nor can b put its own memfd at a's address in the daemon. */
	ck_assert_int_eq(reg(&b.r, b.fd, 5, ha, REGION, 0), CUDA_ERROR_ALREADY_MAPPED);
	ck_assert_int_eq(mset(&b.r, b.stream, ha, 64, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_eq(a.host[0], 0x5a);
	ck_assert_uint_eq(a.host[63], 0x5a);
	/* a's own region is still a's device memory. */
	ck_assert_int_eq(mset(&a.r, a.stream, ha, 64, 0x11), 0);
	ck_assert_uint_eq(a.host[63], 0x11);
	rc_close(&b);
	rc_close(&a);
	ck_assert_int_eq(wait_maps(0, H_MS(5000)), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_device_side);
	tcase_add_test(tc, test_unaligned);
	tcase_add_test(tc, test_read_only);
	tcase_add_test(tc, test_isolation);
	tcase_add_test(tc, test_transcript);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	h_require_file(h_kernel_path("cubin"));
	h_require_file(h_bin("drv-hostreg"));
	return h_check_main("integration-hostreg", "2G", NULL, add_tests, 300);
}
