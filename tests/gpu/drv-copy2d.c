// SPDX-License-Identifier: MIT
/*
 * 2D and 3D copies, peer copies and 2D memsets through the driver API only,
 * in a form that runs unchanged natively and through axon and prints the
 * same transcript on stdout both ways (the device name goes to stderr).
 * Every check is byte for byte against a host reference of each buffer,
 * the whole buffer each time, so that a copy writing outside its rectangle
 * is caught too:
 *
 *   1. 2D memsets, 8/16/32-bit, sync and async, the per-thread forms
 *      (cuGetProcAddress with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
 *   2. cuMemcpy2D host to device, device to device, device to host and host
 *      to host, between pitched allocations (cuMemAllocPitch) and host
 *      buffers with other pitches, with X/Y offsets on both sides, from
 *      pageable and pinned (cuMemAllocHost) memory, in the sync, async,
 *      unaligned and per-thread forms, for shapes of many rows, one row, one
 *      column and one larger than the staging chunks; zero extents copy
 *      nothing; a pitch below the width is INVALID_VALUE;
 *   3. cuMemcpy3D with X/Y/Z offsets, slices apart and slices contiguous,
 *      a mipmap level for linear memory (ignored, as the H200's driver
 *      does); cuMemcpy3DPeer;
 *   4. async ordering on a stream: memset, upload, device copy, download
 *      queued back to back, the pageable source rewritten right after its
 *      async upload returned;
 *   5. a capture of 2D copies (device to device, from and to pinned memory,
 *      to pageable memory) and a 2D memset, replayed twice with new host
 *      data in between;
 *   6. cuMemcpyPeer / cuMemcpyPeerAsync within one context, and with a
 *      NULL context (the H200's driver takes it as the current one).
 *
 * Usage: drv-copy2d [--hold]. With --hold (tests/integration/
 * test-copy2d.c) it only copies one 1000-row rectangle each way, prints
 * "held" and waits for SIGUSR1, so that the daemon's op counts can be read
 * while it is connected. Exit 0 when every check passed; a mismatch or an
 * unexpected failure exits 1 with the line that says why.
 */
#include <cuda.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drv-gpu.h"

#define FAIL(...)							\
	do {								\
		printf("FAIL %s:%d ", __FILE__, __LINE__);		\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		exit(1);						\
	} while (0)

/* Device buffers: a pitched allocation and its host reference. */
#define DW	5100	/* widest row */
#define DROWS	3010

struct dbuf {
	CUdeviceptr d;
	size_t pitch, bytes;
	unsigned char *ref;
};

/* A host buffer (pageable or pinned) and what it must hold. */
struct hbuf {
	unsigned char *p, *ref;
	size_t pitch, bytes;
	bool pinned;
};

static unsigned char *scratch;	/* DROWS * pitch, for read-backs */

static unsigned char pat(size_t i, unsigned int seed)
{
	return (unsigned char)((i * 2654435761u) >> 13 ^ seed * 97);
}

static void dbuf_init(struct dbuf *b, unsigned char fill)
{
	CK(cuMemAllocPitch(&b->d, &b->pitch, DW, DROWS, 4));
	b->bytes = b->pitch * DROWS;
	b->ref = malloc(b->bytes);
	if (!b->ref)
		FAIL("out of memory");
	memset(b->ref, fill, b->bytes);
	CK(cuMemsetD8(b->d, fill, b->bytes));
}

static void dbuf_check(const struct dbuf *b, const char *what)
{
	size_t i;

	CK(cuMemcpyDtoH(scratch, b->d, b->bytes));
	for (i = 0; i < b->bytes; i++)
		if (scratch[i] != b->ref[i])
			FAIL("%s: device byte %zu (row %zu col %zu) is %#x, want %#x", what, i,
			     i / b->pitch, i % b->pitch, scratch[i], b->ref[i]);
}

static void hbuf_init(struct hbuf *h, size_t pitch, size_t rows, bool pinned, unsigned int seed)
{
	size_t i;

	h->pitch = pitch;
	h->bytes = pitch * rows;
	h->pinned = pinned;
	if (pinned)
		CK(cuMemAllocHost((void **)&h->p, h->bytes));
	else
		h->p = malloc(h->bytes);
	h->ref = malloc(h->bytes);
	if (!h->p || !h->ref)
		FAIL("out of memory");
	for (i = 0; i < h->bytes; i++)
		h->p[i] = h->ref[i] = pat(i, seed);
}

