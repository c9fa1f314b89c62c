"""Reading one tle-dump input into kernels: a .py file's ``@tle.jit`` kernels, read specialised to
the constexpr values their configs or ``--param`` fix (and to each value a boolean constexpr
chooses a handle by), a .pipe protocol, or a .kir kernel IR text; and the checks of those
values made before anything is verified (a constexpr the kernel lacks, a boolean given an
integer, a config contradicting ``--param``, an integer the signature cannot hold)."""

from __future__ import annotations

import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from ..diagnostics import TleError
from ..ir.nodes import Module, Program
from .unusable import Unusable, at_line


@dataclass
class Loaded:
    module: Module
    #: Integer constexprs the file was read specialised to (they are no longer params).
    specialised: dict[str, int] = field(default_factory=dict)
    #: Each kernel's constexpr arguments by kernel name (none for a .pipe file): the names a
    #: --param may read the kernel specialised to.
    constexprs: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Each kernel's DEFAULT_CONFIG constexpr values by kernel name (none without one).
    defaults: dict[str, dict] = field(default_factory=dict)
    #: Each kernel's frontend reading (KernelInfo) and DEFAULT_CONFIG signature by kernel name
    #: (a .py file's; none without a signature): the argument types the compile will check.
    infos: dict[str, object] = field(default_factory=dict)
    signatures: dict[str, dict] = field(default_factory=dict)
    #: Each kernel's kernel IR by kernel name, for a .kir file (what the lowering translates).
    kirs: dict[str, object] = field(default_factory=dict)
    #: The constexprs each kernel was read specialised to, by kernel name, where a DEFAULT_CONFIG
    #: keyed by kernel name gave each its own (``specialised`` then holds the values they agree on).
    per_kernel: dict[str, dict] = field(default_factory=dict)

    def specialised_of(self, kernel: str) -> dict[str, int]:
        """The constexprs this kernel was read specialised to: in a file of several kernels, only
        its own, so that its verdict names no value it does not take."""
        # a .pipe kernel's `constexpr NAME = V` lines (the report of a kernel read specialised)
        own = next((dict(k.constexprs) for k in self.module.kernels if k.name == kernel), {})
        if kernel in self.per_kernel:
            return {**own, **self.per_kernel[kernel]}
        names = self.constexprs.get(kernel)
        if names is None:
            return {**own, **self.specialised}
        return {**own, **{n: v for n, v in self.specialised.items() if n in names}}


#: The inputs tle-dump reads, by suffix: Python kernels, Pipe IR text, kernel IR text.
INPUT_SUFFIXES = (".py", ".pipe", ".kir")


