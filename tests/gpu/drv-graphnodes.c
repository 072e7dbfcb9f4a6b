// SPDX-License-Identifier: MIT
/*
 * Graphs built node by node with host nodes (issue 15: cuGraphAddHostNode
 * was NOT_SUPPORTED through axon), through the driver API only, in a form
 * that runs unchanged natively and through axon and prints the same
 * transcript on stdout both ways:
 *
 *   1. memset -> host "start" -> kernel fill(2.0) -> copy to host -> host
 *      "check": at each of three launches the host functions run in that
 *      order, and "check" sees the copy's result (2.0 everywhere);
 *   2. cuGraphHostNodeGetParams gives back the function and argument;
 *      cuGraphHostNodeSetParams changes the graph, not an exec made
 *      before: the old exec still calls the old argument, a new one the
 *      new; cuGraphExecHostNodeSetParams changes the one exec it names;
 *   3. cuGraphMemsetNodeGetParams / SetParams: a new exec after setting
 *      the value to 7 with the kernel node's value changed too;
 *      cuGraphExecMemsetNodeSetParams on that exec;
 *   4. cuGraphNodeGetType says HOST; a NULL function is INVALID_VALUE;
 *   5. a child graph node runs a copy of the child made when it was added,
 *      at its place: nodes added to the child afterwards, or the child's
 *      destruction, change nothing.
 *
 * Usage: drv-graphnodes KERNELS.cubin (its "fill"). Exit 0 when every
 * check passed; else 1 with the line that says why.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drv-gpu.h"

static int failures;

#define CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			printf("FAIL %s:%d: ", __FILE__, __LINE__);	\
			printf(__VA_ARGS__);				\
			printf("\n");					\
			failures++;					\
		}							\
	} while (0)

#define N 4096

static float host[N];
static char order[64];
static unsigned int norder;
static float want = 2.0f;
static char tag_a = 'a', tag_b = 'b', tag_1 = '1', tag_2 = '2', tag_3 = '3';
static int wrong;

/* Appends its tag to the order log. */
static void CUDA_CB mark(void *tag)
{
	if (norder < sizeof(order) - 1)
		order[norder++] = *(const char *)tag;
}

/* Checks what the copy before it brought to host memory. */
static void CUDA_CB check(void *tag)
{
	int i;

	mark(tag);
	for (i = 0; i < N; i++)
		wrong += host[i] != want;
}

static void *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;
	char *b;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
		printf("FAIL cannot read %s\n", path);
		exit(1);
	}
	b = malloc((size_t)n + 1);
	if (!b || fread(b, 1, (size_t)n, f) != (size_t)n) {
		printf("FAIL cannot read %s\n", path);
		exit(1);
	}
	b[n] = 0;
	fclose(f);
	return b;
}

static void launch(CUgraphExec x, CUstream s, int times, const char *what, const char *expect)
{
	int i;

	norder = 0;
	memset(order, 0, sizeof(order));
	wrong = 0;
	for (i = 0; i < times; i++)
		CK(cuGraphLaunch(x, s));
	CK(cuStreamSynchronize(s));
	printf("%s: host functions ran \"%s\", %d wrong values seen\n", what, order, wrong);
	CHECK(!strcmp(order, expect) && !wrong, "%s: expected \"%s\"", what, expect);
}

static CUgraphNode host_node(CUgraph g, CUgraphNode *dep, void *tag)
{
	CUDA_HOST_NODE_PARAMS hp = { .fn = mark, .userData = tag };
	CUgraphNode n;

	CK(cuGraphAddHostNode(&n, g, dep, dep ? 1 : 0, &hp));
	return n;
}

/* a -> child (1 -> 2) -> b; the child changed after it was added. */
static void child_graphs(CUstream s)
{
	CUgraphNode a, kid, c1, c2;
	CUgraphNodeType type;
	CUgraph parent, child;
	CUgraphExec x;

	CK(cuGraphCreate(&child, 0));
	c1 = host_node(child, NULL, &tag_1);
	c2 = host_node(child, &c1, &tag_2);
	CK(cuGraphCreate(&parent, 0));
	a = host_node(parent, NULL, &tag_a);
	CK(cuGraphAddChildGraphNode(&kid, parent, &a, 1, child));
	host_node(parent, &kid, &tag_b);
	host_node(child, &c2, &tag_3);	/* not in the parent's copy */
	CK(cuGraphNodeGetType(kid, &type));
	printf("child graph node type: %s\n", type == CU_GRAPH_NODE_TYPE_GRAPH ? "GRAPH" : "other");
	CHECK(type == CU_GRAPH_NODE_TYPE_GRAPH, "type %d", (int)type);
	CK(cuGraphDestroy(child));	/* the parent keeps its copy */
	CK(cuGraphInstantiateWithFlags(&x, parent, 0));
	launch(x, s, 2, "a child graph between two host nodes", "a12ba12b");
	CK(cuGraphExecDestroy(x));
	CK(cuGraphDestroy(parent));
}

