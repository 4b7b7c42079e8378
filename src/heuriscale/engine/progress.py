"""The progress bar of `minimize(..., progress=True)` and `heuriscale run` (rich)."""

from __future__ import annotations

import math
import time


class ProgressBar:
    """Iterations done of the step budget (or seconds of the time limit), the best value so far,
    and what the engine is doing when it blocks (building kernels)."""

    def __init__(self, runner, max_steps: float, time_limit: float | None) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self.by_time = math.isinf(max_steps)
        self.total = time_limit if self.by_time else max_steps
        self.progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.fields[status]}"),
            TimeElapsedColumn(), TimeRemainingColumn(), transient=False,
        )
        label = f"{runner.algorithm.name} on {runner.problem.name}"
        self.task = self.progress.add_task(label, total=self.total, status="")
        self.last = 0.0
        self.progress.start()

    def update(self, runner) -> None:
        now = time.perf_counter()
        if now - self.last < 0.1:  # redraw at most 10 times a second
            return
        self.last = now
        done = runner.elapsed() if self.by_time else runner.iteration
        best = float(runner.best_f.min())
        self.progress.update(self.task, completed=min(done, self.total), status=f"it {runner.iteration}  best {best:.4g}")

    def status(self, text: str) -> None:
        """Show `text` now (the bar redraws itself while the caller blocks, e.g. compiling)."""
        self.progress.update(self.task, status=text)
        self.progress.refresh()

    def close(self) -> None:
        self.progress.stop()
