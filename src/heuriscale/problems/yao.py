"""The 23 test functions of Yao, Liu & Lin, "Evolutionary programming made faster", IEEE TEC
3(2):82-102, 1999, Tables I-III: the classic suite of the metaheuristics literature.

f1-f13 are scalable (the paper uses n = 30; any D works here), f14-f23 have the fixed low
dimensions 2, 4, 2, 2, 2, 3, 6, 4, 4, 4. The functions that `classic` already holds are
reused, not rewritten: f1 sphere, f2 Schwefel 2.22, f3 Schwefel 1.2, f4 Schwefel 2.21,
f5 Rosenbrock, f6 step, f8 Schwefel 2.26, f9 Rastrigin, f10 Ackley, f11 Griewank; the
boxes are the paper's (Ackley on [-32, 32], not [-32.768, 32.768]).

The paper rounds the minima of f14-f23 (1, 0.0003075, -1.0316285, 0.398, 3, -3.86, -3.32,
-10.15, -10.40, -10.54). `optimum_f` holds the exact minimum of the function as written
here, refined from the literature's minimiser by Newton's method on the gradient in 40-digit
arithmetic (mpmath); the comment on each names where the minimiser comes from.

Choices where the paper's print and its readers differ:

- f13's last term is (x_n - 1)^2 [1 + sin^2(2 pi x_n)], squared as every implementation
  has it (unsquared, the function would go below its stated minimum 0 for x_n < 1);
- f20's p table is the one that the Yao-derived codes carry (p_32 = 0.1415). Hartman's
  original table (Dixon & Szego 1978, sfu.ca) has p_32 = 0.1451 and the minimum
  -3.32237 at (0.20169, 0.150011, 0.476874, 0.275332, 0.311652, 0.6573); with 0.1415 the
  minimum moves to -3.3219952 at the point below. Both round to the paper's -3.32.

f7 is noisy: its value is sum i x_i^4 plus a fresh uniform number in [0, 1) per point, so
the value observed at the minimiser lies in [0, 1); `optimum_f` is the noise-free 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from .base import Problem, check_dim, is_integer
from .classic import (
    CLASSIC,
    ackley,
    griewank,
    rastrigin,
    rosenbrock,
    schwefel_1_2,
    schwefel_2_21,
    schwefel_2_22,
    schwefel_2_26,
    sphere,
    step,
)

Tensor = torch.Tensor
MAX_SEED = 2**64 - 1


# -- the functions the classic module does not have (Yao's equations, his numbering) --------
def quartic(x: Tensor) -> Tensor:
    """f7 without its noise: sum_i i x_i^4."""
    i = torch.arange(1, x.shape[-1] + 1, device=x.device, dtype=x.dtype)
    return (i * x**4).sum(-1)


def u(x: Tensor, a: float, k: float, m: int) -> Tensor:
    """The penalty u(x_i, a, k, m): k (x_i - a)^m above a, 0 in [-a, a], k (-x_i - a)^m below -a."""
    return k * ((x - a).clamp(min=0) ** m + (-x - a).clamp(min=0) ** m)


def penalized_1(x: Tensor) -> Tensor:
    """f12 = pi/n {10 sin^2(pi y_1) + sum_{i<n} (y_i - 1)^2 [1 + 10 sin^2(pi y_i+1)] + (y_n - 1)^2}
    + sum u(x_i, 10, 100, 4), with y_i = 1 + (x_i + 1)/4."""
    y = 1.0 + (x + 1.0) / 4.0
    head, tail = y[..., :-1], y[..., 1:]
    inner = (
        10.0 * torch.sin(math.pi * y[..., 0]) ** 2
        + ((head - 1.0) ** 2 * (1.0 + 10.0 * torch.sin(math.pi * tail) ** 2)).sum(-1)
        + (y[..., -1] - 1.0) ** 2
    )
    return math.pi / x.shape[-1] * inner + u(x, 10.0, 100.0, 4).sum(-1)


def penalized_2(x: Tensor) -> Tensor:
    """f13 = 0.1 {sin^2(3 pi x_1) + sum_{i<n} (x_i - 1)^2 [1 + sin^2(3 pi x_i+1)]
    + (x_n - 1)^2 [1 + sin^2(2 pi x_n)]} + sum u(x_i, 5, 100, 4)."""
    head, tail, last = x[..., :-1], x[..., 1:], x[..., -1]
    inner = (
        torch.sin(3 * math.pi * x[..., 0]) ** 2
        + ((head - 1.0) ** 2 * (1.0 + torch.sin(3 * math.pi * tail) ** 2)).sum(-1)
        + (last - 1.0) ** 2 * (1.0 + torch.sin(2 * math.pi * last) ** 2)
    )
    return 0.1 * inner + u(x, 5.0, 100.0, 4).sum(-1)


def foxholes(x: Tensor, a: Tensor) -> Tensor:
    """f14, Shekel's foxholes: [1/500 + sum_j 1 / (j + sum_i (x_i - a_ij)^6)]^-1, a of shape (2, 25)."""
    j = torch.arange(1, a.shape[-1] + 1, device=x.device, dtype=x.dtype)
    d = ((x[..., :, None] - a) ** 6).sum(-2)
    return 1.0 / (1.0 / 500.0 + (1.0 / (j + d)).sum(-1))


