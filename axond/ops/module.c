// SPDX-License-Identifier: MIT
/*
 * Modules and their functions and globals. The image arrives in the data
 * area; a loader thread copies it and the backend parses and keeps what it
 * needs (op_module_load). Functions are found by (module, name) in the
 * client's hash. Unloading waits for launches already queued.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda.h>
#include "ops.h"
#include "../dispatch.h"
#include "../imagelimits.h"
#include "../loader.h"
#include "../localmem.h"

static const char *data_name(struct client *c, const struct axon_sqe *sqe,
			     char *buf, size_t buflen)
{
	const char *p = data_range(c, sqe->obj.data_off, sqe->obj.data_len);
	size_t n;

	if (!p || !sqe->obj.data_len)
		return NULL;
	n = strnlen(p, sqe->obj.data_len);
	if (n == sqe->obj.data_len || n == 0 || n >= buflen)
		return NULL;
	/* Copy: the client can rewrite the data area under us. */
	memcpy(buf, p, n);
	buf[n] = 0;
	return buf;
}

/*
 * MODULE_LOAD runs in three steps so the dispatcher never does the heavy
 * part: here the request is checked and the backend prepares; a loader
 * thread (loader.c) copies the image out of the data area, checks its
 * decompression bounds and has the backend parse and load it; back on the
 * dispatcher load_finish() commits the module (globals, handle) and posts
 * the completion. The module gets its handle only then, so no op of the
 * client can reach a module half loaded.
 */
struct module_load {
	struct loader_job job;	/* first: the loader's view */
	uint64_t ctx_handle;
	uint64_t user_data, t_start;
	uint32_t off, len;	/* the image in the data area */
	int dev;
	void *priv;		/* the backend's, until committed */
	int32_t res;		/* of the loader's part */
	/* The device runtime calls the client's context was charged for
	 * (localmem.h), and those the image's code makes: when they are not
	 * all charged, the image's copy waits here, they are charged and the
	 * load runs again. */
	uint32_t calls_charged, calls;
	unsigned char *copy;
	char err[256];
};

static void load_run(struct axond *d, struct loader_job *j)
{
	struct module_load *ml = (struct module_load *)j;
	struct client *c = j->c;
	const struct image_limits lim = {
		.max_inflate = d->cfg.max_inflate,
		.max_ratio = d->cfg.max_inflate_ratio,
	};
	const void *image;
	unsigned char *copy = ml->copy;

	/* Again, once its runtime reserve is charged: the same bytes. */
	if (copy)
		goto parse;
	/* Parse a private copy: the client can rewrite its data area while
	 * we read it, and a parser must never see bytes change under it.
	 * NUL-terminated in case it is PTX text. */
	image = data_range(c, ml->off, ml->len);
	copy = image ? malloc((size_t)ml->len + 1) : NULL;
	if (!copy) {
		ml->res = image ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
		snprintf(ml->err, sizeof(ml->err), "no memory to copy an image of %u bytes",
			 ml->len);
		return;
	}
	memcpy(copy, image, ml->len);
	copy[ml->len] = 0;
	if (image_check_limits(copy, ml->len, &lim, ml->err, sizeof(ml->err))) {
		ml->res = CUDA_ERROR_INVALID_IMAGE;
		free(copy);
		return;
	}
parse:
	ml->calls = 0;
	ml->res = d->backend->module_parse(d, c, ml->priv, copy, ml->len, ml->calls_charged,
					   &ml->calls, ml->err, sizeof(ml->err));
	if (!ml->res && (ml->calls & ~ml->calls_charged)) {
		ml->copy = copy;	/* for the second run */
		return;
	}
	ml->copy = NULL;
	free(copy);
}

/*
 * The image calls the device runtime, whose reserve the client's context
 * was not charged for: charged now, before the driver sees the image, and
 * the load runs again. 0 when it is queued again (the job is the
 * loader's); otherwise the load failed with ml->res and ml->err.
 */
