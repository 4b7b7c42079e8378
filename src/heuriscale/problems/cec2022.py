"""The CEC 2022 single-objective bound-constrained suite, F1-F12 at D = 2, 10, 20.

Equal to the competition's official C implementation (`cec22_test_func.cpp`), quirks
included, vectorised over every leading dimension in torch:

- F3's Schaffer F7 runs on the shifted, unscaled, *unrotated* vector (the C code computes
  the rotation and then reads the shifted vector);
- F4 has no step transform (the C code overwrites it before use): plain shifted, rotated
  Rastrigin;
- F5's Levy uses scale 1;
- in F7 (hybrid function 10) the Schaffer F7 component reads the *first* entries of the
  shuffled vector, not its own segment;
- hybrid components are scaled by their own shrink rate, without shift or rotation;
- composition weights: a component at distance 0 gets weight 1e99 ("INF"), and when every
  weight underflows to 0 all weights become 1.

The shift vectors, rotation matrices and shuffles are the official data files, read from
the installed `opfunu` package (`opfunu/cec_based/data_2022/`, byte-identical to the
competition's); opfunu's own functions are not used.
"""

from __future__ import annotations

import functools
import importlib.util
import math
from pathlib import Path

import torch

from .base import Problem, check_dim
from .classic import ackley, bent_cigar, elliptic, griewank, hgbat, levy, rastrigin, rosenbrock, zakharov

Tensor = torch.Tensor
BIAS = {1: 300, 2: 400, 3: 600, 4: 800, 5: 900, 6: 1800, 7: 2000, 8: 2200, 9: 2300, 10: 2400, 11: 2600, 12: 2700}
DIMS = (2, 10, 20)
INF = 1e99


# -- base functions on transformed vectors z (the C code's inner loops) ------------------------
def schwefel_cec(z: Tensor) -> Tensor:
    n = z.shape[-1]
    z = z + 4.209687462275036e002
    over, under = z > 500, z < -500
    m = torch.fmod(z, 500.0)
    ma = torch.fmod(z.abs(), 500.0)
    inside = -z * torch.sin(z.abs().sqrt())
    above = -(500.0 - m) * torch.sin((500.0 - m).clamp(min=0).sqrt()) + ((z - 500.0) / 100) ** 2 / n
    below = -(-500.0 + ma) * torch.sin((500.0 - ma).clamp(min=0).sqrt()) + ((z + 500.0) / 100) ** 2 / n
    terms = torch.where(over, above, torch.where(under, below, inside))
    return terms.sum(-1) + 4.189828872724338e002 * n


def schaffer_f7(y: Tensor) -> Tensor:
    n = y.shape[-1]
    s = (y[..., :-1] ** 2 + y[..., 1:] ** 2).sqrt()
    t = torch.sin(50.0 * s.pow(0.2))
    total = (s.sqrt() + s.sqrt() * t * t).sum(-1)
    return total * total / (n - 1) / (n - 1)


def katsuura(z: Tensor) -> Tensor:
    n = z.shape[-1]
    two_j = 2.0 ** torch.arange(1, 33, device=z.device, dtype=z.dtype)
    t = two_j * z[..., None]
    temp = ((t - torch.floor(t + 0.5)).abs() / two_j).sum(-1)
    i = torch.arange(1, n + 1, device=z.device, dtype=z.dtype)
    f = torch.pow(1.0 + i * temp, 10.0 / n**1.2).prod(-1)
    c = 10.0 / n / n
    return f * c - c


def happycat(z: Tensor) -> Tensor:
    n = z.shape[-1]
    z = z - 1.0
    r2 = (z * z).sum(-1)
    return (r2 - n).abs().pow(0.25) + (0.5 * r2 + z.sum(-1)) / n + 0.5


def grie_rosen(z: Tensor) -> Tensor:
    z = z + 1.0
    nxt = torch.roll(z, -1, -1)  # pairs (z_i, z_i+1) and the wrap-around (z_n, z_1)
    t = 100.0 * (z * z - nxt) ** 2 + (z - 1.0) ** 2
    return (t * t / 4000.0 - torch.cos(t) + 1.0).sum(-1)


def escaffer6(z: Tensor) -> Tensor:
    nxt = torch.roll(z, -1, -1)
    r2 = z * z + nxt * nxt
    s = torch.sin(r2.sqrt()) ** 2
    return (0.5 + (s - 0.5) / (1.0 + 0.001 * r2) ** 2).sum(-1)


def discus(z: Tensor) -> Tensor:
    return 1e6 * z[..., 0] ** 2 + (z[..., 1:] ** 2).sum(-1)


