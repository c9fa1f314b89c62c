"""Run a pure computation in a forked process while this one goes on, and take its result later.

tle-dump's memory-race proof (frontend/global_races.py, mostly z3's time) reads the kernel as
read and verified and nothing the later checks compute, and the translation to Gluon does not
read its outcome until the verdict is combined. On a machine with a second core the proof can
run beside the translation: cli/dump.py forks a child for it (:func:`start`) once the kernels
are verified, translates, and then takes the child's outcome (:meth:`Beside.results`) where it
took the proof's before.

Nothing the user sees may change: the child writes nothing (its standard output and error go
to a file of its own; anything written there, a warning say, voids its results and the parent
computes them itself, where that output then appears in its place), its results are plain data
(pickled), and where there is no ``os.fork``, the fork fails, the child dies or its results do
not come back whole, the parent computes everything itself, as it did without a child. A
computation that raises in the child (an internal error) comes back as no result, and the
parent computes it again, raising where it raised before.
"""

from __future__ import annotations

import io
import os
import pickle
import select
import sys
import tempfile
import time
from typing import Callable, Optional, Sequence


#: how long :meth:`Beside.results` waits for the child's results, in seconds: past it the child
#: is stopped and the parent computes every result itself (a child that cannot finish, say one
#: holding a lock it inherited locked, must not hang tle-dump; z3's own time limits bound a
#: proof that runs)
WAIT_S = 120.0


def enabled() -> bool:
    """False where $TLE_DUMP_FORK is 0: everything computed in this process."""
    return os.environ.get("TLE_DUMP_FORK", "1").strip() != "0"


class Beside:
    """A child computing one result per job; :meth:`results` waits for them."""

    def __init__(self, pid: int, fd: int, n: int):
        self.pid, self.fd, self.n = pid, fd, n
        self._results: Optional[list] = None
        self._done = False

    def results(self) -> list:
        """The child's results, one per job (None for a job it did not compute); all None when
        it gave none."""
        if not self._done:
            self._done = True
            data = bytearray()
            deadline = time.monotonic() + WAIT_S
            try:
                while True:
                    left = deadline - time.monotonic()
                    if left <= 0 or not select.select([self.fd], [], [], left)[0]:
                        data = bytearray()  # too late: stopped below, computed by the parent
                        _kill(self.pid)
                        break
                    chunk = os.read(self.fd, 1 << 16)
                    if not chunk:
                        break
                    data += chunk
            except OSError:
                data = bytearray()
            finally:
                os.close(self.fd)
                _reap(self.pid)
            try:
                got = pickle.loads(bytes(data)) if data else None
            except Exception:
                got = None
            if isinstance(got, list) and len(got) == self.n:
                self._results = got
        return self._results if self._results is not None else [None] * self.n

    def close(self) -> None:
        """Stop and reap the child if its results were never taken (the run ended first)."""
        if not self._done:
            self._done = True
            _kill(self.pid)
            os.close(self.fd)
            _reap(self.pid)


def _kill(pid: int) -> None:
    try:
        os.kill(pid, 9)
    except OSError:
        pass


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except OSError:
        pass


def start(compute: Callable, jobs: Sequence[tuple]) -> Optional[Beside]:
    """A child computing ``compute(*job)`` for each job, in order; None (nothing started)
    where the process cannot fork or $TLE_DUMP_FORK is 0."""
    if not jobs or not hasattr(os, "fork") or not enabled():
        return None
    try:
        r, w = os.pipe()
    except OSError:
        return None
    try:
        pid = os.fork()
    except OSError:
        os.close(r)
        os.close(w)
        return None
    if pid:
        os.close(w)
        return Beside(pid, r, len(jobs))
    _child(r, w, compute, jobs)  # never returns


def _child(r: int, w: int, compute: Callable, jobs: Sequence[tuple]) -> None:
    try:
        os.close(r)
        out = tempfile.TemporaryFile()
        os.dup2(out.fileno(), 1)
        os.dup2(out.fileno(), 2)
        sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
        results = []
        for job in jobs:
            try:
                results.append(compute(*job))
            except BaseException:
                results.append(None)
        written = sys.stdout.getvalue() or sys.stderr.getvalue() or \
            os.lseek(1, 0, os.SEEK_END) or os.lseek(2, 0, os.SEEK_END)
        data = pickle.dumps(None if written else results)
        view = memoryview(data)
        while view:
            view = view[os.write(w, view):]
    except BaseException:
        pass
    finally:
        os._exit(0)
