"""Test helpers that ship with the compiler: :mod:`.stamp_kernels` generates stamp kernels from
Pipe IR programs for end-to-end fuzzing of the lowering on a GPU."""
