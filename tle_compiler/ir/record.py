"""``@record``: a frozen dataclass that is cheap to define.

Every IR node, attribute and analysis result of the compiler is an immutable value: a
``@dataclass(frozen=True)``. The standard decorator writes each class's ``__init__``, ``__repr__``,
``__eq__``, ``__hash__``, ``__setattr__`` and ``__delattr__`` as Python source and compiles it
with ``exec`` when the class is defined: six compilations per class, about 0.1 ms each. The
compiler defines over a hundred such classes, and a ``tle-dump`` process imports most of them
before reading a single kernel, so class definition alone cost it tens of milliseconds.

``@record`` keeps the dataclass (``dataclasses.fields``, ``replace``, ``asdict``, ``is_dataclass``
and ``field(default=..., compare=..., repr=...)`` work as before) and compiles nothing:

- ``__init__`` is a closure over the class's fields (positional and keyword arguments go into the
  instance dict with ``dict.update``; defaults and factories fill the rest), made when the class
  is defined;
- ``__eq__``, ``__hash__`` and ``__repr__`` are shared functions that read the class's compared /
  shown fields through one precomputed ``operator.attrgetter``;
- ``__setattr__`` / ``__delattr__`` raise ``dataclasses.FrozenInstanceError``, as frozen
  dataclasses do.

Equality and hashing are as with ``@dataclass(frozen=True)``: same class, equal compared fields.
``__post_init__`` runs after ``__init__``. Not supported (refused when the class is defined):
``InitVar``, keyword-only fields, ``field(init=False)``, inheritance between records (a record
must not subclass another dataclass).
"""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import MISSING, FrozenInstanceError

__all__ = ["record"]


def _frozen_setattr(self, name, value):
    raise FrozenInstanceError(f"cannot assign to field {name!r}")


def _frozen_delattr(self, name):
    raise FrozenInstanceError(f"cannot delete field {name!r}")


def _key(self):
    return type(self).__record_key__(self)


def _eq(self, other):
    if other.__class__ is self.__class__:
        return _key(self) == _key(other)
    return NotImplemented


def _hash(self):
    return hash(_key(self))


def _repr(self):
    cls = type(self)
    shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in cls.__record_shown__)
    return f"{cls.__qualname__}({shown})"


def _make_init(cls):
    """``cls.__init__``: the fields in order, positional or by keyword, defaults and default
    factories for the missing ones, then ``__post_init__``; the same calls are refused as by the
    ``__init__`` ``dataclasses`` would write. A closure over the class's fields: nothing is
    compiled (building the IR spends its time in ``dict.update``)."""
    fields = dataclasses.fields(cls)
    names = tuple(f.name for f in fields)
    n = len(names)
    known = frozenset(names)
    fill = tuple((f.name, f.default, f.default_factory) for f in fields)
    post = getattr(cls, "__post_init__", None) is not None
    qual = cls.__qualname__

    def __init__(self, *args, **kwargs):
        if len(args) > n:
            raise TypeError(f"{qual}.__init__() takes {n + 1} positional arguments but "
                            f"{len(args) + 1} were given")
        d = self.__dict__
        d.update(zip(names, args))
        if kwargs:
            if not known.issuperset(kwargs):
                bad = next(k for k in kwargs if k not in known)
                raise TypeError(f"{qual}.__init__() got an unexpected keyword argument {bad!r}")
            if len(args) and not d.keys().isdisjoint(kwargs):
                bad = next(k for k in kwargs if k in d)
                raise TypeError(f"{qual}.__init__() got multiple values for argument {bad!r}")
            d.update(kwargs)
        if len(d) < n:
            for name, default, factory in fill[len(args):]:
                if name in d:
                    continue
                if default is not MISSING:
                    d[name] = default
                elif factory is not MISSING:
                    d[name] = factory()
                else:
                    raise TypeError(f"{qual}.__init__() missing required argument: {name!r}")
        if post:
            self.__post_init__()

    __init__.__qualname__ = f"{qual}.__init__"
    return __init__


def record(cls=None, /):
    """Make ``cls`` a frozen dataclass whose methods are made when first needed (see the module
    docstring). Usable as ``@record``."""
    if cls is None:
        return record
    for base in cls.__mro__[1:]:
        if dataclasses.is_dataclass(base):
            raise TypeError(f"@record class {cls.__qualname__} must not subclass the dataclass "
                            f"{base.__qualname__}")
    cls = dataclasses.dataclass(cls, init=False, repr=False, eq=False)
    fields = dataclasses.fields(cls)
    for f in fields:
        if not f.init or f.kw_only:
            raise TypeError(f"@record {cls.__qualname__}.{f.name}: init=False and kw_only "
                            f"fields are not supported")
    annotations = cls.__dict__.get("__annotations__", {})
    if any(str(a).startswith(("InitVar", "dataclasses.InitVar")) for a in annotations.values()):
        raise TypeError(f"@record {cls.__qualname__}: InitVar is not supported")
    compared = tuple(f.name for f in fields if f.compare)
    # attrgetter of one name returns the value, of several a tuple: wrap the first so that a
    # one-field key is still a tuple (a field holding a tuple must not compare equal to it)
    if len(compared) == 1:
        one = operator.attrgetter(compared[0])
        cls.__record_key__ = staticmethod(lambda obj: (one(obj),))
    else:
        cls.__record_key__ = staticmethod(operator.attrgetter(*compared) if compared
                                          else (lambda obj: ()))
    cls.__record_shown__ = tuple(f.name for f in fields if f.repr)
    own = cls.__dict__
    if "__init__" not in own:
        cls.__init__ = _make_init(cls)
    for name, fn in (("__repr__", _repr), ("__eq__", _eq),
                     ("__setattr__", _frozen_setattr), ("__delattr__", _frozen_delattr)):
        if name not in own:  # a method the class writes itself stays, as with @dataclass
            setattr(cls, name, fn)
    if own.get("__hash__") is None:  # None: absent, or dropped because the class defines __eq__
        cls.__hash__ = _hash
    return cls
