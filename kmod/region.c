// SPDX-License-Identifier: GPL-2.0
/*
 * Region memory: every page is allocated on its own with GFP_KERNEL_ACCOUNT
 * (so the client's memcg pays for its rings and data area) and
 * __GFP_RETRY_MAYFAIL (a SETUP past the memcg's memory.max, or past what
 * the machine has, fails with -ENOMEM instead of calling the OOM killer on
 * behalf of a size the client chose), the two header
 * pages are vmap()ed for the kernel's own reads (ENTER, poll, /proc), and
 * user mappings are made with vm_insert_pages(): the vma is VM_MIXEDMAP,
 * every PTE holds a page reference, and get_user_pages() works on it (the
 * daemon can pin the data area for DMA). See Documentation/kmod.rst.
 */
#include <linux/kernel.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include <linux/axon-layout.h>

#include "axon_drv.h"
#include "delegate.h"
#include "region.h"
#include "user.h"

static const u64 axon_part_off[AXON_PART_NR] = {
	[AXON_PART_CLIENT]	= AXON_OFF_CLIENT_PAGE,
	[AXON_PART_DAEMON]	= AXON_OFF_DAEMON_PAGE,
	[AXON_PART_FRONTIER]	= AXON_OFF_FRONTIER,
	[AXON_PART_SQES]	= AXON_OFF_SQES,
	[AXON_PART_CQES]	= AXON_OFF_CQES,
	[AXON_PART_DATA]	= AXON_OFF_DATA,
};

/* Who may write each part: the client (true) or the daemon (false). */
static const bool axon_part_client_writes[AXON_PART_NR] = {
	[AXON_PART_CLIENT]	= true,
	[AXON_PART_SQES]	= true,
	[AXON_PART_DATA]	= true,
};

/*
 * Compat: vm_flags became read-only behind helpers in 6.3; Kbuild defines
 * AXON_HAVE_VM_FLAGS_MOD when the headers have them.
 */
static inline void axon_vm_flags_mod(struct vm_area_struct *vma,
				     vm_flags_t set, vm_flags_t clear)
{
#ifdef AXON_HAVE_VM_FLAGS_MOD
	vm_flags_mod(vma, set, clear);
#else
	vma->vm_flags = (vma->vm_flags | set) & ~clear;
#endif
}

/**
 * axon_region_geometry() - a client's layout, for the kernel
 * @req:	what the client asked for (sizes only)
 * @p:		filled: sizes, offsets, frontier entries; everything else 0
 *
 * The layout is axon_region_layout()'s, as axond's and libaxon's is; the
 * module's own rules are the page size and the data-area parameters.
 *
 * Return: 0 or -EINVAL.
 */
int axon_region_geometry(const struct axon_params *req, struct axon_params *p)
{
	const struct axon_layout_rules rules = {
		.page_size = PAGE_SIZE,
		.default_data_size = axon_default_data_size,
		.max_data_size = min_t(u64, axon_max_data_size,
				       AXON_KMOD_MAX_DATA_SIZE),
	};

	memset(p, 0, sizeof(*p));
	p->sq_entries = req->sq_entries;
	p->cq_entries = req->cq_entries;
	p->data_size = req->data_size;
	return axon_region_layout(p, &rules, NULL);
}

static void axon_free_pages(struct page **pages, unsigned long n)
{
	while (n--)
		__free_page(pages[n]);
}

/**
 * axon_region_alloc() - allocate and lay out a client's region
 * @p:		geometry from axon_region_geometry()
 * @user:	the user @p->region_size was counted against
 *		(axon_user_charge_region()); on success the region gives
 *		those bytes back itself, once nothing holds its pages
 *
 * Runs in the client's context (AXON_IOC_SETUP) so the memcg of the caller
 * is charged. Fatal signals abort a large allocation.
 *
 * Return: the region or an ERR_PTR (-ENOMEM, -EINTR).
 */
