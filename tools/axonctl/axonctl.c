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
 * Commands live in one table here (name, optional subcommand, handler),
 * in the manner of ip(8) and bpftool(8); each family's handlers are in a
 * file of their own (axonctl.h lists them).
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axonctl.h"

struct command {
	const char *name;
	const char *sub;	/* second word, or NULL */
	const char *args;	/* usage of the rest */
	const char *help;
	axonctl_cmd_fn *run;
};

static axonctl_cmd_fn cmd_help;

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

void errmsg(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "axonctl: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

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
