"""A campaign's stored runs in the formats of the field's benchmarking platforms, written from
the results store (no run is repeated):

- `coco`: `<out>/coco/<algorithm>/`, COCO's data as cocoex's bbob logger writes it (.info,
  .dat, .tdat): `python -m cocopp <out>/coco/*/` draws COCO's figures and tables
  (`coco.py`; bbob suite only).
- `ioh`: `<out>/ioh/<algorithm>/`, IOHprofiler's data as IOHexperimenter's Analyzer logger
  writes it (.json, .dat): IOHanalyzer and iohinspector read it (`ioh.py`; any suite).

What a run's record holds for them, and how exact it is, is in `runs.py`; the engine's part
(milestones recorded at every iteration) in `engine/history.py`. Both formats are plain
text; neither writer needs the platforms' packages.
"""

from __future__ import annotations

import os
import shutil
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path

from ...names import unknown_name
from . import coco, ioh
from .coco import FINAL_PRECISION
from .runs import RunTrace, traces

__all__ = ["EXPORTS", "export_names", "check", "write", "RunTrace", "traces"]

#: Export name -> writer(runs of one algorithm, folder) -> files written.
EXPORTS = {"coco": coco.write, "ioh": ioh.write}


def export_names(formats: str | Iterable[str] | None) -> tuple[str, ...]:
    """The export names of "coco,ioh" or a list, checked; a ValueError names the known ones."""
    if formats is None:
        return ()
    names = [f.strip() for f in (formats.split(",") if isinstance(formats, str) else formats) if f.strip()]
    for name in names:
        if name not in EXPORTS:
            raise ValueError(unknown_name("export", name, EXPORTS))
    return tuple(dict.fromkeys(names))


def check(formats: Sequence[str], problems: Iterable[str]) -> None:
    """Raise a ValueError if a campaign over `problems` cannot be exported in `formats` (COCO:
    bbob functions only), before any run."""
    if "coco" in formats:
        coco.check(list(dict.fromkeys(problems)))


def write(runs: list[RunTrace], out: str | Path, formats: Sequence[str]) -> dict[str, list[Path]]:
    """Write `runs` in each of `formats` under `out/<format>/<algorithm>/`; return the files
    written per format. Each algorithm's folder is written beside and then put in place of
    the previous one, so an export never mixes files of two campaigns."""
    formats = export_names(formats)
    check(formats, [r.problem for r in runs])
    if not all(r.exact for r in runs):
        warnings.warn("some stored runs predate the milestones that exports read (written by an older heuriscale): "
                      "their lines come from the sampled history, and evaluation 1 holds the initial population's "
                      "best (see heuriscale.studies.exports.runs)", stacklevel=2)
    coarse = max((abs(r.optimum_f) * 2.0 ** -24 for r in runs if r.dtype == "float32" and r.optimum_f), default=0)
    if coarse > FINAL_PRECISION:
        warnings.warn(f"runs in float32 resolve f - f* to about {coarse:.0e} (float32's rounding of f*): targets below "
                      f"that, down to COCO's {FINAL_PRECISION:g}, are rounding, not optimisation; run with "
                      f"dtype float64 (--dtype float64) for data down to {FINAL_PRECISION:g}", stacklevel=2)
    by_algorithm: dict[str, list[RunTrace]] = {}
    for r in runs:
        by_algorithm.setdefault(r.algorithm, []).append(r)
    written: dict[str, list[Path]] = {}
    for name in formats:
        files = written.setdefault(name, [])
        for algorithm, group in by_algorithm.items():
            folder = Path(out) / name / algorithm
            staging = folder.with_name(f".{algorithm}.writing")
            shutil.rmtree(staging, ignore_errors=True)
            staging.mkdir(parents=True)
            made = EXPORTS[name](group, staging)
            if folder.exists():
                shutil.rmtree(folder)
            os.replace(staging, folder)
            files += [folder / p.relative_to(staging) for p in made]
    return written
