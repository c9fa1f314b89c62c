"""End-to-end fuzz of the lowering: random protocols (tests/protocol_gen.py) that the verifier
accepts become stamp kernels (tle_compiler.testing.stamp_kernels); each runs on the GPU for a few
small param values and must report zero mismatched slot elements and exactly the events
expected_counts derives from the Program (so every event ran, and waits on closed indices saw
is_closed). A failing example is printed as .pipe text.

Deterministic (derandomized) and without shrinking by default: every example compiles a kernel,
and a hang must not be spent shrinking. ``TLE_FUZZ_EXAMPLES`` (default 50) sets the count,
``TLE_FUZZ_SHRINK=1`` turns shrinking on, ``TLE_FUZZ_LOG=FILE`` appends each program before its
launch (the last one in the file is the culprit of a hang)."""

from __future__ import annotations

import os
import tempfile

import pytest
from hypothesis import HealthCheck, Phase, assume, given, note, settings
from hypothesis import strategies as st

from tests.protocol_gen import protocols
from tle_compiler.ir.printer import print_program
from tle_compiler.passes import verify
from tle_compiler.testing import stamp_kernels as sk

pytestmark = pytest.mark.gpu

EXAMPLES = int(os.environ.get("TLE_FUZZ_EXAMPLES", "50"))
PHASES = [Phase.explicit, Phase.generate] + ([Phase.shrink] if os.environ.get("TLE_FUZZ_SHRINK")
                                             else [])
WORKDIR = tempfile.mkdtemp(prefix="tle_stamp_gpu_")


def _log(text: str) -> None:
    path = os.environ.get("TLE_FUZZ_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())


@settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
          phases=PHASES, report_multiple_bugs=False, print_blob=False,
          suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(protocols(), st.integers(0, 3), st.integers(0, 3))
def test_stamp_kernels_run_clean(program, n, m):
    assume(verify(program).ok)
    text = print_program(program)
    note(text)
    path = sk.write_module(sk.stamp_kernel_source(program), WORKDIR)
    mod = sk.import_module_from(path)
    names = [p.name for p in program.params]
    for values in ((n, m), (0, 0), (3, 2)):
        params = dict(zip(names, values))
        _log(f"# launching {os.path.basename(path)} with {params}\n{text}\n")
        res = sk.launch_stamp_module(mod, program, params, device="cuda")
        problems = sk.compare(program, params, sk.decode_results(program, res))
        assert not problems, (f"stamp kernel {path} with params {params}:\n  "
                              + "\n  ".join(problems) + "\nprotocol:\n" + text)