def kowalik(x: Tensor, a: Tensor, b_inv: Tensor) -> Tensor:
    """f15: sum_i [a_i - x_1 (b_i^2 + b_i x_2) / (b_i^2 + b_i x_3 + x_4)]^2 (the paper tabulates 1/b_i)."""
    b = 1.0 / b_inv
    x1, x2, x3, x4 = (x[..., k : k + 1] for k in range(4))
    r = a - x1 * (b * b + b * x2) / (b * b + b * x3 + x4)
    return (r * r).sum(-1)


def six_hump_camel(x: Tensor) -> Tensor:
    """f16: 4 x1^2 - 2.1 x1^4 + x1^6 / 3 + x1 x2 - 4 x2^2 + 4 x2^4."""
    x1, x2 = x[..., 0], x[..., 1]
    return 4 * x1**2 - 2.1 * x1**4 + x1**6 / 3 + x1 * x2 - 4 * x2**2 + 4 * x2**4


def branin(x: Tensor) -> Tensor:
    """f17: (x2 - 5.1/(4 pi^2) x1^2 + 5/pi x1 - 6)^2 + 10 (1 - 1/(8 pi)) cos x1 + 10."""
    x1, x2 = x[..., 0], x[..., 1]
    q = x2 - 5.1 / (4 * math.pi**2) * x1**2 + 5 / math.pi * x1 - 6
    return q * q + 10 * (1 - 1 / (8 * math.pi)) * torch.cos(x1) + 10


def goldstein_price(x: Tensor) -> Tensor:
    """f18: [1 + (x1+x2+1)^2 (19 - 14x1 + 3x1^2 - 14x2 + 6x1x2 + 3x2^2)]
    x [30 + (2x1-3x2)^2 (18 - 32x1 + 12x1^2 + 48x2 - 36x1x2 + 27x2^2)]."""
    x1, x2 = x[..., 0], x[..., 1]
    a = 1 + (x1 + x2 + 1) ** 2 * (19 - 14 * x1 + 3 * x1**2 - 14 * x2 + 6 * x1 * x2 + 3 * x2**2)
    b = 30 + (2 * x1 - 3 * x2) ** 2 * (18 - 32 * x1 + 12 * x1**2 + 48 * x2 - 36 * x1 * x2 + 27 * x2**2)
    return a * b


def hartman(x: Tensor, c: Tensor, a: Tensor, p: Tensor) -> Tensor:
    """f19, f20: -sum_i c_i exp[-sum_j a_ij (x_j - p_ij)^2]."""
    return -(c * torch.exp(-(a * (x[..., None, :] - p) ** 2).sum(-1))).sum(-1)


def shekel(x: Tensor, a: Tensor, c: Tensor) -> Tensor:
    """f21-f23: -sum_i [(x - a_i)(x - a_i)^T + c_i]^-1."""
    return -(1.0 / (((x[..., None, :] - a) ** 2).sum(-1) + c)).sum(-1)


