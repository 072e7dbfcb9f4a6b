/* SPDX-License-Identifier: MIT */
/*
 * The vendor driver, opened privately by the cuda backend. Every entry
 * point axond uses is resolved once at start through the driver's own
 * cuGetProcAddress_v2, at the CUDA version of the cuda.h we build with, so
 * each pointer has exactly the prototype cuda.h declares for that name.
 */
#ifndef AXOND_CUDA_VENDOR_H
#define AXOND_CUDA_VENDOR_H

#include <cuda.h>
#include <cudaProfiler.h>

#define VENDOR_FUNCS(X)						\
	X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet) \
	X(cuDeviceGetName) X(cuDeviceTotalMem) X(cuDeviceGetAttribute)	\
	X(cuDeviceGetUuid) X(cuDevicePrimaryCtxRetain)			\
	X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize) \
	X(cuGetErrorName) X(cuMemGetInfo)				\
	X(cuMemGetAllocationGranularity) X(cuMemAddressReserve)		\
	X(cuMemAddressFree) X(cuMemCreate) X(cuMemRelease) X(cuMemMap)	\
	X(cuMemUnmap) X(cuMemSetAccess) X(cuMemHostRegister)		\
	X(cuMemHostUnregister) X(cuMemHostGetDevicePointer) X(cuModuleLoadData) X(cuModuleUnload)	\
	X(cuModuleGetFunction) X(cuModuleGetGlobal) X(cuFuncGetParamInfo) \
	X(cuFuncGetAttribute) X(cuLaunchKernel) X(cuStreamCreate)	\
	X(cuLaunchKernelEx) X(cuFuncSetAttribute) X(cuTensorMapEncodeTiled) \
	X(cuTensorMapEncodeIm2col) X(cuTensorMapEncodeIm2colWide)	\
	X(cuStreamDestroy) X(cuStreamWaitEvent) X(cuEventCreate)	\
	X(cuEventDestroy) X(cuEventRecord) X(cuEventQuery)		\
	X(cuEventElapsedTime) X(cuMemcpyHtoDAsync) X(cuMemcpyDtoHAsync)	\
	X(cuMemcpyDtoDAsync) X(cuMemsetD8Async) X(cuMemsetD16Async)	\
	X(cuMemsetD32Async) X(cuMemsetD2D8Async) X(cuMemsetD2D16Async)	\
	X(cuMemsetD2D32Async) X(cuMemcpy2DAsync)				\
	X(cuCtxCreate) X(cuCtxDestroy) X(cuCtxPopCurrent) X(cuCtxPushCurrent)		\
	X(cuEventSynchronize)						\
	X(cuOccupancyMaxActiveClusters) X(cuOccupancyMaxPotentialClusterSize) \
	X(cuStreamCreateWithPriority) X(cuGetExportTable) X(cuCtxGetLimit) \
	X(cuModuleGetFunctionCount) X(cuModuleEnumerateFunctions) X(cuFuncGetName) \
	X(cuStreamSynchronize) \
	X(cuStreamBeginCapture) X(cuStreamEndCapture)			\
	X(cuGraphInstantiateWithFlags) X(cuGraphLaunch) X(cuGraphDestroy) \
	X(cuGraphExecDestroy) X(cuGraphExecUpdate) X(cuGraphGetNodes)	\
	X(cuLaunchHostFunc) X(cuGraphGetEdges) X(cuGraphNodeGetType)	\
	X(cuGraphHostNodeGetParams) X(cuGraphClone) X(cuGraphNodeFindInClone) \
	X(cuGraphDestroyNode) X(cuGraphCreate) X(cuGraphAddKernelNode)	\
	X(cuGraphExecKernelNodeSetParams) X(cuCtxSetLimit)					\
	X(cuProfilerStart) X(cuProfilerStop) X(cuStreamSetAttribute)

struct vendor {
	void *dl;
#define VENDOR_FIELD(name) __typeof__(name) *name;
	VENDOR_FUNCS(VENDOR_FIELD)
#undef VENDOR_FIELD
};

extern struct vendor vd;

/* Opens the driver (path, or the documented search list) and resolves. */
int vendor_open(const char *path, char *err, size_t errlen);
void vendor_close(void);
const char *vendor_err(CUresult r);

#endif
