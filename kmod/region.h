/* SPDX-License-Identifier: GPL-2.0 */
/* A client's shared region and the global info page: allocation and mmap. */
#ifndef AXON_KMOD_REGION_H
#define AXON_KMOD_REGION_H

#include <linux/mutex.h>
#include <linux/types.h>
#include <linux/axon.h>

struct vm_area_struct;
struct page;
struct axon_user;

enum axon_part {
	AXON_PART_CLIENT,
	AXON_PART_DAEMON,
	AXON_PART_FRONTIER,
	AXON_PART_SQES,
	AXON_PART_CQES,
	AXON_PART_DATA,
	AXON_PART_NR
};

/**
 * struct axon_region - the pages of one client's region
 * @pages:	every page, in region order (GFP_KERNEL_ACCOUNT, charged to
 *		the memcg of the task that called SETUP)
 * @nr_pages:	number of @pages
 * @hdr:	kernel mapping of the client and daemon pages
 * @cpage:	the client page in @hdr
 * @dpage:	the daemon page in @hdr
 * @first:	each part's first page index
 * @count:	each part's page count
 * @lock:	serialises mmap, the mappings' open and close against
 *		axon_region_retire()
 * @retired:	the kernel dropped its references to every page but the two
 *		header pages; no new mapping of them; under @lock
 * @maps:	vmas mapping part of the region (client and daemon side,
 *		split and fork copies included); under @lock
 * @user:	the user the region's bytes count against (user.c), until
 *		@user_done
 * @user_done:	the bytes went back to @user: the region is retired and
 *		nothing maps it, or it was freed; under @lock
 *
 * Geometry immutable after axon_region_alloc(); freed by
 * axon_region_free() when the client object dies. User mappings keep
 * their own page references, so retiring a region frees only the pages
 * nothing maps, and its bytes keep counting against the user until the
 * last mapping goes (a disconnected client that keeps its mappings still
 * holds the pages).
 */
struct axon_region {
	struct page **pages;
	unsigned long nr_pages;
	void *hdr;
	struct axon_client_page *cpage;
	struct axon_daemon_page *dpage;
	unsigned long first[AXON_PART_NR];
	unsigned long count[AXON_PART_NR];
	struct mutex lock;	/* mmap, vma open/close against retirement */
	bool retired;
	unsigned long maps;
	struct axon_user *user;
	bool user_done;
};

/* The client and daemon pages, vmap()ed: kept until the region is freed. */
#define AXON_REGION_HDR_PAGES	2

/*
 * The daemon page's sq_flags is the daemon's word (NEED_WAKEUP), which
 * the kernel also writes (DAEMON_GONE): with delegates a worker writes it
 * while the supervisor's detach sets DAEMON_GONE, so the kernel's changes
 * are atomic read-modify-writes, as the daemon's are, and neither undoes
 * the other's bit. The word is a naturally aligned __u32.
 */
static inline void axon_sq_flags_set(struct axon_region *r, u32 bits)
{
	atomic_or(bits, (atomic_t *)&r->dpage->sq_flags);
}

static inline void axon_sq_flags_clear(struct axon_region *r, u32 bits)
{
	atomic_andnot(bits, (atomic_t *)&r->dpage->sq_flags);
}

int axon_region_geometry(const struct axon_params *req, struct axon_params *p);
struct axon_region *axon_region_alloc(const struct axon_params *p,
				      struct axon_user *user);
void axon_region_retire(struct axon_region *r);
void axon_region_free(struct axon_region *r);
int axon_region_mmap(struct axon_region *r, struct vm_area_struct *vma,
		     bool daemon);

int axon_info_init(void);
void axon_info_uninit(void);
int axon_info_mmap(struct vm_area_struct *vma, bool daemon);

#endif
