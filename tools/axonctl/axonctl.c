// SPDX-License-Identifier: MIT
/*
 * axonctl: look at a running axond.
 *
 *   axonctl [--addr ADDR] stats [--json]   the stats document: a table with
 *                                          one line per client, or raw JSON
 *   axonctl [--addr ADDR] daemon status    up or down; backend, uptime,
 *                                          clients
 *
 * The kernel module's view, over its generic netlink family (libaxon's
 * axon_nl_*; sizes human-readable, --bytes for raw byte counts):
 *
 *   axonctl limit set CGROUP BYTES|none    device-memory limit of a cgroup
 *                                          (K/M/G/T suffixes, powers of 1024;
 *                                          CAP_NET_ADMIN)
 *   axonctl limit get CGROUP               its limit, usage, peak, failcnt
 *   axonctl limits                         every cgroup the module tracks
 *   axonctl clients                        the module's clients (axond's
 *                                          stats when the module is absent)
 *   axonctl kstats                         the module's counters
 *   axonctl events [--count N] [--wait S]  follow the "events" multicast
 *                                          group, one line per event
 *                                          (CAP_NET_ADMIN)
 *
 * CGROUP is a cgroup v2 path relative to the root ("/t1"); a path under
 * /sys/fs/cgroup is taken as that cgroup.
 *
 * --timeout SECONDS (default 10) bounds each exchange with the daemon.
 *
 * ADDR is "unix:PATH" (or a bare absolute path); default $AXON_ADDR, else
 * unix:/run/axon/axond.sock. Exit status: 0 done, 1 the daemon or the
 * kernel module could not be reached or refused, 2 bad usage.
 *
 * Commands live in one table (name, optional subcommand, handler).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/time.h>
#include <time.h>
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
	bool bytes;		/* raw byte counts instead of KiB, MiB, ... */
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
static int cmd_limit_set(struct ctl *ctl, int argc, char **argv);
static int cmd_limit_get(struct ctl *ctl, int argc, char **argv);
static int cmd_limits(struct ctl *ctl, int argc, char **argv);
static int cmd_clients(struct ctl *ctl, int argc, char **argv);
static int cmd_kstats(struct ctl *ctl, int argc, char **argv);
static int cmd_events(struct ctl *ctl, int argc, char **argv);

static const struct command commands[] = {
	{ "stats", NULL, "[--json]",
	  "the daemon's stats: one line per client (--json: the raw document)",
	  cmd_stats },
	{ "daemon", "status", "",
	  "whether axond is up; its backend, uptime and clients", cmd_daemon_status },
	/* The kernel module, over generic netlink (family AXON_GENL_NAME). */
	{ "limit", "set", "CGROUP BYTES|none",
	  "set a cgroup's device-memory limit (K/M/G/T suffixes; CAP_NET_ADMIN)",
	  cmd_limit_set },
	{ "limit", "get", "CGROUP [--bytes]",
	  "a cgroup's device-memory limit, usage, peak and failcnt", cmd_limit_get },
	{ "limits", NULL, "[--bytes]", "every cgroup the kernel module tracks", cmd_limits },
	{ "clients", NULL, "[--bytes]",
	  "the kernel module's clients (axond's when the module is not loaded)",
	  cmd_clients },
	{ "kstats", NULL, "[--bytes]", "the kernel module's counters", cmd_kstats },
	{ "events", NULL, "[--count N] [--wait S]",
	  "follow the kernel module's events, one line each (CAP_NET_ADMIN)", cmd_events },
	{ "help", NULL, "", "this text", cmd_help },
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
		if (strlen(left) > 22)
			fprintf(f, "  %s\n  %-22s %s\n", left, "", commands[i].help);
		else
			fprintf(f, "  %-22s %s\n", left, commands[i].help);
	}
	fprintf(f, "\noptions:\n"
		"  --addr ADDR            the daemon's socket, unix:PATH (default $AXON_ADDR,\n"
		"                         else unix:" AXON_DEFAULT_SOCKET ")\n"
		"  --timeout SECONDS      give up on a daemon that does not answer (default 10,\n"
		"                         0: wait forever)\n"
		"  --bytes                sizes in bytes, not KiB, MiB, ... (also after the\n"
		"                         command)\n"
		"  -h, --help             this text\n"
		"\nCGROUP is a cgroup v2 path from its root (/t1, or /sys/fs/cgroup/t1).\n");
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
	if (j && json_stats_schema_check(j, err, sizeof(err))) {
		snprintf(why, whylen, "axond at %s: %s", ctl->addr, err);
		json_free(j);
		return NULL;
	}
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

