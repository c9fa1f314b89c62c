"""Hypothesis strategies for random pipe *protocols* (mostly correct by construction) and random
mutations of them (drop, duplicate, swap, re-index events or accesses, change capacities).

A generated program has 2–4 partitions and 1–4 pipes. Every streaming pipe is assigned one
iteration scheme that its writer and all its readers follow (a loop over a param or a constant,
possibly nested, with an affine index), so protocols are usually well-formed; whether they are
deadlock-free depends on the random order of events inside each partition, and mutations then break
them in the classic ways. The property tests only need a healthy mix of correct and incorrect
programs: the static verdict must equal the simulator's on every one.

``protocols(accesses=True)`` adds slot accesses inside their windows: the writer's writes between
``acquire(i)`` and ``commit(i)``, each reader's reads of fields of its view between ``wait(i)`` and
the release of ``i`` (a late release's window spans into the next iteration; a one-shot reader
that never releases also reads at the end of its partition), some under an ``if``. The fields
are drawn independently per access, so a reader often reads a field that none of the writer's
writes fills (a fault when the read runs: ``unwritten-field``, docs/semantics.md rule 7), and a
writer that draws no write leaves a protocol skeleton whose reads only their windows constrain.
``fault=True`` then misplaces one access (:data:`ACCESS_FAULTS`: after the commit/release, before
the acquire/wait, at a neighbouring index, by the wrong side, by another reader, from another
partition); it may land inside a window anyway (a late release holds two indices). ``domains=True``
gives params other domains than ``>= 0``: every integer (negative trip counts run no iteration),
``>= 1``, an upper bound; and C-remainder (``rem``) conditions. The defaults draw exactly what they
always drew (tests/test_stamp_kernels.py and the GPU fuzz use them).
"""

from __future__ import annotations

import dataclasses

from hypothesis import strategies as st

from tle_compiler.ir import (Access, Affine, BoolOp, Compare, Event, For, If, Loc, ModCompare,
                             Param, Partition, Pipe, Program)

A = Affine.of
PARAMS = ("N", "M")
#: Where ``fault=True`` misplaces one access.
ACCESS_FAULTS = ("after", "before", "neighbour", "wrong-side", "other-reader", "other-partition")


def _loc(counter: list[int]) -> Loc:
    counter[0] += 1
    return Loc("gen.pipe", counter[0])


def _domain(draw, name: str) -> Param:
    """A param with a drawn domain: ``>= 0``, every integer, ``>= 1``, ``0 <= N <= 2`` or
    ``N <= 3``."""
    lo, hi = draw(st.sampled_from([(0, None), (None, None), (1, None), (0, 2), (None, 3)]))
    return Param(name, lo, max=hi)


def _access_conds(draw, params: tuple[str, ...], streaming: bool, domains: bool) -> list:
    """Conditions an access may sit under: on the loop variable inside loops, on params outside."""
    if streaming:
        out = [ModCompare(A("i"), 2, "==", 0), Compare(A("i"), ">=", A(1))]
        if domains:
            # C's remainder: rem(i - 1, 2) == -1 holds only at i = 0
            out += [ModCompare(A("i") - 1, 2, "==", -1, c=True),
                    ModCompare(A("i") - 2, 3, "!=", 0, c=True)]
        return out
    out = [Compare(A(p), ">=", A(1)) for p in params]
    if domains:
        out += [ModCompare(A(p) - 1, 2, "==", -1, c=True) for p in params]
    return out or [Compare(A(0), "==", A(0))]


