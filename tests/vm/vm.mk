# make vmcheck: the kernel module's selftests in qemu (tests/vm/run.sh).
# Dependencies: tests/vm/install-deps.
.PHONY: vmcheck
vmcheck: selftests
	$(Q)tests/vm/run.sh $(BUILD)
