// SPDX-License-Identifier: MIT
/*
 * daemon.c - axond's side: its stats document, fetched over the socket
 * under a timeout, and the commands that show it (stats, daemon status).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "axonctl.h"

/* A daemon that accepts but never answers must not hang us. */
static char alarm_msg[640];

static void on_alarm(int sig)
{
	ssize_t n;

	(void)sig;
	n = write(STDERR_FILENO, alarm_msg, strlen(alarm_msg));
	(void)n;
	_exit(1);
}

static void arm(const struct ctl *ctl)
{
	snprintf(alarm_msg, sizeof(alarm_msg),
		 "axonctl: axond at %s did not answer within %u s\n", ctl->addr,
		 ctl->timeout_s);
	signal(SIGALRM, on_alarm);
	alarm(ctl->timeout_s);
}

/* Fetches the stats; on failure says why, naming the address. */
int fetch(struct ctl *ctl, char **doc, char *why, size_t whylen)
{
	char err[256] = "";
	int ret;

	if (ctl->timeout_s)
		arm(ctl);
	ret = axon_read_stats(ctl->addr, doc, err, sizeof(err));
	alarm(0);
	if (!ret)
		return 0;
	if (ret == -ENOENT || ret == -ECONNREFUSED)
		snprintf(why, whylen, "axond is not running at %s (%s)", ctl->addr,
			 strerror(-ret));
	else if (ret == -EACCES || ret == -EPERM)
		snprintf(why, whylen, "no permission to talk to axond at %s (%s)", ctl->addr,
			 strerror(-ret));
	else
		snprintf(why, whylen, "no stats from axond at %s: %s", ctl->addr,
			 err[0] ? err : strerror(-ret));
	return ret;
}

struct json *fetch_parsed(struct ctl *ctl, char *why, size_t whylen)
{
	char err[200];
	char *doc = NULL;
	struct json *j;

	if (fetch(ctl, &doc, why, whylen))
		return NULL;
	j = json_parse(doc, err, sizeof(err));
	if (!j)
		snprintf(why, whylen, "axond at %s sent a stats document that does not parse: %s",
			 ctl->addr, err);
	free(doc);
	if (j && json_stats_schema_check(j, err, sizeof(err))) {
		snprintf(why, whylen, "axond at %s: %s", ctl->addr, err);
		json_free(j);
		return NULL;
	}
	return j;
}

static uint64_t u64(const struct json *n, const char *path)
{
	return json_u64(json_path(n, path), 0);
}

void print_daemon_line(const struct json *doc)
{
	const struct json *d = json_get(doc, "daemon");
	char up[32];

	printf("axond %s (pid %llu, backend %s), up %s; %llu client%s (%llu since start), "
	       "%llu ops\n",
	       json_str(json_get(d, "abi"), "?"), (unsigned long long)u64(d, "pid"),
	       json_str(json_get(d, "backend"), "?"),
	       fmt_duration(json_num(json_get(d, "uptime_s"), 0), up, sizeof(up)),
	       (unsigned long long)u64(d, "clients"), u64(d, "clients") == 1 ? "" : "s",
	       (unsigned long long)u64(d, "clients_total"),
	       (unsigned long long)u64(d, "ops_total"));
}

/* One line per device, each after indent. */
static void print_device_lines(const struct json *doc, const char *indent)
{
	const struct json *dev;
	char a[32];

	for (dev = json_get(doc, "devices") ? json_get(doc, "devices")->child : NULL; dev;
	     dev = dev->next)
		printf("%sdevice %llu: %s, %s\n", indent, (unsigned long long)u64(dev, "index"),
		       json_str(json_get(dev, "name"), "?"),
		       fmt_bytes(u64(dev, "total_mem"), a, sizeof(a)));
}

static void print_devices(const struct json *doc)
{
	const struct json *d = json_get(doc, "daemon");
	char b[32], c[32];

	print_device_lines(doc, "");
	printf("memory: %s in use, %s reserved as client credit\n",
	       fmt_bytes(u64(d, "mem_used"), b, sizeof(b)),
	       fmt_bytes(u64(d, "mem_reserved"), c, sizeof(c)));
}

