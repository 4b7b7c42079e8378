"""The `heuriscale` command: parses options, calls the library, prints rich tables."""

from __future__ import annotations

import ast
import contextlib
import logging
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from . import catalog, triton_ahead
from .interrupt import Interrupted

# torch and the library are imported inside the commands that run something: help, `list`,
# `--version` and argument errors answer without waiting for torch (about a second).

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Population-based metaheuristics on CPUs and NVIDIA GPUs (PSO, PRS, Firefly+BFGS, APO, FEP).",
)
out = Console()
err = Console(stderr=True)


def _print_version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        from .version import __version__

        try:
            torch_version = version("torch")  # without importing it
        except PackageNotFoundError:
            torch_version = "not installed"
        typer.echo(f"heuriscale {__version__} (torch {torch_version})")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                          help="print the version and exit")] = False,
) -> None:
    _show_library_notices()


class _Notices(logging.Handler):
    """The library's notices (logger `heuriscale`, e.g. "building the native CPU kernels of
    fep ...") as lines on stderr, printed through the console so that live bars stay whole."""

    def emit(self, record: logging.LogRecord) -> None:
        if _lead_rank():
            err.print(escape(self.format(record)), style="dim", highlight=False, soft_wrap=True)


def _show_library_notices() -> None:
    log = logging.getLogger("heuriscale")
    if not any(isinstance(h, _Notices) for h in log.handlers):
        log.addHandler(_Notices())
        log.setLevel(logging.INFO)
        log.propagate = False


def _fail(message: str) -> None:
    err.print(f"[bold red]error:[/] {escape(_cli_words(message))}", highlight=False, soft_wrap=True)  # not markup
    raise typer.Exit(2)


#: The library's spelling of an argument -> the command line's (errors name what a shell user types).
_OPTIONS = {"engine": "--engine", "device": "--device", "dtype": "--dtype", "runs": "--runs", "seed": "--seed",
            "iters": "--iters", "evals": "--evals", "time_limit": "--time-limit", "target": "--target",
            "checkpoint": "--checkpoint", "resume": "--resume", "checkpoint_every": "--checkpoint-every",
            "islands": "--islands", "migrate_every": "--migrate-every", "migrants": "--migrants"}


def _cli_words(message: str) -> str:
    """A library message in the command line's words: `engine='eager'` -> `--engine eager`,
    `device='cpu'` -> `--device cpu`, `iters=...` -> `--iters ...`, `pop_size` -> `--pop`."""
    import re

    names = "|".join(sorted(_OPTIONS, key=len, reverse=True))

    def option(match: re.Match) -> str:
        return f"{_OPTIONS[match.group(1)]} {match.group(2).strip(chr(39))}"

    message = re.sub(rf"\b({names})=('[^']*'|\.\.\.|[\w.+-]+)", option, message)
    message = re.sub(r"\bpop_size=(\d+)", r"--pop \1", message)
    return re.sub(r"\bpop_size\b(?! ?[=(])", "--pop", message)


def _writable(path: Path | None, option: str, folder: bool = False) -> None:
    """Refuse, before any work, an output path that cannot be written (a folder where a file
    goes, a file where a folder goes, no permission, a read-only file system): one line."""
    if path is None:
        return
    import os
    import tempfile

    if not folder and path.is_dir():
        _fail(f"{option} {path} is a folder: give a file path, e.g. {path / ('result.json' if option == '--json' else 'run.ckpt')}")
    if folder and path.exists() and not path.is_dir():
        _fail(f"{option} {path} is a file: give a folder (it is created if missing)")
    where = path if folder else path.parent
    try:
        where.mkdir(parents=True, exist_ok=True)
        if not folder and path.exists() and not os.access(path, os.W_OK):
            raise PermissionError(f"no permission to write {path}")
        with tempfile.NamedTemporaryFile(dir=where, prefix=".heuriscale-write-check-"):
            pass
    except OSError as exc:
        _fail(f"{option} {path} cannot be written ({exc.strerror or exc}): choose a path you can write to")


_THREADS_HELP = ("CPU threads of the native kernels and torch (default: all cores; under torchrun each rank's share, "
                 "cores // ranks per machine; also $HEURISCALE_CPU_THREADS)")

#: Modules a command needs beyond torch, and why (all in the base install; checked in case an
#: install skipped them, e.g. pip install --no-deps).
_NEEDS = {"matplotlib": ("matplotlib", "the reports' figures"), "skimage": ("scikit-image", "Otsu thresholding"),
          "opfunu": ("opfunu", "the official CEC data files")}


