"""Typed attributes that passes attach to kernel IR nodes (``attrs`` of ir/kernel.py's Kernel,
PipeDecl, KPartition, For, Op and Event).

An attribute value is an int, bool, str, None, a tuple of attribute values, a kernel IR
expression, or an instance of a frozen dataclass registered here with :func:`attr_type`; the text
form (kernel_text.py) prints a registered class as ``Name(field = value, ...)`` and parses it back
through :data:`ATTR_TYPES`, so every attribute a pass writes survives a print/parse round trip.
"""

from __future__ import annotations

#: Registered attribute classes by name (the text form's constructor names).
ATTR_TYPES: dict[str, type] = {}


def attr_type(cls: type) -> type:
    """Class decorator: register a frozen dataclass as an attribute type of the text form."""
    if cls.__name__ in ATTR_TYPES and ATTR_TYPES[cls.__name__] is not cls:
        raise ValueError(f"attribute type {cls.__name__} registered twice")
    ATTR_TYPES[cls.__name__] = cls
    return cls
