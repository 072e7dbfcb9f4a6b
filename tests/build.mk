# tests: integration tests (tests/integration/) and the demo.
#
# Client programs, in $(BUILD)/tests/bin/ (helpers, not tests): CUDA driver
# API programs linked against axon's shim only (-l:libcuda.so.1 from
# $(BUILD)/lib, found at run time through the rpath $ORIGIN/../../lib, never
# NVIDIA's libcuda). vecadd is also what `make demo` runs.
#
# Test programs, in $(BUILD)/tests/integration-*: each starts a private
# axond (tests/integration/harness.c), runs clients against it and checks
# the daemon's stats (Check framework). They exit 77 when the kernel images
# built from tests/sim-kernels/kernels.cu ($(BUILD)/tests/data/) are
# missing, except garbage and kill, which run their libaxon parts anyway.

IT_DIR     := tests/integration
IT_OBJDIR  := $(BUILD)/obj/$(IT_DIR)

IT_CLIENTS      := vecadd streams bigcopy errors busy
IT_CLIENTS      += mempool vmm
IT_CLIENTS      += pinned
IT_CLIENTS      += launchex hostfn legacy bigimage ptstream
IT_CLIENTS      += mathlibs
IT_CLIENTS      += graphcopy
IT_CLIENT_PROGS := $(IT_CLIENTS:%=$(BUILD)/tests/bin/%)
IT_CUCLIENT_OBJ := $(IT_OBJDIR)/cuclient.o

IT_TESTS        := vecadd streams bigcopy errors concurrent kill garbage axonctl \
		   regressions
IT_TESTS        += mempool vmm
IT_TESTS        += pinned
IT_TESTS        += launchex hostfn legacy bigimage launchraw ptstream compatraw
IT_TESTS        += graphcopy
IT_TESTS        += mathlibs
IT_TESTS        += restart isolation
IT_TEST_PROGS   := $(IT_TESTS:%=$(BUILD)/tests/integration-%)
IT_HARNESS_OBJS := $(IT_OBJDIR)/harness.o $(TOOLS_JSON_OBJ)

$(IT_OBJDIR)/harness.o $(IT_TESTS:%=$(IT_OBJDIR)/test-%.o): CFLAGS += $(CHECK_CFLAGS)

$(IT_CLIENT_PROGS): $(BUILD)/tests/bin/%: $(IT_OBJDIR)/%.o $(IT_CUCLIENT_OBJ) $(SHIM_LIB)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(IT_CUCLIENT_OBJ) -L$(BUILD)/lib -l:libcuda.so.1 \
		-Wl,-rpath,'$$ORIGIN/../../lib'

$(IT_TEST_PROGS): $(BUILD)/tests/integration-%: $(IT_OBJDIR)/test-%.o $(IT_HARNESS_OBJS) \
		$(LIBAXON_A)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(IT_HARNESS_OBJS) $(LIBAXON_A) $(CHECK_LIBS) $(JSON_LIBS) -lm

# What the tests run: the daemon, the clients, axonctl, the kernel images.
$(IT_TEST_PROGS): | $(BUILD)/bin/axond $(AXONCTL) $(IT_CLIENT_PROGS)
ifeq ($(SIM_HAVE_NVCC),1)
# (on the clients, so that `make all` and so `make demo` build them too)
$(IT_CLIENT_PROGS): | $(addprefix $(BUILD)/tests/data/kernels,.cubin .fatbin .ptx)
endif

TEST_PROGS += $(IT_TEST_PROGS)

# Graphs: integration-graph (graph_test.c) drives tests/gpu/drv-graph, the
# driver-API program tests/gpu/gpu.mk builds and gpucheck runs on a GPU.
IT_GRAPH_TEST := $(BUILD)/tests/integration-graph
$(IT_OBJDIR)/graph_test.o: CFLAGS += $(CHECK_CFLAGS)
$(IT_GRAPH_TEST): $(IT_OBJDIR)/graph_test.o $(IT_HARNESS_OBJS) $(LIBAXON_A)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(IT_HARNESS_OBJS) $(LIBAXON_A) $(CHECK_LIBS) $(JSON_LIBS) -lm
$(IT_GRAPH_TEST): | $(BUILD)/bin/axond $(BUILD)/tests/bin/drv-graph
TEST_PROGS += $(IT_GRAPH_TEST)
# Its own copy of drv-graph, with the rpath of the other clients here.
$(BUILD)/tests/bin/drv-graph: $(BUILD)/obj/tests/gpu/drv-graph.o $(SHIM_LIB)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -L$(BUILD)/lib -l:libcuda.so.1 \
		-Wl,-rpath,'$$ORIGIN/../../lib'
