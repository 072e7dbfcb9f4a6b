# cudatrace: a research libcuda.so.1 in front of NVIDIA's (tools/cudatrace/
# cudatrace.c): counts driver-API calls and logs the private export tables a
# library uses. Not installed and not part of `all`; `make cudatrace`, then
# on a GPU machine:
#   CUDATRACE_TABLES=21318c60 CUDATRACE_LIB=/path/to/NVIDIA/libcuda.so.1 \
#   LD_LIBRARY_PATH=$(BUILD)/tools/cudatrace ./program
# It needs the generated list of cuda.h's functions (libcuda-shim/build.mk).

CUDATRACE_LIB := $(BUILD)/tools/cudatrace/libcuda.so.1

$(CUDATRACE_LIB): tools/cudatrace/cudatrace.c $(SHIM_GEN_H)
	@mkdir -p $(dir $@)
	@[ "$(V)" = 1 ] || echo "  LD      $@"
	$(Q)$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -fPIC -shared \
		-I$(CUDA)/include -I$(SHIM_GEN_DIR) -o $@ $< -ldl \
		-Wl,-soname,libcuda.so.1

.PHONY: cudatrace
cudatrace: $(CUDATRACE_LIB)

# Built with the tests so that it keeps compiling (it is not a test).
TEST_PROGS += $(CUDATRACE_LIB)
