"""A report (report.md) printed in a terminal: prose as Markdown, each table whole where it
fits the terminal's width, else a compact table of the columns that matter (the row's labels,
then speedups, then the others from the left while they fit) and a line naming the columns
left out, to be read in report.md / report.html. Also a study's progress in a log
(`ProgressLines`) and labels shortened to fit a line (`shorten`)."""

from __future__ import annotations

from rich import box
from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

from .names import shorten  # noqa: F401  (labels shortened to fit a line: one rule for the library)


def print_report(console: Console, text: str, full: str = "report.md / report.html") -> None:
    """Print the Markdown `text` on `console`, tables narrowed to its width (`full` names where
    the whole tables are)."""
    prose: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].startswith("|"):
            prose.append(lines[i])
            i += 1
            continue
        start = i
        while i < len(lines) and lines[i].startswith("|"):
            i += 1
        header, rows = _cells(lines[start]), [_cells(line) for line in lines[start + 2:i]]
        _flush(console, prose)
        whole = _table(header, rows, range(len(header)), console)
        if whole is not None:
            console.print(whole)
        else:
            _print_compact(console, header, rows, full)
    _flush(console, prose)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _flush(console: Console, prose: list[str]) -> None:
    if any(line.strip() for line in prose):
        console.print(Markdown("\n".join(prose)))
    prose.clear()


_GAP = 3  # between two columns of a SIMPLE_HEAD table without edges: padding, divider, padding


def _table(header, rows, columns, console: Console) -> Table | None:
    """A table of `columns` whose cells are never cut (headers may wrap between words), or None
    when it is wider than the console."""
    widths = [max([len(row[c]) for row in rows if c < len(row)] + [max(map(len, header[c].split()), default=0)])
              for c in columns]
    if sum(widths) + _GAP * (len(widths) - 1) > console.width:
        return None
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for c, width in zip(columns, widths):
        table.add_column(header[c], justify="left" if c == 0 else "right", min_width=width, max_width=width)
    for row in rows:
        table.add_row(*(row[c] if c < len(row) else "" for c in columns))
    return table


def _print_compact(console: Console, header, rows, full: str) -> None:
    labels = []  # the columns before the first of ours / the paper's: what names a row
    for c, name in enumerate(header):
        if name.lower().startswith(("ours", "paper")):
            break
        labels.append(c)
    rest = [c for c in range(len(header)) if c not in labels]
    rest.sort(key=lambda c: "speedup" not in header[c].lower())  # speedups first, then from the left
    kept = labels[:]
    for c in rest:
        if _table(header, rows, sorted(kept + [c]), console) is not None:
            kept.append(c)
    table = _table(header, rows, sorted(kept), console) or _table(header, rows, labels[:1], console)
    if table is not None:
        console.print(table)
    left_out = [header[c] for c in range(len(header)) if c not in kept]
    if left_out:
        console.print(f"[dim]{len(left_out)} more column{'s' if len(left_out) > 1 else ''} at this width "
                      f"({', '.join(left_out)}): see {full}[/]", highlight=False)


class ProgressLines:
    """Progress of a study for a log (a file, CI, a SLURM job), where a live bar prints nothing:
    a line when runs are stored, at most one per `every` seconds (environment
    HEURISCALE_LOG_EVERY, default 10), and always the last, with runs done, runs left, an
    estimate of the time left from the rate of this invocation, and the configuration whose
    runs were stored last."""

    def __init__(self, console: Console, what: str, total: int, done: int = 0, every: float | None = None) -> None:
        import os
        import time

        self.console, self.what, self.total, self.done = console, what, total, done
        self.every = _seconds(os.environ.get("HEURISCALE_LOG_EVERY", "10"), console) if every is None else every
        self.started = self.last = time.monotonic()
        self.first = done
        console.print(f"{what}: {done} of {total} runs stored, {total - done} to run", highlight=False, soft_wrap=True)

    def __call__(self, config, n: int) -> None:
        import time

        self.done += n
        now = time.monotonic()
        if self.done < self.total and now - self.last < self.every:
            return
        self.last = now
        left, ran = self.total - self.done, self.done - self.first
        eta = "" if left == 0 or ran == 0 else f", about {_duration((now - self.started) / ran * left)} left"
        dim = "" if config.dim is None else f" D={config.dim}"
        self.console.print(f"{self.what}: {self.done} of {self.total} runs done ({100 * self.done / self.total:.0f}%), "
                           f"{left} to run{eta}; last stored: {config.algorithm} on {config.problem}{dim}",
                           highlight=False, soft_wrap=True)


def _seconds(text: str, console: Console) -> float:
    try:
        value = float(text)
        if value >= 0:
            return value
    except ValueError:
        pass
    console.print(f"HEURISCALE_LOG_EVERY={text!r} is not a number of seconds >= 0: using 10", highlight=False)
    return 10.0


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
