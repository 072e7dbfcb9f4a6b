/* SPDX-License-Identifier: MIT */
/*
 * util.h - tiny helpers shared by every part of axon.
 *
 * Kept deliberately small: alignment arithmetic, array size, branch hints,
 * min/max and a handful of attribute macros (glibc's <sys/cdefs.h> already
 * provides __always_inline, __attribute_pure__ and friends). Everything is a
 * macro or a static inline function; there is nothing to link.
 */
#ifndef AXON_COMMON_UTIL_H
#define AXON_COMMON_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

/* ---- attributes ------------------------------------------------------- */

/* The caller must look at the result (an error code, an owned pointer). */
#ifndef __must_check
#define __must_check		__attribute__((warn_unused_result))
#endif
#ifndef __maybe_unused
#define __maybe_unused		__attribute__((unused))
#endif
#ifndef __noreturn
#define __noreturn		__attribute__((noreturn))
#endif
/* printf-style format checking: a = format argument, b = first vararg. */
#ifndef __printf
#define __printf(a, b)		__attribute__((format(printf, a, b)))
#endif

/* ---- branch hints ----------------------------------------------------- */

#ifndef likely
#define likely(x)		__builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x)		__builtin_expect(!!(x), 0)
#endif

/* ---- sizes and containers --------------------------------------------- */

/* Number of elements of a true array; a compile error for a pointer. */
#define ARRAY_SIZE(a)							\
	(sizeof(a) / sizeof((a)[0]) +					\
	 sizeof(struct { int _must_be_array : 1 -			\
		 2 * __builtin_types_compatible_p(__typeof__(a),	\
						  __typeof__(&(a)[0])); }) * 0)

/* The structure that contains @ptr as its member @member. */
#ifndef container_of
#define container_of(ptr, type, member)					\
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))
#endif

/* ---- min / max (each argument evaluated once) ------------------------- */

#define min(a, b)	({ __typeof__(a) _mn_a = (a);			\
			   __typeof__(b) _mn_b = (b);			\
			   _mn_a < _mn_b ? _mn_a : _mn_b; })
#define max(a, b)	({ __typeof__(a) _mx_a = (a);			\
			   __typeof__(b) _mx_b = (b);			\
			   _mx_a > _mx_b ? _mx_a : _mx_b; })
/* Both arguments converted to @type first (mixed signedness, widths). */
#define min_t(type, a, b)	min((type)(a), (type)(b))
#define max_t(type, a, b)	max((type)(a), (type)(b))

/* ---- alignment (u64; @a must be a power of two) ----------------------- */

/*
 * ALIGN_UP wraps to a small value if x is within a - 1 of UINT64_MAX; use
 * align_up_u64_checked() where x is untrusted.
 */
#define ALIGN_UP(x, a)		((((uint64_t)(x)) + ((uint64_t)(a) - 1)) & \
				 ~((uint64_t)(a) - 1))
#define ALIGN_DOWN(x, a)	(((uint64_t)(x)) & ~((uint64_t)(a) - 1))
#define IS_ALIGNED(x, a)	((((uint64_t)(x)) & ((uint64_t)(a) - 1)) == 0)
#define IS_POWER_OF_2(x)	((x) != 0 && (((x) & ((x) - 1)) == 0))

/*
 * align_up_u64_checked - round @x up to a multiple of @a (a power of two).
 * Returns false, leaving *out untouched, if the result does not fit in 64
 * bits. O(1).
 */
static inline __must_check bool align_up_u64_checked(uint64_t x, uint64_t a,
						     uint64_t *out)
{
	uint64_t r;

	if (__builtin_add_overflow(x, a - 1, &r))
		return false;
	*out = r & ~(a - 1);
	return true;
}

#endif /* AXON_COMMON_UTIL_H */
