// SPDX-License-Identifier: MIT
/* Operation names for logs, stats and tools, indexed by AXON_OP_*. */
#include <axon/libaxon.h>

static const char *const op_names[AXON_OP_LAST] = {
	[AXON_OP_NOP]			= "NOP",
	[AXON_OP_CTX_CREATE]		= "CTX_CREATE",
	[AXON_OP_CTX_DESTROY]		= "CTX_DESTROY",
	[AXON_OP_CTX_SYNC]		= "CTX_SYNC",
	[AXON_OP_MEM_MAP]		= "MEM_MAP",
	[AXON_OP_MEM_UNMAP]		= "MEM_UNMAP",
	[AXON_OP_MEM_GET_INFO]		= "MEM_GET_INFO",
	[AXON_OP_MEMCPY_HTOD]		= "MEMCPY_HTOD",
	[AXON_OP_MEMCPY_DTOH]		= "MEMCPY_DTOH",
	[AXON_OP_MEMCPY_DTOD]		= "MEMCPY_DTOD",
	[AXON_OP_MEMSET]		= "MEMSET",
	[AXON_OP_MODULE_LOAD]		= "MODULE_LOAD",
	[AXON_OP_MODULE_UNLOAD]		= "MODULE_UNLOAD",
	[AXON_OP_MODULE_GET_FUNC]	= "MODULE_GET_FUNC",
	[AXON_OP_MODULE_GET_GLOBAL]	= "MODULE_GET_GLOBAL",
	[AXON_OP_LAUNCH]		= "LAUNCH",
	[AXON_OP_STREAM_CREATE]		= "STREAM_CREATE",
	[AXON_OP_STREAM_DESTROY]	= "STREAM_DESTROY",
	[AXON_OP_STREAM_SYNC]		= "STREAM_SYNC",
	[AXON_OP_STREAM_WAIT_EVENT]	= "STREAM_WAIT_EVENT",
	[AXON_OP_EVENT_CREATE]		= "EVENT_CREATE",
	[AXON_OP_EVENT_DESTROY]		= "EVENT_DESTROY",
	[AXON_OP_EVENT_RECORD]		= "EVENT_RECORD",
	[AXON_OP_EVENT_ELAPSED]		= "EVENT_ELAPSED",
	[AXON_OP_FUNC_GET_ATTR]		= "FUNC_GET_ATTR",
};

_Static_assert(sizeof(op_names) / sizeof(op_names[0]) == AXON_OP_LAST,
	       "every op has a name");

const char *axon_op_name(unsigned int op)
{
	return op < AXON_OP_LAST && op_names[op] ? op_names[op] : "?";
}
