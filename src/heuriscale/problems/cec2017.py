"""The CEC 2017 single-objective bound-constrained suite, F1-F30 at D = 10, 30, 50, 100.

Equal to the competition's official C implementation (`cec17_test_func.cpp`, Awad, Ali,
Liang, Qu & Suganthan), quirks included, vectorised over every leading dimension in torch.
F_i(x) = g_i(x) + 100 i on [-100, 100]^D. What the C code does, read line by line:

- every basic function scales its input by its own rate inside `sr_func` (Rosenbrock
  2.048/100, Rastrigin 5.12/100, Schwefel 1000/100, Griewank 600/100, Weierstrass 0.5/100,
  Lunacek 10/100, HGBat, HappyCat, Katsuura and Griewank-Rosenbrock 5/100, the others 1),
  in the simple, hybrid and composition functions alike;
- F2 (sum of different powers) is computed but the organisers left it out of the suite
  (unstable in high D); it stays registered, as `cec2017-f2`, for completeness;
- F6's Schaffer F7 runs on the shifted, *unrotated* vector (the C code computes the
  rotation and then reads the shifted vector `y`);
- F7's Lunacek bi-Rastrigin mirrors the coordinates where the shift is negative and
  rotates only the vector inside the cosine term;
- F8 has no step transform (the C code rounds a stale buffer that it then overwrites):
  plain shifted, rotated Rastrigin, like F5 on its own data;
- F9's Levy uses w = 1 + (z - 1) / 4 on z itself, so its minimum 900 is at z = 1, i.e. at
  x = o + M^-1 1, not at the shift o (there F9 is about 901.4 at D = 10);
- hybrid functions (F11-F20) rotate x - o, permute it with the official shuffle and give
  each component a segment of ceil(share * D) entries (the last one the rest), computed in
  double as the C code does; each component scales its segment by its own rate and
  neither shifts nor rotates it; two components read otherwise:
  * Schaffer F7 (F14, F20) reads the *first* entries of the shuffled vector, not its own
    segment (its `y` is the whole shuffled vector);
  * Lunacek (F13) mirrors by the sign of the *first* entries of the function's shift;
- composition functions (F21-F30) rotate every component; F29 and F30 compose hybrid
  functions (hf05-hf07, hf05/hf08/hf09), each with its own shift, matrix and shuffle;
  weights w_k = exp(-d2 / (2 D delta_k^2)) / sqrt(d2), a component at distance 0 gets the
  C code's INF (1e99), and when every weight underflows to 0 all weights become 1.

The shift vectors, rotation matrices and shuffles are the official data files, read from
the installed `opfunu` package (`opfunu/cec_based/data_2017/`, the same numbers as the
competition's `input_data`, some files with CRLF line ends); opfunu's own functions are not
used. Besides D = 10, 30, 50, 100 the official data defines D = 2 for F1-F10 and F21-F28
and D = 20 for F1-F10 and F20-F28; those work too.
"""

from __future__ import annotations

import functools
import math
import numbers

import torch

from .base import Problem, check_dim
from .cec2022 import BASIC as _BASIC_2022
from .cec2022 import _segments, compose, data_dir, schaffer_f7
from .classic import levy

Tensor = torch.Tensor
FUNCTIONS = range(1, 31)
DIMS = (10, 30, 50, 100)  # the competition's dimensions, every function
_D2 = frozenset(range(1, 11)) | frozenset(range(21, 29))  # the official data also has D = 2 for these
_D20 = _D2 | {20}  # ... and D = 20 for these


def dims(function: int) -> tuple[int, ...]:
    """The dimensions the official data defines CEC 2017 F`function` in."""
    return tuple(sorted(DIMS + (2,) * (function in _D2) + (20,) * (function in _D20)))


# -- base functions on transformed vectors z (the C code's inner loops) ------------------------
def sum_diff_pow(z: Tensor) -> Tensor:
    """F2's sum of different powers, sum |z_i|^(i+1)."""
    powers = torch.arange(1, z.shape[-1] + 1, device=z.device, dtype=z.dtype)
    return z.abs().pow(powers).sum(-1)