/* ---- the kernel module (generic netlink) ------------------------------------ */

struct kargs {
	const char *pos[4];
	int npos;
	long count;		/* events --count, -1 none */
	double wait_s;		/* events --wait, < 0 none */
};

#define KA_COUNT	(1U << 0)
#define KA_WAIT		(1U << 1)

/* The command's own arguments: --bytes everywhere, the flags allowed, and
 * between min and max positional ones. Returns 0 or an exit status (2). */
static int kparse(struct ctl *ctl, const char *what, const char *use, unsigned int allow,
		  int min, int max, int argc, char **argv, struct kargs *ka)
{
	char *end;
	int i;

	ka->npos = 0;
	ka->count = -1;
	ka->wait_s = -1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--bytes")) {
			ctl->bytes = true;
		} else if ((allow & KA_COUNT) && !strcmp(a, "--count") && i + 1 < argc) {
			ka->count = strtol(argv[++i], &end, 10);
			if (*end || end == argv[i] || ka->count < 1) {
				errmsg("%s: --count wants a positive number, not '%s'", what, argv[i]);
				return 2;
			}
		} else if ((allow & KA_WAIT) && !strcmp(a, "--wait") && i + 1 < argc) {
			ka->wait_s = strtod(argv[++i], &end);
			if (*end || end == argv[i] || ka->wait_s < 0) {
				errmsg("%s: --wait wants seconds, not '%s'", what, argv[i]);
				return 2;
			}
		} else if (a[0] == '-' && a[1]) {
			errmsg("%s: unknown option '%s' (usage: axonctl %s %s)", what, a, what, use);
			return 2;
		} else if (ka->npos < max) {
			ka->pos[ka->npos++] = a;
		} else {
			errmsg("%s: unexpected argument '%s' (usage: axonctl %s %s)", what, a, what,
			       use);
			return 2;
		}
	}
	if (ka->npos < min) {
		errmsg("%s: missing arguments (usage: axonctl %s %s)", what, what, use);
		return 2;
	}
	return 0;
}

static const char *fmt_size(const struct ctl *ctl, uint64_t b, char *buf, size_t len)
{
	if (ctl->bytes) {
		snprintf(buf, len, "%" PRIu64, b);
		return buf;
	}
	return fmt_bytes(b, buf, len);
}

static const char *fmt_limit(const struct ctl *ctl, uint64_t b, char *buf, size_t len)
{
	if (b == AXON_LIMIT_NONE) {
		snprintf(buf, len, "max");
		return buf;
	}
	return fmt_size(ctl, b, buf, len);
}

/* "4M", "1.5G", "4096", "none": bytes (K/M/G/T are powers of 1024). */
static int parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGTPE";
	const char *u;
	double v, mult = 1;
	char *end;

	if (!strcmp(s, "none") || !strcmp(s, "max")) {
		*out = AXON_LIMIT_NONE;
		return 0;
	}
	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	if (!*end)
		return errno ? -ERANGE : 0;
	v = strtod(s, &end);
	if (end == s)
		return -EINVAL;
	if (*end) {
		u = strchr(units, end[0] & ~0x20);
		if (!u || !end[0])
			return -EINVAL;
		for (mult = 1024; u > units; u--)
			mult *= 1024;
		end++;
		if (*end == 'i' && (end[1] == 'B' || end[1] == 'b'))
			end += 2;
		else if (*end == 'B' || *end == 'b')
			end++;
		if (*end)
			return -EINVAL;
	}
	v *= mult;
	if (v >= 18446744073709551615.0)
		return -ERANGE;
	*out = (uint64_t)v;
	return 0;
}

