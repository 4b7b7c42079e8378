"""`heuriscale run`: one problem, one algorithm, statistics over the runs."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape
from rich.table import Table

from .. import catalog, triton_ahead
from ..interrupt import Interrupted
from .common import (DIST_TIMEOUT_HELP, THREADS_HELP, err, fail, lead_rank, out, parse_assignments, use_cpu_threads,
                     writable)


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
        str, typer.Option(help="auto, eager, native (Numba CPU kernels), graph (CUDA-graph replay), compiled "
                               "(torch.compile + graph) or fused (Triton kernels + graph); `heuriscale list` says "
                               "which algorithm has which kernels")
    ] = "auto",
    seed: Annotated[Optional[int], typer.Option(help="random seed (random if omitted; recorded in the result)")] = None,
    preset: Annotated[Optional[str], typer.Option(help="named parameter set of the algorithm, e.g. paper001")] = None,
    param: Annotated[Optional[list[str]], typer.Option("--param", "-p", help="algorithm parameter key=value")] = None,
    problem_param: Annotated[
        Optional[list[str]],
        typer.Option("--problem-param", "-P", help="problem parameter key=value, e.g. bounds=-5,10")
    ] = None,
    image: Annotated[Optional[str], typer.Option(help="otsu: a skimage.data image name or an image file")] = None,
    levels: Annotated[Optional[int], typer.Option(help="otsu: number of thresholds")] = None,
    output_image: Annotated[
        Optional[Path],
        typer.Option(help="otsu: write the image thresholded by the best solution (missing folders are created)")
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
        Optional[Path],
        typer.Option(help="continue the runs saved in this checkpoint (same options; seed and engine from it)")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")] = False,
    islands: Annotated[bool, typer.Option(
        help="under torchrun: split each run's population over the ranks as islands "
             "(--no-islands: each rank alone)")] = True,
    migrate_every: Annotated[Optional[int], typer.Option(
        help="islands: iterations between migrations (default one chunk)")] = None,
    migrants: Annotated[int, typer.Option(help="islands: individuals each island sends per run and migration")] = 1,
    dist_timeout: Annotated[Optional[float], typer.Option(help=DIST_TIMEOUT_HELP)] = None,
    cpu_threads: Annotated[Optional[int], typer.Option(
        help=THREADS_HELP + "; 1 = the papers' single-threaded CPU versions")] = None,
    ref: Annotated[Optional[str], typer.Option(
        help="several objectives: the hypervolume's reference point, one number per objective (e.g. 1.1,1.1); "
             "default: the problem's Pareto front's nadir x 1.1")] = None,
) -> None:
    """Optimise a problem with an algorithm and print statistics over the runs.

    Ctrl-C or SIGTERM ends the current chunk, writes --json and --checkpoint and exits
    with 130 / 143; a second Ctrl-C exits at once. Under torchrun
    (`torchrun --nproc-per-node=N -m heuriscale run ...`) each run's population is split over
    the ranks as islands exchanging migrants; rank 0 prints and writes the result.

    A problem of several objectives (`-P objectives=3` for DTLZ) runs with nsga2 or moead and
    prints each run's final front size, hypervolume and IGD; --json writes the fronts.
    """
    algo_params = parse_assignments(param, "--param")
    if pop is not None:
        algo_params["pop_size"] = pop
    if iters is None and evals is None and time_limit is None:
        iters = 1000
    prob_params = parse_assignments(problem_param, "--problem-param")
    prob_params.update({k: v for k, v in (("image", image), ("levels", levels)) if v is not None})
    lead = lead_rank()
    for path, option in ((json_path, "--json"), (checkpoint, "--checkpoint"), (output_image, "--output-image")):
        writable(path, option)  # before any work: a run's result is never lost to an unwritable path
    try:
        catalog.check_algorithm(algorithm)  # a typo answers before torch is imported
        catalog.check_problem(problem)
    except ValueError as exc:
        fail(str(exc))
    _warn_if_interrupts_are_ignored(checkpoint or resume)
    if device != "cpu":
        triton_ahead.start(engine)  # Triton's one-time work overlaps torch's import
    from .. import algorithms, local, problems
    from ..engine import minimize
    from ..engine.distributed import DistributedError

    try:
        use_cpu_threads(cpu_threads)
        if dist_timeout is not None:
            from ..engine.distributed import TIMEOUT_ENV, timeout_seconds

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
            ref=None if ref is None else _numbers(ref, "--ref"),
        )
    except Interrupted as exc:
        _interrupted(exc, json_path if lead else None)
    except (ValueError, TypeError, DistributedError) as exc:  # bad input, too big a run set, a lost rank: one line
        fail((str(exc).strip() or type(exc).__name__).splitlines()[0])
    if not lead and result.extra.get("islands"):  # every rank holds the same result: rank 0 reports it
        return
    _print_fronts(result) if result.objectives > 1 else _print_result(result)
    if output_image is not None:
        prob.save_thresholded(result.x, output_image)
        out.print(f"thresholded image written to {output_image}")
    if json_path is not None:
        result.save_json(json_path)
        out.print(f"result written to {json_path}")


def _warn_if_interrupts_are_ignored(checkpoint: Path | None) -> None:
    """Shells start background jobs (`cmd &`) with SIGINT ignored: Ctrl-C cannot reach them."""
    if checkpoint is not None and signal.getsignal(signal.SIGINT) is signal.SIG_IGN and lead_rank():
        err.print(escape(f"note: SIGINT is ignored in this process (a background job?): Ctrl-C cannot stop it; "
                         f"`kill -TERM {os.getpid()}` ends the current chunk, saves {checkpoint} and exits"),
                  highlight=False, soft_wrap=True)


def _interrupted(exc: Interrupted, json_path: Path | None) -> None:
    """One line on what an interrupted run kept, then exit 128 + the signal's number."""
    result, kept = exc.result, []  # minimize's Interrupted always carries the runs so far
    if json_path is not None:
        result.save_json(json_path)
        kept.append(str(json_path))
    if exc.checkpoint is not None:
        kept.append(f"{exc.checkpoint} (continue with --resume {exc.checkpoint})")
    best = f"best so far {result.best:.6g}" if result.objectives == 1 else "fronts so far kept"
    where = f"written to {' and '.join(kept)}" if kept else "nothing written (use --json / --checkpoint to keep it)"
    total = result.extra["max_steps"]
    of = "" if total is None else f" of {total:,}"
    err.print(escape(f"interrupted at iteration {result.iterations:,}{of}; {best}; {where}"),
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
                                 f"every {i['migrate_every']} it "
                                 f"({i['bytes_per_migration']:,} bytes gathered per rank)")
    table.add_row("wall time", f"{result.wall_time:.3f} s")
    threads = result.extra.get("cpu_threads")
    threads = f", {threads} thread{'s' if threads != 1 else ''}" if threads else ""
    engine = result.extra.get("engine")
    table.add_row("device", f"{result.device} ({result.device_name}), {result.dtype}, {engine} engine{threads}")
    table.add_row("seed", str(result.seed))
    out.print(table)


