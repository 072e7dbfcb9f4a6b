/* SPDX-License-Identifier: MIT */
/*
 * axonctl.h - what axonctl's command families share: the invocation's
 * settings, the error line, the size and time formats, the daemon's stats
 * and the kernel module's arguments. Each family's commands are in a file
 * of their own (daemon.c, limit.c, clients.c, kstats.c, events.c); the
 * table that names them is in axonctl.c.
 */
#ifndef AXONCTL_H
#define AXONCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <axon/libaxon.h>
#include "json.h"

struct ctl {
	char addr[512];		/* as given or defaulted, "unix:" form */
	bool addr_given;
	unsigned int timeout_s;	/* for one exchange with the daemon */
	bool bytes;		/* raw byte counts instead of KiB, MiB, ... */
};

/* A command: argv[0] is its last word (the subcommand, if it has one). */
typedef int axonctl_cmd_fn(struct ctl *ctl, int argc, char **argv);

/* "axonctl: ..." on stderr, after what stdout holds. */
void errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- format.c: sizes, times, users; the size argument -------------------- */

const char *fmt_bytes(uint64_t b, char *buf, size_t len);
const char *fmt_duration(double s, char *buf, size_t len);
const char *fmt_user(uint64_t uid, char *buf, size_t len);
const char *fmt_lat(uint64_t us, char *buf, size_t len);
/* fmt_bytes, or raw bytes under --bytes; fmt_limit also says "max". */
const char *fmt_size(const struct ctl *ctl, uint64_t b, char *buf, size_t len);
const char *fmt_limit(const struct ctl *ctl, uint64_t b, char *buf, size_t len);
int parse_size(const char *s, uint64_t *out);

/* ---- daemon.c: axond's stats document ------------------------------------ */

int fetch(struct ctl *ctl, char **doc, char *why, size_t whylen);
struct json *fetch_parsed(struct ctl *ctl, char *why, size_t whylen);
void print_daemon_line(const struct json *doc);
void print_clients(const struct json *doc);

axonctl_cmd_fn cmd_stats, cmd_daemon_status;

/* ---- kmod.c: what the kernel module's commands share --------------------- */

struct kargs {
	const char *pos[4];
	int npos;
	long count;		/* events --count, -1 none */
	double wait_s;		/* events --wait, < 0 none */
};

#define KA_COUNT	(1U << 0)
#define KA_WAIT		(1U << 1)

int kparse(struct ctl *ctl, const char *what, const char *use, unsigned int allow,
	   int min, int max, int argc, char **argv, struct kargs *ka);
const char *cgroup_arg(const char *p);
struct axon_nl *kopen(char *err, size_t errlen, int *ret);

/* ---- the kernel module's command families -------------------------------- */

axonctl_cmd_fn cmd_limit_set, cmd_limit_get, cmd_limits;	/* limit.c */
/* dlimit.c: a cgroup's directory (a path relative to the cgroup v2 root,
 * or under its mount), open, or a negative errno; and axond's own limit
 * of a cgroup for socket clients, read or set (0, or 1 with a message). */
int open_cgroup_dir(const char *cgroup);
int daemon_limit(struct ctl *ctl, const char *cgroup, bool set, uint64_t limit,
		 struct axon_dlimit *out);
axonctl_cmd_fn cmd_clients;					/* clients.c */
axonctl_cmd_fn cmd_kstats;					/* kstats.c */
axonctl_cmd_fn cmd_events;					/* events.c */

#endif
