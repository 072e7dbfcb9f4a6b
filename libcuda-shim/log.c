// SPDX-License-Identifier: MIT
/*
 * The shim's messages to the program's stderr, which AXON_LOG=0 silences.
 * A leaf: modules that only report something need nothing else of the
 * shim.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shim.h"

void shim_log(const char *fmt, ...)
{
	const char *lvl = getenv("AXON_LOG");
	va_list ap;

	if (lvl && !strcmp(lvl, "0"))
		return;
	fprintf(stderr, "axon: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
