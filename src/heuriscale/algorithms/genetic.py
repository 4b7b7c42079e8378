"""Real-coded genetic operators of NSGA-II and MOEA/D, as pymoo 0.6.2 applies them.

Simulated binary crossover (SBX; K. Deb and R. B. Agrawal, "Simulated Binary Crossover for
Continuous Search Space", Complex Systems 9, 1995) with the bounded spread of Deb's NSGA-II
code, and polynomial mutation (PM; K. Deb and M. Goyal 1996, in the bounded form of the same
code), each written after pymoo's `cross_sbx` and `mut_pm`, batched over runs and matings:

SBX, for a pair of parents (p1, p2), per variable j:
- the pair mates at all with probability `p_c` (else both children copy their parents);
- variable j is crossed with probability `p_var` (pymoo's prob_var 0.5), and never where the
  parents are within 1e-14 of each other or the bounds coincide;
- with y1 = min(p1, p2), y2 = max, delta = y2 - y1, one u ~ U[0, 1) per variable, and for each
  side beta = 1 + 2 (y1 - lower) / delta (child 1) or 1 + 2 (upper - y2) / delta (child 2),
  alpha = 2 - beta^-(eta+1), betaq = (u alpha)^(1/(eta+1)) if u <= 1/alpha else
  (1 / (2 - u alpha))^(1/(eta+1)); c1 = (y1 + y2 - betaq delta) / 2, c2 = (y1 + y2 + betaq delta) / 2;
- the children are swapped with probability `p_exchange` (pymoo's prob_bin 0.5) as pymoo
  swaps them (the draw XOR "p1 > p2"), then clipped to the box.

PM, per child and variable: mutated with probability `p_var` (1/D by default) and only in
individuals drawn with probability `p_individual` (pymoo's PM(prob=0.9) default); with
d1 = (x - lower) / (upper - lower), d2 = (upper - x) / (upper - lower), u ~ U[0, 1):
deltaq = (2u + (1 - 2u)(1 - d1)^(eta+1))^(1/(eta+1)) - 1 if u <= 0.5, else
1 - (2(1 - u) + 2(u - 0.5)(1 - d2)^(eta+1))^(1/(eta+1)); x + deltaq (upper - lower), clipped.

Each operator takes its uniform numbers as an argument or draws them itself, all in one
`torch.rand` (`uniform_parts`): one launch on a GPU, and on the CPU the same numbers as one
draw per part in the same order.
"""

from __future__ import annotations

import math

import torch


def uniform_parts(like: torch.Tensor, *shapes: tuple[int, ...], dtype: torch.dtype | None = None) -> list[torch.Tensor]:
    """U[0, 1) tensors of the given shapes (on `like`'s device, in `dtype` or `like`'s), cut in
    order from one `torch.rand`. The CPU generator fills a tensor element by element, so these
    are the numbers one `torch.rand` per shape, in this order, would draw there."""
    sizes = [math.prod(shape) for shape in shapes]
    flat = torch.rand(sum(sizes), device=like.device, dtype=like.dtype if dtype is None else dtype)
    return [part.view(shape) for part, shape in zip(flat.split(sizes), shapes)]


def sbx_shapes(runs: int, pairs: int, dim: int) -> list[tuple[int, ...]]:
    """The shapes of what `sbx` draws for (runs, pairs, D) parent pairs: the mating draw
    (runs, pairs, 1), then the crossing, spread and exchange draws (runs, pairs, D)."""
    return [(runs, pairs, 1)] + 3 * [(runs, pairs, dim)]


def pm_shapes(runs: int, n: int, dim: int) -> list[tuple[int, ...]]:
    """The shapes of what `polynomial_mutation` draws for (runs, n, D) points: the mutation and
    spread draws (runs, n, D), then the individual draw (runs, n, 1)."""
    return 2 * [(runs, n, dim)] + [(runs, n, 1)]


def sbx(p1: torch.Tensor, p2: torch.Tensor, lower: torch.Tensor, upper: torch.Tensor, *, eta: float,
        p_c: float, p_var: float = 0.5, p_exchange: float = 0.5,
        uniforms: list[torch.Tensor] | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Two children (runs, n, D) of the parent pairs p1, p2 (runs, n, D); `uniforms` shaped as
    `sbx_shapes` says (drawn here when None)."""
    mates, cross, u, exchange = uniform_parts(p1, *sbx_shapes(*p1.shape)) if uniforms is None else uniforms
    cross = (cross < p_var) & ((p1 - p2).abs() > 1e-14) & (lower != upper) & (mates < p_c)
    y1, y2 = torch.minimum(p1, p2), torch.maximum(p1, p2)
    delta = torch.where(cross, y2 - y1, 1.0)  # (1.0 where not crossed: no division by zero)

    def betaq(beta):
        alpha = 2.0 - beta.pow(-(eta + 1.0))
        inner = torch.where(u <= 1.0 / alpha, u * alpha, 1.0 / (2.0 - u * alpha))
        return inner.pow(1.0 / (eta + 1.0))

    c1 = 0.5 * ((y1 + y2) - betaq(1.0 + 2.0 * (y1 - lower) / delta) * delta)
    c2 = 0.5 * ((y1 + y2) + betaq(1.0 + 2.0 * (upper - y2) / delta) * delta)
    smaller = p1 < p2
    child1, child2 = torch.where(smaller, c1, c2), torch.where(smaller, c2, c1)
    swap = (exchange < p_exchange) ^ (p1 > p2)
    child1, child2 = torch.where(swap, child2, child1), torch.where(swap, child1, child2)
    child1 = torch.where(cross, child1, p1).clamp(lower, upper)
    child2 = torch.where(cross, child2, p2).clamp(lower, upper)
    return child1, child2


def polynomial_mutation(x: torch.Tensor, lower: torch.Tensor, upper: torch.Tensor, *, eta: float, p_var: float,
                        p_individual: float = 0.9, uniforms: list[torch.Tensor] | None = None) -> torch.Tensor:
    """x (runs, n, D) mutated: per variable with probability p_var, in individuals drawn with
    probability p_individual; `uniforms` shaped as `pm_shapes` says (drawn here when None)."""
    mutate, u, individual = uniform_parts(x, *pm_shapes(*x.shape)) if uniforms is None else uniforms
    mutate = (mutate < p_var) & (lower != upper)
    span = torch.where(lower != upper, upper - lower, 1.0)
    d1, d2 = (x - lower) / span, (upper - x) / span
    power = 1.0 / (eta + 1.0)
    low_side = (2.0 * u + (1.0 - 2.0 * u) * (1.0 - d1).pow(eta + 1.0)).pow(power) - 1.0
    high_side = 1.0 - (2.0 * (1.0 - u) + 2.0 * (u - 0.5) * (1.0 - d2).pow(eta + 1.0)).pow(power)
    y = (x + torch.where(u <= 0.5, low_side, high_side) * span).clamp(lower, upper)
    return torch.where(mutate & (individual <= p_individual), y, x)
