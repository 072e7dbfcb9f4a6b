/* SPDX-License-Identifier: MIT */
/*
 * le.h - little-endian words read from a byte buffer at any alignment.
 *
 * CUDA's image formats (fatbin containers, cubins) are little-endian and
 * their words need not be aligned in the buffer a program hands over, so
 * they are copied out, never pointed at. Only little-endian hosts are
 * built for, so a copy is the conversion.
 */
#ifndef AXON_COMMON_LE_H
#define AXON_COMMON_LE_H

#include <stdint.h>
#include <string.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "image formats are read as little-endian host words");

static inline uint16_t rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

#endif /* AXON_COMMON_LE_H */