@st.composite
def protocols(draw, accesses: bool = False, fault: bool = False, domains: bool = False) -> Program:
    accesses = accesses or fault
    counter = [0]
    n_parts = draw(st.integers(2, 4))
    parts = [f"p{i}" for i in range(n_parts)]
    n_params = draw(st.integers(0, 2))
    params = PARAMS[:n_params]
    param_decls = tuple(_domain(draw, x) if domains else Param(x) for x in params)
    n_pipes = draw(st.integers(1, 4))
    pipes: list[Pipe] = []
    roles = []  # (pipe, writer partition, [(reader name or None, partition, view or None)])
    for k in range(n_pipes):
        one_shot = draw(st.integers(0, 5)) == 0
        cap = 1 if one_shot else draw(st.integers(1, 4))
        fields = tuple(f"f{j}" for j in range(draw(st.integers(1, 3))))
        writer = draw(st.sampled_from(parts))
        others = [p for p in parts if p != writer]
        spmc = draw(st.booleans()) and len(others) >= 2
        if spmc:
            rparts = draw(st.lists(st.sampled_from(others), min_size=2, max_size=min(3, len(others)), unique=True))
            readers = tuple(f"r{j}" for j in range(len(rparts)))
            rs = []
            for name, rp in zip(readers, rparts):
                view = None
                if len(fields) > 1 and draw(st.booleans()):
                    view = tuple(sorted(draw(st.sets(st.sampled_from(fields), min_size=1, max_size=len(fields)))))
                rs.append((name, rp, view))
        else:
            readers = ()
            rs = [(None, draw(st.sampled_from(others)), None)]
        pipe = Pipe(f"c{k}", cap, fields, readers, one_shot)
        pipes.append(pipe)
        roles.append((pipe, writer, rs))

    # One iteration scheme shared by every streaming pipe: trip count and index form.
    trip = draw(st.sampled_from([A(p) for p in params] + [A(0), A(1), A(2), A(3)] +
                                [A(p) + 1 for p in params]))
    nested = draw(st.integers(0, 3)) == 0  # outer constant loop around the main loop
    # Per-pipe index: i + off (or 2*i): offsets are the usual source of off-by-one bugs.
    index_of = {}
    for pipe, _, _ in roles:
        if pipe.one_shot:
            index_of[pipe.name] = A(draw(st.sampled_from([0, 0, 1, 2])))
        else:
            scale = draw(st.sampled_from([1, 1, 1, 2]))
            index_of[pipe.name] = A("i").scale(scale) + draw(st.sampled_from([0, 0, 0, 1]))

    # Per partition: a prologue (one-shot events) and the loop body (streaming events).
    pro: dict[str, list] = {p: [] for p in parts}
    body: dict[str, list] = {p: [] for p in parts}
    epilogue: dict[str, list] = {p: [] for p in parts}
    # Accesses: (chain, position in it, streaming?) of each, so that a fault can move one.
    placed: list[tuple[list, int, bool]] = []

    def acc(pipe: Pipe, side: str, idx: Affine, reader, fields, streaming: bool,
            chain: list) -> None:
        """Append 0-2 accesses of ``fields`` at ``idx`` to ``chain``, some under an if."""
        if not accesses:
            return
        for _ in range(draw(st.integers(0, 2))):
            a = Access(side, pipe.name, draw(st.sampled_from(fields)), idx,
                       reader if side == "reader" else None, "", _loc(counter))
            if draw(st.integers(0, 3)) == 0:
                cond = draw(st.sampled_from(_access_conds(draw, params, streaming, domains)))
                chain.append(If(cond, (a,), (), _loc(counter)))
            else:
                chain.append(a)
            placed.append((chain, len(chain) - 1, streaming))

    for pipe, writer, rs in roles:
        tgt = pro if pipe.one_shot else body
        streaming = not pipe.one_shot
        idx = index_of[pipe.name]
        wchain = [Event("acquire", pipe.name, idx, None, None, _loc(counter))]
        acc(pipe, "writer", idx, None, pipe.fields, streaming, wchain)
        wchain.append(Event("commit", pipe.name, idx, None, None, _loc(counter)))
        tgt[writer].append(wchain)
        for name, rp, view in rs:
            seen = view or pipe.fields
            evs = [Event("wait", pipe.name, idx, name, view, _loc(counter))]
            acc(pipe, "reader", idx, name, seen, streaming, evs)
            if not pipe.one_shot and not nested and draw(st.integers(0, 3)) == 0:
                # Late release: hold tile i until tile i + 1 arrived (needs capacity >= 2).
                prev = idx.substitute({"i": A("i") - 1})
                late = [Event("release", pipe.name, prev, name, None, _loc(counter))]
                if accesses and draw(st.booleans()):
                    # tile i - 1 is still held here: read it once more before its release
                    late.insert(0, Access("reader", pipe.name, draw(st.sampled_from(seen)), prev,
                                          name, "", _loc(counter)))
                evs.append(If(Compare(A("i"), ">=", A(1)), tuple(late), (), _loc(counter)))
                last = idx.substitute({"i": trip - 1})
                epilogue[rp].append(If(Compare(trip, ">=", A(1)),
                                       (Event("release", pipe.name, last, name, None, _loc(counter)),), (),
                                       _loc(counter)))
            elif not pipe.one_shot or draw(st.booleans()):
                evs.append(Event("release", pipe.name, idx, name, None, _loc(counter)))
            elif accesses and draw(st.booleans()):
                # a one-shot reader that never releases holds its slot to the end of the partition
                epilogue[rp].append(Access("reader", pipe.name, draw(st.sampled_from(seen)), idx,
                                           name, "", _loc(counter)))
            tgt[rp].append(evs)

    if fault and placed:
        _misplace(draw, placed, roles, parts, pro, body)

    def interleave(chains: list[list[Event]]) -> list:
        """Random merge of the chains, each keeping its own order."""
        chains = [list(c) for c in chains if c]
        out = []
        while chains:
            c = draw(st.sampled_from(chains))
            out.append(c.pop(0))
            if not c:
                chains.remove(c)
        return out

    partitions = []
    for pi, p in enumerate(parts):
        stmts: list = interleave(pro[p])
        inner = interleave(body[p])
        if inner and draw(st.integers(0, 4)) == 0:
            # Split one event into both branches of an if: same trace, more structure.
            j = draw(st.integers(0, len(inner) - 1))
            cond = draw(st.sampled_from([ModCompare(A("i"), 2, "==", 0),
                                         Compare(A("i"), "<", A(1)),
                                         BoolOp("or", (Compare(A("i"), "==", A(0)),
                                                       ModCompare(A("i"), 3, "!=", 1)))]))
            ev = inner[j]
            inner[j] = If(cond, (ev,), (dataclasses.replace(ev, loc=_loc(counter)),), _loc(counter))
        if inner:
            if nested:
                # for j in range(trip): for i in range(2): the stream index becomes 2*j + i.
                sub = {"i": A("j").scale(2) + "i"}
                inner = [_reindex(x, sub) for x in inner]
                loop = For("j", A(0), trip, 1, (For("i", A(0), A(2), 1, tuple(inner), _loc(counter)),),
                           _loc(counter))
            else:
                loop = For("i", A(0), trip, 1, tuple(inner), _loc(counter))
            stmts.append(loop)
        stmts += epilogue[p]
        partitions.append(Partition(p, tuple(stmts), 4, None if pi == 0 else 232, pi == 0, _loc(counter)))
    return Program("gen", param_decls, tuple(pipes), tuple(partitions), Loc("gen.pipe", 0))


