// SPDX-License-Identifier: MIT
/*
 * Modules and their functions and globals. The image arrives in the data
 * area; the backend parses and keeps what it needs. Unloading waits for
 * launches already queued.
 */
#include <stdlib.h>
#include <string.h>
#include <cuda.h>
#include "ops.h"

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

enum op_status op_module_load(struct op_ctx *o)
{
	struct client *c = o->c;
	struct ctx *ctx = ctx_lookup(c, o->sqe->obj.handle);
	const void *image = data_range(c, o->sqe->obj.data_off, o->sqe->obj.data_len);
	struct module *m;
	char err[256] = "";
	void *copy;
	int ret;

	if (!ctx) {
		o->res = CUDA_ERROR_INVALID_CONTEXT;
		return OP_COMPLETE;
	}
	if (!image || !o->sqe->obj.data_len) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	m->ctx = ctx;
	/* Parse a private copy: the client can rewrite its data area while we
	 * read it, and a parser must never see bytes change under it. */
	copy = malloc(o->sqe->obj.data_len);
	if (!copy) {
		free(m);
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	memcpy(copy, image, o->sqe->obj.data_len);
	ret = o->d->backend->module_load(o->d, c, m, copy, o->sqe->obj.data_len,
					 err, sizeof(err));
	free(copy);
	if (ret) {
		log_info("client %llu (%s): module load failed: %s",
			 (unsigned long long)c->id, c->comm, err);
		free(m);
		o->res = ret;
		return OP_COMPLETE;
	}
	if (handle_alloc(&c->modules, AXON_HANDLE_MODULE, m, &m->handle)) {
		o->d->backend->module_unload(o->d, c, m);
		free(m);
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	o->aux[0] = m->handle;
	return OP_COMPLETE;
}

static void free_func_of(void *obj, void *arg)
{
	struct func *f = obj;
	struct axond *d = ((void **)arg)[0];
	struct client *c = ((void **)arg)[1];
	struct module *m = ((void **)arg)[2];

	if (f->module != m)
		return;
	handle_free(&c->funcs, f->handle, AXON_HANDLE_FUNC);
	d->backend->func_free(d, f);
	free(f->name);
	free(f);
}

static void module_release(struct axond *d, struct client *c, void *obj)
{
	struct module *m = obj;
	void *arg[3] = { d, c, m };

	handle_table_for_each(&c->funcs, free_func_of, arg);
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

enum op_status op_module_unload(struct op_ctx *o)
{
	struct module *m = module_lookup(o->c, o->sqe->obj.handle);

	if (!m) {
		o->res = CUDA_ERROR_INVALID_HANDLE;
		return OP_COMPLETE;
	}
	module_destroy_later(o->d, o->c, m);
	return OP_COMPLETE;
}

struct find_func {
	struct module *m;
	const char *name;
	struct func *found;
};

static void match_func(void *obj, void *arg)
{
	struct find_func *ff = arg;
	struct func *f = obj;

	if (!ff->found && f->module == ff->m && !strcmp(f->name, ff->name))
		ff->found = f;
}

enum op_status op_module_get_func(struct op_ctx *o)
{
	struct client *c = o->c;
	struct module *m = module_lookup(c, o->sqe->obj.handle);
	char name[AXON_MAX_NAME];
	struct find_func ff = { .m = m };
	struct axon_func_info *out;
	struct func *f;
	int ret;

	if (!m) {
		o->res = CUDA_ERROR_INVALID_HANDLE;
		return OP_COMPLETE;
	}
	if (o->sqe->obj.data_len < sizeof(struct axon_func_info) ||
	    !data_name(c, o->sqe, name, sizeof(name))) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	out = data_range(c, o->sqe->obj.data_off, sizeof(*out));
	ff.name = name;
	handle_table_for_each(&c->funcs, match_func, &ff);
	if (ff.found) {
		memcpy(out, &ff.found->info, sizeof(*out));
		o->aux[0] = ff.found->handle;
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
	if (ret) {
		if (f->backend_priv)
			o->d->backend->func_free(o->d, f);
		free(f->name);
		free(f);
		o->res = ret;
		return OP_COMPLETE;
	}
	memcpy(out, &f->info, sizeof(*out));
	o->aux[0] = f->handle;
	return OP_COMPLETE;
}

enum op_status op_module_get_global(struct op_ctx *o)
{
	struct client *c = o->c;
	struct module *m = module_lookup(c, o->sqe->obj.handle);
	char name[AXON_MAX_NAME];

	if (!m) {
		o->res = CUDA_ERROR_INVALID_HANDLE;
		return OP_COMPLETE;
	}
	if (!data_name(c, o->sqe, name, sizeof(name))) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	o->res = o->d->backend->module_get_global(o->d, c, m, name, &o->aux[0],
						  &o->aux[1]);
	return OP_COMPLETE;
}

/*
 * What cuModuleEnumerateFunctions needs, and cuFFT, which asks the driver's
 * private table 6e163fbe slot 7 to walk a module's functions: their names,
 * the shim then getting each as MODULE_GET_FUNC would.
 */
enum op_status op_module_funcs(struct op_ctx *o)
{
	struct client *c = o->c;
	struct module *m = module_lookup(c, o->sqe->obj.handle);
	uint32_t len = o->sqe->obj.data_len, count = 0;
	size_t need = 0;
	char *buf, *tmp;

	if (!m) {
		o->res = CUDA_ERROR_INVALID_HANDLE;
		return OP_COMPLETE;
	}
	buf = len ? data_range(c, o->sqe->obj.data_off, len) : NULL;
	if (len && !buf) {
		o->res = CUDA_ERROR_INVALID_VALUE;
		return OP_COMPLETE;
	}
	/* Built aside, then copied: the client sees whole names or none. */
	tmp = len ? malloc(len) : NULL;
	if (len && !tmp) {
		o->res = CUDA_ERROR_OUT_OF_MEMORY;
		return OP_COMPLETE;
	}
	o->res = o->d->backend->module_func_names ?
		 o->d->backend->module_func_names(o->d, c, m, tmp, len, &count, &need) :
		 CUDA_ERROR_NOT_SUPPORTED;
	if (!o->res && need > len)
		o->res = CUDA_ERROR_INVALID_VALUE;
	if (!o->res)
		memcpy(buf, tmp, need);
	free(tmp);
	o->aux[0] = count;
	o->aux[1] = need;
	return OP_COMPLETE;
}

enum op_status op_func_get_attr(struct op_ctx *o)
{
	struct func *f = func_lookup(o->c, o->sqe->obj.handle);
	int64_t v = 0;

	if (!f) {
		o->res = CUDA_ERROR_INVALID_HANDLE;
		return OP_COMPLETE;
	}
	o->res = o->d->backend->func_get_attr(o->d, f, (int)o->sqe->obj.arg0, &v);
	o->aux[0] = (uint64_t)v;
	return OP_COMPLETE;
}
