"""Run the stamp kernel of one .pipe protocol on the GPU and report the result (for replaying a
fuzz case by hand, e.g. under TRITON_INSTRUMENTATION_MODE=consan).

    python3 scripts/stamp_one.py CASE.pipe [NAME=VALUE ...]
"""

import os
import sys
import time

if os.environ.get("TRITON_INSTRUMENTATION_MODE") == "consan":
    import tests.gpu.conftest  # noqa: F401  (installs the allocator and the consan compile option)

from tle_compiler.ir.parser import parse_file
from tle_compiler.testing.stamp_kernels import compare, run_stamp_kernel


def main() -> int:
    path, *assigns = sys.argv[1:]
    params = {k: int(v) for k, v in (a.split("=") for a in assigns)}
    code = 0
    for program in parse_file(path).kernels:
        t0 = time.time()
        got = run_stamp_kernel(program, params)
        diffs = compare(program, params, got)
        print(f"{program.name} {params}: {'ok' if not diffs else 'WRONG'} in {time.time() - t0:.1f} s", flush=True)
        for d in diffs:
            print("  " + d)
        code |= bool(diffs)
    return code


if __name__ == "__main__":
    sys.exit(main())
