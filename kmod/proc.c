// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/axon: three tables read by axon-top and scripts. Each starts with
 * one header line naming the fields; every following line holds the same
 * number of whitespace-separated fields. Strings (cgroup paths, command
 * names) have whitespace and backslashes escaped as \ooo octal, as
 * /proc/mounts does. New fields are only ever appended. Pids and uids are
 * those of the reader's namespaces, cgroup paths relative to its cgroup
 * namespace; a reader sees only the clients and cgroups visible.c lets it
 * see. Documentation/kmod.rst lists every field.
 */
#include <linux/cgroup.h>
#include <linux/cred.h>
#include <linux/limits.h>
#include <linux/nsproxy.h>
#include <linux/pid_namespace.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "axon_drv.h"
#include "charge.h"
#include "client.h"
#include "proc.h"
#include "region.h"
#include "visible.h"

#define AXON_PROC_ESC	" \t\n\\"

static struct proc_dir_entry *axon_proc_dir;

static const char *const axon_stat_names[AXON_STAT_MAX + 1] = {
	[AXON_STAT_CLIENTS]		= "clients",
	[AXON_STAT_OPENS]		= "opens",
	[AXON_STAT_DAEMON_ATTACHED]	= "daemon_attached",
	[AXON_STAT_DAEMON_PID]		= "daemon_pid",
	[AXON_STAT_ATTACHES]		= "attaches",
	[AXON_STAT_ENTERS]		= "enters",
	[AXON_STAT_DOORBELLS]		= "doorbells",
	[AXON_STAT_NOTIFIES]		= "notifies",
	[AXON_STAT_EVENTS]		= "events",
	[AXON_STAT_CHARGES]		= "charges",
	[AXON_STAT_CHARGE_FAILS]	= "charge_fails",
	[AXON_STAT_UNCHARGES]		= "uncharges",
	[AXON_STAT_CHARGED_BYTES]	= "charged_bytes",
	[AXON_STAT_REGION_BYTES]	= "region_bytes",
};

/**
 * axon_stats_read() - a snapshot of the global counters
 * @v:	indexed by AXON_STAT_*; pids in the caller's pid namespace
 */
void axon_stats_read(u64 v[AXON_STAT_MAX + 1])
{
	memset(v, 0, sizeof(u64) * (AXON_STAT_MAX + 1));
	v[AXON_STAT_CLIENTS] = atomic64_read(&axon_dev.stats.clients);
	v[AXON_STAT_OPENS] = atomic64_read(&axon_dev.stats.opens);
	spin_lock(&axon_dev.lock);
	v[AXON_STAT_DAEMON_ATTACHED] = axon_dev.attached;
	if (axon_dev.daemon_pid)
		v[AXON_STAT_DAEMON_PID] =
			pid_nr_ns(axon_dev.daemon_pid,
				  task_active_pid_ns(current));
	spin_unlock(&axon_dev.lock);
	v[AXON_STAT_ATTACHES] = atomic64_read(&axon_dev.stats.attaches);
	v[AXON_STAT_ENTERS] = atomic64_read(&axon_dev.stats.enters);
	v[AXON_STAT_DOORBELLS] = atomic64_read(&axon_dev.stats.doorbells);
	v[AXON_STAT_NOTIFIES] = atomic64_read(&axon_dev.stats.notifies);
	v[AXON_STAT_EVENTS] = atomic64_read(&axon_dev.stats.events);
	axon_charge_stats(&v[AXON_STAT_CHARGES], &v[AXON_STAT_CHARGE_FAILS],
			  &v[AXON_STAT_UNCHARGES], &v[AXON_STAT_CHARGED_BYTES]);
	v[AXON_STAT_REGION_BYTES] = atomic64_read(&axon_dev.stats.region_bytes);
}

static int axon_stats_show(struct seq_file *m, void *v)
{
	u64 val[AXON_STAT_MAX + 1];
	int i;

	axon_stats_read(val);
	seq_puts(m, "name value\n");
	seq_printf(m, "format %d\n", 1);
	for (i = AXON_STAT_CLIENTS; i <= AXON_STAT_MAX; i++)
		seq_printf(m, "%s %llu\n", axon_stat_names[i], val[i]);
	return 0;
}

/*
 * clients: position 0 is the header, a client is at the position of its
 * id; the iterator holds a reference on the client it returned.
 */
