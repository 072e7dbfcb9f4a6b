// SPDX-License-Identifier: MIT
/*
 * fuzz-sqe: SQEs through axond's dispatcher (dispatch.c: check_sqe,
 * issue_one, then every handler in ops/) on the in-process sim daemon.
 *
 * For each input a fresh client gets a pool of real objects through real
 * SQEs (a context and its default stream, a second stream, two events, two
 * allocations, a module with a kernel the sim runs, its function, a VMM
 * handle, a captured graph and its exec), then the input's records:
 *
 *   sel (1 byte), then 64 bytes:
 *   sel 0xff   data: bytes 0-1 a data-area offset, bytes 8-63 written there
 *              (kernel arguments, launch payloads, names, images)
 *   sel 0xfc   data: bytes 0-1 a data-area offset, where pool[byte 2 %
 *              POOL] plus the 32-bit bytes 4-7 is written (a pointer or a
 *              handle in kernel arguments or a request's payload)
 *   sel 0xfe   settle: run the dispatcher and the executor until idle
 *   sel 0xfd   end the client now, work and all (the rest is ignored)
 *   otherwise  an SQE; bits of sel patch it before it is submitted:
 *     0x01     stream = pool[stream % POOL]
 *     0x02..0x10  raw[0..3] = pool[raw[i] % POOL]
 *     0x20     user_data = user_data % 4 (so a HOST_FUNC DONE can name a
 *              WAIT: the pool holds 1..3)
 *     0x40     pass the generic checks: opcode below AXON_OP_LAST, known
 *              flags, reserved fields and the op's unused words zero, no
 *              stream for an op without one, DEFERRED only where allowed
 *
 * so every handler sees hostile arguments with valid handles mixed in. The
 * client is then disconnected and must be freed (no leak, no hang). A
 * second client, made once, holds an allocation with a known pattern; no
 * input may change it (its window is another mapping: a translation gone
 * wrong could reach it).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>

#include <axon/libaxon.h>
#include "daemon.h"
#include "ops/ops.h"
#include "sim.h"

#define REC		65
#define POOL		32
#define OTHER_LEN	4096

/* A module for the pool: the sim runs fill (kernels.c); globals to mint. */
static const char ptx[] =
	".version 9.0\n.target sm_90\n.address_size 64\n"
	".global .align 4 .u32 g_counter;\n"
	".global .align 4 .b8 g_table[16] = {0, 0, 128, 63, 0, 0, 0, 64, 0, 0, 64, 64, 0, 0, 128, 64};\n"
	".const .align 4 .b8 c_coeffs[8] = {0, 0, 0, 63, 0, 0, 192, 63};\n"
	".visible .entry fill(\n\t.param .u64 fill_param_0,\n\t.param .f32 fill_param_1,\n"
	"\t.param .u32 fill_param_2\n)\n{\n\tret;\n}\n"
	".visible .entry nop()\n{\n\tret;\n}\n";

static struct client *other;
static uint64_t other_addr;

static void die(const char *what, int32_t res)
{
	fprintf(stderr, "fuzz-sqe: %s (%d)\n", what, (int)res);
	abort();
}

/* Puts sqe in c's SQ, making room first if the ring is full. */
static void submit(struct axond *d, struct client *c, const struct axon_sqe *sqe)
{
	uint32_t tail = c->cpage->sq_tail;

	if (tail - c->sq_head >= c->sq_entries) {
		fuzz_settle(d, c, NULL, 0);
		if (c->dead || tail - c->sq_head >= c->sq_entries)
			return;	/* stuck behind its own host functions: drop */
	}
	memcpy((struct axon_sqe *)&c->sqes[tail & c->sq_mask], sqe, sizeof(*sqe));
	axon_store_release(&c->cpage->sq_tail, tail + 1);
}

/* One synchronous call of the set-up; it must succeed. */
static struct axon_cqe call(struct axond *d, struct client *c, struct axon_sqe sqe)
{
	static uint64_t seq = 1000;
	uint64_t deadline = axond_now_ns() + 10ULL * 1000 * 1000 * 1000;
	struct axon_cqe cqes[8];
	unsigned int n, i;

	sqe.user_data = ++seq;
	submit(d, c, &sqe);
	while (axond_now_ns() < deadline) {
		n = fuzz_settle(d, c, cqes, 8);
		for (i = 0; i < n && i < 8; i++) {
			if (cqes[i].user_data != sqe.user_data)
				continue;
			if (cqes[i].res)
				die("a set-up call failed", cqes[i].res);
			return cqes[i];
		}
	}
	die("a set-up call never completed", sqe.opcode);
	return cqes[0];
}