def weierstrass(z: Tensor) -> Tensor:
    """sum_i sum_k a^k cos(2 pi b^k (z_i + 0.5)) - D sum_k a^k cos(pi b^k), a = 0.5, b = 3, k <= 20."""
    k = torch.arange(21, device=z.device, dtype=z.dtype)
    a_k, b_k = 0.5**k, 3.0**k
    terms = a_k * torch.cos(2.0 * math.pi * b_k * (z[..., None] + 0.5))
    offset = sum(0.5**j * math.cos(2.0 * math.pi * 3.0**j * 0.5) for j in range(21))
    return terms.sum(-1).sum(-1) - z.shape[-1] * offset


def bi_rastrigin(y: Tensor, flip: Tensor, rotation: Tensor | None = None) -> Tensor:
    """Lunacek bi-Rastrigin on y = (x - o) * 10/100: mirrored where `flip`, rotated in the cosine only."""
    n = y.shape[-1]
    mu0, d = 2.5, 1.0
    s = 1.0 - 1.0 / (2.0 * (n + 20.0) ** 0.5 - 8.2)
    mu1 = -(((mu0 * mu0 - d) / s) ** 0.5)
    z = torch.where(flip, -(2.0 * y), 2.0 * y)
    t = z + mu0
    near = ((t - mu0) ** 2).sum(-1)
    far = ((t - mu1) ** 2).sum(-1) * s + d * n
    r = z if rotation is None else z @ rotation.T
    return torch.minimum(near, far) + 10.0 * (n - torch.cos(2.0 * math.pi * r).sum(-1))


# (function of z, shrink rate) as the C code's basic functions; the CEC 2022 code has the same
# functions and rates but its Levy shifts z by 1, the 2017 one does not
BASIC = {
    **_BASIC_2022,
    "levy": (levy, 1.0),  # w = 1 + (z - 1) / 4
    "weierstrass": (weierstrass, 0.5 / 100.0),
    "sum_diff_pow": (sum_diff_pow, 1.0),
}
LUNACEK_RATE = 10.0 / 100.0

SIMPLE = {1: "bent_cigar", 2: "sum_diff_pow", 3: "zakharov", 4: "rosenbrock", 5: "rastrigin",
          6: "schaffer_f7", 7: "bi_rastrigin", 8: "rastrigin", 9: "levy", 10: "schwefel"}

HYBRID = {  # F11-F20 = hf01-hf10: (component, share of D) in the C code's order
    11: [("zakharov", 0.2), ("rosenbrock", 0.4), ("rastrigin", 0.4)],
    12: [("ellips", 0.3), ("schwefel", 0.3), ("bent_cigar", 0.4)],
    13: [("bent_cigar", 0.3), ("rosenbrock", 0.3), ("bi_rastrigin", 0.4)],
    14: [("ellips", 0.2), ("ackley", 0.2), ("schaffer_f7", 0.2), ("rastrigin", 0.4)],
    15: [("bent_cigar", 0.2), ("hgbat", 0.2), ("rastrigin", 0.3), ("rosenbrock", 0.3)],
    16: [("escaffer6", 0.2), ("hgbat", 0.2), ("rosenbrock", 0.3), ("schwefel", 0.3)],
    17: [("katsuura", 0.1), ("ackley", 0.2), ("grie_rosen", 0.2), ("schwefel", 0.2), ("rastrigin", 0.3)],
    18: [("ellips", 0.2), ("ackley", 0.2), ("rastrigin", 0.2), ("hgbat", 0.2), ("discus", 0.2)],
    19: [("bent_cigar", 0.2), ("rastrigin", 0.2), ("grie_rosen", 0.2), ("weierstrass", 0.2), ("escaffer6", 0.2)],
    20: [("hgbat", 0.1), ("katsuura", 0.1), ("ackley", 0.2), ("rastrigin", 0.2), ("schwefel", 0.2), ("schaffer_f7", 0.2)],
}