# (function of z, shrink rate) as the C code's basic functions
BASIC = {
    "zakharov": (zakharov, 1.0),
    "rosenbrock": (lambda z: rosenbrock(z + 1.0), 2.048 / 100.0),
    "rastrigin": (rastrigin, 5.12 / 100.0),
    "levy": (lambda z: levy(z + 1.0), 1.0),  # w = 1 + z / 4
    "bent_cigar": (bent_cigar, 1.0),
    "hgbat": (lambda z: hgbat(z - 1.0), 5.0 / 100.0),
    "katsuura": (katsuura, 5.0 / 100.0),
    "ackley": (ackley, 1.0),
    "schwefel": (schwefel_cec, 1000.0 / 100.0),
    "happycat": (happycat, 5.0 / 100.0),
    "grie_rosen": (grie_rosen, 5.0 / 100.0),
    "ellips": (elliptic, 1.0),
    "discus": (discus, 1.0),
    "escaffer6": (escaffer6, 1.0),
    "griewank": (griewank, 600.0 / 100.0),
}

HYBRID = {  # F6 = hf02, F7 = hf10, F8 = hf06: (component, share of D)
    6: [("bent_cigar", 0.4), ("hgbat", 0.4), ("rastrigin", 0.2)],
    7: [("hgbat", 0.1), ("katsuura", 0.2), ("ackley", 0.2), ("rastrigin", 0.2), ("schwefel", 0.1), ("schaffer_f7", 0.2)],
    8: [("katsuura", 0.3), ("happycat", 0.2), ("grie_rosen", 0.2), ("schwefel", 0.1), ("ackley", 0.2)],
}

COMPOSITION = {  # (component, rotated, scale of its value), deltas, biases
    9: ([("rosenbrock", True, 1.0), ("ellips", True, 1e4 / 1e10), ("bent_cigar", True, 1e4 / 1e30),
         ("discus", True, 1e4 / 1e10), ("ellips", False, 1e4 / 1e10)], [10, 20, 30, 40, 50], [0, 200, 300, 100, 400]),
    10: ([("schwefel", False, 1.0), ("rastrigin", True, 1.0), ("hgbat", True, 1.0)], [20, 10, 10], [0, 200, 100]),
    11: ([("escaffer6", True, 1e4 / 2e7), ("schwefel", True, 1.0), ("griewank", True, 1000 / 100),
          ("rosenbrock", True, 1.0), ("rastrigin", True, 1e4 / 1e3)], [20, 20, 30, 30, 20], [0, 200, 300, 400, 200]),
    12: ([("hgbat", True, 1e4 / 1000), ("rastrigin", True, 1e4 / 1e3), ("schwefel", True, 1e4 / 4e3),
          ("bent_cigar", True, 1e4 / 1e30), ("ellips", True, 1e4 / 1e10), ("escaffer6", True, 1e4 / 2e7)],
         [10, 20, 30, 40, 50, 60], [0, 300, 500, 100, 400, 200]),
}

SIMPLE = {1: "zakharov", 2: "rosenbrock", 3: "schaffer_f7", 4: "rastrigin", 5: "levy"}


# -- official data -------------------------------------------------------------------------
def data_dir(year: int = 2022) -> Path:
    """The official CEC `year` input files inside the installed opfunu package (not imported)."""
    spec = importlib.util.find_spec("opfunu")
    if spec is None or not spec.submodule_search_locations:
        raise ValueError(
            f"the CEC {year} problems read the official data files shipped in the 'opfunu' package, "
            "which is not installed (a dependency of heuriscale): pip install opfunu"
        )
    folder = Path(list(spec.submodule_search_locations)[0]) / "cec_based" / f"data_{year}"
    if not folder.is_dir():
        raise ValueError(f"the installed opfunu has no CEC {year} data folder at {folder}: install opfunu >= 1.0")
    return folder


def _numbers(name: str) -> list[list[float]]:
    lines = (data_dir() / name).read_text().splitlines()
    return [[float(v) for v in line.split()] for line in lines if line.strip()]


@functools.lru_cache(maxsize=None)
def official_data(function: int, dim: int) -> tuple[Tensor, Tensor, Tensor | None]:
    """(shifts (k, D), rotations (k, D, D), shuffle (D,) 0-based or None), float64, CPU."""
    rows = _numbers(f"shift_data_{function}.txt")
    flat_m = [v for row in _numbers(f"M_{function}_D{dim}.txt") for v in row]
    if function < 9:  # one shift: the first D numbers of the file; one D x D matrix
        shifts = torch.tensor([[v for row in rows for v in row][:dim]], dtype=torch.float64)
        rotations = torch.tensor(flat_m[: dim * dim], dtype=torch.float64).reshape(1, dim, dim)
    else:  # one shift per line (first D numbers), one matrix per component
        shifts = torch.tensor([row[:dim] for row in rows], dtype=torch.float64)
        k = len(flat_m) // (dim * dim)
        rotations = torch.tensor(flat_m[: k * dim * dim], dtype=torch.float64).reshape(k, dim, dim)
    shuffle = None
    if function in HYBRID:
        order = [int(v) for row in _numbers(f"shuffle_data_{function}_D{dim}.txt") for v in row][:dim]
        shuffle = torch.tensor(order, dtype=torch.int64) - 1
    return shifts, rotations, shuffle


