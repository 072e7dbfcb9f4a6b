// SPDX-License-Identifier: MIT
/*
 * trace.c - strace for one client: the records of AXON_HELLO_TRACE, one
 * line each.
 *
 *       TIME_US EVENT    OP(key args) [STREAM] [deferred] [= RESULT <LATENCY>]  #USER_DATA
 *      5223.270 SUBMIT   MEMSET(dst=0x101000000000, n=1024) strm0 deferred
 *      5284.466 SUBMIT   STREAM_SYNC() strm0  #7ffd1e0b6f70
 *     10066.083 COMPLETE STREAM_SYNC = CUDA_SUCCESS <4781.3 us>  #7ffd1e0b6f70
 *
 * TIME_US is microseconds since the first record. Arguments come from the
 * four raw SQE words the daemon copies into each SUBMIT record, decoded per
 * operation with the SQE union of uapi/axon/protocol.h (a memset's value and
 * element size, and a launch's shared memory, are in the fifth word, which
 * is not traced). Completions carry no arguments; #N (the SQE's user_data,
 * hex) pairs them with their submission.
 * Deferred operations that succeed have no completion.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <axon/libaxon.h>

#include "errors.h"	/* libcuda-shim: the generated CUresult table */
#include "top.h"

const char *top_curesult_name(int res, char *buf, size_t len)
{
	unsigned int lo = 0, hi = shim_nerrors;

	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (shim_errors[mid].code == res)
			return shim_errors[mid].name;
		if (shim_errors[mid].code < res)
			lo = mid + 1;
		else
			hi = mid;
	}
	snprintf(buf, len, "CUresult %d", res);
	return buf;
}

const char *top_handle(uint64_t h, char *buf, size_t len)
{
	static const char *const names[] = {
		[AXON_HANDLE_CTX] = "ctx", [AXON_HANDLE_STREAM] = "strm",
		[AXON_HANDLE_EVENT] = "ev", [AXON_HANDLE_MODULE] = "mod",
		[AXON_HANDLE_FUNC] = "fn",
	};
	unsigned int type = AXON_HANDLE_TYPE(h), gen = AXON_HANDLE_GEN(h);

	if (!h)
		snprintf(buf, len, "NULL");
	else if (type == AXON_HANDLE_NONE || type >= AXON_HANDLE_TYPE_LAST)
		snprintf(buf, len, "0x%llx", (unsigned long long)h);
	else if (gen == 1)
		snprintf(buf, len, "%s%u", names[type], AXON_HANDLE_INDEX(h));
	else
		snprintf(buf, len, "%s%u.g%u", names[type], AXON_HANDLE_INDEX(h), gen);
	return buf;
}

static void size_arg(uint64_t v, bool raw, char *buf, size_t len)
{
	if (raw || v < 1024)
		snprintf(buf, len, "%llu", (unsigned long long)v);
	else
		top_human_bytes(v, buf, len);
}