def read_input(path: Path) -> str:
    """The text of PATH, or Unusable with one line saying why there is none: standard input
    ("-"), a missing file, a symlink loop, a directory, a FIFO or device (reading one would block
    or never end), a suffix other than .py/.pipe/.kir, bytes that are not UTF-8 text."""
    if str(path) == "-":
        raise Unusable("-: error: tle-dump does not read standard input; give the path of a "
                        ".py, .pipe or .kir file")
    try:
        st = path.stat()
    except FileNotFoundError:
        what = "a symlink to a missing file" if path.is_symlink() else "no such file"
        raise Unusable(f"{path}: error: {what}") from None
    except OSError as e:  # a symlink loop (ELOOP), a name too long, a folder we may not enter
        raise Unusable(f"{path}: error: cannot read: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise Unusable(f"{path}: error: is a directory; give a .py, .pipe or .kir file")
    if not stat.S_ISREG(st.st_mode):
        raise Unusable(f"{path}: error: not a regular file (a FIFO, socket or device); give a "
                        f".py, .pipe or .kir file")
    if path.suffix not in INPUT_SUFFIXES:
        raise Unusable(f"{path}: error: unknown kind of file "
                        f"({repr(path.suffix) if path.suffix else 'no suffix'}); give a .py, "
                        f".pipe or .kir file")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise Unusable(f"{path}: error: cannot read: {e.strerror or e}") from None
    try:
        # a .py file is decoded as Python decodes it, as the frontend's readers do
        # (frontend/source_text.py: a byte-order mark skipped, a coding declaration followed);
        # .pipe / .kir text is UTF-8 and refuses a byte-order mark
        if path.suffix == ".py":
            from ..frontend.source_text import decode_python

            text = decode_python(data)
        else:
            text = data.decode("utf-8")
    except SyntaxError as e:  # a coding declaration Python refuses: it does not import the file
        raise Unusable(f"{path}:{e.lineno or 1}: error: Python syntax error: {e.msg}") from None
    except UnicodeDecodeError as e:
        raise Unusable(f"{path}: error: not {e.encoding.replace('-sig', '').upper()} text "
                        f"(byte {e.start}); give a .py, .pipe or .kir file") from None
    if "\0" in text:
        raise Unusable(f"{path}: error: contains NUL bytes; give a .py, .pipe or .kir file")
    return text


def load_kir(path: Path, fixed: dict) -> Loaded:
    """The kernels of a .kir file (the kernel IR's text form, ir/kernel_text.py) as their
    protocol views (passes/kir_module.py), verified like a .py file's kernels: read generically,
    or specialised to the ``--param`` values naming its constexprs, or, when its indices are
    affine only with them as numbers, to those and the DEFAULT_CONFIG constexprs it carries (a
    note on stderr says so, as for a .py file)."""
    from ..ir.kernel_text import parse_kernel_file
    from .config import kernel_config
    from .print_ir import kir_protocol_view

    try:
        kernels = parse_kernel_file(str(path))
    except TleError as e:  # not the text form: unusable input, as a .pipe syntax error
        raise Unusable(str(e)) from None
    programs, specialised, names, defaults, signatures = [], {}, {}, {}, {}
    for k in kernels:
        names[k.name] = tuple(p.name for p in k.params if p.constexpr)
        try:
            whole = kernel_config(k, str(path), k.name)
            check_config_constexprs(path, k.name, whole, k.params)
            config = dict(whole.get("constexprs", {}))
            if isinstance(whole.get("signature"), dict):
                signatures[k.name] = dict(whole["signature"])
        except TleError as e:
            refuse_contradicting_config(e)
            config = {}
        defaults[k.name] = config
        refuse_int_as_bool(fixed, config, k.name)
        given = {n: v for n, v in int_constexprs(fixed).items() if n in names[k.name]}
        program, bound = kir_protocol_view(path, k, {**config, **fixed}, given)
        specialised.update(bound)
        # a text some of whose constexprs its partitions bind to numbers is the print of a
        # kernel read specialised (to its DEFAULT_CONFIG's constexprs, as a .py file's reading
        # of such a kernel is): its claim names them as the .py kernel's does
        in_text = bound_in_text(k)
        if in_text:
            in_text = {**{n: v for n, v in int_constexprs(config).items()
                          if n in names[k.name]}, **in_text}
        specialised.update({n: v for n, v in in_text.items() if n not in bound and n not in fixed})
        programs.append(program)
    loaded = Loaded(Module(tuple(programs), str(path)), specialised, names, defaults,
                    signatures=signatures, kirs={k.name: k for k in kernels})
    check_constexpr_values(loaded, {n: v for n, v in fixed.items() if n in specialised})
    return loaded


def check_config_constexprs(path: Path, name: str, cfg: dict, params) -> None:
    """Unusable (exit 2, at DEFAULT_CONFIG's line, whatever tle-dump was asked to print) when
    the signature of kernel ``name``'s DEFAULT_CONFIG ``cfg`` types an argument "constexpr" that
    the kernel (its ``params``) takes at run time, or types a constexpr argument "constexpr"
    while the config's "constexprs" gives it no value: the kernel that was verified (a run-time
    value there; a constexpr a launch gives) is not the one --gluon/--ttgir/--ptx compile with
    these types (the value baked in, or None: "cannot convert None")."""
    sig, values = cfg.get("signature", {}), cfg.get("constexprs", {})
    if not isinstance(sig, dict) or not params:
        return
    values = values if isinstance(values, dict) else {}
    kinds = {p.name: p.constexpr for p in params}
    from .config import _line

    where = f"{path}:{_line(str(path))}: error: DEFAULT_CONFIG's \"signature\" types"
    for arg, t in sig.items():
        if t != "constexpr" or arg not in kinds:
            continue  # an argument the kernel lacks: _check_signature_names says so
        if not kinds[arg]:
            raise Unusable(f"{where} {arg!r} as \"constexpr\", but kernel '{name}' takes it at "
                            f"run time (no tl.constexpr annotation), as it was verified: type it "
                            f"as the value it is (\"i32\", \"*fp32\"), or annotate it "
                            f"tl.constexpr")
        if arg not in values:
            raise Unusable(f"{where} {arg!r} as \"constexpr\", but its \"constexprs\" gives "
                            f"{arg} no value, which the compile needs (it would compile {arg} as "
                            f"None): give {arg} a value there, or leave it out of the signature "
                            f"(a launch gives it)")


def bound_in_text(k) -> dict[str, int]:
    """The integer constexpr params of ``k`` that its partitions bind to one number (``SKIP = 1``
    in each partition's bindings): the text of a kernel read specialised (``--print-ir`` of a .py
    kernel read specialised to SKIP = 1 prints it so), whose verdict then names them as the .py
    kernel's does ("with SKIP = 1 (read specialised)"); a claim for those values only."""
    from ..ir.kernel import Const

    out: dict[str, int] = {}
    for p in k.params:
        if not p.constexpr:
            continue
        values = {e.value if isinstance(e, Const) else None
                  for part in k.partitions for n, e in part.bindings if n == p.name}
        if len(values) == 1:
            (v,) = values
            if isinstance(v, int) and not isinstance(v, bool):
                out[p.name] = v
    return out


def int_constexprs(values: dict) -> dict:
    """The integer values of ``values``: the constexprs a reading binds (bools stay free)."""
    return {k: v for k, v in values.items() if isinstance(v, int) and not isinstance(v, bool)}


def chosen_by_bools(err: TleError, config: dict, fixed: dict) -> dict:
    """The boolean constexprs of DEFAULT_CONFIG (``config``, a kernel's "constexprs") that the
    reading needs bound (``err``: the generic reading's CapacityOfConstexprs naming them, a
    pipe handle chosen by `wa if C else wb`), as the integers Triton reads them as, where no
    --param gives them: as `--param C=True` and a launch with C=True read them (adversarial
    round 66: DEFAULT_CONFIG's `"C": True` alone was refused, "no integer")."""
    names = getattr(err, "names", ()) if getattr(err, "choice", False) else ()
    return {n: int(config[n]) for n in names
            if isinstance(config.get(n), bool) and n not in fixed}


def read_specialised(path: Path, text: str, fixed: dict, err: TleError,
                 only: Optional[Sequence[str]] = None) -> Loaded:
    """A kernel whose indices are affine only with its integer constexprs as numbers, read
    specialised to ``--param`` values and the file's DEFAULT_CONFIG constexprs (``err`` when there
    are none); the constexprs it binds are no longer params."""
    from .config import default_config

    keyed = keyed_configs(path, text)
    if keyed is not None:
        return specialised_per_kernel(path, text, fixed, err, keyed, only)
    try:
        bind = dict(default_config(str(path), "").get("constexprs", {}))
    except TleError as e:  # no DEFAULT_CONFIG: --param values only
        refuse_contradicting_config(e)
        # the kernel's build with the config's values failed (`"STAGES": 0`: a capacity and a
        # slot buffer of 0), or there is no build without values the config lacks (a second
        # pipe capacity's constexpr): its values, read from the literal, so that the reading
        # below names that fault rather than asking for values the config gives
        literal = literal_config(text) if e.check != "lowering" else None
        values = literal.get("constexprs") if isinstance(literal, dict) else None
        bind = dict(values) if isinstance(values, dict) else {}
    refuse_int_as_bool(fixed, bind)
    chosen = chosen_by_bools(err, bind, fixed)
    default_bind = {**int_constexprs(bind), **chosen}
    bind = {**int_constexprs({**bind, **fixed}), **chosen}
    if not bind:
        raise err
    infos = read_bound(text, path, None, bind, default_bind, fixed, "the kernel")
    bound = sorted({n for i in infos for n in i.constexprs if n in bind})
    loaded = loaded_from(path, infos, {k: bind[k] for k in bound})
    check_constexpr_values(loaded, {n: v for n, v in fixed.items() if n in bound})
    # the line names what the kernels shown were read with: `--kernel k2` of a file whose other
    # kernel is what reads only specialised shows k2 as it is, so no line for the file
    asked = [i for i in infos if i.name in only] if only else infos
    shown = sorted({n for i in (asked or infos) for n in i.constexprs if n in bind})
    if shown:
        print(f"tle-dump: {path}: read specialised to "
              f"{', '.join(f'{k}={bind[k]}' for k in shown)} "
              f"({err.message.split(':')[0]} otherwise); the verdict holds for these values only",
              file=sys.stderr)
    return loaded


def literal_config(text: str, tree=None) -> object:
    """The file's DEFAULT_CONFIG literal (the last binding, as Python runs the module); None
    without one or for one that is no literal."""
    import ast

    if tree is None:
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    cfg = None
    for stmt in tree.body:  # the last binding counts, as Python runs the module
        target = (stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                  else stmt.target if isinstance(stmt, ast.AnnAssign) else None)
        if isinstance(target, ast.Name) and target.id == "DEFAULT_CONFIG" and stmt.value:
            try:
                cfg = ast.literal_eval(stmt.value)
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                cfg = None
    return cfg


def read_bound(text: str, path: Path, name: Optional[str], bind: dict, defaults: dict,
                fixed: dict, what: str) -> list:
    """The kernels of ``text`` (or kernel ``name``) read specialised to ``bind``. Where that
    reading fails but the one with DEFAULT_CONFIG's values (``defaults``) does not, it is the
    --param values given that the kernel cannot take: Unusable naming them and ``what``."""
    from ..frontend.ast_reader import kernels_of_source

    try:
        return kernels_of_source(text, str(path), name=name, bind=bind or None)
    except TleError as e:
        given = {k: v for k, v in fixed.items() if k in bind and defaults.get(k) != v}
        if not given:
            raise
        try:  # readable with DEFAULT_CONFIG's values: it is the values given it cannot take
            kernels_of_source(text, str(path), name=name, bind=defaults or None)
        except TleError:
            raise e from None
        shown = ", ".join(f"{n}={v}" for n, v in given.items())
        raise Unusable(f"tle-dump: error: --param {shown}: {what} cannot be read with "
                        f"{'this value' if len(given) == 1 else 'these values'}: "
                        f"{e.message.splitlines()[0]}{at_line(e)}") from None


def keyed_configs(path: Path, text: str) -> Optional[dict]:
    """A DEFAULT_CONFIG keyed by kernel name (a literal dict of dicts, no "signature" of its
    own), read from the file's text; None for any other (one config for every kernel, none, or
    one that is no literal: the readings say what is wrong with it)."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    cfg = literal_config(text, tree)
    # a key must name a function of the file, as the frontend picks a kernel's entry
    # (config_literal.kernel_entry): `{"constexprs": {"STAGES": 2}}` is one config for every
    # kernel, not the entry of a kernel named "constexprs" (read so, no kernel had a value)
    functions = {st.name for st in tree.body if isinstance(st, ast.FunctionDef)}
    if isinstance(cfg, dict) and cfg and "signature" not in cfg \
            and all(isinstance(k, str) and isinstance(v, dict) for k, v in cfg.items()) \
            and any(k in functions for k in cfg):
        return cfg
    return None


def specialised_per_kernel(path: Path, text: str, fixed: dict, err: TleError,
                            keyed: dict, only: Optional[Sequence[str]] = None) -> Loaded:
    """read_specialised for a file whose DEFAULT_CONFIG gives each kernel its own constexprs: each
    kernel read alone, specialised to its own entry's values and the --param values (a kernel
    that needs none read as it is), so that one kernel's capacity or `if` on a constexpr leaves
    the file's other kernels readable; one constexpr may take two values in two kernels, each
    kernel's verdict naming its own (``Loaded.per_kernel``). ``only`` (--kernel), when every
    name in it is a kernel of the file: the other kernels are not read (one that cannot be read
    with its own entry must not refuse the kernels asked for)."""
    import ast

    from ..frontend.kernel import kernel_def_lines
    from ..frontend.scope import ModuleScope

    tree = ast.parse(text)
    names = list(kernel_def_lines(ModuleScope(tree, str(path)), tree))  # in the file's order
    infos, per_kernel = [], {}
    asked = set(only) if only and set(only) <= set(names) else None
    for name in names:
        if asked is not None and name not in asked:
            continue
        entry = keyed.get(name, {})
        own = entry.get("constexprs", {}) if isinstance(entry.get("constexprs"), dict) else {}
        refuse_int_as_bool(fixed, own, name)
        chosen = chosen_by_bools(err, own, fixed)
        bind = {**int_constexprs({**own, **fixed}), **chosen}
        read = read_bound(text, path, name, bind, {**int_constexprs(own), **chosen}, fixed,
                           f"kernel {name}")
        for info in read:
            per_kernel[info.name] = {n: bind[n] for n in info.constexprs if n in bind}
        infos.extend(read)
    if not any(per_kernel.values()):
        if asked is None:
            raise err
        # the kernels asked for read as they are, no constexpr bound (another kernel of the
        # file is what reads only specialised)
        return loaded_from(path, infos, {})
    values: dict[str, set] = {}
    for kb in per_kernel.values():
        for n, v in kb.items():
            values.setdefault(n, set()).add(v)
    agreed = {n: next(iter(vs)) for n, vs in sorted(values.items()) if len(vs) == 1}
    loaded = loaded_from(path, infos, agreed)
    loaded.per_kernel = per_kernel
    check_constexpr_values(loaded, {n: v for n, v in fixed.items() if n in values})
    shown = ", ".join(f"{n}={v}" for n, v in agreed.items())
    split = [f"{k}: " + ", ".join(f"{n}={v}" for n, v in kb.items() if n not in agreed)
             for k, kb in per_kernel.items() if any(n not in agreed for n in kb)]
    print(f"tle-dump: {path}: read specialised to {'; '.join(filter(None, [shown, *split]))} "
          f"({err.message.split(':')[0]} otherwise); the verdict holds for these values only",
          file=sys.stderr)
    return loaded


def config_of(path: Path, info) -> dict:
    """The DEFAULT_CONFIG the frontend recorded on the kernel's IR, or {} without one."""
    from .config import kernel_config

    try:
        return kernel_config(info.kir, str(path), info.name)
    except TleError as e:
        refuse_contradicting_config(e)
        return {}


