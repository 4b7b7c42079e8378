"""`Result`: what a finished run set returns, convertible to NumPy and JSON."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field, fields
from pathlib import Path

import torch


@dataclass
class Result:
    """Per-run outcomes of `runs` independent runs (tensors on the CPU).

    `best_f[r]` is the lowest finite value run `r` ever evaluated (`inf` if it never got
    one) and `best_x[r]` the point it was evaluated at. `history_f[r, k]` is run r's
    best-so-far after iteration `history_iter[k]` (iteration 0 = the initial population),
    that is after `history_evals[k]` evaluations.

    Milestones (`engine/history.py`, recorded at every iteration): `first_f[r]`, the value of
    run r's first evaluation; `best_evals[r]`, the evaluations after which `best_f[r]` was
    first reached; with a known optimum f*, `hit_evals[r, j]`, the evaluations after which
    run r's best-so-far first came within 10^(k/5) of f* (k = `TARGET_EXPONENTS[j]`, 40 down
    to -40; -1: never), and `hit_f[r, j]` that best-so-far (`inf`: never). Counts are at the
    end of the iteration that reached them. None in results saved before they existed.

    Several objectives (`objectives` = M > 1): there is no single best, so `best_f`,
    `best_x`, `first_f`, `best_evals` and the milestones are None, and `best`, `x` and
    `best_run` raise. `front_x[r]` (k_r, D) and `front_f[r]` (k_r, M) are run r's final
    front: the non-dominated points of its final population (pymoo's convention) among those
    with every objective finite and, for a constrained problem, feasible; one tensor per
    run, as runs hold fronts of different sizes. `ref_point` (M,) is the hypervolume's
    reference point (the `ref` given, else the problem's Pareto front's nadir x 1.1, else
    None), `history_hv[r, k]` the hypervolume of run r's population after iteration
    `history_iter[k]` (higher is better) and `history_igd[r, k]` its IGD to the problem's
    Pareto front (None where the problem has none); `hv` and `igd` (runs,) are the final
    values. `history_f` is `history_hv` (or `history_igd` without a reference point).
    `summary()` gives statistics of `hv` and `igd` and of the front sizes.
    """

    best_f: torch.Tensor | None  # (runs,); None with several objectives
    best_x: torch.Tensor | None  # (runs, dim); None with several objectives
    evals: int  # evaluations per run
    nan_evals: torch.Tensor  # (runs,) evaluations that returned NaN (treated as +inf)
    iterations: int
    history_iter: torch.Tensor  # (T,)
    history_f: torch.Tensor  # (runs, T)
    wall_time: float  # seconds, with device synchronisation, init included
    device: str
    device_name: str
    dtype: str
    seed: int
    problem: dict
    algorithm: dict
    stop_reason: str
    evals_to_target: torch.Tensor | None = None  # (runs,), -1 where the target was not reached (None in JSON)
    history_evals: torch.Tensor | None = None  # (T,) evaluations per run after history_iter
    first_f: torch.Tensor | None = None  # (runs,) each run's first evaluated value
    best_evals: torch.Tensor | None = None  # (runs,) evaluations when best_f was first reached
    hit_evals: torch.Tensor | None = None  # (runs, K) known optimum: first within each target, -1 never (None in JSON)
    hit_f: torch.Tensor | None = None  # (runs, K) the best-so-far then (inf: never)
    objectives: int = 1  # M; the fields below only for M > 1 (None otherwise)
    front_x: list[torch.Tensor] | None = None  # per run (k_r, dim): the final non-dominated points
    front_f: list[torch.Tensor] | None = None  # per run (k_r, M): their values
    ref_point: torch.Tensor | None = None  # (M,) the hypervolume's reference point
    history_hv: torch.Tensor | None = None  # (runs, T) hypervolume after history_iter
    history_igd: torch.Tensor | None = None  # (runs, T) IGD to the problem's Pareto front
    hv: torch.Tensor | None = None  # (runs,) final hypervolume
    igd: torch.Tensor | None = None  # (runs,) final IGD
    extra: dict = field(default_factory=dict)

    @property
    def runs(self) -> int:
        return len(self.front_f) if self.objectives > 1 else int(self.best_f.shape[0])

    @property
    def best_run(self) -> int:
        self._one_objective("best_run")
        return int(torch.argmin(self.best_f))

    @property
    def best(self) -> float:
        """The lowest value over all runs."""
        self._one_objective("best")
        return float(self.best_f.min())

    @property
    def x(self) -> torch.Tensor:
        """The point of the lowest value over all runs."""
        self._one_objective("x")
        return self.best_x[self.best_run]

    def _one_objective(self, what: str) -> None:
        if self.objectives > 1:
            raise ValueError(f"result.{what} is defined for one objective; this result has {self.objectives}: "
                             "read front_x / front_f (each run's non-dominated set), hv and igd")

    def summary(self) -> dict[str, float]:
        """Statistics over runs: of the final best values, or with several objectives of the
        final hypervolume (`hv_min`, `hv_median`, `hv_max`, `hv_mean`, `hv_std`), IGD (`igd_*`)
        and front sizes (`front_size_*`)."""
        if self.objectives > 1:
            out = {}
            sizes = torch.tensor([len(f) for f in self.front_f], dtype=torch.float64)
            for key, values in (("hv", self.hv), ("igd", self.igd), ("front_size", sizes)):
                if values is not None:
                    out.update({f"{key}_{k}": v for k, v in _statistics(values.double(), self.runs).items()})
            return out
        f = self.best_f.double()
        return {
            "best": float(f.min()),
            "median": float(f.quantile(0.5)),
            "worst": float(f.max()),
            "mean": float(f.mean()),
            "std": float(f.std()) if self.runs > 1 else 0.0,
        }

    def to_numpy(self) -> dict:
        """Every field, tensors as NumPy arrays (fronts: a list of arrays, one per run)."""
        arrays = lambda v: [t.numpy() for t in v] if isinstance(v, list) and v and isinstance(v[0], torch.Tensor) else v  # noqa: E731
        return {k: (v.numpy() if isinstance(v, torch.Tensor) else arrays(v)) for k, v in self._fields().items()}

    def to_dict(self) -> dict:
        """JSON-ready: tensors as (nested) lists, non-finite numbers as strings; a run that never
        reached a target has its evals_to_target / hit_evals None (null), not the tensor's -1;
        fronts as one list of points per run."""
        out = {k: (_jsonable(plain) if (plain := _plain(v)) is not v else v) for k, v in self._fields().items()}
        for key in _NOT_REACHED:
            if out.get(key) is not None:
                out[key] = _each(out[key], lambda e: None if e < 0 else e)
        out["summary"] = _jsonable(self.summary())
        return out

    def save_json(self, path: str | os.PathLike) -> Path:
        """Write `to_dict()` atomically (a half-written file never replaces a good one)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)  # e.g. `--json runs/pso.json` on a fresh clone
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1))
        os.replace(tmp, path)
        return path

    @classmethod
    def load_json(cls, path: str | os.PathLike) -> Result:
        data = json.loads(Path(path).read_text())
        data.pop("summary", None)
        data.pop("runs", None)
        for key in ("best_f", "best_x", "history_f", "first_f", "hit_f", "ref_point", "history_hv", "history_igd",
                    "hv", "igd"):
            if data.get(key) is not None:
                data[key] = torch.tensor(_unjsonable(data[key]), dtype=torch.float64)
        for key, width in (("front_x", data["problem"].get("dim")), ("front_f", data.get("objectives", 1))):
            if data.get(key) is not None:
                data[key] = [torch.tensor(_unjsonable(run), dtype=torch.float64).reshape(-1, width)
                             for run in data[key]]
        for key in _NOT_REACHED:  # null: not reached, -1 in the tensor
            if data.get(key) is not None:
                data[key] = _each(data[key], lambda e: -1 if e is None else e)
        for key in ("nan_evals", "history_iter", "evals_to_target", "history_evals", "best_evals", "hit_evals"):
            if data.get(key) is not None:
                data[key] = torch.tensor(data[key], dtype=torch.int64)
        return cls(**data)

    def _fields(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)} | {"runs": self.runs}

    def __repr__(self) -> str:
        s = self.summary()
        if self.objectives > 1:
            hv = f", median hv={s['hv_median']:.6g}" if "hv_median" in s else ""
            igd = f", median igd={s['igd_median']:.6g}" if "igd_median" in s else ""
            return (f"Result({self.algorithm.get('name')} on {self.problem.get('name')}, runs={self.runs}, "
                    f"objectives={self.objectives}{hv}{igd}, median front size={s['front_size_median']:g}, "
                    f"evals={self.evals}, wall_time={self.wall_time:.3f}s, device={self.device})")
        return (
            f"Result({self.algorithm.get('name')} on {self.problem.get('name')}, runs={self.runs}, "
            f"best={s['best']:.6g}, median={s['median']:.6g}, evals={self.evals}, "
            f"wall_time={self.wall_time:.3f}s, device={self.device})"
        )


