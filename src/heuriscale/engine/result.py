"""`Result`: what a finished run set returns, convertible to NumPy and JSON."""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch


@dataclass
class Result:
    """Per-run outcomes of `runs` independent runs (tensors on the CPU).

    `best_f[r]` is the lowest finite value run `r` ever evaluated (`inf` if it never got
    one) and `best_x[r]` the point it was evaluated at. `history_f[r, k]` is run r's
    best-so-far after iteration `history_iter[k]` (iteration 0 = the initial population).
    """

    best_f: torch.Tensor  # (runs,)
    best_x: torch.Tensor  # (runs, dim)
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
    extra: dict = field(default_factory=dict)

    @property
    def runs(self) -> int:
        return int(self.best_f.shape[0])

    @property
    def best_run(self) -> int:
        return int(torch.argmin(self.best_f))

    @property
    def best(self) -> float:
        """The lowest value over all runs."""
        return float(self.best_f.min())

    @property
    def x(self) -> torch.Tensor:
        """The point of the lowest value over all runs."""
        return self.best_x[self.best_run]

    def summary(self) -> dict[str, float]:
        """Statistics of the final best values over runs."""
        f = self.best_f.double()
        return {
            "best": float(f.min()),
            "median": float(f.quantile(0.5)),
            "worst": float(f.max()),
            "mean": float(f.mean()),
            "std": float(f.std()) if self.runs > 1 else 0.0,
        }

    def to_numpy(self) -> dict:
        """Every field, tensors as NumPy arrays."""
        return {k: (v.numpy() if isinstance(v, torch.Tensor) else v) for k, v in self._fields().items()}

    def to_dict(self) -> dict:
        """JSON-ready: tensors as (nested) lists, non-finite numbers as strings; a run that never
        reached the target has evals_to_target None (null), not the tensor's -1."""
        out = {k: (_jsonable(v.tolist()) if isinstance(v, torch.Tensor) else v) for k, v in self._fields().items()}
        if out.get("evals_to_target") is not None:
            out["evals_to_target"] = [None if e < 0 else e for e in out["evals_to_target"]]
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
        for key in ("best_f", "best_x", "history_f"):
            data[key] = torch.tensor(_unjsonable(data[key]), dtype=torch.float64)
        if data.get("evals_to_target") is not None:  # null: not reached, -1 in the tensor
            data["evals_to_target"] = [-1 if e is None else e for e in data["evals_to_target"]]
        for key in ("nan_evals", "history_iter", "evals_to_target"):
            if data.get(key) is not None:
                data[key] = torch.tensor(data[key], dtype=torch.int64)
        return cls(**data)

    def _fields(self) -> dict:
        return {k: getattr(self, k) for k in asdict(self).keys()} | {"runs": self.runs}

    def __repr__(self) -> str:
        s = self.summary()
        return (
            f"Result({self.algorithm.get('name')} on {self.problem.get('name')}, runs={self.runs}, "
            f"best={s['best']:.6g}, median={s['median']:.6g}, evals={self.evals}, "
            f"wall_time={self.wall_time:.3f}s, device={self.device})"
        )


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
