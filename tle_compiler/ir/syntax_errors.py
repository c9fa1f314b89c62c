"""What the two text-form parsers (parser.py for ``.pipe`` files, kernel_text.py for ``.kir``
files) share when a syntax error is reported: how an expected terminal is spelled, how the set
of expected ones is phrased and how the unexpected token is named."""

from __future__ import annotations

from typing import Iterable, Mapping

from lark import Lark, Token


def terminal_word(parser: Lark, name: str, words: Mapping[str, str]) -> str:
    """How an error message names terminal ``name``: its entry in ``words`` (``"a name"``), its
    literal text quoted when it is a keyword or punctuation (``'capacity'``), else its name."""
    if name in words:
        return words[name]
    try:
        pattern = parser.get_terminal(name).pattern
    except KeyError:
        return name
    return f"'{pattern.value}'" if pattern.type == "str" else name


def expected_phrase(words: Iterable[str]) -> str:
    """``"; expected X"`` or ``"; expected one of X, Y"`` (sorted), or nothing."""
    words = sorted(set(words))
    if not words:
        return ""
    if len(words) == 1:
        return f"; expected {words[0]}"
    return "; expected one of " + ", ".join(words)


def token_word(tok: Token, number: str) -> str:
    """How an error message names the unexpected token ``tok``: end of input or of a line, a
    name, a number (called ``number``: the .pipe grammar has integers only), a string, or the
    token's text quoted."""
    if tok.type == "$END":
        return "end of input"
    if tok.type == "_NL":
        return "end of line"
    if tok.type == "_ELSE":
        return "'else'"
    if tok.type == "NAME":
        return f"name '{tok.value}'"
    if tok.type == "ESCNAME":
        return f"name {tok.value}"
    if tok.type in ("INT", "FLOAT"):
        return f"{number} {tok.value}"
    if tok.type == "STRING":
        return f"string {tok.value}"
    return f"'{tok.value}'"
