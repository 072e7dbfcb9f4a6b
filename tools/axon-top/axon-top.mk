# tools/axon-top/axon-top.mk: axon-top, top and strace for axon clients.
# Included from the top-level Makefile (or tools/build.mk's wildcard of
# tools/*/*.mk; a guard makes a second inclusion harmless):
#
#	include tools/axon-top/axon-top.mk
#
# Needs libncurses-dev (Debian; linked as ncursesw through pkg-config).
# The CUresult names come from the table libcuda-shim generates from cuda.h
# ($(BUILD)/gen/shim_errors.c, rule in libcuda-shim/build.mk).

ifndef AXON_TOP_MK
AXON_TOP_MK	:= 1

AXON_TOP	:= $(BUILD)/bin/axon-top
AXON_TOP_CORE	:= tools/common/json.c tools/axon-top/model.c \
		   tools/axon-top/columns.c tools/axon-top/source.c \
		   tools/axon-top/source-axond.c tools/axon-top/source-proc.c \
		   tools/axon-top/batch.c tools/axon-top/trace.c
# The interactive screen (curses): the loop, drawing, keys, the trace view.
AXON_TOP_UI	:= $(addprefix tools/axon-top/,ui.c ui-draw.c ui-input.c ui-trace.c)
AXON_TOP_SRCS	:= $(AXON_TOP_CORE) $(AXON_TOP_UI) tools/axon-top/main.c
AXON_TOP_OBJS	:= $(AXON_TOP_SRCS:%.c=$(BUILD)/obj/%.o)
# Everything but the UI and main(), for the unit tests.
AXON_TOP_CORE_OBJS := $(AXON_TOP_CORE:%.c=$(BUILD)/obj/%.o) \
		   $(BUILD)/obj/gen/shim_errors.o

AXON_TOP_CURSES_CFLAGS	:= $(shell pkg-config --cflags ncursesw 2>/dev/null)
AXON_TOP_CURSES_LIBS	:= $(or $(shell pkg-config --libs ncursesw 2>/dev/null),-lncursesw)

$(AXON_TOP_OBJS): CFLAGS += -I$(CURDIR)/libcuda-shim -I$(CURDIR)/tools/common
$(AXON_TOP_UI:%.c=$(BUILD)/obj/%.o): CFLAGS += $(AXON_TOP_CURSES_CFLAGS)

$(AXON_TOP): $(AXON_TOP_OBJS) $(BUILD)/obj/gen/shim_errors.o $(LIBAXON_A)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $(AXON_TOP_OBJS) $(BUILD)/obj/gen/shim_errors.o \
	  $(LIBAXON_A) $(AXON_TOP_CURSES_LIBS) $(JSON_LIBS) -lm

ALL_TARGETS	+= $(AXON_TOP)

# make install also installs axon-top.
.PHONY: install-axon-top
install: install-axon-top
install-axon-top: $(AXON_TOP)
	install -D -m 0755 $(AXON_TOP) $(DESTDIR)$(PREFIX)/bin/axon-top

endif
