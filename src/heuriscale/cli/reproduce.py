"""`heuriscale reproduce`: the papers' CPU-vs-GPU experiments, reported beside their numbers."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from .common import (CELLS_HELP, DIST_TIMEOUT_HELP, THREADS_HELP, fail, lead_rank, out, require, study_command,
                     study_progress, use_cpu_threads, writable)


def reproduce(
    paper: Annotated[str, typer.Argument(help="pso, prs, firefly, apo, fep or all")] = "all",
    scale: Annotated[str, typer.Option(help="quick (minutes, same shape) or paper (the papers' sizes)")] = "quick",
    device: Annotated[Optional[str], typer.Option(
        help="devices to run on, e.g. cpu,cuda (default: all present)")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="output folder")] = Path("reproductions"),
    dist_timeout: Annotated[Optional[float], typer.Option(help=DIST_TIMEOUT_HELP)] = None,
    cpu_threads: Annotated[Optional[int], typer.Option(
        help=THREADS_HELP + "; 1 = the papers' single-threaded CPU versions")] = None,
    restore: Annotated[Optional[Path], typer.Option(
        help="a results.csv this paper's reproduction wrote: put its runs back into the store first "
             "(those whose configuration is unchanged), so that only the others run")] = None,
    restore_only: Annotated[Optional[str], typer.Option(
        help="with --restore: only these experiments, e.g. table2,table2-cec")] = None,
    parallel_cells: Annotated[str, typer.Option(
        help=CELLS_HELP.replace("auto or a number;", "1 (the default: the papers' CPU times are results, measured "
                                "alone), auto or a number;"))] = "1",
) -> None:
    """Run papers' CPU-vs-GPU experiments and write reports with the papers' numbers beside ours.

    Rerunning resumes: finished runs are stored as they finish. `--restore results.csv`
    takes back the runs an earlier reproduction recorded (best f and times; runs that need
    their best x, history or snapshots are rerun) and the report says how many it took.
    Ctrl-C or SIGTERM stops at once (exit status 130 / 143) keeping every finished run. Under torchrun
    (`torchrun --nproc-per-node=N -m heuriscale reproduce ...`) the runs are shared out
    over the ranks, each on its own GPU, and rank 0 writes the store and the report.
    """
    from .. import studies
    from ..studies.cells import parse_workers
    from ..studies.reproduce import stored_runs
    from ..terminal import print_report

    keys = list(studies.PAPERS) if paper == "all" else [paper]
    require("matplotlib", *(["skimage"] if paper in ("apo", "all") else []))  # paper 003 thresholds images
    if lead_rank():
        writable(out_dir, "--out", folder=True)  # before any run: the reports must have somewhere to go
    try:
        for key in keys:
            if key not in studies.PAPERS:
                raise ValueError(f"unknown paper {key!r}: use {', '.join(studies.PAPERS)} or all")
        if scale not in studies.SCALES:
            raise ValueError(f"unknown scale {scale!r}: use {' or '.join(studies.SCALES)}")
        devices = studies.available_devices(device)
        use_cpu_threads(cpu_threads)
        cells = parse_workers(parallel_cells)
        if restore_only is not None and restore is None:
            raise ValueError("--restore-only needs --restore results.csv")
        if restore is not None:
            if len(keys) != 1:
                raise ValueError("--restore takes one paper's results.csv: name the paper (pso, prs, ...), not all")
            if not restore.is_file():
                raise ValueError(f"--restore: no file {restore}; give the results.csv of an earlier reproduction")
            if lead_rank():
                _restore(studies.PAPERS[keys[0]], scale, devices, out_dir, restore, restore_only)
    except ValueError as exc:
        fail(str(exc))
    current = {"key": keys[0]}

    def stored():
        key = current["key"]
        return (*stored_runs(studies.PAPERS[key], scale, devices, out_dir), f"study '{key}'")

    with study_command(stored):
        for key in keys:
            current["key"] = key
            spec = studies.PAPERS[key]
            done, total, _ = stored_runs(spec, scale, devices, out_dir)
            with study_progress(progress_label(spec), total, done) as advance:
                report = studies.reproduce_paper(spec, scale, devices, out_dir, timeout=dist_timeout, progress=advance,
                                                parallel_cells=cells)
            if report is None:  # a rank other than 0 of a torchrun job: rank 0 reports
                continue
            print_report(out, report.read_text(), full=f"{report} / {report.with_suffix('.html')}")
            out.print(f"[bold]{key}[/]: report written to {report} and {report.with_suffix('.html')}")


def progress_label(paper) -> str:
    """What a paper's progress bar or lines start with: its key and title, cut between words."""
    from ..terminal import shorten

    return f"{paper.key}: {shorten(paper.title, 60)}"


def _restore(paper, scale: str, devices: list[str], out_dir: Path, csv_path: Path, only: str | None) -> None:
    from ..studies.reproduce import store_path
    from ..studies.restore import restore_runs
    from ..studies.store import ResultStore

    experiments = None if only is None else [e.strip() for e in only.split(",") if e.strip()]
    store_path(paper, out_dir).parent.mkdir(parents=True, exist_ok=True)
    with ResultStore(store_path(paper, out_dir)) as store:
        counts = restore_runs(paper, scale, devices, csv_path, store, experiments, label=str(csv_path))
    out.print(f"{paper.key}: {counts['restored']} runs restored from {csv_path}, {counts['stored']} were stored "
              f"already, {counts['changed']} changed since (rerun), {counts['unmatched']} not restorable (rerun)")
