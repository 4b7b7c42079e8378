"""COCO's data format, as cocoex's `bbob` logger writes it and `cocopp` reads it.

`<out>/coco/<algorithm>/` holds, per function k of the bbob suite:

- `bbobexp_f<k>.info`: per dimension three lines,
  `suite = 'bbob', funcId = k, DIM = D, Precision = 1.000e-08, algId = '<algorithm>', logger =
  'bbob', data_format = 'bbob-new2'`, a comment line (`% ` + the algorithm's settings,
  dtype and device), and `data_f<k>/bbobexp_f<k>_DIM<D>.dat, i:evals|precision, ...` with one
  entry per run (instance i, evaluations used, final f - f* as %.1e).
- `data_f<k>/bbobexp_f<k>_DIM<D>.dat` (target-triggered) and `.tdat` (evaluation-triggered):
  per run, in the .info's order, cocoex's `%` header line (with f*), then lines
  `evaluations 0 best-f-minus-f* measured-f best-measured-f` (cocoex's `%+10.9e`; the second
  column counts constraint evaluations, 0 here).
  - .dat: the first evaluation, then a line whenever the best-so-far enters a lower band
    f - f* <= 10^(k/5) (k integer: five per decade), then the last evaluation: cocoex's
    rule, applied to the run's exact points (`runs.RunTrace`), where the engine recorded
    every crossing of the bands down to 1e-8 (`engine/history.py`).
  - .tdat: per evaluation trigger of a schedule of cocoex's density (ceil(10^(i/20))
    evaluations, twenty per decade, and {1, 2, 5} x 10^j x D), the run's latest exact point
    at or before it, then the last evaluation (cocopp checks it against the .info's count).

What differs from cocoex's files, and why: evaluations are counted per iteration, so a line
sits at the end of the iteration whose best crossed the band (cocoex, seeing points one by
one, can place it inside); the measured-f column holds the best-so-far (at a crossing it is
the improving point's value; elsewhere the current point's value is not recorded); no x
columns, though the header names them as cocoex's does (cocopp does not read them; the best
point is in the results store); .tdat lines sit at the run's own evaluation counts, at or
before cocoex's triggers (the best-so-far between two recorded points is not known); no `.mdat` or
`.rdat` files (recommendations and restarts, not written by our runs).

COCO's data exists for COCO's suites only: cocopp reads `suite = 'bbob'` and compares with
the bbob reference algorithms. `check` refuses a campaign whose functions are not bbob
problems (`bbob-f1` ... `bbob-f24`) with a message pointing to the IOH export.
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path

from .runs import RunTrace, function_number

#: cocoex's final target precision (the .info's `Precision`).
FINAL_PRECISION = 1e-8
#: Bands of f - f* per decade (.dat) and evaluation triggers per decade (.tdat), as cocoex's
#: bbob observer sets them (nbpts_fval = 5, nbpts_nbevals = 20).
BANDS_PER_DECADE = 5
TRIGGERS_PER_DECADE = 20

HEADER = ("% f evaluations | g evaluations | best noise-free fitness - Fopt ({fopt:13.12e}) + sum g_i+ | "
          "measured fitness | best measured fitness or single-digit g-values | x1 | x2...\n")


def check(problem_names) -> None:
    """Raise a ValueError unless every problem is one of the bbob suite's functions."""
    others = [p for p in problem_names if not _is_bbob(p)]
    if others:
        raise ValueError(f"--export coco writes COCO's bbob data format, which cocopp reads for the bbob suite only; "
                         f"this campaign has {', '.join(others[:3])}{' ...' if len(others) > 3 else ''}: run "
                         f"--suite bbob for COCO data, or export this one with --export ioh")


def _is_bbob(problem: str) -> bool:
    k = function_number(problem)
    return problem.startswith("bbob-f") and k is not None and 1 <= k <= 24


