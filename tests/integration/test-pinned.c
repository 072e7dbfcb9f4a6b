// SPDX-License-Identifier: MIT
/*
 * integration-pinned: pinned host memory shared with the daemon
 * (AXON_OP_HOSTMEM_REGISTER / UNREGISTER, AXON_COPY_F_HOSTMEM).
 *
 *   shim        tests/bin/pinned (sizes 1 B..256 MiB byte for byte, async
 *               order, freeing with copies in flight, fork); afterwards the
 *               daemon holds nothing and maps no client memfd
 *   raw_copies  a raw client registers a memfd and copies from and to it
 *               in place; ranges past the region's end are refused
 *   isolation   another client can neither copy through, unregister, nor
 *               claim (by cookie) the first client's region
 *   bad_fds     a plain file, an unsealed memfd, one too small, a read-only
 *               one, an unknown cookie, wrapping, in-window or overlapping
 *               ranges: refused with the documented errors, nothing mapped
 *   bad_message anything else on the socket ends the connection
 *   release     disconnecting releases every mapping the daemon held
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cuda.h>

#include "harness.h"

#define REGION	(1u << 20)

/* The daemon's mappings of client memfds ("memfd:axon..." in its maps). */
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
		if (strstr(line, "/memfd:axon-test") || strstr(line, "/memfd:axon-pinned"))
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

