# tests/man.mk: man-pages (tests/man/man-pages.sh), that the manual pages in
# man/ describe every option and command the programs' --help prints and
# every function of <axon/libaxon.h>. Copied to $(BUILD)/tests/man-pages;
# it runs the programs of $(BUILD)/bin and reads man/ through AXON_SRC.
# Included by tests/build.mk (its tests/*.mk).

MAN_PAGES_TEST := $(BUILD)/tests/man-pages

$(MAN_PAGES_TEST): tests/man/man-pages.sh | $(BUILD)/bin/axond $(BUILD)/bin/axonctl \
		$(BUILD)/bin/axon-top
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  COPY    $@"
	$(Q)install -m 0755 $< $@

TEST_PROGS += $(MAN_PAGES_TEST)
