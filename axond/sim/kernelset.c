// SPDX-License-Identifier: MIT
/*
 * sim/kernelset: the kernels object, loaded and checked (see kernelset.h).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "kernelset.h"

/* Set once at start-up (sim_init), before the executor thread exists. */
static const struct sim_kernels_ops *installed;

int sim_kernelset_install(const struct sim_kernels_ops *ops, const char *what,
			  char *err, size_t errlen)
{
	if (!ops) {
		snprintf(err, errlen, "%s: does not speak kernels ABI version %u", what,
			 SIM_KERNELS_ABI_VERSION);
		return -1;
	}
	/* The version first: the sizes mean something only at ours. */
	if (ops->abi_version != SIM_KERNELS_ABI_VERSION ||
	    ops->ops_size != sizeof(struct sim_kernels_ops) ||
	    ops->kernel_size != sizeof(struct sim_kernel) ||
	    ops->launch_size != sizeof(struct sim_launch)) {
		snprintf(err, errlen,
			 "%s: kernels ABI version %u (ops %u, kernel %u, launch %u bytes), "
			 "axond speaks %u (%zu, %zu, %zu bytes); rebuild it with this axond",
			 what, ops->abi_version, ops->ops_size, ops->kernel_size,
			 ops->launch_size, SIM_KERNELS_ABI_VERSION,
			 sizeof(struct sim_kernels_ops), sizeof(struct sim_kernel),
			 sizeof(struct sim_launch));
		return -1;
	}
	if (!ops->find || !ops->get) {
		snprintf(err, errlen, "%s: kernels ops without find or get", what);
		return -1;
	}
	installed = ops;
	if (errlen)
		err[0] = '\0';
	return 0;
}

int sim_kernelset_load(const char *path, char *err, size_t errlen)
{
	sim_kernels_register_fn *entry;
	void *h;

	/* A name without a slash would be looked for in the library path. */
	if (!strchr(path, '/')) {
		snprintf(err, errlen, "--sim-kernels=%s: give a path (./%s)", path, path);
		return -1;
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(err, errlen, "--sim-kernels: %s", dlerror());
		return -1;
	}
	entry = (sim_kernels_register_fn *)dlsym(h, SIM_KERNELS_ENTRY);
	if (!entry) {
		snprintf(err, errlen, "--sim-kernels=%s: no %s(): not a kernels object "
			 "of ABI version %u", path, SIM_KERNELS_ENTRY, SIM_KERNELS_ABI_VERSION);
		dlclose(h);
		return -1;
	}
	if (sim_kernelset_install(entry(SIM_KERNELS_ABI_VERSION), path, err, errlen)) {
		dlclose(h);
		return -1;
	}
	/* h stays open: the kernels' code and tables are in it. */
	return 0;
}

bool sim_kernelset_loaded(void)
{
	return installed != NULL;
}

const char *sim_kernelset_name(void)
{
	return installed && installed->name ? installed->name : "";
}

const struct sim_kernel *sim_kernelset_find(const char *symbol)
{
	return installed ? installed->find(symbol) : NULL;
}
