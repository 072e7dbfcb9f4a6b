// SPDX-License-Identifier: MIT
/*
 * axonctl: look at a running axond.
 *
 *   axonctl [--addr ADDR] stats [--json]   the stats document: a table with
 *                                          one line per client, or raw JSON
 *   axonctl [--addr ADDR] daemon status    up or down; backend, uptime,
 *                                          clients
 *
 * --timeout SECONDS (default 10) bounds each exchange with the daemon.
 *
 * ADDR is "unix:PATH" (or a bare absolute path); default $AXON_ADDR, else
 * unix:/run/axon/axond.sock. Exit status: 0 done, 1 the daemon could not be
 * reached or answered badly, 2 bad usage.
 *
 * Commands live in one table (name, optional subcommand, handler) so that
 * later ones (the /dev/axon kernel module's, over generic netlink) slot in
 * beside these.
 */
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <axon/libaxon.h>
#include "json.h"

struct ctl {
	char addr[512];		/* as given or defaulted, "unix:" form */
	bool addr_given;
	unsigned int timeout_s;	/* for one exchange with the daemon */
};

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

struct command {
	const char *name;
	const char *sub;	/* second word, or NULL */
	const char *args;	/* usage of the rest */
	const char *help;
	int (*run)(struct ctl *ctl, int argc, char **argv);
};

static int cmd_stats(struct ctl *ctl, int argc, char **argv);
static int cmd_daemon_status(struct ctl *ctl, int argc, char **argv);
static int cmd_help(struct ctl *ctl, int argc, char **argv);

static const struct command commands[] = {
	{ "stats", NULL, "[--json]",
	  "the daemon's stats: one line per client (--json: the raw document)",
	  cmd_stats },
	{ "daemon", "status", "",
	  "whether axond is up; its backend, uptime and clients", cmd_daemon_status },
	{ "help", NULL, "", "this text", cmd_help },
	/* Kernel-module commands (generic netlink family AXON_GENL_NAME) go here. */
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: axonctl [--addr ADDR] COMMAND [ARGS]\n\ncommands:\n");
	for (i = 0; i < NCOMMANDS; i++) {
		char left[64];

		snprintf(left, sizeof(left), "%s%s%s%s%s", commands[i].name,
			 commands[i].sub ? " " : "", commands[i].sub ? commands[i].sub : "",
			 commands[i].args[0] ? " " : "", commands[i].args);
		fprintf(f, "  %-22s %s\n", left, commands[i].help);
	}
	fprintf(f, "\noptions:\n"
		"  --addr ADDR            the daemon's socket, unix:PATH (default $AXON_ADDR,\n"
		"                         else unix:" AXON_DEFAULT_SOCKET ")\n"
		"  --timeout SECONDS      give up on a daemon that does not answer (default 10,\n"
		"                         0: wait forever)\n"
		"  -h, --help             this text\n");
}

static int cmd_help(struct ctl *ctl, int argc, char **argv)
{
	(void)ctl;
	(void)argc;
	(void)argv;
	usage(stdout);
	return 0;
}

static void errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void errmsg(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "axonctl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* Fetches the stats; on failure says why, naming the address. */
static int fetch(struct ctl *ctl, char **doc, char *why, size_t whylen)
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

static struct json *fetch_parsed(struct ctl *ctl, char *why, size_t whylen)
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
	return j;
}

/* ---- formatting ----------------------------------------------------------- */

static const char *fmt_bytes(uint64_t b, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	double v = (double)b;
	int u = 0;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)b);
	else
		snprintf(buf, len, "%.2f %s", v, unit[u]);
	return buf;
}

static const char *fmt_duration(double s, char *buf, size_t len)
{
	unsigned long t = s < 0 ? 0 : (unsigned long)s;

	if (s < 60)
		snprintf(buf, len, "%.1fs", s < 0 ? 0.0 : s);
	else if (t < 3600)
		snprintf(buf, len, "%lum %02lus", t / 60, t % 60);
	else if (t < 86400)
		snprintf(buf, len, "%luh %02lum %02lus", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, len, "%lud %02luh %02lum", t / 86400, t / 3600 % 24, t / 60 % 60);
	return buf;
}

static const char *fmt_user(uint64_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid((uid_t)uid);

	if (pw && pw->pw_name)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "%llu", (unsigned long long)uid);
	return buf;
}