def _require(*modules: str) -> None:
    """One line before any work when a module the command needs is not installed."""
    import importlib.util

    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        what = "; ".join(f"{_NEEDS[m][0]} ({_NEEDS[m][1]})" for m in missing)
        _fail(f"this command needs {what}, which is not installed: pip install {' '.join(_NEEDS[m][0] for m in missing)}")


def _warn_if_interrupts_are_ignored(checkpoint: Path | None) -> None:
    """Shells start background jobs (`cmd &`) with SIGINT ignored: Ctrl-C cannot reach them."""
    import os
    import signal

    if checkpoint is not None and signal.getsignal(signal.SIGINT) is signal.SIG_IGN and _lead_rank():
        err.print(escape(f"note: SIGINT is ignored in this process (a background job?): Ctrl-C cannot stop it; "
                         f"`kill -TERM {os.getpid()}` ends the current chunk, saves {checkpoint} and exits"),
                  highlight=False, soft_wrap=True)


def _parse_assignments(items: list[str] | None, option: str) -> dict:
    """`key=value` strings -> dict; values are Python literals where they parse (1e-3, 2,3, None)."""
    params = {}
    for item in items or []:
        key, sep, text = item.partition("=")
        if not sep or not key:
            _fail(f"{option} expects key=value, got {item!r}")
        try:
            params[key.strip()] = ast.literal_eval(text.strip())
        except (ValueError, SyntaxError):
            params[key.strip()] = text.strip()
    return params


