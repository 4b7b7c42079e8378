"""`heuriscale compare`: a campaign of several algorithms over a suite, with its statistics."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.markup import escape

from .common import (CELLS_HELP, DIST_TIMEOUT_HELP, THREADS_HELP, fail, lead_rank, out, parse_assignments, require,
                     study_command, study_progress, use_cpu_threads, writable)


def compare(
    algorithms_: Annotated[str, typer.Option("--algorithms", "-a",
                                             help="comma-separated, e.g. pso,apo,fep,prs,firefly")],
    suite: Annotated[str, typer.Option(help="cec2022, cec2017, classic (Yao et al. 1999), bbob (COCO), or zdt, "
                                            "dtlz (several objectives: nsga2, moead)")] = "cec2022",
    dims: Annotated[Optional[str], typer.Option(help="comma-separated dimensions (default: the suite's)")] = None,
    runs: Annotated[Optional[int], typer.Option(
        help="runs per algorithm, function and dimension (default: the suite's, 30 for cec2022; "
             "bbob: instances 1..runs, 15)")] = None,
    evals: Annotated[Optional[int], typer.Option(
        help="evaluations per run for every function (default: the suite's budgets)")] = None,
    evals_per_dim: Annotated[Optional[int], typer.Option(
        help="evaluations per run as a multiple of the dimension, e.g. 1000 for 1000 x D "
             "(COCO's convention; default: the suite's budgets)")] = None,
    param: Annotated[Optional[list[str]], typer.Option(
        "--param", "-p", help="algo.key=value, e.g. apo.pf_max=0.2 (repeatable)")] = None,
    preset: Annotated[Optional[list[str]], typer.Option(help="algo=name, e.g. apo=paper003 (repeatable)")] = None,
    pop: Annotated[Optional[list[str]], typer.Option(help="algo=population size, e.g. pso=40 (repeatable)")] = None,
    functions: Annotated[Optional[str], typer.Option(
        help="comma-separated subset of the suite, e.g. f1,f3 (default: all)")] = None,
    reference: Annotated[Optional[str], typer.Option(
        help="the algorithm the others are tested against (default: the first)")] = None,
    device: Annotated[str, typer.Option(help="auto, cpu, cuda or cuda:N")] = "auto",
    dtype: Annotated[Optional[str], typer.Option(
        help="float32 or float64 (default: float32 on CUDA, float64 on the CPU and for bbob)")] = None,
    seed: Annotated[int, typer.Option(help="the campaign's base seed")] = 0,
    alpha: Annotated[float, typer.Option(help="significance level of the tests")] = 0.05,
    out_dir: Annotated[Optional[Path], typer.Option(
        "--out", help="folder of the store and the report (default campaigns/<suite>)")] = None,
    export: Annotated[Optional[str], typer.Option(
        help="also write the runs for the field's platforms: coco (bbob suite; for python -m cocopp), ioh "
             "(IOHanalyzer, iohinspector), or coco,ioh; into OUT/coco/<algorithm>/, OUT/ioh/<algorithm>/")] = None,
    dist_timeout: Annotated[Optional[float], typer.Option(help=DIST_TIMEOUT_HELP)] = None,
    cpu_threads: Annotated[Optional[int], typer.Option(help=THREADS_HELP)] = None,
    parallel_cells: Annotated[str, typer.Option(help=CELLS_HELP)] = "auto",
) -> None:
    """Benchmark several algorithms over a suite: errors f - f* at the suite's recording points,
    rank-sum tests against a reference, Friedman ranks, report.md/.html, tables.tex, runs.csv.

    Every algorithm runs at its library defaults (or --preset, -p, --pop) within the suite's
    budget (CEC 2022: 200,000 evaluations at D = 10, 1,000,000 at D = 20; bbob: 10,000 x D) or
    --evals / --evals-per-dim. On bbob the runs are COCO's instances (run r on instance r + 1). Runs are
    stored as they finish (--out/results.sqlite): rerunning resumes, and a finished campaign
    recomputes nothing and rewrites the same report. On the CPU, cells too small for every
    core run several at once in worker processes (--parallel-cells). Ctrl-C or SIGTERM stops at once (exit
    status 130 / 143) keeping every finished run. Under torchrun
    (`torchrun --nproc-per-node=N -m heuriscale compare ...`) the runs are shared out over the
    ranks and rank 0 writes the store and the report.
    """
    import json
    import time

    from ..studies.cells import parse_workers
    from ..studies.compare import check_exports, plan, run_campaign, stored_runs

    started = time.perf_counter()
    require("matplotlib", *(["opfunu"] if suite.startswith("cec") else []))
    if lead_rank():
        writable(out_dir, "--out", folder=True)  # before any run: the report must have somewhere to go
    try:
        use_cpu_threads(cpu_threads)
        params: dict = {}
        for item in param or []:
            key, sep, _ = item.partition("=")
            algo, dot, name = key.partition(".")
            if not sep or not dot or not algo.strip() or not name.strip():
                raise ValueError(f"-p/--param expects algorithm.key=value, e.g. apo.pf_max=0.2; got {item!r}")
            params.setdefault(algo.strip(), {}).update(parse_assignments([f"{name}{item[len(key):]}"], "-p/--param"))
        presets = _per_algorithm(preset, "--preset", "algorithm=preset, e.g. apo=paper003", str)
        pops = _per_algorithm(pop, "--pop", "algorithm=population size, e.g. pso=40", int)
        campaign = plan(algorithms_, suite, dims, runs=runs, evals=evals, params=params, presets=presets, pops=pops,
                        reference=reference, device=device, dtype=dtype, seed=seed, out=out_dir, functions=functions,
                        alpha=alpha, evals_per_dim=evals_per_dim)
        exports = check_exports(campaign, export)
        cells = parse_workers(parallel_cells)
    except ValueError as exc:
        fail(str(exc))
    if lead_rank():  # before any run: a campaign whose tests cannot reach --alpha says so
        from ..studies.compare import significance_warnings

        for text in significance_warnings(campaign):
            typer.echo(f"warning: {text}", err=True)

    def stored():
        return (*stored_runs(campaign), f"campaign '{campaign.suite.name}'")

    with study_command(stored):
        label = (f"{campaign.suite.name}: {len(campaign.algorithms)} algorithms x {len(campaign.cells)} "
                 f"functions and dimensions x {campaign.runs} runs")
        with study_progress(label, campaign.total_runs(), stored()[0]) as advance:
            written = run_campaign(campaign, timeout=dist_timeout, progress=advance, exports=exports,
                                   parallel_cells=cells)
    if written is None:  # a rank other than 0 of a torchrun job: rank 0 reports
        return
    meta = json.loads(written["json"].read_text())["meta"]
    tables = [written[key] for key in ("md", "html", "tex", "csv", "comparisons") if key in written]
    where = (f"report written to {', '.join(map(str, tables[:-1]))} and {tables[-1]}; "
             f"runs stored in {written['store']}")
    out.print(f"[bold]{escape(campaign.suite.name)}[/]: " + escape(where), highlight=False, soft_wrap=True)
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
