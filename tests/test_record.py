"""``@record`` (tle_compiler/ir/record.py) behaves as ``@dataclass(frozen=True)`` does: the same
constructor (positional, keyword, defaults, factories, ``__post_init__``), equality and hashing
over the compared fields only, frozen fields, ``replace``/``fields``/``asdict``; and it refuses
what it does not implement. Every comparison below is against a real frozen dataclass of the same
shape, so a difference in behaviour fails here."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from dataclasses import FrozenInstanceError, dataclass, field

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tle_compiler.ir.record import record


def _pair(**opts):
    """The same class twice: as a record and as a frozen dataclass."""
    def body(ns):
        ns["__annotations__"] = {"a": "int", "b": "object", "c": "tuple", "loc": "object"}
        ns["b"] = None
        ns["c"] = field(default_factory=tuple)
        ns["loc"] = field(default="here", compare=False, repr=False)
    import types
    R = record(types.new_class("P", (), {}, body))
    D = dataclass(frozen=True)(types.new_class("P", (), {}, body))
    return R, D


R, D = _pair()


@record
class Norm:
    """__post_init__ normalises, as ir/expr.py's Affine does."""
    terms: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "terms", tuple(sorted(self.terms)))


@record
class One:
    x: object


@record
class Custom:
    x: int

    def __eq__(self, other):  # a class that writes __eq__ keeps it and still hashes
        return isinstance(other, Custom) and self.x % 10 == other.x % 10

    def __repr__(self):
        return f"Custom<{self.x}>"


values = st.one_of(st.integers(), st.text(max_size=3), st.none(),
                   st.tuples(st.integers(), st.integers()))


@given(a=st.integers(), b=values, c=st.tuples(values), loc1=st.text(max_size=2),
       loc2=st.text(max_size=2), a2=st.integers())
def test_same_behaviour_as_a_frozen_dataclass(a, b, c, loc1, loc2, a2):
    r1, d1 = R(a, b, c, loc1), D(a, b, c, loc1)
    r2, d2 = R(a2, b, c, loc2), D(a2, b, c, loc2)
    assert (r1 == r2) == (d1 == d2)           # loc is not compared
    assert (hash(r1) == hash(r2)) == (hash(d1) == hash(d2)) or r1 != r2
    assert hash(r1) == hash(R(a, b, c, loc2))
    assert repr(r1).replace("P(", "") == repr(d1).replace(
        f"{D.__qualname__}(", "")             # loc is not shown
    assert dataclasses.astuple(r1) == dataclasses.astuple(d1)
    assert dataclasses.asdict(r1) == dataclasses.asdict(d1)
    assert [f.name for f in dataclasses.fields(r1)] == ["a", "b", "c", "loc"]
    r3 = dataclasses.replace(r1, a=a2)
    assert (r3.a, r3.b, r3.c, r3.loc) == (a2, b, c, loc1)
    assert r1.__match_args__ == d1.__match_args__


def test_constructor_defaults_keywords():
    assert R(1) == R(a=1, b=None, c=())
    assert R(1).c == () and R(1).loc == "here"
    assert R(1, c=(2,)).c == (2,)
    assert R(1).c is not None and R(b=2, a=1) == R(1, 2)


@pytest.mark.parametrize("call", [
    lambda C: C(),                 # a required field missing
    lambda C: C(1, 2, 3, 4, 5),    # too many positional arguments
    lambda C: C(1, a=1),           # a field given twice
    lambda C: C(1, z=2),           # an unknown field
])
def test_refuses_the_calls_a_dataclass_refuses(call):
    for C in (R, D):
        with pytest.raises(TypeError):
            call(C)


def test_frozen():
    r = R(1)
    with pytest.raises(FrozenInstanceError):
        r.a = 2
    with pytest.raises(FrozenInstanceError):
        del r.a
    with pytest.raises(FrozenInstanceError):
        r.new = 1


def test_post_init_runs():
    assert Norm((3, 1, 2)).terms == (1, 2, 3)
    assert Norm((3, 1)) == Norm((1, 3))
    assert hash(Norm((3, 1))) == hash(Norm((1, 3)))


def test_one_field_key_is_not_the_value():
    # a one-field record holding a tuple is not equal to a two-field record of its items
    assert One((1, 2)) == One((1, 2))
    assert One((1, 2)) != One((2, 1))
    assert hash(One(5)) == hash(One(5))
    assert len({One(1), One(1), One(2)}) == 2


def test_other_classes_never_equal():
    @record
    class Other:
        a: int
        b: object = None
        c: tuple = ()
        loc: object = field(default="here", compare=False)

    assert Other(1) != R(1) and R(1) != Other(1)
    assert R(1) != (1, None, ())


def test_own_methods_stay():
    assert Custom(3) == Custom(13)
    assert repr(Custom(3)) == "Custom<3>"
    assert {Custom(3): 1}[Custom(3)] == 1


@record
class Located:
    a: object
    loc: object = field(default=None, compare=False)


def test_copy_and_pickle():
    r = Located((2, [3]), "x")
    for c in (copy.copy(r), copy.deepcopy(r), pickle.loads(pickle.dumps(r))):
        assert c == r and c.loc == "x" and type(c) is Located
    assert copy.deepcopy(r).a[1] is not r.a[1]


def test_refused_shapes():
    @dataclass(frozen=True)
    class Base:
        a: int

    with pytest.raises(TypeError, match="must not subclass"):
        @record
        class Child(Base):
            b: int

    with pytest.raises(TypeError, match="not supported"):
        @record
        class NoInit:
            a: int = field(default=0, init=False)


def test_nothing_is_compiled():
    import builtins
    calls = []
    real = builtins.compile
    builtins.compile = lambda *a, **k: calls.append(a) or real(*a, **k)
    try:
        @record
        class Made:
            a: int
            b: tuple = ()
            c: list = field(default_factory=list)

        x = Made(1, c=[2])
    finally:
        builtins.compile = real
    import ast as _ast
    assert [c for c in calls if not (len(c) > 3 and c[3] & _ast.PyCF_ONLY_AST)] == []
    assert (x.a, x.b, x.c) == (1, (), [2]) and Made(1).c is not Made(1).c
