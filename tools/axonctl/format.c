// SPDX-License-Identifier: MIT
/*
 * format.c - how axonctl writes sizes, durations, users and latencies, and
 * how it reads a size argument ("4M", "1.5G", "none").
 */
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "axonctl.h"

const char *fmt_bytes(uint64_t b, char *buf, size_t len)
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

const char *fmt_duration(double s, char *buf, size_t len)
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

const char *fmt_user(uint64_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid((uid_t)uid);

	if (pw && pw->pw_name)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "%llu", (unsigned long long)uid);
	return buf;
}

/* Latency percentiles are log2 bucket bounds: "<N" in us, ms or s. */
const char *fmt_lat(uint64_t us, char *buf, size_t len)
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

const char *fmt_size(const struct ctl *ctl, uint64_t b, char *buf, size_t len)
{
	if (ctl->bytes) {
		snprintf(buf, len, "%" PRIu64, b);
		return buf;
	}
	return fmt_bytes(b, buf, len);
}

const char *fmt_limit(const struct ctl *ctl, uint64_t b, char *buf, size_t len)
{
	if (b == AXON_LIMIT_NONE) {
		snprintf(buf, len, "max");
		return buf;
	}
	return fmt_size(ctl, b, buf, len);
}

/* "4M", "1.5G", "4096", "none": bytes (K/M/G/T are powers of 1024). */
int parse_size(const char *s, uint64_t *out)
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
