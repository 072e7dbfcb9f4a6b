# tests/attack/: the attack suite. Each tests/attack/attack-<name>.c is one
# test program, $(BUILD)/tests/attack-<name>, built with the integration
# harness (tests/integration/harness.c: a private axond on the sim backend)
# and libaxon, and run by tests/run-tests.sh with the other tests, plain and
# under ASan+UBSan. Each is a hostile client's attack that once worked (a
# cross-client access, a request that killed the daemon, a resource one
# client could exhaust): it must be refused or survived, and each test
# failed on the tree before its fix. Included from the top-level Makefile.

ATTACK_DIR     := tests/attack
ATTACK_OBJDIR  := $(BUILD)/obj/$(ATTACK_DIR)
ATTACK_SRCS    := $(wildcard $(ATTACK_DIR)/attack-*.c)
ATTACK_NAMES   := $(ATTACK_SRCS:$(ATTACK_DIR)/%.c=%)
ATTACK_PROGS   := $(ATTACK_NAMES:%=$(BUILD)/tests/%)
ATTACK_COMMON  := $(ATTACK_OBJDIR)/attack.o

$(ATTACK_NAMES:%=$(ATTACK_OBJDIR)/%.o) $(ATTACK_COMMON): \
	CFLAGS += $(CHECK_CFLAGS) -I$(CURDIR)/tests/integration

$(ATTACK_PROGS): $(BUILD)/tests/%: $(ATTACK_OBJDIR)/%.o $(ATTACK_COMMON) \
		$(IT_HARNESS_OBJS) $(LIBAXON_A)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(ATTACK_COMMON) $(IT_HARNESS_OBJS) $(LIBAXON_A) \
		$(CHECK_LIBS) $(JSON_LIBS) -lm

# What they run: the daemon, the shim's clients, the kernel images.
$(ATTACK_PROGS): | $(BUILD)/bin/axond $(IT_CLIENT_PROGS)

# A module image with a large zero-initialised global (attack-globals),
# when nvcc exists; without it that test exits 77.
ATTACK_KDATA := $(BUILD)/tests/data/bigglobal.cubin
$(ATTACK_KDATA): $(ATTACK_DIR)/bigglobal.cu
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  NVCC    $@"
	$(Q)$(NVCC) -cubin -arch=sm_90 -o $@ $<
ifeq ($(SIM_HAVE_NVCC),1)
$(ATTACK_PROGS): | $(ATTACK_KDATA)
endif

TEST_PROGS += $(ATTACK_PROGS)

.PHONY: attack-progs
attack-progs: $(ATTACK_PROGS)
