# bench/gpu: driver-API benchmarks on a GPU machine, natively and through
# axon side by side (issue 4; results in Documentation/performance.md).
#
#   make bench-gpu-progs   build $(BUILD)/bench/gpu/drvbench (and the kernels)
#   make bench-gpu         build, then run bench/gpu/run.sh $(BUILD): the
#                          native run (NVIDIA's libcuda.so.1, when present)
#                          and the axon run (a private axond, cuda backend
#                          when the vendor library exists, else sim)
#   make bench-gpu BENCH_GPU_ARGS=--quick    a tenth of the iterations
#
# drvbench is linked against our $(BUILD)/lib/libcuda.so.1 (DT_NEEDED is the
# SONAME libcuda.so.1) and has no rpath: at run time LD_LIBRARY_PATH picks
# NVIDIA's library or the shim. Not part of `all`.

DRVBENCH	:= $(BUILD)/bench/gpu/drvbench
BENCH_GPU_ARGS	?=

$(BUILD)/obj/bench/gpu/drvbench.o: bench/bench.h

$(DRVBENCH): $(BUILD)/obj/bench/gpu/drvbench.o $(SHIM_LIB)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(SHIM_LIB) -ldl -lm

.PHONY: bench-gpu bench-gpu-progs
bench-gpu-progs: all $(DRVBENCH) $(BENCH_DATA) \
	$(if $(SIM_HAVE_NVCC),$(SIM_KDATA)/kernels.ptx)

bench-gpu: bench-gpu-progs
	$(Q)DRVBENCH_ARGS="$(BENCH_GPU_ARGS)" bench/gpu/run.sh $(BUILD)