def refuse_contradicting_config(err: TleError) -> None:
    """A DEFAULT_CONFIG that contradicts its kernel (a num_warps other than @tle.jit's:
    lowering/dumping.py) is unusable input, whatever tle-dump was asked to print: the file
    describes two kernels. Any other config error leaves the kernel without a config here."""
    from ..lowering.dumping import CONFIG_CHECK
    from .config import TYPE_CHECK

    if err.check in (CONFIG_CHECK, TYPE_CHECK):  # TYPE_CHECK: an argument type Triton cannot read
        raise Unusable(str(err)) from None


def loaded_from(path: Path, infos, specialised: dict[str, int]) -> Loaded:
    """The kernels read, with each one's constexprs: its ``tl.constexpr`` arguments and those
    its DEFAULT_CONFIG's signature calls "constexpr", and the values DEFAULT_CONFIG gives them."""
    configs = {i.name: config_of(path, i) for i in infos}
    for i in infos:
        check_config_constexprs(path, i.name, configs[i.name], getattr(i.kir, "params", ()))
    # a signature's "constexpr" counts for an argument of the kernel only: one DEFAULT_CONFIG
    # for a file of several kernels types one kernel's constexpr, which another may not take
    names = {i.name: tuple(dict.fromkeys((*i.constexprs, *(
        n for n, t in configs[i.name].get("signature", {}).items()
        if t == "constexpr" and n in i.args))))
        for i in infos}
    return Loaded(Module(tuple(i.program for i in infos), str(path)), specialised, names,
                  {n: dict(c.get("constexprs", {})) for n, c in configs.items()},
                  {i.name: i for i in infos},
                  {n: dict(c["signature"]) for n, c in configs.items()
                   if isinstance(c.get("signature"), dict)})


