"""Prism Refraction Search (Kundu et al. 2024) in the population form of paper 000.

A solution is a vector of incidence angles `theta` (degrees, in [-90, 90]) mapped onto the
search box, `x = lb + (ub - lb) (theta + 90) / 180`. With `delta_k = F(x_k)` the deviation
of ray k and `A` the prism's apex angle, one iteration is

    mu  = sin((A + mean_k delta_k) / 2) / sin(A / 2)                         (10)
    E_k = delta_k - theta_k + A                                              (9)
    theta_k <- asin(-sin E_k cos A + r sin A sqrt(mu^2 - sin^2 E_k))         (11)
    A   <- A exp(-alpha t / T)                                               (12)

with `r ~ U[-1, 1]` per coordinate and the apex angle initialised as
`A0 = max(lb) + (min(ub) - max(lb)) U[15, 90]` (8), one per run.

Choices (measured against paper 000's tables, see ALGORITHMS.md; do not "fix" them):
- `delta` in (10) is the population mean (paper 000's reduction kernel), (9) is per ray;
- (10) takes its arguments as radians, as paper 000's implementation evaluates it, while
  (11) converts `E` and `A` from degrees; `theta` comes back from the arcsine in degrees;
- the radicand of (11) is clamped at 0 and the arcsine argument to [-1, 1]; where they are
  NaN (an infinite deviation: NaN objective values count as +inf) the radicand is 0 and the
  argument -1, as the CUDA kernel's fmax/fmin clamps (and the CPU kernel) take them, so a
  ray is never NaN;
- angles map onto the box (clipping only undoes rounding); initial angles are uniform on
  (-90, 90), a uniform population in the box (paper 000, section 3.1);
- `t` counts from 0, `T = max_iters` (taken from the engine's budget when not set);
  `alpha = 0.009` as in paper 000's runs;
- no greedy acceptance: the engine keeps the best-so-far. `pop_size=1` is the original
  single-solution PRS.

Its parameters hold no length: `alpha` is a
decay rate over the run's horizon, the population lives as angles mapped onto whatever box
the problem has, and A0 comes from the bounds by (8): there is no absolute length to make
relative, and the defaults stay paper 000's.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..problems.base import Problem
from .base import Algorithm, Kernels, Proposal, State, check_positive
from .registry import register_algorithm


@dataclass
class PRSState(State):
    theta: torch.Tensor  # (runs, pop, dim) incidence angles in degrees
    apex: torch.Tensor  # (runs,) apex angle A
    t: torch.Tensor  # 0-d iteration counter, from 0


def to_box(theta: torch.Tensor, lower: torch.Tensor, upper: torch.Tensor) -> torch.Tensor:
    """Map angles in [-90, 90] degrees linearly onto [lower, upper] (clamped: in float32 the
    map can round an ulp past a bound, and the arcsine can return 90.000004 degrees)."""
    return torch.clamp(lower + (upper - lower) * (theta + 90.0) / 180.0, lower, upper)


@register_algorithm
@dataclass(kw_only=True)
class PRS(Algorithm):
    """Prism Refraction Search with apex-angle decay `alpha`."""

    alpha: float = 0.009
    max_iters: int | None = None

    name = "prs"
    min_pop = 1
    paper = "Kundu et al., J. Supercomputing 2024; on CUDA (reproduce prs)"
    presets = {"paper000": {"pop_size": 1024, "alpha": 0.009}}
    state_type = PRSState
    kernels = Kernels(cuda=True, cpu=True)  # engine/kernels/prs/

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive(self.name, alpha=self.alpha)

    def ask_init(self, problem: Problem, runs: int) -> Proposal:
        self.check_dtype(problem.lower.dtype)
        lb, ub = problem.lower, problem.upper
        dev, dt = lb.device, lb.dtype
        theta = 180.0 * torch.rand(runs, self.pop_size, problem.dim, device=dev, dtype=dt) - 90.0
        lo, hi = lb.max(), ub.min()
        apex = lo + (hi - lo) * (15.0 + 75.0 * torch.rand(runs, device=dev, dtype=dt))  # (8)
        return Proposal(to_box(theta, lb, ub), theta=theta, apex=apex)

    def tell_init(self, problem: Problem, p: Proposal, f: torch.Tensor) -> PRSState:
        return PRSState(x=p.x, f=f, theta=p.theta, apex=p.apex, t=torch.zeros((), device=f.device, dtype=p.x.dtype))

    def ask(self, problem: Problem, s: PRSState) -> Proposal:
        delta = s.f  # deviations of the current rays
        A = s.apex[:, None, None]
        mu = torch.sin((A + delta.mean(-1)[:, None, None]) / 2) / torch.sin(A / 2)  # (10), radians
        E = delta[..., None] - s.theta + A  # (9)
        E_rad, A_rad = torch.deg2rad(E), torch.deg2rad(A)
        r = 2.0 * torch.rand_like(s.theta) - 1.0
        sin_E = torch.sin(E_rad)
        radicand = mu * mu - sin_E * sin_E
        radicand = torch.where(radicand > 0, radicand, 0.0)  # NaN (an infinite deviation) -> 0
        arg = -sin_E * torch.cos(A_rad) + r * torch.sin(A_rad) * radicand.sqrt()
        arg = torch.where(arg >= -1, arg.clamp(max=1.0), -1.0)  # NaN -> -1, as the kernels clamp
        theta = torch.rad2deg(torch.asin(arg))  # (11)
        apex = s.apex * torch.exp(-self.alpha * s.t / self.max_iters)  # (12)
        return Proposal(to_box(theta, problem.lower, problem.upper), theta=theta, apex=apex)

    def tell(self, problem: Problem, s: PRSState, p: Proposal, f: torch.Tensor) -> PRSState:
        return PRSState(x=p.x, f=f, theta=p.theta, apex=p.apex, t=s.t + 1)
