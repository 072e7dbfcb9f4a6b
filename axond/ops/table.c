// SPDX-License-Identifier: MIT
/*
 * The operation table, indexed by AXON_OP_*: each op's handler, flags and
 * the union words it leaves unused, as uapi/axon-ops.def describes them
 * (the list is generated into axon_ops_table.h; the zero masks are computed
 * there from each op's fields). The handlers are in ops/<family>.c.
 */
#include <axon_ops_table.h>
#include "ops.h"

#define OP_ENTRY(name, number, handler, flags, zero_words) \
	[number] = { #name, handler##_prep, handler##_issue, flags, .zero = zero_words },

const struct op_def op_table[AXON_OP_LAST] = { AXON_OPS(OP_ENTRY) };
