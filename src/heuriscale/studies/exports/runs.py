"""A stored run as the exports see it: who ran what, and its best-so-far at every evaluation
count the run's record knows exactly.

A stored row (`study._row`) holds the run's sampled history (best-so-far after sampled
iterations, with their evaluation counts) and its milestones (`engine/history.py`): its
first evaluated value, when its final best was first reached and, with a known optimum, the
first evaluations within each target 10^(k/5) of it with the best-so-far then. Each is an
exact (evaluations, best-so-far) pair; `RunTrace.points` merges them in order of
evaluations. The writers pick from these points the lines their formats want, so every line
they write states a best-so-far the run really had after that many evaluations.

Rows written before the milestones existed (older stores) have the sampled history only: the
evaluations come from the algorithm's count (`evals_after`), target crossings read from the
samples (exact where the history kept every iteration, runs of up to 1,999 iterations), and
the initial population's best stands for evaluation 1. `RunTrace.exact` says which.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ... import algorithms, problems
from ...version import __version__


@dataclass(frozen=True)
class RunTrace:
    """One stored run: its configuration in words and its exact best-so-far points."""

    algorithm: str
    info: str  # the algorithm's settings, dtype and device in one line
    suite: str
    problem: str  # the registered problem name (bbob-f3, cec2022-f1, ...)
    label: str  # the suite's name for it
    dim: int
    instance: int
    repeat: int
    dtype: str  # the run's floating-point type
    optimum_f: float | None
    evals: int  # evaluations the run used
    best_f: float
    best_x: tuple[float, ...]
    best_evals: int  # evaluations after which best_f was first reached
    points: tuple[tuple[int, float], ...]  # (evaluations, best-so-far), evaluations ascending, from evaluation 1
    exact: bool  # False: a row from before the milestones (sampled history only)

    def precision(self, f: float) -> float:
        """f - f* (never below 0: float rounding, e.g. of f* in float32, can put a best value a
        hair below it)."""
        return max(f - self.optimum_f, 0.0)


def traces(rows: list[dict], suite: str) -> list[RunTrace]:
    """The RunTraces of stored rows (each with its `config`), in the rows' order."""
    optima: dict[str, list[float] | None] = {}
    built: dict[str, object] = {}
    out = []
    for row in rows:
        config = row["config"]
        params = dict(config.get("problem_params") or {})
        key = json.dumps([config["problem"], config["dim"], config["runs"], params], sort_keys=True)
        if key not in optima:  # each run's f* (bbob: its instance's)
            optima[key] = run_optima(config["problem"], config["dim"], config["runs"], params)
        algo_key = json.dumps([config["algorithm"], config.get("preset"), config.get("algorithm_params")],
                              sort_keys=True)
        if algo_key not in built:  # its settings in full; for an older row, its count of evaluations
            built[algo_key] = algorithms.get_algorithm(config["algorithm"], preset=config.get("preset"),
                                                       **(config.get("algorithm_params") or {}))
        repeat, instance = int(row["repeat"]), params.get("instance", 1)
        out.append(_trace(row, config, suite, None if optima[key] is None else optima[key][repeat], built[algo_key],
                          int(instance[repeat] if isinstance(instance, list) else instance)))
    return out


def run_optima(problem: str, dim: int, runs: int, params: dict) -> list[float] | None:
    """Each run's f* (a problem holding one instance per run has one per run), or None where
    unknown, of a stored configuration's problem."""
    try:
        return problems.get_problem(problem, dim=dim, **params).run_optima(runs)
    except ValueError as exc:  # e.g. a custom suite's problem, registered by the script that ran it
        raise ValueError(f"the store's problem {problem!r} cannot be built here ({exc}); export in the process "
                         f"that defines it (after its Suite.custom(...))") from None


def _trace(row: dict, config: dict, suite: str, optimum: float | None, algo, instance: int) -> RunTrace:
    history = row["history"]
    evals = history.get("evals") or [algo.evals_after(i) for i in history["iter"]]
    points = list(zip(evals, history["f"]))
    exact = "first_f" in history
    if exact:
        points.append((1, history["first_f"]))
        points.extend((e, f) for _k, e, f in history.get("hits", ()))
        points.append((history["best_evals"], row["best_f"]))
    points.append((row["evals"], row["best_f"]))
    merged: dict[int, float] = {}
    for e, f in points:
        merged[int(e)] = min(float(f), merged.get(int(e), float("inf")))
    ordered, best = [], float("inf")
    for e in sorted(merged):
        best = min(best, merged[e])  # best-so-far never rises (the points agree; this only makes it sure)
        ordered.append((e, best))
    if not exact:  # the first point known stands for evaluation 1 (see the module's docstring)
        ordered[0] = (1, ordered[0][1])
        best_evals = next(e for e, f in ordered if f <= row["best_f"])
    else:
        best_evals = int(history["best_evals"])
    return RunTrace(
        algorithm=config["algorithm"], info=_info(config, row, algo), suite=suite, problem=config["problem"],
        label=config.get("tags", {}).get("function", config["problem"]), dim=int(config["dim"]), instance=instance,
        repeat=int(row["repeat"]), dtype=config.get("dtype", "float32"), optimum_f=optimum, evals=int(row["evals"]),
        best_f=float(row["best_f"]), best_x=tuple(float(v) for v in row["best_x"]), best_evals=best_evals,
        points=tuple(ordered), exact=exact)


def _info(config: dict, row: dict, algo) -> str:
    """'heuriscale 0.1.0: pso (pop_size=40, w=0.7298, ...), float64 on <device name>', one line."""
    params = {k: v for k, v in algo.params().items() if v is not None}
    settings = ", ".join([f"preset {config['preset']}"] * bool(config.get("preset")) +
                         [f"{k}={v!r}" for k, v in params.items()])
    text = (f"heuriscale {__version__}: {config['algorithm']}{f' ({settings})' if settings else ''}, "
            f"{config.get('dtype', '')} on {row.get('device_name') or row.get('device', '')}")
    return re.sub(r"\s+", " ", text)


def function_number(problem: str) -> int | None:
    """The number a problem's name ends with (bbob-f7 -> 7, cec2022-f12 -> 12), if any."""
    m = re.search(r"-f(\d+)$", problem)
    return int(m.group(1)) if m else None
