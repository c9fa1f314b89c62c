"""The value every lowering walk computes for a KIR expression (lowering/translate.py), in a
module of its own so that what spells pipe events (lowering/pipes.py) builds values without
importing the translator that calls it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


@dataclass
class V:
    kind: str  # const scalar tensor smem lptr dtype pipe writer reader slot res func mod tuple none
    text: str = ""
    var: Optional[int] = None
    shape: Optional[tuple] = None
    dtype: Optional[str] = None
    value: Any = None
