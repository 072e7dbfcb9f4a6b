// SPDX-License-Identifier: MIT
/* The backends this build has, by name. */
#include <string.h>
#include "backend.h"

static const struct backend *const backends[] = {
	&sim_backend,
	&cuda_backend,
};

const struct backend *backend_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
		if (!strcmp(backends[i]->name, name))
			return backends[i];
	return NULL;
}
