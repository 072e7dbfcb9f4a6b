// SPDX-License-Identifier: MIT
/*
 * rt-concurrent: two client processes on the device at once, each checking
 * its own results. The program forks before touching CUDA; both processes
 * create their context and buffers, meet at a barrier (a pair of pipes) so
 * that their work overlaps, then run 50 rounds of
 *
 *   fill(a, 1000 * id + round)  fill(b, 1)  saxpy(n, 2, a, b)  scale(b, 0.5)
 *
 * on 1 Mi floats and check every element of b (a + 0.5) after each round:
 * a value of the other process's would show. The child reports its result
 * line through a pipe and the parent prints both in order, so the output is
 * the same however the two interleave.
 *
 * The kernels are the sim's built-ins (sim.md §5): gpucheck-sim runs this
 * too. Exits 0 when both processes passed every check, 1 otherwise.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rt-gpu.h"

#define N	(1 << 20)
#define ROUNDS	50

extern "C" __global__ void fill(float *p, float v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = v;
}

extern "C" __global__ void saxpy(int n, float a, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

__global__ void scale(float *p, float s, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] * s;
}

/* Tells the other process we are ready, then waits until it is. */
static bool barrier(int wfd, int rfd)
{
	char c = 'r';

	return write(wfd, &c, 1) == 1 && read(rfd, &c, 1) == 1;
}

/* One client's whole run; its result line goes into line. */
static void client(int id, int wfd, int rfd, char *line, size_t size)
{
	float *a = NULL, *b = NULL, *h = (float *)malloc(N * sizeof(float));
	cudaStream_t s = NULL;
	size_t bad = 0;
	int n = N, rounds = 0;

	RT_CHECK(h != NULL, "malloc");
	RT_OK(cudaSetDevice(0));
	RT_OK(cudaStreamCreate(&s));
	RT_OK(cudaMalloc((void **)&a, N * sizeof(float)));
	RT_OK(cudaMalloc((void **)&b, N * sizeof(float)));
	RT_CHECK(barrier(wfd, rfd), "client %d: barrier", id);
	for (int r = 0; r < ROUNDS && h && !rt_failures; r++, rounds++) {
		float v = (float)(1000 * id + r);

		fill<<<N / 256, 256, 0, s>>>(a, v, n);
		fill<<<N / 256, 256, 0, s>>>(b, 1.0f, n);
		saxpy<<<N / 256, 256, 0, s>>>(n, 2.0f, a, b);
		scale<<<N / 256, 256, 0, s>>>(b, 0.5f, n);
		RT_OK(cudaGetLastError());
		RT_OK(cudaMemcpyAsync(h, b, N * sizeof(float), cudaMemcpyDeviceToHost, s));
		RT_OK(cudaStreamSynchronize(s));
		for (int i = 0; i < N; i++)
			bad += h[i] != v + 0.5f;
		RT_CHECK(bad == 0, "client %d round %d: %zu wrong (h[0] = %f)", id, r, bad, h[0]);
	}
	RT_OK(cudaFree(a));
	RT_OK(cudaFree(b));
	RT_OK(cudaStreamDestroy(s));
	free(h);
	snprintf(line, size, "client %d: %d of %d rounds, %s\n", id, rounds, ROUNDS,
		 rt_failures ? "FAILED" : "every element right");
}

int main(void)
{
	int to_child[2], to_parent[2], result[2], status = 0;
	char mine[128], theirs[128] = "";
	pid_t pid;
	ssize_t n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pipe(to_child) || pipe(to_parent) || pipe(result)) {
		perror("pipe");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		close(result[0]);
		client(1, to_parent[1], to_child[0], mine, sizeof(mine));
		n = write(result[1], mine, strlen(mine));
		/* exit(), not _exit(): the isolation check runs at exit */
		exit(rt_failures || n < 0 ? 1 : 0);
	}
	close(result[1]);
	close(to_parent[1]);
	client(0, to_child[1], to_parent[0], mine, sizeof(mine));
	n = read(result[0], theirs, sizeof(theirs) - 1);
	theirs[n > 0 ? n : 0] = '\0';
	waitpid(pid, &status, 0);
	printf("%s%s", mine, theirs[0] ? theirs : "client 1: no result\n");
	RT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "client 1 status %#x", status);
	return rt_done();
}
