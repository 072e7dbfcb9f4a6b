# tests/statsdoc.mk: unit-statsdoc, the stats document's writer
# (axond/statsdoc.c) read back by the tools' reader (tools/common/json.c),
# and the check of a worker's binary report (axond/report.c). Included from
# tests/build.mk.

STATSDOC_TEST := $(BUILD)/tests/unit-statsdoc

$(BUILD)/obj/tests/unit-statsdoc.o: CFLAGS += $(CHECK_CFLAGS) -I$(CURDIR)/axond \
	-I$(CURDIR)/tools/common

$(STATSDOC_TEST): $(BUILD)/obj/tests/unit-statsdoc.o $(BUILD)/obj/axond/statsdoc.o \
		$(BUILD)/obj/axond/report.o $(TOOLS_JSON_OBJ) $(LIBAXON_A)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(JSON_LIBS) -lm

TEST_PROGS += $(STATSDOC_TEST)
