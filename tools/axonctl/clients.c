// SPDX-License-Identifier: MIT
/*
 * clients.c - the clients command: the kernel module's clients, or axond's
 * when the module is not loaded.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "axonctl.h"

static int print_kclient(const struct axon_kclient *c, void *arg)
{
	const struct ctl *ctl = arg;
	char mem[32];

	printf("%5" PRIu64 " %8u %6u %-24s %-16.16s %11s %s\n", c->id, c->pid, c->uid,
	       c->cgroup_path, c->comm, fmt_size(ctl, c->charged, mem, sizeof(mem)),
	       axon_nl_kstate_name(c->state));
	return 0;
}

int cmd_clients(struct ctl *ctl, int argc, char **argv)
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
