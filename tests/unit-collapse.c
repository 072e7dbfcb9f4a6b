// SPDX-License-Identifier: MIT
/*
 * unit-collapse: axond/cuda/collapse.c (launch collapse) against a fake
 * driver: the vendor table `vd` is this test's, with graph calls that
 * record what they are asked and can be told to fail. Checks that a run's
 * shape is built into a graph only the second time it is seen; that a hit
 * replays it with one cuGraphLaunch and updates exactly the nodes whose
 * parameters changed; that another shape misses; that invalidation, a
 * failed build, update or launch drop the graph (every object made is
 * destroyed: ASan's leak check in make check); that the least recently
 * replayed graph is evicted; that the thrash guard stops building; that a
 * graph serves one stream (the driver orders launches of one exec, so a
 * shared one would serialise streams); and that collapse_free destroys
 * what is cached.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "axond.h"
#include "backend.h"
#include "cuda/collapse.h"
#include "cuda/context.h"
#include "cuda/vendor.h"

struct vendor vd;

/* ---- the fake driver ------------------------------------------------------ */

#define MAX_NODES	4096

static struct {
	int graphs, execs;		/* live objects */
	int creates, adds, instantiates, setparams, launches, exec_destroys;
	CUresult fail_add, fail_instantiate, fail_setparams, fail_launch;
	/* what the last SetParams asked for */
	uintptr_t set_node;
	unsigned char set_args[64];
	size_t set_size;
	/* per node (by handle): its predecessor, from AddKernelNode */
	uintptr_t dep[MAX_NODES];
	uintptr_t next_node;
	uintptr_t last_exec;		/* the exec cuGraphLaunch launched */
} fk;

struct fake_graph { int magic; };
struct fake_exec { int magic; };

static CUresult f_graph_create(CUgraph *g, unsigned int flags)
{
	ck_assert_uint_eq(flags, 0);
	*g = (CUgraph)calloc(1, sizeof(struct fake_graph));
	fk.graphs++;
	fk.creates++;
	return CUDA_SUCCESS;
}

static CUresult f_graph_destroy(CUgraph g)
{
	free(g);
	fk.graphs--;
	return CUDA_SUCCESS;
}

static CUresult f_add_kernel_node(CUgraphNode *node, CUgraph g, const CUgraphNode *deps,
				  size_t ndeps, const CUDA_KERNEL_NODE_PARAMS *p)
{
	ck_assert_ptr_nonnull(g);
	ck_assert_ptr_nonnull(p->func);
	ck_assert_ptr_null(p->kernelParams);
	fk.adds++;
	if (fk.fail_add)
		return fk.fail_add;
	ck_assert_uint_lt(fk.next_node + 1, MAX_NODES);
	fk.next_node++;
	fk.dep[fk.next_node] = ndeps ? (uintptr_t)deps[0] : 0;
	ck_assert_uint_le(ndeps, 1);
	*node = (CUgraphNode)fk.next_node;
	return CUDA_SUCCESS;
}

static CUresult f_instantiate(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	ck_assert_ptr_nonnull(g);
	ck_assert_uint_eq(flags, 0);
	fk.instantiates++;
	if (fk.fail_instantiate)
		return fk.fail_instantiate;
	*e = (CUgraphExec)calloc(1, sizeof(struct fake_exec));
	fk.execs++;
	return CUDA_SUCCESS;
}

static CUresult f_exec_destroy(CUgraphExec e)
{
	free(e);
	fk.execs--;
	fk.exec_destroys++;
	return CUDA_SUCCESS;
}

