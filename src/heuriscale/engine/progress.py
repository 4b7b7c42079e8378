"""The progress bars of `minimize(..., progress=True)` / `heuriscale run` and of
`AskTell(..., progress=True)` (rich)."""

from __future__ import annotations

import contextlib
import logging
import math
import threading
import time

log = logging.getLogger("heuriscale")

#: The kernels this process has announced building (each once).
_announced: set[tuple[str, str]] = set()

#: Measured cold builds (empty caches) of one algorithm's kernels: native CPU kernels 2.3 s
#: (pso) to 6.8 s (fep at paper 004's size; L-SHADE and jSO 6.7 s) on the 2-core EPYC
#: (docs/benchmarks.md, first runs), fused
#: CUDA kernels 1.7 s (pso) to 5.3 s (fep, its kernels compiled together; 6.9 s one after
#: another) on an H100 (2026-11-26; docs/benchmarks.md, first runs).
_BUILD_ESTIMATE = {"native": "2-7 s on 2 cores", "fused": "2-8 s on an H100"}


class ProgressBar:
    """Iterations done of the step budget (or seconds of the time limit), the best value so far,
    and what the engine is doing when it blocks (building kernels)."""

    def __init__(self, runner, max_steps: float, time_limit: float | None) -> None:
        self.by_time = math.isinf(max_steps)
        self.total = time_limit if self.by_time else max_steps
        self.progress, self.task = _started(f"{runner.algorithm.name} on {runner.problem.name}", self.total)
        self.last = 0.0

    def update(self, runner) -> None:
        now = time.perf_counter()
        if now - self.last < 0.1:  # redraw at most 10 times a second
            return
        self.last = now
        done = runner.elapsed() if self.by_time else runner.iteration
        self.progress.update(self.task, completed=min(done, self.total),
                             status=f"it {runner.iteration}  {runner.standing(4)}")

    def status(self, text: str) -> None:
        """Show `text` now (the bar redraws itself while the caller blocks, e.g. compiling)."""
        self.progress.update(self.task, status=text)
        self.progress.refresh()

    def close(self) -> None:
        self.progress.stop()


class EvaluationsBar:
    """An ask/tell loop's evaluations told (of its budget), evaluations per second, best value."""

    def __init__(self, opt) -> None:
        self.opt, self.started = opt, time.perf_counter()
        total = None
        if not math.isinf(opt.max_steps):
            total = opt.algorithm.evals_after(int(opt.max_steps))
        self.progress, self.task = _started(f"{opt.algorithm.name} (ask/tell)", total)

    def update(self) -> None:
        opt = self.opt
        rate = opt.evals * opt.runs / max(time.perf_counter() - self.started, 1e-9)
        self.progress.update(self.task, completed=opt.evals,
                             status=f"{opt.evals:,} evaluations, {rate:,.1f}/s  {opt._runner.standing(6)}")

    def close(self) -> None:
        self.progress.stop()


def _started(label: str, total: float | None):
    """A started rich progress display with one task: its label, a bar, a status text, times."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[status]}"),
                        TimeElapsedColumn(), TimeRemainingColumn(), transient=False)
    task = progress.add_task(label, total=total, status="")
    progress.start()
    return progress, task


@contextlib.contextmanager
def announcing_build(engine: str, algorithm: str, after: float = 2.0):
    """Around a call that builds `engine`'s kernels of `algorithm`: if it takes longer than
    `after` seconds (a cold build, not a load from the disk cache), say once per process and
    kernel set what is happening, on the `heuriscale` logger (the command line prints it;
    Python shows it where logging is set up for INFO)."""
    key = (engine, algorithm)
    if key in _announced:
        yield
        return
    kind = {"native": "native CPU", "fused": "fused CUDA"}.get(engine, engine)
    estimate = _BUILD_ESTIMATE.get(engine)

    def announce() -> None:
        _announced.add(key)
        log.info("building the %s kernels of %s: the first run on this machine compiles them%s, "
                 "then they are cached on disk for later runs", kind, algorithm,
                 f" (typically {estimate})" if estimate else "")

    timer = threading.Timer(after, announce)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