# -- the paper's data tables ---------------------------------------------------------------
_GRID = (-32.0, -16.0, 0.0, 16.0, 32.0)
FOXHOLES_A = (_GRID * 5, tuple(v for v in _GRID for _ in range(5)))
KOWALIK_A = (0.1957, 0.1947, 0.1735, 0.1600, 0.0844, 0.0627, 0.0456, 0.0342, 0.0323, 0.0235, 0.0246)
KOWALIK_B_INV = (0.25, 0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0)
HARTMAN_C = (1.0, 1.2, 3.0, 3.2)
HARTMAN3_A = ((3.0, 10.0, 30.0), (0.1, 10.0, 35.0), (3.0, 10.0, 30.0), (0.1, 10.0, 35.0))
HARTMAN3_P = ((0.3689, 0.1170, 0.2673), (0.4699, 0.4387, 0.7470), (0.1091, 0.8732, 0.5547), (0.03815, 0.5743, 0.8828))
HARTMAN6_A = (
    (10.0, 3.0, 17.0, 3.5, 1.7, 8.0),
    (0.05, 10.0, 17.0, 0.1, 8.0, 14.0),
    (3.0, 3.5, 1.7, 10.0, 17.0, 8.0),
    (17.0, 8.0, 0.05, 10.0, 0.1, 14.0),
)
HARTMAN6_P = (
    (0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886),
    (0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991),
    (0.2348, 0.1415, 0.3522, 0.2883, 0.3047, 0.6650),  # 0.1415: see the module docstring
    (0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381),
)
SHEKEL_A = (
    (4.0, 4.0, 4.0, 4.0), (1.0, 1.0, 1.0, 1.0), (8.0, 8.0, 8.0, 8.0), (6.0, 6.0, 6.0, 6.0), (3.0, 7.0, 3.0, 7.0),
    (2.0, 9.0, 2.0, 9.0), (5.0, 5.0, 3.0, 3.0), (8.0, 1.0, 8.0, 1.0), (6.0, 2.0, 6.0, 2.0), (7.0, 3.6, 7.0, 3.6),
)
SHEKEL_C = (0.1, 0.2, 0.2, 0.4, 0.4, 0.6, 0.3, 0.7, 0.5, 0.5)


@dataclass(frozen=True)
class YaoSpec:
    fn: Callable[..., Tensor]  # fn(x, **tables)
    lower: float | tuple[float, ...]
    upper: float | tuple[float, ...]
    dim: int  # the paper's n
    fixed_dim: int | None  # f14-f23: the only dimension the function is defined in
    optimum_f: Callable[[int], float]  # the minimum as a function of D
    optimum_x: float | tuple[float, ...]  # one minimiser (a number: that value in every coordinate)
    summary: str
    tables: dict[str, tuple] = field(default_factory=dict, hash=False)  # become tensor attributes
    noisy: bool = False  # f7: + uniform [0, 1) noise


def _is(value: float) -> Callable[[int], float]:
    return lambda _dim: value


_SCHWEFEL = CLASSIC["schwefel-2.26"]

