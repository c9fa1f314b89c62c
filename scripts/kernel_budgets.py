"""Register and shared-memory budget of each partition of the bundled MLA kernels, read from
the compiled kernel (sm_90a, compiled on any machine): the setmaxnreg each partition runs at (PTX),
the registers ptxas allocates for the whole kernel and its spills, and the shared memory of each
pipe (from the lowering's plan) against the kernel's total (Triton's metadata).

    python3 scripts/kernel_budgets.py            # markdown tables on stdout
"""

from __future__ import annotations

import importlib
import math
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tle_compiler.lowering.compile import kernel_info_of  # noqa: E402
from tle_compiler.lowering import compile_kernel, ptxas_stats  # noqa: E402
from tle_compiler.language.registers import default_budget  # noqa: E402

KERNELS = ["sparse_mla_pipe", "sparse_mla_seesaw", "mla_decode_pipe", "mla_decode_seesaw"]
BYTES = {"bf16": 2, "fp16": 2, "fp32": 4, "i32": 4, "int32": 4, "i8": 1, "int8": 1, "i1": 1, "i64": 8}


def main() -> None:
    for name in KERNELS:
        mod = importlib.import_module(f"tle_kernels.{name}")
        cfg = mod.DEFAULT_CONFIG
        kernel = getattr(mod, name)
        c = compile_kernel(kernel, cfg["signature"], cfg["constexprs"])
        st = ptxas_stats(c)
        info = kernel_info_of((mod.__file__, name), cfg["constexprs"])  # specialised if need be
        ptx = c.asm["ptx"]
        print(f"### {name}\n")
        maxnreg = re.search(r"\.maxnreg (\d+)", ptx).group(1)
        setmax = sorted(set(re.findall(r"setmaxnreg\.(\w+)\.sync\.aligned\.u32\s+(\d+)", ptx)))
        print(f"ptxas: {st['registers']} registers per thread for the kernel (`.maxnreg` "
              f"{maxnreg}), spills {st['spill_stores']} B stores / "
              f"{st['spill_loads']} B loads; shared memory {c.metadata.shared} B (Hopper: 232,448).\n")
        print("| partition | role | warps | registers per thread |")
        print("|---|---|---:|---|")
        for p in info.partitions:
            req = f"what the workers leave: {default_budget(info)} by the register rule" if p.default \
                else str(p.regs)
            print(f"| {p.name} | {'default' if p.default else 'worker'} | {p.warps} | {req} |")
        print("\nsetmaxnreg values in the PTX (Triton emits one per warp-group code path): "
              + ", ".join(f"{k} {v}" for k, v in setmax) + "\n")
        print("| pipe | capacity | fields (shape, dtype) | bytes |")
        print("|---|---:|---|---:|")
        total = 0
        constexprs = dict(cfg["constexprs"])
        for pname, fields in info.field_specs.items():
            nbytes, desc, cap = 0, [], ""
            for f in fields:
                shape = [int(constexprs.get(x, x)) if isinstance(x, str) else int(x) for x in f.shape]
                cap = shape[0]
                b = math.prod(shape) * BYTES.get(str(f.dtype), 2)
                nbytes += b
                desc.append(f"{f.name} {shape} {f.dtype}")
            total += nbytes
            print(f"| {pname} | {cap} | {'; '.join(desc)} | {nbytes:,} |")
        print(f"| all pipe buffers | | | {total:,} |\n")


if __name__ == "__main__":
    import argparse

    argparse.ArgumentParser(prog="python3 scripts/kernel_budgets.py", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter).parse_args()
    main()