static int load_charge_runtime(struct axond *d, struct client *c, struct module_load *ml)
{
	int ret;

	ml->res = localmem_module(d, c, ml->dev, ml->calls);
	if (ml->res) {
		snprintf(ml->err, sizeof(ml->err), "the device runtime its code calls "
			 "(printf or malloc) reserves %llu bytes in the context: more than "
			 "the client's quotas allow",
			 (unsigned long long)localmem_runtime_cost(d, ml->dev,
						ml->calls | ml->calls_charged));
		return -1;
	}
	ml->calls_charged = localmem_calls_charged(c, ml->dev);
	ret = loader_submit(d, c, &ml->job);
	if (!ret)
		return 0;
	ml->res = CUDA_ERROR_OUT_OF_MEMORY;
	snprintf(ml->err, sizeof(ml->err), "%s", ret == -EBUSY ? "too many loads in flight" :
		 ret == -EAGAIN ? "no loader thread could start" : "out of memory");
	return -1;
}

/* The client left before the load finished (client_free). */
static void load_drop(struct axond *d, struct client *c, struct loader_job *j)
{
	struct module_load *ml = (struct module_load *)j;

	d->backend->module_discard(d, c, ml->priv);
	free(ml->copy);
	free(ml);
}

static void load_finish(struct axond *d, struct client *c, struct loader_job *j)
{
	struct module_load *ml = (struct module_load *)j;
	struct ctx *ctx = ctx_lookup(c, ml->ctx_handle);
	struct module *m = NULL;
	int32_t res = ml->res;

	/* Destroyed while its module loaded: nothing to load into. */
	if (!res && !ctx) {
		res = CUDA_ERROR_INVALID_CONTEXT;
		snprintf(ml->err, sizeof(ml->err), "its context was destroyed");
	}
	if (!res && (ml->calls & ~ml->calls_charged)) {
		if (!load_charge_runtime(d, c, ml))
			return;
		res = ml->res;
	}
	free(ml->copy);
	ml->copy = NULL;
	if (!res) {
		m = calloc(1, sizeof(*m));
		if (!m) {
			res = CUDA_ERROR_OUT_OF_MEMORY;
			snprintf(ml->err, sizeof(ml->err), "out of memory");
		}
	}
	if (!res) {
		m->ctx = ctx;
		res = d->backend->module_commit(d, c, m, ml->priv, ml->err, sizeof(ml->err));
		if (!res) {
			ml->priv = NULL;	/* the module's now */
			if (handle_alloc(&c->modules, AXON_HANDLE_MODULE, m, &m->handle)) {
				d->backend->module_unload(d, c, m);
				res = CUDA_ERROR_OUT_OF_MEMORY;
				snprintf(ml->err, sizeof(ml->err), "too many modules (%u)",
					 handle_count(&c->modules, 0));
			}
		}
	}
	if (res) {
		log_info("client %llu (%s): module load failed: %s",
			 (unsigned long long)c->id, c->comm, ml->err);
		free(m);
		m = NULL;
		if (ml->priv)
			d->backend->module_discard(d, c, ml->priv);
	}
	dispatch_complete(d, c, NULL, ml->user_data, AXON_OP_MODULE_LOAD, res,
			  m ? m->handle : 0, 0, ml->t_start);
	dispatch_wake_client(d, c);
	free(ml);
}

/* The module (or context) a request names, and the name it gives. */
struct module_req {
	struct ctx *ctx;
	struct module *module;
	struct func *func;
	void *buf;		/* the request's data-area buffer */
	char name[AXON_MAX_NAME];
};