static void *axon_clients_start(struct seq_file *m, loff_t *pos)
{
	unsigned long id;
	struct axon_client *c;

	if (*pos == 0)
		return SEQ_START_TOKEN;
	id = *pos - 1;
	c = axon_client_next(&id);
	if (c)
		*pos = id;
	return c;
}

static void *axon_clients_next(struct seq_file *m, void *v, loff_t *pos)
{
	unsigned long id = 0;
	struct axon_client *c;

	if (v != SEQ_START_TOKEN) {
		id = ((struct axon_client *)v)->id;
		axon_client_put(v);
	}
	c = axon_client_next(&id);
	*pos = c ? id : id + 1;
	return c;
}

static void axon_clients_stop(struct seq_file *m, void *v)
{
	if (v && v != SEQ_START_TOKEN)
		axon_client_put(v);
}

static int axon_clients_show(struct seq_file *m, void *v)
{
	const struct axon_viewer viewer = { .cred = m->file->f_cred };
	struct axon_client *c = v;
	struct user_namespace *ns = seq_user_ns(m);
	u32 sq_tail = 0, sq_head = 0, cq_tail = 0;
	struct axon_region *r;
	char *path;
	int state;

	if (v == SEQ_START_TOKEN) {
		seq_puts(m, "id pid uid gid cgroup comm charged submits completions depth state enters\n");
		return 0;
	}
	if (!axon_client_visible(c, &viewer))
		return 0;
	state = axon_client_kstate(c);
	r = state != AXON_KSTATE_NEW ? c->region : NULL;
	if (r) {
		sq_tail = READ_ONCE(r->cpage->sq_tail);
		sq_head = READ_ONCE(r->dpage->sq_head);
		cq_tail = READ_ONCE(r->dpage->cq_tail);
	}
	path = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!path)
		return -ENOMEM;
	if (cgroup_path_ns(c->cgrp, path, PATH_MAX,
			   current->nsproxy->cgroup_ns) < 0)
		strscpy(path, "?", PATH_MAX);
	seq_printf(m, "%llu %d %u %u ", c->id,
		   pid_nr_ns(c->pid, task_active_pid_ns(current)),
		   from_kuid_munged(ns, c->cred->uid),
		   from_kgid_munged(ns, c->cred->gid));
	seq_escape(m, path, AXON_PROC_ESC);
	seq_putc(m, ' ');
	seq_escape(m, c->comm[0] ? c->comm : "-", AXON_PROC_ESC);
	seq_printf(m, " %llu %u %u %u %s %lld\n", axon_charge_client_total(c),
		   sq_tail, cq_tail, sq_tail - sq_head, axon_kstate_name(state),
		   (long long)atomic64_read(&c->enters));
	kfree(path);
	return 0;
}

static const struct seq_operations axon_clients_seq_ops = {
	.start	= axon_clients_start,
	.next	= axon_clients_next,
	.stop	= axon_clients_stop,
	.show	= axon_clients_show,
};

static int axon_cgroups_line(void *arg, const struct axon_cg_info *cg)
{
	struct seq_file *m = arg;

	seq_escape(m, cg->path, AXON_PROC_ESC);
	seq_printf(m, " %llu devmem %llu ", cg->id, cg->usage);
	if (cg->limit == AXON_LIMIT_NONE)
		seq_puts(m, "max");
	else
		seq_printf(m, "%llu", cg->limit);
	seq_printf(m, " %llu %llu\n", cg->peak, cg->failcnt);
	return 0;
}

static int axon_cgroups_show(struct seq_file *m, void *v)
{
	const struct axon_viewer viewer = { .cred = m->file->f_cred };
	unsigned long cursor = 0;

	seq_puts(m, "cgroup id kind usage limit peak failcnt\n");
	return axon_charge_walk(&cursor, &viewer, axon_cgroups_line, m);
}

int __init axon_proc_init(void)
{
	axon_proc_dir = proc_mkdir("axon", NULL);
	if (!axon_proc_dir)
		return -ENOMEM;
	if (!proc_create_single("stats", 0444, axon_proc_dir, axon_stats_show) ||
	    !proc_create_seq("clients", 0444, axon_proc_dir,
			     &axon_clients_seq_ops) ||
	    !proc_create_single("cgroups", 0444, axon_proc_dir,
				axon_cgroups_show)) {
		proc_remove(axon_proc_dir);
		return -ENOMEM;
	}
	return 0;
}

void axon_proc_uninit(void)
{
	proc_remove(axon_proc_dir);
}