# Device output and device faults: integration-devout (devout_test.c) drives
# tests/gpu/drv-printf and drv-fault, which gpucheck runs on a GPU.
IT_DEVOUT_TEST := $(BUILD)/tests/integration-devout
IT_DEVOUT_BINS := $(BUILD)/tests/bin/drv-printf $(BUILD)/tests/bin/drv-fault
$(IT_OBJDIR)/devout_test.o: CFLAGS += $(CHECK_CFLAGS)
$(IT_DEVOUT_TEST): $(IT_OBJDIR)/devout_test.o $(IT_HARNESS_OBJS) $(LIBAXON_A)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(IT_HARNESS_OBJS) $(LIBAXON_A) $(CHECK_LIBS) $(JSON_LIBS) -lm
$(IT_DEVOUT_TEST): | $(BUILD)/bin/axond $(IT_DEVOUT_BINS) $(BUILD)/tests/bin/vecadd
TEST_PROGS += $(IT_DEVOUT_TEST)
# Process isolation runs drv-fault through the supervisor.
$(BUILD)/tests/integration-isolation: | $(BUILD)/tests/bin/drv-fault
# Their own copies, with the rpath of the other clients here.
$(IT_DEVOUT_BINS): $(BUILD)/tests/bin/%: $(BUILD)/obj/tests/gpu/%.o $(SHIM_LIB)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -L$(BUILD)/lib -l:libcuda.so.1 \
		-Wl,-rpath,'$$ORIGIN/../../lib'
# 2D and 3D copies: integration-copy2d (copy2d_test.c) drives tests/gpu/
# drv-copy2d, which gpucheck runs natively and through axon on a GPU.
IT_COPY2D_TEST := $(BUILD)/tests/integration-copy2d
$(IT_OBJDIR)/copy2d_test.o: CFLAGS += $(CHECK_CFLAGS)
$(IT_COPY2D_TEST): $(IT_OBJDIR)/copy2d_test.o $(IT_HARNESS_OBJS) $(LIBAXON_A)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(IT_HARNESS_OBJS) $(LIBAXON_A) $(CHECK_LIBS) $(JSON_LIBS) -lm
$(IT_COPY2D_TEST): | $(BUILD)/bin/axond $(BUILD)/tests/bin/drv-copy2d
TEST_PROGS += $(IT_COPY2D_TEST)
# Its own copy, with the rpath of the other clients here.
$(BUILD)/tests/bin/drv-copy2d: $(BUILD)/obj/tests/gpu/drv-copy2d.o $(SHIM_LIB)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -L$(BUILD)/lib -l:libcuda.so.1 \
		-Wl,-rpath,'$$ORIGIN/../../lib'
# Registered host memory: integration-hostreg (hostreg_test.c) drives
# tests/gpu/drv-hostreg, which gpucheck runs natively and through axon.
IT_HOSTREG_TEST := $(BUILD)/tests/integration-hostreg
$(IT_OBJDIR)/hostreg_test.o: CFLAGS += $(CHECK_CFLAGS)
$(IT_HOSTREG_TEST): $(IT_OBJDIR)/hostreg_test.o $(IT_HARNESS_OBJS) $(LIBAXON_A)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(IT_HARNESS_OBJS) $(LIBAXON_A) $(CHECK_LIBS) $(JSON_LIBS) -lm
$(IT_HOSTREG_TEST): | $(BUILD)/bin/axond $(BUILD)/tests/bin/drv-hostreg
TEST_PROGS += $(IT_HOSTREG_TEST)
# Its own copy, with the rpath of the other clients here.
$(BUILD)/tests/bin/drv-hostreg: $(BUILD)/obj/tests/gpu/drv-hostreg.o $(SHIM_LIB)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -L$(BUILD)/lib -l:libcuda.so.1 \
		-Wl,-rpath,'$$ORIGIN/../../lib'
ALL_TARGETS += $(IT_CLIENT_PROGS)

.PHONY: integration-progs
integration-progs: $(IT_TEST_PROGS)

# Other fragments that ask to be included from here: tests/*.mk (ring.mk,
# ...) and tests/tools/tools.mk (guarded against a second inclusion).
# tests/cudart and tests/vm are included by the top-level Makefile.
-include $(filter-out tests/build.mk,$(wildcard tests/*.mk))
-include tests/tools/tools.mk

# axond's own command line (tests/daemon/*.sh, copied to $(BUILD)/tests/;
# they run $(BUILD)/bin/axond through AXON_BUILD, set by run-tests.sh).
DAEMON_SCRIPTS := axond-options axond-no-worker axond-single axond-journal
DAEMON_TESTS   := $(DAEMON_SCRIPTS:%=$(BUILD)/tests/%)

$(DAEMON_TESTS): $(BUILD)/tests/%: tests/daemon/%.sh
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  COPY    $@"
	$(Q)install -m 0755 $< $@

DAEMON_LIB     := $(BUILD)/tests/daemon-lib.sh

$(DAEMON_LIB): tests/daemon/daemon-lib.sh
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  COPY    $@"
	$(Q)install -m 0644 $< $@

$(DAEMON_TESTS): | $(BUILD)/bin/axond $(DAEMON_LIB)

TEST_PROGS += $(DAEMON_TESTS)

# unit-cpus: the shim's reading of CPU quotas and load (libcuda-shim/cpus.c)
$(BUILD)/obj/tests/unit-cpus.o: CFLAGS += $(CHECK_CFLAGS) -I$(CURDIR)/libcuda-shim

$(BUILD)/tests/unit-cpus: $(BUILD)/obj/tests/unit-cpus.o $(BUILD)/obj/libcuda-shim/cpus.o
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS)

TEST_PROGS += $(BUILD)/tests/unit-cpus
