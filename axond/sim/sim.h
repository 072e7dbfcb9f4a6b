/* SPDX-License-Identifier: MIT */
/* The sim backend's internal interface. */
#ifndef AXOND_SIM_H
#define AXOND_SIM_H

#include <stdint.h>
#include <linux/axon.h>

void sim_fill_info(struct axon_info *info, uint64_t mem);

#endif
