# tests/gpu/corpus/corpus.mk: the conformance corpus (Documentation/
# testing-gpu.md §8): NVIDIA's CUDA samples and framework programs, natively
# and through axon, on a GPU machine. Included from the top-level Makefile
# after tests/gpu/gpu.mk.
#
#   make gpucheck-corpus   gpu-progs (unless GPUCHECK_NOBUILD=1), then
#                          tests/gpu/corpus/run.sh $(BUILD) $(VENDOR_LIB);
#                          the samples are built by run.sh, on the GPU
#                          machine, from .corpus/cuda-samples
#                          (tests/gpu/corpus/get-samples)
#
# Test ($(BUILD)/tests/, run by `make check`):
#   unit-corpus   the normaliser, the table, the lists, run.sh without a GPU

$(BUILD)/tests/unit-corpus: tests/gpu/corpus/test-corpus.sh
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  COPY    $@"
	$(Q)install -m 0755 $< $@
$(BUILD)/tests/unit-corpus: | $(GPU_ISOCHECK) $(BUILD)/bin/axond $(SHIM_LIB) $(NVML_LIB)

TEST_PROGS	+= $(BUILD)/tests/unit-corpus

.PHONY: gpucheck-corpus
gpucheck-corpus:
	$(Q)[ "$(GPUCHECK_NOBUILD)" = 1 ] || $(MAKE) --no-print-directory gpu-progs
	$(Q)tests/gpu/corpus/run.sh $(BUILD) $(VENDOR_LIB)
