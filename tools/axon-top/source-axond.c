// SPDX-License-Identifier: MIT
/*
 * source-axond.c - the daemon as axon-top's source: the stats document
 * (libaxon's axon_read_stats, parsed with tools/common/json.c) and the trace connection
 * (AXON_HELLO_TRACE).
 *
 * The trace connection is written here because libaxon has no call for it
 * yet: axon_send_hello() cannot name a target. top_trace_connect() and
 * top_trace_recv() are candidates for libaxon (axon_trace_open /
 * axon_trace_read).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <axon/libaxon.h>

#include "json.h"
#include "source.h"
#include "top.h"

/* ---- the stats document ------------------------------------------------ */

static void copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

static void parse_client(const struct json *j, struct top_client *c)
{
	const struct json *h = json_get(j, "handles");
	const struct json *ops = json_get(j, "ops");
	const struct json *lat = json_get(j, "latency_us");
	const struct json *o;

	c->id = json_u64(json_get(j, "id"), 0);
	c->pid = (pid_t)json_i64(json_get(j, "pid"), 0);
	c->uid = (uint32_t)json_u64(json_get(j, "uid"), (uint32_t)-1);
	c->gid = (uint32_t)json_u64(json_get(j, "gid"), (uint32_t)-1);
	copy_str(c->comm, sizeof(c->comm), json_str(json_get(j, "comm"), ""));
	copy_str(c->transport, sizeof(c->transport), json_str(json_get(j, "transport"), ""));
	c->connected_s = json_num(json_get(j, "connected_s"), 0);
	c->tracers = (uint32_t)json_u64(json_get(j, "tracers"), 0);
	c->bytes_mapped = json_u64(json_get(j, "bytes_mapped"), 0);
	c->mint_credit = json_u64(json_get(j, "mint_credit"), 0);
	c->allocations = json_u64(json_get(j, "allocations"), 0);
	/* Fields a later daemon (or the module) may add. */
	c->mem_limit = json_u64(json_get(j, "mem_limit"), TOP_UNKNOWN);
	c->device = (int)json_i64(json_get(j, "device"), -1);
	copy_str(c->cgroup, sizeof(c->cgroup), json_str(json_get(j, "cgroup"), ""));

	c->contexts = (uint32_t)json_u64(json_get(h, "contexts"), 0);
	c->streams = (uint32_t)json_u64(json_get(h, "streams"), 0);
	c->events = (uint32_t)json_u64(json_get(h, "events"), 0);
	c->modules = (uint32_t)json_u64(json_get(h, "modules"), 0);
	c->functions = (uint32_t)json_u64(json_get(h, "functions"), 0);

	c->ops_local = json_u64(json_get(ops, "local"), 0);
	c->ops_sync = json_u64(json_get(ops, "sync"), 0);
	c->ops_deferred = json_u64(json_get(ops, "deferred"), 0);
	for (o = json_first(json_get(ops, "by_op")); o; o = o->next) {
		struct top_opcount *oc;

		if (!o->key || c->nby_op >= TOP_MAX_OPS)
			continue;
		oc = &c->by_op[c->nby_op++];
		copy_str(oc->name, sizeof(oc->name), o->key);
		oc->n = json_u64(o, 0);
	}

	c->crossings = json_u64(json_get(j, "crossings"), 0);
	c->errors = json_u64(json_get(j, "errors"), 0);
	c->bytes_htod = json_u64(json_get(j, "bytes_htod"), 0);
	c->bytes_dtoh = json_u64(json_get(j, "bytes_dtoh"), 0);
	c->sq_depth = (uint32_t)json_u64(json_get(j, "sq_depth"), 0);
	c->p50_us = json_u64(json_get(lat, "p50"), 0);
	c->p99_us = json_u64(json_get(lat, "p99"), 0);
	top_client_finish(c);
}