@app.command()
def run(
    algorithm: Annotated[str, typer.Argument(help="algorithm name (see `heuriscale list`)")],
    problem: Annotated[str, typer.Option("--problem", help="problem name (see `heuriscale list`)")] = "sphere",
    dim: Annotated[Optional[int], typer.Option(help="dimension (problems of fixed size have a default)")] = None,
    pop: Annotated[Optional[int], typer.Option(help="population size (the algorithm's default if omitted)")] = None,
    iters: Annotated[Optional[int], typer.Option(help="iterations")] = None,
    evals: Annotated[Optional[int], typer.Option(help="evaluations per run")] = None,
    time_limit: Annotated[Optional[float], typer.Option(help="seconds")] = None,
    target: Annotated[Optional[float], typer.Option(help="stop when every run reaches this value")] = None,
    runs: Annotated[int, typer.Option(help="independent runs, advanced together")] = 1,
    device: Annotated[str, typer.Option(help="auto, cpu, cuda or cuda:N")] = "auto",
    dtype: Annotated[str, typer.Option(help="float32 or float64")] = "float32",
    engine: Annotated[
        str, typer.Option(help="auto, eager, native (Numba CPU kernels), graph (CUDA-graph replay), compiled (torch.compile + graph) or fused (Triton kernels + graph); `heuriscale list` says which algorithm has which kernels")
    ] = "auto",
    seed: Annotated[Optional[int], typer.Option(help="random seed (random if omitted; recorded in the result)")] = None,
    preset: Annotated[Optional[str], typer.Option(help="named parameter set of the algorithm, e.g. paper001")] = None,
    param: Annotated[Optional[list[str]], typer.Option("--param", "-p", help="algorithm parameter key=value")] = None,
    problem_param: Annotated[
        Optional[list[str]], typer.Option("--problem-param", "-P", help="problem parameter key=value, e.g. bounds=-5,10")
    ] = None,
    image: Annotated[Optional[str], typer.Option(help="otsu: a skimage.data image name or an image file")] = None,
    levels: Annotated[Optional[int], typer.Option(help="otsu: number of thresholds")] = None,
    output_image: Annotated[
        Optional[Path], typer.Option(help="otsu: write the image thresholded by the best solution (missing folders are created)")
    ] = None,
    refine: Annotated[
        Optional[str], typer.Option(help="refine each run's best point afterwards: bfgs or lbfgs")
    ] = None,
    refine_iters: Annotated[int, typer.Option(help="iterations of the refiner")] = 200,
    json_path: Annotated[Optional[Path], typer.Option("--json", help="write the full result as JSON")] = None,
    checkpoint: Annotated[
        Optional[Path], typer.Option(help="save the runs here between chunks (atomically), to continue with --resume")
    ] = None,
    checkpoint_every: Annotated[float, typer.Option(help="seconds between checkpoints")] = 60.0,
    resume: Annotated[
        Optional[Path], typer.Option(help="continue the runs saved in this checkpoint (same options; seed and engine from it)")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")] = False,
    islands: Annotated[bool, typer.Option(
        help="under torchrun: split each run's population over the ranks as islands (--no-islands: each rank alone)")] = True,
    migrate_every: Annotated[Optional[int], typer.Option(help="islands: iterations between migrations (default one chunk)")] = None,
    migrants: Annotated[int, typer.Option(help="islands: individuals each island sends per run and migration")] = 1,
    dist_timeout: Annotated[Optional[float], typer.Option(
        help="under torchrun: seconds to wait for a silent rank before failing (default 60)")] = None,
    cpu_threads: Annotated[Optional[int], typer.Option(
        help=_THREADS_HELP + "; 1 = the papers' single-threaded CPU versions")] = None,
) -> None:
    """Optimise a problem with an algorithm and print statistics over the runs.

    Ctrl-C or SIGTERM ends the current chunk, writes --json and --checkpoint and exits
    with 130 / 143; a second Ctrl-C exits at once. Under torchrun
    (`torchrun --nproc-per-node=N -m heuriscale run ...`) each run's population is split over
    the ranks as islands exchanging migrants; rank 0 prints and writes the result.
    """
    algo_params = _parse_assignments(param, "--param")
    if pop is not None:
        algo_params["pop_size"] = pop
    if iters is None and evals is None and time_limit is None:
        iters = 1000
    prob_params = _parse_assignments(problem_param, "--problem-param")
    prob_params.update({k: v for k, v in (("image", image), ("levels", levels)) if v is not None})
    lead = _lead_rank()
    for path, option in ((json_path, "--json"), (checkpoint, "--checkpoint"), (output_image, "--output-image")):
        _writable(path, option)  # before any work: a run's result is never lost to an unwritable path
    try:
        catalog.check_algorithm(algorithm)  # a typo answers before torch is imported
        catalog.check_problem(problem)
    except ValueError as exc:
        _fail(str(exc))
    _warn_if_interrupts_are_ignored(checkpoint or resume)
    if device != "cpu":
        triton_ahead.start(engine)  # Triton's one-time work overlaps torch's import (issue 30)
    from . import algorithms, local, problems
    from .engine import minimize
    from .engine.distributed import DistributedError

    try:
        _use_cpu_threads(cpu_threads)
        if dist_timeout is not None:
            import os

            from .engine.distributed import TIMEOUT_ENV, timeout_seconds  # noqa: I001

            os.environ[TIMEOUT_ENV] = str(timeout_seconds(dist_timeout))
        prob = problems.get_problem(problem, dim=dim, **prob_params)
        if output_image is not None and not hasattr(prob, "save_thresholded"):
            raise ValueError(f"--output-image is for the otsu problem, not {prob.name!r}")
        algo = algorithms.get_algorithm(algorithm, preset=preset, **algo_params)
        if refine is not None:
            algo = local.Hybrid(algorithm=algo, refine=local.get_refiner(refine, max_iter=refine_iters))
        if resume is not None and checkpoint is None:
            checkpoint = resume  # a resumed run goes on saving where it came from
        result = minimize(
            prob, algo, iters=iters, evals=evals, time_limit=time_limit, target=target,
            runs=runs, device=device, dtype=dtype, seed=seed, progress=not quiet and lead, engine=engine,
            checkpoint=checkpoint, checkpoint_every=checkpoint_every, resume=resume,
            islands=None if islands else False, migrate_every=migrate_every, migrants=migrants,
        )
    except Interrupted as exc:
        _interrupted(exc, json_path if lead else None)
    except (ValueError, TypeError, DistributedError) as exc:  # bad input, too big a run set, a lost rank: one line
        _fail((str(exc).strip() or type(exc).__name__).splitlines()[0])
    if not lead and result.extra.get("islands"):  # every rank holds the same result: rank 0 reports it
        return
    _print_result(result)
    if output_image is not None:
        prob.save_thresholded(result.x, output_image)
        out.print(f"thresholded image written to {output_image}")
    if json_path is not None:
        result.save_json(json_path)
        out.print(f"result written to {json_path}")


def _interrupted(exc: Interrupted, json_path: Path | None) -> None:
    """One line on what an interrupted run kept, then exit 128 + the signal's number."""
    result, kept = exc.result, []  # minimize's Interrupted always carries the runs so far
    if json_path is not None:
        result.save_json(json_path)
        kept.append(str(json_path))
    if exc.checkpoint is not None:
        kept.append(f"{exc.checkpoint} (continue with --resume {exc.checkpoint})")
    where = f"written to {' and '.join(kept)}" if kept else "nothing written (use --json / --checkpoint to keep it)"
    total = result.extra["max_steps"]
    of = "" if total is None else f" of {total:,}"
    err.print(escape(f"interrupted at iteration {result.iterations:,}{of}; best so far {result.best:.6g}; {where}"),
              highlight=False, soft_wrap=True)
    raise typer.Exit(exc.exit_code)


def _print_result(result) -> None:
    import torch

    s = result.summary()
    algo = result.algorithm
    name = f"{algo['algorithm']['name']} + {algo['refine']['name']}" if "refine" in algo else algo["name"]
    table = Table(title=f"{name} on {result.problem['name']} (D={result.problem['dim']})")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    table.add_row("runs", str(result.runs))
    for key in ("best", "median", "worst"):
        table.add_row(f"{key} f", f"{s[key]:.6g}")
    table.add_row("mean ± std f", f"{s['mean']:.6g} ± {s['std']:.3g}")
    if "global_best_f" in result.extra:
        before = torch.tensor(result.extra["global_best_f"])
        table.add_row("before refinement: median f", f"{float(before.quantile(0.5)):.6g}")
        table.add_row("runs improved by refinement", f"{int((result.best_f < before).sum())} of {result.runs}")
    if result.problem.get("optimum_f") is not None:
        table.add_row("known optimum", f"{result.problem['optimum_f']:.6g}")
    if "feasible" in result.extra:
        feasible = sum(result.extra["feasible"])
        table.add_row("feasible runs", f"{feasible} of {result.runs}")
        table.add_row("largest violation (best point)", f"{max(result.extra['max_violation']):.3g}")
    solution = {k: v for k, v in result.extra.get("solution", {}).items() if k != "x"}
    if solution:
        table.add_row("best solution", ", ".join(f"{k}={_short(v)}" for k, v in solution.items()))
    table.add_row("evaluations / run", f"{result.evals:,}")
    table.add_row("iterations", f"{result.iterations:,} (stopped by {result.stop_reason})")
    nan = int(result.nan_evals.sum())
    if nan:
        table.add_row("NaN evaluations", f"{nan:,} (treated as +inf)")
    if "islands" in result.extra:
        i = result.extra["islands"]
        table.add_row("islands", f"{i['world']} ranks, ~{i['island_pop']:,} each; {i['migrants']} migrant(s) per run "
                                 f"every {i['migrate_every']} it ({i['bytes_per_migration']:,} bytes gathered per rank)")
    table.add_row("wall time", f"{result.wall_time:.3f} s")
    threads = result.extra.get("cpu_threads")
    threads = f", {threads} thread{'s' if threads != 1 else ''}" if threads else ""
    table.add_row("device", f"{result.device} ({result.device_name}), {result.dtype}, {result.extra.get('engine')} engine{threads}")
    table.add_row("seed", str(result.seed))
    out.print(table)


@app.command()
def reproduce(
    paper: Annotated[str, typer.Argument(help="pso, prs, firefly, apo, fep or all")] = "all",
    scale: Annotated[str, typer.Option(help="quick (minutes, same shape) or paper (the papers' sizes)")] = "quick",
    device: Annotated[Optional[str], typer.Option(help="devices to run on, e.g. cpu,cuda (default: all present)")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="output folder")] = Path("reproductions"),
    dist_timeout: Annotated[Optional[float], typer.Option(
        help="under torchrun: seconds to wait for a silent rank before failing (default 60)")] = None,
    cpu_threads: Annotated[Optional[int], typer.Option(
        help=_THREADS_HELP + "; 1 = the papers' single-threaded CPU versions")] = None,
    restore: Annotated[Optional[Path], typer.Option(
        help="a results.csv this paper's reproduction wrote: put its runs back into the store first "
             "(those whose configuration is unchanged), so that only the others run")] = None,
    restore_only: Annotated[Optional[str], typer.Option(
        help="with --restore: only these experiments, e.g. table2,table2-cec")] = None,
) -> None:
    """Run papers' CPU-vs-GPU experiments and write reports with the papers' numbers beside ours.

    Rerunning resumes: finished runs are stored as they finish. `--restore results.csv`
    takes back the runs an earlier reproduction recorded (best f and times; runs that need
    their best x, history or snapshots are rerun) and the report says how many it took.
    Ctrl-C or SIGTERM stops at once (exit status 130 / 143) keeping every finished run. Under torchrun
    (`torchrun --nproc-per-node=N -m heuriscale reproduce ...`) the runs are shared out
    over the ranks, each on its own GPU, and rank 0 writes the store and the report.
    """
    from . import studies
    from .terminal import print_report
    from .studies.reproduce import stored_runs

    keys = list(studies.PAPERS) if paper == "all" else [paper]
    _require("matplotlib", *(["skimage"] if paper in ("apo", "all") else []))  # paper 003 thresholds images
    if _lead_rank():
        _writable(out_dir, "--out", folder=True)  # before any run: the reports must have somewhere to go
    try:
        for key in keys:
            if key not in studies.PAPERS:
                raise ValueError(f"unknown paper {key!r}: use {', '.join(studies.PAPERS)} or all")
        if scale not in studies.SCALES:
            raise ValueError(f"unknown scale {scale!r}: use {' or '.join(studies.SCALES)}")
        devices = studies.available_devices(device)
        _use_cpu_threads(cpu_threads)
        if restore_only is not None and restore is None:
            raise ValueError("--restore-only needs --restore results.csv")
        if restore is not None:
            if len(keys) != 1:
                raise ValueError("--restore takes one paper's results.csv: name the paper (pso, prs, ...), not all")
            if not restore.is_file():
                raise ValueError(f"--restore: no file {restore}; give the results.csv of an earlier reproduction")
            if _lead_rank():
                _restore(studies.PAPERS[keys[0]], scale, devices, out_dir, restore, restore_only)
    except ValueError as exc:
        _fail(str(exc))
    current = {"key": keys[0]}

    def stored():
        key = current["key"]
        return (*stored_runs(studies.PAPERS[key], scale, devices, out_dir), f"study '{key}'")

    with _study_command(stored):
        for key in keys:
            current["key"] = key
            spec = studies.PAPERS[key]
            done, total, _ = stored_runs(spec, scale, devices, out_dir)
            with _study_progress(f"{key}: {spec.title[:60]}", total, done) as advance:
                report = studies.reproduce_paper(spec, scale, devices, out_dir, timeout=dist_timeout, progress=advance)
            if report is None:  # a rank other than 0 of a torchrun job: rank 0 reports
                continue
            print_report(out, report.read_text(), full=f"{report} / {report.with_suffix('.html')}")
            out.print(f"[bold]{key}[/]: report written to {report} and {report.with_suffix('.html')}")