int main(int argc, char **argv)
{
	static char tag_s = 's', tag_c = 'c', tag_x = 'x', tag_y = 'y';
	CUgraphNode nset, nstart, nfill, ncopy, ncheck;
	CUDA_KERNEL_NODE_PARAMS kp;
	CUDA_MEMSET_NODE_PARAMS mp;
	CUDA_HOST_NODE_PARAMS hp;
	CUgraphExec x1, x2, x3;
	CUDA_MEMCPY3D cp;
	CUgraphNodeType type;
	CUdeviceptr d;
	CUfunction fill;
	CUcontext ctx;
	CUmodule mod;
	CUdevice dev;
	CUgraph g;
	CUstream s;
	char name[128];
	void *image, *args[3];
	float v = 2.0f;
	int n = N;

	if (argc != 2) {
		fprintf(stderr, "usage: drv-graphnodes KERNELS.cubin\n");
		return 2;
	}
	image = read_file(argv[1]);
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	if (!cuDeviceGetName(name, sizeof(name), dev))
		fprintf(stderr, "device: %s\n", name);
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuModuleLoadData(&mod, image));
	CK(cuModuleGetFunction(&fill, mod, "fill"));
	CK(cuMemAlloc(&d, N * sizeof(float)));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuGraphCreate(&g, 0));

	memset(&mp, 0, sizeof(mp));
	mp.dst = d;
	mp.elementSize = 4;
	mp.width = N;
	mp.height = 1;
	CK(cuGraphAddMemsetNode(&nset, g, NULL, 0, &mp, ctx));
	hp.fn = mark;
	hp.userData = &tag_s;
	CK(cuGraphAddHostNode(&nstart, g, &nset, 1, &hp));
	memset(&kp, 0, sizeof(kp));
	args[0] = &d;
	args[1] = &v;
	args[2] = &n;
	kp.func = fill;
	kp.gridDimX = N / 256;
	kp.gridDimY = kp.gridDimZ = 1;
	kp.blockDimX = 256;
	kp.blockDimY = kp.blockDimZ = 1;
	kp.kernelParams = args;
	CK(cuGraphAddKernelNode(&nfill, g, &nstart, 1, &kp));
	memset(&cp, 0, sizeof(cp));
	cp.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	cp.srcDevice = d;
	cp.dstMemoryType = CU_MEMORYTYPE_HOST;
	cp.dstHost = host;
	cp.WidthInBytes = sizeof(host);
	cp.Height = cp.Depth = 1;
	CK(cuGraphAddMemcpyNode(&ncopy, g, &nfill, 1, &cp, ctx));
	hp.fn = check;
	hp.userData = &tag_c;
	CK(cuGraphAddHostNode(&ncheck, g, &ncopy, 1, &hp));

	CK(cuGraphNodeGetType(ncheck, &type));
	printf("host node type: %s\n", type == CU_GRAPH_NODE_TYPE_HOST ? "HOST" : "other");
	CHECK(type == CU_GRAPH_NODE_TYPE_HOST, "type %d", (int)type);
	hp.fn = NULL;
	printf("host node with a NULL function: %s\n",
	       ename(cuGraphAddHostNode(&nstart, g, NULL, 0, &hp)));
	CHECK(cuGraphAddHostNode(&nstart, g, NULL, 0, &hp) == CUDA_ERROR_INVALID_VALUE, "NULL fn");

	CK(cuGraphInstantiateWithFlags(&x1, g, 0));
	launch(x1, s, 3, "three launches", "scscsc");

	memset(&hp, 0, sizeof(hp));
	CK(cuGraphHostNodeGetParams(ncheck, &hp));
	printf("host node parameters: %s, %s\n", hp.fn == check ? "check" : "other function",
	       hp.userData == &tag_c ? "its tag" : "another argument");
	CHECK(hp.fn == check && hp.userData == &tag_c, "host params");
	hp.userData = &tag_x;
	CK(cuGraphHostNodeSetParams(ncheck, &hp));
	launch(x1, s, 1, "the exec made before the change", "sc");
	CK(cuGraphInstantiateWithFlags(&x2, g, 0));
	launch(x2, s, 1, "an exec made after it", "sx");
	hp.userData = &tag_y;
	CK(cuGraphExecHostNodeSetParams(x1, ncheck, &hp));
	launch(x1, s, 1, "the first exec after cuGraphExecHostNodeSetParams", "sy");
	launch(x2, s, 1, "the second exec, untouched", "sx");

	memset(&mp, 0, sizeof(mp));
	CK(cuGraphMemsetNodeGetParams(nset, &mp));
	printf("memset node: %u-byte elements, %zu of them, value %u\n", mp.elementSize,
	       mp.width, mp.value);
	CHECK(mp.dst == d && mp.elementSize == 4 && mp.width == N && mp.value == 0, "memset");
	v = 7.0f;	/* 7.0f's bits, and a fill of 7.0 after it */
	memcpy(&mp.value, &v, sizeof(v));
	CK(cuGraphMemsetNodeSetParams(nset, &mp));
	CK(cuGraphKernelNodeSetParams(nfill, &kp));
	want = 7.0f;
	CK(cuGraphInstantiateWithFlags(&x3, g, 0));
	launch(x3, s, 2, "memset and kernel changed", "sxsx");
	mp.value = 0;
	CK(cuGraphExecMemsetNodeSetParams(x3, nset, &mp, ctx));
	launch(x3, s, 1, "after cuGraphExecMemsetNodeSetParams", "sx");

	child_graphs(s);

	CK(cuGraphExecDestroy(x1));
	CK(cuGraphExecDestroy(x2));
	CK(cuGraphExecDestroy(x3));
	CK(cuGraphDestroy(g));
	CK(cuStreamDestroy(s));
	CK(cuMemFree(d));
	CK(cuModuleUnload(mod));
	CK(cuCtxDestroy(ctx));
	free(image);
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
