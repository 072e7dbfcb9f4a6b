// SPDX-License-Identifier: MIT
/* Walking a client's handle tables (teardown, per-context destruction). */
#include "axond.h"

void handle_table_for_each(struct handle_table *t, void (*fn)(void *obj, void *arg),
			   void *arg)
{
	uint32_t pos = 0;
	uint64_t h;
	void *obj;

	/* handle_iter tolerates the visited handle being freed by fn. */
	while (handle_iter(t, 0, &pos, &h, &obj))
		fn(obj, arg);
}
