/* SPDX-License-Identifier: GPL-2.0 */
/* Client lifetime, identity and the client-side ioctls. */
#ifndef AXON_KMOD_CLIENT_H
#define AXON_KMOD_CLIENT_H

#include <linux/poll.h>
#include "axon_drv.h"

int axon_client_init(void);
void axon_client_uninit(void);
struct axon_client *axon_client_create(void);
void axon_client_release(struct axon_client *c);
void axon_client_retire(struct axon_client *c);
void axon_client_get(struct axon_client *c);
void axon_client_put(struct axon_client *c);
struct axon_client *axon_client_lookup(u64 id);
struct axon_client *axon_client_next(unsigned long *id);

long axon_client_setup(struct axon_client *c, struct axon_params __user *up);
long axon_client_enter(struct axon_client *c, struct axon_enter __user *ue);
bool axon_client_is_opener(struct axon_client *c);
__poll_t axon_client_poll(struct axon_client *c, struct file *file,
			  struct poll_table_struct *pt);
int axon_client_mmap(struct axon_client *c, struct vm_area_struct *vma);
int axon_client_kstate(struct axon_client *c);
const char *axon_kstate_name(int state);

/**
 * axon_client_state() - the client's state, read without the lock
 * @c:	the client
 *
 * Pairs with the smp_store_release() of every state change, so a state
 * past NEW guarantees @c->region and @c->params are visible.
 */
static inline int axon_client_state(struct axon_client *c)
{
	/* pairs with axon_client_set_state() */
	return smp_load_acquire(&c->state);
}

/**
 * axon_client_set_state() - change the state, under axon_dev.lock
 * @c:		the client
 * @state:	the new state
 *
 * Everything written before (region, params, error) is visible to a
 * lockless reader that sees @state.
 */
static inline void axon_client_set_state(struct axon_client *c, int state)
{
	lockdep_assert_held(&axon_dev.lock);
	/* pairs with axon_client_state() */
	smp_store_release(&c->state, state);
}

#endif
