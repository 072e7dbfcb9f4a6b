// SPDX-License-Identifier: MIT
/*
 * Images the daemon's driver refused for a device, by length and content
 * (shim.h: shim_image_refused). cuDNN 9 loads a library, asks it for
 * kernels and unloads it again on every use when the kernels cannot be
 * had, and does not when the load itself fails, as a driver loading
 * eagerly (what cuModuleGetLoadingMode says here) fails it. Seen on the
 * H200: libraries of cuDNN's xmma reorder kernels, which have no code for
 * sm_90, were sent to axond ~160 times per training step of a small CNN
 * (each a module load refused with NO_BINARY_FOR_GPU), 16x slower than
 * native. Remembering a refusal by the caller's address (preserved images
 * only) still left ~10 refused loads per step (2026-11-29 17:25 UTC, 363
 * in a 35-step run): images that are not preserved are copied and come at
 * a new address each time. So the key is the content, a hash of the whole
 * image, computed only for an image whose length some refusal has: the
 * next module load of the same image fails at once, without crossing,
 * with the answer the daemon's driver gave. The driver's verdict on an
 * image for a device does not change (JIT options are not sent: the
 * daemon loads every image alike).
 *
 * Failing cuLibraryLoadData itself changes what the caller sees, so that
 * is kept to the case known to help: the same preserved image at the same
 * address. Failing every library load of refused content made cuDNN give
 * up on the CNN ("unable to find an engine", H200, 17:30 UTC).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fatbin.h"
#include "shim.h"

#define MAX_REFUSED	1024

static struct refused {
	const void *addr;	/* where the refused image lay */
	size_t len;
	uint64_t hash;
	CUdevice dev;
	CUresult err;
} refused[MAX_REFUSED];
static unsigned int nrefused, next_refused;
static pthread_mutex_t refused_lock = PTHREAD_MUTEX_INITIALIZER;

/* A 64-bit hash of all of the image (8 bytes a step; the tail by bytes). */
static uint64_t content_hash(const void *image, size_t len)
{
	const unsigned char *p = image;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		uint64_t v;

		memcpy(&v, p + i, sizeof(v));
		h = (h ^ v) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

static bool image_error(CUresult r)
{
	return r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_IMAGE ||
	       r == CUDA_ERROR_INVALID_PTX || r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
}

/* refused_lock held; *hash computed on first need. */
static CUresult lookup(const void *image, size_t len, CUdevice dev, bool at,
		       uint64_t *hash, bool *hashed)
{
	unsigned int i;

	for (i = 0; i < nrefused; i++) {
		if (refused[i].len != len || refused[i].dev != dev ||
		    (at && refused[i].addr != image))
			continue;
		if (!*hashed) {
			*hash = content_hash(image, len);
			*hashed = true;
		}
		if (refused[i].hash == *hash)
			return refused[i].err;
	}
	return CUDA_SUCCESS;
}

/*
 * With AXON_LOG=2: what a refused image holds (a fatbin's entries: kind,
 * architecture, flags), to tell an image without code for the device from
 * one that has it.
 */
static void describe(const void *image, size_t len, CUdevice dev, CUresult err)
{
	const char *lvl = getenv("AXON_LOG");
	struct fatbin_iter it;
	struct fatbin_entry e;
	char line[512];
	size_t off = 0;

	if (!lvl || strcmp(lvl, "2") || len < 16)
		return;
	if (!fatbin_is_container(image, len)) {
		shim_log("image of %zu bytes refused on device %d (%d): not a fatbin (%.4s)",
			 len, dev, (int)err, (const char *)image);
		return;
	}
	off += (size_t)snprintf(line, sizeof(line), "%zu bytes:", len);
	/* the entries up to the first malformed header, as many as fit */
	fatbin_iter_init(&it, image, len);
	while (off < sizeof(line) - 40 && fatbin_next(&it, &e) == FATBIN_ENTRY)
		off += (size_t)snprintf(line + off, sizeof(line) - off, " %s%u/%#llx",
					e.kind == FATBIN_KIND_PTX ? "ptx" :
					e.kind == FATBIN_KIND_ELF ? "sm" : "?", e.arch,
					(unsigned long long)e.flags);
	shim_log("fatbin refused on device %d (%d): %s", dev, (int)err, line);
}

CUresult shim_image_refused(const void *image, size_t len, CUdevice dev, bool at)
{
	bool hashed = false;
	uint64_t hash = 0;
	CUresult r;

	if (!image || !len)
		return CUDA_SUCCESS;
	pthread_mutex_lock(&refused_lock);
	r = nrefused ? lookup(image, len, dev, at, &hash, &hashed) : CUDA_SUCCESS;
	pthread_mutex_unlock(&refused_lock);
	return r;
}

void shim_image_remember_refused(const void *image, size_t len, CUdevice dev, CUresult err)
{
	bool hashed = false;
	uint64_t hash = 0;

	if (!image || !len || !image_error(err))
		return;
	describe(image, len, dev, err);
	pthread_mutex_lock(&refused_lock);
	if (!lookup(image, len, dev, true, &hash, &hashed)) {
		if (!hashed)
			hash = content_hash(image, len);
		refused[next_refused] = (struct refused){ image, len, hash, dev, err };
		next_refused = (next_refused + 1) % MAX_REFUSED;
		if (nrefused < MAX_REFUSED)
			nrefused++;
	}
	pthread_mutex_unlock(&refused_lock);
}