YAO: dict[int, YaoSpec] = {
    1: YaoSpec(sphere, -100, 100, 30, None, _is(0.0), 0.0, "sphere, sum x_i^2"),
    2: YaoSpec(schwefel_2_22, -10, 10, 30, None, _is(0.0), 0.0, "Schwefel 2.22, sum |x_i| + prod |x_i|"),
    3: YaoSpec(schwefel_1_2, -100, 100, 30, None, _is(0.0), 0.0, "Schwefel 1.2, sum_i (sum_j<=i x_j)^2"),
    4: YaoSpec(schwefel_2_21, -100, 100, 30, None, _is(0.0), 0.0, "Schwefel 2.21, max_i |x_i|"),
    5: YaoSpec(rosenbrock, -30, 30, 30, None, _is(0.0), 1.0, "generalised Rosenbrock"),
    6: YaoSpec(step, -100, 100, 30, None, _is(0.0), 0.0, "step, sum floor(x_i + 0.5)^2"),
    7: YaoSpec(quartic, -1.28, 1.28, 30, None, _is(0.0), 0.0, "quartic with noise, sum i x_i^4 + random[0, 1)",
               noisy=True),
    # -418.9829 D: -12569.4866 at D = 30, the paper's -12569.5
    8: YaoSpec(schwefel_2_26, -500, 500, 30, None, _SCHWEFEL.optimum_f, _SCHWEFEL.optimum_x,
               "Schwefel 2.26, -sum x_i sin(sqrt |x_i|)"),
    9: YaoSpec(rastrigin, -5.12, 5.12, 30, None, _is(0.0), 0.0, "generalised Rastrigin"),
    10: YaoSpec(ackley, -32, 32, 30, None, _is(0.0), 0.0, "Ackley"),
    11: YaoSpec(griewank, -600, 600, 30, None, _is(0.0), 0.0, "generalised Griewank"),
    12: YaoSpec(penalized_1, -50, 50, 30, None, _is(0.0), -1.0, "generalised penalised 1"),
    13: YaoSpec(penalized_2, -50, 50, 30, None, _is(0.0), 1.0, "generalised penalised 2"),
    # Minimiser (-31.97833, -31.97833), f = 0.998003838, as the literature quotes it (benchmarkfcns.info,
    # "De Jong N. 5": 0.998004 near (-32, -32)); paper: 1
    14: YaoSpec(foxholes, -65.536, 65.536, 2, 2, _is(0.9980038377944502), (-31.97833483565697, -31.978334837300796),
                "Shekel's foxholes", {"a": FOXHOLES_A}),
    # Minimiser (0.192833, 0.190836, 0.123117, 0.135766), f = 3.0748610e-4: SciPy's global-optimisation
    # benchmarks (benchmarks/go_benchmark_functions/go_funcs_K.py, Kowalik); paper: 0.0003075
    15: YaoSpec(kowalik, -5, 5, 4, 4, _is(3.0748598780560606e-4),
                (0.1928334529825086, 0.19083623878262915, 0.12311729627785713, 0.13576598998153702),
                "Kowalik", {"a": KOWALIK_A, "b_inv": KOWALIK_B_INV}),
    # Minimisers +-(0.08984201368, -0.71265640327), f = -1.031628453489877: SciPy's benchmarks (go_funcs_S.py,
    # SixHumpCamel, after Jamil & Yang 2013); paper: -1.0316285
    16: YaoSpec(six_hump_camel, -5, 5, 2, 2, _is(-1.0316284534898774), (0.08984201310031806, -0.7126564030207396),
                "six-hump camel-back"),
    # Minimisers (-pi, 12.275), (pi, 2.275), (9.42478, 2.475), f = 5 / (4 pi) exactly: sfu.ca, "Branin"; paper: 0.398
    17: YaoSpec(branin, (-5, 0), (10, 15), 2, 2, _is(5 / (4 * math.pi)), (-math.pi, 12.275), "Branin"),
    # Minimiser (0, -1), f = 3 exactly: sfu.ca, "Goldstein-Price"
    18: YaoSpec(goldstein_price, -2, 2, 2, 2, _is(3.0), (0.0, -1.0), "Goldstein-Price"),
    # Minimiser (0.114614, 0.555649, 0.852547), f = -3.86278: sfu.ca, "Hartmann 3-D"; paper: -3.86
    19: YaoSpec(hartman, 0, 1, 3, 3, _is(-3.8627821478207554),
                (0.11461433858967197, 0.5556488499718569, 0.8525469535208657),
                "Hartman 3", {"c": HARTMAN_C, "a": HARTMAN3_A, "p": HARTMAN3_P}),
    # Minimiser computed for this p table (see the module docstring); paper: -3.32
    20: YaoSpec(hartman, 0, 1, 6, 6, _is(-3.321995171584242),
                (0.2017076178851548, 0.14678094565327277, 0.47674485123221866,
                 0.27534239096212715, 0.3116518752995117, 0.6572751642210496),
                "Hartman 6", {"c": HARTMAN_C, "a": HARTMAN6_A, "p": HARTMAN6_P}),
    # Minimisers of f21-f23, f = -10.1531996791, -10.4029405668, -10.536409816692: SciPy's benchmarks
    # (go_funcs_S.py, Shekel05/07/10, which correct Jamil & Yang's x* = (4, 4, 4, 4)); paper: -10.15, -10.40, -10.54
    21: YaoSpec(shekel, 0, 10, 4, 4, _is(-10.153199679058227),
                (4.000037152819676, 4.00013327659156, 4.000037152819676, 4.00013327659156),
                "Shekel 5", {"a": SHEKEL_A[:5], "c": SHEKEL_C[:5]}),
    22: YaoSpec(shekel, 0, 10, 4, 4, _is(-10.40294056681866),
                (4.000572916185823, 4.000689366185305, 3.9994897088591506, 3.9996061588586316),
                "Shekel 7", {"a": SHEKEL_A[:7], "c": SHEKEL_C[:7]}),
    23: YaoSpec(shekel, 0, 10, 4, 4, _is(-10.536409816692043),
                (4.000746531592046, 4.000592934138532, 3.9996633980403224, 3.9995098005868077),
                "Shekel 10", {"a": SHEKEL_A, "c": SHEKEL_C}),
}


