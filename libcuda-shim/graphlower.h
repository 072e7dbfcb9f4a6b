/* SPDX-License-Identifier: MIT */
/*
 * Built graphs lowered to a capture (graphlower.c): what graph.c's
 * instantiate, update and exec destroy do with a built graph.
 */
#ifndef AXON_SHIM_GRAPHLOWER_H
#define AXON_SHIM_GRAPHLOWER_H

#include "shim.h"

CUresult shim_gb_instantiate(CUgraphExec *out, CUgraph g, unsigned long long flags,
			     CUresult (*inst)(CUgraphExec *, CUgraph, unsigned long long));
CUresult shim_gb_exec_update(CUgraphExec x, CUgraph g,
			     CUresult (*update)(CUgraphExec, CUgraph, CUgraphExecUpdateResult *),
			     CUgraphExecUpdateResult *result);
void shim_gb_exec_forget(uint64_t exec);

#endif
