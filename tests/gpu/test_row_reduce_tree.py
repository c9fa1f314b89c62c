"""``@tle.jit(row_reduce_tree=True)`` on the GPU (tle_compiler/lowering/row_reduce.py): the seesaw
decode compiled with its score rows reduced as trees matches the fp32 reference on the mixed
batches, the lazy-rescale batch (row maxima that move at every tile) and a long request, both
schedules and both K producers. The kernel is the bundled one with the option added, launched by
the bundled launcher (tests/test_lowering_row_reduce_tree.py checks the lowering on the CPU).

    python3 -m pytest -q -m gpu tests/gpu/test_row_reduce_tree.py
"""

from __future__ import annotations

import importlib.util

import pytest

from ..test_lowering_row_reduce_tree import seesaw_with_tree
from . import decode_checks as checks

pytestmark = pytest.mark.gpu


@pytest.fixture
def tree_seesaw(tmp_path, monkeypatch):
    """The bundled seesaw decode module's kernel replaced by a copy with row_reduce_tree=True
    (the copy tests/test_lowering_row_reduce_tree.py compiles)."""
    import tle_kernels.mla_decode_seesaw as mod

    path = seesaw_with_tree(tmp_path, True)
    spec = importlib.util.spec_from_file_location("seesaw_tree", path)
    tree = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tree)
    monkeypatch.setattr(mod, "mla_decode_seesaw", tree.mla_decode_seesaw)
    return tree.mla_decode_seesaw


@pytest.mark.parametrize("tma", [False, True], ids=["cp_async", "tma"])
@pytest.mark.parametrize("balance", [False, True], ids=["per_request", "balanced"])
def test_tree_reduced_seesaw_matches_reference(tree_seesaw, tma, balance):
    launch = checks.ScheduledLaunch(tma=tma, balance=balance)
    checks.check_requests(launch, [0, 1, 63, 64, 65, 4096, 32768, 129, 4095], 2, 128,
                          [(False, 5), (True, 5)], seed=21, what="row_reduce_tree")
    checks.check_lazy_rescale(launch, [640, 500], lambda i, t, n: t / n * 40.0)
