"""The package as a user gets it, not as the checkout runs it: the wheel holds every package, module
and data file of ``tle_compiler`` and ``tle_kernels``; installed (not editable) into a fresh venv and
run from a directory outside the checkout, ``python -m tle_kernels`` (on a CPU: dump, verify and
compile the bundled kernel) and ``tle-dump`` on the installed kernel files work.

Nothing is downloaded: the venv sees the machine's packages (``--system-site-packages``: torch,
triton, lark, setuptools), the project is installed with ``--no-deps --no-build-isolation
--no-index``. The build runs on a copy of the sources, so a stale ``build/`` of the checkout (which
setuptools would package) cannot hide a missing file, and concurrent runs do not share one.
About 30 s; marked ``packaging`` (CI runs it; ``-m 'not packaging'`` skips it locally).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.packaging

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("tle_compiler", "tle_kernels")
SOURCES = ("pyproject.toml", "README.md", *PACKAGES)
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build", "dist")


def _wheel_support() -> bool:
    try:
        import setuptools.command.bdist_wheel  # noqa: F401  (setuptools >= 70.1)
        return True
    except ImportError:
        try:
            import wheel  # noqa: F401
            return True
        except ImportError:
            return False


def _tracked(paths) -> list[str] | None:
    """Tracked files under ``paths`` (None outside a git checkout)."""
    try:
        r = subprocess.run(["git", "ls-files", "--", *paths], cwd=ROOT, capture_output=True,
                           text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return r.stdout.split()


def expected_contents(src: Path) -> tuple[set[str], set[str]]:
    """(every Python module, every data file) the wheel must hold, from the source tree: each
    ``.py`` under the package roots, and each other file git tracks there (a ``.lark`` grammar,
    the ``.pipe`` skeletons) or, outside a checkout, each other file on disk."""
    modules, data = set(), set()
    for pkg in PACKAGES:
        for p in (src / pkg).rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts and p.suffix == ".py":
                modules.add(p.relative_to(src).as_posix())
    tracked = _tracked(PACKAGES)
    if tracked is None:
        tracked = [p.relative_to(src).as_posix() for pkg in PACKAGES for p in (src / pkg).rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts]
    data = {t for t in tracked if not t.endswith((".py", ".pyc")) and (src / t).is_file()}
    return modules, data


def _env(tmp: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV"))}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONNOUSERSITE="1",
               CUDA_VISIBLE_DEVICES="",  # the CPU path of `python -m tle_kernels`, even on a GPU host
               TLE_CACHE_DIR=str(tmp / "gluon_cache"))
    return env


def _run(cmd, cwd: Path, env: dict, timeout: float = 120) -> subprocess.CompletedProcess:
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} -> exit {r.returncode}\n" \
                              f"--- stdout\n{r.stdout[-4000:]}\n--- stderr\n{r.stderr[-4000:]}"
    return r


@pytest.mark.skipif(not _wheel_support(), reason="setuptools here builds no wheels (needs >= 70.1 "
                                                   "or the wheel package)")
def test_wheel_and_install_outside_the_checkout(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in SOURCES:
        s = ROOT / name
        (shutil.copytree(s, src / name, ignore=SKIP) if s.is_dir() else shutil.copy2(s, src / name))
    env = _env(tmp_path)
    outside = tmp_path / "elsewhere"  # no checkout on the path: cwd is neither ROOT nor src
    outside.mkdir()

    # 1. the wheel lists every package, module and data file of the source tree
    wheels = tmp_path / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", wheels,
          src], outside, env)
    (whl,) = wheels.glob("tle_compiler-*.whl")
    names = set(zipfile.ZipFile(whl).namelist())
    modules, data = expected_contents(src)
    assert modules and {"tle_compiler/ir/grammar.lark", "tle_kernels/sparse_mla_pipe.pipe",
                        "tle_kernels/sparse_mla_seesaw.pipe"} <= data
    # every grammar and protocol skeleton on disk, tracked yet or not (the package-data globs)
    grammars_and_skeletons = {p.relative_to(src).as_posix() for pkg in PACKAGES
                              for ext in ("*.lark", "*.pipe") for p in (src / pkg).rglob(ext)}
    assert {"tle_compiler/ir/grammar.lark", "tle_compiler/ir/kernel_grammar.lark"} <= \
        grammars_and_skeletons
    missing = sorted((modules | data | grammars_and_skeletons) - names)
    assert not missing, f"the wheel lacks {missing}"
    packages = {Path(m).parent.as_posix() for m in modules}
    assert {"tle_kernels/examples", "tle_kernels/gpu_tests", "tle_compiler/ir"} <= packages
    assert {p + "/__init__.py" for p in packages} <= names  # every package is a regular package
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == set(PACKAGES), f"unexpected top-level entries in the wheel: {sorted(tops)}"
    meta = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "tle-dump = tle_compiler.cli.dump:main" in zipfile.ZipFile(whl).read(meta).decode()

    # 2. installed from the wheel into a fresh venv: the main job and tle-dump, outside the checkout
    # (no pip of its own: Python's ensurepip would also put an old setuptools into the venv, ahead
    # of the machine's; this pip installs into it through --python)
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv], outside, env)
    py, bindir = venv / "bin" / "python", venv / "bin"
    if not py.exists():  # Windows layout
        py, bindir = venv / "Scripts" / "python.exe", venv / "Scripts"
    pip = [sys.executable, "-m", "pip", "--python", py]
    _run([*pip, "install", "--no-deps", "--no-index", whl], outside, env)

    def installed_dir() -> Path:
        r = _run([py, "-c", "import os, tle_compiler, tle_kernels; "
                            "print(os.path.dirname(tle_kernels.__file__)); "
                            "print(os.path.dirname(tle_compiler.__file__))"], outside, env)
        kdir, cdir = map(Path, r.stdout.split())
        for d in (kdir, cdir):  # the venv's copy, not the checkout (nor an editable install of it)
            assert venv.resolve() in d.resolve().parents, f"imported from {d}, not from the venv"
        return kdir

    kdir = installed_dir()
    r = _run([py, "-m", "tle_kernels"], outside, env, timeout=300)
    assert "No CUDA GPU here" in r.stdout and "verified for every value" in r.stdout
    assert "ttg.warp_specialize(" in r.stdout and "ttng.init_barrier" in r.stdout
    tle_dump = bindir / "tle-dump"
    r = _run([tle_dump, "-q", kdir / "sparse_mla_pipe.py"], outside, env)
    _run([tle_dump, "-q", kdir / "sparse_mla_pipe.pipe"], outside, env)  # the grammar, from the wheel

    # 3. a plain (non-editable) `pip install .` of the sources works too, in the same venv
    _run([*pip, "install", "--no-deps", "--no-build-isolation", "--no-index", "--force-reinstall",
          src], outside, env)
    kdir = installed_dir()
    _run([tle_dump, "-q", kdir / "sparse_mla_seesaw.pipe"], outside, env)
    _run([py, "-c", "import tle_kernels.examples.ring, tle_kernels.gpu_tests.spsc_ring"], outside, env)
