# axond/sim/sim-image.mk: the sim backend's module-image reader
# (axond/sim/image.c, which assembles what image-builder.c, cubin.c,
# ptx-lex.c, ptx-parse.c and fatbin-select.c read; the fatbin layout is
# common/fatbin.c), the loader of its kernels object (kernelset.c), the
# test kernels object itself, and their tests. Included from
# axond/build.mk:
#
#	include axond/sim/sim-image.mk
#
# axond links $(SIM_IMAGE_OBJS) with $(COMMON_LIB) and $(SIM_IMAGE_LIBS).
# Needs liblz4-dev and libzstd-dev (Debian), and check for the tests.

SIM_IMAGE_SRCS	:= axond/sim/image.c axond/sim/image-builder.c axond/sim/cubin.c \
		   axond/sim/ptx-lex.c axond/sim/ptx-parse.c axond/sim/fatbin-select.c
SIM_IMAGE_OBJS	:= $(SIM_IMAGE_SRCS:%.c=$(BUILD)/obj/%.o)
SIM_IMAGE_LIBS	:= -llz4 -lzstd -lm

AXOND_SRCS	+= axond/sim/kernelset.c

# The test kernels (host twins of tests/sim-kernels/kernels.cu) as the
# kernels object every test gives axond with --sim-kernels
# (sim/kernels-abi.h). Built, never installed: the installed axond holds no
# test code. Only the entry point is exported.
SIM_KERNELS_SRCS := axond/sim/kernels.c axond/sim/kernels-entry.c
SIM_KERNELS_OBJS := $(SIM_KERNELS_SRCS:%.c=$(BUILD)/obj/%.o)
SIM_KERNELS_SO	:= $(BUILD)/lib/axon-sim-kernels.so

$(SIM_KERNELS_OBJS): CFLAGS += -fvisibility=hidden

$(SIM_KERNELS_SO): $(SIM_KERNELS_OBJS)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-z,defs -o $@ $^ -lm

ALL_TARGETS	+= $(SIM_KERNELS_SO)
# Whatever starts a sim daemon from this build finds it next to axond.
$(BUILD)/bin/axond: | $(SIM_KERNELS_SO)

# Test images compiled from tests/sim-kernels/kernels.cu, when nvcc exists;
# without it the tests that need them exit 77.
SIM_KERNELS_CU	:= tests/sim-kernels/kernels.cu
SIM_KDATA	:= $(BUILD)/tests/data
SIM_KDATA_FILES	:= $(addprefix $(SIM_KDATA)/kernels,.cubin .ptx .fatbin \
		   -lz4.fatbin -zstd.fatbin -ptx.fatbin -sm100.fatbin)
SIM_HAVE_NVCC	:= $(shell command -v $(NVCC) >/dev/null 2>&1 && echo 1)

# cubin for sm_90
$(SIM_KDATA)/kernels.cubin: SIM_NVFLAGS := -cubin -arch=sm_90
# PTX for compute_90
$(SIM_KDATA)/kernels.ptx: SIM_NVFLAGS := -ptx -arch=compute_90
# several archs and compute_90 PTX, CUDA's default compression (PTX: ZSTD)
$(SIM_KDATA)/kernels.fatbin: SIM_NVFLAGS := -fatbin \
	-gencode arch=compute_80,code=sm_80 \
	-gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_90,code=compute_90 \
	-gencode arch=compute_100,code=sm_100
# every entry LZ4-compressed
$(SIM_KDATA)/kernels-lz4.fatbin: SIM_NVFLAGS := -fatbin \
	-gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_90,code=compute_90 \
	-compress-mode=speed -Xfatbin -compress-all
# every entry ZSTD-compressed
$(SIM_KDATA)/kernels-zstd.fatbin: SIM_NVFLAGS := -fatbin \
	-gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_90,code=compute_90 \
	-compress-mode=size -Xfatbin -compress-all
# no usable ELF (sm_100 only): the LZ4-compressed compute_90 PTX is chosen
$(SIM_KDATA)/kernels-ptx.fatbin: SIM_NVFLAGS := -fatbin \
	-gencode arch=compute_90,code=compute_90 \
	-gencode arch=compute_100,code=sm_100 \
	-compress-mode=speed -Xfatbin -compress-all
# nothing for sm_90: refused
$(SIM_KDATA)/kernels-sm100.fatbin: SIM_NVFLAGS := -fatbin \
	-gencode arch=compute_100,code=sm_100 \
	-gencode arch=compute_100,code=compute_100

$(SIM_KDATA_FILES): $(SIM_KERNELS_CU)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  NVCC    $@"
	$(Q)$(NVCC) $(SIM_NVFLAGS) -o $@ $<

SIM_TESTS	:= $(BUILD)/tests/sim-image $(BUILD)/tests/sim-kernels

$(BUILD)/obj/tests/sim-image.o $(BUILD)/obj/tests/sim-kernels.o: \
	CFLAGS += $(CHECK_CFLAGS) -I$(CURDIR)/axond/sim

# sim-kernels tests the kernels themselves, linked in.
$(BUILD)/tests/sim-kernels: $(SIM_KERNELS_OBJS)
$(SIM_TESTS): $(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(SIM_IMAGE_OBJS) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(COMMON_LIB) $(SIM_IMAGE_LIBS) $(CHECK_LIBS)

ifeq ($(SIM_HAVE_NVCC),1)
$(SIM_TESTS): | $(SIM_KDATA_FILES)
endif

TEST_PROGS	+= $(SIM_TESTS)

# unit-kernelset: how the sim takes a kernels object (kernelset.c), with
# the test kernels linked in.
SIM_UNIT_KERNELSET := $(BUILD)/tests/unit-kernelset

$(BUILD)/obj/tests/unit-kernelset.o: CFLAGS += $(CHECK_CFLAGS) -I$(CURDIR)/axond/sim

$(SIM_UNIT_KERNELSET): $(BUILD)/obj/tests/unit-kernelset.o $(BUILD)/obj/axond/sim/kernelset.o \
		$(SIM_KERNELS_OBJS)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ -lm $(CHECK_LIBS)

TEST_PROGS	+= $(SIM_UNIT_KERNELSET)
