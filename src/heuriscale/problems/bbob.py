"""COCO's 24 noiseless `bbob` functions, vectorised in torch, equal to COCO's C code.

Hansen, Finck, Ros & Auger, "Real-Parameter Black-Box Optimization Benchmarking 2009:
Noiseless Functions Definitions", INRIA RR-6829 defines them; COCO's C code (`suite_bbob.c`
and the `f_*.c`, `transform_vars_*.c`, `transform_obj_*.c` files of numbbo/coco-experiment)
is the reference this module follows, quirks included:

- each function is COCO's chain of transformations, applied to x from the outermost in:
  e.g. f3 = Rastrigin(Lambda^10 T_asy^0.2(T_osz(x - xopt))) + fopt;
- T_osz and the objective oscillation are computed as exp(0.1 (t + ...)) rather than COCO's
  exp(t + ...)^0.1 (equal up to rounding), so that float32 does not overflow (`oscillate`);
- f4 takes |xopt| on its coordinates 1, 3, 5, ... (counted from 1; COCO's legacy code, not
  the definitions), and its BRS factor 10 applies to those coordinates;
- f7 rounds the rotated point (|z| > 0.5: to the integer, else to 0.1), and takes
  max(|z_1| 1e-4, ...) with the first coordinate before rounding;
- f12 draws its xopt with the seed of its rotation (rseed + 1000000);
- f18 has f17's xopt, rotations and fopt (COCO seeds it as function 17);
- f20's optimum is COCO's best_parameter, the rounding of 4.2096874633 / 2, not the
  definitions' 4.2096874637 / 2 (both evaluate to fopt here, to the last bit);
- f4, f16, f17, f18 and f23 add a penalty outside [-5, 5] (factors 100, 10 / D, 10, 10, 1),
  f7, f20, f21, f22 and f24 compute one inside;
- as COCO's top-level evaluation: a point with an inf coordinate has value inf, one with a
  NaN (and no inf) NaN.

Instance data (xopt, fopt, rotations, peaks) come from COCO's own generator
(`bbob_instances`), so that `BBOB(f, dim, instance)` equals cocoex's `bbob_f<f>_i<instance>_
d<dim>`; tests/test_bbob.py checks it against cocoex on every function, instances 1-15 and
D = 2, 3, 5, 10, 20, 40.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from .base import Problem, check_dim, is_integer
from .bbob_instances import MAX_INSTANCE, MAX_ROTATED_DIM, UNROTATED, instance_data

Tensor = torch.Tensor

NAMES = {
    1: "sphere", 2: "separable ellipsoid", 3: "separable Rastrigin", 4: "Bueche-Rastrigin", 5: "linear slope",
    6: "attractive sector", 7: "step ellipsoid", 8: "Rosenbrock", 9: "rotated Rosenbrock", 10: "ellipsoid",
    11: "discus", 12: "bent cigar", 13: "sharp ridge", 14: "different powers", 15: "Rastrigin",
    16: "Weierstrass", 17: "Schaffer F7", 18: "ill-conditioned Schaffer F7", 19: "Griewank-Rosenbrock F8F2",
    20: "Schwefel x sin(x)", 21: "Gallagher 101 peaks", 22: "Gallagher 21 peaks", 23: "Katsuura",
    24: "Lunacek bi-Rastrigin",
}
#: COCO's standard dimensions (the suite's); any D >= 2 that COCO's generator defines works.
DIMS = (2, 3, 5, 10, 20, 40)
TWO_PI = 2.0 * 3.14159265358979323846  # coco_two_pi
#: The instance data applied as matrices (z = M x, rows first; Gallagher's scales and offsets
#: multiply from the right as M^T).
MATRICES = frozenset({"m", "r", "lambda_q", "scales", "scaled_offsets"})


class BBOB(Problem):
    """COCO's bbob function `function` (1-24), instance `instance` (>= 1), dimension `dim` (>= 2;
    at most 44 for the functions with a rotation) on [-5, 5]^D.

    `optimum_f` is the instance's fopt and `optimum_x` COCO's best_parameter; `coco_id` is
    COCO's name of the problem ("bbob_f001_i01_d02").

    `instance` may also be a list of instances, one per run (COCO's trials: a run set of 15
    runs on instances 1-15 advances together): `evaluate` then takes points with the runs
    axis first, (runs, ..., D), and run r is instance `instance[r]`; `run_optima(runs)` gives
    each run's fopt (`optimum_f` and `optimum_x` are None: there is no single one)."""

    def __init__(self, function: int, dim: int, instance: int | Sequence[int] = 1) -> None:
        if not is_integer(function) or function not in NAMES:
            raise ValueError(f"bbob has functions 1-24 (bbob-f1 ... bbob-f24), got {function!r}")
        held = not is_integer(instance)  # a list: one instance per run
        instances = _instances(function, instance)
        if not is_integer(dim) or dim < 2:
            raise ValueError(f"bbob-f{function}: the bbob functions are defined for D >= 2 (COCO's standard "
                             f"dimensions: {', '.join(map(str, DIMS))}), got dim={dim!r}")
        dim = check_dim(dim)
        if function not in UNROTATED and dim > MAX_ROTATED_DIM:
            raise ValueError(f"bbob-f{function} ({NAMES[function]}) is defined for D <= {MAX_ROTATED_DIM}: COCO "
                             f"generates its rotations only there (its legacy code asserts D x D < 2000), "
                             f"got dim={dim}; f1-f5 and f20 take any D")
        function = int(function)
        per_run = [instance_data(function, dim, i) for i in instances]
        self.optima = tuple(fo for _data, _best, fo in per_run)
        best = torch.from_numpy(np.stack([b for _data, b, _fo in per_run]))
        super().__init__(dim, -5.0, 5.0, optimum_f=None if held else self.optima[0],
                         optimum_x=None if held else best[0])
        self.name = f"bbob-f{function}"
        self.function, self.instance = function, list(instances) if held else instances[0]
        self.runs_held = len(instances) if held else None
        self.optima_x = best  # (runs, D): each instance's best_parameter
        ids = [f"bbob_f{function:03d}_i{i:02d}_d{dim:02d}" for i in instances]
        self.coco_id = ids if held else ids[0]
        # Every array with the instances first (one row for a single instance): matrices as
        # (runs, rows, columns), the rest (per coordinate or per peak) as (runs, 1, n) so that
        # it broadcasts over the points of a run, which `evaluate` lays out as (runs, points, D).
        self.fopt = torch.tensor(self.optima, dtype=torch.float64)[:, None]
        for key, value in per_run[0][0].items():
            if isinstance(value, np.ndarray):
                stacked = torch.from_numpy(np.stack([data[key] for data, _b, _fo in per_run]))
                setattr(self, key, stacked if key in MATRICES else stacked[:, None])
            else:  # a number that depends on D alone (f8's factor)
                setattr(self, key, value)

    def describe(self) -> dict:
        return {**super().describe(), "instance": self.instance}

    def run_optima(self, runs: int) -> list[float]:
        return list(self.optima) if self.runs_held is not None else [self.optima[0]] * runs

    def select_runs(self, runs: Sequence[int]) -> BBOB:
        chosen = None if self.runs_held is None else [self.instance[r] for r in runs]
        return self if chosen in (None, self.instance) else BBOB(self.function, self.dim, chosen)

    def evaluate(self, x: Tensor) -> Tensor:
        """f(x) for points x[..., D] on any device, in the dtype of x (for a list of instances,
        x[runs, ..., D])."""
        runs = self.fopt.shape[0]
        if self.runs_held is not None and (x.dim() < 2 or x.shape[0] != runs):
            raise ValueError(f"{self.name} holds {runs} instances, one per run: it evaluates points with the runs "
                             f"axis first, shape ({runs}, ..., {self.dim}), got {tuple(x.shape)}")
        f = getattr(self, f"_f{self.function}")(x.reshape(runs, -1, self.dim)).reshape(x.shape[:-1])
        # COCO's coco_evaluate_function: any inf coordinate gives inf, else any NaN gives NaN
        f = torch.where(torch.isnan(x).any(-1), math.nan, f)
        return torch.where(torch.isinf(x).any(-1), math.inf, f)

    # -- the 24 functions: each is COCO's chain of transformations, read from x outwards ------------
    def _f1(self, x: Tensor) -> Tensor:
        z = x - self.shift
        return (z * z).sum(-1) + self.fopt

    def _f2(self, x: Tensor) -> Tensor:
        z = oscillate(x - self.shift)
        return (self.weights * z * z).sum(-1) + self.fopt

    def _f3(self, x: Tensor) -> Tensor:
        z = self.conditioning * asymmetric(oscillate(x - self.shift), self.asymmetry)
        return rastrigin(z) + self.fopt

    def _f4(self, x: Tensor) -> Tensor:
        y = oscillate(x - self.shift)
        even = torch.arange(self.dim, device=x.device) % 2 == 0  # coordinates 1, 3, 5, ... counted from 1
        z = torch.where((y > 0) & even, self.brs * 10.0, self.brs) * y
        return rastrigin(z) + self.fopt + 100.0 * box_penalty(x)

    def _f5(self, x: Tensor) -> Tensor:
        inside = x * self.corner < 25.0  # past the corner the slope is flat
        return (5.0 * self.slope.abs() - self.slope * torch.where(inside, x, self.corner)).sum(-1) + self.fopt

    def _f6(self, x: Tensor) -> Tensor:
        z = (x - self.shift) @ self.m.mT
        value = torch.where(self.shift * z > 0.0, 100.0 * 100.0 * z * z, z * z).sum(-1)
        return oscillate(value).pow(0.9) + self.fopt

    def _f7(self, x: Tensor) -> Tensor:
        z_hat = (x - self.shift) @ self.lambda_q.mT
        rounded = torch.where(z_hat.abs() > 0.5, torch.floor(z_hat + 0.5), torch.floor(10.0 * z_hat + 0.5) / 10.0)
        z = rounded @ self.r.mT
        core = (self.weights * z * z).sum(-1)
        first = z_hat[..., 0].abs() * 1.0e-4
        return 0.1 * torch.where(first >= core, first, core) + box_penalty(x) + self.fopt

    def _f8(self, x: Tensor) -> Tensor:
        return rosenbrock(self.factor * (x - self.shift) + 1.0) + self.fopt

    def _f9(self, x: Tensor) -> Tensor:
        return rosenbrock(x @ self.m.mT + 0.5) + self.fopt

    def _f10(self, x: Tensor) -> Tensor:
        z = oscillate((x - self.shift) @ self.r.mT)
        return (self.weights * z * z).sum(-1) + self.fopt

    def _f11(self, x: Tensor) -> Tensor:
        z = oscillate((x - self.shift) @ self.r.mT)
        return 1.0e6 * z[..., 0] ** 2 + (z[..., 1:] ** 2).sum(-1) + self.fopt

    def _f12(self, x: Tensor) -> Tensor:
        z = asymmetric((x - self.shift) @ self.r.mT, self.asymmetry) @ self.r.mT
        return z[..., 0] ** 2 + 1.0e6 * (z[..., 1:] ** 2).sum(-1) + self.fopt

    def _f13(self, x: Tensor) -> Tensor:
        z = (x - self.shift) @ self.m.mT
        return 100.0 * (z[..., 1:] ** 2).sum(-1).sqrt() + z[..., 0] ** 2 + self.fopt

    def _f14(self, x: Tensor) -> Tensor:
        z = (x - self.shift) @ self.r.mT
        return z.abs().pow(self.exponents).sum(-1).sqrt() + self.fopt

    def _f15(self, x: Tensor) -> Tensor:
        z = asymmetric(oscillate((x - self.shift) @ self.r.mT), self.asymmetry) @ self.m.mT
        return rastrigin(z) + self.fopt

    def _f16(self, x: Tensor) -> Tensor:
        z = oscillate((x - self.shift) @ self.r.mT) @ self.m.mT
        k = torch.arange(12, device=x.device, dtype=x.dtype)
        a, b = 0.5**k, 3.0**k
        total = (torch.cos((TWO_PI * (z + 0.5))[..., None] * b) * a).sum((-2, -1))
        return 10.0 * (total / self.dim - WEIERSTRASS_F0) ** 3 + self.fopt + 10.0 / self.dim * box_penalty(x)

    def _f17(self, x: Tensor) -> Tensor:
        z = asymmetric((x - self.shift) @ self.r.mT, self.asymmetry) @ self.m.mT
        s = z[..., :-1] ** 2 + z[..., 1:] ** 2
        terms = s.pow(0.25) * (1.0 + torch.sin(50.0 * s.pow(0.1)) ** 2)
        return (terms.sum(-1) / (self.dim - 1.0)) ** 2 + self.fopt + 10.0 * box_penalty(x)

    _f18 = _f17  # conditioning 1000 instead of 10 (in m), and f17's seeds

    def _f19(self, x: Tensor) -> Tensor:
        z = x @ self.m.mT + 0.5
        s = 100.0 * (z[..., :-1] ** 2 - z[..., 1:]) ** 2 + (1.0 - z[..., :-1]) ** 2
        return 10.0 + 10.0 * (s / 4000.0 - torch.cos(s)).sum(-1) / (self.dim - 1) + self.fopt

    def _f20(self, x: Tensor) -> Tensor:
        y = 2.0 * torch.where(self.flip, -x, x)
        previous = torch.nn.functional.pad(y[..., :-1] - self.twice_abs_xopt[..., :-1], (1, 0))
        z = y + 0.25 * previous  # z_1 = y_1 (adding 0.25 x 0 changes nothing)
        z = 100.0 * (self.conditioning * (z - self.twice_abs_xopt) + self.twice_abs_xopt)
        penalty = ((z.abs() - 500.0).clamp(min=0.0) ** 2).sum(-1)
        core = (z * torch.sin(z.abs().sqrt())).sum(-1)
        return 0.01 * (penalty + 418.9828872724339 - core / self.dim) + self.fopt

    def _f21(self, x: Tensor) -> Tensor:
        # sum_j s_ij (t_j - y_ij)^2 for every peak i, expanded around the global peak y_0 (u = t - y_0,
        # v_i = y_i - y_0) into matrix products: memory per point is one value per peak, not per
        # peak and coordinate, and the global peak's term, sum_j s_0j u_j^2, has no cancellation.
        u = x @ self.r.mT - self.centre
        d = (u * u) @ self.scales.mT - 2.0 * (u @ self.scaled_offsets.mT) + self.offset_norms
        g = (self.heights * torch.exp(-0.5 / self.dim * d)).amax(-1).clamp(min=0.0)
        return oscillate(10.0 - g) ** 2 + box_penalty(x) + self.fopt

    _f22 = _f21  # 21 peaks

    def _f23(self, x: Tensor) -> Tensor:
        z = (x - self.shift) @ self.m.mT
        two_j = 2.0 ** torch.arange(1, 33, device=x.device, dtype=x.dtype)
        t = two_j * z[..., None]
        inner = ((t - torch.floor(t + 0.5)).abs() / two_j).sum(-1)
        i = torch.arange(1, self.dim + 1, device=x.device, dtype=x.dtype)
        product = (1.0 + i * inner).pow(10.0 / math.pow(self.dim, 1.2)).prod(-1)
        return 10.0 / self.dim / self.dim * (-1.0 + product) + self.fopt + box_penalty(x)

    def _f24(self, x: Tensor) -> Tensor:
        mu0, d = 2.5, 1.0
        s = 1.0 - 0.5 / (math.sqrt(self.dim + 20.0) - 4.1)
        mu1 = -math.sqrt((mu0 * mu0 - d) / s)
        x_hat = torch.where(self.flip, -(2.0 * x), 2.0 * x)
        z = ((x_hat - mu0) @ self.lambda_q.mT) @ self.r.mT
        near, far = ((x_hat - mu0) ** 2).sum(-1), ((x_hat - mu1) ** 2).sum(-1)
        two_funnels = torch.where(near <= d * self.dim + s * far, near, d * self.dim + s * far)
        bumps = 10.0 * (self.dim - torch.cos(TWO_PI * z).sum(-1))
        return two_funnels + bumps + 1.0e4 * box_penalty(x) + self.fopt


