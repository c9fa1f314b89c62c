"""tle_kernels: the bundled SparseMLA prefill kernels and their PyTorch entry point.

``from tle_kernels import sparse_mla_prefill`` (installed, or from a checkout's root directory).
The names below are imported lazily so that loading one kernel module (e.g. by ``tle-dump``) does
not import torch.
"""

_API = ("sparse_mla_prefill", "select_impl", "supported_impls", "unsupported_reason", "validate",
        "PREFERENCE", "IMPLS")
_REF = ("sparse_mla_reference", "make_inputs")

__all__ = list(_API + _REF)


def __getattr__(name):
    if name in _API:
        from . import api

        return getattr(api, name)
    if name in _REF:
        from . import reference

        return getattr(reference, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
