# tests/gpu/gpu.mk: the GPU check (`make gpucheck`, Documentation/testing-gpu.md):
# our own CUDA programs, each run natively and through axon with the same
# output, and the isolation check. Included from the top-level Makefile
# after tests/cudart/cudart.mk and bench/build.mk.
#
#   make gpu-progs   build, on this machine, everything tests/gpu/gpucheck.sh
#                    runs (not part of `all`):
#     $(BUILD)/tests/gpu/rt-NAME-static,  every tests/gpu/rt-NAME.cu, by nvcc
#     $(BUILD)/tests/gpu/rt-NAME-shared   with static and with shared cudart
#                                         (sm_90 SASS + compute_90 PTX)
#     $(BUILD)/tests/gpu/drv-NAME         every tests/gpu/drv-NAME.c, a
#                                         driver-API program linked against
#                                         the SONAME libcuda.so.1, no rpath:
#                                         LD_LIBRARY_PATH picks NVIDIA's or ours
#     $(BUILD)/tests/gpu/isocheck.so      the LD_PRELOAD isolation check
#     and the cudart programs, kernel images, axond, axonctl, the shim
#     and our libnvidia-ml.so.1 (PyTorch loads NVML; without ours it would
#     load NVIDIA's, which opens /dev/nvidia* in the client)
#     (not `all`: a GPU machine may lack what axon-top or the module need)
#   make gpucheck    gpu-progs (unless GPUCHECK_NOBUILD=1), then
#                    tests/gpu/gpucheck.sh $(BUILD) $(VENDOR_LIB)
#
# A new program is picked up by its name alone: drop tests/gpu/drv-NAME.c or
# tests/gpu/rt-NAME.cu in, and list it in tests/gpu/cases when it needs
# other than the defaults (exit 0, the kernels.cubin path as argument).
# Extra link libraries of an rt program: GPU_LIBS_rt-NAME below; extra nvcc
# flags: GPU_NVFLAGS_rt-NAME.
#
# Tests ($(BUILD)/tests/, run by `make check`):
#   unit-isocheck   isocheck.so flags a foreign libcuda, a device-node fd
#                   or mapping, and passes a clean process
#   gpucheck-sim    gpucheck.sh with the sim backend: the cases marked "sim"
#                   in tests/gpu/cases, through axon only (77 without nvcc)

GPU_DIR		:= tests/gpu
GPU_OUT		:= $(BUILD)/tests/gpu
GPU_OBJDIR	:= $(BUILD)/obj/$(GPU_DIR)
GPU_HAVE_NVCC	:= $(shell command -v $(NVCC) >/dev/null 2>&1 && echo 1)
VENDOR_LIB	?= /usr/local/nvidia/lib64/libcuda.so.1

GPU_GENCODE	:= -gencode arch=compute_90,code=sm_90 \
		   -gencode arch=compute_90,code=compute_90
GPU_RT		:= $(patsubst $(GPU_DIR)/%.cu,%,$(wildcard $(GPU_DIR)/rt-*.cu))
GPU_RT_PROGS	:= $(foreach p,$(GPU_RT),$(GPU_OUT)/$(p)-static $(GPU_OUT)/$(p)-shared)
GPU_DRV		:= $(patsubst $(GPU_DIR)/%.c,%,$(wildcard $(GPU_DIR)/drv-*.c))
GPU_DRV_PROGS	:= $(GPU_DRV:%=$(GPU_OUT)/%)
GPU_ISOCHECK	:= $(GPU_OUT)/isocheck.so

GPU_LIBS_rt-blas := -lcublas
GPU_LIBS_rt-fft	:= -lcufft
# Extra nvcc flags of an rt program: GPU_NVFLAGS_rt-NAME.
GPU_NVFLAGS_rt-legacy-stream-ptds := --default-stream per-thread

GPU_NVFLAGS	:= $(GPU_GENCODE) -O2 -I$(CURDIR)/$(GPU_DIR) -Xcompiler -Wall

