# bench: native-vs-axon micro-benchmarks (see bench/README.md).
#
#   make bench    builds everything (all), then runs $(BUILD)/bench/bench-ring,
#                 which measures the raw floors of this machine, starts two
#                 private axonds (sim backend) for the libaxon rows and runs
#                 $(BUILD)/bench/bench-shim (linked against our libcuda.so.1)
#                 for the CUDA-shim rows, and prints one table.
#   make bench BENCH_ARGS=--quick    a tenth of the iterations
#
# No pass/fail: benchmarks, not tests. Not part of `all`.

BENCH_RING	:= $(BUILD)/bench/bench-ring
BENCH_SHIM	:= $(BUILD)/bench/bench-shim
BENCH_OBJS	:= $(BUILD)/obj/bench/bench-ring.o $(BUILD)/obj/bench/bench-shim.o
BENCH_ARGS	?=

# The sim's `nop` kernel for cuLaunchKernel (axond/sim/sim-image.mk builds it
# with nvcc; without nvcc that row is skipped).
BENCH_CUBIN	:= $(BUILD)/tests/data/kernels.cubin
BENCH_DATA	:= $(if $(SIM_HAVE_NVCC),$(BENCH_CUBIN))

$(BENCH_OBJS): bench/bench.h

$(BENCH_RING): $(BUILD)/obj/bench/bench-ring.o $(LIBAXON_A)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(LIBAXON_A)

# Linked against the shim itself; the rpath finds it at run time.
$(BENCH_SHIM): $(BUILD)/obj/bench/bench-shim.o $(SHIM_LIB)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(SHIM_LIB) -Wl,-rpath,$(abspath $(dir $(SHIM_LIB)))

bench: all $(BENCH_RING) $(BENCH_SHIM) $(BENCH_DATA)
	$(Q)$(BENCH_RING) --build $(BUILD) $(BENCH_ARGS)

# GPU benchmarks: native against axon (bench/gpu/run.sh on a GPU machine).
include bench/gpu/gpu.mk
