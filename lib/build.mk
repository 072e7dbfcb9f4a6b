# libaxon: the raw ring API (shared and static).
LIBAXON_SRCS := lib/setup.c lib/kmod.c lib/queue.c lib/opnames.c
LIBAXON_OBJS := $(LIBAXON_SRCS:%.c=$(BUILD)/obj/%.o)
LIBAXON_A    := $(BUILD)/lib/libaxon.a
LIBAXON_SO   := $(BUILD)/lib/libaxon.so

$(LIBAXON_A): $(LIBAXON_OBJS)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBAXON_SO): $(LIBAXON_OBJS) lib/libaxon.map
	@mkdir -p $(dir $@)
	$(Q)$(CC) -shared -Wl,-soname,libaxon.so.1 -Wl,--version-script=lib/libaxon.map \
	  -Wl,--no-undefined $(LDFLAGS) -o $(BUILD)/lib/libaxon.so.1 $(LIBAXON_OBJS)
	$(Q)ln -sf libaxon.so.1 $@

ALL_TARGETS += $(LIBAXON_A) $(LIBAXON_SO)