static void hbuf_free(struct hbuf *h)
{
	if (h->pinned)
		CK(cuMemFreeHost(h->p));
	else
		free(h->p);
	free(h->ref);
}

static void hbuf_check(const struct hbuf *h, const char *what)
{
	size_t i;

	for (i = 0; i < h->bytes; i++)
		if (h->p[i] != h->ref[i])
			FAIL("%s: host byte %zu (row %zu col %zu) is %#x, want %#x", what, i,
			     i / h->pitch, i % h->pitch, h->p[i], h->ref[i]);
}

/* The reference of a copy: rows of w bytes at (x, y) of pitched memory. */
static void ref_copy(unsigned char *dst, size_t dp, size_t dx, size_t dy,
		     const unsigned char *src, size_t sp, size_t sx, size_t sy, size_t w, size_t h)
{
	size_t k;

	for (k = 0; k < h; k++)
		memmove(dst + (dy + k) * dp + dx, src + (sy + k) * sp + sx, w);
}

/* The per-thread-default-stream forms, as cudart gets them. */
typedef CUresult (*memcpy2d_fn)(const CUDA_MEMCPY2D *);
typedef CUresult (*memcpy2d_async_fn)(const CUDA_MEMCPY2D *, CUstream);
typedef CUresult (*memset2d8_fn)(CUdeviceptr, size_t, unsigned char, size_t, size_t);
typedef CUresult (*memset2d8_async_fn)(CUdeviceptr, size_t, unsigned char, size_t, size_t,
				       CUstream);
static memcpy2d_fn pt_memcpy2d;
static memcpy2d_async_fn pt_memcpy2d_async;
static memset2d8_fn pt_memset2d8;
static memset2d8_async_fn pt_memset2d8_async;

static void *per_thread(const char *name)
{
	CUdriverProcAddressQueryResult q;
	void *fn = NULL;

	CK(cuGetProcAddress(name, &fn, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q));
	if (!fn)
		FAIL("cuGetProcAddress(%s): no function", name);
	return fn;
}

enum form { SYNC, ASYNC, UNALIGNED, PER_THREAD, PER_THREAD_ASYNC };
static const char *const form_name[] = { "sync", "async", "unaligned", "ptds", "ptsz" };

static CUstream strm;

static CUresult run2d(const CUDA_MEMCPY2D *c, enum form f)
{
	CUresult r;

	switch (f) {
	case SYNC:
		return cuMemcpy2D(c);
	case UNALIGNED:
		return cuMemcpy2DUnaligned(c);
	case PER_THREAD:
		return pt_memcpy2d(c);
	case ASYNC:
		r = cuMemcpy2DAsync(c, strm);
		return r ? r : cuStreamSynchronize(strm);
	default:
		r = pt_memcpy2d_async(c, strm);
		return r ? r : cuStreamSynchronize(strm);
	}
}

static CUDA_MEMCPY2D host_side(CUDA_MEMCPY2D c, bool dst, struct hbuf *h, size_t x, size_t y)
{
	if (dst) {
		c.dstMemoryType = CU_MEMORYTYPE_HOST;
		c.dstHost = h->p;
		c.dstPitch = h->pitch;
		c.dstXInBytes = x;
		c.dstY = y;
	} else {
		c.srcMemoryType = CU_MEMORYTYPE_HOST;
		c.srcHost = h->p;
		c.srcPitch = h->pitch;
		c.srcXInBytes = x;
		c.srcY = y;
	}
	return c;
}

static CUDA_MEMCPY2D dev_side(CUDA_MEMCPY2D c, bool dst, struct dbuf *b, size_t x, size_t y,
			      bool unified)
{
	CUmemorytype t = unified ? CU_MEMORYTYPE_UNIFIED : CU_MEMORYTYPE_DEVICE;

	if (dst) {
		c.dstMemoryType = t;
		c.dstDevice = b->d;
		c.dstPitch = b->pitch;
		c.dstXInBytes = x;
		c.dstY = y;
	} else {
		c.srcMemoryType = t;
		c.srcDevice = b->d;
		c.srcPitch = b->pitch;
		c.srcXInBytes = x;
		c.srcY = y;
	}
	return c;
}

