"""Quality indicators of a set of objective vectors (all objectives minimised): hypervolume,
IGD, IGD+ and GD, with pymoo 0.6.2's definitions and values.

Each takes `F` of shape (n, M), a NumPy array or a torch tensor (any device), and returns a
Python float:

- `hypervolume(F, ref)`: the volume dominated by F and bounded by the reference point `ref`
  (higher is better), exact for any M (moocore's C code, which pymoo calls too). Points that
  do not strictly dominate `ref` add nothing.
- `igd(F, reference)`: the mean, over the points of `reference` (a sample of the true
  Pareto front, `Problem.pareto_front()`), of the Euclidean distance to the nearest point
  of F (lower is better).
- `igd_plus(F, reference)`: IGD with the distance counting only where F is worse than the
  reference point (Ishibuchi et al. 2015): Pareto compliant.
- `gd(F, reference)`: the mean, over F, of the distance to the nearest reference point.

Rows with a NaN or an infinity are dropped first: a point that failed to evaluate never
counts as a good one. A set with no such row left has hypervolume 0 and IGD, IGD+ and GD
infinite (pymoo gives 0 for every indicator of an empty set, which would make "nothing"
the best IGD).

`hypervolume` and `igd` also take run sets, (runs, n, M) tensors with an optional boolean
`mask` (runs, n) of the rows that count, and return one value per run, (runs,), on F's
device: for M = 2 the hypervolume is a sort and a cumulative minimum in torch, and IGD is
a distance matrix, with no host synchronisation; for M > 2 the hypervolume is computed run
by run by moocore on the host.
"""

from __future__ import annotations

import math

import numpy as np
import torch

ArrayLike = np.ndarray | torch.Tensor


def hypervolume(F: ArrayLike, ref, mask: ArrayLike | None = None):
    """The hypervolume of F (n, M) bounded by `ref` (M,), as pymoo's `HV(ref_point=ref)(F)`;
    for a run set F (runs, n, M) (with `mask` (runs, n) of the rows that count), one value
    per run: exact, in torch without a host synchronisation for M = 2, run by run by moocore
    on the host for M > 2."""
    if _ndim(F) == 3:
        return _batched_hypervolume(F, ref, mask)
    _no_mask(mask, "hypervolume")
    points = _finite_rows(_as_points(F, "F"))
    ref = _as_ref(ref, points.shape[1])
    return _moocore_hypervolume(points, ref)


def igd(F: ArrayLike, reference: ArrayLike, mask: ArrayLike | None = None):
    """Inverted generational distance of F (n, M) to the `reference` set (R, M), as pymoo's
    `IGD(reference)(F)`; for a run set F (runs, n, M) (with `mask` (runs, n)), one value per run,
    in torch on F's device."""
    if _ndim(F) == 3:
        return _batched_igd(F, reference, mask)
    _no_mask(mask, "igd")
    import moocore

    return _distance(F, reference, lambda points, ref: moocore.igd(points, ref=ref))


def igd_plus(F: ArrayLike, reference: ArrayLike) -> float:
    """IGD+ of F (n, M) to the `reference` set (R, M), as pymoo's `IGDPlus(reference)(F)`."""
    import moocore

    return _distance(F, reference, lambda points, ref: moocore.igd_plus(points, ref=ref))


def gd(F: ArrayLike, reference: ArrayLike) -> float:
    """Generational distance of F (n, M) to the `reference` set (R, M), as pymoo's `GD(reference)(F)`."""
    from scipy.spatial.distance import cdist

    return _distance(F, reference, lambda points, ref: cdist(points, ref).min(axis=1).mean())


def _distance(F: ArrayLike, reference: ArrayLike, indicator) -> float:
    """`indicator(points, reference)` on F's finite rows; inf when none is left."""
    points = _finite_rows(_as_points(F, "F"))
    reference = _as_reference(reference, points.shape[1])
    return math.inf if len(points) == 0 else float(indicator(points, reference))


# -- run sets --


def _batched_hypervolume(F: ArrayLike, ref, mask: ArrayLike | None):
    F = _as_run_set(F)
    runs, n, m = F.shape
    ref_t = _as_run_refs(ref, runs, m, F.device)
    valid = _valid_rows(F, mask)
    if m != 2:
        # moocore per run on the host: exact for any M, at the cost of a copy of each run
        values = [
            _moocore_hypervolume(F[r][valid[r]].detach().cpu().double().numpy(), ref_t[r].cpu().numpy())
            for r in range(runs)
        ]
        return torch.tensor(values, dtype=torch.float64, device=F.device)
    points = F.detach().to(torch.float64)
    # rows that do not count, or do not strictly dominate the reference point, sit on it: they add nothing
    inside = valid & (points < ref_t[:, None, :]).all(-1)
    points = torch.where(inside[..., None], points, ref_t[:, None, :].expand_as(points))
    f1, order = points[..., 0].sort(-1)
    f2 = points[..., 1].gather(-1, order)
    # between consecutive f1 values, the dominated height is ref_2 minus the lowest f2 so far
    widths = torch.cat([f1[:, 1:], ref_t[:, :1]], -1) - f1
    heights = ref_t[:, 1:2] - f2.cummin(-1).values
    return (widths * heights).sum(-1)


