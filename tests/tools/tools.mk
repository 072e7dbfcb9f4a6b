# tests/tools/tools.mk: tests of axon-top (tools/axon-top/). Included from
# the top-level Makefile (or tests/build.mk):
#
#	include tests/tools/tools.mk
#
#   unit-axon-top    the JSON reader, stats parsing, rates, columns, trace
#                    lines (C, linked with axon-top's objects but the UI)
#   unit-axon-top-proc  the /proc/axon source (Check): axon-top --source
#                    proc --proc-dir on tests/tools/fixtures/proc-*, field by
#                    field; unwrapping and rates; garbage and short files
#   axon-top-batch   -b text and --json against a private axond and known
#                    clients, field by field; filters, sort, errors
#   axon-top-trace   --trace shows a client's calls in order, with results
#   axon-top-ui      the curses UI in tmux at 80x24, 200x60 and a resize:
#                    header, rows, no line wider than the screen, keys
#
# The scripts are copied to $(BUILD)/tests/<name> and source
# $(BUILD)/tests/bin/axon-top-lib.sh; their client is
# $(BUILD)/tests/bin/topclient (tests/tools/topclient.c, linked against our
# libcuda.so.1). The UI test needs tmux (exits 77 without it); the trace
# test needs the kernel images built with nvcc (77 without).

ifndef AXON_TOP_TESTS_MK
AXON_TOP_TESTS_MK := 1

TOPT_SCRIPTS	:= axon-top-batch axon-top-trace axon-top-ui
TOPT_PROGS	:= $(TOPT_SCRIPTS:%=$(BUILD)/tests/%) $(BUILD)/tests/unit-axon-top \
		   $(BUILD)/tests/unit-axon-top-proc
TOPT_CLIENT	:= $(BUILD)/tests/bin/topclient
TOPT_LIB	:= $(BUILD)/tests/bin/axon-top-lib.sh
# Spelled out (not axon-top.mk's variables) so that the order in which the
# fragments are included does not matter.
TOPT_CORE_OBJS	:= $(BUILD)/obj/tools/common/json.o \
		   $(addprefix $(BUILD)/obj/tools/axon-top/,model.o \
		   columns.o source.o source-axond.o source-proc.o batch.o trace.o) \
		   $(BUILD)/obj/gen/shim_errors.o

$(TOPT_SCRIPTS:%=$(BUILD)/tests/%): $(BUILD)/tests/%: tests/tools/%.sh
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  COPY    $@"
	$(Q)install -m 0755 $< $@

$(TOPT_LIB): tests/tools/lib.sh
	@mkdir -p $(dir $@)
	$(Q)install -m 0644 $< $@

$(TOPT_CLIENT): $(BUILD)/obj/tests/tools/topclient.o $(BUILD)/lib/libcuda.so.1
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -L$(BUILD)/lib -l:libcuda.so.1 \
		-Wl,-rpath,'$$ORIGIN/../../lib'

$(BUILD)/obj/tests/tools/unit-axon-top.o: CFLAGS += -I$(CURDIR)/tools/axon-top \
	-I$(CURDIR)/tools/common

$(BUILD)/tests/unit-axon-top: $(BUILD)/obj/tests/tools/unit-axon-top.o \
		$(TOPT_CORE_OBJS) $(BUILD)/lib/libaxon.a
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(JSON_LIBS) -lm

$(BUILD)/obj/tests/tools/unit-axon-top-proc.o: CFLAGS += -I$(CURDIR)/tools/axon-top \
	-I$(CURDIR)/tools/common \
	$(CHECK_CFLAGS) -DTOPP_BUILD='"$(CURDIR)/$(BUILD)"' -DTOPP_SRC='"$(CURDIR)"'

# Runs $(BUILD)/bin/axon-top on the fixtures.
$(BUILD)/tests/unit-axon-top-proc: $(BUILD)/obj/tests/tools/unit-axon-top-proc.o \
		$(TOPT_CORE_OBJS) $(BUILD)/lib/libaxon.a | $(BUILD)/bin/axon-top
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o %.a,$^) $(CHECK_LIBS) $(JSON_LIBS) -lm

# What the scripts run.
$(TOPT_SCRIPTS:%=$(BUILD)/tests/%): | $(BUILD)/bin/axon-top $(BUILD)/bin/axond \
		$(TOPT_CLIENT) $(TOPT_LIB)
ifneq ($(shell command -v $(NVCC) 2>/dev/null),)
$(TOPT_CLIENT): | $(BUILD)/tests/data/kernels.cubin
endif

TEST_PROGS	+= $(TOPT_PROGS)

endif
