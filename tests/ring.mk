# tests/ring.mk: libaxon ring tests (Check framework), sources in tests/ring/.
# Included from tests/build.mk (its wildcard include of tests/*.mk). Each
# tests/ring/<name>.c becomes $(BUILD)/tests/<name>, linked against the
# static libaxon: a new test is its file, nothing else (an operation's test,
# CONTRIBUTING.md). Each may start a private axond (daemon.h).
#
#   abi-layout      every uapi struct size / offset, macros, op names
#   region-layout   axon_region_layout(): defaults, rounding, refusals, rules
#   spsc-threads    the SPSC ring protocol between two threads
#   spsc-procs      the same between two processes (memfd region)
#   connect-errors  axon_connect failures and NOP traffic against a private
#                   axond (needs $(BUILD)/bin/axond)
#   cq-backpressure a client that lets its CQ fill: the daemon must resume
#                   taking SQEs once the client reaps (known bug: skipped
#                   until it was fixed)

RING_TESTS	:= $(sort $(basename $(notdir $(wildcard tests/ring/*.c))))
RING_TEST_PROGS	:= $(RING_TESTS:%=$(BUILD)/tests/%)
RING_TEST_OBJS	:= $(RING_TESTS:%=$(BUILD)/obj/tests/ring/%.o)

TEST_PROGS	+= $(RING_TEST_PROGS)

$(RING_TEST_OBJS): CFLAGS += $(CHECK_CFLAGS) -I$(CURDIR)/tests/ring

$(RING_TEST_PROGS): $(BUILD)/tests/%: $(BUILD)/obj/tests/ring/%.o $(LIBAXON_A)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(LIBAXON_A) $(CHECK_LIBS)

# The daemon tests start $(AXON_BUILD)/bin/axond themselves.
$(RING_TEST_PROGS): | $(BUILD)/bin/axond
