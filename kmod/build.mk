# kmod: axon.ko, built out of tree with kbuild into $(BUILD)/kmod/.
#
#   make            also builds $(BUILD)/kmod/axon.ko when kernel headers are
#                   found (a message, not an error, when none are)
#   make kmod       the module alone; KDIR=/path/to/headers overrides
#   make kmod-lint  checkpatch.pl --strict and sparse (C=2) on kmod/
#
# KDIR defaults to the running kernel's build directory, else the newest
# /usr/src/linux-headers-*-amd64. The sources are symlinked into the build
# directory (kbuild writes its objects next to the sources it compiles), so
# the tree stays clean. Not built in sanitizer builds (SAN=1).

KMOD_DIR	:= $(BUILD)/kmod
KMOD_KO		:= $(KMOD_DIR)/axon.ko
KMOD_SRC	:= $(wildcard kmod/*.c kmod/*.h) kmod/Kbuild
# The uapi headers the module includes, and only these (the daemon protocol,
# uapi/axon/protocol.h, is userspace's).
KMOD_UAPI	:= uapi/linux/axon.h uapi/linux/axon-layout.h
KDIR		?= $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
		     $(shell ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n 1))

# Builds the module in directory $(1) against headers $(2), extra args $(3).
# MAKEFLAGS is cleared so the top level's variables (BUILD, SAN, V...) do
# not leak into kbuild.
define kmod_build
	@mkdir -p $(1)
	$(Q)for f in $(KMOD_SRC); do ln -sf $(CURDIR)/$$f $(1)/; done
	$(Q)MAKEFLAGS= $(MAKE) -s -C $(2) M=$(abspath $(1)) \
		AXON_UAPI=$(CURDIR)/uapi $(3) modules
endef

# A few files of Debian's linux-source-6.1 tarball, extracted at build time
# into $(BUILD)/linux-src (never into the repository): the kselftest harness
# for selftests/, checkpatch.pl and its data files for kmod-lint.
LINUX_SRC_TAR	?= $(firstword $(wildcard /usr/src/linux-source-6.1.tar.xz) \
		     $(shell ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1))
LSRC_DIR	:= $(BUILD)/linux-src
LSRC_STAMP	:= $(LSRC_DIR)/.extracted
LSRC_FILES	:= tools/testing/selftests/kselftest_harness.h \
		   tools/testing/selftests/kselftest.h \
		   scripts/checkpatch.pl scripts/spelling.txt \
		   scripts/const_structs.checkpatch

# Extracts the few files we use from the tarball (about 20 s).
$(LSRC_STAMP):
	@[ -n "$(LINUX_SRC_TAR)" ] || { echo "no linux-source tarball: apt-get install linux-source-6.1 (tests/vm/install-deps)" >&2; exit 1; }
	@mkdir -p $(LSRC_DIR)
	@echo "  UNTAR   $(LSRC_FILES) from $(LINUX_SRC_TAR)"
	$(Q)top=$$(tar -tJf $(LINUX_SRC_TAR) 2>/dev/null | head -n 1 | cut -d/ -f1); \
	  tar -xJf $(LINUX_SRC_TAR) -C $(LSRC_DIR) --strip-components=1 \
	    $(addprefix $$top/,$(LSRC_FILES))
	@touch $@

.PHONY: kmod kmod-skip kmod-lint
ifneq ($(KDIR),)
ifneq ($(wildcard $(KDIR)/Makefile),)
$(KMOD_KO): $(KMOD_SRC) $(KMOD_UAPI)
	@[ "$(V)" = 1 ] || echo "  KBUILD  $@ ($(KDIR))"
	$(call kmod_build,$(KMOD_DIR),$(KDIR))
kmod: $(KMOD_KO)
else
kmod: kmod-skip
endif
else
kmod: kmod-skip
endif

kmod-skip:
	@echo "  SKIP    kmod: no kernel headers (set KDIR, or apt-get install linux-headers-amd64)"

ifneq ($(SAN),1)
ALL_TARGETS += kmod
endif

# checkpatch --strict and sparse must both be silent.
KMOD_SPARSE_DIR := $(BUILD)/kmod-sparse
kmod-lint: $(LSRC_STAMP)
	@echo "  CHKPATCH kmod/*.c kmod/*.h $(KMOD_UAPI)"
	$(Q)perl $(LSRC_DIR)/scripts/checkpatch.pl --strict --no-tree -f --terse \
		--show-types kmod/*.c kmod/*.h $(KMOD_UAPI) \
		> $(BUILD)/checkpatch.log 2>&1; \
	  if grep -qv '^total: 0 errors, 0 warnings, 0 checks' $(BUILD)/checkpatch.log; then \
	    cat $(BUILD)/checkpatch.log; exit 1; fi
	@[ -n "$(KDIR)" ] || { echo "kmod-lint: no kernel headers (KDIR)" >&2; exit 1; }
	@command -v sparse >/dev/null || { echo "kmod-lint: sparse missing (tests/vm/install-deps)" >&2; exit 1; }
	@echo "  SPARSE  kmod/*.c (C=2, $(KDIR))"
	$(call kmod_build,$(KMOD_SPARSE_DIR),$(KDIR),C=2 2>$(BUILD)/sparse.log)
	$(Q)if grep -E 'warning:|error:' $(BUILD)/sparse.log; then exit 1; fi
	@echo "  LINT    clean"