def _numbers(text: str, option: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",")]
    except ValueError:
        raise ValueError(f"{option} takes numbers separated by commas, e.g. 1.1,1.1; got {text!r}") from None


def _print_fronts(result) -> None:
    """The table of a run set with several objectives: front sizes, hypervolume and IGD over runs."""
    s = result.summary()
    table = Table(title=f"{result.algorithm['name']} on {result.problem['name']} "
                        f"(D={result.problem['dim']}, M={result.objectives})")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    table.add_row("runs", str(result.runs))
    for label, key in (("final front size", "front_size"), ("hypervolume", "hv"), ("IGD", "igd")):
        if f"{key}_median" in s:
            table.add_row(f"median {label} (min .. max)",
                          f"{s[key + '_median']:.6g} ({s[key + '_min']:.6g} .. {s[key + '_max']:.6g})")
    if result.ref_point is not None:
        table.add_row("hypervolume reference point", ", ".join(f"{v:.6g}" for v in result.ref_point.tolist()))
    table.add_row("front", "final population's non-dominated points")
    table.add_row("evaluations / run", f"{result.evals:,}")
    table.add_row("iterations", f"{result.iterations:,} (stopped by {result.stop_reason})")
    nan = int(result.nan_evals.sum())
    if nan:
        table.add_row("NaN evaluations", f"{nan:,} (never in a front)")
    table.add_row("wall time", f"{result.wall_time:.3f} s")
    table.add_row("device", f"{result.device} ({result.device_name}), {result.dtype}, {result.extra.get('engine')} engine")
    table.add_row("seed", str(result.seed))
    out.print(table)


def _short(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list):
        return "[" + ", ".join(_short(v) for v in value) + "]"
    return str(value)
