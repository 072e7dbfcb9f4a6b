/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * axon: where each part of a client's shared region lies.
 *
 * One function lays a region out from the sizes a client asks for. The
 * kernel module (AXON_IOC_SETUP), axond (the socket hello) and libaxon (to
 * check what either sent) all call it, so the three cannot drift apart. The
 * parts follow each other in this order, each starting on a page boundary
 * and taking a whole number of pages:
 *
 *   client page, daemon page, frontier, SQEs, CQEs, data area.
 *
 * Each side brings its own rules: the page size it maps with, the data
 * area a client gets when it asks for none, and the largest it serves.
 * Everything else is fixed here: an SQ of AXON_DEFAULT_SQ_ENTRIES by
 * default, a CQ twice the SQ by default, both rounded up to powers of two,
 * AXON_MAX_FRONTIER frontier slots.
 *
 * Only __u32/__u64 arithmetic: it builds in the kernel and without libc.
 */
#ifndef _UAPI_LINUX_AXON_LAYOUT_H
#define _UAPI_LINUX_AXON_LAYOUT_H

#include <linux/types.h>
#include <linux/errno.h>
#include <linux/axon.h>

#define AXON_DEFAULT_SQ_ENTRIES	256
/* The largest page a side may lay a region out with (arm64's 64 KiB). */
#define AXON_LAYOUT_MAX_PAGE	65536ULL

/**
 * struct axon_layout_rules - what one side allows when it lays out a region
 * @page_size:		every part starts on a multiple of it; a power of
 *			two from AXON_PAGE_SIZE to AXON_LAYOUT_MAX_PAGE
 * @default_data_size:	data area bytes for a client that asks for 0
 * @max_data_size:	the largest data area served; at most
 *			AXON_MAX_DATA_SIZE
 */
struct axon_layout_rules {
	__u64 page_size;
	__u64 default_data_size;
	__u64 max_data_size;
};

/* Which size axon_region_layout() found out of range. */
enum axon_layout_bad {
	AXON_LAYOUT_OK,
	AXON_LAYOUT_BAD_SQ,	/* sq_entries above AXON_MAX_SQ_ENTRIES */
	AXON_LAYOUT_BAD_CQ,	/* cq_entries below the SQ or above twice its maximum */
	AXON_LAYOUT_BAD_DATA,	/* data_size above the rules' maximum */
	AXON_LAYOUT_BAD_RULES,	/* the caller's rules themselves */
	AXON_LAYOUT_BAD_REGION,	/* the region would pass 2^64 bytes */
};

/* @v rounded up to a multiple of @page (a power of two); 0 if that wraps. */
static inline __u64 __axon_layout_round(__u64 v, __u64 page)
{
	if (v > ~(__u64)0 - (page - 1))
		return 0;
	return (v + page - 1) & ~(page - 1);
}

/* The smallest power of two >= @v, for @v <= 2^31. */
static inline __u32 __axon_layout_pow2(__u32 v)
{
	__u32 p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/*
 * Places a part of @len bytes at *@end, the region's end so far: *@at gets
 * its offset and *@end moves past its last page. 0, or -EINVAL if the
 * region would pass 2^64 bytes.
 */
static inline int __axon_layout_place(__u64 *end, __u64 *at, __u64 len,
				      __u64 page)
{
	__u64 span = __axon_layout_round(len, page);

	if (len && !span)
		return -EINVAL;
	if (*end > ~(__u64)0 - span)
		return -EINVAL;
	*at = *end;
	*end += span;
	return 0;
}

/**
 * axon_region_layout() - every offset and the total size of a region
 * @p:		in: sq_entries, cq_entries and data_size as asked for (0: the
 *		default); out: those as granted, frontier_entries, the six
 *		off_* fields and region_size. Other fields are not touched.
 * @rules:	the calling side's page size and data-area limits
 * @bad:	if not NULL, set to the AXON_LAYOUT_* that names what was out
 *		of range (AXON_LAYOUT_OK on success)
 *
 * Laying out what it granted again gives the same answer, which is how a
 * client checks what it was sent. On failure @p is not changed.
 *
 * Return: 0, or -EINVAL when a size (or a rule) is out of range.
 */
static inline int axon_region_layout(struct axon_params *p,
				     const struct axon_layout_rules *rules,
				     __u32 *bad)
{
	const __u64 page = rules->page_size;
	__u64 max_data = rules->max_data_size;
	struct axon_params l = *p;
	__u32 why = AXON_LAYOUT_OK;
	__u64 data, end = 0;
	__u32 sq, cq;

	if (page < AXON_PAGE_SIZE || page > AXON_LAYOUT_MAX_PAGE ||
	    (page & (page - 1))) {
		why = AXON_LAYOUT_BAD_RULES;
		goto out;
	}
	if (max_data > AXON_MAX_DATA_SIZE)
		max_data = AXON_MAX_DATA_SIZE;

	sq = p->sq_entries ? p->sq_entries : AXON_DEFAULT_SQ_ENTRIES;
	if (sq > AXON_MAX_SQ_ENTRIES) {
		why = AXON_LAYOUT_BAD_SQ;
		goto out;
	}
	sq = __axon_layout_pow2(sq);
	cq = p->cq_entries ? p->cq_entries : 2 * sq;
	if (cq > 2 * AXON_MAX_SQ_ENTRIES || cq < sq) {
		why = AXON_LAYOUT_BAD_CQ;
		goto out;
	}
	cq = __axon_layout_pow2(cq);

	data = p->data_size ? p->data_size : rules->default_data_size;
	/* Checked before rounding too: near 2^64 it would wrap to 0. */
	if (data > max_data) {
		why = AXON_LAYOUT_BAD_DATA;
		goto out;
	}
	/* A data area is at least one page, even if the default is 0. */
	data = __axon_layout_round(data ? data : 1, page);
	if (!data || data > max_data) {
		why = AXON_LAYOUT_BAD_DATA;
		goto out;
	}

	l.sq_entries = sq;
	l.cq_entries = cq;
	l.data_size = data;
	l.frontier_entries = AXON_MAX_FRONTIER;
	if (__axon_layout_place(&end, &l.off_client, page, page) ||
	    __axon_layout_place(&end, &l.off_daemon, page, page) ||
	    __axon_layout_place(&end, &l.off_frontier,
				(__u64)l.frontier_entries * sizeof(__u64), page) ||
	    __axon_layout_place(&end, &l.off_sqes,
				(__u64)sq * AXON_SQE_SIZE, page) ||
	    __axon_layout_place(&end, &l.off_cqes,
				(__u64)cq * AXON_CQE_SIZE, page) ||
	    __axon_layout_place(&end, &l.off_data, data, page)) {
		why = AXON_LAYOUT_BAD_REGION;
		goto out;
	}
	l.region_size = end;
	*p = l;
out:
	if (bad)
		*bad = why;
	return why == AXON_LAYOUT_OK ? 0 : -EINVAL;
}

#endif /* _UAPI_LINUX_AXON_LAYOUT_H */
