// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/axon (misc device, mode 0666): every open is a client; the file that
 * calls AXON_IOC_ATTACH becomes the daemon's. The ioctl table says which
 * role may issue each command; everything else is a plain dispatch.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

#include "axon_drv.h"
#include "chardev.h"
#include "client.h"
#include "clientops.h"
#include "daemon.h"
#include "region.h"

enum axon_role {
	AXON_ROLE_CLIENT,	/* a client file (any state but daemon) */
	AXON_ROLE_DAEMON,	/* the attached daemon's file */
	AXON_ROLE_ANY,
};

struct axon_ioctl {
	unsigned int cmd;
	enum axon_role role;
	long (*fn)(struct file *file, struct axon_client *c,
		   unsigned long arg);
};

static bool axon_is_daemon(struct axon_client *c)
{
	return axon_client_state(c) == AXON_CS_DAEMON;
}

static long axon_ioctl_setup(struct file *file, struct axon_client *c,
			     unsigned long arg)
{
	return axon_client_setup(c, (void __user *)arg);
}

static long axon_ioctl_enter(struct file *file, struct axon_client *c,
			     unsigned long arg)
{
	return axon_client_enter(c, (void __user *)arg);
}

static long axon_ioctl_reserve(struct file *file, struct axon_client *c,
			       unsigned long arg)
{
	return axon_dmem_reserve(c, (void __user *)arg);
}

static long axon_ioctl_attach(struct file *file, struct axon_client *c,
			      unsigned long arg)
{
	return axon_daemon_attach(file, c, arg);
}

static long axon_ioctl_charge(struct file *file, struct axon_client *c,
			      unsigned long arg)
{
	return axon_daemon_charge((void __user *)arg, true);
}

static long axon_ioctl_uncharge(struct file *file, struct axon_client *c,
				unsigned long arg)
{
	return axon_daemon_charge((void __user *)arg, false);
}

static long axon_ioctl_accept(struct file *file, struct axon_client *c,
			      unsigned long arg)
{
	return axon_daemon_accept((void __user *)arg);
}

static long axon_ioctl_client_fd(struct file *file, struct axon_client *c,
				 unsigned long arg)
{
	return axon_daemon_client_fd((void __user *)arg);
}

static long axon_ioctl_notify(struct file *file, struct axon_client *c,
			      unsigned long arg)
{
	return axon_daemon_notify((void __user *)arg);
}

static long axon_ioctl_disconnect(struct file *file, struct axon_client *c,
				  unsigned long arg)
{
	return axon_daemon_disconnect((void __user *)arg);
}

static const struct axon_ioctl axon_ioctls[] = {
	{ AXON_IOC_SETUP,	AXON_ROLE_CLIENT, axon_ioctl_setup },
	{ AXON_IOC_ENTER,	AXON_ROLE_CLIENT, axon_ioctl_enter },
	{ AXON_IOC_RESERVE,	AXON_ROLE_CLIENT, axon_ioctl_reserve },
	{ AXON_IOC_ATTACH,	AXON_ROLE_ANY,	  axon_ioctl_attach },
	{ AXON_IOC_CHARGE,	AXON_ROLE_DAEMON, axon_ioctl_charge },
	{ AXON_IOC_UNCHARGE,	AXON_ROLE_DAEMON, axon_ioctl_uncharge },
	{ AXON_IOC_ACCEPT,	AXON_ROLE_DAEMON, axon_ioctl_accept },
	{ AXON_IOC_CLIENT_FD,	AXON_ROLE_DAEMON, axon_ioctl_client_fd },
	{ AXON_IOC_NOTIFY,	AXON_ROLE_DAEMON, axon_ioctl_notify },
	{ AXON_IOC_DISCONNECT,	AXON_ROLE_DAEMON, axon_ioctl_disconnect },
};

static long axon_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct axon_client *c = file->private_data;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(axon_ioctls); i++) {
		const struct axon_ioctl *d = &axon_ioctls[i];

		if (d->cmd != cmd)
			continue;
		if (d->role == AXON_ROLE_DAEMON && !axon_is_daemon(c))
			return -EPERM;
		if (d->role == AXON_ROLE_CLIENT && axon_is_daemon(c))
			return -EINVAL;
		return d->fn(file, c, arg);
	}
	return -ENOTTY;
}

static int axon_open(struct inode *inode, struct file *file)
{
	struct axon_client *c;

	c = axon_client_create();
	if (IS_ERR(c))
		return PTR_ERR(c);
	file->private_data = c;
	axon_dbg(FILE, "client %llu opened\n", c->id);
	return 0;
}

static int axon_release(struct inode *inode, struct file *file)
{
	struct axon_client *c = file->private_data;

	if (axon_is_daemon(c)) {
		axon_daemon_detach(file, c);
		axon_client_put(c);
	} else {
		axon_client_release(c);
	}
	return 0;
}

static ssize_t axon_read(struct file *file, char __user *buf, size_t count,
			 loff_t *ppos)
{
	struct axon_client *c = file->private_data;

	if (!axon_is_daemon(c))
		return -EINVAL;
	return axon_daemon_read(file, buf, count);
}

static __poll_t axon_poll(struct file *file, struct poll_table_struct *pt)
{
	struct axon_client *c = file->private_data;

	if (axon_is_daemon(c))
		return axon_daemon_poll(file, pt);
	return axon_client_poll(c, file, pt);
}

static int axon_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct axon_client *c = file->private_data;

	if (axon_is_daemon(c))
		return axon_daemon_mmap(vma);
	return axon_client_mmap(c, vma);
}

static void axon_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct axon_client *c = file->private_data;
	int state = axon_client_state(c);

	if (state == AXON_CS_DAEMON) {
		seq_puts(m, "axon-role:\tdaemon\n");
		return;
	}
	seq_printf(m, "axon-role:\tclient\naxon-client-id:\t%llu\n", c->id);
	seq_printf(m, "axon-state:\t%s\n", axon_kstate_name(state));
	if (state == AXON_KSTATE_NEW || state == AXON_KSTATE_PENDING)
		return;
	seq_printf(m, "axon-sq-entries:\t%u\naxon-cq-entries:\t%u\n",
		   c->params.sq_entries, c->params.cq_entries);
	seq_printf(m, "axon-sq-tail:\t%u\naxon-sq-head:\t%u\n",
		   READ_ONCE(c->region->cpage->sq_tail),
		   READ_ONCE(c->region->dpage->sq_head));
	seq_printf(m, "axon-cq-head:\t%u\naxon-cq-tail:\t%u\n",
		   READ_ONCE(c->region->cpage->cq_head),
		   READ_ONCE(c->region->dpage->cq_tail));
	seq_printf(m, "axon-region-bytes:\t%llu\n", c->params.region_size);
}

static const struct file_operations axon_fops = {
	.owner		= THIS_MODULE,
	.open		= axon_open,
	.release	= axon_release,
	.read		= axon_read,
	.poll		= axon_poll,
	.mmap		= axon_mmap,
	.unlocked_ioctl	= axon_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
	.show_fdinfo	= axon_show_fdinfo,
};

static struct miscdevice axon_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= AXON_DRV_NAME,
	.fops	= &axon_fops,
	.mode	= 0666,
};

int __init axon_chardev_init(void)
{
	return misc_register(&axon_misc);
}

void axon_chardev_uninit(void)
{
	misc_deregister(&axon_misc);
}
