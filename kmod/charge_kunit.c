// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests of the charge logic (charge_tree.c), built as axon_kunit.ko
 * when the kernel has KUnit. The logic runs on a made-up hierarchy of
 * cgroups (struct axon_fake_cg) through its struct axon_cg_ops, which also
 * counts the references taken, so that every case ends by checking that
 * all were given back. The engine is compiled into this module from its
 * source (below) rather than linked: axon.ko exports nothing, and one
 * object cannot belong to two modules.
 */
#include <kunit/test.h>
#include <linux/cgroup-defs.h>
#include <linux/limits.h>
#include <linux/slab.h>

#include "charge_tree.c"

#define K	AXON_CHARGE_DEVICE_MEM

/*
 * A cgroup of the made-up hierarchy: the engine only ever holds the
 * struct cgroup pointer and hands it back to the ops, which find this.
 */
struct axon_fake_cg {
	struct axon_fake_cg *parent;
	u64 id;
	bool dying;
	int refs;
	struct cgroup cg;	/* last: struct cgroup ends in an array */
};

#define AXON_FAKE_MAX	16

struct axon_charge_fixture {
	struct axon_charge_tree tree;
	struct axon_charge_acct acct[2];
	struct axon_fake_cg *cg[AXON_FAKE_MAX];
	unsigned int nr_cg;
};

/* Records moved by a reparent (axon_cg_ops.moved), in the current case. */
static unsigned int axon_fake_moves;

static struct axon_fake_cg *fake_of(struct cgroup *cg)
{
	return container_of(cg, struct axon_fake_cg, cg);
}

static struct cgroup *fake_parent(struct cgroup *cg)
{
	struct axon_fake_cg *p = fake_of(cg)->parent;

	return p ? &p->cg : NULL;
}

static u64 fake_id(struct cgroup *cg)
{
	return fake_of(cg)->id;
}

static bool fake_dying(struct cgroup *cg)
{
	return fake_of(cg)->dying;
}

static void fake_get(struct cgroup *cg)
{
	fake_of(cg)->refs++;
}

static void fake_put(struct cgroup *cg)
{
	fake_of(cg)->refs--;
}

static void fake_moved(struct axon_charge_acct *a, struct cgroup *from,
		       struct cgroup *to)
{
	axon_fake_moves++;
}

static const struct axon_cg_ops fake_ops = {
	.parent = fake_parent,
	.id = fake_id,
	.dying = fake_dying,
	.get = fake_get,
	.put = fake_put,
	.moved = fake_moved,
};

/* A new cgroup under @parent (NULL: the root), ids from 1 in order. */
static struct cgroup *fake_new(struct kunit *test, struct cgroup *parent)
{
	struct axon_charge_fixture *f = test->priv;
	struct axon_fake_cg *cg;

	KUNIT_ASSERT_LT(test, f->nr_cg, AXON_FAKE_MAX);
	cg = kunit_kzalloc(test, sizeof(*cg), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, cg);
	cg->parent = parent ? fake_of(parent) : NULL;
	cg->id = f->nr_cg + 1;
	f->cg[f->nr_cg++] = cg;
	return &cg->cg;
}

static struct axon_cg_node *node(struct kunit *test, struct cgroup *cg)
{
	struct axon_charge_fixture *f = test->priv;
	struct axon_cg_node *n;

	mutex_lock(&f->tree.lock);
	n = axon_tree_node(&f->tree, fake_id(cg));
	mutex_unlock(&f->tree.lock);
	return n;
}

/* Usage of @cg's node, 0 when it has none. */
static u64 usage(struct kunit *test, struct cgroup *cg)
{
	struct axon_cg_node *n = node(test, cg);

	return n ? n->usage[K] : 0;
}

static int charge(struct kunit *test, unsigned int acct, struct cgroup *cg,
		  u64 bytes, struct axon_charge_hit *hit)
{
	struct axon_charge_fixture *f = test->priv;
	struct axon_charge_hit ignored;

	return axon_tree_charge(&f->tree, &f->acct[acct], cg, K, bytes,
				hit ?: &ignored);
}

static int uncharge(struct kunit *test, unsigned int acct, u64 bytes)
{
	struct axon_charge_fixture *f = test->priv;

	return axon_tree_uncharge(&f->tree, &f->acct[acct], K, bytes);
}