void print_clients(const struct json *doc)
{
	const struct json *clients = json_get(doc, "clients"), *c;

	if (!json_len(clients)) {
		printf("\nno clients connected\n");
		return;
	}
	printf("\n%5s %8s %-10s %-16s %11s %6s %9s %9s %9s %6s %8s %8s\n", "ID", "PID", "USER",
	       "COMM", "MEMORY", "ALLOCS", "OPS SYNC", "DEFERRED", "CROSSINGS", "ERRORS",
	       "P50", "P99");
	for (c = clients->child; c; c = c->next) {
		char user[32], mem[32], p50[24], p99[24];

		printf("%5llu %8llu %-10.10s %-16.16s %11s %6llu %9llu %9llu %9llu %6llu %8s %8s\n",
		       (unsigned long long)u64(c, "id"), (unsigned long long)u64(c, "pid"),
		       fmt_user(u64(c, "uid"), user, sizeof(user)),
		       json_str(json_get(c, "comm"), "?"),
		       fmt_bytes(u64(c, "bytes_mapped"), mem, sizeof(mem)),
		       (unsigned long long)u64(c, "allocations"),
		       (unsigned long long)u64(c, "ops.sync"),
		       (unsigned long long)u64(c, "ops.deferred"),
		       (unsigned long long)u64(c, "crossings"),
		       (unsigned long long)u64(c, "errors"),
		       fmt_lat(u64(c, "latency_us.p50"), p50, sizeof(p50)),
		       fmt_lat(u64(c, "latency_us.p99"), p99, sizeof(p99)));
	}
}

int cmd_stats(struct ctl *ctl, int argc, char **argv)
{
	char why[1024];
	bool raw = false;
	struct json *doc;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			raw = true;
		} else {
			errmsg("stats: unknown argument '%s' (usage: axonctl stats [--json])",
			       argv[i]);
			return 2;
		}
	}
	if (raw) {
		char *text = NULL;

		if (fetch(ctl, &text, why, sizeof(why))) {
			errmsg("%s", why);
			return 1;
		}
		fputs(text, stdout);
		if (!*text || text[strlen(text) - 1] != '\n')
			putchar('\n');
		free(text);
		return 0;
	}
	doc = fetch_parsed(ctl, why, sizeof(why));
	if (!doc) {
		errmsg("%s", why);
		return 1;
	}
	print_daemon_line(doc);
	print_devices(doc);
	print_clients(doc);
	json_free(doc);
	return 0;
}

int cmd_daemon_status(struct ctl *ctl, int argc, char **argv)
{
	const struct json *d;
	char why[1024], up[32], b[32], c[32];
	struct json *doc;

	if (argc > 1) {
		errmsg("daemon status: unexpected argument '%s'", argv[1]);
		return 2;
	}
	doc = fetch_parsed(ctl, why, sizeof(why));
	if (!doc) {
		printf("axond at %s: down\n", ctl->addr);
		errmsg("%s", why);
		return 1;
	}
	d = json_get(doc, "daemon");
	printf("axond at %s: up\n", ctl->addr);
	printf("  pid:      %llu\n", (unsigned long long)u64(d, "pid"));
	printf("  backend:  %s (ABI %s)\n", json_str(json_get(d, "backend"), "?"),
	       json_str(json_get(d, "abi"), "?"));
	printf("  uptime:   %s\n", fmt_duration(json_num(json_get(d, "uptime_s"), 0), up,
					       sizeof(up)));
	printf("  clients:  %llu connected, %llu since start\n",
	       (unsigned long long)u64(d, "clients"),
	       (unsigned long long)u64(d, "clients_total"));
	print_device_lines(doc, "  ");
	printf("  memory:   %s in use, %s reserved\n",
	       fmt_bytes(u64(d, "mem_used"), b, sizeof(b)),
	       fmt_bytes(u64(d, "mem_reserved"), c, sizeof(c)));
	printf("  ops:      %llu\n", (unsigned long long)u64(d, "ops_total"));
	json_free(doc);
	return 0;
}
