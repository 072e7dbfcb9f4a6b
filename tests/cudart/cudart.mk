# tests/cudart/cudart.mk: unmodified CUDA runtime-API programs through axon,
# and the shim pieces cudart needs (libcuda-shim/exporttable.c, md2.c,
# ctxstore.c, library.c, ...). Include it after libcuda-shim/build.mk.
#
# Tests ($(BUILD)/tests/, run by tests/run-tests.sh):
#   unit-md2     libcuda-shim/md2.c against RFC 1319's test suite and the
#                HMAC construction of cudart's integrity check (Check)
#   cudart-run   starts a private axond (sim) and runs the programs below
#                through axon's libcuda.so.1; 77 when they were not built
#
# Programs it runs ($(BUILD)/tests/cudart/, helpers, not tests):
#   rt-basic-static, rt-basic-shared   tests/cudart/rt-basic.cu built by
#   rt-more-static, rt-more-shared     nvcc with static (nvcc's default) and
#                                      shared cudart: sm_90 SASS + compute_90
#                                      PTX, kernels the sim has built in
#   drv-tables   the export tables, context-local storage, cuLibrary*, ...
#                through the driver API (linked against the shim)
#   kernels.fatbin   tests/sim-kernels/kernels.cu, for drv-tables
#
# Without nvcc only unit-md2, drv-tables and cudart-run are built, and
# cudart-run skips.

CUDART_DIR	:= tests/cudart
CUDART_OUT	:= $(BUILD)/tests/cudart
CUDART_OBJDIR	:= $(BUILD)/obj/$(CUDART_DIR)
CUDART_HAVE_NVCC := $(shell command -v $(NVCC) >/dev/null 2>&1 && echo 1)

# sm_90 machine code and compute_90 PTX, as the brief for these programs says
CUDART_GENCODE	:= -gencode arch=compute_90,code=sm_90 \
		   -gencode arch=compute_90,code=compute_90
CUDART_RT	:= rt-basic rt-more
CUDART_RT_PROGS	:= $(foreach p,$(CUDART_RT),$(CUDART_OUT)/$(p)-static $(CUDART_OUT)/$(p)-shared)
CUDART_FATBIN	:= $(CUDART_OUT)/kernels.fatbin
CUDART_DRV	:= $(CUDART_OUT)/drv-tables
CUDART_MD2_OBJ	:= $(BUILD)/obj/libcuda-shim/md2.o

CUDART_TESTS	:= $(BUILD)/tests/unit-md2 $(BUILD)/tests/cudart-run
TEST_PROGS	+= $(CUDART_TESTS)

$(CUDART_OUT)/%-static: $(CUDART_DIR)/%.cu $(CUDART_DIR)/rt-check.h
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  NVCC    $@"
	$(Q)$(NVCC) $(CUDART_GENCODE) -cudart static -I$(CURDIR)/$(CUDART_DIR) -o $@ $<

$(CUDART_OUT)/%-shared: $(CUDART_DIR)/%.cu $(CUDART_DIR)/rt-check.h
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  NVCC    $@"
	$(Q)$(NVCC) $(CUDART_GENCODE) -cudart shared -I$(CURDIR)/$(CUDART_DIR) -o $@ $<

$(CUDART_FATBIN): tests/sim-kernels/kernels.cu
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  NVCC    $@"
	$(Q)$(NVCC) -fatbin $(CUDART_GENCODE) -o $@ $<

$(CUDART_OBJDIR)/drv-tables.o $(CUDART_OBJDIR)/md2-test.o: CFLAGS += -I$(CURDIR)/libcuda-shim
$(CUDART_OBJDIR)/md2-test.o: CFLAGS += $(CHECK_CFLAGS)

# The shim's own MD2 object, linked into the tests that recompute digests.
$(CUDART_DRV): $(CUDART_OBJDIR)/drv-tables.o $(CUDART_MD2_OBJ) $(SHIM_LIB)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CUDART_OBJDIR)/drv-tables.o $(CUDART_MD2_OBJ) \
		-L$(BUILD)/lib -l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN/../../lib'

$(BUILD)/tests/unit-md2: $(CUDART_OBJDIR)/md2-test.o $(CUDART_MD2_OBJ)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS)

# Where the shared cudart lives, and (SAN=1) the sanitizer runtimes the
# uninstrumented nvcc programs need preloaded to load the instrumented shim.
$(CUDART_OBJDIR)/run.o: CFLAGS += -DAXON_CUDA_LIB64='"$(CUDA)/lib64"'
ifeq ($(SAN),1)
$(CUDART_OBJDIR)/run.o: CFLAGS += -DAXON_SAN_PRELOAD='"$(shell $(CC) -print-file-name=libasan.so) $(shell $(CC) -print-file-name=libubsan.so)"'
endif

$(BUILD)/tests/cudart-run: $(CUDART_OBJDIR)/run.o
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^

# What cudart-run runs.
$(BUILD)/tests/cudart-run: | $(BUILD)/bin/axond $(SHIM_LIB) $(CUDART_DRV)
ifeq ($(CUDART_HAVE_NVCC),1)
$(BUILD)/tests/cudart-run: | $(CUDART_RT_PROGS) $(CUDART_FATBIN)
endif

.PHONY: cudart-progs
cudart-progs: $(CUDART_TESTS)