$(GPU_OUT)/%-static: $(GPU_DIR)/%.cu $(GPU_DIR)/rt-gpu.h
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  NVCC    $@"
	$(Q)$(NVCC) $(GPU_NVFLAGS) $(GPU_NVFLAGS_$*) -cudart static -o $@ $< $(GPU_LIBS_$*)

$(GPU_OUT)/%-shared: $(GPU_DIR)/%.cu $(GPU_DIR)/rt-gpu.h
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  NVCC    $@"
	$(Q)$(NVCC) $(GPU_NVFLAGS) $(GPU_NVFLAGS_$*) -cudart shared -o $@ $< $(GPU_LIBS_$*)

# The per-thread build of rt-legacy-stream includes its source.
$(GPU_OUT)/rt-legacy-stream-ptds-static $(GPU_OUT)/rt-legacy-stream-ptds-shared: \
	$(GPU_DIR)/rt-legacy-stream.cu

$(GPU_DRV_PROGS): $(GPU_OUT)/%: $(GPU_OBJDIR)/%.o $(SHIM_LIB)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -L$(BUILD)/lib -l:libcuda.so.1 -ldl -lm

# No sanitizer flags whatever SAN is: it is preloaded into python3 and
# nvcc-built programs, which have no sanitizer runtime.
$(GPU_ISOCHECK): $(GPU_DIR)/isocheck.c
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CC      $@"
	$(Q)$(CC) -std=gnu11 -Wall -Wextra -Werror -O2 -g -fPIC -shared -D_GNU_SOURCE \
		-o $@ $<

$(BUILD)/tests/unit-isocheck: $(GPU_OBJDIR)/isocheck-test.o
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -ldl
$(BUILD)/tests/unit-isocheck: | $(GPU_ISOCHECK) $(SHIM_LIB) $(NVML_LIB)

$(BUILD)/tests/gpucheck-sim: $(GPU_DIR)/sim-test.sh
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  COPY    $@"
	$(Q)install -m 0755 $< $@
# What it runs: the programs of the cases flagged "sim" (only those, so that
# `make check` does not build the cuBLAS and cuFFT programs).
GPU_SIM_PROGS	:= $(addprefix $(BUILD)/,$(sort $(shell awk \
		   '!/^\#/ && NF >= 4 && $$3 ~ /(^|,)sim(,|$$)/ { print $$4 }' $(GPU_DIR)/cases)))
$(BUILD)/tests/gpucheck-sim: | $(GPU_ISOCHECK) $(BUILD)/bin/axond $(SHIM_LIB) $(NVML_LIB) \
	$(filter $(GPU_DRV_PROGS),$(GPU_SIM_PROGS))
ifeq ($(GPU_HAVE_NVCC),1)
$(BUILD)/tests/gpucheck-sim: | $(GPU_SIM_PROGS) $(SIM_KDATA_FILES)
endif

TEST_PROGS	+= $(BUILD)/tests/unit-isocheck $(BUILD)/tests/gpucheck-sim

# drv-launch's kernels (clusters, 100 KiB of shared memory): sm_90 only,
# beside the program, which loads them from there.
GPU_LAUNCH_CUBIN := $(GPU_OUT)/launch-kernels.cubin
$(GPU_LAUNCH_CUBIN): $(GPU_DIR)/launch-kernels.cu
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  NVCC    $@"
	$(Q)$(NVCC) -cubin -arch=sm_90 -O2 -o $@ $<

.PHONY: gpu-progs gpucheck
gpu-progs: $(BUILD)/bin/axond $(SHIM_LIB) $(NVML_LIB) $(AXONCTL) $(GPU_ISOCHECK) $(GPU_DRV_PROGS)
ifeq ($(GPU_HAVE_NVCC),1)
gpu-progs: $(GPU_RT_PROGS) $(SIM_KDATA_FILES) $(CUDART_RT_PROGS) $(GPU_LAUNCH_CUBIN)
endif

gpucheck:
	$(Q)[ "$(GPUCHECK_NOBUILD)" = 1 ] || $(MAKE) --no-print-directory gpu-progs
	$(Q)tests/gpu/gpucheck.sh $(BUILD) $(VENDOR_LIB)