int top_parse_stats(const char *json, struct top_snapshot *s, char *err,
		    size_t errlen)
{
	const struct json *d, *devs, *cls, *v;
	struct json *root = json_parse(json, err, errlen);
	size_t n;

	if (!root)
		return -EPROTO;
	if (json_stats_schema_check(root, err, errlen)) {
		json_free(root);
		return -EPROTO;
	}
	d = json_get(root, "daemon");
	s->daemon.pid = (pid_t)json_i64(json_get(d, "pid"), 0);
	copy_str(s->daemon.backend, sizeof(s->daemon.backend),
		 json_str(json_get(d, "backend"), "?"));
	copy_str(s->daemon.abi, sizeof(s->daemon.abi), json_str(json_get(d, "abi"), "?"));
	s->daemon.uptime_s = json_num(json_get(d, "uptime_s"), 0);
	s->daemon.clients_total = json_u64(json_get(d, "clients_total"), 0);
	s->daemon.ops_total = json_u64(json_get(d, "ops_total"), 0);
	s->daemon.mem_used = json_u64(json_get(d, "mem_used"), TOP_UNKNOWN);
	s->daemon.mem_reserved = json_u64(json_get(d, "mem_reserved"), TOP_UNKNOWN);

	devs = json_get(root, "devices");
	for (v = json_first(devs); v && s->ndev < TOP_MAX_DEVICES; v = v->next) {
		struct top_device *dv = &s->dev[s->ndev];

		if (v->type != JSON_OBJECT)
			continue;
		dv->index = (unsigned int)json_u64(json_get(v, "index"), s->ndev);
		copy_str(dv->name, sizeof(dv->name), json_str(json_get(v, "name"), "?"));
		dv->total_mem = json_u64(json_get(v, "total_mem"), 0);
		dv->mem_used = json_u64(json_get(v, "mem_used"), TOP_UNKNOWN);
		dv->busy_ns = json_u64(json_get(v, "busy_ns"), TOP_UNKNOWN);
		dv->util = -1;
		copy_str(dv->isolation, sizeof(dv->isolation),
			 json_str(json_get(v, "isolation"), ""));
		s->ndev++;
	}

	cls = json_get(root, "clients");
	n = json_is(cls, JSON_ARRAY) ? cls->len : 0;
	if (n) {
		s->clients = calloc(n, sizeof(*s->clients));
		if (!s->clients) {
			json_free(root);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	for (v = json_first(cls); v; v = v->next) {
		if (v->type != JSON_OBJECT || s->nclients >= n)
			continue;
		parse_client(v, &s->clients[s->nclients++]);
		if (json_get(v, "cgroup"))
			s->caps |= TOP_CAP_CGROUP;
		if (json_get(v, "mem_limit"))
			s->caps |= TOP_CAP_LIMIT;
		if (json_get(v, "device"))
			s->caps |= TOP_CAP_DEVICE;
	}
	s->daemon.clients = (unsigned int)json_u64(json_get(d, "clients"), s->nclients);
	json_free(root);
	return 0;
}

static const char *src_addr(const struct top_source *src)
{
	return src->addr[0] ? src->addr : NULL;
}

static int axond_sample(struct top_source *src, struct top_snapshot *s, char *err,
			size_t errlen)
{
	struct timespec ts;
	char *json = NULL;
	int ret;

	ret = axon_read_stats(src_addr(src), &json, err, errlen);
	if (ret)
		return ret;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	s->mono_time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	clock_gettime(CLOCK_REALTIME, &ts);
	s->wall_time = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	snprintf(s->source, sizeof(s->source), "axond");
	ret = top_parse_stats(json, s, err, errlen);
	free(json);
	return ret;
}

/* ---- the trace connection ---------------------------------------------- */

int top_trace_connect(const char *addr, struct top_trace_target *t, char *err,
		      size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct axon_hello hello = {
		.magic = AXON_MAGIC,
		.abi_major = AXON_ABI_MAJOR,
		.abi_minor = AXON_ABI_MINOR,
		.kind = AXON_HELLO_TRACE,
		.target_client = t->client_id,
		.target_pid = t->client_id ? 0 : (uint32_t)t->pid,
	};
	struct axon_welcome w;
	const char *path;
	ssize_t n;
	int fd, e;

	if (!addr)
		addr = getenv("AXON_ADDR");
	if (!addr || !*addr)
		addr = "unix:" AXON_DEFAULT_SOCKET;
	if (!strncmp(addr, "unix:", 5))
		path = addr + 5;
	else if (addr[0] == '/')
		path = addr;
	else {
		snprintf(err, errlen, "unsupported axon address '%s' (want unix:PATH)", addr);
		return -EINVAL;
	}
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "socket path too long: %s", path);
		return -ENAMETOOLONG;
	}
	strcpy(sun.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "socket: %s", strerror(e));
		return -e;
	}
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		e = errno;
		snprintf(err, errlen, "cannot reach axond at %s: %s", path, strerror(e));
		goto fail;
	}
	do {
		n = send(fd, &hello, sizeof(hello), MSG_NOSIGNAL);
	} while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(hello)) {
		e = n < 0 ? errno : EIO;
		snprintf(err, errlen, "sending hello: %s", strerror(e));
		goto fail;
	}
	do {
		n = recv(fd, &w, sizeof(w), 0);
	} while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(w) || w.magic != AXON_MAGIC) {
		e = n < 0 ? errno : EPROTO;
		snprintf(err, errlen, "no welcome from axond: %s",
			 n == 0 ? "connection closed" : strerror(e));
		goto fail;
	}
	if (w.status) {
		w.message[sizeof(w.message) - 1] = 0;
		e = w.status < 0 ? -w.status : EPROTO;
		if (e == ESRCH && t->client_id)
			snprintf(err, errlen, "axond has no client %llu",
				 (unsigned long long)t->client_id);
		else if (e == ESRCH)
			snprintf(err, errlen, "axond has no client with pid %d", (int)t->pid);
		else
			snprintf(err, errlen, "axond refused the trace: %s", w.message);
		goto fail;
	}
	if (w.abi_major != AXON_ABI_MAJOR) {
		e = EPROTO;
		snprintf(err, errlen, "axond speaks ABI %u.%u, axon-top %u.%u",
			 w.abi_major, w.abi_minor, AXON_ABI_MAJOR, AXON_ABI_MINOR);
		goto fail;
	}
	t->client_id = w.params.client_id;
	return fd;