COMPOSITION = {  # (component: basic name or hybrid F number, scale of its value), deltas; biases 0, 100, 200, ...
    21: ([("rosenbrock", 1.0), ("ellips", 1e4 / 1e10), ("rastrigin", 1.0)], [10, 20, 30]),
    22: ([("rastrigin", 1.0), ("griewank", 1000 / 100), ("schwefel", 1.0)], [10, 20, 30]),
    23: ([("rosenbrock", 1.0), ("ackley", 1000 / 100), ("schwefel", 1.0), ("rastrigin", 1.0)], [10, 20, 30, 40]),
    24: ([("ackley", 1000 / 100), ("ellips", 1e4 / 1e10), ("griewank", 1000 / 100), ("rastrigin", 1.0)], [10, 20, 30, 40]),
    25: ([("rastrigin", 1e4 / 1e3), ("happycat", 1000 / 1e3), ("ackley", 1000 / 100), ("discus", 1e4 / 1e10),
          ("rosenbrock", 1.0)], [10, 20, 30, 40, 50]),
    26: ([("escaffer6", 1e4 / 2e7), ("schwefel", 1.0), ("griewank", 1000 / 100), ("rosenbrock", 1.0),
          ("rastrigin", 1e4 / 1e3)], [10, 20, 20, 30, 40]),
    27: ([("hgbat", 1e4 / 1000), ("rastrigin", 1e4 / 1e3), ("schwefel", 1e4 / 4e3), ("bent_cigar", 1e4 / 1e30),
          ("ellips", 1e4 / 1e10), ("escaffer6", 1e4 / 2e7)], [10, 20, 30, 40, 50, 60]),
    28: ([("ackley", 1000 / 100), ("griewank", 1000 / 100), ("discus", 1e4 / 1e10), ("rosenbrock", 1.0),
          ("happycat", 1000 / 1e3), ("escaffer6", 1e4 / 2e7)], [10, 20, 30, 40, 50, 60]),
    29: ([(15, 1.0), (16, 1.0), (17, 1.0)], [10, 30, 50]),  # hf05, hf06, hf07
    30: ([(15, 1.0), (18, 1.0), (19, 1.0)], [10, 30, 50]),  # hf05, hf08, hf09
}


# -- official data -------------------------------------------------------------------------
def _first_numbers(name: str, count: int) -> list[float]:
    """The first `count` numbers of an official file, in the order the C code's fscanf reads them."""
    numbers: list[float] = []
    with open(data_dir(2017) / name) as lines:
        for line in lines:
            numbers.extend(float(v) for v in line.split())
            if len(numbers) >= count:
                return numbers[:count]
    raise ValueError(f"the official CEC 2017 file {name} has fewer than {count} numbers")


@functools.lru_cache(maxsize=None)
def official_data(function: int, dim: int) -> tuple[Tensor, Tensor, Tensor | None]:
    """(shifts (k, D), rotations (k, D, D), shuffles (k, D) 0-based or None), float64, CPU.

    k = 1 for F1-F20, one per component for F21-F30, as the C code reads the files: F1-F19
    take the first D numbers of the shift file, F20-F30 the first D numbers of each line.
    """
    k = len(COMPOSITION[function][0]) if function in COMPOSITION else 1
    if function < 20:
        shifts = [_first_numbers(f"shift_data_{function}.txt", dim)]
    else:
        lines = (data_dir(2017) / f"shift_data_{function}.txt").read_text().splitlines()
        shifts = [[float(v) for v in line.split()[:dim]] for line in lines[:k]]
    flat_m = _first_numbers(f"M_{function}_D{dim}.txt", k * dim * dim)
    shuffles = None
    if function in HYBRID or function in (29, 30):
        order = [int(v) for v in _first_numbers(f"shuffle_data_{function}_D{dim}.txt", k * dim)]
        shuffles = torch.tensor(order, dtype=torch.int64).reshape(k, dim) - 1
    shifts_t = torch.tensor(shifts, dtype=torch.float64)
    return shifts_t, torch.tensor(flat_m, dtype=torch.float64).reshape(k, dim, dim), shuffles


