// SPDX-License-Identifier: MIT
/*
 * rt-legacy-stream-ptds: rt-legacy-stream built with --default-stream
 * per-thread (GPU_NVFLAGS_rt-legacy-stream-ptds in gpu.mk): handle 0 is the
 * calling thread's own stream, ordered against cudaStreamLegacy only.
 */
#include "rt-legacy-stream.cu"