def _restore(paper, scale: str, devices: list[str], out_dir: Path, csv_path: Path, only: str | None) -> None:
    from .studies.reproduce import store_path
    from .studies.restore import restore_runs
    from .studies.store import ResultStore

    experiments = None if only is None else [e.strip() for e in only.split(",") if e.strip()]
    store_path(paper, out_dir).parent.mkdir(parents=True, exist_ok=True)
    with ResultStore(store_path(paper, out_dir)) as store:
        counts = restore_runs(paper, scale, devices, csv_path, store, experiments, label=str(csv_path))
    out.print(f"{paper.key}: {counts['restored']} runs restored from {csv_path}, {counts['stored']} were stored "
              f"already, {counts['changed']} changed since (rerun), {counts['unmatched']} not restorable (rerun)")


@contextlib.contextmanager
def _study_command(stored):
    """What `reproduce` and `compare` do around a study: a second Ctrl-C / SIGTERM exits at
    once; the first abandons the run in flight (finished runs are committed) and says, in one
    line, how much is stored (`stored()` -> (stored, total, path, what)), then exits 130 / 143;
    a store or distributed failure is a one-line error."""
    from .engine.distributed import DistributedError
    from .interrupt import interruptible
    from .studies.store import StoreError

    with interruptible():
        try:
            yield
        except Interrupted as exc:
            if not _lead_rank():
                raise typer.Exit(exc.exit_code) from None
            n, total, path, what = stored()
            typer.echo(f"interrupted: {n} of {total} runs of {what} are stored in {path}; "
                       f"rerun the same command to resume", err=True)
            raise typer.Exit(exc.exit_code) from None
        except (StoreError, DistributedError) as exc:
            _fail(str(exc))