struct axon_region *axon_region_alloc(const struct axon_params *p,
				      struct axon_user *user)
{
	const gfp_t gfp = GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL |
			  __GFP_ZERO | __GFP_NOWARN;
	struct axon_daemon_page *dp;
	struct axon_region *r;
	unsigned long i;
	int ret;

	BUILD_BUG_ON(sizeof(struct axon_client_page) > PAGE_SIZE);
	BUILD_BUG_ON(sizeof(struct axon_daemon_page) > PAGE_SIZE);

	r = kzalloc(sizeof(*r), GFP_KERNEL_ACCOUNT);
	if (!r)
		return ERR_PTR(-ENOMEM);
	mutex_init(&r->lock);
	r->nr_pages = p->region_size >> PAGE_SHIFT;
	r->pages = kvmalloc_array(r->nr_pages, sizeof(*r->pages),
				  GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL);
	if (!r->pages) {
		ret = -ENOMEM;
		goto err_free_r;
	}
	for (i = 0; i < r->nr_pages; i++) {
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto err_free_pages;
		}
		r->pages[i] = alloc_page(gfp);
		if (!r->pages[i]) {
			ret = -ENOMEM;
			goto err_free_pages;
		}
		if (!(i & 255))
			cond_resched();
	}
	BUILD_BUG_ON(AXON_REGION_HDR_PAGES != 2);
	r->hdr = vmap(r->pages, AXON_REGION_HDR_PAGES, VM_MAP, PAGE_KERNEL);
	if (!r->hdr) {
		ret = -ENOMEM;
		goto err_free_pages;
	}
	r->cpage = r->hdr + p->off_client;
	r->dpage = r->hdr + p->off_daemon;

	r->first[AXON_PART_CLIENT] = p->off_client >> PAGE_SHIFT;
	r->first[AXON_PART_DAEMON] = p->off_daemon >> PAGE_SHIFT;
	r->first[AXON_PART_FRONTIER] = p->off_frontier >> PAGE_SHIFT;
	r->first[AXON_PART_SQES] = p->off_sqes >> PAGE_SHIFT;
	r->first[AXON_PART_CQES] = p->off_cqes >> PAGE_SHIFT;
	r->first[AXON_PART_DATA] = p->off_data >> PAGE_SHIFT;
	for (i = 0; i < AXON_PART_NR - 1; i++)
		r->count[i] = r->first[i + 1] - r->first[i];
	r->count[AXON_PART_DATA] = r->nr_pages - r->first[AXON_PART_DATA];

	dp = r->dpage;
	dp->sq_entries = p->sq_entries;
	dp->sq_mask = p->sq_entries - 1;
	dp->cq_entries = p->cq_entries;
	dp->cq_mask = p->cq_entries - 1;
	dp->state = AXON_CLIENT_STATE_ACTIVE;

	atomic64_add(p->region_size, &axon_dev.stats.region_bytes);
	r->user = user;
	return r;

err_free_pages:
	axon_free_pages(r->pages, i);
	kvfree(r->pages);
err_free_r:
	kfree(r);
	return ERR_PTR(ret);
}

/* The region's bytes go back to its user, once. */
static void axon_region_user_done(struct axon_region *r)
{
	if (r->user_done)
		return;
	r->user_done = true;
	axon_user_uncharge_region(r->user, (u64)r->nr_pages << PAGE_SHIFT);
}

/**
 * axon_region_retire() - drop the kernel's hold on a dead client's pages
 * @r:	the region (NULL: nothing)
 *
 * A client that is refused, disconnected or gone needs no region but the
 * two header pages (poll, fdinfo and /proc read them). Every other page
 * is released now rather than at the last reference to the client; pages
 * still mapped (the daemon's CLIENT_FD mappings, a client that has not
 * unmapped) live on through their PTEs' references until unmapped, and
 * until the last such mapping is closed the region's bytes still count
 * against its user. New mappings of the region are refused from here on.
 * Idempotent.
 */