static void limit(struct kunit *test, struct cgroup *cg, u64 bytes)
{
	struct axon_charge_fixture *f = test->priv;

	KUNIT_ASSERT_EQ(test, 0, axon_tree_limit_set(&f->tree, cg, K, bytes));
}

static int axon_charge_test_init(struct kunit *test)
{
	struct axon_charge_fixture *f;
	unsigned int i;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	axon_charge_tree_init(&f->tree, &fake_ops);
	for (i = 0; i < ARRAY_SIZE(f->acct); i++)
		axon_charge_acct_init(&f->acct[i]);
	axon_fake_moves = 0;
	test->priv = f;
	return 0;
}

/*
 * Every case ends here: closing the accounts gives everything back, so no
 * node may keep usage, and every reference taken was dropped.
 */
static void axon_charge_test_exit(struct kunit *test)
{
	struct axon_charge_fixture *f = test->priv;
	struct axon_cg_node *n;
	unsigned long idx;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(f->acct); i++) {
		axon_tree_close(&f->tree, &f->acct[i], true);
		KUNIT_EXPECT_EQ(test, 0, f->acct[i].nr_recs);
		KUNIT_EXPECT_TRUE(test, list_empty(&f->acct[i].recs));
	}
	xa_for_each(&f->tree.nodes, idx, n)
		KUNIT_EXPECT_EQ(test, 0, n->usage[K]);
	axon_charge_tree_destroy(&f->tree);
	for (i = 0; i < f->nr_cg; i++)
		KUNIT_EXPECT_EQ_MSG(test, 0, f->cg[i]->refs,
				    "cgroup %llu keeps references",
				    f->cg[i]->id);
}

static void charge_within_at_over_limit(struct kunit *test)
{
	struct axon_charge_fixture *f = test->priv;
	struct cgroup *root = fake_new(test, NULL);
	struct cgroup *a = fake_new(test, root);
	struct axon_charge_hit hit = { 0 };

	limit(test, a, 100);
	KUNIT_EXPECT_EQ(test, 0, charge(test, 0, a, 60, NULL));
	KUNIT_EXPECT_EQ(test, 60, usage(test, a));
	/* exactly at the limit is allowed */
	KUNIT_EXPECT_EQ(test, 0, charge(test, 0, a, 40, NULL));
	KUNIT_EXPECT_EQ(test, 100, usage(test, a));
	KUNIT_EXPECT_EQ(test, 100, usage(test, root));
	KUNIT_EXPECT_EQ(test, -EDQUOT, charge(test, 0, a, 1, &hit));
	KUNIT_EXPECT_EQ(test, fake_id(a), hit.id);
	KUNIT_EXPECT_EQ(test, 100, hit.usage);
	KUNIT_EXPECT_EQ(test, 100, hit.limit);
	KUNIT_EXPECT_EQ(test, 100, usage(test, a));
	KUNIT_EXPECT_EQ(test, 100, usage(test, root));
	KUNIT_EXPECT_EQ(test, 100, f->acct[0].charged[K]);
	KUNIT_EXPECT_EQ(test, 1, f->tree.stat.fails);
	KUNIT_EXPECT_EQ(test, 2, f->tree.stat.charges);
	/* a limit below the usage is accepted; charges fail from then on */
	limit(test, a, 50);
	KUNIT_EXPECT_EQ(test, -EDQUOT, charge(test, 0, a, 1, NULL));
	KUNIT_EXPECT_EQ(test, 0, uncharge(test, 0, 60));
	KUNIT_EXPECT_EQ(test, 0, charge(test, 0, a, 10, NULL));
	KUNIT_EXPECT_EQ(test, 50, usage(test, a));
	/* a zero charge is nothing, even at the limit */
	KUNIT_EXPECT_EQ(test, 0, charge(test, 0, a, 0, NULL));
}

