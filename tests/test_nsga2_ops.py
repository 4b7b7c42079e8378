"""NSGA-II's operators (`heuriscale::nsga2_offspring`, `heuriscale::nsga2_survivors`): the
engine's Triton kernels against the torch specifications in algorithms/nsga2.py, given the same
numbers. On the CPU Triton's interpreter runs the kernels (`fused_device`); under `-m gpu`
they run compiled, and the GPU tests add sizes only a GPU runs quickly."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from heuriscale.algorithms.genetic import pm_shapes, sbx_shapes, uniform_parts
from heuriscale.algorithms.nsga2 import offspring_torch, survivors_torch
from heuriscale.algorithms.pareto import front_ranks

pytest.importorskip("triton")

RATES = [15.0, 0.9, 0.5, 0.5, 20.0, None, 0.9]  # NSGA2's defaults (p_m None: 1/D)


def _offspring_case(runs: int, n: int, dim: int, dtype: torch.dtype, device: str, seed: int):
    """A population with fixed variables (lower == upper), ranks with ties, infinite crowding,
    and the numbers `NSGA2.ask` draws."""
    g = torch.Generator().manual_seed(seed)
    lower = torch.linspace(-2.0, 0.0, dim, dtype=dtype)
    upper = lower + torch.linspace(1.0, 3.0, dim, dtype=dtype)
    if dim > 1:
        upper[1] = lower[1]  # a fixed variable: never crossed nor mutated
    x = lower + (upper - lower) * torch.rand(runs, n, dim, generator=g, dtype=dtype)
    x[:, 1::5] = x[:, 0::5][:, :x[:, 1::5].shape[1]]  # equal parents (|p1 - p2| <= 1e-14: not crossed)
    rank = torch.randint(0, 3, (runs, n), generator=g)
    crowding = torch.rand(runs, n, generator=g, dtype=dtype)
    crowding[:, ::4] = torch.inf
    pairs = math.ceil(n / 2)
    perms = math.ceil(4 * pairs / n)
    torch.manual_seed(seed)
    keys, coins = uniform_parts(x, (runs, perms, n), (runs, 2 * pairs), dtype=torch.float32)
    uniforms = uniform_parts(x, *sbx_shapes(runs, pairs, dim), *pm_shapes(runs, n, dim))
    rates = [1.0 / dim if r is None else r for r in RATES]
    if dim == 1:
        rates[5] = 0.6  # else every variable of a mutated child mutates
    args = [x, rank, crowding, keys.argsort(-1).reshape(runs, -1), coins, lower, upper]
    return [a.to(device) for a in args], [u.to(device) for u in uniforms], rates


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("runs,n,dim", [(2, 7, 1), (3, 13, 5), (1, 30, 12)])
def test_the_offspring_kernel_equals_the_torch_specification(fused_device, dtype, runs, n, dim):
    from heuriscale.engine.kernels.nsga2.offspring_cuda import offspring_cuda

    args, uniforms, rates = _offspring_case(runs, n, dim, dtype, fused_device, seed=n + dim)
    expected = offspring_torch(*[a.cpu() for a in args], [u.cpu() for u in uniforms], rates)
    with np.errstate(divide="ignore"):  # the interpreter's log2(0) at a bound (its power is then 0, as pow's)
        children = offspring_cuda(*args, uniforms, rates).cpu()
    x, lower, upper = args[0].cpu(), args[5].cpu(), args[6].cpu()
    assert children.shape == (runs, n, dim)
    assert (children != x).float().mean() > 0.3  # crossed and mutated, not copied
    assert ((children >= lower) & (children <= upper)).all()
    if dim > 1:
        assert torch.equal(children[..., 1], lower[1].expand(runs, n))  # the fixed variable stays
    # float64: the interpreter's powers (exp2 of log2) are a few hundred ulps from pow at worst;
    # float32: one rounding of a power may flip a comparison inside SBX's spread, so a few ulps
    tolerance = dict(rtol=1e-12, atol=1e-12) if dtype == torch.float64 else dict(rtol=2e-6, atol=2e-6)
    torch.testing.assert_close(children, expected, **tolerance)


def _survivors_case(runs: int, n: int, dim: int, M: int, dtype: torch.dtype, seed: int):
    """R_t (2n points) with ties in the objectives, three rows of +inf (the sort ranks them with
    finite points beyond the cover, whose crowding is then NaN, as inf - inf makes it), some
    infeasible points, ranks until n are covered, and distinct tie keys (the specification's
    first sort is not stable)."""
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(runs, 2 * n, dim, generator=g, dtype=dtype)
    F = torch.rand(runs, 2 * n, M, generator=g, dtype=dtype)
    F = torch.where(torch.rand(runs, 2 * n, 1, generator=g, dtype=dtype) < 0.5, (4 * F).floor() / 4, F)
    F[:, 2:5] = torch.inf
    violation = torch.where(torch.rand(runs, 2 * n, generator=g) < 0.2, 1.0, 0.0).to(dtype)
    rank = front_ranks(F, violation, cover=n)
    tie = torch.stack([torch.randperm(2 * n, generator=g) for _ in range(runs)]).float() / (2 * n)
    return x, F, rank, violation, tie


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("runs,n,dim,M", [(2, 7, 3, 2), (2, 9, 1, 1), (1, 40, 12, 3)])
def test_the_survival_kernels_equal_the_torch_specification(fused_device, dtype, runs, n, dim, M):
    """The survivors, and with every point kept (2n) every point's crowding and place."""
    from heuriscale.engine.kernels.nsga2.survival_cuda import survivors_cuda

    case = _survivors_case(runs, n, dim, M, dtype, seed=n * M)
    crowding = survivors_torch(*case, 2 * n)[3]
    assert crowding.isinf().any() and crowding.isnan().any()  # ends and NaN distances (sorted last) are covered
    assert (crowding.isfinite() & (crowding > 0)).any() or M == 1  # (one objective: a front holds equal values)
    for keep in (n, 2 * n):
        with np.errstate(invalid="ignore"):  # inf - inf, as torch computes it
            got = survivors_cuda(*[t.to(fused_device) for t in case], keep)
        for name, a, b in zip(("x", "F", "rank", "crowding", "violation"), got, survivors_torch(*case, keep)):
            assert torch.equal(a.cpu(), b.cpu()) if name != "crowding" else torch.equal(a.cpu().nan_to_num(-1),
                                                                                        b.nan_to_num(-1)), (name, keep)