def _batched_igd(F: ArrayLike, reference: ArrayLike, mask: ArrayLike | None) -> torch.Tensor:
    F = _as_run_set(F)
    runs, n, m = F.shape
    ref_t = torch.as_tensor(_as_reference(reference, m), device=F.device)
    valid = _valid_rows(F, mask)
    points = torch.where(valid[..., None], F.detach().to(torch.float64), 0.0)
    # exact distances (the matrix-product shortcut loses digits); (runs, R, n)
    dist = torch.cdist(ref_t.expand(runs, -1, -1), points, compute_mode="donot_use_mm_for_euclid_dist")
    dist = dist.masked_fill(~valid[:, None, :], math.inf)
    return dist.amin(-1).mean(-1)


def _valid_rows(F: torch.Tensor, mask: ArrayLike | None) -> torch.Tensor:
    """The rows that count: in the mask (when given) and finite in every objective."""
    valid = torch.isfinite(F).all(-1)
    if mask is None:
        return valid
    mask = torch.as_tensor(mask, device=F.device)
    if mask.dtype != torch.bool or tuple(mask.shape) != tuple(F.shape[:2]):
        raise ValueError(
            f"mask must be a boolean tensor of shape {tuple(F.shape[:2])} (runs, points), "
            f"got {str(mask.dtype).removeprefix('torch.')} of shape {tuple(mask.shape)}"
        )
    return valid & mask


def _as_run_set(F: ArrayLike) -> torch.Tensor:
    F = torch.as_tensor(F) if isinstance(F, np.ndarray) else F
    if not isinstance(F, torch.Tensor) or not (F.dtype.is_floating_point or _is_integer_dtype(F.dtype)):
        raise ValueError(f"F must be a real (runs, n, M) tensor or array, got {_what(F)}")
    if F.shape[-1] < 1:
        raise ValueError(f"F has shape {tuple(F.shape)}: it needs at least one objective (runs, n, M)")
    return F


def _as_run_refs(ref, runs: int, m: int, device: torch.device) -> torch.Tensor:
    """The reference point, (M,) for every run or (runs, M), as float64 on `device`."""
    t = torch.from_numpy(_to_numpy(ref, "ref"))
    if t.shape == (m,):
        t = t.expand(runs, m)
    if tuple(t.shape) != (runs, m) or not torch.isfinite(t).all():
        raise ValueError(
            f"ref must be {m} finite numbers (one per objective) or a ({runs}, {m}) tensor (one per run), "
            f"got shape {tuple(t.shape)}"
        )
    return t.to(device)


# -- checks and conversions --


def _moocore_hypervolume(points: np.ndarray, ref: np.ndarray) -> float:
    if len(points) == 0:
        return 0.0
    import moocore

    return float(moocore.hypervolume(points, ref=ref))


def _ndim(F) -> int:
    return F.ndim if isinstance(F, (np.ndarray, torch.Tensor)) else np.ndim(F)


def _no_mask(mask, who: str) -> None:
    if mask is not None:
        raise ValueError(f"{who}: mask goes with a run set F (runs, n, M); for one set (n, M), select its rows")


def _is_integer_dtype(dtype) -> bool:
    return dtype in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


def _what(value) -> str:
    if isinstance(value, (np.ndarray, torch.Tensor)):
        return f"{type(value).__name__} of dtype {str(value.dtype).removeprefix('torch.')} and shape {tuple(value.shape)}"
    return f"a value of type {type(value).__name__}"


def _to_numpy(value, what: str) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu()
        if value.dtype.is_complex or value.dtype == torch.bool:
            raise ValueError(f"{what} must hold real numbers, got {_what(value)}")
        return value.double().numpy()
    try:
        array = np.asarray(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a NumPy array or torch tensor of real numbers, got {_what(value)}") from None
    if array.dtype.kind not in "iuf":
        raise ValueError(f"{what} must hold real numbers, got {_what(value)}")
    return array.astype(np.float64)


def _as_points(F, what: str) -> np.ndarray:
    """F as a float64 (n, M) array, or a one-line error."""
    array = _to_numpy(F, what)
    if array.ndim != 2 or array.shape[1] < 1:
        raise ValueError(
            f"{what} must have shape (n, M), one row per point and one column per objective "
            f"(or (runs, n, M) for a run set), got shape {array.shape}"
        )
    return array


def _finite_rows(points: np.ndarray) -> np.ndarray:
    return points[np.isfinite(points).all(axis=1)]


def _as_ref(ref, m: int) -> np.ndarray:
    array = _to_numpy(ref, "ref")
    if array.shape != (m,) or not np.isfinite(array).all():
        raise ValueError(f"ref must be {m} finite numbers, one per objective of F, got {array.tolist()!r}")
    return array


def _as_reference(reference, m: int) -> np.ndarray:
    array = _to_numpy(reference, "reference")
    if array.ndim != 2 or array.shape[1] != m or len(array) == 0:
        raise ValueError(
            f"reference must be a non-empty (R, {m}) set of points with as many objectives as F "
            f"(e.g. problem.pareto_front()), got shape {array.shape}"
        )
    if not np.isfinite(array).all():
        raise ValueError("reference has NaN or infinite values: it must be points of the true front")
    return array
