// SPDX-License-Identifier: MIT
/*
 * The kernel transport: a client is an open /dev/axon. The kernel allocates
 * the region, captures our identity and tells the daemon; we map each part
 * at its own offset (the kernel enforces who may write which) and sleep and
 * ring through ioctls, since futexes do not work on its pages.
 * Documentation/kmod.rst §3, §4 and §6.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <axon/libaxon.h>
#include "transport.h"

struct part {
	uint64_t mmap_off;	/* AXON_OFF_* */
	uint64_t region_off;	/* where params say it lies */
	uint64_t len;
	int prot;
};

static int map_part(struct axon_ring *r, unsigned int i, const struct part *p,
		    void **out)
{
	void *m;

	if (!p->len)
		return -EPROTO;
	m = mmap(NULL, p->len, p->prot, MAP_SHARED, r->dev_fd, (off_t)p->mmap_off);
	if (m == MAP_FAILED)
		return -errno;
	r->maps[i] = m;
	r->map_len[i] = p->len;
	*out = m;
	return 0;
}

static void kmod_unmap(struct axon_ring *r)
{
	unsigned int i;

	for (i = 0; i < sizeof(r->maps) / sizeof(r->maps[0]); i++) {
		if (r->maps[i])
			munmap(r->maps[i], r->map_len[i]);
		r->maps[i] = NULL;
	}
}

static int kmod_reserve(int fd, uint64_t bytes, uint32_t flags, struct axon_reserve *out)
{
	struct axon_reserve rv = { .bytes = bytes, .flags = flags };
	int ret = ioctl(fd, AXON_IOC_RESERVE, &rv) < 0 ? -errno : 0;

	if (out)
		*out = rv;
	return ret;
}

/*
 * The reservation back at the floor: what is above goes back to dmem; what
 * is below is reserved, as much of it as dmem.max lets (halving the step
 * until a unit).
 */
static void kmod_settle(int fd)
{
	struct axon_reserve rv;
	uint64_t step;

	if (kmod_reserve(fd, 0, 0, &rv))
		return;
	if (rv.reserved > rv.floor) {
		kmod_reserve(fd, rv.reserved - rv.floor, AXON_RESERVE_F_RELEASE, NULL);
		return;
	}
	for (step = rv.floor - rv.reserved; step >= AXON_RESERVE_UNIT; step /= 2)
		if (kmod_reserve(fd, rv.reserved + step, 0, NULL) != -EDQUOT)
			return;
}

/*
 * Where charges go through dmem (kmod.rst §15): the minting credit is what
 * the shim allocates without asking, and the daemon charges those
 * allocations while we are not waiting, so it is the floor, kept reserved
 * across frees; reserved now as far as dmem.max lets.
 */
static void kmod_dmem_setup(struct axon_ring *r)
{
	if (kmod_reserve(r->dev_fd, r->params.mint_credit, AXON_RESERVE_F_FLOOR, NULL))
		return;		/* EOPNOTSUPP: no dmem */
	r->dmem = 1;
	kmod_settle(r->dev_fd);
}

int axon_reserve(struct axon_ring *r, uint64_t bytes)
{
	if (r->transport != AXON_TRANSPORT_KMOD || !r->dmem)
		return -EOPNOTSUPP;
	return kmod_reserve(r->dev_fd, bytes, 0, NULL);
}

void axon_reserve_settle(struct axon_ring *r)
{
	if (r->transport == AXON_TRANSPORT_KMOD && r->dmem)
		kmod_settle(r->dev_fd);
}

static int kmod_connect(const char *path, const struct axon_params *req,
			struct axon_ring *r, char *err, size_t errlen)
{
	const size_t page = 4096;
	struct axon_params p;
	struct part parts[6];
	void *ptr[6], *info;
	unsigned int i;
	int ret;

