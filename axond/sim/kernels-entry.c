// SPDX-License-Identifier: MIT
/*
 * sim/kernels-entry: the registration entry point of the test kernels
 * object, $(BUILD)/lib/axon-sim-kernels.so (kernels-abi.h), which axond
 * loads with --sim-kernels. Only this object links kernels.c.
 */
#include "kernels.h"

static const struct sim_kernels_ops test_kernels = {
	.abi_version = SIM_KERNELS_ABI_VERSION,
	.ops_size = sizeof(struct sim_kernels_ops),
	.kernel_size = sizeof(struct sim_kernel),
	.launch_size = sizeof(struct sim_launch),
	.name = "axon test kernels (tests/sim-kernels/kernels.cu twins)",
	.find = sim_kernels_find,
	.get = sim_kernels_get,
};

__attribute__((visibility("default")))
const struct sim_kernels_ops *axon_sim_kernels_register_v1(uint32_t abi_version)
{
	return abi_version == SIM_KERNELS_ABI_VERSION ? &test_kernels : NULL;
}
