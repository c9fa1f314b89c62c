"""Test configuration: a deterministic hypothesis profile for CI, and the GPU marker."""

import os

import pytest
from hypothesis import settings

# CI (and anyone who sets TLE_HYPOTHESIS=ci) runs the same examples every time; locally, "dev"
# explores new ones and keeps failures in the example database.
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("dev", print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") or os.environ.get("TLE_HYPOTHESIS") == "ci" else "dev")


def pytest_collection_modifyitems(config, items):
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except Exception:  # pragma: no cover - torch missing or broken
        has_cuda = False
    if has_cuda:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