struct shape {
	const char *name;
	size_t w, h, sx, sy, dx, dy;
};

/* HtoD, DtoD, DtoH and HtoH of one shape in one form. */
static void copies(const struct shape *s, enum form f, bool pinned, struct dbuf *a,
		   struct dbuf *b, unsigned int seed)
{
	size_t hp = s->w + s->sx + 61, rows = s->h + s->sy + 2;
	CUDA_MEMCPY2D c = { .WidthInBytes = s->w, .Height = s->h };
	struct hbuf src, dst, hh;
	char what[128];

	hbuf_init(&src, hp, rows, pinned, seed);
	hbuf_init(&dst, hp + 3, rows + 1, pinned, seed + 1);
	hbuf_init(&hh, hp + 5, rows, false, seed + 2);
	snprintf(what, sizeof(what), "%s %s %s", s->name, form_name[f],
		 pinned ? "pinned" : "pageable");

	/* host -> a at (dx, dy) */
	CK(run2d((CUDA_MEMCPY2D[]){ dev_side(host_side(c, false, &src, s->sx, s->sy), true, a,
					     s->dx, s->dy, f == UNALIGNED) }, f));
	ref_copy(a->ref, a->pitch, s->dx, s->dy, src.ref, src.pitch, s->sx, s->sy, s->w, s->h);
	dbuf_check(a, what);
	/* a -> b, rows moved by one, columns by two */
	CK(run2d((CUDA_MEMCPY2D[]){ dev_side(dev_side(c, false, a, s->dx, s->dy, false), true, b,
					     s->dx + 2, s->dy + 1, f == ASYNC) }, f));
	ref_copy(b->ref, b->pitch, s->dx + 2, s->dy + 1, a->ref, a->pitch, s->dx, s->dy, s->w,
		 s->h);
	dbuf_check(b, what);
	/* b -> host at (1, 1) */
	CK(run2d((CUDA_MEMCPY2D[]){ host_side(dev_side(c, false, b, s->dx + 2, s->dy + 1, false),
					      true, &dst, 1, 1) }, f));
	ref_copy(dst.ref, dst.pitch, 1, 1, b->ref, b->pitch, s->dx + 2, s->dy + 1, s->w, s->h);
	hbuf_check(&dst, what);
	/* host -> host */
	CK(run2d((CUDA_MEMCPY2D[]){ host_side(host_side(c, false, &src, s->sx, s->sy), true, &hh,
					      0, 1) }, f));
	ref_copy(hh.ref, hh.pitch, 0, 1, src.ref, src.pitch, s->sx, s->sy, s->w, s->h);
	hbuf_check(&hh, what);
	hbuf_free(&src);
	hbuf_free(&dst);
	hbuf_free(&hh);
}

static void memsets(struct dbuf *a)
{
	size_t k, i;

	CK(cuMemsetD2D8(a->d + 3 * a->pitch + 5, a->pitch, 0x5a, 300, 37));
	for (k = 0; k < 37; k++)
		memset(a->ref + (3 + k) * a->pitch + 5, 0x5a, 300);
	CK(cuMemsetD2D8Async(a->d + 50 * a->pitch + 1, a->pitch, 0xc3, 77, 9, strm));
	for (k = 0; k < 9; k++)
		memset(a->ref + (50 + k) * a->pitch + 1, 0xc3, 77);
	CK(cuMemsetD2D16Async(a->d + 70 * a->pitch + 2, a->pitch, 0xbeef, 40, 5, strm));
	CK(cuMemsetD2D32Async(a->d + 80 * a->pitch + 4, a->pitch, 0x01020304u, 33, 4, strm));
	for (k = 0; k < 5; k++)
		for (i = 0; i < 40; i++)
			memcpy(a->ref + (70 + k) * a->pitch + 2 + 2 * i, &(uint16_t){ 0xbeef }, 2);
	for (k = 0; k < 4; k++)
		for (i = 0; i < 33; i++)
			memcpy(a->ref + (80 + k) * a->pitch + 4 + 4 * i, &(uint32_t){ 0x01020304u },
			       4);
	CK(pt_memset2d8(a->d + 90 * a->pitch, a->pitch, 0x11, 1, 20));
	CK(pt_memset2d8_async(a->d + 120 * a->pitch + 7, a->pitch, 0x22, 64, 3, NULL));
	CK(cuStreamSynchronize(strm));
	CK(cuCtxSynchronize());
	for (k = 0; k < 20; k++)
		a->ref[(90 + k) * a->pitch] = 0x11;
	for (k = 0; k < 3; k++)
		memset(a->ref + (120 + k) * a->pitch + 7, 0x22, 64);
	dbuf_check(a, "memsets");
	printf("2D memsets, 8/16/32-bit, sync, async, per-thread: OK\n");
}

