# libaxon: the raw ring API (shared and static).

# The op headers generated from uapi/axon-ops.def, which libaxon.h and
# axon/protocol.h include.
include uapi/build.mk

LIBAXON_SRCS := lib/setup.c lib/unix.c lib/kmod.c lib/queue.c lib/opnames.c
LIBAXON_OBJS := $(LIBAXON_SRCS:%.c=$(BUILD)/obj/%.o)
LIBAXON_A    := $(BUILD)/lib/libaxon.a
LIBAXON_SO   := $(BUILD)/lib/libaxon.so

# The kernel module over generic netlink (axon_nl_*), through libnl-genl-3
# (Debian libnl-3-dev libnl-genl-3-dev). In libaxon.so and in its own
# archive libaxon-nl.a, never in libaxon.a: the CUDA shim links libaxon.a
# and must not depend on libnl. Static users link
# $(LIBAXON_NL_A) $(LIBAXON_A) $(NL_LIBS).
NL_CFLAGS     := $(shell pkg-config --cflags libnl-genl-3.0 2>/dev/null || echo -I/usr/include/libnl3)
NL_LIBS       := $(shell pkg-config --libs libnl-genl-3.0 2>/dev/null || echo -lnl-genl-3 -lnl-3)
LIBAXON_NL_SRCS := lib/netlink.c
LIBAXON_NL_OBJS := $(LIBAXON_NL_SRCS:%.c=$(BUILD)/obj/%.o)
LIBAXON_NL_A    := $(BUILD)/lib/libaxon-nl.a

$(LIBAXON_NL_OBJS): CFLAGS += $(NL_CFLAGS)

$(LIBAXON_A): $(LIBAXON_OBJS)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBAXON_NL_A): $(LIBAXON_NL_OBJS)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBAXON_SO): $(LIBAXON_OBJS) $(LIBAXON_NL_OBJS) lib/libaxon.map
	@mkdir -p $(dir $@)
	$(Q)$(CC) -shared -Wl,-soname,libaxon.so.1 -Wl,--version-script=lib/libaxon.map \
	  -Wl,--no-undefined $(LDFLAGS) -o $(BUILD)/lib/libaxon.so.1 $(LIBAXON_OBJS) \
	  $(LIBAXON_NL_OBJS) $(NL_LIBS)
	$(Q)ln -sf libaxon.so.1 $@

ALL_TARGETS += $(LIBAXON_A) $(LIBAXON_NL_A) $(LIBAXON_SO)

# make install (and the install-headers test): the headers a program built
# against axon includes, under $(PREFIX)/include: the kernel interface and
# its region layout in linux/, the daemon protocol, the generated op
# headers and libaxon's in axon/.
.PHONY: install-headers
install: install-headers
install-headers: $(AXON_OPS_GEN)
	install -d $(DESTDIR)$(PREFIX)/include/axon $(DESTDIR)$(PREFIX)/include/linux
	install -m 0644 uapi/linux/axon.h uapi/linux/axon-layout.h \
	  $(DESTDIR)$(PREFIX)/include/linux/
	install -m 0644 uapi/axon/protocol.h $(BUILD)/gen/axon/ops.h \
	  $(BUILD)/gen/axon/prep.h lib/include/axon/libaxon.h \
	  $(DESTDIR)$(PREFIX)/include/axon/