static void failed_charge_backs_out(struct kunit *test)
{
	struct axon_charge_fixture *f = test->priv;
	struct cgroup *root = fake_new(test, NULL);
	struct cgroup *a = fake_new(test, root);
	struct cgroup *b = fake_new(test, a);
	struct cgroup *c = fake_new(test, b);

	limit(test, a, 50);
	/* c and b had no nodes: the refused charge leaves none behind */
	KUNIT_EXPECT_EQ(test, -EDQUOT, charge(test, 0, c, 60, NULL));
	KUNIT_EXPECT_NULL(test, node(test, c));
	KUNIT_EXPECT_NULL(test, node(test, b));
	KUNIT_EXPECT_NULL(test, node(test, root));
	KUNIT_ASSERT_NOT_NULL(test, node(test, a));
	KUNIT_EXPECT_EQ(test, 0, usage(test, a));
	KUNIT_EXPECT_EQ(test, 0, f->acct[0].charged[K]);
	KUNIT_EXPECT_EQ(test, 0, f->acct[0].nr_recs);
	KUNIT_EXPECT_EQ(test, 0, fake_of(c)->refs);
	/* with usage on the path, a refused charge changes none of it */
	KUNIT_EXPECT_EQ(test, 0, charge(test, 0, c, 30, NULL));
	KUNIT_EXPECT_EQ(test, -EDQUOT, charge(test, 0, c, 30, NULL));
	KUNIT_EXPECT_EQ(test, 30, usage(test, c));
	KUNIT_EXPECT_EQ(test, 30, usage(test, b));
	KUNIT_EXPECT_EQ(test, 30, usage(test, a));
	KUNIT_EXPECT_EQ(test, 30, usage(test, root));
	KUNIT_EXPECT_EQ(test, 30, f->acct[0].charged[K]);
	KUNIT_EXPECT_EQ(test, 0, node(test, c)->failcnt[K]);
	KUNIT_EXPECT_EQ(test, 0, node(test, b)->failcnt[K]);
	KUNIT_EXPECT_EQ(test, 2, node(test, a)->failcnt[K]);
	KUNIT_EXPECT_EQ(test, 2, f->tree.stat.fails);
}

static void uncharge_gives_back(struct kunit *test)
{
	struct axon_charge_fixture *f = test->priv;
	struct cgroup *root = fake_new(test, NULL);
	struct cgroup *a = fake_new(test, root);
	struct cgroup *b = fake_new(test, a);
	struct cgroup *d = fake_new(test, root);

	KUNIT_EXPECT_EQ(test, 0, charge(test, 0, b, 100, NULL));
	/* b: its node's and the record's references; a: its node's */
	KUNIT_EXPECT_EQ(test, 2, fake_of(b)->refs);
	KUNIT_EXPECT_EQ(test, 1, fake_of(a)->refs);
	KUNIT_EXPECT_EQ(test, 0, uncharge(test, 0, 40));
	KUNIT_EXPECT_EQ(test, 60, usage(test, b));
	KUNIT_EXPECT_EQ(test, 60, usage(test, a));
	KUNIT_EXPECT_EQ(test, 60, usage(test, root));
	/* more than held is refused and changes nothing */
	KUNIT_EXPECT_EQ(test, -EINVAL, uncharge(test, 0, 61));
	KUNIT_EXPECT_EQ(test, 60, usage(test, b));
	KUNIT_EXPECT_EQ(test, 0, uncharge(test, 0, 0));
	/* the last byte back: nodes without a limit go, with their refs */
	KUNIT_EXPECT_EQ(test, 0, uncharge(test, 0, 60));
	KUNIT_EXPECT_NULL(test, node(test, b));
	KUNIT_EXPECT_NULL(test, node(test, a));
	KUNIT_EXPECT_NULL(test, node(test, root));
	KUNIT_EXPECT_EQ(test, 0, fake_of(b)->refs);
	KUNIT_EXPECT_EQ(test, 0, f->acct[0].nr_recs);
	/* most recently charged cgroup first: d's 20, then 5 of b's 10 */
	KUNIT_EXPECT_EQ(test, 0, charge(test, 0, b, 10, NULL));
	KUNIT_EXPECT_EQ(test, 0, charge(test, 0, d, 20, NULL));
	KUNIT_EXPECT_EQ(test, 2, f->acct[0].nr_recs);
	KUNIT_EXPECT_EQ(test, 0, uncharge(test, 0, 25));
	KUNIT_EXPECT_NULL(test, node(test, d));
	KUNIT_EXPECT_EQ(test, 5, usage(test, b));
	KUNIT_EXPECT_EQ(test, 5, usage(test, root));
	KUNIT_EXPECT_EQ(test, 1, f->acct[0].nr_recs);
	KUNIT_EXPECT_EQ(test, 5, axon_tree_acct_total(&f->acct[0]));
	/* closed: charges and uncharges are refused */
	axon_tree_close(&f->tree, &f->acct[0], true);
	KUNIT_EXPECT_EQ(test, 0, usage(test, root));
	KUNIT_EXPECT_EQ(test, -ENOENT, charge(test, 0, b, 1, NULL));
	KUNIT_EXPECT_EQ(test, -ENOENT, uncharge(test, 0, 1));
	/* the daemon's going (not final) gives back but keeps it open */
	KUNIT_EXPECT_EQ(test, 0, charge(test, 1, b, 7, NULL));
	axon_tree_close(&f->tree, &f->acct[1], false);
	KUNIT_EXPECT_EQ(test, 0, usage(test, b));
	KUNIT_EXPECT_EQ(test, 0, charge(test, 1, b, 7, NULL));
}

