# libcuda-shim: our libcuda.so.1, the CUDA driver API over axon.
#
# Every function cuda.h declares (all versioned names) gets a weak stub,
# generated at build time by libcuda-shim/gen/gen_shim.py into $(BUILD)/gen
# together with the cuGetProcAddress table; a strong definition in any of
# SHIM_SRCS overrides its stub. Nothing generated is committed.
#
# SHIM_SRCS  hand-written sources of the library. Append yours with
#            "SHIM_SRCS += libcuda-shim/foo.c" ABOVE the link rule below (or in
#            a fragment included before this one): prerequisites are expanded
#            when make reads the rule.
# SHIM_LIBS  what the library links against, after the objects. Append
#            anywhere (only the recipe uses it). A library built here also
#            needs a prerequisite line: "$(SHIM_LIB): $(BUILD)/lib/libfoo.a".
#            Extra objects can be added the same way ("$(SHIM_LIB): x.o"):
#            the recipe links every .o prerequisite.

SHIM_SRCS += libcuda-shim/procaddr.c
SHIM_SRCS += libcuda-shim/unimplemented.c
SHIM_SRCS += libcuda-shim/conn.c libcuda-shim/data.c libcuda-shim/device.c \
	libcuda-shim/ctx.c libcuda-shim/mem.c libcuda-shim/copy.c libcuda-shim/copy2d.c libcuda-shim/memset2d.c \
	libcuda-shim/stream.c libcuda-shim/event.c libcuda-shim/module.c \
	libcuda-shim/launch.c libcuda-shim/errors.c
SHIM_SRCS += libcuda-shim/exporttable.c libcuda-shim/md2.c libcuda-shim/ctxstore.c \
	libcuda-shim/library.c libcuda-shim/refused.c libcuda-shim/profile.c libcuda-shim/capture.c libcuda-shim/occupancy.c \
	libcuda-shim/ctxlocal.c libcuda-shim/hostmem.c libcuda-shim/hostreg.c \
	libcuda-shim/exportlibs.c
SHIM_SRCS += libcuda-shim/devout.c libcuda-shim/cpus.c libcuda-shim/forkreg.c \
	libcuda-shim/log.c libcuda-shim/errstate.c libcuda-shim/synchooks.c \
	libcuda-shim/current.c libcuda-shim/ptstream.c libcuda-shim/hostwork.c libcuda-shim/graphrec.c

SHIM_SRCS += libcuda-shim/mempool.c libcuda-shim/mempoolctl.c libcuda-shim/vmm.c
SHIM_SRCS += libcuda-shim/graph.c libcuda-shim/graphbuild.c \
	libcuda-shim/graphlower.c libcuda-shim/graphhost.c libcuda-shim/graphchild.c

# launch variants, function attributes, host functions, tensor maps
SHIM_SRCS += libcuda-shim/launchex.c libcuda-shim/funcattr.c libcuda-shim/hostfunc.c \
	libcuda-shim/tensormap.c
# profiler control (cudaProfiler.h)
SHIM_SRCS += libcuda-shim/profiler.c
# stream attributes
SHIM_SRCS += libcuda-shim/streamattr.c

SHIM_LIBS += $(LIBAXON_A) $(COMMON_LIB) -ldl -lpthread

SHIM_LIB := $(BUILD)/lib/libcuda.so.1

# ---- generated sources -----------------------------------------------------

SHIM_GEN_DIR    := $(BUILD)/gen
SHIM_GEN_SCRIPT := libcuda-shim/gen/gen_shim.py
SHIM_GEN_C      := $(SHIM_GEN_DIR)/shim_stubs.c $(SHIM_GEN_DIR)/shim_proctable.c
SHIM_GEN_H      := $(SHIM_GEN_DIR)/shim_proctable.h $(SHIM_GEN_DIR)/shim_gen_lists.h
SHIM_GEN_OBJS   := $(SHIM_GEN_C:$(SHIM_GEN_DIR)/%.c=$(BUILD)/obj/gen/%.o)