def _segments(dim: int, shares: list[float]) -> list[tuple[int, int]]:
    sizes = [math.ceil(share * dim) for share in shares[:-1]]
    sizes.append(dim - sum(sizes))
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return list(zip(starts, sizes))


class CEC2022(Problem):
    """CEC 2022 function `function` (1-12) in dimension `dim` (2, 10, 20) on [-100, 100]^D."""

    def __init__(self, function: int, dim: int) -> None:
        if function not in BIAS:
            raise ValueError(f"CEC 2022 has functions 1-12, got {function!r}")
        dim = check_dim(dim)
        if dim not in DIMS:
            raise ValueError(f"CEC 2022 functions are defined for D = 2, 10 or 20 only, got dim={dim}")
        if dim == 2 and function in HYBRID:
            raise ValueError(f"CEC 2022 F{function} (a hybrid function) is not defined for D = 2: use 10 or 20")
        shifts, rotations, shuffle = official_data(function, dim)
        super().__init__(dim, -100.0, 100.0, optimum_f=BIAS[function], optimum_x=shifts[0])
        self.name = f"cec2022-f{function}"
        self.function = function
        self.shifts = shifts
        self.rotations = rotations
        if shuffle is not None:
            self.shuffle = shuffle

    def evaluate(self, x: Tensor) -> Tensor:
        fn = self.function
        if fn in SIMPLE:
            value = self._simple(x, SIMPLE[fn])
        elif fn in HYBRID:
            value = self._hybrid(x)
        else:
            value = self._composition(x)
        return value + BIAS[fn]

    def _shift_rotate(self, x: Tensor, k: int, rate: float, rotate: bool = True) -> tuple[Tensor, Tensor]:
        """The C code's sr_func: y = (x - o_k) * rate, z = M_k y (or y unrotated)."""
        y = (x - self.shifts[k]) * rate
        return (y @ self.rotations[k].T if rotate else y), y

    def _simple(self, x: Tensor, name: str) -> Tensor:
        if name == "schaffer_f7":  # quirk: on y, the shifted unrotated vector
            return schaffer_f7(self._shift_rotate(x, 0, 1.0)[1])
        fn, rate = BASIC[name]
        return fn(self._shift_rotate(x, 0, rate)[0])

    def _hybrid(self, x: Tensor) -> Tensor:
        z, _ = self._shift_rotate(x, 0, 1.0)
        y = z[..., self.shuffle]
        total = torch.zeros(x.shape[:-1], device=x.device, dtype=x.dtype)
        for (name, _), (start, size) in zip(HYBRID[self.function], _segments(self.dim, [s for _, s in HYBRID[self.function]])):
            if name == "schaffer_f7":  # quirk: reads the first entries of the shuffled vector
                total = total + schaffer_f7(y[..., :size])
            else:
                fn, rate = BASIC[name]
                total = total + fn(y[..., start:start + size] * rate)
        return total

    def _composition(self, x: Tensor) -> Tensor:
        components, deltas, biases = COMPOSITION[self.function]
        fits = []
        for k, ((name, rotated, scale), bias) in enumerate(zip(components, biases)):
            fn, rate = BASIC[name]
            fits.append(scale * fn(self._shift_rotate(x, k, rate, rotated)[0]) + bias)
        return compose(x, self.shifts, fits, deltas)


def compose(x: Tensor, shifts: Tensor, fits: list[Tensor], deltas: list[float]) -> Tensor:
    """The C code's cf_cal: the components' values weighted by closeness to each one's optimum
    o_k, w_k = exp(-|x - o_k|^2 / (2 D delta_k^2)) / |x - o_k| (INF at o_k), normalised; where
    every weight underflows to 0, all weigh the same."""
    weights = []
    for k, delta in enumerate(deltas):
        d2 = ((x - shifts[k]) ** 2).sum(-1)
        w = torch.exp(-d2 / 2.0 / x.shape[-1] / delta**2) / d2.sqrt()
        weights.append(torch.where(d2 == 0, _big(x.dtype, len(deltas)), w))
    fit, w = torch.stack(fits, -1), torch.stack(weights, -1)
    w = torch.where((w == 0).all(-1, keepdim=True), 1.0, w)
    return (w / w.sum(-1, keepdim=True) * fit).sum(-1)


def _big(dtype: torch.dtype, k: int) -> float:
    """The C code's INF weight, kept finite so that k of them still sum without overflow."""
    return min(INF, torch.finfo(dtype).max / (k + 1))
