// SPDX-License-Identifier: MIT
/*
 * Opening NVIDIA's libcuda.so.1 from a private path. The shim is the only
 * libcuda.so.1 clients can load; the vendor's lives where only axond looks
 * (--vendor-lib, else the list below), and is opened RTLD_LOCAL so none of
 * its symbols leak into the daemon's namespace.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "vendor.h"

struct vendor vd;

/* Where NVIDIA's driver library is found when --vendor-lib is not given. */
static const char *const search[] = {
	"/usr/local/nvidia/lib64/libcuda.so.1",
	"/usr/lib/x86_64-linux-gnu/nvidia/current/libcuda.so.1",
	"/usr/lib64/nvidia/libcuda.so.1",
	"/usr/lib/nvidia/libcuda.so.1",
};

typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t,
			   CUdriverProcAddressQueryResult *);

static int resolve(gpa_fn gpa, char *err, size_t errlen)
{
	CUdriverProcAddressQueryResult st;
	void *p;

#define VENDOR_RESOLVE(name)						\
	p = NULL;							\
	if (gpa(#name, &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &st) || !p) { \
		snprintf(err, errlen, "vendor driver lacks %s", #name);	\
		return -1;						\
	}								\
	vd.name = (__typeof__(vd.name))p;
	VENDOR_FUNCS(VENDOR_RESOLVE)
#undef VENDOR_RESOLVE
	return 0;
}

int vendor_open(const char *path, char *err, size_t errlen)
{
	gpa_fn gpa;
	size_t i;

	if (path) {
		vd.dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	} else {
		for (i = 0; i < sizeof(search) / sizeof(search[0]) && !vd.dl; i++) {
			vd.dl = dlopen(search[i], RTLD_NOW | RTLD_LOCAL);
			if (vd.dl)
				path = search[i];
		}
	}
	if (!vd.dl) {
		snprintf(err, errlen, "cannot open the vendor driver %s: %s",
			 path ? path : "(searched the default list; use --vendor-lib)",
			 dlerror());
		return -1;
	}
	gpa = (gpa_fn)dlsym(vd.dl, "cuGetProcAddress_v2");
	if (!gpa) {
		snprintf(err, errlen, "%s has no cuGetProcAddress_v2 (driver too old)", path);
		vendor_close();
		return -1;
	}
	if (resolve(gpa, err, errlen)) {
		vendor_close();
		return -1;
	}
	return 0;
}

void vendor_close(void)
{
	if (vd.dl)
		dlclose(vd.dl);
	memset(&vd, 0, sizeof(vd));
}

const char *vendor_err(CUresult r)
{
	const char *s = NULL;

	if (vd.cuGetErrorName && vd.cuGetErrorName(r, &s) == CUDA_SUCCESS && s)
		return s;
	return "unknown CUDA error";
}
