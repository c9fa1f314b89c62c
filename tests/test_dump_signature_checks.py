"""tle-dump checks a kernel against its DEFAULT_CONFIG signature as the compile does
(cli/kernel_checks.py ``check_launch_signature``): a value the pipe events depend on that is read
through a pointer other than i32 (lowering/loaded_params.py), or a protocol param typed i64
(lowering/signature_checks.py ``check_i64_args``), is computed on the GPU in an arithmetic the
verifier did not check, so the kernel is rejected at that value's line (exit 1) instead of
verified. Without a DEFAULT_CONFIG (or with i32 types) the verdict is as before: it reads loads
and arguments as i32, and says so ("with loop bounds, loop counters, conditions and indices in i32")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tle_compiler.cli.dump import main

from .test_adversarial_features import dump, line_of, loaded_count_kernel, write

CONFIG = '''

DEFAULT_CONFIG = {
    "signature": {"a_ptr": "*fp32", "n_ptr": "%s"},
    "constexprs": {},
    "num_warps": 4,
    "grid": (1,),
}
'''


@pytest.mark.parametrize("n_type", ["*u32", "*i8", "*i64", "*fp32"])
def test_a_count_loaded_through_another_type_is_rejected_by_tle_dump(tmp_path, n_type):
    src = loaded_count_kernel("tl.load(n_ptr)") + CONFIG % n_type
    path = write(tmp_path, "loaded", src)
    code, _, err = dump([str(path)])
    assert code == 1, err
    assert f"loaded.py:{line_of(src, 'M = n - 1')}: error:" in err
    assert f"of type {n_type[1:]}" in err and "[signature]" in err
    assert "rejected" in err and "verified" not in err.replace("not verified", "")


def test_an_i32_count_is_verified_and_an_untyped_one_for_signed_types(tmp_path):
    # without a signature n_ptr may point to uint32, where `M >= 1` of `M = n - 1` holds at
    # n = 0: proved only for signed integer element types of 32 or 64 bits (bounded, adversarial
    # rounds 48 and 50: `M = n - 1` wraps in 8 or 16 bits)
    src = loaded_count_kernel("tl.load(n_ptr)")
    code, _, err = dump([str(write(tmp_path, "plain", src))])
    assert code == 3, err
    assert "only for n_ptr in signed integer element types of 32 or 64 bits" in err, err
    code, _, err = dump([str(write(tmp_path, "i32", src + CONFIG % "*i32"))])
    assert code == 0, err
    assert "verified for every value of n" in err


RING = Path(__file__).resolve().parents[1] / "tle_kernels" / "examples" / "ring.py"


def test_a_protocol_param_typed_i64_is_rejected_by_tle_dump(tmp_path, capsys):
    src = RING.read_text()
    old = '"N_TILES": "i32"}'
    assert src.count(old) == 1
    path = tmp_path / "ring64.py"
    path.write_text(src.replace(old, '"N_TILES": "i64"}'))
    code = main([str(path)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "argument 'N_TILES' is typed i64 in the signature" in err and "[signature]" in err
    assert main([str(RING)]) == 0  # the bundled i32 ring