static void edge_cases(struct dbuf *a)
{
	CUDA_MEMCPY2D c = { .WidthInBytes = 64, .Height = 2 };
	struct hbuf h;
	CUresult r1, r2;

	hbuf_init(&h, 128, 4, false, 7);
	/* Zero extents: nothing copied, success. */
	c.WidthInBytes = 0;
	CK(cuMemcpy2D((CUDA_MEMCPY2D[]){ dev_side(host_side(c, false, &h, 0, 0), true, a, 0, 0,
						  false) }));
	c.WidthInBytes = 64;
	c.Height = 0;
	CK(cuMemcpy2DAsync((CUDA_MEMCPY2D[]){ dev_side(host_side(c, false, &h, 0, 0), true, a, 0,
						       0, false) }, strm));
	CK(cuStreamSynchronize(strm));
	dbuf_check(a, "zero extents");
	printf("zero width, zero height: CUDA_SUCCESS, nothing copied\n");
	/* A pitch below the width. */
	c.Height = 2;
	c = dev_side(host_side(c, false, &h, 0, 0), true, a, 0, 0, false);
	c.srcPitch = 63;
	r1 = cuMemcpy2D(&c);
	c.srcPitch = 128;
	c.dstPitch = 32;
	r2 = cuMemcpy2DAsync(&c, strm);
	printf("source pitch < width: %s; destination pitch < width (async): %s\n", ename(r1),
	       ename(r2));
	CK(cuStreamSynchronize(strm));
	dbuf_check(a, "bad pitches");
	hbuf_free(&h);
}

/* 3D: a host volume into a's slices, a's into b's (contiguous), b's out. */
static void copies_3d(struct dbuf *a, struct dbuf *b, bool pinned, CUcontext ctx)
{
	const size_t W = 50, H = 11, D = 5, SH = 13, DH = 40, hp = 70;
	CUDA_MEMCPY3D c = { .WidthInBytes = W, .Height = H, .Depth = D };
	CUDA_MEMCPY3D_PEER pc = { 0 };
	struct hbuf src, dst;
	size_t z;

	hbuf_init(&src, hp, SH * (D + 2), pinned, 21);
	hbuf_init(&dst, hp, DH * 4, pinned, 22);
	c.srcMemoryType = CU_MEMORYTYPE_HOST;
	c.srcHost = src.p;
	c.srcPitch = hp;
	c.srcHeight = SH;
	c.srcXInBytes = 2;
	c.srcY = 1;
	c.srcZ = 1;
	c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c.dstDevice = a->d;
	c.dstPitch = a->pitch;
	c.dstHeight = DH;
	c.dstXInBytes = 3;
	c.dstY = 4;
	c.dstZ = 2;
	CK(cuMemcpy3D(&c));
	for (z = 0; z < D; z++)
		ref_copy(a->ref, a->pitch, 3, (2 + z) * DH + 4, src.ref, hp, 2, (1 + z) * SH + 1, W,
			 H);
	dbuf_check(a, "3D host to device");
	/* Whole slices, contiguous on both sides: rows of all of them. */
	memset(&c, 0, sizeof(c));
	c.WidthInBytes = 200;
	c.Height = DH;
	c.Depth = 3;
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = a->d;
	c.srcPitch = a->pitch;
	c.srcHeight = DH;
	c.srcZ = 2;
	c.dstMemoryType = CU_MEMORYTYPE_UNIFIED;
	c.dstDevice = b->d;
	c.dstPitch = b->pitch;
	c.dstHeight = DH;
	c.dstXInBytes = 9;
	CK(cuMemcpy3DAsync(&c, strm));
	CK(cuStreamSynchronize(strm));
	ref_copy(b->ref, b->pitch, 9, 0, a->ref, a->pitch, 0, 2 * DH, 200, 3 * DH);
	dbuf_check(b, "3D device to device");
	/* b's slices 1 and 2, 7 rows each from row 3, out to the host. */
	memset(&c, 0, sizeof(c));
	c.WidthInBytes = 60;
	c.Height = 7;
	c.Depth = 2;
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = b->d;
	c.srcPitch = b->pitch;
	c.srcHeight = DH;
	c.srcY = 3;
	c.srcZ = 1;
	c.srcXInBytes = 9;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = dst.p;
	c.dstPitch = hp;
	c.dstHeight = DH;
	c.dstZ = 1;
	CK(cuMemcpy3D(&c));
	for (z = 0; z < 2; z++)
		ref_copy(dst.ref, hp, 0, (1 + z) * DH, b->ref, b->pitch, 9, (1 + z) * DH + 3, 60, 7);
	hbuf_check(&dst, "3D device to host");
	c.srcLOD = 1;
	printf("3D %s: host to device, device to device, device to host OK; srcLOD 1: %s\n",
	       pinned ? "pinned" : "pageable", ename(cuMemcpy3D(&c)));
	/* The peer form, both contexts the current one. */
	pc.WidthInBytes = 30;
	pc.Height = 4;
	pc.Depth = 2;
	pc.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	pc.srcDevice = a->d;
	pc.srcPitch = a->pitch;
	pc.srcHeight = DH;
	pc.srcContext = ctx;
	pc.srcZ = 2;
	pc.srcY = 4;
	pc.srcXInBytes = 3;
	pc.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	pc.dstDevice = b->d;
	pc.dstPitch = b->pitch;
	pc.dstHeight = DH;
	pc.dstContext = ctx;
	pc.dstZ = 10;
	CK(cuMemcpy3DPeer(&pc));
	for (z = 0; z < 2; z++)
		ref_copy(b->ref, b->pitch, 0, (10 + z) * DH, a->ref, a->pitch, 3, (2 + z) * DH + 4,
			 30, 4);
	pc.dstZ = 20;
	CK(cuMemcpy3DPeerAsync(&pc, strm));
	CK(cuStreamSynchronize(strm));
	for (z = 0; z < 2; z++)
		ref_copy(b->ref, b->pitch, 0, (20 + z) * DH, a->ref, a->pitch, 3, (2 + z) * DH + 4,
			 30, 4);
	dbuf_check(b, "3D peer");
	hbuf_free(&src);
	hbuf_free(&dst);
}

