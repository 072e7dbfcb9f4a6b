// SPDX-License-Identifier: MIT
/*
 * attack-pinned-addr: pinned-memory registration maps the client's memfd
 * at the client's own address in axond, so that the device pointer equals
 * the host pointer (unified addressing). Where that address was taken in
 * axond the mapping went elsewhere and REGISTER answered that address as
 * the device pointer: one request told a client where axond's memory lies,
 * defeating its address randomisation. A client that names an address
 * where axond has a mapping (read from /proc/PID/maps) gets no address
 * back: REGISTER answers ALREADY_MAPPED, maps nothing and leaves the
 * devptr field alone (the shim then maps its memfd elsewhere and asks
 * again), and copies naming that range are refused; at an address free in
 * both the device pointer is the host pointer and copies run in place.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cuda.h>

#include "attack.h"

#define REGION	(64u << 10)

struct span {
	uint64_t lo, hi;
};

/* The daemon's mappings below the top of user space; their count. */
static int daemon_maps(pid_t pid, struct span *out, int max)
{
	char path[64], line[512];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return h_fail("%s: %s", path, strerror(errno));
	while (n < max && fgets(line, sizeof(line), f)) {
		uint64_t lo, hi;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &lo, &hi) == 2 && hi <= (1ULL << 47)) {
			out[n].lo = lo;
			out[n].hi = hi;
			n++;
		}
	}
	fclose(f);
	return n;
}

static bool overlaps(const struct span *s, int n, uint64_t lo, uint64_t len)
{
	int i;

	for (i = 0; i < n; i++)
		if (lo < s[i].hi && s[i].lo < lo + len)
			return true;
	return false;
}

static int sealed_memfd(void)
{
	int fd = memfd_create("pinned-addr", MFD_ALLOW_SEALING | MFD_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, REGION), 0);
	ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	return fd;
}

/* Registers fd mapped at base under cookie; the result, devptr in *dp. */
static int32_t reg(struct axon_ring *r, int fd, uint64_t cookie, uint64_t base, uint64_t *dp)
{
	const struct axon_hostmem_fd msg = {
		.magic = AXON_MAGIC, .kind = AXON_HOSTMEM_FD_KIND, .cookie = cookie,
	};
	struct axon_hostmem_info info = { .devptr = 0xdeadbeef };
	struct axon_sqe s = { 0 };
	int32_t res;

	ck_assert_int_eq(a_send_fd(r->sock_fd, &msg, sizeof(msg), fd), 0);
	memcpy(r->data, &info, sizeof(info));
	axon_prep_obj(&s, AXON_OP_HOSTMEM_REGISTER, cookie, base, REGION);
	s.obj.arg2 = CU_MEMHOSTALLOC_DEVICEMAP;
	s.obj.data_off = 0;
	s.obj.data_len = sizeof(info);
	res = h_ring_res(r, &s, NULL, NULL);
	memcpy(&info, r->data, sizeof(info));
	*dp = info.devptr;
	return res;
}

/* Through the device and back: the region serves copies in place. */
static void round_trip(struct axon_ring *r, uint64_t stream, uint64_t dev, unsigned char *host,
		       unsigned char pattern)
{
	struct axon_sqe s = { 0 };
	unsigned int i;

	memset(host, pattern, REGION);
	axon_prep_copy(&s, AXON_OP_MEMCPY_HTOD, stream, dev, (uint64_t)(uintptr_t)host, REGION);
	s.copy.host_flags = AXON_COPY_F_HOSTMEM;
	ck_assert_int_eq(h_ring_res(r, &s, NULL, NULL), CUDA_SUCCESS);
	memset(r->data, 0, REGION);
	memset(&s, 0, sizeof(s));
	axon_prep_copy(&s, AXON_OP_MEMCPY_DTOH, stream, 0, dev, REGION);
	ck_assert_int_eq(h_ring_res(r, &s, NULL, NULL), CUDA_SUCCESS);
	for (i = 0; i < REGION; i++)
		ck_assert_msg(r->data[i] == pattern, "byte %u reads %#x", i, r->data[i]);
}

START_TEST(taken_address)
{
	static struct span maps[4096];
	struct axon_ring r;
	uint64_t ctx, stream, dev, dp;
	unsigned char *host = MAP_FAILED;
	int32_t res;
	int fd, n, i, attempt;

	ck_assert_int_eq(h_ring_connect(&r, &h_daemon), 0);
	ck_assert_int_eq(h_ring_ctx_create(&r, &ctx, &stream), 0);
	ck_assert_int_eq(h_ring_map(&r, ctx, 0, REGION, &dev), 0);

	/* An address axond has a mapping at and this process has not. */
	n = daemon_maps(h_daemon.pid, maps, 4096);
	ck_assert_int_gt(n, 0);
	fd = sealed_memfd();
	for (i = 0; i < n && host == MAP_FAILED; i++) {
		host = mmap((void *)(uintptr_t)maps[i].lo, REGION, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
		if (host != MAP_FAILED && host != (void *)(uintptr_t)maps[i].lo) {
			munmap(host, REGION);
			host = MAP_FAILED;
		}
	}
	ck_assert_msg(host != MAP_FAILED, "no address of axond's is free here");
	res = reg(&r, fd, 1, (uint64_t)(uintptr_t)host, &dp);
	close(fd);
	ck_assert_msg(res == CUDA_ERROR_ALREADY_MAPPED && dp == 0xdeadbeef,
		      "REGISTER at %p (taken in axond): res %d, device pointer %#llx (%s)",
		      (void *)host, res, (unsigned long long)dp,
		      dp == 0xdeadbeef ? "untouched" : "an address of axond's");
	{
		struct axon_sqe s = { 0 };

		axon_prep_copy(&s, AXON_OP_MEMCPY_HTOD, stream, dev, (uint64_t)(uintptr_t)host,
			       REGION);
		s.copy.host_flags = AXON_COPY_F_HOSTMEM;
		ck_assert_int_eq(h_ring_res(&r, &s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
	}
	munmap(host, REGION);

	/* Free in both: unified, the device pointer is the host pointer. The
	 * daemon's own mappings change while it runs (its heap, its threads'
	 * stacks), so an address free in its maps a moment ago may be taken
	 * by the time it registers: ALREADY_MAPPED, rightly; then another. */
	fd = sealed_memfd();
	for (attempt = 0; attempt < 8; attempt++) {
		n = daemon_maps(h_daemon.pid, maps, 4096);
		for (i = 0; i < 64; i++) {
			host = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			ck_assert(host != MAP_FAILED);
			if (!overlaps(maps, n, (uint64_t)(uintptr_t)host, REGION))
				break;
			/* Taken there: keep it mapped so the next try lands
			 * elsewhere. */
		}
		res = reg(&r, fd, 2 + attempt, (uint64_t)(uintptr_t)host, &dp);
		if (res != CUDA_ERROR_ALREADY_MAPPED)
			break;
	}
	ck_assert_int_eq(res, CUDA_SUCCESS);
	close(fd);
	ck_assert_uint_eq(dp, (uint64_t)(uintptr_t)host);
	round_trip(&r, stream, dev, host, 0xa3);

	axon_close(&r);
	ck_assert_msg(h_daemon_running(&h_daemon), "axond died");
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add(TCase *tc)
{
	tcase_add_test(tc, taken_address);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	return h_check_main("attack-pinned-addr", "1G", NULL, add, 60);
}
