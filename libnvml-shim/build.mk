# libnvml-shim: our libnvidia-ml.so.1, NVML answered by axon.
#
# PyTorch (c10's driver-API table, torch.cuda's device counting, the
# out-of-memory message that lists "Process N has X memory in use") and
# monitoring code dlopen "libnvidia-ml.so.1". NVIDIA's opens /dev/nvidiactl,
# /dev/nvidia0, /dev/nvidia-uvm and /dev/nvidia-caps/* in the client; ours
# answers from axon's libcuda.so.1 (libnvml-shim/nvml-shim.h) and sits
# beside it in $(BUILD)/lib, so the LD_LIBRARY_PATH that finds one finds
# the other.
#
# Included from the top-level Makefile after tests/build.mk: the test below
# links the integration harness ($(IT_HARNESS_OBJS), $(IT_CUCLIENT_OBJ)),
# and tests/gpu/gpu.mk, included later, adds $(NVML_LIB) to gpu-progs.

NVML_SRCS := libnvml-shim/init.c libnvml-shim/device.c
NVML_OBJS := $(NVML_SRCS:%.c=$(BUILD)/obj/%.o)
NVML_LIB  := $(BUILD)/lib/libnvidia-ml.so.1

# Only the NVML names are exported: every nvml* definition says NVML_EXPORT.
$(NVML_OBJS): CFLAGS += -fvisibility=hidden

# Linked against our libcuda.so.1, not dlopen'ed:
#  - --no-undefined makes every cu* call a link-time check against the shim
#    as built, not an nvmlInit failure in someone's program;
#  - the loader resolves libcuda.so.1 by SONAME, so in a process that has
#    already loaded it (any CUDA program) NVML uses that very copy: one
#    connection to axond, one client in its stats, the same primary context;
#  - otherwise DT_RPATH $ORIGIN finds the one beside us. --disable-new-dtags
#    makes it DT_RPATH, searched before LD_LIBRARY_PATH (DT_RUNPATH is
#    searched after it), so NVIDIA's libcuda on LD_LIBRARY_PATH is never
#    picked for us.
# What dlopen would add, nvmlInit failing softly without a libcuda, buys
# nothing: ours is always installed beside this library.
$(NVML_LIB): $(NVML_OBJS) $(SHIM_LIB)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,libnvidia-ml.so.1 -Wl,--no-undefined \
		-Wl,--disable-new-dtags -Wl,-rpath,'$$ORIGIN' \
		-o $@ $(NVML_OBJS) -L$(BUILD)/lib -l:libcuda.so.1 -lpthread

ALL_TARGETS += $(NVML_LIB)

# ---- tests (sources in tests/integration/, rules here) ---------------------
#
# tests/bin/nvml: a client linked against both of our libraries (rpath
# $ORIGIN/../../lib, as the other clients); integration-nvml runs its parts
# against a private axond.

NVML_CLIENT      := $(BUILD)/tests/bin/nvml
NVML_CLIENT_OBJ  := $(BUILD)/obj/tests/integration/nvml.o
NVML_TEST        := $(BUILD)/tests/integration-nvml
NVML_TEST_OBJ    := $(BUILD)/obj/tests/integration/test-nvml.o

$(NVML_CLIENT_OBJ): CFLAGS += -I$(CURDIR)/libnvml-shim
$(NVML_CLIENT): $(NVML_CLIENT_OBJ) $(IT_CUCLIENT_OBJ) $(NVML_LIB) $(SHIM_LIB)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(IT_CUCLIENT_OBJ) -L$(BUILD)/lib -l:libnvidia-ml.so.1 \
		-l:libcuda.so.1 -Wl,-rpath,'$$ORIGIN/../../lib'

$(NVML_TEST_OBJ): CFLAGS += $(CHECK_CFLAGS)
$(NVML_TEST): $(NVML_TEST_OBJ) $(IT_HARNESS_OBJS) $(LIBAXON_A)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(IT_HARNESS_OBJS) $(LIBAXON_A) $(CHECK_LIBS) $(JSON_LIBS) -lm
$(NVML_TEST): | $(BUILD)/bin/axond $(NVML_CLIENT)

ALL_TARGETS += $(NVML_CLIENT)
TEST_PROGS  += $(NVML_TEST)