/* Async work queued back to back on one stream sees the work before it. */
static void ordering(struct dbuf *a, struct dbuf *b)
{
	const size_t W = 333, H = 45;
	CUDA_MEMCPY2D c = { .WidthInBytes = W, .Height = H };
	struct hbuf page, pin;
	size_t k;

	hbuf_init(&page, 400, H, false, 31);
	hbuf_init(&pin, 512, H, true, 32);
	CK(cuMemsetD2D8Async(a->d, a->pitch, 0x77, W + 10, H + 2, strm));
	for (k = 0; k < H + 2; k++)
		memset(a->ref + k * a->pitch, 0x77, W + 10);
	CK(cuMemcpy2DAsync((CUDA_MEMCPY2D[]){ dev_side(host_side(c, false, &page, 0, 0), true, a,
						       5, 1, false) }, strm));
	ref_copy(a->ref, a->pitch, 5, 1, page.ref, page.pitch, 0, 0, W, H);
	/* The async upload of pageable memory has taken its bytes. */
	memset(page.p, 0xee, page.bytes);
	CK(cuMemcpy2DAsync((CUDA_MEMCPY2D[]){ dev_side(dev_side(c, false, a, 0, 0, false), true, b,
						       0, 0, false) }, strm));
	ref_copy(b->ref, b->pitch, 0, 0, a->ref, a->pitch, 0, 0, W, H);
	CK(cuMemcpy2DAsync((CUDA_MEMCPY2D[]){ host_side(dev_side(c, false, b, 0, 0, false), true,
							&pin, 0, 0) }, strm));
	ref_copy(pin.ref, pin.pitch, 0, 0, b->ref, b->pitch, 0, 0, W, H);
	CK(cuStreamSynchronize(strm));
	hbuf_check(&pin, "ordering");
	dbuf_check(a, "ordering");
	dbuf_check(b, "ordering");
	printf("async memset, upload, device copy, download on one stream: OK\n");
	hbuf_free(&page);
	hbuf_free(&pin);
}