/* The cgroup v2 path as the kernel wants it: /sys/fs/cgroup/t1 -> /t1. */
static const char *cgroup_arg(const char *p)
{
	static const char mnt[] = "/sys/fs/cgroup";
	size_t n = sizeof(mnt) - 1;

	if (!strncmp(p, mnt, n) && (p[n] == '/' || !p[n]))
		return p[n] ? p + n : "/";
	return p;
}

static struct axon_nl *kopen(char *err, size_t errlen, int *ret)
{
	struct axon_nl *nl;

	*ret = axon_nl_open(&nl, err, errlen);
	if (*ret) {
		if (*ret == -ENOENT)
			errmsg("%s; load it with modprobe axon (or insmod axon.ko)", err);
		else
			errmsg("%s", err);
		return NULL;
	}
	return nl;
}

static int cmd_limit_set(struct ctl *ctl, int argc, char **argv)
{
	const char *use = "set CGROUP BYTES|none";
	char err[512], a[32];
	struct kargs ka;
	struct axon_nl *nl;
	uint64_t limit;
	int ret;

	ret = kparse(ctl, "limit", use, 0, 2, 2, argc, argv, &ka);
	if (ret)
		return ret;
	if (parse_size(ka.pos[1], &limit)) {
		errmsg("limit set: '%s' is not a size (BYTES with an optional K, M, G or T "
		       "suffix, or none)", ka.pos[1]);
		return 2;
	}
	nl = kopen(err, sizeof(err), &ret);
	if (!nl)
		return 1;
	ret = axon_nl_limit_set(nl, cgroup_arg(ka.pos[0]), limit);
	axon_nl_close(nl);
	if (ret) {
		errmsg("%s", err);
		return 1;
	}
	if (limit == AXON_LIMIT_NONE)
		printf("%s: no device-memory limit\n", cgroup_arg(ka.pos[0]));
	else
		printf("%s: device-memory limit %s\n", cgroup_arg(ka.pos[0]),
		       fmt_size(ctl, limit, a, sizeof(a)));
	return 0;
}

static int cmd_limit_get(struct ctl *ctl, int argc, char **argv)
{
	char err[512], a[32], b[32], c[32];
	uint64_t limit, usage, peak, failcnt;
	struct axon_nl *nl;
	struct kargs ka;
	int ret;

	ret = kparse(ctl, "limit", "get CGROUP [--bytes]", 0, 1, 1, argc, argv, &ka);
	if (ret)
		return ret;
	nl = kopen(err, sizeof(err), &ret);
	if (!nl)
		return 1;
	ret = axon_nl_limit_get(nl, cgroup_arg(ka.pos[0]), &limit, &usage, &peak, &failcnt);
	axon_nl_close(nl);
	if (ret) {
		errmsg("%s", err);
		return 1;
	}
	printf("cgroup:  %s\n", cgroup_arg(ka.pos[0]));
	printf("limit:   %s\n", fmt_limit(ctl, limit, a, sizeof(a)));
	printf("usage:   %s\n", fmt_size(ctl, usage, b, sizeof(b)));
	printf("peak:    %s\n", fmt_size(ctl, peak, c, sizeof(c)));
	printf("failcnt: %" PRIu64 "\n", failcnt);
	return 0;
}

static int print_limit(const struct axon_klimit *l, void *arg)
{
	const struct ctl *ctl = arg;
	char a[32], b[32], c[32];

	printf("%-32s %12s %12s %12s %8" PRIu64 "\n", l->cgroup_path,
	       fmt_size(ctl, l->usage, a, sizeof(a)), fmt_limit(ctl, l->limit, b, sizeof(b)),
	       fmt_size(ctl, l->peak, c, sizeof(c)), l->failcnt);
	return 0;
}

