"""Ctrl-C and SIGTERM as one exception, with a second signal that exits at once.

    from heuriscale.interrupt import Interrupted, interruptible

    with interruptible():
        try:
            long_work()                    # commits what it finishes as it goes
        except Interrupted as exc:         # the first SIGINT or SIGTERM
            print(f"interrupted: ... stored; rerun to resume", file=sys.stderr)
            sys.exit(exc.exit_code)        # 130 for SIGINT, 143 for SIGTERM

Inside the block the first SIGINT or SIGTERM raises `Interrupted` in the main thread (at
the next Python bytecode, so a long native call such as one big tensor operation finishes
first); a second one, while the first is still being handled, ends the process at once
with `os._exit(128 + signum)`, running no cleanup (what is committed stays committed, as
after SIGKILL). `Interrupted` is a `KeyboardInterrupt`, so `except Exception` does not
swallow it. On leaving the block the previous handlers come back.

With `poll=True` the first signal only sets the flag that the block receives
(`with interruptible(poll=True) as flag: ... if flag: stop cleanly`), for loops that prefer
to stop at a point of their choosing; `flag.exception()` is the matching `Interrupted`.

Only the main thread can install signal handlers: anywhere else `interruptible()` does
nothing (`flag.active` is False) and signals keep their usual effect. A signal that is
ignored on entry (SIG_IGN, e.g. SIGINT of a background job of a non-interactive shell)
stays ignored.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

__all__ = ["Interrupted", "Interruption", "interruptible", "deferred", "exit_code"]

#: How many `deferred()` blocks are open: while any is, the first signal is recorded, not raised.
_deferring = [0]
#: The `interruptible()` blocks open on the main thread, innermost last: (flag, poll).
_open: list = []


def exit_code(signum: int) -> int:
    """The shell's exit status of a process ended by this signal: 128 + its number."""
    return 128 + int(signum)


class Interrupted(KeyboardInterrupt):
    """The first SIGINT or SIGTERM inside `interruptible()`; `.signum`, `.exit_code`, `.signal_name`."""

    def __init__(self, signum: int, result=None, checkpoint=None) -> None:
        super().__init__(int(signum))
        self.signum = int(signum)
        self.result = result  # what the interrupted work finished (e.g. a run's Result so far)
        self.checkpoint = checkpoint  # where it can be continued from, if anywhere

    @property
    def exit_code(self) -> int:
        return exit_code(self.signum)

    @property
    def signal_name(self) -> str:
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"

    def __str__(self) -> str:
        return f"interrupted by {self.signal_name}"


@dataclass
class Interruption:
    """What `interruptible()` yields: `signum` of the first signal received (None until then);
    true once one arrived. `active`: whether the handlers are installed (False off the main thread)."""

    signum: int | None = None
    active: bool = False

    def __bool__(self) -> bool:
        return self.signum is not None

    def exception(self) -> Interrupted:
        if self.signum is None:
            raise RuntimeError("no signal was received")
        return Interrupted(self.signum)


@contextmanager
def interruptible(signals: tuple[int, ...] = (signal.SIGINT, signal.SIGTERM), *,
                  poll: bool = False) -> Iterator[Interruption]:
    """Handle `signals` in this block: the first raises `Interrupted` (or, with `poll=True`,
    only sets the yielded flag), a second exits the process at once with 128 + its number."""
    flag = Interruption()
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def handler(signum, frame):
        if flag.signum is not None:  # the second signal: no cleanup, no waiting
            try:
                os.write(2, f"\n{signal.Signals(signum).name} again: exiting at once\n".encode())
            finally:
                os._exit(exit_code(signum))
        flag.signum = signum
        if not poll and not _deferring[0]:
            raise Interrupted(signum)

    previous = {}
    _open.append((flag, poll))
    try:
        for sig in signals:
            before = signal.getsignal(sig)
            if before is signal.SIG_IGN:
                continue
            previous[sig] = before
            signal.signal(sig, handler)
        flag.active = True
        yield flag
    finally:
        _open.pop()  # (blocks nest on the main thread: this one is the innermost)
        for sig, before in previous.items():
            # None: a handler installed outside Python, which cannot be put back; the default then
            signal.signal(sig, signal.SIG_DFL if before is None else before)


@contextmanager
def deferred() -> Iterator[None]:
    """Inside `interruptible()` (raising mode), the first signal waits for this block to end,
    then raises `Interrupted` as it would have; a second still exits at once. For work that
    must not stop half way: a kernel build interrupted inside Numba or LLVM leaves objects
    that complain when the process exits. Elsewhere (no interruptible block, another thread)
    it changes nothing."""
    outer, poll = _open[-1] if _open and threading.current_thread() is threading.main_thread() else (None, True)
    if poll or outer.signum is not None:
        yield
        return
    _deferring[0] += 1
    try:
        yield
    finally:
        _deferring[0] -= 1
    if outer.signum is not None and not _deferring[0]:
        raise Interrupted(outer.signum)
