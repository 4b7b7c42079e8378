"""The DTLZ problems (Deb, Thiele, Laumanns and Zitzler 2005): any number M >= 2 of objectives.

Written as pymoo 0.6.2 writes them (`pymoo.problems.many.dtlz`), in torch and vectorised over
every leading dimension: `evaluate(x[..., D])` returns `f[..., M]` on the device and in the
dtype of `x`. The first M - 1 variables place a point on the front, the last k = D - M + 1
measure its distance to it (g). The default k is the paper's (5 for DTLZ1, 10 for DTLZ2-6,
20 for DTLZ7), so DTLZ2 with M = 3 has D = 12; pymoo's classes default to D = 7 for DTLZ1
(the same) and D = 10 for the others, which `dim=10` gives.

Pareto fronts, as pymoo builds them:
- DTLZ1-4: Das-Dennis points on the simplex (DTLZ1: halved; DTLZ2-4: projected on the unit
  sphere). pymoo's default is 100 points for M = 2 and 15 partitions (136 points) for M = 3;
  pymoo has none for M > 3, where the default here is the most partitions giving at most
  1,000 points. `n` gives the most partitions with at most `n` points.
- DTLZ5, 6: the degenerate curve (theta_1 free, the other angles pi/4), `n` = 500 points.
  pymoo computes it so for M > 3 and downloads a file for M = 3; here it is computed for
  every M.
- DTLZ7: pymoo's sample of the front's surface (20 n uniform points of the first M - 1
  objectives, seed 42, n = 500), of which only the mutually non-dominated points are kept
  (pymoo keeps every point with f_M >= 0, dominated ones included, and downloads a file for
  M = 3).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import torch

from .base import Problem, check_dim, is_integer

Tensor = torch.Tensor

#: The paper's k (distance variables) of each problem: D = M + k - 1.
DEFAULT_K = {"dtlz1": 5, "dtlz2": 10, "dtlz3": 10, "dtlz4": 10, "dtlz5": 10, "dtlz6": 10, "dtlz7": 20}


def _g_multimodal(tail: Tensor) -> Tensor:
    """DTLZ1 and 3's g: Rastrigin-like, 11^k - 1 local fronts, 0 at x_M = 0.5."""
    shifted = tail - 0.5
    return 100.0 * (tail.shape[-1] + (shifted * shifted - torch.cos(20.0 * math.pi * shifted)).sum(-1))


def _g_sphere(tail: Tensor) -> Tensor:
    """DTLZ2, 4 and 5's g: the squared distance of x_M to 0.5."""
    shifted = tail - 0.5
    return (shifted * shifted).sum(-1)


def _on_sphere(angles: Tensor, g: Tensor, alpha: float = 1.0) -> Tensor:
    """f_i = (1 + g) prod_{j < M-1-i} cos(a_j pi/2) * sin(a_{M-1-i} pi/2) (no sine for i = 0),
    with a = angles ** alpha: the spherical front scaled by 1 + g."""
    a = angles if alpha == 1.0 else angles**alpha
    # cos of an angle in [0, pi/2] is >= 0, but in float32 cos(fl(pi/2)) = -4.4e-8: points on the
    # box's edge (a = 1, where SBX and PM clip) would then be better in that objective the larger
    # their g, and such points, extreme and non-dominated, stayed in NSGA-II's fronts (float64's
    # cos(fl(pi/2)) = 6.1e-17 > 0 is unchanged, so the values stay pymoo's)
    cos, sin = torch.cos(a * (math.pi / 2)).clamp(min=0), torch.sin(a * (math.pi / 2))
    ones = torch.ones_like(g).unsqueeze(-1)
    cos_prefix = torch.cat([ones, cos.cumprod(-1)], -1)  # products of the first 0 .. M-1 cosines
    last_sin = torch.cat([ones, sin.flip(-1)], -1)
    return (1.0 + g).unsqueeze(-1) * cos_prefix.flip(-1) * last_sin


def _on_simplex(head: Tensor, g: Tensor) -> Tensor:
    """DTLZ1's f_i = (1 + g) / 2 * prod_{j < M-1-i} x_j * (1 - x_{M-1-i}) (no last factor for i = 0)."""
    ones = torch.ones_like(g).unsqueeze(-1)
    prefix = torch.cat([ones, head.cumprod(-1)], -1)
    last = torch.cat([ones, (1.0 - head).flip(-1)], -1)
    return (0.5 * (1.0 + g)).unsqueeze(-1) * prefix.flip(-1) * last


def _degenerate_angles(x: Tensor, g: Tensor) -> Tensor:
    """DTLZ5 and 6: x_1 is free, the other angles are pulled towards 1/2 (pi/4) as g -> 0."""
    theta = (1.0 + 2.0 * g.unsqueeze(-1) * x[..., 1:]) / (2.0 * (1.0 + g.unsqueeze(-1)))
    return torch.cat([x[..., :1], theta], -1)


def dtlz(name: str, x: Tensor, objectives: int, alpha: float = 100.0) -> Tensor:
    """DTLZ `name`'s objectives f[..., M] at x[..., D] (`alpha`: DTLZ4's bias)."""
    head, tail = x[..., : objectives - 1], x[..., objectives - 1 :]
    if name == "dtlz1":
        return _on_simplex(head, _g_multimodal(tail))
    if name == "dtlz2":
        return _on_sphere(head, _g_sphere(tail))
    if name == "dtlz3":
        return _on_sphere(head, _g_multimodal(tail))
    if name == "dtlz4":
        return _on_sphere(head, _g_sphere(tail), alpha)
    if name == "dtlz5":
        g = _g_sphere(tail)
        return _on_sphere(_degenerate_angles(head, g), g)
    if name == "dtlz6":
        g = (tail**0.1).sum(-1)
        return _on_sphere(_degenerate_angles(head, g), g)
    # dtlz7: f_i = x_i for i < M; f_M = (1 + g) h, disconnected front pieces
    g = 1.0 + 9.0 / tail.shape[-1] * tail.sum(-1)
    h = objectives - (head / (1.0 + g.unsqueeze(-1)) * (1.0 + torch.sin(3.0 * math.pi * head))).sum(-1)
    return torch.cat([head, ((1.0 + g) * h).unsqueeze(-1)], -1)