class CEC2017(Problem):
    """CEC 2017 function `function` (1-30) in dimension `dim` (10, 30, 50, 100) on [-100, 100]^D."""

    def __init__(self, function: int, dim: int) -> None:
        if not isinstance(function, numbers.Integral) or isinstance(function, bool) or function not in FUNCTIONS:
            raise ValueError(f"CEC 2017 has functions 1-30, got {function!r}")
        function = int(function)
        dim = check_dim(dim)
        allowed = dims(function)
        if dim not in allowed:
            listed = ", ".join(str(d) for d in allowed)
            raise ValueError(f"CEC 2017 F{function} is defined for D = {listed} only (official data), got dim={dim}")
        shifts, rotations, shuffles = official_data(function, dim)
        optimum_x = shifts[0]
        if function == 9:  # Levy's minimum is at z = M (x - o) = 1
            optimum_x = shifts[0] + torch.linalg.solve(rotations[0], torch.ones(dim, dtype=torch.float64))
        super().__init__(dim, -100.0, 100.0, optimum_f=100 * function, optimum_x=optimum_x)
        self.name = f"cec2017-f{function}"
        self.function = function
        self.shifts = shifts
        self.rotations = rotations
        if shuffles is not None:
            self.shuffles = shuffles

    def evaluate(self, x: Tensor) -> Tensor:
        fn = self.function
        if fn in SIMPLE:
            value = self._simple(x, SIMPLE[fn])
        elif fn in HYBRID:
            value = self._hybrid(x, 0, fn)
        else:
            value = self._composition(x)
        return value + 100.0 * fn

    def _shift_rotate(self, x: Tensor, k: int, rate: float) -> Tensor:
        """The C code's sr_func: z = M_k ((x - o_k) * rate)."""
        return ((x - self.shifts[k]) * rate) @ self.rotations[k].T

    def _simple(self, x: Tensor, name: str) -> Tensor:
        if name == "schaffer_f7":  # quirk: on y, the shifted unrotated vector
            return schaffer_f7(x - self.shifts[0])
        if name == "bi_rastrigin":
            return bi_rastrigin((x - self.shifts[0]) * LUNACEK_RATE, self.shifts[0] < 0, self.rotations[0])
        fn, rate = BASIC[name]
        return fn(self._shift_rotate(x, 0, rate))

    def _hybrid(self, x: Tensor, k: int, number: int) -> Tensor:
        """Hybrid function F`number` (hf01-hf10) on the k-th shift, rotation and shuffle."""
        components = HYBRID[number]
        y = self._shift_rotate(x, k, 1.0)[..., self.shuffles[k]]
        total = torch.zeros(x.shape[:-1], device=x.device, dtype=x.dtype)
        for (name, _), (start, size) in zip(components, _segments(self.dim, [s for _, s in components])):
            if name == "schaffer_f7":  # quirk: reads the first entries of the shuffled vector
                total = total + schaffer_f7(y[..., :size])
            elif name == "bi_rastrigin":  # quirk: mirrored by the first entries of the shift, unrotated
                total = total + bi_rastrigin(y[..., start:start + size] * LUNACEK_RATE, self.shifts[k][:size] < 0)
            else:
                fn, rate = BASIC[name]
                total = total + fn(y[..., start:start + size] * rate)
        return total

    def _composition(self, x: Tensor) -> Tensor:
        components, deltas = COMPOSITION[self.function]
        fits = []
        for k, (name, scale) in enumerate(components):
            if isinstance(name, int):
                value = self._hybrid(x, k, name)
            else:
                fn, rate = BASIC[name]
                value = fn(self._shift_rotate(x, k, rate))
            fits.append(scale * value + 100.0 * k)
        return compose(x, self.shifts, fits, deltas)