static void peak_and_failcnt(struct kunit *test)
{
	struct cgroup *root = fake_new(test, NULL);
	struct cgroup *a = fake_new(test, root);
	struct axon_cg_node *n;

	limit(test, a, 100);
	KUNIT_EXPECT_EQ(test, 0, charge(test, 0, a, 70, NULL));
	KUNIT_EXPECT_EQ(test, 0, uncharge(test, 0, 50));
	KUNIT_EXPECT_EQ(test, 0, charge(test, 0, a, 10, NULL));
	n = node(test, a);
	KUNIT_ASSERT_NOT_NULL(test, n);
	KUNIT_EXPECT_EQ(test, 30, n->usage[K]);
	KUNIT_EXPECT_EQ(test, 70, n->peak[K]);
	KUNIT_EXPECT_EQ(test, 70, node(test, root)->peak[K]);
	KUNIT_EXPECT_EQ(test, 0, n->failcnt[K]);
	KUNIT_EXPECT_EQ(test, -EDQUOT, charge(test, 0, a, 71, NULL));
	KUNIT_EXPECT_EQ(test, -EDQUOT, charge(test, 1, a, 80, NULL));
	KUNIT_EXPECT_EQ(test, 2, n->failcnt[K]);
	/* a refused charge raises no peak; the root never refused */
	KUNIT_EXPECT_EQ(test, 70, n->peak[K]);
	KUNIT_EXPECT_EQ(test, 0, node(test, root)->failcnt[K]);
	KUNIT_EXPECT_EQ(test, 0, charge(test, 1, a, 70, NULL));
	KUNIT_EXPECT_EQ(test, 100, n->peak[K]);
}

static void nested_limits(struct kunit *test)
{
	struct cgroup *root = fake_new(test, NULL);
	struct cgroup *a = fake_new(test, root);
	struct cgroup *b = fake_new(test, a);
	struct cgroup *c = fake_new(test, b);
	struct cgroup *e = fake_new(test, a);
	struct axon_charge_hit hit = { 0 };

	/* the tightest on the path refuses, here the nearest */
	limit(test, root, 1000);
	limit(test, a, 500);
	limit(test, b, 200);
	KUNIT_EXPECT_EQ(test, -EDQUOT, charge(test, 0, c, 300, &hit));
	KUNIT_EXPECT_EQ(test, fake_id(b), hit.id);
	KUNIT_EXPECT_EQ(test, 200, hit.limit);
	/* an ancestor tighter than the nearest limit refuses first */
	limit(test, a, 100);
	memset(&hit, 0, sizeof(hit));
	KUNIT_EXPECT_EQ(test, -EDQUOT, charge(test, 0, c, 150, &hit));
	KUNIT_EXPECT_EQ(test, fake_id(a), hit.id);
	KUNIT_EXPECT_EQ(test, 100, hit.limit);
	KUNIT_EXPECT_EQ(test, 1, node(test, a)->failcnt[K]);
	KUNIT_EXPECT_EQ(test, 1, node(test, b)->failcnt[K]);
	/* siblings share their parent's limit: e, unlimited, is held by a */
	KUNIT_EXPECT_EQ(test, 0, charge(test, 0, c, 80, NULL));
	memset(&hit, 0, sizeof(hit));
	KUNIT_EXPECT_EQ(test, -EDQUOT, charge(test, 1, e, 30, &hit));
	KUNIT_EXPECT_EQ(test, fake_id(a), hit.id);
	KUNIT_EXPECT_EQ(test, 80, hit.usage);
	KUNIT_EXPECT_EQ(test, 0, charge(test, 1, e, 20, NULL));
	KUNIT_EXPECT_EQ(test, 100, usage(test, a));
	KUNIT_EXPECT_EQ(test, 100, usage(test, root));
	/* removing a limit lets the next one up decide */
	limit(test, a, AXON_LIMIT_NONE);
	KUNIT_EXPECT_EQ(test, 0, charge(test, 1, e, 300, NULL));
	KUNIT_EXPECT_EQ(test, 400, usage(test, root));
}

