# common: shared data structures (AVL core, range map, VA allocator, handle
# table) and the fatbin container layout, archived into libaxoncommon.a for
# the daemon, the client library and the shim. CFLAGS has -fPIC, so the
# archive links into shared objects.

COMMON_SRCS := common/pool.c common/avl.c common/rangemap.c common/vaalloc.c common/handles.c \
	common/fatbin.c
COMMON_OBJS := $(COMMON_SRCS:%.c=$(BUILD)/obj/%.o)
COMMON_LIB  := $(BUILD)/lib/libaxoncommon.a

ALL_TARGETS += $(COMMON_LIB)

$(COMMON_LIB): $(COMMON_OBJS)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  AR      $@"
	$(Q)rm -f $@ && $(AR) rcs $@ $^

# Unit tests of the above (Check framework); the sources live in tests/ but
# their rules live here.
COMMON_TESTS      := avl rangemap vaalloc handles
COMMON_TEST_PROGS := $(COMMON_TESTS:%=$(BUILD)/tests/unit-%)
COMMON_TEST_OBJS  := $(COMMON_TESTS:%=$(BUILD)/obj/tests/unit-%.o)

TEST_PROGS += $(COMMON_TEST_PROGS)

$(COMMON_TEST_OBJS): CFLAGS += $(CHECK_CFLAGS)

$(COMMON_TEST_PROGS): $(BUILD)/tests/unit-%: $(BUILD)/obj/tests/unit-%.o $(COMMON_LIB)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(COMMON_LIB) $(CHECK_LIBS)