@pytest.mark.gpu
def test_the_kernels_equal_the_specification_at_gpu_sizes():
    """N = 1,000 (offspring) and 2N = 4,000 and 6,000 points (survival: counted; above
    MAX_POINTS the specification's sorts run on the GPU)."""
    from heuriscale.engine.kernels.nsga2.offspring_cuda import offspring_cuda
    from heuriscale.engine.kernels.nsga2.survival_cuda import MAX_POINTS, survivors_cuda

    for dtype in (torch.float64, torch.float32):
        args, uniforms, rates = _offspring_case(2, 1001, 12, dtype, "cuda", seed=0)
        tolerance = dict(rtol=1e-12, atol=1e-12) if dtype == torch.float64 else dict(rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(offspring_cuda(*args, uniforms, rates), offspring_torch(*args, uniforms, rates),
                                   **tolerance)
        for n in (2000, 3000):  # counted (against the CPU's torch: CUDA's divides by M as a product), sorted
            case = _survivors_case(2, n, 12, 3, dtype, seed=n)
            expected = survivors_torch(*case, n) if n == 2000 else survivors_torch(*[t.cuda() for t in case], n)
            assert (2 * n <= MAX_POINTS) == (n == 2000)
            for a, b in zip(survivors_cuda(*[t.cuda() for t in case], n), expected):
                assert torch.equal(a.cpu(), b.cpu())