static struct axon_sqe op(uint8_t opcode)
{
	struct axon_sqe s = { .opcode = opcode };

	return s;
}

static void other_client(struct axond *d)
{
	struct axon_welcome w;
	struct axon_sqe s;
	struct axon_cqe e;

	other = fuzz_client_new(d, &w);
	if (!other)
		die(w.message, w.status);
	s = op(AXON_OP_CTX_CREATE);
	e = call(d, other, s);
	s = op(AXON_OP_MEM_MAP);
	s.mem.ctx = e.aux[0];
	s.mem.addr = other_addr = other->params.va_base;
	s.mem.len = OTHER_LEN;
	call(d, other, s);
	memset(sim_host_ptr(other, other_addr), 0xa5, OTHER_LEN);
}

static void other_check(void)
{
	const unsigned char *p = sim_host_ptr(other, other_addr);
	unsigned int i;

	for (i = 0; i < OTHER_LEN; i++)
		if (p[i] != 0xa5)
			die("another client's memory changed", (int32_t)i);
}

/* The pool: handles and addresses the input's SQEs may name. */
static unsigned int make_pool(struct axond *d, struct client *c, uint64_t *pool)
{
	const uint64_t base = c->params.va_base;
	uint64_t ctx, gran = d->info->device[0].vmm_granularity;
	struct axon_sqe s;
	struct axon_cqe e;
	unsigned int n = 0;

	pool[n++] = 0;
	pool[n++] = 1;
	pool[n++] = 2;
	pool[n++] = 3;
	s = op(AXON_OP_CTX_CREATE);
	e = call(d, c, s);
	pool[n++] = ctx = e.aux[0];
	pool[n++] = e.aux[1];			/* its default stream */
	s = op(AXON_OP_STREAM_CREATE);
	s.obj.handle = ctx;
	pool[n++] = call(d, c, s).aux[0];
	s = op(AXON_OP_EVENT_CREATE);
	s.obj.handle = ctx;
	pool[n++] = call(d, c, s).aux[0];
	pool[n++] = call(d, c, s).aux[0];
	/* Two allocations; addresses inside, at and past their ends. */
	s = op(AXON_OP_MEM_MAP);
	s.mem.ctx = ctx;
	s.mem.addr = base;
	s.mem.len = 1 << 20;
	call(d, c, s);
	s.mem.addr = base + (2 << 20);
	s.mem.len = 64 << 10;
	call(d, c, s);
	pool[n++] = base;
	pool[n++] = base + 256;
	pool[n++] = base + (1 << 20) - 256;
	pool[n++] = base + (1 << 20);
	pool[n++] = base + (2 << 20);
	pool[n++] = base + (2 << 20) + (64 << 10);
	pool[n++] = other_addr;			/* another client's */
	/* The module and its function, the names in the data area. */
	memcpy(c->data, ptx, sizeof(ptx));
	s = op(AXON_OP_MODULE_LOAD);
	s.obj.handle = ctx;
	s.obj.data_len = sizeof(ptx);
	pool[n++] = s.obj.handle = call(d, c, s).aux[0];
	s.opcode = AXON_OP_MODULE_GET_FUNC;
	strcpy((char *)c->data, "fill");
	s.obj.data_len = sizeof(struct axon_func_info);
	pool[n++] = call(d, c, s).aux[0];
	/* Physical memory (cuMemCreate). */
	s = op(AXON_OP_MEM_CREATE);
	s.obj.arg0 = gran;
	pool[n++] = call(d, c, s).aux[0];
	pool[n++] = gran;
	/* A graph of one memset, captured on the second stream. */
	s = op(AXON_OP_CAPTURE_BEGIN);
	s.stream = pool[6];
	pool[n++] = e.aux[0] = call(d, c, s).aux[0];
	s = op(AXON_OP_MEMSET);
	s.stream = pool[6];
	s.memset.dst = base;
	s.memset.width = 64;
	s.memset.height = 1;
	s.memset.pitch = 64;
	s.memset.elem_size = 1;
	call(d, c, s);
	s = op(AXON_OP_CAPTURE_END);
	s.stream = pool[6];
	s.obj.handle = e.aux[0];
	call(d, c, s);
	s = op(AXON_OP_GRAPH_INSTANTIATE);
	s.obj.handle = e.aux[0];
	pool[n++] = call(d, c, s).aux[0];
	pool[n++] = c->params.data_size;
	pool[n++] = ~0ULL;
	return n;
}

