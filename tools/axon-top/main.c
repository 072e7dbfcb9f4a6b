// SPDX-License-Identifier: MIT
/*
 * axon-top: who uses the GPU through axon, and how; top and strace for
 * axon clients. See Documentation/tools.md.
 *
 *   axon-top                      interactive (ncurses)
 *   axon-top -b -n N -d SECONDS   N plain-text snapshots
 *   axon-top -b --json ...        one JSON object per snapshot
 *   axon-top -p PID --trace       one line per call of that client
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "top.h"

static void usage(FILE *f)
{
	int i;

	fprintf(f,
"usage: axon-top [options]\n"
"  -d, --delay SECONDS     time between samples (default 1; fractions allowed)\n"
"  -b, --batch             print plain-text snapshots instead of the UI\n"
"  -n, --iterations N      stop after N snapshots (batch) or refreshes (UI)\n"
"      --json              batch output as one JSON object per snapshot\n"
"  -u, --user USER         only clients of USER (name or uid)\n"
"  -g, --cgroup PATH       only clients in cgroup PATH or below it\n"
"  -p, --pid PID           only the clients of PID; with --trace, trace it\n"
"      --client ID         only client ID; with --trace, trace it\n"
"      --trace             follow one client's calls (needs -p or --client)\n"
"  -s, --sort COLUMN       sort by COLUMN (see below; default ops)\n"
"  -r, --reverse           reverse the sort order\n"
"      --bytes             raw byte counts instead of K/M/G\n"
"      --no-color          no colours (also NO_COLOR=1 or TERM=dumb)\n"
"      --addr ADDR         axond address (default $AXON_ADDR, else\n"
"                          unix:" AXON_DEFAULT_SOCKET ")\n"
"      --source SRC        auto, axond or proc; auto: axond when --addr or\n"
"                          $AXON_ADDR is given, else proc when the\n"
"                          --proc-dir files are readable, else axond\n"
"      --proc-dir DIR      the kernel module's files (default " TOP_PROC_DIR ")\n"
"  -h, --help              this help\n"
"  -V, --version\n"
"\n"
"columns (sort keys):\n");
	for (i = 0; i < C_NCOLS; i++)
		fprintf(f, "  %-8s %-9s %s\n", top_columns[i].title, top_columns[i].key,
			top_columns[i].help);
	fprintf(f,
"\n"
"keys in the UI: h or ? help, q quit, F6 or < > change the sort column,\n"
"M sort by memory, P by ops/s, I by id, R reverse, / filter by user,\n"
"command or cgroup, u filter by user, t trace the selected client, b toggle --bytes,\n"
"arrows/PgUp/PgDn/Home/End select.\n");
}

static int parse_delay(const char *s, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (errno || end == s || *end || !(d >= 0.01) || d > 86400)
		return -EINVAL;
	*out = d;
	return 0;
}

static int parse_long(const char *s, long long min, long long max, long long *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

enum {
	OPT_JSON = 256, OPT_CLIENT, OPT_TRACE, OPT_BYTES, OPT_NOCOLOR, OPT_ADDR,
	OPT_SOURCE, OPT_PROC_DIR,
};

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "delay", required_argument, NULL, 'd' },
		{ "batch", no_argument, NULL, 'b' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "user", required_argument, NULL, 'u' },
		{ "cgroup", required_argument, NULL, 'g' },
		{ "pid", required_argument, NULL, 'p' },
		{ "client", required_argument, NULL, OPT_CLIENT },
		{ "trace", no_argument, NULL, OPT_TRACE },
		{ "sort", required_argument, NULL, 's' },
		{ "reverse", no_argument, NULL, 'r' },
		{ "bytes", no_argument, NULL, OPT_BYTES },
		{ "no-color", no_argument, NULL, OPT_NOCOLOR },
		{ "no-colour", no_argument, NULL, OPT_NOCOLOR },
		{ "addr", required_argument, NULL, OPT_ADDR },
		{ "source", required_argument, NULL, OPT_SOURCE },
		{ "proc-dir", required_argument, NULL, OPT_PROC_DIR },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct top_opts o = {
		.delay = 1.0,
		.color = true,
		.sort = C_OPS,
		.source = "auto",
	};
	struct top_source *src = NULL;
	const char *env;
	char err[512] = "";
	long long v;
	int c, ret;

	while ((c = getopt_long(argc, argv, "d:bn:u:g:p:s:rhV", lopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (parse_delay(optarg, &o.delay)) {
				fprintf(stderr, "axon-top: bad delay '%s' (seconds, >= 0.01)\n", optarg);
				return 2;
			}
			break;
		case 'b': o.batch = true; break;
		case 'n':
			if (parse_long(optarg, 1, 1000000000, &v)) {
				fprintf(stderr, "axon-top: bad iteration count '%s'\n", optarg);
				return 2;
			}
			o.iterations = (long)v;
			break;
		case OPT_JSON: o.json = o.batch = true; break;
		case 'u': snprintf(o.user, sizeof(o.user), "%s", optarg); break;
		case 'g': snprintf(o.cgroup, sizeof(o.cgroup), "%s", optarg); break;
		case 'p':
			if (parse_long(optarg, 1, 0x7fffffff, &v)) {
				fprintf(stderr, "axon-top: bad pid '%s'\n", optarg);
				return 2;
			}
			o.pid = (pid_t)v;
			break;
		case OPT_CLIENT:
			if (parse_long(optarg, 1, 0x7fffffffffffffffLL, &v)) {
				fprintf(stderr, "axon-top: bad client id '%s'\n", optarg);
				return 2;
			}
			o.client_id = (uint64_t)v;
			break;
		case OPT_TRACE: o.trace = true; break;
		case 's':
			o.sort = top_col_by_key(optarg);
			if (o.sort < 0) {
				fprintf(stderr, "axon-top: unknown sort column '%s' "
					"(see --help)\n", optarg);
				return 2;
			}
			break;
		case 'r': o.reverse = true; break;
		case OPT_BYTES: o.bytes = true; break;
		case OPT_NOCOLOR: o.color = false; break;
		case OPT_ADDR: o.addr = optarg; break;
		case OPT_SOURCE: o.source = optarg; break;
		case OPT_PROC_DIR: o.proc_dir = optarg; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("axon-top %s (axon ABI %u.%u)\n", TOP_VERSION,
				 AXON_ABI_MAJOR, AXON_ABI_MINOR); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "axon-top: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (o.trace && !o.pid && !o.client_id) {
		fprintf(stderr, "axon-top: --trace needs -p PID or --client ID\n");
		return 2;
	}
	env = getenv("NO_COLOR");
	if (env && *env)
		o.color = false;
	signal(SIGPIPE, SIG_IGN);

	ret = top_source_open(o.source, o.addr, o.proc_dir, &src, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "axon-top: %s\n", err);
		return 1;
	}
	if (o.trace)
		ret = top_run_trace(src, &o);
	else if (o.batch)
		ret = top_run_batch(src, &o);
	else if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "axon-top: not a terminal; use -b for batch mode\n");
		ret = 1;
	} else
		ret = top_run_ui(src, &o);
	top_source_close(src);
	return ret;
}