def das_dennis(partitions: int, objectives: int) -> np.ndarray:
    """Das and Dennis's points on the unit simplex: every w >= 0 with sum 1 whose coordinates
    are multiples of 1 / `partitions`, C(partitions + M - 1, M - 1) of them, in pymoo's
    (lexicographic) order."""
    # stars and bars: the positions of M - 1 bars among partitions + M - 1 slots
    rows = []
    for bars in itertools.combinations(range(partitions + objectives - 1), objectives - 1):
        edges = (-1, *bars, partitions + objectives - 1)
        rows.append([edges[i + 1] - edges[i] - 1 for i in range(objectives)])
    points = np.asarray(rows, dtype=np.float64) / partitions
    return points[np.lexsort(points.T[::-1])]


def simplex_partitions(n: int, objectives: int) -> int:
    """The most Das-Dennis partitions giving at most `n` points (at least 1)."""
    partitions = 1
    while math.comb(partitions + 1 + objectives - 1, objectives - 1) <= n:
        partitions += 1
    return partitions


def _default_simplex_points(objectives: int) -> int:
    return {2: 100, 3: 136}.get(objectives, 1000)


def _degenerate_curve(n: int, objectives: int) -> np.ndarray:
    """DTLZ5 and 6's front: the sphere's points with theta_1 in [0, pi/2] and the others pi/4."""
    theta = np.column_stack([np.linspace(0.0, np.pi / 2, n)] + [np.full(n, np.pi / 4)] * (objectives - 2))
    cos, sin = np.cos(theta), np.sin(theta)
    front = np.ones((n, objectives))
    for i in range(objectives):
        front[:, i] = np.prod(cos[:, : objectives - 1 - i], axis=1)
        if i > 0:
            front[:, i] *= sin[:, objectives - 1 - i]
    return front


def _dtlz7_front(n: int, objectives: int) -> np.ndarray:
    """pymoo's sample of DTLZ7's surface f_M = 2 M - sum f_i (1 + sin(3 pi f_i)), non-dominated part."""
    import moocore

    first = np.random.default_rng(42).random((n * 20, objectives - 1))
    last = 2 * objectives - np.sum(first * (1 + np.sin(3 * np.pi * first)), axis=1)
    surface = np.column_stack([first[last >= 0], last[last >= 0]])
    return surface[moocore.is_nondominated(surface)]


class DTLZ(Problem):
    """DTLZ1-7 with `objectives` = M >= 2 objectives in dimension `dim` (> M - 1; default M + k - 1
    with the paper's k). `alpha` is DTLZ4's bias exponent (100, the paper's)."""

    def __init__(self, name: str, dim: int | None = None, objectives: int = 3, alpha: float = 100.0) -> None:
        if name not in DEFAULT_K:
            raise ValueError(f"unknown DTLZ problem {name!r}: choose one of {', '.join(DEFAULT_K)}")
        if not is_integer(objectives) or objectives < 2:
            raise ValueError(f"problem {name!r} needs objectives >= 2 (an integer), got {objectives!r}")
        objectives = int(objectives)
        dim = check_dim(objectives + DEFAULT_K[name] - 1 if dim is None else dim)
        if dim < objectives:
            raise ValueError(
                f"problem {name!r} with {objectives} objectives needs dimension >= {objectives} "
                f"(M - 1 position variables and at least one distance variable), got {dim}"
            )
        if not (isinstance(alpha, (int, float)) and not isinstance(alpha, bool) and math.isfinite(alpha) and alpha > 0):
            raise ValueError(f"DTLZ4's alpha must be a positive number, got {alpha!r}")
        super().__init__(dim, 0.0, 1.0)
        self.name, self.objectives, self.alpha = name, objectives, float(alpha)

    def evaluate(self, x: Tensor) -> Tensor:
        return dtlz(self.name, x, self.objectives, self.alpha)

    def pareto_front(self, n: int | None = None) -> Tensor:
        """The true front as pymoo builds it (see the module's docstring for `n`)."""
        m = self.objectives
        if n is not None and (not is_integer(n) or n < 2):
            raise ValueError(f"the number of front points must be an integer >= 2, got {n!r}")
        if self.name in ("dtlz5", "dtlz6"):
            front = _degenerate_curve(500 if n is None else int(n), m)
        elif self.name == "dtlz7":
            front = _dtlz7_front(500 if n is None else int(n), m)
        else:
            simplex = das_dennis(simplex_partitions(_default_simplex_points(m) if n is None else int(n), m), m)
            if self.name == "dtlz1":
                front = 0.5 * simplex
            else:
                front = simplex / np.linalg.norm(simplex, axis=1, keepdims=True)
        if m == 2:  # pymoo sorts two-objective fronts by f1
            front = front[np.argsort(front[:, 0], kind="stable")]
        return torch.from_numpy(np.ascontiguousarray(front))

    def describe(self) -> dict:
        described = super().describe()
        if self.name == "dtlz4":
            described["alpha"] = self.alpha
        return described