/* 2D copies in a capture, replayed twice with new host data between. */
static void captured(struct dbuf *a, struct dbuf *b)
{
	const size_t W = 129, H = 17;
	CUDA_MEMCPY2D c = { .WidthInBytes = W, .Height = H };
	struct hbuf in, out, page;
	CUgraphExec x;
	CUstream cs;
	CUgraph g;
	size_t n, i, round;

	hbuf_init(&in, 160, H, true, 41);
	hbuf_init(&out, 200, H, true, 42);
	hbuf_init(&page, 150, H, false, 43);
	CK(cuStreamCreate(&cs, CU_STREAM_NON_BLOCKING));
	CK(cuStreamBeginCapture(cs, CU_STREAM_CAPTURE_MODE_RELAXED));
	CK(cuMemsetD2D8Async(a->d + 200 * a->pitch, a->pitch, 0x99, W + 4, H, cs));
	CK(cuMemcpy2DAsync((CUDA_MEMCPY2D[]){ dev_side(host_side(c, false, &in, 0, 0), true, a,
						       2, 200, false) }, cs));
	CK(cuMemcpy2DAsync((CUDA_MEMCPY2D[]){ dev_side(dev_side(c, false, a, 2, 200, false), true,
						       b, 1, 300, false) }, cs));
	CK(cuMemcpy2DAsync((CUDA_MEMCPY2D[]){ host_side(dev_side(c, false, b, 1, 300, false), true,
							&out, 3, 0) }, cs));
	CK(cuMemcpy2DAsync((CUDA_MEMCPY2D[]){ host_side(dev_side(c, false, a, 2, 200, false), true,
							&page, 0, 0) }, cs));
	CK(cuStreamEndCapture(cs, &g));
	CK(cuGraphGetNodes(g, NULL, &n));
	CK(cuGraphInstantiate(&x, g, 0));
	for (round = 0; round < 2; round++) {
		for (i = 0; i < in.bytes; i++)
			in.p[i] = in.ref[i] = pat(i, 50 + (unsigned int)round);
		for (i = 0; i < H; i++)
			memset(a->ref + (200 + i) * a->pitch, 0x99, W + 4);
		ref_copy(a->ref, a->pitch, 2, 200, in.ref, in.pitch, 0, 0, W, H);
		ref_copy(b->ref, b->pitch, 1, 300, a->ref, a->pitch, 2, 200, W, H);
		ref_copy(out.ref, out.pitch, 3, 0, b->ref, b->pitch, 1, 300, W, H);
		ref_copy(page.ref, page.pitch, 0, 0, a->ref, a->pitch, 2, 200, W, H);
		CK(cuGraphLaunch(x, cs));
		CK(cuStreamSynchronize(cs));
		hbuf_check(&out, "captured, pinned out");
		hbuf_check(&page, "captured, pageable out");
		dbuf_check(a, "captured");
		dbuf_check(b, "captured");
	}
	printf("capture of 2D copies and a 2D memset: %s nodes, 2 replays OK\n",
	       n >= 5 ? "at least 5" : "fewer than 5");
	CK(cuGraphExecDestroy(x));
	CK(cuGraphDestroy(g));
	CK(cuStreamDestroy(cs));
	hbuf_free(&in);
	hbuf_free(&out);
	hbuf_free(&page);
}

static void peers(struct dbuf *a, struct dbuf *b, CUcontext ctx)
{
	CUresult r;

	CK(cuMemcpyPeer(b->d + 7, ctx, a->d + 3, ctx, 10000));
	memmove(b->ref + 7, a->ref + 3, 10000);
	CK(cuMemcpyPeerAsync(b->d + 20000, ctx, a->d, ctx, 5000, strm));
	CK(cuStreamSynchronize(strm));
	memmove(b->ref + 20000, a->ref, 5000);
	dbuf_check(b, "peer");
	/* The H200's driver accepts a NULL context; what it then copies is
	 * printed, for the native and axon transcripts to agree on. */
	r = cuMemcpyPeer(b->d, NULL, a->d, ctx, 16);
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(scratch, b->d, 16));
	printf("cuMemcpyPeer, cuMemcpyPeerAsync: OK; a NULL context: %s, %s\n",
	       r ? "rejected" : "accepted",
	       !memcmp(scratch, a->ref, 16) ? "copied" :
	       !memcmp(scratch, b->ref, 16) ? "nothing copied" : "other bytes written");
	memcpy(b->ref, scratch, 16);
	dbuf_check(b, "peer, NULL context");
}

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

