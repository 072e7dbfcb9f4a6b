# man/: the manual pages, written by hand in roff (axond.8, axonctl.8,
# axon-top.1, libaxon.3 and a page per libaxon function group; the other
# names of a group are .so links). make install puts them under
# $(PREFIX)/share/man/man{1,3,8}; tests/man/man-pages.sh keeps them in step
# with the programs and the header.

MAN_INSTALL_DIR := $(DESTDIR)$(PREFIX)/share/man

.PHONY: install-man
install: install-man

install-man:
	install -d $(MAN_INSTALL_DIR)/man1 $(MAN_INSTALL_DIR)/man3 $(MAN_INSTALL_DIR)/man8
	install -m 0644 $(wildcard man/*.1) $(MAN_INSTALL_DIR)/man1/
	install -m 0644 $(wildcard man/*.3) $(MAN_INSTALL_DIR)/man3/
	install -m 0644 $(wildcard man/*.8) $(MAN_INSTALL_DIR)/man8/
