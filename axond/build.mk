# axond: the daemon.
AXOND_SRCS := axond/main.c axond/options.c axond/server.c axond/client.c axond/dispatch.c \
	axond/work.c axond/legacy.c axond/mint.c axond/tables.c axond/stats.c axond/log.c \
	axond/clock.c axond/trace.c axond/pool.c axond/supervisor.c axond/worker.c axond/ctl.c \
	axond/transport-unix.c axond/transport-kmod.c \
	axond/backends.c \
	axond/sim/sim.c axond/sim/device.c \
	axond/cuda/cuda.c axond/cuda/info.c axond/cuda/registrar.c axond/cuda/window.c \
	axond/cuda/exec.c axond/cuda/inflight.c axond/cuda/module.c axond/cuda/occupancy.c \
	axond/cuda/private.c axond/cuda/vendor.c axond/cuda/hostmem.c axond/cuda/profile.c axond/cuda/collapse.c \
	axond/cuda/profilerctl.c
# a hello's route (hello.c) and the welcome on the wire (welcome.c), either
# side of the listener (server.c)
AXOND_SRCS += axond/hello.c axond/welcome.c axond/addrlock.c
# launch variants, function attributes, host functions, tensor maps
AXOND_SRCS += axond/sim/launchex.c axond/sim/tensormap.c axond/cuda/launch.c
include axond/sim/sim-image.mk
AXOND_SRCS += $(SIM_IMAGE_SRCS)
# device output (kernel printf) routed to each client
AXOND_SRCS += axond/devout.c axond/cuda/devout.c
# cluster occupancy queries (answered by the backend)
AXOND_SRCS += axond/sim/occupancy.c
# device-memory quotas per client and user; client window slots
AXOND_SRCS += axond/memquota.c axond/vaslot.c
# the granules of each client's window: backing and charges, one count
AXOND_SRCS += axond/granules.c
# who may trace a client and see it in the stats
AXOND_SRCS += axond/access.c
# mappings and VMM objects per client, per user and in all
AXOND_SRCS += axond/holdings.c
# the stats document: written with json-c in one place (statsdoc.c); under
# process isolation the workers' binary reports and the supervisor's side
AXOND_SRCS += axond/statsdoc.c axond/report.c axond/supervisor-stats.c axond/supervisor-kmod.c
# the cuda backend's contexts (isolation modes)
AXOND_SRCS += axond/cuda/context.c
# VMM for clients (cuMemCreate/cuMemMap): each backend's side
AXOND_SRCS += axond/sim/vmm.c axond/cuda/vmm.c
# graphs: each backend's side
AXOND_SRCS += axond/sim/graph.c axond/cuda/graph.c
# module loads off the dispatcher (loader threads), their bounds, and
# functions and globals found by hash
AXOND_SRCS += axond/loader.c axond/imagelimits.c axond/namemap.c
# the context limits that spend memory (stack, heap, printf FIFO): their
# charges, and each backend's side
# socket clients' per-cgroup limits, kept by the daemon (advisory)
AXOND_SRCS += axond/sockcg.c
AXOND_SRCS += axond/localmem.c axond/sim/ctxlimits.c axond/cuda/ctxlimits.c
# The op handlers, every file of axond/ops/ (a new op's handler is its
# file: it is declared and entered in the op table from uapi/axon-ops.def)
AXOND_SRCS += $(sort $(wildcard axond/ops/*.c))
AXOND_OBJS := $(AXOND_SRCS:%.c=$(BUILD)/obj/%.o)

$(BUILD)/bin/axond: $(AXOND_OBJS) $(LIBAXON_A) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $(AXOND_OBJS) $(LIBAXON_A) $(COMMON_LIB) $(SIM_IMAGE_LIBS) \
	  $(JSON_LIBS) -ldl

ALL_TARGETS += $(BUILD)/bin/axond

# Launch collapse against a fake driver (tests/unit-collapse.c, Check).
AXOND_UNIT_COLLAPSE := $(BUILD)/tests/unit-collapse

TEST_PROGS += $(AXOND_UNIT_COLLAPSE)

$(BUILD)/obj/tests/unit-collapse.o: CFLAGS += $(CHECK_CFLAGS) -I$(CURDIR)/axond

$(AXOND_UNIT_COLLAPSE): $(BUILD)/obj/tests/unit-collapse.o $(BUILD)/obj/axond/cuda/collapse.o
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS)

# The supervisor's messages to its workers (tests/unit-ctl.c, Check).
AXOND_UNIT_CTL := $(BUILD)/tests/unit-ctl

TEST_PROGS += $(AXOND_UNIT_CTL)

$(BUILD)/obj/tests/unit-ctl.o: CFLAGS += $(CHECK_CFLAGS) -I$(CURDIR)/axond

$(AXOND_UNIT_CTL): $(BUILD)/obj/tests/unit-ctl.o $(BUILD)/obj/axond/ctl.o $(BUILD)/obj/axond/log.o
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS)
