"""Batched quasi-Newton refinement: BFGS (paper 002, section 1.2) and L-BFGS.

Many points are refined at once (one per run, or the top-k of a population): every
iteration is a handful of tensor operations over all points, never a Python loop over them.

    p_k     = -H_k grad f(x_k)
    x_k+1   = x_k + a_k p_k                       (a_k by Armijo backtracking, or fixed)
    H_k+1   = (I - rho s y^T) H_k (I - rho y s^T) + rho s s^T,   rho = 1 / s^T y
              applied when s^T y > 1e-10 (as in paper 002), s = x_k+1 - x_k, y = grad change

- Gradients come from autograd when the problem is differentiable torch code, else from
  central finite differences, all points and coordinates in one evaluation call.
- `line_search="armijo"` (default) tries the step lengths 1, 1/2, ..., 2^-(trials-1) for all
  points in one evaluation call and takes the longest that satisfies the Armijo condition;
  `line_search="fixed"` is paper 002's fixed step `x + step * p`.
- Bounds are respected by projection: trial points are clipped to the box, and a point
  stops when its projected gradient `|x - clip(x - g)|` falls below `gtol` (paper: 1e-6).
- `memory=m` switches to L-BFGS (two-loop recursion over the last m pairs): O(m D) memory
  per point instead of O(D^2), for large D.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..problems.base import Problem

#: How often (iterations) the refiner asks the device whether every point has stopped.
CHECK_EVERY = 10


@dataclass
class Refined:
    x: torch.Tensor  # (..., dim) refined points
    f: torch.Tensor  # (...) their values
    iterations: int  # iterations run (the slowest point's)
    converged: torch.Tensor  # (...) projected gradient below gtol
    evals: int  # evaluations per point


@dataclass(kw_only=True)
class BFGS:
    """Batched BFGS; `memory=m` makes it L-BFGS."""

    max_iter: int = 200
    gtol: float = 1e-6
    line_search: str = "armijo"
    step: float = 0.1
    memory: int | None = None
    gradient: str = "auto"
    c1: float = 1e-4
    trials: int = 30

    name = "bfgs"

    def __post_init__(self) -> None:
        if self.line_search not in ("armijo", "fixed"):
            raise ValueError(f"{self.name}: line_search must be 'armijo' or 'fixed', got {self.line_search!r}")
        if self.gradient not in ("auto", "autograd", "fd"):
            raise ValueError(f"{self.name}: gradient must be 'auto', 'autograd' or 'fd', got {self.gradient!r}")
        for key in ("max_iter", "trials"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{self.name}: {key} must be an integer >= 1, got {value!r}")
        if self.memory is not None and (not isinstance(self.memory, int) or self.memory < 1):
            raise ValueError(f"{self.name}: memory must be an integer >= 1 or None, got {self.memory!r}")
        if not (self.gtol >= 0 and self.step > 0 and 0 < self.c1 < 1):
            raise ValueError(f"{self.name}: need gtol >= 0, step > 0 and 0 < c1 < 1")

    # -- gradients --------------------------------------------------------------------------
    def _value_and_grad(self, problem: Problem, x: torch.Tensor, lead: torch.Size):
        """f (B,) and grad (B, D) at x (B, D); evaluations per point as the third value."""
        if self.gradient == "autograd" or (self.gradient == "auto" and not problem.host_bound):
            with torch.enable_grad():
                xg = x.detach().requires_grad_(True)
                f = problem.evaluate(xg.reshape(*lead, -1)).reshape(-1)
                if f.requires_grad:
                    (g,) = torch.autograd.grad(f.sum(), xg)
                    return f.detach(), torch.nan_to_num(g, nan=0.0), 1
            if self.gradient == "autograd":
                raise ValueError(f"problem {problem.name!r} is not differentiable torch code: use gradient='fd'")
        return self._finite_differences(problem, x, lead)

    def _finite_differences(self, problem: Problem, x: torch.Tensor, lead: torch.Size):
        b, d = x.shape
        h = torch.finfo(x.dtype).eps ** (1 / 3) * x.abs().clamp(min=1.0)  # (B, D)
        eye = torch.eye(d, device=x.device, dtype=x.dtype)
        offsets = torch.cat([h[:, None, :] * eye, -h[:, None, :] * eye, torch.zeros_like(x)[:, None]], 1)
        values = problem.evaluate((x[:, None] + offsets).reshape(*lead, 2 * d + 1, d)).reshape(b, 2 * d + 1)
        g = (values[:, :d] - values[:, d:2 * d]) / (2 * h)
        return values[:, -1], torch.nan_to_num(g, nan=0.0), 2 * d + 1

    # -- the iteration ----------------------------------------------------------------------
    def refine(self, problem: Problem, x0: torch.Tensor) -> Refined:
        """Refine the points `x0` (..., dim) on `problem` (already on x0's device and dtype)."""
        lead, d = x0.shape[:-1], x0.shape[-1]
        lo, hi = problem.lower, problem.upper
        x = torch.clamp(x0.detach().reshape(-1, d), lo, hi)
        f, g, evals = self._value_and_grad(problem, x, lead)
        direction = _InverseHessian(x, self.memory)
        active = torch.ones(x.shape[0], dtype=torch.bool, device=x.device)
        it = 0
        for it in range(1, self.max_iter + 1):
            active = active & ((x - torch.clamp(x - g, lo, hi)).norm(dim=-1) >= self.gtol)
            if (it - 1) % CHECK_EVERY == 0 and not bool(active.any()):
                it -= 1
                break
            p = direction.apply(g)
            if self.line_search == "fixed":
                x_new = torch.clamp(x + self.step * p, lo, hi)
            else:
                # With no curvature yet (H = I), start at unit length, as scipy does.
                first = torch.where(direction.fresh, 1.0 / p.norm(dim=-1).clamp(min=1.0), 1.0)
                x_new, moved, n = self._armijo(problem, x, f, g, p * first[:, None], lead)
                evals += n
                active = active & (moved | ~direction.fresh)  # a failed search with H = I: stop
                direction.reset(~moved)
            x_new = torch.where(active[:, None], x_new, x)
            f_new, g_new, n = self._value_and_grad(problem, x_new, lead)
            evals += n
            direction.update(x_new - x, g_new - g, active)
            x, f, g = x_new, f_new, g_new
        converged = (x - torch.clamp(x - g, lo, hi)).norm(dim=-1) < self.gtol
        return Refined(x=x.reshape(*lead, d), f=f.reshape(lead), iterations=it,
                       converged=converged.reshape(lead), evals=evals)

    def _armijo(self, problem, x, f, g, p, lead):
        """Longest step 2^-k (k < trials) with f(x + a p) <= f(x) + c1 g.(x_a - x), all points at once."""
        b, d = x.shape
        a = 0.5 ** torch.arange(self.trials, device=x.device, dtype=x.dtype)
        trial = torch.clamp(x[:, None] + a[None, :, None] * p[:, None], problem.lower, problem.upper)
        ft = problem.evaluate(trial.reshape(*lead, self.trials, d)).reshape(b, self.trials)
        ok = ft <= f[:, None] + self.c1 * ((trial - x[:, None]) * g[:, None]).sum(-1)
        ok = ok & (trial != x[:, None]).any(-1)  # a step that does not move is no success
        first = ok.to(torch.int8).argmax(-1)
        moved = ok.any(-1)
        chosen = trial.gather(1, first[:, None, None].expand(-1, 1, d)).squeeze(1)
        return torch.where(moved[:, None], chosen, x), moved, self.trials


class _InverseHessian:
    """The inverse-Hessian approximation of every point: dense (BFGS) or the last m pairs (L-BFGS)."""

    def __init__(self, x: torch.Tensor, memory: int | None) -> None:
        b, d = x.shape
        self.memory = memory
        self.fresh = torch.ones(b, dtype=torch.bool, device=x.device)
        if memory is None:
            self.eye = torch.eye(d, device=x.device, dtype=x.dtype)
            self.H = self.eye.expand(b, d, d).clone()
        else:
            self.S = torch.zeros(b, memory, d, device=x.device, dtype=x.dtype)
            self.Y = torch.zeros_like(self.S)
            self.rho = torch.zeros(b, memory, device=x.device, dtype=x.dtype)

    def apply(self, g: torch.Tensor) -> torch.Tensor:
        """Descent direction -H g (steepest descent where that would not descend)."""
        if self.memory is None:
            p = -(self.H @ g[..., None]).squeeze(-1)
        else:
            p = -self._two_loop(g)
        uphill = (p * g).sum(-1) >= 0
        self.reset(uphill)
        return torch.where(uphill[:, None], -g, p)

    def _two_loop(self, g: torch.Tensor) -> torch.Tensor:
        q = g.clone()
        alphas = []
        for i in reversed(range(self.memory)):  # newest (last) to oldest
            a = self.rho[:, i] * (self.S[:, i] * q).sum(-1)
            q = q - a[:, None] * self.Y[:, i]
            alphas.append(a)
        s, y = self.S[:, -1], self.Y[:, -1]
        yy = (y * y).sum(-1)
        scale = torch.where(self.rho[:, -1] > 0, (s * y).sum(-1) / yy.clamp(min=torch.finfo(g.dtype).tiny), 1.0)
        r = scale[:, None] * q
        for i, a in zip(range(self.memory), reversed(alphas)):  # oldest to newest
            b = self.rho[:, i] * (self.Y[:, i] * r).sum(-1)
            r = r + (a - b)[:, None] * self.S[:, i]
        return r

    def update(self, s: torch.Tensor, y: torch.Tensor, active: torch.Tensor) -> None:
        sy = (s * y).sum(-1)
        ok = active & (sy > 1e-10)
        rho = torch.where(ok, 1.0 / torch.where(ok, sy, 1.0), 0.0)
        if self.memory is None:
            left = self.eye - rho[:, None, None] * s[:, :, None] * y[:, None, :]
            H = left @ self.H @ left.transpose(1, 2) + rho[:, None, None] * s[:, :, None] * s[:, None, :]
            self.H = torch.where(ok[:, None, None], H, self.H)
        else:
            keep = ok[:, None, None]
            self.S = torch.where(keep, torch.cat([self.S[:, 1:], s[:, None]], 1), self.S)
            self.Y = torch.where(keep, torch.cat([self.Y[:, 1:], y[:, None]], 1), self.Y)
            self.rho = torch.where(ok[:, None], torch.cat([self.rho[:, 1:], rho[:, None]], 1), self.rho)
        self.fresh = self.fresh & ~ok

    def reset(self, which: torch.Tensor) -> None:
        """Forget the curvature of the points in `which` (back to H = I)."""
        if self.memory is None:
            self.H = torch.where(which[:, None, None], self.eye, self.H)
        else:
            self.rho = torch.where(which[:, None], 0.0, self.rho)
        self.fresh = self.fresh | which


@dataclass(kw_only=True)
class LBFGS(BFGS):
    """Batched L-BFGS: BFGS with the last `memory` pairs instead of a dense inverse Hessian."""

    memory: int | None = 10
    name = "lbfgs"
