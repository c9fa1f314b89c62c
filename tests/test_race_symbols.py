"""race_terms.symbols walks z3 terms through the C API (for speed): it must name exactly the
uninterpreted constants a walk through z3's Python objects finds, through quantifiers (whose
bound variables are no constants), function applications and numbers, and the memo it keeps
must not confuse two terms."""

import z3

from tle_compiler.frontend.race_terms import const_name, symbols


def _reference(t) -> set:
    out, todo = set(), [t]
    while todo:
        e = todo.pop()
        if z3.is_quantifier(e):
            todo.append(e.body())
            continue
        name = const_name(z3, e)
        if name is not None:
            out.add(name)
        todo += e.children()
    return out


def test_symbols_match_a_python_walk():
    x, lane, w, k = z3.Ints("a:x lane#3 i32wrap#1 k")
    f = z3.Function("f", z3.IntSort(), z3.IntSort())
    terms = [x + 2 * lane, z3.Exists([k], z3.And(k > x, k < w * lane)),
             z3.Or(x == 0, f(x) > 3), z3.IntVal(4), z3.BoolVal(True),
             z3.ForAll([k], z3.Implies(k > 0, k * k + x > lane)),
             z3.If(x > 0, lane, w) - 2 ** 32 * w, z3.BitVec("b#2", 32) + 5 == z3.BitVecVal(3, 32)]
    for t in terms:
        assert symbols(t) == _reference(t), t
    assert symbols(terms[1]) == {"a:x", "lane#3", "i32wrap#1"}  # k is bound, not a constant
    assert symbols(terms[2]) == {"a:x"}  # f is applied: no constant
    assert symbols(terms[7]) == {"b#2"}  # a bit-vector number is no constant


def test_the_memo_tells_terms_apart():
    a, b = z3.Ints("a:p a:q")
    for _ in range(3):  # fresh terms each round: ids reused only once a term is gone
        s, t = a + 1, b + 1
        assert symbols(s) == {"a:p"} and symbols(t) == {"a:q"}