@contextlib.contextmanager
def _study_progress(label: str, total: int, done: int):
    """The callback a study reports stored runs to: a live bar in a terminal, else (a log file,
    CI, a SLURM job) progress lines, at most one every few seconds, with an ETA; nothing on
    the ranks of a torchrun job other than 0."""
    from rich.progress import Progress

    from .terminal import ProgressLines

    if not _lead_rank():
        yield lambda config, n: None
    elif not err.is_terminal:
        yield ProgressLines(err, label, total, done)
    else:
        with Progress(console=err, transient=True) as bar:
            task = bar.add_task(label, total=total, completed=done)
            yield lambda config, n: bar.update(task, advance=n)


def _use_cpu_threads(n: int | None) -> None:
    if n is not None:
        from .engine import set_cpu_threads

        set_cpu_threads(n)


def _lead_rank() -> bool:
    """False on the ranks of a torchrun job other than 0 (they leave messages to rank 0)."""
    import os

    return os.environ.get("RANK", "0") == "0"


@app.command()
def compare(
    algorithms_: Annotated[str, typer.Option("--algorithms", "-a", help="comma-separated, e.g. pso,apo,fep,prs,firefly")],
    suite: Annotated[str, typer.Option(help="cec2022, cec2017, classic (Yao et al. 1999) or bbob (COCO)")] = "cec2022",
    dims: Annotated[Optional[str], typer.Option(help="comma-separated dimensions (default: the suite's)")] = None,
    runs: Annotated[Optional[int], typer.Option(help="runs per algorithm, function and dimension (default: the suite's, 30 for cec2022; bbob: instances 1..runs, 15)")] = None,
    evals: Annotated[Optional[int], typer.Option(help="evaluations per run for every function (default: the suite's budgets)")] = None,
    evals_per_dim: Annotated[Optional[int], typer.Option(help="evaluations per run as a multiple of the dimension, e.g. 1000 for 1000 x D (COCO's convention; default: the suite's budgets)")] = None,
    param: Annotated[Optional[list[str]], typer.Option("--param", "-p", help="algo.key=value, e.g. apo.pf_max=0.2 (repeatable)")] = None,
    preset: Annotated[Optional[list[str]], typer.Option(help="algo=name, e.g. apo=paper003 (repeatable)")] = None,
    pop: Annotated[Optional[list[str]], typer.Option(help="algo=population size, e.g. pso=40 (repeatable)")] = None,
    functions: Annotated[Optional[str], typer.Option(help="comma-separated subset of the suite, e.g. f1,f3 (default: all)")] = None,
    reference: Annotated[Optional[str], typer.Option(help="the algorithm the others are tested against (default: the first)")] = None,
    device: Annotated[str, typer.Option(help="auto, cpu, cuda or cuda:N")] = "auto",
    dtype: Annotated[Optional[str], typer.Option(help="float32 or float64 (default: float32 on CUDA, float64 on the CPU and for bbob)")] = None,
    seed: Annotated[int, typer.Option(help="the campaign's base seed")] = 0,
    alpha: Annotated[float, typer.Option(help="significance level of the tests")] = 0.05,
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="folder of the store and the report (default campaigns/<suite>)")] = None,
    export: Annotated[Optional[str], typer.Option(
        help="also write the runs for the field's platforms: coco (bbob suite; for python -m cocopp), ioh "
             "(IOHanalyzer, iohinspector), or coco,ioh; into OUT/coco/<algorithm>/, OUT/ioh/<algorithm>/")] = None,
    dist_timeout: Annotated[Optional[float], typer.Option(
        help="under torchrun: seconds to wait for a silent rank before failing (default 60)")] = None,
    cpu_threads: Annotated[Optional[int], typer.Option(
        help=_THREADS_HELP)] = None,
) -> None:
    """Benchmark several algorithms over a suite: errors f - f* at the suite's recording points,
    rank-sum tests against a reference, Friedman ranks, report.md/.html, tables.tex, runs.csv.

    Every algorithm runs at its library defaults (or --preset, -p, --pop) within the suite's
    budget (CEC 2022: 200,000 evaluations at D = 10, 1,000,000 at D = 20; bbob: 10,000 x D) or
    --evals / --evals-per-dim. On bbob the runs are COCO's instances (run r on instance r + 1). Runs are
    stored as they finish (--out/results.sqlite): rerunning resumes, and a finished campaign
    recomputes nothing and rewrites the same report. Ctrl-C or SIGTERM stops at once (exit
    status 130 / 143) keeping every finished run. Under torchrun
    (`torchrun --nproc-per-node=N -m heuriscale compare ...`) the runs are shared out over the
    ranks and rank 0 writes the store and the report.
    """
    import json
    import time

    from .studies.compare import check_exports, plan, run_campaign, stored_runs

    started = time.perf_counter()
    _require("matplotlib", *(["opfunu"] if suite.startswith("cec") else []))
    if _lead_rank():
        _writable(out_dir, "--out", folder=True)  # before any run: the report must have somewhere to go
    try:
        _use_cpu_threads(cpu_threads)
        params: dict = {}
        for item in param or []:
            key, sep, _ = item.partition("=")
            algo, dot, name = key.partition(".")
            if not sep or not dot or not algo.strip() or not name.strip():
                raise ValueError(f"-p/--param expects algorithm.key=value, e.g. apo.pf_max=0.2; got {item!r}")
            params.setdefault(algo.strip(), {}).update(_parse_assignments([f"{name}{item[len(key):]}"], "-p/--param"))
        presets = _per_algorithm(preset, "--preset", "algorithm=preset, e.g. apo=paper003", str)
        pops = _per_algorithm(pop, "--pop", "algorithm=population size, e.g. pso=40", int)
        campaign = plan(algorithms_, suite, dims, runs=runs, evals=evals, params=params, presets=presets, pops=pops,
                        reference=reference, device=device, dtype=dtype, seed=seed, out=out_dir, functions=functions,
                        alpha=alpha, evals_per_dim=evals_per_dim)
        exports = check_exports(campaign, export)
    except ValueError as exc:
        _fail(str(exc))
    if _lead_rank():  # before any run: a campaign whose tests cannot reach --alpha says so (issue 29)
        from .studies.compare import significance_warnings

        for text in significance_warnings(campaign):
            typer.echo(f"warning: {text}", err=True)

    def stored():
        return (*stored_runs(campaign), f"campaign '{campaign.suite.name}'")

    with _study_command(stored):
        label = (f"{campaign.suite.name}: {len(campaign.algorithms)} algorithms x {len(campaign.cells)} "
                 f"functions and dimensions x {campaign.runs} runs")
        with _study_progress(label, campaign.total_runs(), stored()[0]) as advance:
            written = run_campaign(campaign, timeout=dist_timeout, progress=advance, exports=exports)
    if written is None:  # a rank other than 0 of a torchrun job: rank 0 reports
        return
    meta = json.loads(written["json"].read_text())["meta"]
    out.print(f"[bold]{escape(campaign.suite.name)}[/]: " + escape(f"report written to {written['md']}, {written['html']}, "
              f"{written['tex']} and {written['csv']}; runs stored in {written['store']}"), highlight=False, soft_wrap=True)
    for name in exports:
        out.print(escape(f"{name} data written to {written[name]}/<algorithm>/"
                         + (f" (post-process: python -m cocopp {written[name]}/*/)" if name == "coco" else "")),
                  highlight=False, soft_wrap=True)
    out.print(f"campaign compute time (its stored runs): {meta['wall_s']:.1f} s; "
              f"this invocation: {time.perf_counter() - started:.1f} s wall clock", highlight=False, soft_wrap=True)