def _misplace(draw, placed: list, roles: list, parts: list[str], pro: dict, body: dict) -> None:
    """Move or change one access of a chain (:data:`ACCESS_FAULTS`), in place."""
    chain, k, streaming = draw(st.sampled_from(placed))
    stmt = chain[k]
    a = stmt.then[0] if isinstance(stmt, If) else stmt

    def put(new) -> None:
        chain[k] = dataclasses.replace(stmt, then=(new,)) if isinstance(stmt, If) else new

    kind = draw(st.sampled_from(ACCESS_FAULTS))
    pipe = next(p for p, _, _ in roles if p.name == a.pipe)
    if kind in ("after", "before"):
        # chains are [opener, ..accesses.., closer(s)]: past the last element or before the first
        chain.pop(k)
        if kind == "after":
            chain.append(stmt)
        else:
            chain.insert(0, stmt)
    elif kind == "neighbour":
        put(dataclasses.replace(a, index=a.index + draw(st.sampled_from([1, -1]))))
    elif kind == "wrong-side":
        if a.side == "writer":
            reader = draw(st.sampled_from(pipe.readers)) if pipe.readers else None
            put(dataclasses.replace(a, side="reader", reader=reader))
        else:
            put(dataclasses.replace(a, side="writer", reader=None))
    elif kind == "other-reader" and a.side == "reader" and len(pipe.readers) > 1:
        others = [r for r in pipe.readers if r != a.reader]
        put(dataclasses.replace(a, reader=draw(st.sampled_from(others))))
    else:  # other-partition (and other-reader where there is no other reader)
        chain.pop(k)
        target = draw(st.sampled_from(parts))
        (body if streaming else pro)[target].append([stmt])