/* A memfd of len bytes, sealed as the daemon wants unless seal is false. */
static int make_memfd(size_t len, bool seal)
{
	int fd = memfd_create("axon-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, (off_t)len), 0);
	if (seal)
		ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	return fd;
}

static int32_t reg(struct axon_ring *r, uint64_t cookie, uint64_t addr, uint64_t len,
		   uint64_t flags)
{
	struct axon_sqe s = { 0 };

	axon_prep_obj(&s, AXON_OP_HOSTMEM_REGISTER, cookie, addr, len);
	s.obj.arg2 = flags;
	s.obj.data_off = 0;
	s.obj.data_len = sizeof(struct axon_hostmem_info);
	return h_ring_res(r, &s, NULL, NULL);
}

static int32_t unreg(struct axon_ring *r, uint64_t addr)
{
	struct axon_sqe s = { 0 };

	axon_prep_obj(&s, AXON_OP_HOSTMEM_UNREGISTER, 0, addr, 0);
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

/* A connected raw client with a context, 4 MiB mapped and one region. */
struct rc {
	struct axon_ring r;
	uint64_t ctx, stream, dev;
	unsigned char *host;	/* REGION bytes, registered */
	int fd;			/* its memfd */
};

static void rc_open(struct rc *c, uint64_t cookie)
{
	memset(c, 0, sizeof(*c));
	ck_assert_int_eq(h_ring_connect(&c->r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&c->r, &c->ctx, &c->stream), 0);
	ck_assert_int_eq(h_ring_map(&c->r, c->ctx, 0, 4u << 20, &c->dev), 0);
	c->fd = make_memfd(REGION, true);
	c->host = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	ck_assert(c->host != MAP_FAILED);
	ck_assert_int_eq(h_hostmem_register(&c->r, c->fd, cookie, &c->host, REGION, 0, REGION,
					    CU_MEMHOSTALLOC_DEVICEMAP), 0);
	/* The device pointer came back in the data area. */
	{
		struct axon_hostmem_info info;

		memcpy(&info, c->r.data, sizeof(info));
		ck_assert_uint_ne(info.devptr, 0);
	}
}

static void rc_close(struct rc *c)
{
	munmap(c->host, REGION);
	close(c->fd);
	axon_close(&c->r);
}

START_TEST(test_shim)
{
	struct json *doc;

	ck_assert_int_eq(h_run_bin(H_MS(300000), "pinned", NULL), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
	doc = h_stats(&h_daemon);
	ck_assert(doc != NULL);
	ck_assert_uint_ge(json_u64(json_path(doc, "daemon.clients_total"), 0), 2);
	json_free(doc);
	ck_assert_int_eq(wait_maps(0, H_MS(5000)), 0);
}
END_TEST

START_TEST(test_raw_copies)
{
	uint64_t h;
	struct rc c;
	unsigned int i;

	rc_open(&c, 11);
	h = (uint64_t)(uintptr_t)c.host;
	ck_assert_int_eq(wait_maps(1, H_MS(2000)), 1);
	for (i = 0; i < REGION; i++)
		c.host[i] = (unsigned char)(i * 7 + 1);
	/* Host region -> device, device -> another place in the region. */
	ck_assert_int_eq(copy(&c.r, AXON_OP_MEMCPY_HTOD, c.stream, c.dev, h, REGION / 2, true), 0);
	ck_assert_int_eq(copy(&c.r, AXON_OP_MEMCPY_DTOH, c.stream, h + REGION / 2 + 3, c.dev + 5,
			      1000, true), 0);
	for (i = 0; i < 1000; i++)
		ck_assert_uint_eq(c.host[REGION / 2 + 3 + i], (unsigned char)((i + 5) * 7 + 1));
	/* Whole region, the last byte, and one past the end. */
	ck_assert_int_eq(copy(&c.r, AXON_OP_MEMCPY_HTOD, c.stream, c.dev, h, REGION, true), 0);
	ck_assert_int_eq(copy(&c.r, AXON_OP_MEMCPY_HTOD, c.stream, c.dev, h + REGION - 1, 1, true), 0);
	ck_assert_int_eq(copy(&c.r, AXON_OP_MEMCPY_HTOD, c.stream, c.dev, h + 1, REGION, true),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(copy(&c.r, AXON_OP_MEMCPY_DTOH, c.stream, h - 1, c.dev, 2, true),
			 CUDA_ERROR_INVALID_VALUE);
	/* Unknown host flags, and the flag on a device-to-device copy. */
	{
		struct axon_sqe s = { 0 };

		axon_prep_copy(&s, AXON_OP_MEMCPY_HTOD, c.stream, c.dev, h, 8);
		s.copy.host_flags = 2;
		ck_assert_int_eq(h_ring_res(&c.r, &s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
		axon_prep_copy(&s, AXON_OP_MEMCPY_DTOD, c.stream, c.dev, c.dev + 64, 8);
		s.copy.host_flags = AXON_COPY_F_HOSTMEM;
		ck_assert_int_eq(h_ring_res(&c.r, &s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
		axon_prep_copy(&s, AXON_OP_MEMCPY_HTOD, c.stream, c.dev, h, 8);
		s.copy.host_flags = AXON_COPY_F_HOSTMEM;
		s.copy.resv1 = 1;
		ck_assert_int_eq(h_ring_res(&c.r, &s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	}
	/* Unregistered: named no more; the mapping goes after queued work. */
	ck_assert_int_eq(unreg(&c.r, h + 4096), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(unreg(&c.r, h), 0);
	ck_assert_int_eq(unreg(&c.r, h), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(copy(&c.r, AXON_OP_MEMCPY_HTOD, c.stream, c.dev, h, 8, true),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(wait_maps(0, H_MS(2000)), 0);
	rc_close(&c);
}
END_TEST

START_TEST(test_isolation)
{
	struct rc a, b;
	uint64_t ha;

	rc_open(&a, 21);
	rc_open(&b, 22);
	ha = (uint64_t)(uintptr_t)a.host;
	memset(a.host, 0x5a, REGION);
	/* b names a's region: its table has no such range. */
	ck_assert_int_eq(copy(&b.r, AXON_OP_MEMCPY_HTOD, b.stream, b.dev, ha, 64, true),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(copy(&b.r, AXON_OP_MEMCPY_DTOH, b.stream, ha, b.dev, 64, true),
			 CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(unreg(&b.r, ha), CUDA_ERROR_INVALID_VALUE);
	/* a's cookie is not b's: b cannot claim a descriptor it did not send. */
	ck_assert_int_eq(reg(&b.r, 21, ha, REGION, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_uint_eq(a.host[0], 0x5a);
	ck_assert_uint_eq(a.host[REGION - 1], 0x5a);
	/* a's region still works for a. */
	ck_assert_int_eq(copy(&a.r, AXON_OP_MEMCPY_HTOD, a.stream, a.dev, ha, 64, true), 0);
	rc_close(&b);
	rc_close(&a);
	ck_assert_int_eq(wait_maps(0, H_MS(2000)), 0);
}
END_TEST

START_TEST(test_bad_fds)
{
	struct axon_ring r;
	unsigned char *p;
	char path[] = "/tmp/axon-pinned-XXXXXX";
	uint64_t a;
	int fd;

	ck_assert_int_eq(h_ring_connect(&r, &h_daemon), 0);
	p = mmap(NULL, 4 * REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert(p != MAP_FAILED);
	a = (uint64_t)(uintptr_t)p;
	/* A plain file (no seals possible). */
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(ftruncate(fd, REGION), 0);
	ck_assert_int_eq(h_send_hostmem_fd(&r, fd, 1), 0);
	close(fd);
	ck_assert_int_eq(reg(&r, 1, a, REGION, 0), CUDA_ERROR_INVALID_VALUE);
	/* An unsealed memfd: could shrink under the daemon. */
	fd = make_memfd(REGION, false);
	ck_assert_int_eq(h_send_hostmem_fd(&r, fd, 2), 0);
	close(fd);
	ck_assert_int_eq(reg(&r, 2, a, REGION, 0), CUDA_ERROR_INVALID_VALUE);
	/* Too small for the range. */
	fd = make_memfd(REGION, true);
	ck_assert_int_eq(h_send_hostmem_fd(&r, fd, 3), 0);
	close(fd);
	ck_assert_int_eq(reg(&r, 3, a, REGION + 1, 0), CUDA_ERROR_INVALID_VALUE);
	/* Read-only: the daemon cannot map it read-write. */
	fd = make_memfd(REGION, true);
	{
		char proc[64];
		int ro;

		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		ro = open(proc, O_RDONLY | O_CLOEXEC);
		ck_assert_int_ge(ro, 0);
		ck_assert_int_eq(h_send_hostmem_fd(&r, ro, 4), 0);
		close(ro);
	}
	ck_assert_int_eq(reg(&r, 4, a, REGION, 0), CUDA_ERROR_INVALID_VALUE);
	/* Unknown cookie, cookie 0, a range whose pages wrap, one inside
	 * the client's device window, unknown flags, no data buffer, each
	 * with a good descriptor waiting. */
	ck_assert_int_eq(h_send_hostmem_fd(&r, fd, 5), 0);
	ck_assert_int_eq(reg(&r, 99, a, REGION, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(reg(&r, 0, a, REGION, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(reg(&r, 5, UINT64_MAX - 100, 50, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(reg(&r, 5, r.params.va_base + 4096, REGION, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(reg(&r, 5, r.params.va_base - 4096, 8192, 0), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(reg(&r, 5, a, REGION, 0x80), CUDA_ERROR_INVALID_VALUE);
	{
		struct axon_sqe s = { 0 };

		axon_prep_obj(&s, AXON_OP_HOSTMEM_REGISTER, 5, a, REGION);
		s.obj.data_off = (uint32_t)r.params.data_size;
		s.obj.data_len = sizeof(struct axon_hostmem_info);
		ck_assert_int_eq(h_ring_res(&r, &s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	}
	ck_assert_int_eq(wait_maps(0, H_MS(1000)), 0);
	/* Finally a good one, and an overlapping second one. */
	ck_assert_int_eq(reg(&r, 5, a, REGION, 0), 0);
	ck_assert_int_eq(h_send_hostmem_fd(&r, fd, 6), 0);
	ck_assert_int_eq(reg(&r, 6, a + REGION - 4096, REGION, 0),
			 CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED);
	ck_assert_int_eq(h_send_hostmem_fd(&r, fd, 7), 0);
	ck_assert_int_eq(reg(&r, 7, a + REGION, REGION, 0), 0);	/* adjacent: fine */
	close(fd);
	ck_assert_int_eq(wait_maps(2, H_MS(1000)), 2);
	/* Disconnecting releases both. */
	axon_close(&r);
	ck_assert_int_eq(wait_maps(0, H_MS(5000)), 0);
	munmap(p, 4 * REGION);
}
END_TEST

START_TEST(test_bad_message)
{
	struct axon_hostmem_fd m = { .magic = AXON_MAGIC, .kind = 9, .cookie = 1 };
	struct axon_ring r;
	struct axon_sqe s = { 0 };
	struct axon_cqe cqe;
	int ret;

	ck_assert_int_eq(h_ring_connect(&r, &h_daemon), 0);
	/* A well-formed header of an unknown kind, without a descriptor. */
	ck_assert_int_eq(send(r.sock_fd, &m, sizeof(m), MSG_NOSIGNAL), (ssize_t)sizeof(m));
	axon_prep_obj(&s, AXON_OP_NOP, 0, 0, 0);
	/* The daemon closes the connection once its event loop sees the
	 * message: from then on no completion comes. */
	{
		uint64_t end = h_now_ms() + H_MS(5000);

		do {
			ret = h_ring_sync(&r, &s, &cqe, H_MS(1000));
			if (!ret)
				h_poll_pause();
		} while (!ret && h_now_ms() < end);
	}
	ck_assert_int_ne(ret, 0);
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_raw_copies);
	tcase_add_test(tc, test_isolation);
	tcase_add_test(tc, test_bad_fds);
	tcase_add_test(tc, test_bad_message);
	tcase_add_test(tc, test_shim);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("integration-pinned", "2G", NULL, add_tests, 300);
}