void axon_region_retire(struct axon_region *r)
{
	const unsigned long keep = AXON_REGION_HDR_PAGES;

	if (!r)
		return;
	mutex_lock(&r->lock);
	if (!r->retired) {
		r->retired = true;
		axon_free_pages(r->pages + keep, r->nr_pages - keep);
		atomic64_sub((u64)(r->nr_pages - keep) << PAGE_SHIFT,
			     &axon_dev.stats.region_bytes);
	}
	if (!r->maps)
		axon_region_user_done(r);
	mutex_unlock(&r->lock);
}

/* Every vma is gone by now: each holds the file that holds the client. */
void axon_region_free(struct axon_region *r)
{
	unsigned long n;

	if (!r)
		return;
	WARN_ON(r->maps);
	axon_region_user_done(r);
	n = r->retired ? AXON_REGION_HDR_PAGES : r->nr_pages;
	atomic64_sub((u64)n << PAGE_SHIFT, &axon_dev.stats.region_bytes);
	vunmap(r->hdr);
	axon_free_pages(r->pages, n);
	kvfree(r->pages);
	kfree(r);
}

/* Nothing is ever faulted in: every page is inserted at mmap time. */
static vm_fault_t axon_vm_fault(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

/*
 * A vma is opened when it is split, moved or copied into a fork child.
 * VM_DONTCOPY keeps it out of children, but MADV_DOFORK clears that flag:
 * a copy in another mm than the one that made the mapping gets
 * VM_WIPEONFORK here, which dup_mmap() checks after this call and before
 * copying the page table, so the child has the vma but none of the pages
 * (touching it faults: SIGBUS). A client's rings and data belong to one
 * process (and the daemon's view of them to the daemon).
 */
static void axon_vm_open(struct vm_area_struct *vma)
{
	if (vma->vm_mm != vma->vm_private_data)
		axon_vm_flags_mod(vma, VM_WIPEONFORK, 0);
}

static const struct vm_operations_struct axon_vm_ops = {
	.open = axon_vm_open,
	.fault = axon_vm_fault,
};

/*
 * A region's vma: the client's file or the daemon's CLIENT_FD file, both
 * with the client as private data, or a delegate's file, whose private
 * data is the delegate. The file (so the client and its region) outlives
 * the vma: the vma's reference is put after ->close.
 */
static struct axon_region *axon_vma_region(struct vm_area_struct *vma)
{
	struct axon_client *c = axon_delegate_file_client(vma->vm_file);

	if (!c)
		c = vma->vm_file->private_data;
	return c->region;
}

/* Every vma of a region is counted, so retirement knows what maps it. */
static void axon_region_vm_open(struct vm_area_struct *vma)
{
	struct axon_region *r = axon_vma_region(vma);

	axon_vm_open(vma);
	mutex_lock(&r->lock);
	r->maps++;
	mutex_unlock(&r->lock);
}

static void axon_region_vm_close(struct vm_area_struct *vma)
{
	struct axon_region *r = axon_vma_region(vma);

	mutex_lock(&r->lock);
	if (!WARN_ON(!r->maps) && !--r->maps && r->retired)
		axon_region_user_done(r);
	mutex_unlock(&r->lock);
}

static const struct vm_operations_struct axon_region_vm_ops = {
	.open = axon_region_vm_open,
	.close = axon_region_vm_close,
	.fault = axon_vm_fault,
};

/*
 * Checks and flags common to every axon mapping: shared only, never
 * executable, read-only parts cannot be made writable later (VM_MAYWRITE
 * cleared), no growth through mremap, not in core dumps, not inherited by
 * fork() children (axon_vm_open for those that undo VM_DONTCOPY).
 */
static int axon_vma_prepare(struct vm_area_struct *vma, bool writable)
{
	vm_flags_t clear = VM_MAYEXEC;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;
	if (!writable) {
		if (vma->vm_flags & VM_WRITE)
			return -EPERM;
		clear |= VM_MAYWRITE;
	}
	axon_vm_flags_mod(vma, VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY,
			  clear);
	vma->vm_ops = &axon_vm_ops;
	/* the mm it belongs to; never dereferenced (axon_vm_open) */
	vma->vm_private_data = vma->vm_mm;
	return 0;
}

static int axon_insert(struct vm_area_struct *vma, struct page **pages,
		       unsigned long n)
{
	unsigned long left = n;
	int ret;

	ret = vm_insert_pages(vma, vma->vm_start, pages, &left);
	/*
	 * On failure mmap_region() unmaps the vma, pages inserted so far
	 * included.
	 */
	if (!ret && left)
		ret = -EFAULT;
	return ret;
}

/**
 * axon_region_mmap() - map part of a region
 * @r:		the region
 * @vma:	the new vma; vm_pgoff selects the part (AXON_OFF_*) and the
 *		page inside it
 * @daemon:	map with the daemon's permissions instead of the client's
 *
 * Return: 0, -EINVAL (offset or size outside one part, MAP_PRIVATE),
 * -EPERM (writable or executable mapping of a read-only part), -ENOENT
 * (the region was retired: the client is dead or gone).
 */
int axon_region_mmap(struct axon_region *r, struct vm_area_struct *vma,
		     bool daemon)
{
	unsigned long npages = vma_pages(vma);
	unsigned long pgoff = vma->vm_pgoff;
	unsigned int i;
	int ret;

	for (i = 0; i < AXON_PART_NR; i++) {
		unsigned long base = axon_part_off[i] >> PAGE_SHIFT;
		unsigned long idx;
		bool writable;

		if (pgoff < base || pgoff - base >= r->count[i])
			continue;
		idx = pgoff - base;
		if (npages > r->count[i] - idx)
			return -EINVAL;
		writable = i == AXON_PART_DATA ||
			   axon_part_client_writes[i] != daemon;
		ret = axon_vma_prepare(vma, writable);
		if (ret)
			return ret;
		mutex_lock(&r->lock);
		if (r->retired)
			ret = -ENOENT;
		else
			ret = axon_insert(vma, r->pages + r->first[i] + idx,
					  npages);
		/* from here on mmap_region() undoes a failure with ->close */
		if (!ret) {
			vma->vm_ops = &axon_region_vm_ops;
			r->maps++;
		}
		mutex_unlock(&r->lock);
		return ret;
	}
	return -EINVAL;
}

/* The global info page the daemon publishes; kept across daemon restarts. */
static struct page *axon_info_pages[DIV_ROUND_UP(AXON_INFO_SIZE, PAGE_SIZE)];

int axon_info_init(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(axon_info_pages); i++) {
		axon_info_pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!axon_info_pages[i]) {
			axon_free_pages(axon_info_pages, i);
			return -ENOMEM;
		}
	}
	return 0;
}

void axon_info_uninit(void)
{
	axon_free_pages(axon_info_pages, ARRAY_SIZE(axon_info_pages));
}

/**
 * axon_info_mmap() - map the info page
 * @vma:	vm_pgoff at AXON_OFF_INFO (or a page inside it)
 * @daemon:	writable for the attached daemon, read-only for clients
 *
 * Return: 0 or a negative errno as for axon_region_mmap().
 */
int axon_info_mmap(struct vm_area_struct *vma, bool daemon)
{
	unsigned long base = AXON_OFF_INFO >> PAGE_SHIFT;
	unsigned long n = ARRAY_SIZE(axon_info_pages);
	unsigned long idx;
	int ret;

	if (vma->vm_pgoff < base || vma->vm_pgoff - base >= n)
		return -EINVAL;
	idx = vma->vm_pgoff - base;
	if (vma_pages(vma) > n - idx)
		return -EINVAL;
	ret = axon_vma_prepare(vma, daemon);
	if (ret)
		return ret;
	return axon_insert(vma, axon_info_pages + idx, vma_pages(vma));
}