static int cmd_limits(struct ctl *ctl, int argc, char **argv)
{
	struct axon_nl *nl;
	struct kargs ka;
	char err[512];
	int ret;

	ret = kparse(ctl, "limits", "[--bytes]", 0, 0, 0, argc, argv, &ka);
	if (ret)
		return ret;
	nl = kopen(err, sizeof(err), &ret);
	if (!nl)
		return 1;
	printf("%-32s %12s %12s %12s %8s\n", "CGROUP", "USAGE", "LIMIT", "PEAK", "FAILCNT");
	ret = axon_nl_limits(nl, print_limit, ctl);
	axon_nl_close(nl);
	if (ret) {
		errmsg("%s", err);
		return 1;
	}
	return 0;
}

static int print_kclient(const struct axon_kclient *c, void *arg)
{
	const struct ctl *ctl = arg;
	char mem[32];

	printf("%5" PRIu64 " %8u %6u %-24s %-16.16s %11s %s\n", c->id, c->pid, c->uid,
	       c->cgroup_path, c->comm, fmt_size(ctl, c->charged, mem, sizeof(mem)),
	       axon_nl_kstate_name(c->state));
	return 0;
}

static int cmd_clients(struct ctl *ctl, int argc, char **argv)
{
	struct axon_nl *nl;
	struct kargs ka;
	char err[512], why[1024];
	struct json *doc;
	int ret;

	ret = kparse(ctl, "clients", "[--bytes]", 0, 0, 0, argc, argv, &ka);
	if (ret)
		return ret;
	ret = axon_nl_open(&nl, err, sizeof(err));
	if (ret == -ENOENT) {
		/* No module: what axond knows. */
		doc = fetch_parsed(ctl, why, sizeof(why));
		if (!doc) {
			errmsg("%s, and %s", err, why);
			return 1;
		}
		errmsg("%s: showing axond's clients (%s)", err, ctl->addr);
		print_daemon_line(doc);
		print_clients(doc);
		json_free(doc);
		return 0;
	}
	if (ret) {
		errmsg("%s", err);
		return 1;
	}
	printf("%5s %8s %6s %-24s %-16s %11s %s\n", "ID", "PID", "UID", "CGROUP", "COMM",
	       "CHARGED", "STATE");
	ret = axon_nl_clients(nl, print_kclient, ctl);
	axon_nl_close(nl);
	if (ret) {
		errmsg("%s", err);
		return 1;
	}
	return 0;
}