def _instances(function: int, instance) -> tuple[int, ...]:
    """`instance` (one, or a list of one per run) as a tuple of checked instance numbers."""
    many = not is_integer(instance)
    if many and (isinstance(instance, (str, bytes)) or not isinstance(instance, Sequence) or not instance):
        raise ValueError(f"bbob-f{function}: instance must be a whole number (COCO's instance numbers; the "
                         f"standard ones are 1-15) or a non-empty list of them, one per run, got {instance!r}")
    for i in instance if many else [instance]:
        if not is_integer(i) or not 1 <= i <= MAX_INSTANCE:
            raise ValueError(f"bbob-f{function}: instance must be a whole number from 1 to {MAX_INSTANCE:,} "
                             f"(COCO's instance numbers; the standard ones are 1-15), got {i!r}")
    return tuple(int(i) for i in instance) if many else (int(instance),)


# -- the shared pieces -----------------------------------------------------------------------------
def oscillate(x: Tensor) -> Tensor:
    """T_osz (COCO's tosz_uv, also its objective oscillation): sign(x) exp(t + 0.49 (sin(c1 t) +
    sin(c2 t)))^0.1 with t = log|x| / 0.1, (c1, c2) = (1, 0.79) for x > 0, (0.55, 0.31) for x < 0.

    Computed as exp(0.1 (t + ...)), equal up to rounding (1e-15 relative in float64): COCO's
    exp(...)^0.1 overflows where |x|^10 does, past 1e30 in float64 but past 7,000 in float32,
    where f6's objective oscillation gets there inside the box."""
    t = torch.log(x.abs()) / 0.1
    positive = x > 0.0
    a1, a2 = torch.where(positive, t, 0.55 * t), torch.where(positive, 0.79 * t, 0.31 * t)
    y = torch.exp(0.1 * (t + 0.49 * (torch.sin(a1) + torch.sin(a2))))
    return torch.where(positive, y, torch.where(x < 0.0, -y, 0.0))