class YaoProblem(Problem):
    """Yao et al.'s function f`number` (1-23) on the paper's box, in `dim` dimensions (default:
    the paper's). f7 adds noise from its own generator, seeded with `noise_seed`."""

    #: True when evaluate is random (f7): the engine must not replay it from a captured graph.
    stochastic: bool = False

    def __init__(self, number: int, dim: int | None = None, *, noise_seed: int = 0) -> None:
        if not is_integer(number) or number not in YAO:
            raise ValueError(f"Yao et al. 1999 has functions 1-23, got {number!r}")
        spec = YAO[number]
        dim = spec.dim if dim is None else check_dim(dim)
        if spec.fixed_dim is not None and dim != spec.fixed_dim:
            raise ValueError(f"yao-f{number} ({spec.summary}) is defined for dim {spec.fixed_dim} only, got dim={dim}")
        xs = spec.optimum_x if isinstance(spec.optimum_x, tuple) else [spec.optimum_x] * dim
        super().__init__(dim, spec.lower, spec.upper, optimum_f=spec.optimum_f(dim), optimum_x=xs)
        self.name = f"yao-f{number}"
        self.number = number
        self.fn = spec.fn
        self.table_names = tuple(spec.tables)
        for key, table in spec.tables.items():
            setattr(self, key, torch.tensor(table, dtype=torch.float64))
        if spec.noisy:
            if not is_integer(noise_seed) or not 0 <= noise_seed <= MAX_SEED:
                raise ValueError(f"noise_seed must be an integer in 0..2**64 - 1, got {noise_seed!r}")
            # an instance attribute, so that every ProblemWrapper (which copies vars) carries it
            self.stochastic = True
            self.noise_seed = int(noise_seed)
            self._generators: dict[torch.device, torch.Generator] = {}

    def evaluate(self, x: Tensor) -> Tensor:
        f = self.fn(x, **{key: getattr(self, key).to(x) for key in self.table_names})
        if self.stochastic:
            f = f + torch.rand(f.shape, generator=self._generator(x.device), device=x.device, dtype=x.dtype)
        return f

    def _generator(self, device: torch.device) -> torch.Generator:
        """The noise stream on `device`, created on first use and seeded with noise_seed."""
        if device not in self._generators:
            self._generators[device] = torch.Generator(device=device).manual_seed(self.noise_seed)
        return self._generators[device]

    def to(self, device: torch.device | str, dtype: torch.dtype | None = None) -> YaoProblem:
        """A copy on `device`; f7's copy starts its own noise streams at noise_seed, so the noise a
        run sees does not depend on what else has evaluated the problem."""
        moved = super().to(device, dtype)
        if self.stochastic:
            moved._generators = {}
        return moved

    def describe(self) -> dict:
        d = super().describe()
        if self.stochastic:
            d["noise_seed"] = self.noise_seed
        return d
