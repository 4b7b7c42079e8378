"""What the commands share: the consoles, the one-line error in the command line's words,
checks of options made before any work, the library's notices, and the frame around a
study's runs (progress, Ctrl-C, one-line failures)."""

from __future__ import annotations

import ast
import contextlib
import logging
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from ..interrupt import Interrupted

out = Console()
err = Console(stderr=True)

DIST_TIMEOUT_HELP = "under torchrun: seconds to wait for a silent rank before failing (default 60)"


class _Notices(logging.Handler):
    """The library's notices (logger `heuriscale`, e.g. "building the native CPU kernels of
    fep ...") as lines on stderr, printed through the console so that live bars stay whole."""

    def emit(self, record: logging.LogRecord) -> None:
        if lead_rank():
            err.print(escape(self.format(record)), style="dim", highlight=False, soft_wrap=True)


def show_library_notices() -> None:
    log = logging.getLogger("heuriscale")
    if not any(isinstance(h, _Notices) for h in log.handlers):
        log.addHandler(_Notices())
        log.setLevel(logging.INFO)
        log.propagate = False


def fail(message: str) -> None:
    err.print(f"[bold red]error:[/] {escape(cli_words(message))}", highlight=False, soft_wrap=True)  # not markup
    raise typer.Exit(2)


#: The library's spelling of an argument -> the command line's (errors name what a shell user types).
_OPTIONS = {"engine": "--engine", "device": "--device", "dtype": "--dtype", "runs": "--runs", "seed": "--seed",
            "iters": "--iters", "evals": "--evals", "time_limit": "--time-limit", "target": "--target",
            "checkpoint": "--checkpoint", "resume": "--resume", "checkpoint_every": "--checkpoint-every",
            "islands": "--islands", "migrate_every": "--migrate-every", "migrants": "--migrants"}


def cli_words(message: str) -> str:
    """A library message in the command line's words: `engine='eager'` -> `--engine eager`,
    `device='cpu'` -> `--device cpu`, `iters=...` -> `--iters ...`, `pop_size` -> `--pop`."""
    import re

    names = "|".join(sorted(_OPTIONS, key=len, reverse=True))

    def option(match: re.Match) -> str:
        return f"{_OPTIONS[match.group(1)]} {match.group(2).strip(chr(39))}"

    message = re.sub(rf"\b({names})=('[^']*'|\.\.\.|[\w.+-]+)", option, message)
    message = re.sub(r"\bpop_size=(\d+)", r"--pop \1", message)
    return re.sub(r"\bpop_size\b(?! ?[=(])", "--pop", message)


def writable(path: Path | None, option: str, folder: bool = False) -> None:
    """Refuse, before any work, an output path that cannot be written (a folder where a file
    goes, a file where a folder goes, no permission, a read-only file system): one line."""
    if path is None:
        return
    import os
    import tempfile

    if not folder and path.is_dir():
        example = path / ("result.json" if option == "--json" else "run.ckpt")
        fail(f"{option} {path} is a folder: give a file path, e.g. {example}")
    if folder and path.exists() and not path.is_dir():
        fail(f"{option} {path} is a file: give a folder (it is created if missing)")
    where = path if folder else path.parent
    try:
        where.mkdir(parents=True, exist_ok=True)
        if not folder and path.exists() and not os.access(path, os.W_OK):
            raise PermissionError(f"no permission to write {path}")
        with tempfile.NamedTemporaryFile(dir=where, prefix=".heuriscale-write-check-"):
            pass
    except OSError as exc:
        fail(f"{option} {path} cannot be written ({exc.strerror or exc}): choose a path you can write to")


THREADS_HELP = ("CPU threads of the native kernels and torch (default: chosen from the work, at most every core but one and 32; "
                "under torchrun at most each rank's share, cores // ranks per machine; also $HEURISCALE_CPU_THREADS)")

CELLS_HELP = ("with --device cpu: cells (configurations, all their runs) computed at once in worker processes, "
              "auto or a number; auto, with 4 cores or more and enough work: as many as the cores hold cells of "
              "the threads one cell would use alone (one per core where that is one), else 1 (one after another); "
              "the store and the results are the same either way")

#: Modules a command needs beyond torch, and why (all in the base install; checked in case an
#: install skipped them, e.g. pip install --no-deps).
_NEEDS = {"matplotlib": ("matplotlib", "the reports' figures"), "skimage": ("scikit-image", "Otsu thresholding"),
          "opfunu": ("opfunu", "the official CEC data files")}


def require(*modules: str) -> None:
    """One line before any work when a module the command needs is not installed."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        what = "; ".join(f"{_NEEDS[m][0]} ({_NEEDS[m][1]})" for m in missing)
        packages = " ".join(_NEEDS[m][0] for m in missing)
        fail(f"this command needs {what}, which is not installed: pip install {packages}")


def parse_assignments(items: list[str] | None, option: str) -> dict:
    """`key=value` strings -> dict; values are Python literals where they parse (1e-3, 2,3, None)."""
    params = {}
    for item in items or []:
        key, sep, text = item.partition("=")
        if not sep or not key:
            fail(f"{option} expects key=value, got {item!r}")
        try:
            params[key.strip()] = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            params[key.strip()] = text.strip()
    return params


@contextlib.contextmanager
def study_command(stored):
    """What `reproduce` and `compare` do around a study: a second Ctrl-C / SIGTERM exits at
    once; the first abandons the run in flight (finished runs are committed) and says, in one
    line, how much is stored (`stored()` -> (stored, total, path, what)), then exits 130 / 143;
    a store or distributed failure is a one-line error."""
    from ..engine.distributed import DistributedError
    from ..interrupt import interruptible
    from ..studies.store import StoreError

    with interruptible():
        try:
            yield
        except Interrupted as exc:
            if not lead_rank():
                raise typer.Exit(exc.exit_code) from None
            n, total, path, what = stored()
            typer.echo(f"interrupted: {n} of {total} runs of {what} are stored in {path}; "
                       f"rerun the same command to resume", err=True)
            raise typer.Exit(exc.exit_code) from None
        except (StoreError, DistributedError) as exc:
            fail(str(exc))


@contextlib.contextmanager
def study_progress(label: str, total: int, done: int):
    """The callback a study reports stored runs to: a live bar in a terminal, else (a log file,
    CI, a SLURM job) progress lines, at most one every few seconds, with an ETA; nothing on
    the ranks of a torchrun job other than 0."""
    from rich.progress import Progress

    from ..terminal import ProgressLines

    if not lead_rank():
        yield lambda config, n: None
    elif not err.is_terminal:
        yield ProgressLines(err, label, total, done)
    else:
        with Progress(console=err, transient=True) as bar:
            task = bar.add_task(label, total=total, completed=done)
            yield lambda config, n: bar.update(task, advance=n)


def use_cpu_threads(n: int | None) -> None:
    if n is not None:
        from ..engine import set_cpu_threads

        set_cpu_threads(n)


def lead_rank() -> bool:
    """False on the ranks of a torchrun job other than 0 (they leave messages to rank 0)."""
    import os

    return os.environ.get("RANK", "0") == "0"
