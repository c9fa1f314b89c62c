"""The text of a Python source file as Python reads it (PEP 263): a UTF-8 byte-order mark is
skipped, and a coding declaration on the first two lines (``# -*- coding: latin-1 -*-``) names
the encoding, else UTF-8. One rule for every reader of a kernel's files (tle-dump's input, the
frontend, the modules a kernel imports), so a file Python imports is never refused as "not UTF-8
text" by one of them and read by another."""

from __future__ import annotations

import io
import os
import tokenize
from typing import Union


def decode_python(data: bytes) -> str:
    """``data`` decoded as Python decodes a source file. Raises SyntaxError for a coding
    declaration Python refuses (an unknown encoding, one that contradicts a byte-order mark) and
    UnicodeDecodeError for bytes that are not text in the encoding."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as e:
        if "invalid or missing encoding declaration" not in str(e):
            raise
        # a first line that is not UTF-8 and declares no encoding: the UTF-8 decoding error,
        # which names the byte
        data.decode("utf-8")
        raise
    return data.decode(encoding)  # "utf-8-sig" when there is a byte-order mark: it is dropped


def read_python(path: Union[str, "os.PathLike[str]"]) -> str:
    """The source text of the Python file ``path`` (:func:`decode_python`); OSError when it cannot
    be read; SyntaxError / UnicodeDecodeError (a ValueError) when it is not text Python reads."""
    with open(path, "rb") as f:
        return decode_python(f.read())