def check_constexpr_values(loaded: Loaded, given: dict[str, int]) -> None:
    """A constexpr the DEFAULT_CONFIG gives as True/False takes 0 or 1 only (any other integer
    would be read and lowered as a truth value the kernel was not written for)."""
    for kernel, config in loaded.defaults.items():
        for n, v in given.items():
            if isinstance(config.get(n), bool) and v not in (0, 1):
                raise Unusable(f"tle-dump: error: --param {n}={v}: {n} is a boolean constexpr "
                                f"of {kernel} (DEFAULT_CONFIG: {config[n]}); give 0 or 1")


def read_with_constexprs(path: Path, text: str, infos, fixed: dict) -> Loaded:
    """The kernels read generically, or, when a --param names a constexpr of a kernel that is
    not one of its params, read specialised to the constexprs given (the other values stay
    generic); the verdict then names them ("with CAUSAL = 1 (read specialised)")."""
    from ..frontend.ast_reader import kernels_of_source
    from ..passes.fixed_params import fixable

    generic = loaded_from(path, infos, {})
    given = {n: v for n, v in fixed.items()
             if any(n in generic.constexprs[i.name] and n not in fixable(i.program) for i in infos)}
    if not given:
        return generic
    check_bool_values(fixed, [i.program for i in infos], generic)
    check_constexpr_values(generic, given)
    shown = ", ".join(f"{n}={v}" for n, v in given.items())
    try:
        infos = kernels_of_source(text, str(path), bind=given)
    except TleError as e:  # read generically, so it is the values given the kernel cannot take
        raise Unusable(f"tle-dump: error: --param {shown}: the kernel cannot be read with "
                        f"{'this value' if len(given) == 1 else 'these values'}: "
                        f"{e.message.splitlines()[0]}{at_line(e)}") from None
    print(f"tle-dump: {path}: read specialised to {shown} (--param); the verdict holds for "
          f"{'this value' if len(given) == 1 else 'these values'} only", file=sys.stderr)
    return loaded_from(path, infos, given)


