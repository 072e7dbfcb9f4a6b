# libcuda-shim: filled in by its owner