def _per_algorithm(items: list[str] | None, option: str, shape: str, kind) -> dict:
    """`algo=value` strings -> {algo: value}, one line naming the expected shape when malformed."""
    values = {}
    for item in items or []:
        algo, sep, text = item.partition("=")
        try:
            if not sep or not algo.strip() or not text.strip():
                raise ValueError
            values[algo.strip()] = kind(text.strip())
        except ValueError:
            raise ValueError(f"{option} expects {shape}; got {item!r}") from None
    return values


@app.command()
def warmup(
    algorithm_names: Annotated[Optional[list[str]], typer.Argument(metavar="[ALGO]...", help="algorithms (default: all)")] = None,
    problem: Annotated[Optional[str], typer.Option("--problem", help="build for this problem instead of the papers' configurations")] = None,
    dim: Annotated[Optional[int], typer.Option(help="with --problem: dimension")] = None,
    pop: Annotated[Optional[int], typer.Option(help="with --problem: population size")] = None,
    runs: Annotated[int, typer.Option(help="with --problem: runs advanced together")] = 1,
    dtype: Annotated[str, typer.Option(help="with --problem: float32 or float64")] = "float32",
    device: Annotated[Optional[str], typer.Option(
        help="the CUDA device to build for, or cpu (the native Numba kernels); default: cuda if present, else cpu")] = None,
) -> None:
    """Build the kernels ahead of time (e.g. in a cluster job's prologue); they are cached on disk.

    Without --problem: the fused kernels of every `heuriscale reproduce` configuration on CUDA
    (both scales), or with --device cpu their native CPU kernels. With --problem: the fast path
    `heuriscale run` would use for that configuration.
    """
    import torch
    from rich.progress import Progress

    from . import algorithms, problems
    from .engine import resolve_device, warm_up

    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    names = algorithm_names or algorithms.algorithm_names()
    try:
        for name in names:
            algorithms.algorithm_class(name)  # unknown names fail before any work
        if not device.startswith("cuda") and device != "cpu":
            raise ValueError(f"warmup builds CUDA or CPU kernels; --device {device!r} has none to build "
                             "(use cuda, cuda:N or cpu)")
        resolve_device(device)  # a clear error on a machine without that GPU
        if problem is not None:
            jobs = [(f"{name} on {problem}", problems.get_problem(problem, dim=dim),
                     algorithms.get_algorithm(name, **({} if pop is None else {"pop_size": pop})), runs, None, dtype)
                    for name in names]
        else:
            if (dim, pop) != (None, None):
                raise ValueError("--dim and --pop describe a configuration of --problem: give --problem too")
            jobs = _paper_warmups(names, "cpu" if device == "cpu" else "cuda")
    except ValueError as exc:
        _fail(str(exc))
    table = Table(title=f"kernels built on {device}")
    for col in ("configuration", "engine", "setup (s)"):
        table.add_column(col)
    with Progress(transient=True, console=err) as bar:
        task = bar.add_task("building kernels", total=len(jobs))
        for label, prob, algo, n_runs, engine, job_dtype in jobs:
            bar.update(task, description=f"building {label}")
            try:
                built = warm_up(prob, algo, runs=n_runs, device=device, dtype=job_dtype, engine=engine)
            except ValueError as exc:
                _fail(str(exc))
            table.add_row(label, built["engine"], f"{built['seconds']:.2f}")
            bar.advance(task)
    out.print(table)