def load(path: Path, fixed: Optional[dict] = None,
         only: Optional[Sequence[str]] = None) -> Loaded:
    """Read a .pipe or .py file into a Module, with the constexprs it had to be read specialised
    to (read_specialised; usually none) or was read specialised to by a --param naming a constexpr
    (read_with_constexprs). ``only``: the kernels --kernel asks for (in a file whose
    DEFAULT_CONFIG is keyed by kernel name, the others are not read). Raises TleError (a
    rejection, exit 1) for frontend errors in a kernel, Unusable (exit 2) for input that cannot
    be read or parsed, or whose DEFAULT_CONFIG gives an integer constexpr a value of another
    kind (check_integer_config_values)."""
    loaded = load_input(path, fixed, only)
    check_integer_config_values(path, loaded, fixed or {})
    return loaded


def check_integer_config_values(path: Path, loaded: Loaded, fixed: dict) -> None:
    """Unusable (exit 2, at DEFAULT_CONFIG's line) when the DEFAULT_CONFIG "constexprs" of a
    kernel gives a value that is no integer (a str, None, a list, a float, 5.0 too) to a
    constexpr the kernel uses where Triton 3.6 takes only an integer, in a statement every
    compile reaches (frontend/constexpr_kinds.py: a loop bound, tl.arange, a shape, a pointer's
    offset): the protocol was verified for its integer values, while the configuration --gluon
    lowers and a launch of it compiles would fail in Triton ("For loop bounds and step must all
    be ints", "cannot convert None ... to tensor"), as one whose "constexprs" gives the
    constexpr no value (check_config_constexprs). A --param value of it takes the config's
    place, and a bool is the integer Triton reads it as."""
    from ..frontend.constexpr_kinds import integer_arguments, integer_constexprs

    for name, config in loaded.defaults.items():
        info = loaded.infos.get(name)
        kir = getattr(info, "kir", None) or loaded.kirs.get(name)
        if kir is None or not isinstance(config, dict):
            continue
        constexprs = {p.name for p in kir.params if p.constexpr}
        integers = integer_constexprs(kir) | (integer_arguments(kir) & constexprs)
        bad = [(n, config[n]) for n in sorted(integers)
               if n in config and n not in fixed and not isinstance(config[n], int)]
        if bad:
            from .config import _line

            n, v = bad[0]
            kind = "" if v is None else f" (a {type(v).__name__})"
            raise Unusable(f"{path}:{_line(str(path))}: error: DEFAULT_CONFIG's \"constexprs\" "
                            f"gives {n} = {v!r}{kind}, but kernel '{name}' uses "
                            f"{n} where Triton takes only an integer (a loop bound, tl.arange, a "
                            f"shape): the configuration --gluon lowers would not compile; give "
                            f"{n} an integer")