def asymmetric(x: Tensor, beta_ramp: Tensor) -> Tensor:
    """T_asy^beta: x^(1 + beta i / (D - 1) sqrt(x)) where x > 0 (`beta_ramp` holds beta i / (D - 1))."""
    positive = x.clamp(min=0.0)
    return torch.where(x > 0.0, positive.pow(1.0 + beta_ramp * positive.sqrt()), x)


def box_penalty(x: Tensor) -> Tensor:
    """f_pen: sum of (|x_i| - 5)^2 over the coordinates outside [-5, 5]."""
    return ((x.abs() - 5.0).clamp(min=0.0) ** 2).sum(-1)


def rastrigin(z: Tensor) -> Tensor:
    return 10.0 * (z.shape[-1] - torch.cos(TWO_PI * z).sum(-1)) + (z * z).sum(-1)


def rosenbrock(z: Tensor) -> Tensor:
    head, tail = z[..., :-1], z[..., 1:]
    return 100.0 * ((head * head - tail) ** 2).sum(-1) + ((head - 1.0) ** 2).sum(-1)


#: sum_k 0.5^k cos(pi 3^k), k = 0..11, as f_weierstrass.c computes it.
WEIERSTRASS_F0 = sum(math.pow(0.5, k) * math.cos(TWO_PI * math.pow(3.0, k) * 0.5) for k in range(12))