# One run writes all four files (grouped target, GNU make >= 4.3).
$(SHIM_GEN_C) $(SHIM_GEN_H) &: $(SHIM_GEN_SCRIPT) $(CUDA)/include/cuda.h \
		$(CUDA)/include/cudaTypedefs.h $(CUDA)/include/cudaProfiler.h \
		$(CUDA)/include/cudaProfilerTypedefs.h
	@mkdir -p $(SHIM_GEN_DIR)
	@[ "$(V)" = 1 ] || echo "  GEN     $(SHIM_GEN_DIR)/shim_*"
	$(Q)$(PYTHON) $(SHIM_GEN_SCRIPT) --cc "$(CC)" --cuda "$(CUDA)" --out $(SHIM_GEN_DIR)

# Generated C lives in $(BUILD)/gen, so it gets its own rule; it includes
# libcuda-shim/shim-internal-gen.h.
$(SHIM_GEN_OBJS): $(BUILD)/obj/gen/%.o: $(SHIM_GEN_DIR)/%.c $(SHIM_GEN_H)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) -I$(CURDIR)/libcuda-shim -MMD -MP -c -o $@ $<

# ---- the library -------------------------------------------------------------

SHIM_OBJS := $(SHIM_SRCS:%.c=$(BUILD)/obj/%.o)

# Only the driver API is exported: internals are hidden by default and every
# cu* definition says SHIM_EXPORT (or visibility("default") in generated C).
$(SHIM_OBJS) $(SHIM_GEN_OBJS): CFLAGS += -fvisibility=hidden

# Hand-written sources may include the generated headers.
$(SHIM_OBJS): | $(SHIM_GEN_H)

ALL_TARGETS += $(SHIM_LIB)
CLEAN_FILES += $(SHIM_GEN_DIR)/shim_stubs.c $(SHIM_GEN_DIR)/shim_proctable.c \
	$(SHIM_GEN_DIR)/shim_proctable.h $(SHIM_GEN_DIR)/shim_gen_lists.h

# The CUresult names and texts, from cuda.h's own comments.
$(SHIM_GEN_DIR)/shim_errors.c: libcuda-shim/gen/gen_errors.py $(CUDA)/include/cuda.h
	@mkdir -p $(dir $@)
	$(Q)$(PYTHON) libcuda-shim/gen/gen_errors.py $(CUDA)/include/cuda.h $@
$(BUILD)/obj/gen/shim_errors.o: $(SHIM_GEN_DIR)/shim_errors.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -I$(CURDIR)/libcuda-shim -c -o $@ $<
SHIM_GEN_OBJS += $(BUILD)/obj/gen/shim_errors.o

$(SHIM_LIB): $(LIBAXON_A) $(COMMON_LIB)
$(SHIM_LIB): $(SHIM_OBJS) $(SHIM_GEN_OBJS)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -shared -Wl,-soname,libcuda.so.1 -Wl,--no-undefined -Wl,--exclude-libs,ALL \
		-o $@ $(filter %.o,$^) $(SHIM_LIBS)

# ---- tests (sources in tests/, rules here) ---------------------------------
#
# They dlopen $(AXON_BUILD)/lib/libcuda.so.1 (tests/run-tests.sh sets
# AXON_BUILD), so they are not linked against it.

SHIM_TESTS      := shim-exports shim-procaddr
SHIM_TEST_PROGS := $(SHIM_TESTS:%=$(BUILD)/tests/%)
SHIM_TEST_OBJS  := $(SHIM_TESTS:%=$(BUILD)/obj/tests/%.o)

TEST_PROGS += $(SHIM_TEST_PROGS)

$(SHIM_TEST_OBJS): CFLAGS += $(CHECK_CFLAGS)
$(SHIM_TEST_OBJS): | $(SHIM_GEN_H)

$(SHIM_TEST_PROGS): $(BUILD)/tests/%: $(BUILD)/obj/tests/%.o | $(SHIM_LIB)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(CHECK_LIBS) -ldl
