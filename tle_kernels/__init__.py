"""tle_kernels: the bundled SparseMLA prefill and MLA decode kernels and their PyTorch entry points.

``from tle_kernels import sparse_mla_prefill`` (installed, or from a checkout's root directory).
FlashMLA's Python interface is here under its own names (``get_mla_metadata``,
``flash_mla_with_kvcache``: dense, or the DeepSeek-V3.2 sparse decode when given ``indices``;
``flash_mla_sparse_fwd``), so ``import tle_kernels as flash_mla`` runs code written for FlashMLA.
The names below are imported lazily so that loading one kernel module (e.g. by ``tle-dump``) does
not import torch.
"""

_API = ("sparse_mla_prefill", "select_impl", "supported_impls", "unsupported_reason", "validate",
        "PREFERENCE", "IMPLS")
_REF = ("sparse_mla_reference", "make_inputs")
_DECODE_API = ("get_mla_metadata", "flash_mla_with_kvcache", "flash_mla_sparse_fwd",
               "DecodeSchedMeta")
_DECODE_REF = ("mla_decode_reference", "make_decode_inputs")
_SPARSE_DECODE_API = ("sparse_decode",)
# the sparse decode's reference function has its module's name (sparse_decode_reference), which an
# attribute of the package cannot be both: import it from tle_kernels.sparse_decode_reference
_SPARSE_DECODE_REF = ("make_sparse_decode_inputs",)

# FlashMLA's names that this package does not provide: its dense variable-length prefill
# (forward and backward, SM100 kernels). Asking for one raises AttributeError, as for any missing
# name (``hasattr`` stays False), saying so.
_FLASH_MLA_NOT_PROVIDED = ("flash_attn_varlen_func", "flash_attn_varlen_qkvpacked_func",
                           "flash_attn_varlen_kvpacked_func")

__all__ = list(_API + _REF + _DECODE_API + _DECODE_REF + _SPARSE_DECODE_API + _SPARSE_DECODE_REF)


def __dir__():
    """The module's names and the lazily imported ones, so that ``dir(tle_kernels)``, tab
    completion and ``help(tle_kernels)`` (which lists what ``dir`` gives) show the entry points;
    asking imports them (and torch), as using them does."""
    return sorted(set(globals()) | set(__all__))


def __getattr__(name):
    if name in _API:
        from . import api

        return getattr(api, name)
    if name in _REF:
        from . import reference

        return getattr(reference, name)
    if name in _DECODE_API:
        from . import decode_api

        return getattr(decode_api, name)
    if name in _DECODE_REF:
        from . import decode_reference

        return getattr(decode_reference, name)
    if name in _SPARSE_DECODE_API:
        from . import sparse_decode_api

        return getattr(sparse_decode_api, name)
    if name in _SPARSE_DECODE_REF:
        from . import sparse_decode_reference

        return getattr(sparse_decode_reference, name)
    if name in _FLASH_MLA_NOT_PROVIDED:
        raise AttributeError(
            f"module {__name__!r} has no attribute {name!r}: FlashMLA's dense variable-length "
            "prefill (flash_attn_varlen_func and its packed forms, SM100 kernels) is not "
            "provided; of FlashMLA's interface tle_kernels has get_mla_metadata, "
            "flash_mla_with_kvcache (dense and sparse decode) and flash_mla_sparse_fwd")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
