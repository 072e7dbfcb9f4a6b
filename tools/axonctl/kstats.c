// SPDX-License-Identifier: MIT
/*
 * kstats.c - the kstats command: the kernel module's counters.
 */
#include <inttypes.h>
#include <stdio.h>

#include "axonctl.h"

int cmd_kstats(struct ctl *ctl, int argc, char **argv)
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