static int cmd_kstats(struct ctl *ctl, int argc, char **argv)
{
	struct axon_kstats st;
	struct axon_nl *nl;
	struct kargs ka;
	char err[512], a[32], b[32];
	int ret;

	ret = kparse(ctl, "kstats", "[--bytes]", 0, 0, 0, argc, argv, &ka);
	if (ret)
		return ret;
	nl = kopen(err, sizeof(err), &ret);
	if (!nl)
		return 1;
	ret = axon_nl_stats(nl, &st);
	axon_nl_close(nl);
	if (ret) {
		errmsg("%s", err);
		return 1;
	}
	printf("clients          %" PRIu64 "\n", st.clients);
	printf("opens            %" PRIu64 "\n", st.opens);
	printf("daemon_attached  %" PRIu64 "\n", st.daemon_attached);
	printf("daemon_pid       %" PRIu64 "\n", st.daemon_pid);
	printf("attaches         %" PRIu64 "\n", st.attaches);
	printf("enters           %" PRIu64 "\n", st.enters);
	printf("doorbells        %" PRIu64 "\n", st.doorbells);
	printf("notifies         %" PRIu64 "\n", st.notifies);
	printf("events           %" PRIu64 "\n", st.events);
	printf("charges          %" PRIu64 "\n", st.charges);
	printf("charge_fails     %" PRIu64 "\n", st.charge_fails);
	printf("uncharges        %" PRIu64 "\n", st.uncharges);
	printf("charged_bytes    %s\n", fmt_size(ctl, st.charged_bytes, a, sizeof(a)));
	printf("region_bytes     %s\n", fmt_size(ctl, st.region_bytes, b, sizeof(b)));
	return 0;
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void print_event(const struct ctl *ctl, const struct axon_kevent *ev)
{
	char ts[32], a[32], b[32], c[32];
	struct timeval tv;
	struct tm tm;

	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%H:%M:%S", &tm);
	printf("%s.%03ld %s", ts, (long)tv.tv_usec / 1000, axon_nl_event_name(ev->event));
	switch (ev->event) {
	case AXON_NLEV_CLIENT_OPEN:
	case AXON_NLEV_CLIENT_EXIT:
		printf(" client=%" PRIu64 " pid=%u uid=%u comm=%s cgroup_id=%" PRIu64,
		       ev->client_id, ev->pid, ev->uid, ev->comm, ev->cgroup_id);
		break;
	case AXON_NLEV_LIMIT_HIT:
		printf(" client=%" PRIu64 " cgroup_id=%" PRIu64 " kind=%s bytes=%s usage=%s "
		       "limit=%s", ev->client_id, ev->cgroup_id,
		       ev->kind == AXON_CHARGE_DEVICE_MEM ? "devmem" : "?",
		       fmt_size(ctl, ev->bytes, a, sizeof(a)),
		       fmt_size(ctl, ev->usage, b, sizeof(b)),
		       fmt_limit(ctl, ev->limit, c, sizeof(c)));
		break;
	default:
		printf(" pid=%u", ev->pid);
		break;
	}
	putchar('\n');
	fflush(stdout);
}

static int cmd_events(struct ctl *ctl, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_interrupt };
	struct timespec t0, now;
	struct axon_kevent ev;
	struct axon_nl *nl;
	struct kargs ka;
	char err[512];
	long seen = 0;
	int ret;

	ret = kparse(ctl, "events", "[--count N] [--wait S]", KA_COUNT | KA_WAIT, 0, 0, argc,
		     argv, &ka);
	if (ret)
		return ret;
	nl = kopen(err, sizeof(err), &ret);
	if (!nl)
		return 1;
	ret = axon_nl_events_subscribe(nl);
	if (ret) {
		errmsg("%s", err);
		axon_nl_close(nl);
		return 1;
	}
	/* no SA_RESTART: poll() returns EINTR */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	errmsg("following kernel events%s", ka.count > 0 ? "" : " (Ctrl-C to stop)");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!interrupted && (ka.count < 0 || seen < ka.count)) {
		int wait_ms = 500;

		if (ka.wait_s >= 0) {
			double left;

			clock_gettime(CLOCK_MONOTONIC, &now);
			left = ka.wait_s - ((double)(now.tv_sec - t0.tv_sec) +
					    (double)(now.tv_nsec - t0.tv_nsec) / 1e9);
			if (left <= 0)
				break;
			if (left * 1000 < wait_ms)
				wait_ms = (int)(left * 1000) + 1;
		}
		ret = axon_nl_event_next(nl, &ev, wait_ms);
		if (ret == -ETIMEDOUT || ret == -EINTR)
			continue;
		if (ret == -ENOBUFS) {
			errmsg("%s", err);
			continue;
		}
		if (ret) {
			errmsg("%s", err);
			axon_nl_close(nl);
			return 1;
		}
		print_event(ctl, &ev);
		seen++;
	}
	axon_nl_close(nl);
	if (ka.count > 0 && seen < ka.count && !interrupted) {
		errmsg("events: %ld of %ld events within %g s", seen, ka.count, ka.wait_s);
		return 1;
	}
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
		{ "bytes", no_argument, NULL, 'b' },
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
		case 'b':
			ctl.bytes = true;
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
