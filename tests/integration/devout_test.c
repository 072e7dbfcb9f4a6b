// SPDX-License-Identifier: MIT
/*
 * integration-devout: device printf and device faults through a private
 * axond (sim backend), with the two driver-API programs the GPU check runs
 * natively and through the cuda backend (tests/gpu/drv-printf.c,
 * drv-fault.c; built here as tests/bin/drv-*).
 *
 *   printf      drv-printf's stdout is exactly its documented transcript:
 *               every kernel line reaches the client's own stdout, after
 *               the synchronisation that flushes it and before the host
 *               line that follows it (cuCtxSynchronize, cuStreamSynchronize,
 *               cuEventSynchronize, a blocking copy).
 *   fault       drv-fault: a client whose kernel asserts gets
 *               CUDA_ERROR_ASSERT, one that writes past its memory gets
 *               CUDA_ERROR_ILLEGAL_ADDRESS, both sticky to them, while a
 *               third client adds vectors before, during and after, and
 *               gets every element right and its own printf line.
 *   raw         DEVOUT_READ over a raw ring: nothing held gives 0 bytes and
 *               0 left; a data range outside the data area is refused
 *               with INVALID_VALUE; stats show no error left behind.
 *   after       the daemon holds nothing and still serves vecadd.
 */
#include <check.h>
#include <cuda.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static const char *const printf_transcript =
	"hello 1 from thread 0\n"
	"hello 2 from thread 0\n"
	"hello 3 from thread 0\n"
	"host: after cuCtxSynchronize\n"
	"hello 4 from thread 0\n"
	"host: after cuStreamSynchronize\n"
	"hello 5 from thread 0\n"
	"host: after cuEventSynchronize\n"
	"hello 6 from thread 0\n"
	"host: after cuMemcpyDtoH\n"
	"drv-printf: OK\n";

static const char *const fault_transcript =
	"== assert\n"
	"assert: launch: CUDA_SUCCESS (0)\n"
	"assert: cuCtxSynchronize: CUDA_ERROR_ASSERT (710)\n"
	"assert: cuCtxSynchronize again: CUDA_ERROR_ASSERT (710)\n"
	"assert: cuStreamSynchronize: CUDA_ERROR_ASSERT (710)\n"
	"assert: cuMemcpyDtoH: CUDA_ERROR_ASSERT (710)\n"
	"== poke\n"
	"poke: launch: CUDA_SUCCESS (0)\n"
	"poke: cuCtxSynchronize: a memory fault\n"
	"poke: cuCtxSynchronize again: a memory fault\n"
	"poke: cuStreamSynchronize: a memory fault\n"
	"poke: cuMemcpyDtoH: a memory fault\n"
	"== good\n"
	"hello 7 from thread 0\n"
	"good: every round correct, before, during and after the faults\n"
	"drv-fault: OK\n";

/* Reads fd to EOF (bounded) into buf; returns the length or -1. */
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

/* Runs tests/bin/PROG on the cubin; its stdout must be exactly want. */
static void transcript(const char *prog, const char *want)
{
	static char out[16384];
	char *argv[] = { (char *)h_bin(prog), (char *)h_kernel_path("cubin"), NULL };
	int fd = -1, rc;
	pid_t pid = h_spawn(argv, &fd);
	ssize_t n;

	ck_assert(pid > 0);
	n = read_all(fd, out, sizeof(out), H_MS(120000));
	close(fd);
	rc = h_wait_child(pid, H_MS(10000), prog);
	if (n < 0 || rc != 0 || strcmp(out, want)) {
		printf("%s exited %d; its stdout:\n%s\nexpected:\n%s", prog, rc,
		       n < 0 ? "(unreadable)" : out, want);
		ck_abort_msg("%s's transcript differs", prog);
	}
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}

START_TEST(test_printf)
{
	transcript("drv-printf", printf_transcript);
}
END_TEST

START_TEST(test_fault)
{
	transcript("drv-fault", fault_transcript);
}
END_TEST

/* DEVOUT_READ over a raw ring. */
START_TEST(test_raw)
{
	struct axon_ring r;
	struct axon_sqe *sqe;
	const struct axon_cqe *cqe;

	ck_assert_int_eq(h_ring_connect(&r, &h_daemon), 0);
	ck_assert_uint_eq(axon_read_once(&r.dpage->devout_pending), 0);

	/* Nothing held: 0 bytes, 0 left. */
	sqe = axon_get_sqe(&r);
	ck_assert_ptr_nonnull(sqe);
	axon_prep_obj(sqe, AXON_OP_DEVOUT_READ, 0, 0, 0);
	sqe->obj.data_off = 0;
	sqe->obj.data_len = 4096;
	sqe->user_data = 1;
	ck_assert_int_eq(axon_submit(&r), 1);
	ck_assert_int_eq(axon_wait_cqe(&r, &cqe, 0), 0);
	ck_assert_uint_eq(cqe->user_data, 1);
	ck_assert_int_eq(cqe->res, CUDA_SUCCESS);
	ck_assert_uint_eq(cqe->aux[0], 0);
	ck_assert_uint_eq(cqe->aux[1], 0);
	axon_cqe_seen(&r);

	/* A buffer past the data area, an empty one, a stray word: refused. */
	sqe = axon_get_sqe(&r);
	axon_prep_obj(sqe, AXON_OP_DEVOUT_READ, 0, 0, 0);
	sqe->obj.data_off = (uint32_t)(r.params.data_size - 16);
	sqe->obj.data_len = 4096;
	sqe->user_data = 2;
	sqe = axon_get_sqe(&r);
	axon_prep_obj(sqe, AXON_OP_DEVOUT_READ, 0, 0, 0);
	sqe->user_data = 3;
	sqe = axon_get_sqe(&r);
	axon_prep_obj(sqe, AXON_OP_DEVOUT_READ, 7, 0, 0);
	sqe->obj.data_len = 64;
	sqe->user_data = 4;
	ck_assert_int_eq(axon_submit(&r), 3);
	for (int i = 2; i <= 4; i++) {
		ck_assert_int_eq(axon_wait_cqe(&r, &cqe, 0), 0);
		ck_assert_uint_eq(cqe->user_data, (uint64_t)i);
		ck_assert_int_eq(cqe->res, CUDA_ERROR_INVALID_VALUE);
		axon_cqe_seen(&r);
	}
	axon_close(&r);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

START_TEST(test_after)
{
	ck_assert_int_eq(h_run_bin(H_MS(60000), "vecadd", "--quiet", NULL), 0);
	ck_assert_int_eq(h_wait_idle(&h_daemon, H_MS(5000)), 0);
}
END_TEST

static void add_tests(TCase *tc)
{
	tcase_add_test(tc, test_printf);
	tcase_add_test(tc, test_fault);
	tcase_add_test(tc, test_raw);
	tcase_add_test(tc, test_after);
}

int main(int argc, char **argv)
{
	h_init(argc, argv);
	h_require_file(h_kernel_path("cubin"));
	return h_check_main("integration-devout", "4G", NULL, add_tests, 300);
}