def write(runs: list[RunTrace], folder: Path) -> list[Path]:
    """Write one algorithm's runs as COCO data in `folder`; return the files written."""
    check({r.problem for r in runs})
    by_function: dict[int, dict[int, list[RunTrace]]] = defaultdict(lambda: defaultdict(list))
    for r in runs:
        by_function[function_number(r.problem)][r.dim].append(r)
    written = []
    for k in sorted(by_function):
        info = []
        for dim in sorted(by_function[k]):
            cell = sorted(by_function[k][dim], key=lambda r: (r.instance, r.repeat))
            stem = f"data_f{k}/bbobexp_f{k}_DIM{dim}"
            (folder / f"data_f{k}").mkdir(parents=True, exist_ok=True)
            for ext, lines in ((".dat", _target_lines), (".tdat", _evaluation_lines)):
                path = folder / (stem + ext)
                path.write_text("".join(HEADER.format(fopt=r.optimum_f) + "".join(_line(r, e, f) for e, f in lines(r))
                                        for r in cell), encoding="utf-8")
                written.append(path)
            entries = ", ".join(f"{r.instance}:{r.evals}|{r.precision(r.best_f):.1e}" for r in cell)
            info += [f"suite = 'bbob', funcId = {k}, DIM = {dim}, Precision = {FINAL_PRECISION:.3e}, "
                     f"algId = '{cell[0].algorithm}', logger = 'bbob', data_format = 'bbob-new2'\n",
                     f"% {cell[0].info}\n", f"{stem}.dat, {entries}\n"]
        path = folder / f"bbobexp_f{k}.info"
        path.write_text("".join(info), encoding="utf-8")
        written.append(path)
    return written


def _line(run: RunTrace, evals: int, f: float) -> str:
    return f"{evals} 0 {run.precision(f):+10.9e} {f:+10.9e} {f:+10.9e}\n"


def _target_lines(run: RunTrace) -> list[tuple[int, float]]:
    """The first point, each point whose f - f* enters a lower band 10^(k/5), the last point."""
    lines, below = [], math.inf  # the next band's upper edge: a point at or under it is logged
    for e, f in run.points:
        p = run.precision(f)
        if p <= below and (not lines or f < lines[-1][1]):
            lines.append((e, f))
            below = _next_band(p)
    if lines[-1][0] != run.points[-1][0]:
        lines.append(run.points[-1])
    return lines


def _next_band(p: float) -> float:
    """The largest 10^(k/5) below p (k integer); -inf after 0, below which nothing lies."""
    if p <= 0:
        return -math.inf
    if math.isinf(p):  # nothing finite yet: the first finite value is logged
        return math.inf
    k = math.ceil(BANDS_PER_DECADE * math.log10(p)) - 1
    while 10 ** (k / BANDS_PER_DECADE) >= p:  # log10's rounding at an exact band edge
        k -= 1
    return 10 ** (k / BANDS_PER_DECADE)


def _evaluation_lines(run: RunTrace) -> list[tuple[int, float]]:
    """Per trigger of the schedule up to the run's evaluations, its latest point at or before
    the trigger (once), then the last point."""
    lines: list[tuple[int, float]] = []
    points, i = run.points, 0
    for t in _triggers(run.evals, run.dim):
        while i + 1 < len(points) and points[i + 1][0] <= t:
            i += 1
        if points[i][0] <= t and (not lines or lines[-1] != points[i]):
            lines.append(points[i])
    if not lines or lines[-1] != points[-1]:
        lines.append(points[-1])
    return lines


def _triggers(evals: int, dim: int) -> list[int]:
    """cocoex's evaluation triggers up to `evals`: ceil(10^(i/20)) and {1, 2, 5} x 10^j x D."""
    out = set()
    i = 0
    while (t := math.ceil(10 ** (i / TRIGGERS_PER_DECADE) - 1e-9)) <= evals:
        out.add(t)
        i += 1
    j = 0
    while dim * 10 ** j <= evals:
        out.update(m * dim * 10 ** j for m in (1, 2, 5) if m * dim * 10 ** j <= evals)
        j += 1
    return sorted(out)
