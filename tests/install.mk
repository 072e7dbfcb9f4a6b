# tests/install.mk: install-headers (tests/install/install-headers.sh), that
# the headers make install puts under $(PREFIX)/include compile on their own
# and keep the kernel interface apart from the daemon protocol. It runs
# `make install-headers` into a scratch DESTDIR through AXON_SRC.
# Included by tests/build.mk (its tests/*.mk).

INSTALL_HEADERS_TEST := $(BUILD)/tests/install-headers

$(INSTALL_HEADERS_TEST): tests/install/install-headers.sh
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  COPY    $@"
	$(Q)install -m 0755 $< $@

TEST_PROGS += $(INSTALL_HEADERS_TEST)
