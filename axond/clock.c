// SPDX-License-Identifier: MIT
/* The daemon's clock and its profiling switch (clock.h). */
#include <time.h>

#include "clock.h"

bool axond_profiling;

uint64_t axond_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