/* The decoded arguments of a SUBMIT record. */
static void args_text(const struct axon_trace_event *e, bool raw, char *buf, size_t len)
{
	struct axon_sqe q;
	char h1[40], h2[40], sz[32];

	memset(&q, 0, sizeof(q));
	memcpy(q.raw, e->args, sizeof(e->args));
	switch (e->opcode) {
	case AXON_OP_NOP:
	case AXON_OP_STREAM_SYNC:	/* its stream follows the arguments */
		buf[0] = 0;
		break;
	case AXON_OP_CTX_CREATE:
		snprintf(buf, len, "dev=%llu, flags=0x%llx",
			 (unsigned long long)q.obj.arg0, (unsigned long long)q.obj.arg1);
		break;
	case AXON_OP_CTX_DESTROY:
	case AXON_OP_CTX_SYNC:
	case AXON_OP_MODULE_UNLOAD:
	case AXON_OP_STREAM_DESTROY:
	case AXON_OP_EVENT_DESTROY:
	case AXON_OP_STREAM_WAIT_EVENT:
	case AXON_OP_EVENT_RECORD:
		snprintf(buf, len, "%s", top_handle(q.obj.handle, h1, sizeof(h1)));
		break;
	case AXON_OP_MEM_MAP:
		size_arg(q.mem.len, raw, sz, sizeof(sz));
		snprintf(buf, len, "%s, addr=0x%llx, len=%s",
			 top_handle(q.mem.ctx, h1, sizeof(h1)),
			 (unsigned long long)q.mem.addr, sz);
		break;
	case AXON_OP_MEM_UNMAP:
		snprintf(buf, len, "%s, addr=0x%llx", top_handle(q.mem.ctx, h1, sizeof(h1)),
			 (unsigned long long)q.mem.addr);
		break;
	case AXON_OP_MEM_GET_INFO:
		snprintf(buf, len, "dev=%llu", (unsigned long long)q.obj.arg0);
		break;
	case AXON_OP_MEMCPY_HTOD:
	case AXON_OP_MEMCPY_DTOH:
	case AXON_OP_MEMCPY_DTOD:
		/* The host side of a copy is an offset in the data area. */
		size_arg(q.copy.len, raw, sz, sizeof(sz));
		snprintf(buf, len, "dst=%s0x%llx, src=%s0x%llx, len=%s",
			 e->opcode == AXON_OP_MEMCPY_DTOH ? "data+" : "",
			 (unsigned long long)q.copy.dst,
			 e->opcode == AXON_OP_MEMCPY_HTOD ? "data+" : "",
			 (unsigned long long)q.copy.src, sz);
		break;
	case AXON_OP_MEMSET:
		/* value and element size are in the fifth word, not traced */
		if (q.memset.height <= 1)
			snprintf(buf, len, "dst=0x%llx, n=%llu",
				 (unsigned long long)q.memset.dst,
				 (unsigned long long)q.memset.width);
		else
			snprintf(buf, len, "dst=0x%llx, %llux%llu, pitch=%llu",
				 (unsigned long long)q.memset.dst,
				 (unsigned long long)q.memset.width,
				 (unsigned long long)q.memset.height,
				 (unsigned long long)q.memset.pitch);
		break;
	case AXON_OP_MODULE_LOAD:
		size_arg(q.obj.data_len, raw, sz, sizeof(sz));
		snprintf(buf, len, "%s, image=%s", top_handle(q.obj.handle, h1, sizeof(h1)),
			 sz);
		break;
	case AXON_OP_MODULE_GET_FUNC:
	case AXON_OP_MODULE_GET_GLOBAL:
		snprintf(buf, len, "%s", top_handle(q.obj.handle, h1, sizeof(h1)));
		break;
	case AXON_OP_LAUNCH:
		snprintf(buf, len, "%s, grid=(%u,%u,%u), block=(%u,%u,%u)",
			 top_handle(q.launch.func, h1, sizeof(h1)),
			 q.launch.grid[0], q.launch.grid[1], q.launch.grid[2],
			 q.launch.block[0], q.launch.block[1], q.launch.block[2]);
		break;
	case AXON_OP_STREAM_CREATE:
		snprintf(buf, len, "%s, flags=0x%llx, prio=%lld",
			 top_handle(q.obj.handle, h1, sizeof(h1)),
			 (unsigned long long)q.obj.arg0, (long long)q.obj.arg1);
		break;
	case AXON_OP_EVENT_CREATE:
		snprintf(buf, len, "%s, flags=0x%llx", top_handle(q.obj.handle, h1, sizeof(h1)),
			 (unsigned long long)q.obj.arg0);
		break;
	case AXON_OP_EVENT_ELAPSED:
		snprintf(buf, len, "%s, %s", top_handle(q.obj.handle, h1, sizeof(h1)),
			 top_handle(q.obj.arg0, h2, sizeof(h2)));
		break;
	case AXON_OP_FUNC_GET_ATTR:
		snprintf(buf, len, "%s, attr=%llu", top_handle(q.obj.handle, h1, sizeof(h1)),
			 (unsigned long long)q.obj.arg0);
		break;
	default:
		snprintf(buf, len, "0x%llx, 0x%llx, 0x%llx, 0x%llx",
			 (unsigned long long)e->args[0], (unsigned long long)e->args[1],
			 (unsigned long long)e->args[2], (unsigned long long)e->args[3]);
		break;
	}
}

static const char *op_name(unsigned int op, char *buf, size_t len)
{
	const char *n = axon_op_name(op);

	if (n && strcmp(n, "?"))
		return n;
	if (op == AXON_OP_LAST)
		return "INVALID";	/* the daemon refused the SQE itself */
	snprintf(buf, len, "OP_%u", op);
	return buf;
}

