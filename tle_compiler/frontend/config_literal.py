"""A kernel file's ``DEFAULT_CONFIG`` literal as a kernel IR attribute value and back, and a
kernel's entry in it. Its own
module, with no imports of the frontend, so that both the builder (which records the attribute)
and the protocol view (which reads constexpr values from it) can use it without an import
cycle."""

from __future__ import annotations


def encode_config(v: object) -> object:
    """A literal (``DEFAULT_CONFIG``) as a KIR attribute value: dicts, lists and tuples become
    tagged tuples (``("dict", ((key, value), ...))``, ``("list", items)``, ``("tuple", items)``),
    scalars stay themselves; :func:`decode_config` inverts it."""
    if isinstance(v, dict):
        return ("dict", tuple((encode_config(k), encode_config(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return ("list" if isinstance(v, list) else "tuple", tuple(encode_config(x) for x in v))
    return v


def decode_config(v: object) -> object:
    """The literal :func:`encode_config` encoded; None for the mark of a DEFAULT_CONFIG that is
    no literal (``("error", LINE)``, frontend/build.py), which gives no values."""
    if not isinstance(v, tuple):
        return v
    tag, items = v
    if tag not in ("dict", "list", "tuple"):
        return None
    if tag == "dict":
        return {decode_config(k): decode_config(x) for k, x in items}
    seq = [decode_config(x) for x in items]
    return seq if tag == "list" else tuple(seq)


def entry_section(encoded: object, kernel: str, section: str) -> dict:
    """The dict ``section`` ("constexprs", "signature") of kernel ``kernel``'s entry in an
    encoded DEFAULT_CONFIG (the attribute the builder records; the entry of a config keyed by
    kernel name), its string keys only; {} without one (no config, one that is no literal)."""
    cfg, _ = kernel_entry(decode_config(encoded), kernel)
    values = cfg.get(section) if isinstance(cfg, dict) else None
    return {n: v for n, v in values.items() if isinstance(n, str)} \
        if isinstance(values, dict) else {}


def kernel_entry(cfg: object, kernel: str) -> tuple[object, bool]:
    """The entry for ``kernel`` of a decoded DEFAULT_CONFIG keyed by kernel name (a dict without
    "signature" that has the kernel's name as a key) and True; else ``cfg`` itself and False."""
    if isinstance(cfg, dict) and "signature" not in cfg and kernel in cfg:
        return cfg[kernel], True
    return cfg, False