def load_input(path: Path, fixed: Optional[dict] = None,
          only: Optional[Sequence[str]] = None) -> Loaded:
    """:func:`load`, without the check of DEFAULT_CONFIG's integer constexprs."""
    text = read_input(path)
    if path.suffix == ".pipe":
        from ..ir.parser import parse_module

        try:
            return Loaded(parse_module(text, str(path)))
        except TleError as e:
            raise Unusable(str(e)) from None
    if path.suffix == ".kir":
        return load_kir(path, fixed or {})
    from ..frontend import SPECIALIZABLE
    from ..frontend.ast_reader import kernels_of_source
    from .config import signature_type_error

    bad_type = signature_type_error(str(path), text)
    if bad_type is not None:  # before the frontend, which reads the pointer types too
        raise Unusable(str(bad_type))
    try:
        infos = kernels_of_source(text, str(path))
    except (RecursionError, MemoryError):
        refuse_too_deep(path, text)
        raise  # Python parses it: a fault of the frontend, reported as an internal error
    except SyntaxError as e:
        # the Python running tle-dump reads the file: syntax of a newer one is an error here
        ver = f"{sys.version_info.major}.{sys.version_info.minor}"
        raise Unusable(f"{path}:{e.lineno}:{e.offset}: error: Python syntax error: {e.msg} "
                        f"(as Python {ver} reads it; fix the line, or run tle-dump with the "
                        f"Python the kernel is written for)") from None
    except TleError as e:
        if e.check == "syntax":  # not Python at all: unusable, not a rejected protocol
            loc = e.loc
            ver = f"{sys.version_info.major}.{sys.version_info.minor}"
            raise Unusable(f"{loc.file}:{loc.line}:{loc.column}: error: Python {e.message} (as "
                            f"Python {ver} reads it; fix the line, or run tle-dump with the "
                            f"Python the kernel is written for)") from None
        if e.check in SPECIALIZABLE:
            return read_specialised(path, text, fixed or {}, e, only)
        raise
    return read_with_constexprs(path, text, infos, fixed or {})