/* user_data pairs a completion with its submission; 0 (deferred) says nothing. */
static void ud_text(uint64_t ud, char *buf, size_t len)
{
	if (ud)
		snprintf(buf, len, "  #%llx", (unsigned long long)ud);
	else
		buf[0] = 0;
}

void top_trace_line(struct top_trace_fmt *st, const struct axon_trace_event *e,
		    char *buf, size_t len)
{
	char args[256], name[32], res[48], strm[40], ud[32];
	double t;

	if (!st->started) {
		st->t0 = e->time_ns;
		st->started = true;
	}
	t = e->time_ns >= st->t0 ? (double)(e->time_ns - st->t0) / 1e3
				 : -(double)(st->t0 - e->time_ns) / 1e3;
	if (e->kind == AXON_TRACE_SUBMIT) {
		args_text(e, st->bytes, args, sizeof(args));
		strm[0] = 0;
		if (e->stream) {
			char h[32];

			snprintf(strm, sizeof(strm), " %s", top_handle(e->stream, h, sizeof(h)));
		}
		ud_text(e->user_data, ud, sizeof(ud));
		snprintf(buf, len, "%12.3f SUBMIT   %s(%s)%s%s%s", t,
			 op_name(e->opcode, name, sizeof(name)), args, strm,
			 (e->sqe_flags & AXON_SQE_F_DEFERRED) ? " deferred" : "", ud);
	} else if (e->kind == AXON_TRACE_COMPLETE) {
		ud_text(e->user_data, ud, sizeof(ud));
		snprintf(buf, len, "%12.3f COMPLETE %s = %s <%.1f us>%s", t,
			 op_name(e->opcode, name, sizeof(name)),
			 top_curesult_name(e->res, res, sizeof(res)),
			 (double)e->latency_ns / 1e3, ud);
	} else {
		snprintf(buf, len, "%12.3f EVENT%u   %s", t, e->kind,
			 op_name(e->opcode, name, sizeof(name)));
	}
}

/* ---- the trace command ---------------------------------------------------- */

#define TRACE_MAX 1024

int top_run_trace(struct top_source *src, struct top_opts *o)
{
	struct top_trace_target tgt = { .client_id = o->client_id, .pid = o->pid };
	struct top_trace_fmt st = { .bytes = o->bytes };
	struct top_snapshot snap = { 0 };
	struct axon_trace_event *ev;
	char err[512] = "", comm[80] = "";
	unsigned long long records = 0;
	int fd, n, i;
	size_t k;

	fd = src->ops->trace_open(src, &tgt, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "axon-top: %s\n", err);
		return 1;
	}
	/* Name the client if the stats say who it is (best effort). */
	if (!src->ops->sample(src, &snap, err, sizeof(err))) {
		for (k = 0; k < snap.nclients; k++) {
			if (snap.clients[k].id == tgt.client_id) {
				snprintf(comm, sizeof(comm), ", pid %d, %s",
					 (int)snap.clients[k].pid, snap.clients[k].comm_disp);
				break;
			}
		}
	}
	top_snapshot_free(&snap);
	ev = calloc(TRACE_MAX, sizeof(*ev));
	if (!ev) {
		fprintf(stderr, "axon-top: out of memory\n");
		close(fd);
		return 1;
	}
	printf("# tracing axon client %llu%s (Ctrl-C to stop)\n",
	       (unsigned long long)tgt.client_id, comm);
	printf("# %10s %-8s %s\n", "TIME_US", "EVENT",
	       "OP(ARGS) [STREAM] [deferred] [= RESULT <LATENCY>]  #USER_DATA");
	fflush(stdout);
	for (;;) {
		n = src->ops->trace_read(src, fd, ev, TRACE_MAX, err, sizeof(err));
		if (n < 0) {
			fprintf(stderr, "axon-top: %s\n", err);
			break;
		}
		if (n == 0)
			break;
		for (i = 0; i < n; i++) {
			char line[512];

			if (ev[i].dropped)
				printf("%12s (%u dropped)\n", "...", ev[i].dropped);
			top_trace_line(&st, &ev[i], line, sizeof(line));
			puts(line);
			records++;
		}
		fflush(stdout);
		if (ferror(stdout))
			break;
	}
	printf("# trace ended: client %llu exited or axond closed the trace (%llu records)\n",
	       (unsigned long long)tgt.client_id, records);
	fflush(stdout);
	free(ev);
	close(fd);
	return n < 0 ? 1 : 0;
}
