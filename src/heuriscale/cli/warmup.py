"""`heuriscale warmup`: the kernels built ahead of time (cached on disk)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer
from rich.table import Table

from .common import err, fail, out


def warmup(
    algorithm_names: Annotated[Optional[list[str]], typer.Argument(
        metavar="[ALGO]...", help="algorithms (default: all)")] = None,
    problem: Annotated[Optional[str], typer.Option(
        "--problem", help="build for this problem instead of the papers' configurations")] = None,
    dim: Annotated[Optional[int], typer.Option(help="with --problem: dimension")] = None,
    pop: Annotated[Optional[int], typer.Option(help="with --problem: population size")] = None,
    runs: Annotated[int, typer.Option(help="with --problem: runs advanced together")] = 1,
    dtype: Annotated[str, typer.Option(help="with --problem: float32 or float64")] = "float32",
    device: Annotated[Optional[str], typer.Option(
        help="the CUDA device to build for, or cpu (the native Numba kernels); "
             "default: cuda if present, else cpu")] = None,
) -> None:
    """Build the kernels ahead of time (e.g. in a cluster job's prologue); they are cached on disk.

    Without --problem: the fused kernels of every `heuriscale reproduce` configuration on CUDA
    (both scales), or with --device cpu their native CPU kernels. With --problem: the fast path
    `heuriscale run` would use for that configuration.
    """
    import torch
    from rich.progress import Progress

    from .. import algorithms, problems
    from ..engine import resolve_device, warm_up

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
            jobs = paper_warmups(names, "cpu" if device == "cpu" else "cuda")
    except ValueError as exc:
        fail(str(exc))
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
                fail(str(exc))
            table.add_row(label, built["engine"], f"{built['seconds']:.2f}")
            bar.advance(task)
    out.print(table)


def paper_warmups(names: list[str], kind: str) -> list[tuple]:
    """The distinct configurations of the papers' CUDA studies that use fused kernels (graph
    replay of the uncompiled step, which the other ones use, builds nothing), or of their CPU
    studies that use native kernels."""
    from ..engine.kernels import with_kernels
    from ..studies import PAPERS, SCALES
    from ..studies.reproduce import configs_for
    from ..studies.study import build, engine_for

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
                    stepping = algo.stepping()
                    key = ((prob.name, prob.dim, repr(algo), runs) if kind == "cuda"
                           else (type(stepping), getattr(stepping, "update", ""))) + (config.dtype,)
                    if key not in seen and engine_for(config, prob, algo) == fast:
                        seen.add(key)
                        jobs.append((f"{config.algorithm} on {prob.name} D={prob.dim} pop={algo.pop_size} runs={runs}",
                                     prob, algo, runs, fast, config.dtype))
    return jobs