def _paper_warmups(names: list[str], kind: str) -> list[tuple]:
    """The distinct configurations of the papers' CUDA studies that use fused kernels (graph
    replay of the uncompiled step, which the other ones use, builds nothing), or of their CPU
    studies that use native kernels."""
    from .engine.kernels import with_kernels
    from .studies import PAPERS, SCALES
    from .studies.reproduce import configs_for
    from .studies.study import build, engine_for

    jobs, seen = [], set()
    kernels = with_kernels(kind)  # what each algorithm declares (algorithms/<name>.py: `kernels`)
    for spec in PAPERS.values():
        for exp in spec.experiments:
            for scale in SCALES:
                for _, config in configs_for(exp, scale, [kind]):
                    fast = "fused" if kind == "cuda" else "native"
                    if config.algorithm not in names or config.algorithm not in kernels:
                        continue  # (and its problem is not built: data it needs may be absent)
                    prob, algo = build(config)
                    runs = config.runs if config.timing == "batched" and not config.snapshots else 1
                    # native kernels compile once per dtype and kind of problem, whatever the sizes
                    key = ((prob.name, prob.dim, repr(algo), runs) if kind == "cuda" else (type(algo.stepping()), getattr(algo.stepping(), "update", ""))) \
                        + (config.dtype,)
                    if key not in seen and engine_for(config, prob, algo) == fast:
                        seen.add(key)
                        jobs.append((f"{config.algorithm} on {prob.name} D={prob.dim} pop={algo.pop_size} runs={runs}",
                                     prob, algo, runs, fast, config.dtype))
    return jobs


def _short(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list):
        return "[" + ", ".join(_short(v) for v in value) + "]"
    return str(value)


@app.command("list")
def list_(what: Annotated[str, typer.Argument(help="algorithms, problems or all")] = "all") -> None:
    """Show the algorithms and problems with their parameters."""
    if what not in ("all", "algorithms", "problems"):
        _fail(f"unknown listing {what!r}: use algorithms, problems or all")
    listing = catalog.load()  # written from the registries (a test keeps it equal to them): no torch import
    if what in ("all", "algorithms"):
        table = Table(title="algorithms")
        for col in ("name", "paper", "parameters (defaults)", "presets", "kernels"):
            table.add_column(col)
        for entry in listing["algorithms"]:
            table.add_row(entry["name"], entry["paper"], entry["parameters"], entry["presets"],
                          ", ".join(entry["kernels"]) or "-")
        out.print(table)
    if what in ("all", "problems"):
        table = Table(title="problems")
        for col in ("name", "description", "parameters"):
            table.add_column(col)
        for entry in listing["problems"]:
            table.add_row(entry["name"], entry["summary"], entry["parameters"])
        out.print(table)
