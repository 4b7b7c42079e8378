"""The `heuriscale` command: parses options, calls the library, prints rich tables."""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path
from typing import Annotated, Optional

import torch
import typer
from rich.console import Console
from rich.table import Table

from . import algorithms, local, problems
from .engine import Result, minimize

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Population-based metaheuristics on CPUs and NVIDIA GPUs (PSO, PRS, Firefly+BFGS, APO, FEP).",
)
out = Console()
err = Console(stderr=True)


def _fail(message: str) -> None:
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


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
        str, typer.Option(help="auto, eager, graph (CUDA-graph replay), compiled (torch.compile + graph) or fused (Triton kernels + graph: pso, prs, fep, firefly)")
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
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")] = False,
) -> None:
    """Optimise a problem with an algorithm and print statistics over the runs."""
    algo_params = _parse_assignments(param, "--param")
    if pop is not None:
        algo_params["pop_size"] = pop
    if iters is None and evals is None and time_limit is None:
        iters = 1000
    prob_params = _parse_assignments(problem_param, "--problem-param")
    prob_params.update({k: v for k, v in (("image", image), ("levels", levels)) if v is not None})
    try:
        prob = problems.get_problem(problem, dim=dim, **prob_params)
        algo = algorithms.get_algorithm(algorithm, preset=preset, **algo_params)
        if refine is not None:
            algo = local.Hybrid(algorithm=algo, refine=local.get_refiner(refine, max_iter=refine_iters))
        result = minimize(
            prob, algo, iters=iters, evals=evals, time_limit=time_limit, target=target,
            runs=runs, device=device, dtype=dtype, seed=seed, progress=not quiet, engine=engine,
        )
    except ValueError as exc:
        _fail(str(exc))
    _print_result(result)
    if output_image is not None:
        if not hasattr(prob, "save_thresholded"):
            _fail("--output-image is for the otsu problem")
        prob.save_thresholded(result.x, output_image)
        out.print(f"thresholded image written to {output_image}")
    if json_path is not None:
        result.save_json(json_path)
        out.print(f"result written to {json_path}")


def _print_result(result: Result) -> None:
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
    table.add_row("wall time", f"{result.wall_time:.3f} s")
    table.add_row("device", f"{result.device} ({result.device_name}), {result.dtype}, {result.extra.get('engine')} engine")
    table.add_row("seed", str(result.seed))
    out.print(table)


@app.command()
def reproduce(
    paper: Annotated[str, typer.Argument(help="pso, prs, firefly, apo, fep or all")] = "all",
    scale: Annotated[str, typer.Option(help="quick (minutes, same shape) or paper (the papers' sizes)")] = "quick",
    device: Annotated[Optional[str], typer.Option(help="devices to run on, e.g. cpu,cuda (default: all present)")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="output folder")] = Path("reproductions"),
) -> None:
    """Run papers' CPU-vs-GPU experiments and write reports with the papers' numbers beside ours."""
    from rich.markdown import Markdown
    from rich.progress import Progress

    from . import studies

    keys = list(studies.PAPERS) if paper == "all" else [paper]
    try:
        for key in keys:
            if key not in studies.PAPERS:
                raise ValueError(f"unknown paper {key!r}: use {', '.join(studies.PAPERS)} or all")
        if scale not in studies.SCALES:
            raise ValueError(f"unknown scale {scale!r}: use {' or '.join(studies.SCALES)}")
        devices = studies.available_devices(device)
    except ValueError as exc:
        _fail(str(exc))
    for key in keys:
        spec = studies.PAPERS[key]
        with Progress(transient=True, console=err) as bar:
            task = bar.add_task(f"{key}: {spec.title[:60]}", total=None)
            report = studies.reproduce_paper(spec, scale, devices, out_dir,
                                             progress=lambda config, n: bar.update(task, advance=n))
        out.print(Markdown(report.read_text()))
        out.print(f"[bold]{key}[/]: report written to {report} and {report.with_suffix('.html')}")


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
    if what in ("all", "algorithms"):
        table = Table(title="algorithms")
        for col in ("name", "paper", "parameters (defaults)", "presets"):
            table.add_column(col)
        for name in algorithms.algorithm_names():
            cls = algorithms.algorithm_class(name)
            fields = ", ".join(f"{f.name}={f.default}" for f in dataclasses.fields(cls))
            presets = "; ".join(f"{k}: {v}" for k, v in cls.presets.items())
            table.add_row(name, cls.paper, fields, presets)
        out.print(table)
    if what in ("all", "problems"):
        table = Table(title="problems")
        for col in ("name", "description", "parameters"):
            table.add_column(col)
        for name in problems.problem_names():
            entry = problems.problem_entry(name)
            sig = inspect.signature(entry.factory)
            params = ", ".join(
                p.name if p.default is p.empty else f"{p.name}={p.default}" for p in sig.parameters.values()
            )
            table.add_row(name, entry.summary, params)
        out.print(table)