/*
 * The sim runs a kernel by walking every thread of its grid on the host,
 * twice (sim/kernels.c; up to 2^28 threads: minutes under ASan), which is
 * the simulated device's time, not a finding, and would read as a hang. A
 * launch the daemon would take (every dimension within the device's
 * limits) of more than MAX_THREADS threads runs one block instead; other
 * geometries are left for the dispatcher to refuse.
 */
#define MAX_THREADS	(1U << 14)

static void tame_grid(const struct axond *d, uint32_t grid[3], const uint32_t block[3])
{
	const int32_t *attr = d->info->device[0].attr;
	uint64_t n = 1;
	int i;

	for (i = 0; i < 3; i++) {
		if (!grid[i] || !block[i] ||
		    grid[i] > (uint32_t)attr[CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + i] ||
		    block[i] > (uint32_t)attr[CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + i])
			return;
		n *= (uint64_t)grid[i] * block[i];
	}
	if (n > MAX_THREADS)
		grid[0] = grid[1] = grid[2] = 1;
}

static void tame_launch(const struct axond *d, struct client *c, struct axon_sqe *s)
{
	struct axon_launch_ex hdr;

	if (s->opcode == AXON_OP_LAUNCH)
		tame_grid(d, s->launch.grid, s->launch.block);
	if (s->opcode != AXON_OP_LAUNCH_EX ||
	    s->obj.data_off > c->params.data_size - sizeof(hdr))
		return;
	/* Its geometry is in the data area (read when the SQE is taken). */
	memcpy(&hdr, c->data + s->obj.data_off, sizeof(hdr));
	tame_grid(d, hdr.grid, hdr.block);
	memcpy(c->data + s->obj.data_off, &hdr, sizeof(hdr));
}

/* sel 0x40: what check_sqe asks of every SQE. */
static void pass_generic(struct axon_sqe *s)
{
	const struct op_def *def;
	int i;

	s->opcode %= AXON_OP_LAST;
	def = &op_table[s->opcode];
	s->flags &= AXON_SQE_F_ALL;
	if (!(def->flags & OPF_DEFERRABLE))
		s->flags &= ~AXON_SQE_F_DEFERRED;
	s->resv0 = 0;
	s->resv1 = 0;
	if (!(def->flags & (OPF_STREAM | OPF_NAMES_STREAM)))
		s->stream = 0;
	for (i = 0; i < 5; i++)
		if (def->zero & W(i))
			s->raw[i] = 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct axond *d = fuzz_daemon();
	uint64_t pool[POOL];
	struct axon_welcome w;
	struct client *c;
	unsigned int npool, i;
	size_t off;

	if (!other)
		other_client(d);
	c = fuzz_client_new(d, &w);
	if (!c)
		die(w.message, w.status);
	npool = make_pool(d, c, pool);
	if (npool > POOL)
		die("pool overflow", (int32_t)npool);
	for (off = 0; off + REC <= size && !c->dead; off += REC) {
		uint8_t sel = data[off];
		struct axon_sqe s;

		memcpy(&s, data + off + 1, sizeof(s));
		if (sel == 0xff) {
			uint16_t at;

			memcpy(&at, data + off + 1, sizeof(at));
			at %= (uint16_t)(c->params.data_size - 56);
			memcpy(c->data + at, data + off + 9, 56);
			continue;
		}
		if (sel == 0xfc) {
			uint16_t at;
			uint32_t add;
			uint64_t v;

			memcpy(&at, data + off + 1, sizeof(at));
			memcpy(&add, data + off + 5, sizeof(add));
			at %= (uint16_t)(c->params.data_size - 8);
			v = pool[data[off + 3] % npool] + add;
			memcpy(c->data + at, &v, sizeof(v));
			continue;
		}
		if (sel == 0xfe) {
			fuzz_settle(d, c, NULL, 0);
			continue;
		}
		if (sel == 0xfd)
			break;
		if (sel & 0x40)
			pass_generic(&s);
		if (sel & 0x01)
			s.stream = pool[s.stream % npool];
		for (i = 0; i < 4; i++)
			if (sel & (0x02 << i))
				s.raw[i] = pool[s.raw[i] % npool];
		if (sel & 0x20)
			s.user_data %= 4;
		tame_launch(d, c, &s);
		submit(d, c, &s);
	}
	if (off + REC > size || c->dead || data[off] != 0xfd)
		fuzz_settle(d, c, NULL, 0);
	fuzz_client_end(d, c);
	other_check();
	return 0;
}