def _reindex(s, sub):
    if isinstance(s, (Event, Access)):
        return dataclasses.replace(s, index=s.index.substitute(sub))
    if isinstance(s, If):
        return dataclasses.replace(s, then=tuple(_reindex(x, sub) for x in s.then),
                                   orelse=tuple(_reindex(x, sub) for x in s.orelse))
    return s


# ---------------------------------------------------------------------------------------------
# Mutations

def _paths(body: tuple, prefix=()) -> list[tuple]:
    """Paths (tuples of indices / ("then"|"else", index)) to every statement in a body."""
    out = []
    for i, s in enumerate(body):
        out.append(prefix + (i,))
        if isinstance(s, For):
            out += _paths(s.body, prefix + (i, "body"))
        elif isinstance(s, If):
            out += _paths(s.then, prefix + (i, "then"))
            out += _paths(s.orelse, prefix + (i, "orelse"))
    return out


def _edit(body: tuple, path: tuple, fn) -> tuple:
    """Replace the statement list containing path[-1] by fn(list, index)."""
    if len(path) == 1:
        lst = list(body)
        fn(lst, path[0])
        return tuple(lst)
    i, attr = path[0], path[1]
    s = body[i]
    inner = getattr(s, attr)
    new = dataclasses.replace(s, **{attr: _edit(inner, path[2:], fn)})
    return body[:i] + (new,) + body[i + 1:]


def _get(body: tuple, path: tuple):
    s = body[path[0]]
    return s if len(path) == 1 else _get(getattr(s, path[1]), path[2:])


@st.composite
def mutated(draw, base=None) -> Program:
    prog = draw(base if base is not None else protocols())
    kind = draw(st.sampled_from(["drop", "duplicate", "swap", "reindex", "capacity"]))
    if kind == "capacity":
        k = draw(st.integers(0, len(prog.pipes) - 1))
        p = prog.pipes[k]
        if p.one_shot:
            return prog
        cap = max(1, p.capacity + draw(st.sampled_from([-1, 1, 2])))
        pipes = prog.pipes[:k] + (dataclasses.replace(p, capacity=cap),) + prog.pipes[k + 1:]
        return dataclasses.replace(prog, pipes=pipes)
    pi = draw(st.integers(0, len(prog.partitions) - 1))
    part = prog.partitions[pi]
    paths = [p for p in _paths(part.body) if isinstance(_get(part.body, p), (Event, Access))]
    if not paths:
        return prog
    path = draw(st.sampled_from(paths))
    ev = _get(part.body, path)
    if kind == "drop":
        body = _edit(part.body, path, lambda lst, i: lst.pop(i))
    elif kind == "duplicate":
        body = _edit(part.body, path, lambda lst, i: lst.insert(i, dataclasses.replace(ev, loc=Loc("gen.pipe", 9000))))
    elif kind == "swap":
        def swap(lst, i):
            j = i + 1 if i + 1 < len(lst) else i - 1
            if j >= 0:
                lst[i], lst[j] = lst[j], lst[i]
        body = _edit(part.body, path, swap)
    else:
        delta = draw(st.sampled_from(["+1", "-1", "*2", "+cap"]))
        cap = prog.pipe(ev.pipe).capacity
        new = {"+1": ev.index + 1, "-1": ev.index - 1, "*2": ev.index.scale(2), "+cap": ev.index + cap}[delta]
        body = _edit(part.body, path, lambda lst, i: lst.__setitem__(i, dataclasses.replace(ev, index=new)))
    parts = prog.partitions[:pi] + (dataclasses.replace(part, body=body),) + prog.partitions[pi + 1:]
    return dataclasses.replace(prog, partitions=parts)
