"""Test helpers that ship with the compiler: :mod:`.stamp_kernels` generates stamp kernels from
Pipe IR programs for end-to-end fuzzing of the lowering on a GPU; :mod:`.emulator` runs TLE kernel
source on the CPU against a torch stand-in of the language (to check kernels, harnesses and
references before spending device time)."""