static CUresult f_set_params(CUgraphExec e, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p)
{
	size_t size;

	ck_assert_ptr_nonnull(e);
	fk.setparams++;
	if (fk.fail_setparams)
		return fk.fail_setparams;
	fk.set_node = (uintptr_t)n;
	/* The parameters travel in one buffer (CU_LAUNCH_PARAM_BUFFER_*). */
	ck_assert_ptr_nonnull(p->extra);
	ck_assert_ptr_eq(p->extra[0], CU_LAUNCH_PARAM_BUFFER_POINTER);
	ck_assert_ptr_eq(p->extra[2], CU_LAUNCH_PARAM_BUFFER_SIZE);
	size = *(size_t *)p->extra[3];
	ck_assert_uint_le(size, sizeof(fk.set_args));
	memcpy(fk.set_args, p->extra[1], size);
	fk.set_size = size;
	return CUDA_SUCCESS;
}

static CUresult f_launch(CUgraphExec e, CUstream s)
{
	ck_assert_ptr_nonnull(e);
	ck_assert(s == (CUstream)0x5 || s == (CUstream)0x6);
	fk.launches++;
	fk.last_exec = (uintptr_t)e;
	return fk.fail_launch;
}

/* ---- runs of launches ------------------------------------------------------ */

#define STREAM	((CUstream)0x5)

static struct func fn[4];
static struct work items[COLLAPSE_MAX];
static struct work *run[COLLAPSE_MAX];
static uint64_t args[COLLAPSE_MAX];
static struct cu_gctx g;

static void setup(void)
{
	unsigned int i;

	memset(&fk, 0, sizeof(fk));
	memset(&vd, 0, sizeof(vd));
	vd.cuGraphCreate = f_graph_create;
	vd.cuGraphDestroy = f_graph_destroy;
	vd.cuGraphAddKernelNode = f_add_kernel_node;
	vd.cuGraphInstantiateWithFlags = f_instantiate;
	vd.cuGraphExecDestroy = f_exec_destroy;
	vd.cuGraphExecKernelNodeSetParams = f_set_params;
	vd.cuGraphLaunch = f_launch;
	memset(&g, 0, sizeof(g));
	for (i = 0; i < 4; i++)
		fn[i].backend_priv = (void *)(uintptr_t)(0x1000 + i);
	for (i = 0; i < COLLAPSE_MAX; i++) {
		memset(&items[i], 0, sizeof(items[i]));
		items[i].type = WORK_LAUNCH;
		items[i].launch.func = &fn[i % 2];
		items[i].launch.grid[0] = items[i].launch.grid[1] = items[i].launch.grid[2] = 1;
		items[i].launch.block[0] = 32;
		items[i].launch.block[1] = items[i].launch.block[2] = 1;
		args[i] = i;
		items[i].launch.args = &args[i];
		items[i].launch.args_size = sizeof(args[i]);
		run[i] = &items[i];
	}
}

/* Every object the fake made is gone. */
static void teardown(void)
{
	collapse_free(&g);
	ck_assert_ptr_null(g.collapse);
	ck_assert_int_eq(fk.graphs, 0);
	ck_assert_int_eq(fk.execs, 0);
}

static CUresult issue(unsigned int n)
{
	return collapse_issue(&g, STREAM, run, n);
}

static CUresult issue_on(CUstream s, unsigned int n)
{
	return collapse_issue(&g, s, run, n);
}