/* Latency percentiles are log2 bucket bounds: "<N" in us, ms or s. */
static const char *fmt_lat(uint64_t us, char *buf, size_t len)
{
	if (!us)
		snprintf(buf, len, "-");
	else if (us < 1000)
		snprintf(buf, len, "<%lluus", (unsigned long long)us);
	else if (us < 1000000)
		snprintf(buf, len, "<%llums", (unsigned long long)((us + 999) / 1000));
	else
		snprintf(buf, len, "<%.1fs", (double)us / 1e6);
	return buf;
}

static uint64_t u64(const struct json *n, const char *path)
{
	return json_u64(json_path(n, path), 0);
}

static void print_daemon_line(const struct json *doc)
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

static void print_devices(const struct json *doc)
{
	const struct json *d = json_get(doc, "daemon");
	const struct json *dev;
	char a[32], b[32], c[32];

	for (dev = json_get(doc, "devices") ? json_get(doc, "devices")->child : NULL; dev;
	     dev = dev->next)
		printf("device %llu: %s, %s\n", (unsigned long long)u64(dev, "index"),
		       json_str(json_get(dev, "name"), "?"),
		       fmt_bytes(u64(dev, "total_mem"), a, sizeof(a)));
	printf("memory: %s in use, %s reserved as client credit\n",
	       fmt_bytes(u64(d, "mem_used"), b, sizeof(b)),
	       fmt_bytes(u64(d, "mem_reserved"), c, sizeof(c)));
}

static void print_clients(const struct json *doc)
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

/* ---- commands ------------------------------------------------------------- */

static int cmd_stats(struct ctl *ctl, int argc, char **argv)
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

static int cmd_daemon_status(struct ctl *ctl, int argc, char **argv)
{
	const struct json *d, *dev;
	char why[1024], up[32], a[32], b[32], c[32];
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
	for (dev = json_get(doc, "devices") ? json_get(doc, "devices")->child : NULL; dev;
	     dev = dev->next)
		printf("  device %llu: %s, %s\n", (unsigned long long)u64(dev, "index"),
		       json_str(json_get(dev, "name"), "?"),
		       fmt_bytes(u64(dev, "total_mem"), a, sizeof(a)));
	printf("  memory:   %s in use, %s reserved\n",
	       fmt_bytes(u64(d, "mem_used"), b, sizeof(b)),
	       fmt_bytes(u64(d, "mem_reserved"), c, sizeof(c)));
	printf("  ops:      %llu\n", (unsigned long long)u64(d, "ops_total"));
	json_free(doc);
	return 0;
}

/* ---- main ----------------------------------------------------------------- */

static void set_addr(struct ctl *ctl, const char *a)
{
	if (a[0] == '/')
		snprintf(ctl->addr, sizeof(ctl->addr), "unix:%s", a);
	else
		snprintf(ctl->addr, sizeof(ctl->addr), "%s", a);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "addr", required_argument, NULL, 'a' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct ctl ctl = { .addr = "", .timeout_s = 10 };
	char *end;
	const char *env = getenv("AXON_ADDR");
	bool name_known = false;
	size_t i;
	int o;

	/* "+": options end at the command, whose own options follow it. */
	while ((o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (o) {
		case 'a':
			set_addr(&ctl, optarg);
			ctl.addr_given = true;
			break;
		case 't':
			ctl.timeout_s = (unsigned int)strtoul(optarg, &end, 10);
			if (*end || end == optarg) {
				errmsg("--timeout wants a number of seconds, not '%s'", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!ctl.addr_given)
		set_addr(&ctl, env && *env ? env : "unix:" AXON_DEFAULT_SOCKET);
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	argc -= optind;
	argv += optind;
	for (i = 0; i < NCOMMANDS; i++) {
		const struct command *c = &commands[i];

		if (strcmp(argv[0], c->name))
			continue;
		name_known = true;
		if (!c->sub)
			return c->run(&ctl, argc, argv);
		if (argc > 1 && !strcmp(argv[1], c->sub))
			return c->run(&ctl, argc - 1, argv + 1);
	}
	if (name_known) {
		errmsg("'%s' wants one of:", argv[0]);
		for (i = 0; i < NCOMMANDS; i++)
			if (!strcmp(argv[0], commands[i].name) && commands[i].sub)
				fprintf(stderr, "  axonctl %s %s %s\n", commands[i].name,
					commands[i].sub, commands[i].args);
		return 2;
	}
	errmsg("unknown command '%s' (axonctl help lists them)", argv[0]);
	return 2;
}