	if (req)
		p = *req;
	else
		memset(&p, 0, sizeof(p));
	r->dev_fd = open(path, O_RDWR | O_CLOEXEC);
	if (r->dev_fd < 0) {
		ret = -errno;
		axon_set_err(err, errlen, "cannot open %s: %s%s", path, strerror(-ret),
			ret == -EMFILE ? " (the module's max_user_clients for this user, "
			"or the process's descriptor limit)" : "");
		return ret;
	}
	if (ioctl(r->dev_fd, AXON_IOC_SETUP, &p) < 0) {
		ret = -errno;
		if (ret == -ECONNREFUSED)
			axon_set_err(err, errlen, "no axond is attached to %s", path);
		else if (ret == -EDQUOT)
			axon_set_err(err, errlen, "%s: setup refused: this user's rings would pass "
				     "the module's max_user_region_bytes", path);
		else
			axon_set_err(err, errlen, "%s: setup refused: %s", path, strerror(-ret));
		goto err_close;
	}
	/* The kernel laid the region out with its page size. */
	ret = axon_check_layout(&p, (uint64_t)sysconf(_SC_PAGESIZE), "the kernel",
				err, errlen);
	if (ret)
		goto err_close;
	/* Each part's size is the distance to the next, as laid out. */
	parts[0] = (struct part){ AXON_OFF_CLIENT_PAGE, p.off_client,
				  p.off_daemon - p.off_client, PROT_READ | PROT_WRITE };
	parts[1] = (struct part){ AXON_OFF_DAEMON_PAGE, p.off_daemon,
				  p.off_frontier - p.off_daemon, PROT_READ };
	parts[2] = (struct part){ AXON_OFF_FRONTIER, p.off_frontier,
				  p.off_sqes - p.off_frontier, PROT_READ };
	parts[3] = (struct part){ AXON_OFF_SQES, p.off_sqes,
				  p.off_cqes - p.off_sqes, PROT_READ | PROT_WRITE };
	parts[4] = (struct part){ AXON_OFF_CQES, p.off_cqes,
				  p.off_data - p.off_cqes, PROT_READ };
	parts[5] = (struct part){ AXON_OFF_DATA, p.off_data, p.data_size,
				  PROT_READ | PROT_WRITE };
	for (i = 0; i < 6; i++) {
		ret = map_part(r, i, &parts[i], &ptr[i]);
		if (ret) {
			axon_set_err(err, errlen, "mapping part %u of the region: %s", i,
				strerror(-ret));
			goto err_unmap;
		}
	}
	r->info_size = (sizeof(struct axon_info) + page - 1) & ~(page - 1);
	info = mmap(NULL, r->info_size, PROT_READ, MAP_SHARED, r->dev_fd, AXON_OFF_INFO);
	if (info == MAP_FAILED) {
		ret = -errno;
		axon_set_err(err, errlen, "mapping the info page: %s", strerror(-ret));
		goto err_unmap;
	}
	r->maps[6] = info;
	r->map_len[6] = r->info_size;
	r->info = info;
	r->params = p;
	r->cpage = ptr[0];
	r->dpage = ptr[1];
	r->frontier = ptr[2];
	r->sqes = ptr[3];
	r->cqes = ptr[4];
	r->data = ptr[5];
	r->data_size = p.data_size;
	r->sock_fd = r->doorbell_fd = -1;
	kmod_dmem_setup(r);
	return 0;

err_unmap:
	kmod_unmap(r);
err_close:
	close(r->dev_fd);
	r->dev_fd = -1;
	return ret;
}

static int kmod_doorbell(struct axon_ring *r, uint32_t n)
{
	struct axon_enter e = { .to_submit = n };

	if (ioctl(r->dev_fd, AXON_IOC_ENTER, &e) < 0)
		return errno == ECONNRESET ? -EPIPE : -errno;
	return 0;
}

/*
 * Sleeps until a CQE is available or slice_ns passes; the kernel checks the
 * CQ itself (min_complete), so seen_tail is not needed. Its deadline is
 * absolute, on CLOCK_MONOTONIC.
 */
static int kmod_wait(struct axon_ring *r, uint32_t seen_tail, uint64_t slice_ns)
{
	struct axon_enter e = {
		.min_complete = 1,
		.flags = AXON_ENTER_GETEVENTS,
	};
	struct timespec now;

	(void)seen_tail;
	clock_gettime(CLOCK_MONOTONIC, &now);
	e.timeout_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec +
		       slice_ns;
	if (ioctl(r->dev_fd, AXON_IOC_ENTER, &e) < 0) {
		if (errno == ETIME || errno == EINTR)
			return 0;	/* the caller re-checks and decides */
		return errno == ECONNRESET ? -EPIPE : -errno;
	}
	return 0;
}

/* The kernel hangs the file up when the daemon goes or disconnects us. */
static int kmod_alive(struct axon_ring *r)
{
	struct pollfd pfd = { .fd = r->dev_fd, .events = POLLIN };

	if (poll(&pfd, 1, 0) > 0 && (pfd.revents & (POLLHUP | POLLERR)))
		return -EPIPE;
	return 0;
}

static void kmod_close(struct axon_ring *r)
{
	kmod_unmap(r);
	if (r->dev_fd >= 0)
		close(r->dev_fd);
}

/* No descriptor can cross: the module offers no way to pass one. */
const struct axon_transport_ops axon_transport_kmod = {
	.name		= "kmod",
	.id		= AXON_TRANSPORT_KMOD,
	.connect	= kmod_connect,
	.doorbell	= kmod_doorbell,
	.wait		= kmod_wait,
	.alive		= kmod_alive,
	.close		= kmod_close,
};
