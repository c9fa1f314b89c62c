"""Whether what tle-dump verified lowers: each kernel that is not rejected is translated to Gluon
as ``--gluon`` translates it, and a refusal of the lowering rejects the kernel at its line.
Where the refusal may depend on what the verdict leaves open (a constexpr without a value, an
argument without a type, a buffer no pipe owns), stand-ins are tried and the lines the
refusal reads are found, so that it rejects only what no value would lower."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Optional

from ..diagnostics import TleError, TleVerificationWarning
from ..ir.nodes import Program
from ..passes.verdict import REJECTED
from .report import KernelReport
from .constexprs import translation_types
from .unusable import at_line
from .loading import Loaded
from .kernel_checks import reject_at


def check_translation(rep: KernelReport, path: Path, loaded: Loaded, fixed: dict[str, int],
                       bound: Optional[int] = None) -> None:
    """A kernel the passes found no fault in, translated to Gluon as the lowering translates it
    (lowering/codegen.generate: the Gluon text only, no Triton compile), so that tle-dump never
    verifies a kernel the lowering refuses (`tl.debug_barrier(1)`, `tl.cast(t, 'fp16')`, a dead
    value of no protocol meaning that the frontend does not read): the lowering's refusal
    rejects the kernel, at its line and in the lowering's words, as --gluon refuses it.

    It translates what --gluon lowers: the reading tle-dump verified (``loaded.infos``, or the
    kernel IR of a .kir file: nothing is read again) with the constexprs --gluon lowers
    (DEFAULT_CONFIG's, with those the kernel was read specialised to and the --param values of
    constexprs in their place) and the argument types of the DEFAULT_CONFIG signature. The
    protocol is checked as this run checked it (its --param values and --bound), so the sweep's
    cache of recent runs serves it. ``rep.translated`` keeps the Generated (the JSON report's
    barrier units read it).

    Not translated, with ``rep.not_translated`` saying why (the verdict is then the protocol's
    alone, and the report says so): a .pipe kernel (a protocol, no kernel to lower); a kernel
    whose verification stopped (verdict unknown: the lowering verifies first); a .kir kernel
    with a worker partition of no ``regs=`` (optional in the text form, which prints none for a
    budget written with constexprs; the lowering needs one: it is translated with setmaxnreg's
    least budget in place of each missing one, and a refusal there rejects it as below); a
    kernel a constexpr of which has no value here (no DEFAULT_CONFIG gives one, nor --param: the
    lowering translates for the constexprs' values, which a launch gives); a kernel the lowering
    refuses only for a form it does not translate yet while the verifier checks it (a free
    shared buffer: translate.NOT_YET; translated again past the buffers, a refusal elsewhere
    rejects it, refusal_past_free_buffers); and a kernel the lowering refuses without argument
    types (no DEFAULT_CONFIG signature, or one whose descriptor boxes are another
    configuration's), as -p emit-gluon translates it: a launch lowers it with its own types, which
    may decide the refusal: only a refusal the lowering makes for a type it does not know (check
    translate.UNTYPED); any other refusal of the untyped translation (`tl.debug_barrier(1)`,
    `x = N.foo`, a .kir kernel's undefined local) refuses the kernel whatever its types and
    rejects it, as with a signature. An internal error of the lowering is tle-dump's (exit 3:
    nothing is claimed), never a verdict of the kernel."""
    verdict = rep.verdict
    if verdict is None or verdict.kind == REJECTED:
        return
    name = rep.program.name
    if path.suffix == ".pipe":
        rep.not_translated = "a .pipe file holds the protocol alone, no kernel to lower"
        return
    if rep.stopped is not None:  # the lowering runs the protocol passes first: they stop there too
        rep.not_translated = ("the verification stopped (the verdict says where), and the "
                              "lowering verifies the protocol before it translates")
        return
    info, kir = loaded.infos.get(name), loaded.kirs.get(name)
    if info is None and kir is None:
        return
    unbudgeted_why = None
    if kir is None:
        kir = info.kir
    elif any(not p.default and p.regs is None for p in kir.partitions):
        # regs= is optional in the text form (a budget of constexprs prints none): the kernel
        # is not translated, but the translation still runs with setmaxnreg's least budget in
        # place of each missing one, for the refusals no budget lifts (a `break`, read as an
        # undefined local), which reject the kernel as they do one with its budgets
        from dataclasses import replace

        from ..language.registers import MIN_REGS

        unbudgeted = [p.name for p in kir.partitions if not p.default and p.regs is None]
        unbudgeted_why = (f"partition {', '.join(map(repr, unbudgeted))} has no register "
                          f"budget (regs=), which the lowering needs: its .py file lowers")
        kir = replace(kir, partitions=tuple(
            replace(p, regs=MIN_REGS) if not p.default and p.regs is None else p
            for p in kir.partitions))
    cx, sig, typed = translation_types(loaded, name, fixed)
    missing = [p.name for p in kir.params if p.constexpr and p.name not in cx]
    if missing:
        rep.not_translated = (f"no value for constexpr {', '.join(missing)} (the lowering "
                              f"translates a kernel for its constexprs' values: give them in "
                              f"DEFAULT_CONFIG or with --param)")
        other = refusal_without_constexprs(path, info, kir, rep.program, cx, sig,
                                            params_of(rep.program, fixed), bound, missing)
        if other is not None:  # refused at a line no missing value reaches: whatever they are
            rep.not_translated = None
            reject_at(rep, other, "lowering")
        return
    sig = typed
    try:
        ahead = AHEAD.pop(ahead_key(path, info, kir, rep.program, cx, sig,
                                      params_of(rep.program, fixed), bound), None)
        if ahead is not None:  # translated ahead (translate_ahead): its result or its raise
            if ahead[1] is not None:
                raise ahead[1]
            translated = ahead[0]
        else:
            with warnings.catch_warnings():  # the verdict is this run's, said on its summary line
                warnings.simplefilter("ignore", TleVerificationWarning)
                translated = translation_of(path, info, kir, rep.program, cx, sig,
                                         params_of(rep.program, fixed), bound)
        if unbudgeted_why is None:
            rep.translated = translated
        else:  # translated with budgets it does not have: not the kernel's Gluon
            rep.not_translated = unbudgeted_why
    except TleError as e:
        from ..lowering.translate import NOT_YET, UNTYPED

        message = e.message.removeprefix("lowering: ")
        if e.check == "internal" or message.startswith("internal"):
            raise RuntimeError(f"the lowering of kernel '{name}': {e}") from e
        if e.check == NOT_YET:  # a form the verifier checks and the lowering does not translate
            other = refusal_past_free_buffers(path, info, kir, rep.program, cx, sig,
                                               params_of(rep.program, fixed), bound)
            if other is not None:  # a refusal the free buffers hid: the kernel's own
                reject_at(rep, other, "lowering")
                return
            rep.not_translated = unbudgeted_why or f"{message}{at_line(e)}"
        elif not sig and e.check == UNTYPED:  # a type a launch gives may decide it
            other = refusal_untyped(path, info, kir, rep.program, cx,
                                     params_of(rep.program, fixed), bound)
            if other is not None:  # refused whatever that type is
                reject_at(rep, other, "lowering")
                return
            rep.not_translated = unbudgeted_why or (
                f"without argument types (no DEFAULT_CONFIG signature that holds here), the "
                f"lowering refuses it: {message}{at_line(e)}")
        else:  # refused whatever the argument types: the kernel no launch compiles
            reject_at(rep, e, "lowering" if e.check in (UNTYPED, None, "") else None)


#: translations made ahead of their check (translate_ahead), by ahead_key: (the Generated,
#: None) or (None, what it raised)
AHEAD: dict = {}


def ahead_key(path: Path, info, kir, program: Program, cx: dict, sig: dict, params: dict,
               bound: Optional[int]) -> Optional[tuple]:
    try:
        key = (str(path), id(info), id(kir), id(program), tuple(sorted(cx.items())),
               tuple(sorted(sig.items())), tuple(sorted(params.items())), bound)
        hash(key)
    except TypeError:
        return None
    return key


def translate_ahead(rep: KernelReport, path: Path, loaded: Loaded, fixed: dict[str, int],
                     bound: Optional[int] = None) -> None:
    """The translation :func:`check_translation` makes of a kernel read from a .py file with
    its constexprs' values, made now (while a child process proves its memory races,
    RacesBeside) and kept for it: the same call with the same arguments, taken there only if
    they are the same then. Nothing is kept where a warning other than the verdict's was
    given (it would be shown too early): the check then translates, and warns, itself."""
    verdict = rep.verdict
    if verdict is None or verdict.kind == REJECTED or path.suffix == ".pipe" or \
            rep.stopped is not None:
        return
    name = rep.program.name
    info = loaded.infos.get(name)
    if info is None or loaded.kirs.get(name) is not None:
        return
    kir = info.kir
    cx, _, sig = translation_types(loaded, name, fixed)
    if any(p.constexpr and p.name not in cx for p in kir.params):
        return
    params = params_of(rep.program, fixed)
    key = ahead_key(path, info, kir, rep.program, cx, sig, params, bound)
    if key is None:
        return
    with warnings.catch_warnings(record=True) as given:
        warnings.simplefilter("always")
        try:
            got = (translation_of(path, info, kir, rep.program, cx, sig, params, bound), None)
        except Exception as e:
            got = (None, e)
    if all(issubclass(w.category, TleVerificationWarning) for w in given):
        AHEAD[key] = got


def refusal_past_free_buffers(path: Path, info, kir, program: Program, cx: dict, sig: dict,
                               params: dict, bound: Optional[int]) -> Optional[TleError]:
    """The lowering stops at a kernel's first free shared buffer (lowering-not-yet), which would
    hide every refusal after it (a reader's `tl.debug_barrier(1)`, which no launch compiles):
    translated again with each free buffer read as a shared-memory tile of its shape
    (translate.STUB_FREE_BUFFERS), the kernel's refusal there (refusal_outside); None when that
    translation goes through, or is refused only where a free buffer is read."""
    return refusal_outside(path, info, kir, program, [cx], sig, params, bound, set(), "")


#: the values each constexpr without one is translated at, one after the other, to look for the
#: refusals no value of it lifts (powers of two, as block shapes need; 16 first)
PROBE_CONSTEXPRS = (16, 64, 32, 128, 8, 4, 2, 1, 256)


#: the element types tried, one after the other, where no signature gives one that the
#: translation needs (translate.UNTYPED_STAND_IN)
UNTYPED_STAND_INS = ("float32", "float16", "bfloat16", "int32")


def refusal_without_constexprs(path: Path, info, kir, program: Program, cx: dict, sig: dict,
                                params: dict, bound: Optional[int],
                                missing: list[str]) -> Optional[TleError]:
    """A kernel a constexpr of which has no value here is not translated (the lowering needs the
    values a launch gives), which would excuse every refusal of its lowering (a reader's
    `tl.debug_barrier(1)`, which no launch compiles): translated with the constexprs without a
    value at each of PROBE_CONSTEXPRS in turn, the refusal of the lowering when none of them
    translates (refusal_outside); None when one does (a launch may give that value)."""
    tainted: set[str] = set()
    touched = lines_reading(kir if kir is not None else info.kir, names=frozenset(missing),
                             tainted_out=tainted)
    names = ", ".join(missing)
    return refusal_outside(
        path, info, kir, program, [{**cx, **{n: v for n in missing}} for v in PROBE_CONSTEXPRS],
        sig, params, bound, touched,
        f"{{at}}, no value being given for {names}: the lowering refuses the kernel at each "
        f"value tried, {', '.join(map(str, PROBE_CONSTEXPRS))}; give the value a launch gives "
        f"in DEFAULT_CONFIG or with --param", missing, tainted | set(missing))


def refusal_untyped(path: Path, info, kir, program: Program, cx: dict, params: dict,
                     bound: Optional[int]) -> Optional[TleError]:
    """A kernel without argument types that the lowering refuses for an element type it does not
    know (translate.UNTYPED) is not translated, which would excuse every refusal after that one
    (`tl.debug_barrier(1)` after a keep_dims sum of an untyped load): translated with each of
    UNTYPED_STAND_INS in that type's place, the refusal of the lowering when none of them
    translates (refusal_outside); None when one does (a launch may give that type)."""
    return refusal_outside(path, info, kir, program, [cx], {}, params, bound, set(),
                            f"with each element type tried ({', '.join(UNTYPED_STAND_INS)}) "
                            f"where no signature gives one")


def refusal_outside(path: Path, info, kir, program: Program, cxs: list[dict], sig: dict,
                     params: dict, bound: Optional[int], touched: set[tuple],
                     why: str, varied: tuple = (),
                     touched_names: frozenset = frozenset()) -> Optional[TleError]:
    """The lowering's refusal of a kernel translated with stand-ins, for each configuration of
    ``cxs`` (constexpr values) and, without a signature ``sig``, each element type of
    UNTYPED_STAND_INS where the translation needs one no signature gives; each free shared
    buffer is a shared-memory tile of its shape (translate.STUB_FREE_BUFFERS). None when one of
    these translations goes through (a launch may give those values and types), or none says
    anything (a form not translated yet, an internal error: the stand-ins are no launch's).

    Every stand-in is tried before a refusal is taken, since a translation's first refusal
    hides the ones after it: one at a line reading a constexpr stand-in (a reshape to [C, 2] at
    C = 16) is no reason to keep the verdict, nor one beside it on its line (`x = C;
    tl.debug_barrier(1)`) a reason to excuse it. A free buffer's tile is a stand-in no value
    varies: a refusal at a line reading a free buffer (nor a name bound from one) may be the
    tile's (unless the expression refused, found by its column, reads none: `_ = (buf,
    tl.debug_barrier(1))`), so that translation is made again without those lines
    (without_lines), and what it refuses elsewhere is the kernel's. The refusal returned is one at a
    line outside ``touched`` (the lines reading a constexpr stand-in: it holds whatever their values
    are) first, else the first, its message then saying which stand-ins were tried (``why``, its
    ``{at}`` the values of the constexprs ``varied`` that translation was made with).

    Where every translation is refused at an expression that reads a constexpr stand-in (one of
    ``touched_names``; a shape the probe values do not give, e.g. a [BLOCK, D] tile at BLOCK =
    64, D = 512, which no single probe value fits), the refusal may be the stand-in's whatever
    the kernel: the translation is made again without the statements reading them, and only
    what it refuses elsewhere is the kernel's (the verdict is kept, not translated, otherwise).
    A refusal the same at every value tried (its place and words: `tl.debug_barrier(C)`) is
    no value's, and the kernel's."""
    from ..lowering.translate import NOT_YET, STUB_FREE_BUFFERS, UNTYPED, UNTYPED_STAND_IN

    ir = kir if kir is not None else info.kir
    buffer_names: set[str] = set()
    buffer_lines = lines_reading(ir, buffers=True, tainted_out=buffer_names) \
        if ir.buffers else set()

    def refusal(src_info, src_kir, cx: dict, dtype) -> tuple[bool, Optional[TleError]]:
        """(whether it translates, its refusal when it says anything)."""
        tokens = STUB_FREE_BUFFERS.set(True), UNTYPED_STAND_IN.set(dtype)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", TleVerificationWarning)
                translation_of(path, src_info, src_kir, program, cx, sig, params, bound)
            return True, None
        except TleError as e:
            if e.check in (NOT_YET, UNTYPED, "internal") or e.message.startswith(
                    ("internal", "lowering: internal")):
                if touched_names and e.loc is not None and place_of(e.loc) in touched:
                    stand_in_faults.append(e)  # may be the stand-in values' (see below)
                return False, None
            return False, e
        except Exception:  # noqa: BLE001 - a stand-in is no kernel's form: nothing is learnt
            return False, None
        finally:
            UNTYPED_STAND_IN.reset(tokens[1])
            STUB_FREE_BUFFERS.reset(tokens[0])

    dtypes = (None,) if sig else UNTYPED_STAND_INS
    tries = len(cxs) * len(dtypes)
    names = set(touched_names)

    def no_value_gives(rs) -> bool:
        """Whether refusals ``rs`` are one refusal at every stand-in tried, place and words:
        no stand-in value changes it (`tl.debug_barrier(C)`)."""
        return len(cxs) > 1 and len(rs) == tries and len({(e.loc, e.message) for e, _ in rs}) == 1

    def at_stand_ins(rs) -> bool:
        """Whether every refusal of ``rs`` may be the constexpr stand-ins': a lowering fault
        at a line reading them, or a refusal of an expression reading them."""
        return all(e in stand_in_faults or e.loc is not None and place_of(e.loc) in touched
                   and refused_node_reads(ir, e.loc, names) is not False for e, _ in rs)

    def refused_whatever_the_buffer(e: TleError, cx: dict, dtype) -> bool:
        """Whether refusal ``e``, of an expression reading a free buffer's tile, stands with
        that buffer read as another value in the refused expression only (buffers_replaced_at:
        a load of it as `tl.zeros` of its shape, the buffer itself as 0): the same place and
        words are no refusal of the tile, but of the expression whatever the lowering will
        make of the buffer (`tl.debug_barrier(buf)`, `tl.cast(tl.load(tle.gpu.local_ptr(buf)),
        'fp16')`)."""
        other = buffers_replaced_at(ir, e.loc, buffer_names)
        if other is None:
            return False
        _, again = refusal(None, other, cx, dtype)
        return again is not None and again.loc == e.loc and again.message == e.message

    refusals: list[TleError] = []
    #: internal errors of the lowering at lines reading a constexpr stand-in (a shape no launch
    #: of the kernel gives reaching a form the lowering does not expect)
    stand_in_faults: list[TleError] = []
    for cx in cxs:
        for dtype in dtypes:
            ok, e = refusal(info, kir, cx, dtype)
            if ok:
                return None
            if e is not None and e.loc is not None and place_of(e.loc) in buffer_lines \
                    and refused_node_reads(ir, e.loc, buffer_names) is not False \
                    and not refused_whatever_the_buffer(e, cx, dtype):
                ok, e = refusal(None, without_lines(ir, buffer_lines), cx, dtype)
                if ok or e is not None and e.loc is not None and place_of(e.loc) in buffer_lines:
                    return None  # refused only where the free buffers' tiles stand
            if e is not None:
                refusals.append((e, ", ".join(f"{n} = {cx[n]}" for n in varied)))
    if not refusals and len(stand_in_faults) == tries:  # every translation failed so
        refusals = [(e, "") for e in stand_in_faults]
    if not refusals:
        return None
    if touched_names and (stand_in_faults or not no_value_gives(refusals)) \
            and at_stand_ins(refusals):
        left_out = "the statements refused before left out"
        drop: set[tuple] = set()  # the lines of the refusals so far, their statements left out
        for _ in range(16):
            drop |= {place_of(e.loc) for e, _ in refusals}
            stripped = without_lines(ir, buffer_lines, names, drop)
            refusals, faults = [], len(stand_in_faults)
            for cx in cxs:
                for dtype in dtypes:
                    ok, e = refusal(None, stripped, cx, dtype)
                    if ok:
                        return None  # refused only where the stand-in values are read
                    if e is not None:
                        refusals.append((e, left_out))
            if not refusals and len(stand_in_faults) - faults == tries:
                drop |= {place_of(e.loc) for e in stand_in_faults[faults:]}
                refusals = [(e, left_out) for e in stand_in_faults[faults:]]
                continue
            if not refusals:
                return None
            if no_value_gives(refusals) or not at_stand_ins(refusals):
                break  # a refusal no stand-in value gives: the kernel's
        else:
            return None
    refusals = [(e, at) for e, at in refusals if e not in stand_in_faults]
    if not refusals:
        return None  # the lowering's own faults at the stand-in values: nothing is learnt
    e, at = next(((e, at) for e, at in refusals
                  if e.loc is not None and e.loc.line and place_of(e.loc) not in touched),
                 refusals[0])
    if not why:
        return e
    return TleError(f"{e.message} ({why.replace('{at}', f'with {at}' if at else 'translated')})",
                    e.loc, check=e.check)


def place_of(loc) -> tuple:
    """The file and line of ``loc``: a line is one of a file (a helper of another module has lines
    of the same numbers as the kernel's file)."""
    return loc.file, loc.line


def refused_node_reads(kir, loc, names: set[str]) -> Optional[bool]:
    """Whether the expressions of ``kir`` at ``loc`` (its file, line and column: the node a refusal
    names) read a free buffer or one of ``names``; None when no expression stands there (a
    statement's refusal: the caller reads the whole line)."""
    from ..ir import kernel as K

    found = None
    bodies = [kir.prologue] + [p.body for p in kir.partitions]
    exprs = [e for p in kir.partitions for _, e in p.bindings]
    for body in bodies:
        for st in K.walk_stmts(body):
            exprs.extend(K.stmt_exprs(st))
    for e in exprs:
        for x in K.walk_expr(e):
            at = getattr(x, "loc", None)
            if at is None or place_of(at) != place_of(loc) or at.column != loc.column \
                    or not loc.column:
                continue
            reads = any(isinstance(y, K.BufferRef) or isinstance(y, K.Name) and y.id in names
                        for y in K.walk_expr(x))
            found = reads or bool(found)
    return found


def buffers_replaced_at(kir, loc, names: set[str]):
    """``kir`` with every free buffer, and every one of ``names`` (names bound from one), that
    the expression at ``loc`` (its file, line and column: the node a refusal names) reads
    replaced by another value: a load of a whole buffer (`tl.load(tle.gpu.local_ptr(buf))`) by
    `tl.zeros` of its shape and element type (what the load gives, whatever the lowering makes
    of the buffer), any other read of one by the integer 0; every worker partition given a
    register budget as without_lines gives it. None when no expression stands at ``loc`` or
    none there reads a buffer."""
    import dataclasses

    from ..ir import kernel as K
    from ..language.registers import MIN_REGS

    if not loc.column:
        return None
    hits = []
    declared = {b.name: b for b in kir.buffers}

    def buffer(x) -> bool:
        return isinstance(x, K.BufferRef) or isinstance(x, K.Name) and x.id in names

    def loaded(x, bound: dict):
        """The buffer ``x`` loads whole, when it is `tl.load(tle.gpu.local_ptr(b))` of one
        buffer ``b`` of known dimensions (a name of ``bound``, the function's names bound to a
        buffer)."""
        if not (isinstance(x, K.Op) and x.name == "tl.load" and len(x.args) == 1
                and isinstance(x.args[0], K.Op) and x.args[0].name == "tle.gpu.local_ptr"
                and len(x.args[0].args) == 1 and not x.args[0].kwargs):
            return None
        ref = x.args[0].args[0]
        name = ref.name if isinstance(ref, K.BufferRef) else bound.get(getattr(ref, "id", None))
        buf = declared.get(name)
        return buf if buf is not None and all(isinstance(d, int) for d in buf.shape) else None

    def subst(node, inside: bool, bound: dict):
        """``node`` rebuilt with the buffers read inside the refused expression replaced."""
        if isinstance(node, tuple):
            items = tuple(subst(x, inside, bound) for x in node)
            return items if any(a is not b for a, b in zip(items, node)) else node
        if not dataclasses.is_dataclass(node) or isinstance(node, type):
            return node
        at = getattr(node, "loc", None)
        if not inside and at is not None and place_of(at) == place_of(loc) \
                and at.column == loc.column \
                and not isinstance(node, (K.Assign, K.Eval, K.For, K.If, K.While, K.Return)):
            inside = True
        if inside:
            buf = loaded(node, bound)
            if buf is not None:
                hits.append(node)
                return K.Op("tl.zeros", (K.TupleExpr(tuple(K.Const(d, node.loc) for d in buf.shape),
                                                     node.loc), K.DType(buf.dtype, node.loc)),
                            loc=node.loc)
            if buffer(node):
                hits.append(node)
                return K.Const(0, node.loc)
        changes = {}
        for f in dataclasses.fields(node):
            v = getattr(node, f.name)
            nv = subst(v, inside, bound)
            if nv is not v:
                changes[f.name] = nv
        return dataclasses.replace(node, **changes) if changes else node

    prologue = subst(kir.prologue, False, {n: n for n in declared})
    partitions = tuple(
        dataclasses.replace(p, body=subst(p.body, False, {n: e.name for n, e in p.bindings
                                                          if isinstance(e, K.BufferRef)}),
                            regs=p.regs if p.default or p.regs is not None else MIN_REGS)
        for p in kir.partitions)
    if not hits:
        return None
    return dataclasses.replace(kir, prologue=prologue, partitions=partitions)


def without_lines(kir, lines: set[tuple], names: frozenset = frozenset(),
                   drop: frozenset = frozenset()):
    """``kir`` without its statements at ``lines`` (places: a file and a line, place_of), nor those
    at ``drop`` whose own expressions read one of ``names`` (every statement at such a line
    where none does), a loop or `if` among them with its body; every worker partition given a
    register budget (setmaxnreg's least where it has none, a budget of constexprs: the
    translation from the kernel IR needs one)."""
    from dataclasses import replace

    from ..ir import kernel as K
    from ..language.registers import MIN_REGS

    def reads(st) -> bool:
        return any(isinstance(x, K.Name) and x.id in names
                   for e in K.stmt_exprs(st) for x in K.walk_expr(e))

    bodies = [kir.prologue] + [p.body for p in kir.partitions]
    reading = {place_of(st.loc) for b in bodies for st in K.walk_stmts(b)
               if st.loc is not None and place_of(st.loc) in drop and reads(st)}

    def left_out(st) -> bool:
        if st.loc is None:
            return False
        place = place_of(st.loc)
        return place in lines or place in drop and (reads(st) or place not in reading)

    def strip(body):
        out = []
        for st in body:
            if left_out(st):
                continue
            if isinstance(st, (K.For, K.While)):
                st = replace(st, body=strip(st.body))
            elif isinstance(st, K.If):
                st = replace(st, then=strip(st.then), orelse=strip(st.orelse))
            out.append(st)
        return tuple(out)

    return replace(kir, prologue=strip(kir.prologue), partitions=tuple(
        replace(p, body=strip(p.body),
                regs=p.regs if p.default or p.regs is not None else MIN_REGS)
        for p in kir.partitions))


def lines_reading(kir, buffers: bool = False, names: frozenset = frozenset(),
                   tainted_out: Optional[set] = None) -> set[tuple]:
    """The lines (places: a file and a line, place_of) of ``kir`` whose statements (or partition
    arguments) read a free shared buffer (``buffers``) or one of the kernel body's ``names`` (its
    constexpr parameters), or a name a statement of the same function bound from one
    (transitively); ``tainted_out`` collects those names (of every function)."""
    from ..ir import kernel as K

    def reads(e, tainted: set[str]) -> bool:
        return any(buffers and isinstance(x, K.BufferRef)
                   or (isinstance(x, K.Name) and x.id in tainted) for x in K.walk_expr(e))

    lines: set[tuple] = set()
    bodies = [((), kir.prologue)] + [(p.bindings, p.body) for p in kir.partitions]
    body_names: set[str] = set(names)  # the prologue's names bound from a stand-in
    for n, (bindings, body) in enumerate(bodies):
        tainted = set(names) if n == 0 else {name for name, e in bindings
                                             if reads(e, body_names)}
        lines |= {place_of(e.loc) for name, e in bindings if name in tainted and e.loc is not None}
        lines |= {place_of(x.loc) for _, e in bindings for x in K.walk_expr(e)
                  if (buffers and isinstance(x, K.BufferRef)
                      or isinstance(x, K.Name) and x.id in body_names) and x.loc is not None}
        stmts = list(K.walk_stmts(body))
        grew = True
        while grew:
            grew = False
            for st in stmts:
                if isinstance(st, K.Assign) and st.target not in tainted \
                        and reads(st.value, tainted):
                    tainted.add(st.target)
                    grew = True
        lines |= {place_of(st.loc) for st in stmts if st.loc is not None
                  and any(reads(e, tainted) for e in K.stmt_exprs(st))}
        if n == 0:  # the prologue, walked first
            body_names = tainted
        if tainted_out is not None:
            tainted_out |= tainted
    return lines


def translation_of(path: Path, info, kir, program: Program, cx: dict, sig: dict, params: dict,
                bound: Optional[int]):
    """The Gluon module (a codegen.Generated) of a kernel, with the argument types ``sig`` (none:
    untyped, as -p emit-gluon translates): from its KernelInfo ``info`` as --gluon lowers it
    (lowering/dumping.lowered), or, for a .kir kernel (``info`` None), from its kernel IR and
    protocol view ``program``, as -p emit-gluon lowers it. Raises the lowering's TleError."""
    from ..frontend.budgets import with_budgets
    from ..lowering.codegen import generate
    from ..lowering.descriptors import signature_for_compile

    if info is not None:
        # register budgets written as expressions of constexprs, evaluated with their values
        # (lowering/compile.kernel_info_of does so too): the reading verified is the one lowered
        info = with_budgets(info, cx)
        types = signature_for_compile(info, sig, cx) if sig else None
        return generate(info, cx, False, arg_types=types or None, params=params, bound=bound)
    from dataclasses import replace

    from ..lowering import walks
    from ..lowering.codegen import LAYOUT_PIPELINE, LOWERING_PIPELINE, fixed_constexprs
    from ..lowering.kir_passes import KirModule, run_passes
    from .print_ir import VERDICT_ATTRS

    # the verdict the file carries is left aside: the passes give their own
    kir = replace(kir, attrs=tuple((k, v) for k, v in kir.attrs if k not in VERDICT_ATTRS))
    types = signature_for_compile(walks.kernel_facts(kir, program), sig, cx) if sig else None
    module = KirModule(kir, constexprs=cx, program=program, bound=bound,
                       params={**params, **fixed_constexprs(program, cx)})
    module = run_passes(module, LOWERING_PIPELINE)
    walks.reject_errors(module)  # as codegen.generate, with the types of the signature
    module.lowering = dict(debug_waits=False, cp_async=True, barrier_offsets=None,
                           arg_types=types or None)
    return run_passes(module, f"{LAYOUT_PIPELINE},emit-gluon").generated


def params_of(k: Program, fixed: dict[str, int]) -> dict[str, int]:
    """The --param values of ``k``'s params and of the bases of its derived ones (_verify's)."""
    from ..passes.fixed_params import fixable

    names = set(fixable(k))
    return {n: v for n, v in fixed.items() if n in names}
