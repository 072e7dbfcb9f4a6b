# make vmcheck: the kernel module's selftests in qemu (tests/vm/run.sh).
# Dependencies: tests/vm/install-deps.
.PHONY: vmcheck
vmcheck: selftests $(BUILD)/bin/axond $(BUILD)/bin/axonctl $(BUILD)/bin/axon-top $(SHIM_LIB) $(BUILD)/tests/bin/vecadd \
	$(SIM_KDATA_FILES)
	$(Q)tests/vm/run.sh $(BUILD)
