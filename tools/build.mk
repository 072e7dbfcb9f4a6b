# tools: command-line programs over libaxon.
#
# axonctl: axond stats and status, and the kernel module over generic
# netlink (tools/axonctl/; links libaxon-nl.a and libnl-genl-3). json.c is
# its small JSON reader, shared with tests/integration (tests/build.mk links
# $(AXONCTL_JSON_OBJ)).

AXONCTL          := $(BUILD)/bin/axonctl
AXONCTL_SRCS     := tools/axonctl/axonctl.c tools/axonctl/json.c
AXONCTL_OBJS     := $(AXONCTL_SRCS:%.c=$(BUILD)/obj/%.o)
AXONCTL_JSON_OBJ := $(BUILD)/obj/tools/axonctl/json.o

$(AXONCTL): $(AXONCTL_OBJS) $(LIBAXON_NL_A) $(LIBAXON_A)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $(AXONCTL_OBJS) $(LIBAXON_NL_A) $(LIBAXON_A) $(NL_LIBS) -lm

ALL_TARGETS += $(AXONCTL)

# Other tools' fragments (tools/<name>/<name>.mk), each self-contained.
-include $(wildcard tools/*/*.mk)
