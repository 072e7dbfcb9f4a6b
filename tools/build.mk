# tools: command-line programs over libaxon.
#
# axonctl: axond stats and status, and the kernel module over generic
# netlink (tools/axonctl/; links libaxon-nl.a and libnl-genl-3).
#
# tools/common/json.c: the JSON reader (over json-c) of axonctl, axon-top
# and the tests (tests/build.mk links $(TOOLS_JSON_OBJ) and $(JSON_LIBS)).

TOOLS_JSON_OBJ   := $(BUILD)/obj/tools/common/json.o
# json-c, the one JSON library of the stats document: axond writes it
# (axond/build.mk links it too), the tools and the tests read it. Not the
# shim's or libaxon's. Its headers are included as <json-c/...>: json-c's
# include directory has a json.h of its own.
JSON_LIBS        := $(or $(shell pkg-config --libs json-c 2>/dev/null),-ljson-c)

AXONCTL          := $(BUILD)/bin/axonctl
# The command table and main() in axonctl.c, one file per command family.
AXONCTL_SRCS     := $(addprefix tools/axonctl/,axonctl.c format.c daemon.c kmod.c \
		      limit.c dlimit.c clients.c kstats.c events.c)
AXONCTL_OBJS     := $(AXONCTL_SRCS:%.c=$(BUILD)/obj/%.o) $(TOOLS_JSON_OBJ)

$(AXONCTL_SRCS:%.c=$(BUILD)/obj/%.o): CFLAGS += -I$(CURDIR)/tools/common

$(AXONCTL): $(AXONCTL_OBJS) $(LIBAXON_NL_A) $(LIBAXON_A)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $(AXONCTL_OBJS) $(LIBAXON_NL_A) $(LIBAXON_A) $(NL_LIBS) \
	  $(JSON_LIBS) -lm

ALL_TARGETS += $(AXONCTL)

# Other tools' fragments (tools/<name>/<name>.mk), each self-contained.
-include $(wildcard tools/*/*.mk)