fail:
	close(fd);
	return -e;
}

int top_trace_recv(int fd, struct axon_trace_event *ev, size_t max, char *err,
		   size_t errlen)
{
	struct iovec iov = { .iov_base = ev, .iov_len = max * sizeof(*ev) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	do {
		n = recvmsg(fd, &msg, 0);
	} while (n < 0 && errno == EINTR);
	if (n < 0) {
		int e = errno;

		if (e == ECONNRESET)
			return 0;
		snprintf(err, errlen, "reading the trace: %s", strerror(e));
		return -e;
	}
	if ((msg.msg_flags & MSG_TRUNC) || n % (ssize_t)sizeof(*ev)) {
		snprintf(err, errlen, "trace message of %zd bytes is not whole records", n);
		return -EPROTO;
	}
	return (int)(n / (ssize_t)sizeof(*ev));
}

static int axond_trace_open(struct top_source *src, struct top_trace_target *t,
			    char *err, size_t errlen)
{
	return top_trace_connect(src_addr(src), t, err, errlen);
}

static int axond_trace_read(struct top_source *src, int fd,
			    struct axon_trace_event *ev, size_t max, char *err,
			    size_t errlen)
{
	(void)src;
	return top_trace_recv(fd, ev, max, err, errlen);
}

static void axond_destroy(struct top_source *src)
{
	(void)src;
}

const struct top_source_ops top_source_axond = {
	.name = "axond",
	.sample = axond_sample,
	.trace_open = axond_trace_open,
	.trace_read = axond_trace_read,
	.destroy = axond_destroy,
};
