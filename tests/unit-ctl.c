// SPDX-License-Identifier: MIT
/*
 * unit-ctl: axond/ctl.c, the messages between the supervisor of
 * --isolation=process and its workers, over a SOCK_SEQPACKET socketpair
 * as they use it. The hand-off of a /dev/axon client (CTL_KCLIENT) carries
 * a descriptor and the identity the kernel reported: both arrive whole
 * (the descriptor usable, the identity byte for byte), and a record of the
 * wrong size, or a CTL_KCLIENT where none is expected, is dropped with the
 * descriptor it carried closed, never half read.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "axond.h"
#include "ctl.h"

static int sp[2];

static void setup(void)
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	axond_verbose = LOG_ERR;	/* the malformed records' warnings */
}

static void teardown(void)
{
	close(sp[0]);
	close(sp[1]);
}

static void fill(struct ctl_kclient *kc)
{
	memset(kc, 0, sizeof(*kc));
	kc->ev.client_id = 0x1122334455667788ULL;
	kc->ev.events = AXON_EV_OPEN;
	kc->ev.state = AXON_KSTATE_PENDING;
	kc->ev.pid = 4242;
	kc->ev.uid = 1000;
	kc->ev.gid = 1001;
	kc->ev.cgroup_id = 987654321;
	kc->ev.start_time_ns = 123456789012ULL;
	strcpy(kc->ev.comm, "vecadd");
	kc->params.sq_entries = 256;
	kc->params.cq_entries = 512;
	kc->params.data_size = 8 << 20;
	kc->params.off_data = 0x5000;
}

/* A descriptor that arrived is the one sent: what goes in one end of the
 * pipe comes out of the other. */
static void assert_same_pipe(int got, int rd)
{
	char c = 0;

	ck_assert_int_ge(got, 0);
	ck_assert_int_eq(fcntl(got, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	ck_assert_int_eq(write(got, "x", 1), 1);
	ck_assert_int_eq(read(rd, &c, 1), 1);
	ck_assert_int_eq(c, 'x');
}

START_TEST(test_kclient_round_trip)
{
	struct ctl_kclient kc, got;
	struct ctl_msg m;
	int p[2], fd;

	ck_assert_int_eq(pipe(p), 0);
	fill(&kc);
	ck_assert_int_eq(ctl_send_kclient(sp[0], 77, &kc, p[1]), 0);
	close(p[1]);
	memset(&got, 0xa5, sizeof(got));
	ck_assert_int_eq(ctl_recv(sp[1], &m, &got, &fd),
			 (ssize_t)(sizeof(m) + sizeof(got)));
	ck_assert_uint_eq(m.type, CTL_KCLIENT);
	ck_assert_uint_eq(m.value, 77);
	ck_assert_mem_eq(&got, &kc, sizeof(kc));
	assert_same_pipe(fd, p[0]);
	close(fd);
	close(p[0]);
	/* Nothing more waits. */
	ck_assert_int_eq(ctl_recv(sp[1], &m, &got, &fd), -EAGAIN);
	ck_assert_int_eq(fd, -1);
}
END_TEST

/* The other messages still carry no more than their header. */
START_TEST(test_plain_message)
{
	struct ctl_kclient got;
	struct ctl_msg m;
	int fd;

	ck_assert_int_eq(ctl_send(sp[0], CTL_READY, 1ULL << 34, -1), 0);
	ck_assert_int_eq(ctl_recv(sp[1], &m, &got, &fd), (ssize_t)sizeof(m));
	ck_assert_uint_eq(m.type, CTL_READY);
	ck_assert_uint_eq(m.value, 1ULL << 34);
	ck_assert_int_eq(fd, -1);
	ck_assert_int_eq(ctl_send(sp[0], CTL_IDLE, 1, -1), 0);
	ck_assert_int_eq(ctl_recv(sp[1], &m, NULL, &fd), (ssize_t)sizeof(m));
	ck_assert_uint_eq(m.type, CTL_IDLE);
}
END_TEST

/* The supervisor expects no CTL_KCLIENT: one is dropped, its descriptor
 * closed, and the next message is read whole. */
START_TEST(test_kclient_unexpected)
{
	struct ctl_kclient kc;
	struct ctl_msg m;
	int p[2], fd;
	char c;

	ck_assert_int_eq(pipe(p), 0);
	fill(&kc);
	ck_assert_int_eq(ctl_send_kclient(sp[0], 1, &kc, p[1]), 0);
	close(p[1]);
	ck_assert_int_eq(ctl_send(sp[0], CTL_END, 0, -1), 0);
	ck_assert_int_eq(ctl_recv(sp[1], &m, NULL, &fd), -EAGAIN);
	ck_assert_int_eq(fd, -1);
	/* Every write end is closed: the one passed was too. */
	ck_assert_int_eq(read(p[0], &c, 1), 0);
	close(p[0]);
	ck_assert_int_eq(ctl_recv(sp[1], &m, NULL, &fd), (ssize_t)sizeof(m));
	ck_assert_uint_eq(m.type, CTL_END);
}
END_TEST

/* Records of the wrong size: a CTL_KCLIENT cut short, a header with
 * trailing bytes, half a header. Each is dropped and its descriptor
 * closed. */
static void send_raw(const void *buf, size_t len, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		struct cmsghdr *c;

		msg.msg_control = cbuf;
		msg.msg_controllen = sizeof(cbuf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	ck_assert_int_eq(sendmsg(sp[0], &msg, 0), (ssize_t)len);
}

START_TEST(test_wrong_sizes)
{
	struct {
		struct ctl_msg m;
		struct ctl_kclient kc;
		char extra[8];
	} rec;
	const size_t sizes[] = {
		sizeof(struct ctl_msg) + sizeof(struct ctl_kclient) - 1,	/* KCLIENT short */
		sizeof(struct ctl_msg) + sizeof(struct ctl_kclient) + 8,	/* KCLIENT long */
		sizeof(struct ctl_msg) + 1,					/* READY long */
		sizeof(struct ctl_msg) - 4,					/* half a header */
	};
	const uint32_t types[] = { CTL_KCLIENT, CTL_KCLIENT, CTL_READY, CTL_READY };
	struct ctl_kclient got;
	struct ctl_msg m;
	unsigned int i;
	int p[2], fd;
	char c;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(&rec, 0, sizeof(rec));
		rec.m.type = types[i];
		fill(&rec.kc);
		ck_assert_int_eq(pipe(p), 0);
		send_raw(&rec, sizes[i], p[1]);
		close(p[1]);
		ck_assert_int_eq(ctl_recv(sp[1], &m, &got, &fd), -EAGAIN);
		ck_assert_int_eq(fd, -1);
		ck_assert_int_eq(read(p[0], &c, 1), 0);
		close(p[0]);
	}
}
END_TEST

/* The other end gone: 0, as at a worker's or the supervisor's end. */
START_TEST(test_peer_closed)
{
	struct ctl_msg m;
	int fd;

	close(sp[0]);
	sp[0] = open("/dev/null", O_RDONLY);
	ck_assert_int_eq(ctl_recv(sp[1], &m, NULL, &fd), 0);
	ck_assert_int_eq(ctl_send(sp[1], CTL_READY, 0, -1), -EIO);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("unit-ctl");
	TCase *tc = tcase_create("ctl");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_kclient_round_trip);
	tcase_add_test(tc, test_plain_message);
	tcase_add_test(tc, test_kclient_unexpected);
	tcase_add_test(tc, test_wrong_sizes);
	tcase_add_test(tc, test_peer_closed);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