#: Evaluation counts whose -1 (never reached) is null in JSON.
_NOT_REACHED = ("evals_to_target", "hit_evals")


def _statistics(values: torch.Tensor, runs: int) -> dict[str, float]:
    return {"min": float(values.min()), "median": float(values.quantile(0.5)), "max": float(values.max()),
            "mean": float(values.mean()), "std": float(values.std()) if runs > 1 else 0.0}


def _plain(value):
    """A field as plain data: tensors as (nested) lists, a list of tensors (fronts) as lists."""
    if isinstance(value, torch.Tensor):
        return value.tolist()
    if isinstance(value, list) and value and isinstance(value[0], torch.Tensor):
        return [v.tolist() for v in value]
    return value


def _each(value, fn):
    """`fn` applied to every number of a (nested) list."""
    return [_each(v, fn) for v in value] if isinstance(value, list) else fn(value)


def _jsonable(value):
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # 'inf', '-inf', 'nan': JSON has no such numbers
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value


def _unjsonable(value):
    if isinstance(value, str):
        return float(value)
    if isinstance(value, list):
        return [_unjsonable(v) for v in value]
    return value


def solution_report(problem, best_x: torch.Tensor, best_f: torch.Tensor) -> dict:
    """Feasibility of each run's best point (constrained problems) and a readable best solution."""
    problem = problem.to("cpu", torch.float64)
    x = best_x.detach().cpu().double()
    report = {"solution": problem.decode(x[int(torch.argmin(best_f))])}
    if problem.n_constraints:
        g = problem.constraints(x)
        report["max_violation"] = g.clamp(min=0).amax(-1).tolist()
        report["feasible"] = (g <= 0).all(-1).tolist()
        if hasattr(problem, "objective"):
            report["objective"] = problem.objective(x).tolist()
    return report