int32_t op_module_load_prep(struct op_ctx *o)
{
	struct client *c = o->c;
	struct ctx *ctx = ctx_lookup(c, o->sqe->obj.handle);
	uint32_t len = o->sqe->obj.data_len;

	if (!ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	if (!len || !data_range(c, o->sqe->obj.data_off, len))
		return CUDA_ERROR_INVALID_VALUE;
	if (len > o->d->cfg.max_image) {
		log_info("client %llu (%s): module image of %u bytes refused: over the limit of %llu (axond --max-image)",
			 (unsigned long long)c->id, c->comm, len,
			 (unsigned long long)o->d->cfg.max_image);
		return CUDA_ERROR_INVALID_VALUE;
	}
	op_req(o, struct module_req)->ctx = ctx;
	return CUDA_SUCCESS;
}

enum op_status op_module_load_issue(struct op_ctx *o)
{
	struct client *c = o->c;
	struct ctx *ctx = op_req(o, struct module_req)->ctx;
	struct module_load *ml;
	int ret;

	ml = calloc(1, sizeof(*ml));
	if (!ml) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	ml->ctx_handle = ctx->handle;
	ml->user_data = o->sqe->user_data;
	ml->t_start = o->t_start;
	ml->off = o->sqe->obj.data_off;
	ml->len = o->sqe->obj.data_len;
	ml->dev = ctx->device;
	ml->calls_charged = localmem_calls_charged(c, ctx->device);
	ml->job.run = load_run;
	ml->job.finish = load_finish;
	ml->job.drop = load_drop;
	ret = o->d->backend->module_prepare(o->d, c, ctx->device, &ml->priv);
	if (ret) {
		free(ml);
		o->res = ret;
		return OP_COMPLETE;
	}
	ret = loader_submit(o->d, c, &ml->job);
	if (ret) {
		if (ret == -EBUSY)
			log_info("client %llu (%s): module load refused: %u loads in flight already (axond --max-module-loads)",
				 (unsigned long long)c->id, c->comm, loader_pending(c));
		else
			log_err("client %llu (%s): module load: %s",
				(unsigned long long)c->id, c->comm,
				ret == -EAGAIN ? "no loader thread could start" : "out of memory");
		o->d->backend->module_discard(o->d, c, ml->priv);
		free(ml);
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	return OP_QUEUED;
}

static void module_release(struct axond *d, struct client *c, void *obj)
{
	struct module *m = obj;

	while (m->funcs) {
		struct func *f = m->funcs;

		m->funcs = f->next_in_module;
		namemap_remove(&c->funcs_by_name, (uintptr_t)m, f->name);
		handle_free(&c->funcs, f->handle, AXON_HANDLE_FUNC);
		d->backend->func_free(d, f);
		free(f->name);
		free(f);
	}
	d->backend->module_unload(d, c, m);
	handle_free(&c->modules, m->handle, AXON_HANDLE_MODULE);
	free(m);
}

void module_destroy_later(struct axond *d, struct client *c, struct module *m)
{
	m->dying = true;
	if (work_release_later(d, c, module_release, m))
		log_err("client %llu: out of memory queueing a module unload",
			(unsigned long long)c->id);
}

/* Used by client teardown: frees without waiting (no work is queued). */
void module_free_now(struct axond *d, struct client *c, struct module *m)
{
	module_release(d, c, m);
}

int32_t op_module_unload_prep(struct op_ctx *o)
{
	struct module *m = module_lookup(o->c, o->sqe->obj.handle);

	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	op_req(o, struct module_req)->module = m;
	return CUDA_SUCCESS;
}

enum op_status op_module_unload_issue(struct op_ctx *o)
{
	module_destroy_later(o->d, o->c, op_req(o, struct module_req)->module);
	return OP_COMPLETE;
}

int32_t op_module_get_func_prep(struct op_ctx *o)
{
	struct module_req *r = op_req(o, struct module_req);
	struct client *c = o->c;

	r->module = module_lookup(c, o->sqe->obj.handle);
	if (!r->module)
		return CUDA_ERROR_INVALID_HANDLE;
	if (o->sqe->obj.data_len < sizeof(struct axon_func_info) ||
	    !data_name(c, o->sqe, r->name, sizeof(r->name)))
		return CUDA_ERROR_INVALID_VALUE;
	r->buf = data_range(c, o->sqe->obj.data_off, sizeof(struct axon_func_info));
	return CUDA_SUCCESS;
}

enum op_status op_module_get_func_issue(struct op_ctx *o)
{
	struct module_req *r = op_req(o, struct module_req);
	struct client *c = o->c;
	struct module *m = r->module;
	const char *name = r->name;
	struct axon_func_info *out = r->buf;
	struct func *f;
	int ret;

	/* By hash: a client with many functions makes no lookup slow. */
	f = namemap_find(&c->funcs_by_name, (uintptr_t)m, name);
	if (f) {
		memcpy(out, &f->info, sizeof(*out));
		o->aux[0] = f->handle;
		return OP_COMPLETE;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	f->module = m;
	f->name = strdup(name);
	ret = f->name ? o->d->backend->module_get_func(o->d, c, m, name, f)
		      : CUDA_ERROR_OUT_OF_MEMORY;
	if (!ret && handle_alloc(&c->funcs, AXON_HANDLE_FUNC, f, &f->handle))
		ret = CUDA_ERROR_OUT_OF_MEMORY;
	if (!ret && namemap_insert(&c->funcs_by_name, (uintptr_t)m, f->name, f)) {
		handle_free(&c->funcs, f->handle, AXON_HANDLE_FUNC);
		ret = CUDA_ERROR_OUT_OF_MEMORY;
	}
	if (ret) {
		if (f->backend_priv)
			o->d->backend->func_free(o->d, f);
		free(f->name);
		free(f);
		o->res = ret;
		return OP_COMPLETE;
	}
	f->next_in_module = m->funcs;
	m->funcs = f;
	memcpy(out, &f->info, sizeof(*out));
	o->aux[0] = f->handle;
	return OP_COMPLETE;
}

int32_t op_module_get_global_prep(struct op_ctx *o)
{
	struct module_req *r = op_req(o, struct module_req);

	r->module = module_lookup(o->c, o->sqe->obj.handle);
	if (!r->module)
		return CUDA_ERROR_INVALID_HANDLE;
	if (!data_name(o->c, o->sqe, r->name, sizeof(r->name)))
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

enum op_status op_module_get_global_issue(struct op_ctx *o)
{
	struct module_req *r = op_req(o, struct module_req);

	o->res = o->d->backend->module_get_global(o->d, o->c, r->module, r->name,
						  &o->aux[0], &o->aux[1]);
	return OP_COMPLETE;
}

/*
 * What cuModuleEnumerateFunctions needs, and cuFFT, which asks the driver's
 * private table 6e163fbe slot 7 to walk a module's functions: their names,
 * the shim then getting each as MODULE_GET_FUNC would.
 */
int32_t op_module_funcs_prep(struct op_ctx *o)
{
	struct module_req *r = op_req(o, struct module_req);
	uint32_t len = o->sqe->obj.data_len;

	r->module = module_lookup(o->c, o->sqe->obj.handle);
	if (!r->module)
		return CUDA_ERROR_INVALID_HANDLE;
	r->buf = len ? data_range(o->c, o->sqe->obj.data_off, len) : NULL;
	if (len && !r->buf)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

enum op_status op_module_funcs_issue(struct op_ctx *o)
{
	struct module_req *r = op_req(o, struct module_req);
	struct client *c = o->c;
	uint32_t len = o->sqe->obj.data_len, count = 0;
	size_t need = 0;
	char *tmp;

	/* Built aside, then copied: the client sees whole names or none. */
	tmp = len ? malloc(len) : NULL;
	if (len && !tmp) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	o->res = o->d->backend->module_func_names ?
		 o->d->backend->module_func_names(o->d, c, r->module, tmp, len, &count, &need) :
		 CUDA_ERROR_NOT_SUPPORTED;
	if (!o->res && need > len)
		o->res = CUDA_ERROR_INVALID_VALUE;
	if (!o->res)
		memcpy(r->buf, tmp, need);
	free(tmp);
	o->aux[0] = count;
	o->aux[1] = need;
	return OP_COMPLETE;
}

int32_t op_func_get_attr_prep(struct op_ctx *o)
{
	struct func *f = func_lookup(o->c, o->sqe->obj.handle);

	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	op_req(o, struct module_req)->func = f;
	return CUDA_SUCCESS;
}

enum op_status op_func_get_attr_issue(struct op_ctx *o)
{
	int64_t v = 0;

	o->res = o->d->backend->func_get_attr(o->d, op_req(o, struct module_req)->func,
					      (int)o->sqe->obj.arg0, &v);
	o->aux[0] = (uint64_t)v;
	return OP_COMPLETE;
}