START_TEST(built_the_second_time)
{
	unsigned int i;

	ck_assert_int_eq(issue(8), CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(fk.creates + fk.adds + fk.launches, 0);
	ck_assert_int_eq(issue(8), CUDA_SUCCESS);
	ck_assert_int_eq(fk.creates, 1);
	ck_assert_int_eq(fk.adds, 8);
	ck_assert_int_eq(fk.instantiates, 1);
	ck_assert_int_eq(fk.launches, 1);
	/* A chain: each node after the one before it. */
	ck_assert_uint_eq(fk.dep[1], 0);
	for (i = 2; i <= 8; i++)
		ck_assert_uint_eq(fk.dep[i], i - 1);
	/* A hit: no building, no updates (same parameters), one launch. */
	ck_assert_int_eq(issue(8), CUDA_SUCCESS);
	ck_assert_int_eq(fk.creates, 1);
	ck_assert_int_eq(fk.setparams, 0);
	ck_assert_int_eq(fk.launches, 2);
}
END_TEST

START_TEST(only_changed_parameters_are_updated)
{
	ck_assert_int_eq(issue(4), CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(issue(4), CUDA_SUCCESS);
	args[2] = 0xabcdef;
	ck_assert_int_eq(issue(4), CUDA_SUCCESS);
	ck_assert_int_eq(fk.setparams, 1);
	ck_assert_uint_eq(fk.set_node, 3);	/* the third node made */
	ck_assert_uint_eq(fk.set_size, sizeof(uint64_t));
	ck_assert_int_eq(memcmp(fk.set_args, &args[2], sizeof(uint64_t)), 0);
	/* Now the graph launches that: no update the next time. */
	ck_assert_int_eq(issue(4), CUDA_SUCCESS);
	ck_assert_int_eq(fk.setparams, 1);
	ck_assert_int_eq(fk.launches, 3);
}
END_TEST

START_TEST(another_shape_misses)
{
	ck_assert_int_eq(issue(4), CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(issue(4), CUDA_SUCCESS);
	items[1].launch.grid[0] = 2;
	ck_assert_int_eq(issue(4), CUDA_ERROR_NOT_SUPPORTED);
	items[1].launch.grid[0] = 1;
	items[3].launch.func = &fn[3];
	ck_assert_int_eq(issue(4), CUDA_ERROR_NOT_SUPPORTED);
	items[3].launch.func = &fn[1];
	items[0].launch.shared_bytes = 1024;
	ck_assert_int_eq(issue(4), CUDA_ERROR_NOT_SUPPORTED);
	items[0].launch.shared_bytes = 0;
	/* A run of another length is another shape too. */
	ck_assert_int_eq(issue(8), CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(fk.creates, 1);
	ck_assert_int_eq(issue(4), CUDA_SUCCESS);
	ck_assert_int_eq(fk.creates, 1);
	ck_assert_int_eq(fk.launches, 2);
}
END_TEST

START_TEST(invalidation_drops_the_graphs)
{
	ck_assert_int_eq(issue(4), CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(issue(4), CUDA_SUCCESS);
	collapse_invalidate();
	/* Seen afresh: not replayed from the old graph, which is gone. */
	ck_assert_int_eq(issue(4), CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(fk.exec_destroys, 1);
	ck_assert_int_eq(fk.execs, 0);
	ck_assert_int_eq(issue(4), CUDA_SUCCESS);
	ck_assert_int_eq(fk.creates, 2);
}
END_TEST

START_TEST(failures_leave_nothing_behind)
{
	ck_assert_int_eq(issue(4), CUDA_ERROR_NOT_SUPPORTED);
	fk.fail_add = CUDA_ERROR_INVALID_VALUE;
	ck_assert_int_eq(issue(4), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(fk.graphs, 0);
	ck_assert_int_eq(fk.launches, 0);
	fk.fail_add = CUDA_SUCCESS;
	/* Seen twice again before another build. */
	ck_assert_int_eq(issue(4), CUDA_ERROR_NOT_SUPPORTED);
	fk.fail_instantiate = CUDA_ERROR_OUT_OF_MEMORY;
	ck_assert_int_eq(issue(4), CUDA_ERROR_OUT_OF_MEMORY);
	ck_assert_int_eq(fk.graphs, 0);
	ck_assert_int_eq(fk.execs, 0);
	fk.fail_instantiate = CUDA_SUCCESS;
	ck_assert_int_eq(issue(4), CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(issue(4), CUDA_SUCCESS);
	/* A failed update: the half-updated graph goes. */
	args[0] = 99;
	fk.fail_setparams = CUDA_ERROR_INVALID_VALUE;
	ck_assert_int_eq(issue(4), CUDA_ERROR_INVALID_VALUE);
	ck_assert_int_eq(fk.execs, 0);
	fk.fail_setparams = CUDA_SUCCESS;
	ck_assert_int_eq(issue(4), CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(issue(4), CUDA_SUCCESS);
	/* A failed launch: the caller launches directly; the graph goes. */
	fk.fail_launch = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
	ck_assert_int_eq(issue(4), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
	ck_assert_int_eq(fk.execs, 0);
	ck_assert_int_eq(fk.graphs, 0);
}
END_TEST

START_TEST(least_recently_replayed_is_evicted)
{
	unsigned int s;

	/* 33 shapes (grids 1..33 of the first launch), each built and
	 * replayed: the cache holds 32, so the first one goes. */
	for (s = 1; s <= 33; s++) {
		items[0].launch.grid[0] = s;
		ck_assert_int_eq(issue(4), CUDA_ERROR_NOT_SUPPORTED);
		ck_assert_int_eq(issue(4), CUDA_SUCCESS);
		ck_assert_int_eq(issue(4), CUDA_SUCCESS);
		ck_assert_int_eq(issue(4), CUDA_SUCCESS);
		ck_assert_int_eq(issue(4), CUDA_SUCCESS);
	}
	ck_assert_int_eq(fk.execs, 32);
	ck_assert_int_eq(fk.exec_destroys, 1);
	items[0].launch.grid[0] = 33;
	ck_assert_int_eq(issue(4), CUDA_SUCCESS);	/* still cached */
	items[0].launch.grid[0] = 1;
	ck_assert_int_eq(issue(4), CUDA_ERROR_NOT_SUPPORTED);	/* evicted */
}
END_TEST

START_TEST(thrash_guard_stops_building)
{
	unsigned int s, creates;

	/* Shapes that come twice and never again: every one is built and
	 * replayed once, so building outweighs replaying. */
	for (s = 1; s <= 40; s++) {
		items[0].launch.grid[0] = s;
		issue(4);
		issue(4);
	}
	creates = (unsigned int)fk.creates;
	ck_assert_uint_le(creates, 33);
	for (s = 100; s < 140; s++) {
		items[0].launch.grid[0] = s;
		ck_assert_int_eq(issue(4), CUDA_ERROR_NOT_SUPPORTED);
		ck_assert_int_eq(issue(4), CUDA_ERROR_NOT_SUPPORTED);
	}
	ck_assert_uint_eq((unsigned int)fk.creates, creates);
}
END_TEST

START_TEST(one_graph_per_stream)
{
	uintptr_t on5, on6;

	ck_assert_int_eq(issue_on((CUstream)0x5, 4), CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(issue_on((CUstream)0x5, 4), CUDA_SUCCESS);
	on5 = fk.last_exec;
	/* The same shape on another stream is not the same graph. */
	ck_assert_int_eq(issue_on((CUstream)0x6, 4), CUDA_ERROR_NOT_SUPPORTED);
	ck_assert_int_eq(issue_on((CUstream)0x6, 4), CUDA_SUCCESS);
	on6 = fk.last_exec;
	ck_assert(on5 != on6);
	ck_assert_int_eq(fk.creates, 2);
	ck_assert_int_eq(issue_on((CUstream)0x5, 4), CUDA_SUCCESS);
	ck_assert(fk.last_exec == on5);
	ck_assert_int_eq(issue_on((CUstream)0x6, 4), CUDA_SUCCESS);
	ck_assert(fk.last_exec == on6);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("collapse");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, built_the_second_time);
	tcase_add_test(tc, only_changed_parameters_are_updated);
	tcase_add_test(tc, another_shape_misses);
	tcase_add_test(tc, invalidation_drops_the_graphs);
	tcase_add_test(tc, failures_leave_nothing_behind);
	tcase_add_test(tc, least_recently_replayed_is_evicted);
	tcase_add_test(tc, thrash_guard_stops_building);
	tcase_add_test(tc, one_graph_per_stream);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