/* One 1000-row rectangle each way, for the daemon's op counts. */
static void hold(struct dbuf *a, struct dbuf *b)
{
	CUDA_MEMCPY2D c = { .WidthInBytes = 300, .Height = 1000 };
	struct hbuf in, out;

	hbuf_init(&in, 301, 1000, false, 61);
	hbuf_init(&out, 303, 1000, false, 62);
	CK(cuMemcpy2D((CUDA_MEMCPY2D[]){ dev_side(host_side(c, false, &in, 0, 0), true, a, 0, 0,
						  false) }));
	CK(cuMemcpy2D((CUDA_MEMCPY2D[]){ dev_side(dev_side(c, false, a, 0, 0, false), true, b, 0,
						  0, false) }));
	CK(cuMemcpy2D((CUDA_MEMCPY2D[]){ host_side(dev_side(c, false, b, 0, 0, false), true, &out,
						   0, 0) }));
	ref_copy(out.ref, out.pitch, 0, 0, in.ref, in.pitch, 0, 0, 300, 1000);
	hbuf_check(&out, "1000 rows");
	signal(SIGUSR1, on_usr1);
	printf("held\n");
	fflush(stdout);
	while (!go)
		usleep(1000);
	hbuf_free(&in);
	hbuf_free(&out);
}

/* Everything but --hold, in the order of the top's list. */
static void all(struct dbuf *a, struct dbuf *b, CUcontext ctx)
{
	static const struct shape shapes[] = {
		{ "37 rows", 100, 37, 3, 2, 5, 1 },
		{ "one row", 5000, 1, 7, 0, 0, 3 },
		{ "one column", 1, 200, 0, 0, 9, 0 },
		{ "past the staging chunks", 4000, 3000, 1, 1, 0, 0 },
	};
	static const enum form forms[] = { SYNC, ASYNC, UNALIGNED, PER_THREAD, PER_THREAD_ASYNC };
	unsigned int i, j;

	memsets(a);
	for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		for (j = 0; j < sizeof(forms) / sizeof(forms[0]); j++) {
			copies(&shapes[i], forms[j], false, a, b, i * 10 + j);
			copies(&shapes[i], forms[j], true, a, b, i * 10 + j + 5);
		}
		printf("2D %s: host to device, device to device, device to host, host to host, "
		       "pageable and pinned, sync/async/unaligned/ptds/ptsz: OK\n", shapes[i].name);
	}
	edge_cases(a);
	copies_3d(a, b, false, ctx);
	copies_3d(a, b, true, ctx);
	ordering(a, b);
	captured(a, b);
	peers(a, b, ctx);
}

int main(int argc, char **argv)
{
	struct dbuf a, b;
	CUcontext ctx;
	CUdevice dev;
	char name[256];

	setvbuf(stdout, NULL, _IOLBF, 0);
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDeviceGetName(name, sizeof(name), dev));
	fprintf(stderr, "device: %s\n", name);
	CK(cuCtxCreate(&ctx, NULL, 0, dev));
	CK(cuStreamCreate(&strm, CU_STREAM_NON_BLOCKING));
	pt_memcpy2d = (memcpy2d_fn)per_thread("cuMemcpy2D");
	pt_memcpy2d_async = (memcpy2d_async_fn)per_thread("cuMemcpy2DAsync");
	pt_memset2d8 = (memset2d8_fn)per_thread("cuMemsetD2D8");
	pt_memset2d8_async = (memset2d8_async_fn)per_thread("cuMemsetD2D8Async");
	dbuf_init(&a, 0xa1);
	dbuf_init(&b, 0xb2);
	scratch = malloc(a.bytes > b.bytes ? a.bytes : b.bytes);
	if (!scratch)
		FAIL("out of memory");

	if (argc > 1 && !strcmp(argv[1], "--hold"))
		hold(&a, &b);
	else
		all(&a, &b, ctx);
	CK(cuMemFree(a.d));
	CK(cuMemFree(b.d));
	free(a.ref);
	free(b.ref);
	free(scratch);
	CK(cuStreamDestroy(strm));
	CK(cuCtxDestroy(ctx));
	printf("done\n");
	return 0;
}
