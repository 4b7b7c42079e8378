"""IOHprofiler's data format, as IOHexperimenter's `Analyzer` logger writes it (ioh 0.4.2) and
IOHanalyzer / iohinspector read it.

`<out>/ioh/<algorithm>/` holds, per function:

- `IOHprofiler_f<id>_<name>.json`: `version`, `suite`, `function_id`, `function_name`,
  `maximization` (false), `algorithm` {`name`, `info`: its settings, dtype, device},
  `attributes` ["evaluations", "raw_y"], and per dimension a scenario {`dimension`, `path` of
  its .dat, `runs`: per run {`instance`, `evals` used, `best` {`evals` when first reached,
  `y`, `x`}}}.
- `data_f<id>_<name>/IOHprofiler_f<id>_DIM<D>.dat`: per run, in the scenario's order, the
  header `evaluations raw_y`, then a line `evaluations y` at evaluation 1 and at each
  improvement of the best-so-far the run's record knows exactly (`runs.RunTrace`: every
  crossing of the targets 10^(k/5) down to 1e-8 of f*, the sampled history, the final best
  where it was found), then the last evaluation with the best-so-far. Readers split the runs
  at evaluation 1, as they do ioh's files.

`raw_y` follows ioh's own convention: for the bbob functions, f - f* (as ioh's BBOB problems
log it; never below 0, see `RunTrace.precision`), with ioh's function names (Sphere, ...), so
the data sits beside ioh's own BBOB data; for every other problem, the raw f (as ioh logs any
problem it is given). The function id is the number a problem's name ends with (cec2022-f3:
3), else its place in the campaign. Numbers are written exactly (Python's shortest repr;
ioh prints a fixed 10 decimals).

What differs from ioh's files, and why: a run's improvements inside an iteration are logged
at the end of that iteration (evaluations are counted per iteration), and improvements that
cross no target and fall between two sampled iterations of a long run are not logged (the
engine keeps every iteration of a run of up to 1,999 iterations, every 2nd, 4th ... beyond).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

from .coco import _is_bbob
from .runs import RunTrace, function_number

#: The ioh release whose Analyzer files these follow (its `version` field).
IOH_VERSION = "0.4.2"

#: ioh's names of the 24 bbob functions (`ioh.get_problem(k, 1, D, ioh.ProblemClass.BBOB)`).
BBOB_NAMES = ("Sphere", "Ellipsoid", "Rastrigin", "BuecheRastrigin", "LinearSlope", "AttractiveSector",
              "StepEllipsoid", "Rosenbrock", "RosenbrockRotated", "EllipsoidRotated", "Discus", "BentCigar",
              "SharpRidge", "DifferentPowers", "RastriginRotated", "Weierstrass", "Schaffers10", "Schaffers1000",
              "GriewankRosenbrock", "Schwefel", "Gallagher101", "Gallagher21", "Katsuura", "LunacekBiRastrigin")


def write(runs: list[RunTrace], folder: Path) -> list[Path]:
    """Write one algorithm's runs as IOHprofiler data in `folder`; return the files written."""
    by_function: dict[str, dict[int, list[RunTrace]]] = defaultdict(lambda: defaultdict(list))
    for r in runs:
        by_function[r.problem][r.dim].append(r)
    written = []
    for place, problem in enumerate(by_function, 1):
        fid = function_number(problem) or place
        bbob = _is_bbob(problem)
        name = BBOB_NAMES[fid - 1] if bbob else re.sub(r"[^A-Za-z0-9.-]+", "_", next(iter(
            by_function[problem].values()))[0].label)
        scenarios = []
        for dim in sorted(by_function[problem]):
            cell = sorted(by_function[problem][dim], key=lambda r: (r.instance, r.repeat))
            path = Path(f"data_f{fid}_{name}") / f"IOHprofiler_f{fid}_DIM{dim}.dat"
            (folder / path.parent).mkdir(parents=True, exist_ok=True)
            (folder / path).write_text("".join(_run_lines(r, bbob) for r in cell), encoding="utf-8")
            written.append(folder / path)
            scenarios.append({"dimension": dim, "path": path.as_posix(), "runs": [
                {"instance": r.instance, "evals": r.evals,
                 "best": {"evals": r.best_evals, "y": _y(r, r.best_f, bbob), "x": list(r.best_x)}} for r in cell]})
        first = next(iter(by_function[problem].values()))[0]
        doc = {"version": IOH_VERSION, "suite": first.suite, "function_id": fid, "function_name": name,
               "maximization": False, "algorithm": {"name": first.algorithm, "info": first.info},
               "attributes": ["evaluations", "raw_y"], "scenarios": scenarios}
        path = folder / f"IOHprofiler_f{fid}_{name}.json"
        path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        written.append(path)
    return written


def _y(run: RunTrace, f: float, bbob: bool) -> float:
    return run.precision(f) if bbob else f


def _run_lines(run: RunTrace, bbob: bool) -> str:
    lines, last = ["evaluations raw_y\n"], None
    for e, f in run.points:
        y = _y(run, f, bbob)
        if last is None or y < last:  # an improvement (of what is written: f - f* is 0 at best)
            lines.append(f"{e} {y!r}\n")
            last, at = y, e
    if at != run.points[-1][0]:  # the last evaluation, as ioh writes it
        lines.append(f"{run.points[-1][0]} {_y(run, run.points[-1][1], bbob)!r}\n")
    return "".join(lines)
