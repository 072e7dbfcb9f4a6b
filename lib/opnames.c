// SPDX-License-Identifier: MIT
/*
 * Operation names for logs, stats and tools, indexed by AXON_OP_*, from the
 * op list generated out of uapi/axon-ops.def (axon_ops_table.h).
 */
#include <axon/libaxon.h>
#include <axon_ops_table.h>

#define OP_NAME(name, number, handler, flags, zero) [number] = #name,

/* Unsized, so the count below is that of the list, not of the enum. */
static const char *const op_names[] = { AXON_OPS(OP_NAME) };

_Static_assert(sizeof(op_names) / sizeof(op_names[0]) == AXON_OP_LAST,
	       "every op has a name");

const char *axon_op_name(unsigned int op)
{
	return op < AXON_OP_LAST && op_names[op] ? op_names[op] : "?";
}
