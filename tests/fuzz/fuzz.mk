# tests/fuzz/: coverage-guided fuzzers (libFuzzer) of what a hostile client
# hands axond. Included from the top-level Makefile. Documentation/testing.md
# says how to run them.
#
#   fuzz-hello  a connection's first message: server_hello_check (server.c),
#               then client_create (client.c: negotiate, the region, the
#               backend's client state) and client_disconnect
#   fuzz-sqe    SQEs through the dispatcher (dispatch.c, ops/) of an
#               in-process sim daemon, against a client holding real
#               contexts, streams, events, a module, a function, an
#               allocation, a VMM handle and a graph
#   fuzz-image  the sim's module-image reader (sim/image.c and the readers
#               it assembles from: ELF cubin, fatbin and its LZ4/ZSTD
#               entries, PTX)
#
# They link the daemon's own objects, built again with clang and
# -fsanitize=fuzzer-no-link,address,undefined under $(BUILD)/fuzz/obj/
# (main.c with its main() renamed: the fuzzer runtime has one). Needs
# clang-14 and libclang-rt-14-dev (Debian); without them `make fuzz` says so
# and $(BUILD)/tests/fuzz-smoke, in the normal test list, exits 77.
#
#   make fuzz                       build $(BUILD)/fuzz/bin/fuzz-*
#   make fuzz-run FUZZ_SECONDS=N    run each for N seconds (default 60) on a
#                                   working corpus in $(BUILD)/fuzz/corpus/
#                                   seeded from tests/fuzz/corpus/; findings
#                                   go to $(BUILD)/fuzz/artifacts/
#
# The smoke test runs each fuzzer for FUZZ_SMOKE_SECONDS (default 20) on a
# temporary copy of its committed corpus and fails on any finding. The SAN
# build's copy skips: the fuzzers carry ASan+UBSan already, and the plain
# build's copy runs the same binaries' sources.

FUZZ_TARGETS	:= hello sqe image
FUZZ_DIR	:= tests/fuzz
FUZZ_OUT	:= $(BUILD)/fuzz
FUZZ_OBJ	:= $(FUZZ_OUT)/obj
FUZZ_BINS	:= $(FUZZ_TARGETS:%=$(FUZZ_OUT)/bin/fuzz-%)
FUZZ_SECONDS	?= 60

# clang-14 (Debian's) when present, else clang; FUZZ_CC=... overrides.
ifeq ($(origin FUZZ_CC),undefined)
FUZZ_CC		:= $(shell command -v clang-14 2>/dev/null || command -v clang 2>/dev/null)
endif
# libFuzzer's runtime is what clang needs besides itself (libclang-rt-14-dev).
FUZZ_HAVE	:= $(if $(FUZZ_CC),$(shell f=$$($(FUZZ_CC) --print-runtime-dir 2>/dev/null)/libclang_rt.fuzzer-x86_64.a; \
			[ -f "$$f" ] && echo 1))

FUZZ_SANFLAGS	:= -fsanitize=address,undefined -fno-sanitize-recover=undefined \
		   -fno-omit-frame-pointer
# The build's flags without its optimisation and sanitizer choices.
FUZZ_CFLAGS	:= $(filter-out -O% -fsanitize=% -fno-sanitize-recover=% -fno-omit-frame-pointer, \
		     $(CFLAGS_BASE)) $(EXTRA_CFLAGS) -O1 $(FUZZ_SANFLAGS) -fsanitize=fuzzer-no-link

# The daemon's code, main.c included (axond_request_restart and
# axond_parse_args live there) with main() renamed, and the test kernels,
# which the in-process daemon installs as --sim-kernels would load them.
FUZZ_AXOND_OBJS	:= $(AXOND_SRCS:%.c=$(FUZZ_OBJ)/%.o) \
		   $(LIBAXON_SRCS:%.c=$(FUZZ_OBJ)/%.o) $(COMMON_SRCS:%.c=$(FUZZ_OBJ)/%.o)
FUZZ_DAEMON_OBJ	:= $(FUZZ_OBJ)/$(FUZZ_DIR)/daemon.o
FUZZ_LIBS	:= $(SIM_IMAGE_LIBS) $(JSON_LIBS) -ldl -pthread

$(FUZZ_OBJ)/axond/main.o: FUZZ_EXTRA := -Dmain=axond_main_unused
$(FUZZ_OBJ)/$(FUZZ_DIR)/%.o: FUZZ_EXTRA := -I$(CURDIR)/axond -I$(CURDIR)/axond/sim

$(FUZZ_OBJ)/%.o: %.c
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  FUZZCC  $<"
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_EXTRA) -MMD -MP -c -o $@ $<

-include $(shell find $(FUZZ_OBJ) -name '*.d' 2>/dev/null)

# fuzz-image needs only the image reader; the other two the whole daemon.
$(FUZZ_OUT)/bin/fuzz-image: $(FUZZ_OBJ)/$(FUZZ_DIR)/fuzz-image.o \
		$(SIM_IMAGE_SRCS:%.c=$(FUZZ_OBJ)/%.o) $(FUZZ_OBJ)/common/fatbin.o
$(FUZZ_OUT)/bin/fuzz-hello $(FUZZ_OUT)/bin/fuzz-sqe: $(FUZZ_OUT)/bin/fuzz-%: \
		$(FUZZ_OBJ)/$(FUZZ_DIR)/fuzz-%.o $(FUZZ_DAEMON_OBJ) $(FUZZ_AXOND_OBJS) \
		$(SIM_KERNELS_SRCS:%.c=$(FUZZ_OBJ)/%.o)

$(FUZZ_BINS):
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  FUZZLD  $@"
	$(Q)$(FUZZ_CC) -fsanitize=fuzzer $(FUZZ_SANFLAGS) -o $@ $^ $(FUZZ_LIBS)

.PHONY: fuzz fuzz-run
ifeq ($(FUZZ_HAVE),1)
fuzz: $(FUZZ_BINS)
else
fuzz:
	@echo "fuzz: needs clang with libFuzzer's runtime (Debian: clang-14 libclang-rt-14-dev;" \
	      "scripts/install-deps installs them)" >&2; exit 1
endif

# Each fuzzer in turn, one process (-jobs=1 would fork; the machines are
# small and shared), on its working corpus.
fuzz-run: fuzz
	$(Q)set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_OUT)/corpus/$$t $(FUZZ_OUT)/artifacts/$$t; \
		cp -n $(FUZZ_DIR)/corpus/$$t/* $(FUZZ_OUT)/corpus/$$t/; \
		echo "fuzz-run: fuzz-$$t for $(FUZZ_SECONDS) s"; \
		$(FUZZ_OUT)/bin/fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -timeout=20 \
			-print_final_stats=1 -artifact_prefix=$(FUZZ_OUT)/artifacts/$$t/ \
			$(FUZZ_ARGS) $(FUZZ_OUT)/corpus/$$t; \
	done

# The smoke test in the normal test list (tests/run-tests.sh).
FUZZ_SMOKE	:= $(BUILD)/tests/fuzz-smoke

$(FUZZ_SMOKE): $(FUZZ_DIR)/fuzz-smoke.sh
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  COPY    $@"
	$(Q)install -m 0755 $< $@

ifeq ($(FUZZ_HAVE)$(SAN),10)
$(FUZZ_SMOKE): | $(FUZZ_BINS)
endif

TEST_PROGS	+= $(FUZZ_SMOKE)
