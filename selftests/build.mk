# selftests: kselftest-harness tests of /dev/axon, run in a VM by
# `make vmcheck` (tests/vm/). Not part of `make`: they need the harness
# headers from Debian's linux-source-6.1 tarball (extracted into $(BUILD),
# never copied into the repository) and libnl-genl-3.
#
#   make selftests   builds $(BUILD)/selftests/*_test

# The linux-source extraction ($(LSRC_STAMP)) is defined in kmod/build.mk.

ST_DIR		:= $(BUILD)/selftests
ST_NAMES	:= client_test mmap_test daemon_test delegate_test charge_test proc_test netlink_test stress_test fault_test \
		   lifetime_test userlimit_test dmem_test \
		   fuzz_test
ST_PROGS	:= $(ST_NAMES:%=$(ST_DIR)/%)
ST_CFLAGS	:= -std=gnu11 -O2 -g -Wall -Werror -Wno-misleading-indentation -D_GNU_SOURCE -pthread \
		   -I$(CURDIR)/uapi -I$(CURDIR)/$(BUILD)/gen -I$(CURDIR)/selftests \
		   -I$(LSRC_DIR)/tools/testing/selftests
ST_NL_CFLAGS	:= $(shell pkg-config --cflags libnl-genl-3.0 2>/dev/null)
ST_NL_LIBS	:= $(shell pkg-config --libs libnl-genl-3.0 2>/dev/null)

$(ST_DIR)/helpers.o: selftests/helpers.c selftests/axon_test.h uapi/linux/axon.h uapi/axon/protocol.h
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(ST_CFLAGS) -c -o $@ $<

$(ST_DIR)/%: selftests/%.c $(ST_DIR)/helpers.o selftests/axon_test.h \
		uapi/linux/axon.h uapi/axon/protocol.h $(LSRC_STAMP)
	@[ "$(V)" = 1 ] || echo "  CCLD    $@"
	$(Q)$(CC) $(ST_CFLAGS) $(ST_NL_CFLAGS) -o $@ $< $(ST_DIR)/helpers.o \
		$(if $(filter netlink_test,$*),$(ST_NL_LIBS))

.PHONY: selftests
selftests: $(ST_PROGS)
