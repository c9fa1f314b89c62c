"""Whether a tensor's data pointer can be read where a check runs, and the 16-byte row alignment
the TLE kernels need, judged from what can be read.

The decode entry points check alignment before launch (before the scheduler metadata is
filled), so a call a kernel cannot run fails with nothing changed. The address is not always
there to read: a meta tensor has none, a FakeTensor (``FakeTensorMode``, and the tensors
``torch.compile`` traces with) has none that means anything, and while Dynamo traces a call,
``data_ptr()`` cannot be traced at all (a graph break). There the address rule is left to the
custom op, whose body runs on the real tensors and checks it again; the stride rule, which the
shapes decide, is checked everywhere.
"""

from __future__ import annotations

import torch
from torch._subclasses.fake_tensor import FakeTensor

ALIGN = 16  # bytes: the TLE kernels copy rows with 16-byte cp.async / TMA


def address_known(x: torch.Tensor) -> bool:
    """Whether ``x.data_ptr()`` can be read here and is the address a kernel will see: not while
    torch.compile traces, not on a meta tensor or a FakeTensor."""
    if torch.compiler.is_compiling():
        return False
    return x.device.type != "meta" and not isinstance(x, FakeTensor)


def strides_aligned(x: torch.Tensor) -> bool:
    """Whether every stride of a dim with more than one entry, but the last dim's, is a multiple
    of 16 bytes (row starts keep the base's alignment)."""
    return all((s * x.element_size()) % ALIGN == 0
               for s, n in zip(x.stride()[:-1], x.shape[:-1]) if n > 1)


def address_aligned(x: torch.Tensor) -> bool:
    """Whether ``x``'s data starts on a 16-byte boundary; True where the address cannot be read
    (``address_known``): the custom op checks it again on the real tensor."""
    return not address_known(x) or x.data_ptr() % ALIGN == 0


def rows_aligned_where_known(*xs: torch.Tensor) -> bool:
    """Whether every row (last dim) of each tensor starts on a 16-byte boundary, as far as can be
    told here: the strides always, the address where it can be read."""
    return all(strides_aligned(x) and address_aligned(x) for x in xs)
