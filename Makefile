# axon top-level build. Non-recursive: each directory contributes a build.mk
# fragment that appends to the variables below.
#
#   make            build everything that needs no root into $(BUILD)
#   make check      all tests, plain and under ASan+UBSan
#   make demo       the main job: axond (sim) + a driver-API program
#   make bench      native-vs-axon benchmarks
#   make gpucheck   our CUDA programs and PyTorch natively and through axon
#                   (GPU machine; Documentation/testing-gpu.md)
#   make gpucheck-corpus  NVIDIA's CUDA samples and framework programs, the same
#                   way, with wall times (testing-gpu.md §8)
#   make install DESTDIR=...

BUILD	?= build
SAN	?= 0
CUDA	?= /usr/local/cuda
PREFIX	?= /usr
V	?= 0

CC	?= gcc
PYTHON	?= python3
NVCC	?= $(CUDA)/bin/nvcc

CFLAGS_BASE := -std=gnu11 -Wall -Wextra -Werror -g -fPIC -pthread \
	-D_GNU_SOURCE -fno-strict-aliasing \
	-I$(CURDIR)/uapi -I$(CURDIR)/lib/include -I$(CURDIR)/common \
	-I$(CURDIR)/$(BUILD)/gen -I$(CUDA)/include
ifeq ($(SAN),1)
CFLAGS_BASE += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=undefined
LDFLAGS_BASE := -fsanitize=address,undefined
else
CFLAGS_BASE += -O2
LDFLAGS_BASE :=
endif
CFLAGS	:= $(CFLAGS_BASE) $(EXTRA_CFLAGS)
LDFLAGS	:= $(LDFLAGS_BASE) -pthread $(EXTRA_LDFLAGS)

CHECK_CFLAGS := $(shell pkg-config --cflags check 2>/dev/null)
CHECK_LIBS   := $(shell pkg-config --libs check 2>/dev/null)

ifeq ($(V),1)
Q :=
else
Q := @
endif

# Filled in by the fragments.
ALL_TARGETS :=
TEST_PROGS :=
CLEAN_FILES :=

.PHONY: all check check-plain check-san demo bench install clean
all:

include common/build.mk
include lib/build.mk
include axond/build.mk
include libcuda-shim/build.mk
include tools/build.mk
include man/build.mk
include tests/build.mk
include libnvml-shim/build.mk
include tests/cudart/cudart.mk
include tests/tools/tools.mk
include bench/build.mk
include tests/gpu/gpu.mk
include tests/gpu/corpus/corpus.mk
include kmod/build.mk
include selftests/build.mk
include tests/vm/vm.mk
include tests/attack/attack.mk
include tests/fuzz/fuzz.mk

all: $(ALL_TARGETS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  CC      $<"
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)

# make check: the plain build, its layering (scripts/check-layering), the
# netlink spec against the uapi header (scripts/check-netlink-spec), the reST
# pages (scripts/check-rst) and its
# tests (and the GPU benchmark scripts' own logic, bench/gpu/selftest.sh),
# then the same tests under ASan+UBSan, then the kernel module: lint
# (checkpatch --strict, sparse) and its selftests in qemu on Debian's 6.1
# kernel (and on the debug kernel when present).
check: check-plain check-san check-kmod

# The calls between source files (scripts/check-layering): no cycle between
# more than three files, nothing in the daemon's core calling up.
.PHONY: layering
layering: all
	$(Q)scripts/check-layering $(BUILD)

# The netlink spec (Documentation/netlink/axon.yaml) names and numbers what
# uapi/linux/axon.h does (scripts/check-netlink-spec).
.PHONY: netlink-spec
netlink-spec:
	$(Q)scripts/check-netlink-spec Documentation/netlink/axon.yaml uapi/linux/axon.h

.PHONY: check-kmod
check-kmod:
	$(Q)$(MAKE) --no-print-directory BUILD=build SAN=0 kmod-lint vmcheck

check-plain:
	$(Q)$(MAKE) --no-print-directory BUILD=build SAN=0 all test-progs build/bench/gpu/drvbench
	$(Q)scripts/check-layering build
	$(Q)scripts/check-netlink-spec Documentation/netlink/axon.yaml uapi/linux/axon.h
	$(Q)scripts/check-rst Documentation/*.rst
	$(Q)tests/run-tests.sh build
	$(Q)SELFTEST_BUILD=build bench/gpu/selftest.sh

check-san:
	$(Q)$(MAKE) --no-print-directory BUILD=build/san SAN=1 all test-progs
	$(Q)ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  tests/run-tests.sh build/san

.PHONY: test-progs
test-progs: $(TEST_PROGS)

demo: all
	$(Q)tests/demo.sh $(BUILD)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/axon \
	  $(DESTDIR)$(PREFIX)/lib/$(shell gcc -print-multiarch)
	install -m 0755 $(BUILD)/bin/axond $(DESTDIR)$(PREFIX)/bin/axond
	install -m 0755 $(BUILD)/bin/axonctl $(DESTDIR)$(PREFIX)/bin/axonctl
	install -m 0755 $(BUILD)/lib/libcuda.so.1 $(DESTDIR)$(PREFIX)/lib/axon/libcuda.so.1
	ln -sf libcuda.so.1 $(DESTDIR)$(PREFIX)/lib/axon/libcuda.so
	install -m 0755 $(BUILD)/lib/libnvidia-ml.so.1 $(DESTDIR)$(PREFIX)/lib/axon/libnvidia-ml.so.1
	ln -sf libnvidia-ml.so.1 $(DESTDIR)$(PREFIX)/lib/axon/libnvidia-ml.so
	install -m 0755 $(BUILD)/lib/libaxon.so.1 $(DESTDIR)$(PREFIX)/lib/$(shell gcc -print-multiarch)/libaxon.so.1
	ln -sf libaxon.so.1 $(DESTDIR)$(PREFIX)/lib/$(shell gcc -print-multiarch)/libaxon.so
	install -m 0644 $(BUILD)/lib/libaxon.a $(DESTDIR)$(PREFIX)/lib/$(shell gcc -print-multiarch)/libaxon.a

clean:
	rm -rf build $(CLEAN_FILES)
