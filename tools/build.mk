# tools: command-line programs over libaxon.
#
# axonctl: stats and daemon status (tools/axonctl/). json.c is its small
# JSON reader, shared with tests/integration (tests/build.mk links
# $(AXONCTL_JSON_OBJ)).

AXONCTL          := $(BUILD)/bin/axonctl
AXONCTL_SRCS     := tools/axonctl/axonctl.c tools/axonctl/json.c
AXONCTL_OBJS     := $(AXONCTL_SRCS:%.c=$(BUILD)/obj/%.o)
AXONCTL_JSON_OBJ := $(BUILD)/obj/tools/axonctl/json.o

$(AXONCTL): $(AXONCTL_OBJS) $(LIBAXON_A)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $(AXONCTL_OBJS) $(LIBAXON_A) -lm

ALL_TARGETS += $(AXONCTL)

# Other tools' fragments (tools/<name>/<name>.mk), each self-contained.
-include $(wildcard tools/*/*.mk)
