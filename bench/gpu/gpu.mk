# bench/gpu: benchmarks on a GPU machine, natively and through axon side by
# side (issue 4; results in Documentation/performance.md).
#
#   make bench-gpu-progs   build, in $(BUILD)/bench/gpu:
#                            drvbench    driver-API costs
#                            loopclient  one launch-bound client, for the
#                                        concurrent-client rows
#                            blasbench   cuBLAS SGEMM through shared cudart
#                                        (needs nvcc; skipped without it)
#                            chargecheck what axond charges a client
#                                        against what the device spends,
#                                        and chargeglobal.cubin, the module
#                                        it loads (needs nvcc)
#                            reserveprobe what the device runtime (printf,
#                                        malloc) reserves at a module's
#                                        load, natively, and its cubins
#                                        (needs nvcc)
#                          and the kernels ($(BUILD)/tests/data)
#   make bench-gpu         build, then run bench/gpu/run.sh $(BUILD): every
#                          program natively (NVIDIA's libcuda.so.1, when
#                          present) and through a private axond (cuda backend
#                          when the vendor library exists, else sim), plus
#                          bench/gpu/torchbench.py and the concurrent clients
#                          (native, MPS, axon)
#   make bench-gpu BENCH_GPU_ARGS=--quick    drvbench: a tenth of the iterations
#   make bench-gpu-selftest   run.sh's merging and the client harness on
#                          canned inputs (no GPU needed)
#
# drvbench and loopclient are linked against our $(BUILD)/lib/libcuda.so.1
# (DT_NEEDED is the SONAME libcuda.so.1) and have no rpath: at run time
# LD_LIBRARY_PATH picks NVIDIA's library or the shim. blasbench needs
# libcudart.so.13 and libcublas.so.13 (runpath $(CUDA)/lib64); cudart
# dlopens libcuda.so.1, so LD_LIBRARY_PATH picks that too. Not part of `all`.

DRVBENCH	:= $(BUILD)/bench/gpu/drvbench
LOOPCLIENT	:= $(BUILD)/bench/gpu/loopclient
HOSTBW		:= $(BUILD)/bench/gpu/hostbw
CHARGECHECK	:= $(BUILD)/bench/gpu/chargecheck
CHARGEGLOBAL	:= $(BUILD)/bench/gpu/chargeglobal.cubin
RESERVEPROBE	:= $(BUILD)/bench/gpu/reserveprobe
RESERVE_CUBINS	:= $(BUILD)/bench/gpu/reserve-printf.cubin $(BUILD)/bench/gpu/reserve-malloc.cubin
BLASBENCH	:= $(BUILD)/bench/gpu/blasbench
BENCH_GPU_ARGS	?=
BENCH_GPU_HAVE_NVCC := $(shell command -v $(NVCC) >/dev/null 2>&1 && echo 1)

# drvbench: the run and its rows, and one file per family of groups
# (bench/gpu/drvbench/drvbench.h lists them).
DRVBENCH_SRCS	:= $(addprefix bench/gpu/drvbench/,drvbench.c rows.c start.c \
		   modload.c roundtrip.c launch.c copy.c alloc.c hostreg.c)
DRVBENCH_OBJS	:= $(DRVBENCH_SRCS:%.c=$(BUILD)/obj/%.o)

$(DRVBENCH_OBJS) $(BUILD)/obj/bench/gpu/loopclient.o: bench/bench.h

$(DRVBENCH): $(DRVBENCH_OBJS) $(SHIM_LIB)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $(DRVBENCH_OBJS) $(SHIM_LIB) -ldl -lm

$(LOOPCLIENT) $(HOSTBW) $(CHARGECHECK) $(RESERVEPROBE): $(BUILD)/bench/gpu/%: $(BUILD)/obj/bench/gpu/%.o $(SHIM_LIB)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(SHIM_LIB) -ldl -lm

$(BUILD)/obj/bench/gpu/chargecheck.o: bench/gpu/drvcommon.h

$(CHARGEGLOBAL): bench/gpu/chargeglobal.cu
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  NVCC    $@"
	$(Q)$(NVCC) -cubin -arch=sm_90 -O2 -o $@ $<

$(BUILD)/bench/gpu/reserve-printf.cubin: RESERVE_DEFS := -DRESERVE_PRINTF
$(RESERVE_CUBINS): $(BUILD)/bench/gpu/reserve-%.cubin: bench/gpu/reserveprobe.cu
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  NVCC    $@"
	$(Q)$(NVCC) -cubin -arch=sm_90 -O2 $(RESERVE_DEFS) -o $@ $<

# Host code only (cuBLAS brings the kernels); sm_90 as the H200 is.
$(BLASBENCH): bench/gpu/blasbench.cu bench/gpu/rowformat.h
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  NVCC    $@"
	$(Q)$(NVCC) -O2 -arch=sm_90 -cudart shared -Xcompiler -Wall,-Wextra,-Werror \
		-o $@ $< -L$(CUDA)/lib64 -lcublas -Xlinker -rpath,$(CUDA)/lib64

.PHONY: bench-gpu bench-gpu-progs bench-gpu-selftest
bench-gpu-progs: all $(DRVBENCH) $(LOOPCLIENT) $(HOSTBW) $(CHARGECHECK) $(RESERVEPROBE) \
	$(BENCH_DATA) $(if $(BENCH_GPU_HAVE_NVCC),$(BLASBENCH) $(CHARGEGLOBAL) $(RESERVE_CUBINS)) \
	$(if $(SIM_HAVE_NVCC),$(SIM_KDATA)/kernels.ptx)

bench-gpu: bench-gpu-progs
	$(Q)DRVBENCH_ARGS="$(BENCH_GPU_ARGS)" bench/gpu/run.sh $(BUILD)

bench-gpu-selftest:
	$(Q)bench/gpu/selftest.sh