def refuse_too_deep(path: Path, text: str) -> None:
    """Unusable when Python itself cannot parse ``text`` (an expression nested thousands deep:
    ast.parse raises RecursionError or MemoryError, and Python refuses to run the file too)."""
    import ast

    try:
        ast.parse(text, str(path))
    except (RecursionError, MemoryError) as e:
        raise Unusable(f"{path}: error: Python cannot parse this file: nested too deeply "
                        f"({type(e).__name__}); Python refuses to run it as well") from None
    except SyntaxError:
        pass


def refuse_int_as_bool(fixed: dict, config: dict, kernel: str = "") -> None:
    """check_bool_values's refusal of a constexpr whose DEFAULT_CONFIG value ``config`` gives as
    an integer, before a kernel is read specialised to True/False as 1/0."""
    for name in sorted(getattr(fixed, "bools", ())):
        if name in config and not isinstance(config[name], bool):
            raise Unusable(f"tle-dump: error: --param {name}={'True' if fixed[name] else 'False'}"
                            f": {name} is an integer constexpr{f' of {kernel}' if kernel else ''} "
                            f"(DEFAULT_CONFIG: {config[name]!r}); give an integer")


def check_bool_values(fixed: dict, kernels: list[Program], loaded: Loaded) -> None:
    """A --param given as True/False names a boolean constexpr: not an integer param (N=True
    would check N = 1 under a spelling that says it is a flag), nor a constexpr whose
    DEFAULT_CONFIG value is an integer (BLOCK_H=True would read and lower BLOCK_H = 1)."""
    from ..passes.fixed_params import fixable

    for name in sorted(getattr(fixed, "bools", ())):
        given = f"--param {name}={'True' if fixed[name] else 'False'}"
        for k in kernels:
            config = loaded.defaults.get(k.name, {})
            if name in loaded.constexprs.get(k.name, ()):
                refuse_int_as_bool(fixed, config, k.name)
            elif name in fixable(k) and name not in loaded.specialised:
                raise Unusable(f"tle-dump: error: {given}: {name} is an integer param of "
                                f"{k.name}, not a boolean constexpr; give an integer")
