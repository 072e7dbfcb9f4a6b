# The op description (uapi/axon-ops.def) and what is generated from it into
# $(BUILD)/gen at build time (uapi/gen_axon_ops.py; nothing generated is
# committed):
#   axon/ops.h         the opcodes and each op's named SQE fields; included by
#                      uapi/axon/protocol.h (the daemon protocol, not a
#                      kernel header), installed next to it
#   axon/prep.h        axon_prep_<op>() for every op; included by
#                      <axon/libaxon.h>, installed next to it
#   axon_ops_table.h   the op list behind libaxon's op names and axond's op
#                      table (not installed)
#
#   make abi-doc       rewrites the opcode table of Documentation/abi.md
#                      (section 6.2) from the description; the test
#                      op-description fails while the committed table is
#                      stale, and checks that the generator refuses broken
#                      descriptions
#
# Included by lib/build.mk (libaxon's headers include the generated ones).

AXON_OPS_DEF	:= uapi/axon-ops.def
AXON_OPS_GEN_PY	:= uapi/gen_axon_ops.py
AXON_OPS_GEN	:= $(BUILD)/gen/axon/ops.h $(BUILD)/gen/axon/prep.h \
		   $(BUILD)/gen/axon_ops_table.h
AXON_OPS_MK	:= $(BUILD)/gen/axon_ops.mk

# One run writes the three headers (grouped target, GNU make >= 4.3).
$(AXON_OPS_GEN) &: $(AXON_OPS_DEF) $(AXON_OPS_GEN_PY)
	@mkdir -p $(BUILD)/gen
	@[ "$(V)" = 1 ] || echo "  GEN     $(BUILD)/gen/{axon/ops.h,axon/prep.h,axon_ops_table.h}"
	$(Q)$(PYTHON) $(AXON_OPS_GEN_PY) --def $(AXON_OPS_DEF) --out $(BUILD)/gen

# Every C file may include axon/protocol.h, whatever rule compiles it (the
# objects' pattern rule, the shim's generated sources, the fuzzers, the
# selftests), so the headers must exist before any of them runs: they are
# what an included makefile depends on, and make brings an included makefile
# up to date, and restarts, before it builds anything else.
$(AXON_OPS_MK): $(AXON_OPS_GEN)
	$(Q)echo "# the op headers in $(BUILD)/gen are up to date (uapi/build.mk)" > $@
include $(AXON_OPS_MK)

.PHONY: abi-doc
abi-doc:
	$(Q)$(PYTHON) $(AXON_OPS_GEN_PY) --def $(AXON_OPS_DEF) --doc Documentation/abi.md

# The test (uapi/op-description-test.sh).
AXON_OPS_DOC_TEST := $(BUILD)/tests/op-description

$(AXON_OPS_DOC_TEST): uapi/op-description-test.sh
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  COPY    $@"
	$(Q)install -m 0755 $< $@

TEST_PROGS	+= $(AXON_OPS_DOC_TEST)
CLEAN_FILES	+= $(AXON_OPS_GEN) $(AXON_OPS_MK)