static void reparent_to_live_ancestor(struct kunit *test)
{
	struct axon_charge_fixture *f = test->priv;
	struct cgroup *root = fake_new(test, NULL);
	struct cgroup *a = fake_new(test, root);
	struct cgroup *b = fake_new(test, a);
	struct cgroup *c = fake_new(test, b);

	limit(test, b, 1000);
	KUNIT_EXPECT_EQ(test, 0, charge(test, 0, c, 40, NULL));
	KUNIT_EXPECT_EQ(test, 0, charge(test, 0, a, 10, NULL));
	KUNIT_EXPECT_EQ(test, 0, charge(test, 1, c, 5, NULL));
	KUNIT_EXPECT_EQ(test, 2, f->acct[0].nr_recs);
	/* c and b removed: a is the nearest live ancestor */
	fake_of(c)->dying = true;
	fake_of(b)->dying = true;
	/* account 0 moves on its next uncharge, into its record of a */
	KUNIT_EXPECT_EQ(test, 0, uncharge(test, 0, 5));
	KUNIT_EXPECT_EQ(test, 1, f->acct[0].nr_recs);
	KUNIT_EXPECT_EQ(test, 45, f->acct[0].charged[K]);
	KUNIT_EXPECT_EQ(test, 50, usage(test, a));
	KUNIT_EXPECT_EQ(test, 50, usage(test, root));
	/* account 1's 5 still sit on c and b until it, or a reader, moves */
	KUNIT_EXPECT_EQ(test, 5, usage(test, c));
	KUNIT_EXPECT_EQ(test, 5, usage(test, b));
	/* setting a limit anywhere moves every dying cgroup's charges */
	limit(test, root, AXON_LIMIT_NONE);
	KUNIT_EXPECT_NULL(test, node(test, c));
	/* b's limit meant nothing once it was removed: its node is gone */
	KUNIT_EXPECT_NULL(test, node(test, b));
	KUNIT_EXPECT_EQ(test, 50, usage(test, a));
	KUNIT_EXPECT_EQ(test, 0, fake_of(c)->refs);
	KUNIT_EXPECT_EQ(test, 0, fake_of(b)->refs);
	KUNIT_EXPECT_EQ(test, 2, axon_fake_moves);
	/* a charge to a dying cgroup goes to its live ancestor */
	KUNIT_EXPECT_EQ(test, 0, charge(test, 1, c, 7, NULL));
	KUNIT_EXPECT_NULL(test, node(test, c));
	KUNIT_EXPECT_EQ(test, 57, usage(test, a));
	KUNIT_EXPECT_EQ(test, 1, f->acct[1].nr_recs);
	/* and the uncharges follow: all back from a */
	KUNIT_EXPECT_EQ(test, 0, uncharge(test, 1, 12));
	KUNIT_EXPECT_EQ(test, 45, usage(test, a));
	KUNIT_EXPECT_EQ(test, 0, f->acct[1].nr_recs);
}

