"""CEC-style treatments of a problem: a random shift and a random rotation, from a seed.

The classic functions put their optimum at the origin (or at 1, ...) and most are separable:
an algorithm that favours the centre of the box or moves one coordinate at a time gets an
unfair edge. The CEC suites remove it by evaluating f(M (x - o)) with a random shift o and
a random orthogonal M; `cec_treatment(problem, seed)` does that to any problem here.

- `Shifted(problem, seed, radius)`: x -> inner(x - o), o ~ U[-radius, radius]^D. When the
  inner minimiser o* is known the draw is restricted, coordinate by coordinate, to the
  shifts that keep the moved minimiser o* + o inside the box: o_i ~ U[a_i, b_i] with
  a_i = max(-radius, lower_i - o*_i), b_i = min(radius, upper_i - o*_i). On a box wider
  than the radius on both sides of o* this is exactly U[-radius, radius].
- `Rotated(problem, seed)`: x -> inner(o* + M (x - o*)), M a Haar-random orthogonal matrix,
  turning around the inner minimiser o* (so it stays put), or around the origin.

Both keep the box; the minimum value is kept and the minimiser moved accordingly. Both
evaluate the inner function outside its own box near the corners: the stated optimum is the
true one when the inner minimum over all of R^D is its minimum in the box, which holds for
every function of the Yao suite except f8 (Schwefel 2.26 goes lower outside [-500, 500]).
Without a known minimiser the optimum of the result is unknown (None).
"""

from __future__ import annotations

import torch

from .base import Problem, ProblemWrapper, is_integer, is_real

Tensor = torch.Tensor
MAX_SEED = 2**64 - 1
#: Rotated draws from seed XOR this (the golden-ratio constant), so that a shift and a
#: rotation given the same seed do not read the same random stream.
_ROTATION_SALT = 0x9E3779B97F4A7C15


def _check(problem: Problem, seed: int, who: str) -> int:
    if not isinstance(problem, Problem):
        raise ValueError(f"{who} wraps a heuriscale Problem, got {type(problem).__name__}")
    if not is_integer(seed) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"{who}: seed must be an integer in 0..2**64 - 1, got {seed!r}")
    return int(seed)


class _Transformed(ProblemWrapper):
    """What both transforms share: the wrapped problem, a name like `kind(inner)`, the flags,
    and a describe() listing every transform applied, innermost first, with its seed."""

    def __init__(self, problem: Problem, kind: str, record: dict) -> None:
        super().__init__(problem)
        self.name = f"{kind}({problem.name})"
        self.stochastic = bool(getattr(problem, "stochastic", False))
        self.record = {"kind": kind, **record}

    def describe(self) -> dict:
        d = self.inner.describe()
        d.update(name=self.name, optimum_f=self.optimum_f)
        d["transforms"] = [*d.get("transforms", []), dict(self.record)]
        return d


class Shifted(_Transformed):
    """inner(x - o), o drawn from `seed`: the minimiser moves from o* to o* + o."""

    def __init__(self, problem: Problem, seed: int = 0, radius: float = 80.0) -> None:
        seed = _check(problem, seed, "Shifted")
        if not is_real(radius) or radius < 0:
            raise ValueError(f"Shifted: radius must be a finite number >= 0, got {radius!r}")
        super().__init__(problem, "shifted", {"seed": seed, "radius": float(radius)})
        u = torch.rand(self.dim, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
        lo = torch.full((self.dim,), -float(radius), dtype=torch.float64)
        hi = torch.full((self.dim,), float(radius), dtype=torch.float64)
        known = problem.optimum_x is not None
        if known:  # keep o* + o inside the box
            o_star = problem.optimum_x.detach().to("cpu", torch.float64)
            lo = torch.maximum(lo, problem.lower.to("cpu", torch.float64) - o_star)
            hi = torch.minimum(hi, problem.upper.to("cpu", torch.float64) - o_star)
        self.shift = lo + u * (hi - lo)
        self.optimum_x = (o_star + self.shift).clamp(self.lower.cpu(), self.upper.cpu()) if known else None
        self.optimum_f = problem.optimum_f if known else None

    def evaluate(self, x: Tensor) -> Tensor:
        return self.inner.evaluate(x - self.shift.to(x))


class Rotated(_Transformed):
    """inner(c + M (x - c)), M orthogonal from `seed`, c the inner minimiser (or the origin)."""

    def __init__(self, problem: Problem, seed: int = 0) -> None:
        seed = _check(problem, seed, "Rotated")
        super().__init__(problem, "rotated", {"seed": seed})
        self.matrix = random_orthogonal(self.dim, seed ^ _ROTATION_SALT)
        known = problem.optimum_x is not None
        origin = torch.zeros(self.dim, dtype=torch.float64)
        self.center = problem.optimum_x.detach().to("cpu", torch.float64) if known else origin
        self.optimum_x = self.center.clone() if known else None
        self.optimum_f = problem.optimum_f if known else None

    def evaluate(self, x: Tensor) -> Tensor:
        c = self.center.to(x)
        return self.inner.evaluate(c + (x - c) @ self.matrix.to(x).T)


def random_orthogonal(dim: int, seed: int) -> Tensor:
    """A Haar-distributed orthogonal matrix (float64, CPU): Q of the QR decomposition of a
    Gaussian matrix, its columns' signs fixed by sign(diag R) (Mezzadri 2007, "How to generate
    random matrices from the classical compact groups"); without the fix Q is not uniform."""
    try:
        g = torch.randn(dim, dim, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    except RuntimeError:  # the allocator's "can't allocate memory"
        gib = 8 * dim * dim / 2**30
        raise ValueError(f"dim {dim} is too large to rotate: the {dim} x {dim} matrix needs {gib:.3g} GiB") from None
    q, r = torch.linalg.qr(g)
    return q * torch.where(torch.diagonal(r) < 0, -1.0, 1.0)


def cec_treatment(problem: Problem, seed: int = 0, radius: float = 80.0) -> Rotated:
    """Shift, then rotate: f(M (x - o)) around the moved minimiser, both drawn from `seed`."""
    return Rotated(Shifted(problem, seed, radius), seed)