static void per_client_cgroup_bound(struct kunit *test)
{
	struct axon_charge_fixture *f = test->priv;
	struct cgroup *root = fake_new(test, NULL);
	struct cgroup *cg[AXON_CLIENT_CGROUPS + 1];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cg); i++)
		cg[i] = fake_new(test, root);
	for (i = 0; i < AXON_CLIENT_CGROUPS; i++)
		KUNIT_EXPECT_EQ(test, 0, charge(test, 0, cg[i], 1, NULL));
	KUNIT_EXPECT_EQ(test, AXON_CLIENT_CGROUPS, f->acct[0].nr_recs);
	KUNIT_EXPECT_EQ(test, -ENOSPC,
			charge(test, 0, cg[AXON_CLIENT_CGROUPS], 1, NULL));
	KUNIT_EXPECT_NULL(test, node(test, cg[AXON_CLIENT_CGROUPS]));
	KUNIT_EXPECT_EQ(test, AXON_CLIENT_CGROUPS, usage(test, root));
	/* a cgroup it already holds charges in is no new one */
	KUNIT_EXPECT_EQ(test, 0, charge(test, 0, cg[0], 1, NULL));
	/* another account has its own bound */
	KUNIT_EXPECT_EQ(test, 0,
			charge(test, 1, cg[AXON_CLIENT_CGROUPS], 1, NULL));
	/* the newest (cg[0], just charged) goes first: a slot frees */
	KUNIT_EXPECT_EQ(test, 0, uncharge(test, 0, 2));
	KUNIT_EXPECT_EQ(test, AXON_CLIENT_CGROUPS - 1, f->acct[0].nr_recs);
	KUNIT_EXPECT_EQ(test, 0,
			charge(test, 0, cg[AXON_CLIENT_CGROUPS], 1, NULL));
	KUNIT_EXPECT_EQ(test, AXON_CLIENT_CGROUPS, f->acct[0].nr_recs);
}

static void overflow_near_u64_max(struct kunit *test)
{
	struct axon_charge_fixture *f = test->priv;
	struct cgroup *root = fake_new(test, NULL);
	struct cgroup *a = fake_new(test, root);
	struct cgroup *b = fake_new(test, root);

	KUNIT_EXPECT_EQ(test, 0, charge(test, 0, a, U64_MAX - 10, NULL));
	/* the account's own total would wrap */
	KUNIT_EXPECT_EQ(test, -EOVERFLOW, charge(test, 0, b, 11, NULL));
	KUNIT_EXPECT_NULL(test, node(test, b));
	KUNIT_EXPECT_EQ(test, U64_MAX - 10, f->acct[0].charged[K]);
	/* another account in the same cgroup would wrap its usage */
	KUNIT_EXPECT_EQ(test, -EOVERFLOW, charge(test, 1, a, 11, NULL));
	KUNIT_EXPECT_EQ(test, U64_MAX - 10, usage(test, a));
	KUNIT_EXPECT_EQ(test, U64_MAX - 10, usage(test, root));
	KUNIT_EXPECT_EQ(test, 0, f->acct[1].charged[K]);
	KUNIT_EXPECT_EQ(test, 0, f->acct[1].nr_recs);
	/* and a sibling would wrap the root's, with nothing left on b */
	KUNIT_EXPECT_EQ(test, -EOVERFLOW, charge(test, 1, b, 11, NULL));
	KUNIT_EXPECT_NULL(test, node(test, b));
	/* up to 2^64 - 1 exactly is fine */
	KUNIT_EXPECT_EQ(test, 0, charge(test, 1, b, 10, NULL));
	KUNIT_EXPECT_EQ(test, U64_MAX, usage(test, root));
	KUNIT_EXPECT_EQ(test, -EOVERFLOW, charge(test, 1, b, 1, NULL));
	KUNIT_EXPECT_EQ(test, -EINVAL, uncharge(test, 1, U64_MAX));
	/* a limit of 2^64 - 2 is a limit, not "none" */
	KUNIT_EXPECT_EQ(test, 0, uncharge(test, 0, U64_MAX - 10));
	limit(test, a, U64_MAX - 1);
	KUNIT_EXPECT_EQ(test, -EDQUOT, charge(test, 0, a, U64_MAX, NULL));
	KUNIT_EXPECT_EQ(test, 0, charge(test, 0, a, 5, NULL));
	KUNIT_EXPECT_EQ(test, 15, usage(test, root));
}

static struct kunit_case axon_charge_cases[] = {
	KUNIT_CASE(charge_within_at_over_limit),
	KUNIT_CASE(failed_charge_backs_out),
	KUNIT_CASE(uncharge_gives_back),
	KUNIT_CASE(peak_and_failcnt),
	KUNIT_CASE(nested_limits),
	KUNIT_CASE(reparent_to_live_ancestor),
	KUNIT_CASE(per_client_cgroup_bound),
	KUNIT_CASE(overflow_near_u64_max),
	{}
};

static struct kunit_suite axon_charge_suite = {
	.name = "axon_charge",
	.init = axon_charge_test_init,
	.exit = axon_charge_test_exit,
	.test_cases = axon_charge_cases,
};

kunit_test_suite(axon_charge_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit tests of axon's cgroup charge logic");
