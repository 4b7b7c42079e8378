"""NSGA-II's offspring on CUDA: the operator `heuriscale::nsga2_offspring` in one Triton launch.

`algorithms/nsga2.py` defines the operator and its torch specification (`offspring_torch`):
binary tournaments by the crowded comparison, SBX of each pair of winners, polynomial
mutation of the children, with every uniform number handed in. In torch that is about 120
small launches a generation (SBX and PM are elementwise chains); here one program takes a
tile of pairs x variables: it runs the two tournaments of each pair, reads the two parents'
variables, crosses them and mutates both children where they lie in Q_t (child 1 of pair i
at row i, child 2 at row ceil(N/2) + i, kept when below N), computing each quantity as the
specification writes it, in the same order.

The rates reach the kernel as the bit patterns of the run's dtype (a Triton float argument
is float32): a float64 run compares its uniforms with the same doubles torch does. On a GPU
the powers are libdevice's `pow` (what torch's CUDA `pow` calls); Triton's CPU interpreter,
which the CPU tests run this kernel under, has no libdevice and computes them as
exp2(y log2 |x|) with pow's sign rules, a few hundred float64 ulps from `pow` at worst.
"""

from __future__ import annotations

import math
import struct

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from ....triton_ahead import interpreted

#: Pair x variable elements a program handles.
TILE = 1024


@triton.jit
def _pow(x, y, LIBDEVICE: tl.constexpr):
    if LIBDEVICE:
        return libdevice.pow(x, y + tl.zeros_like(x))
    else:  # pow's value from exp2 and log2, a negative base included (its sign by the parity of y)
        y = y + tl.zeros_like(x)
        a = tl.exp2(y * tl.log2(tl.abs(x)))
        integral = y == tl.floor(y)
        odd = integral & (tl.floor(0.5 * y) * 2.0 != y)
        return tl.where(x < 0, tl.where(integral, tl.where(odd, -a, a), float("nan")), a)


@triton.jit
def exact_div(a, b):
    """a / b rounded as IEEE division (Triton's float32 `/` is an approximation within 2 ulps)."""
    if b.dtype == tl.float32:
        return tl.math.div_rn(a, b)
    else:
        return a / b


@triton.jit
def _real(bits, DTYPE: tl.constexpr):
    """The number of the run's dtype whose bit pattern is `bits` (see the module)."""
    if DTYPE == tl.float64:
        return bits.to(tl.int64).to(tl.float64, bitcast=True)
    else:
        return bits.to(tl.int32).to(tl.float32, bitcast=True)


@triton.jit
def _winner(t, order_ptr, coins_ptr, rank_ptr, crowd_ptr, mask):
    """Tournament t's winner by <_n (`nsga2.tournament`): contestants order[2t], order[2t + 1]."""
    a = tl.load(order_ptr + 2 * t, mask=mask, other=0)
    b = tl.load(order_ptr + 2 * t + 1, mask=mask, other=0)
    ra, rb = tl.load(rank_ptr + a, mask=mask, other=0), tl.load(rank_ptr + b, mask=mask, other=0)
    ca, cb = tl.load(crowd_ptr + a, mask=mask, other=0), tl.load(crowd_ptr + b, mask=mask, other=0)
    coin = tl.load(coins_ptr + t, mask=mask, other=0) < 0.5
    a_wins = (ra < rb) | ((ra == rb) & ((ca > cb) | ((ca == cb) & coin)))
    return tl.where(a_wins, a, b)


@triton.jit
def _betaq(beta, u, minus_eta1, inv_eta1, LIBDEVICE: tl.constexpr):
    alpha = 2.0 - _pow(beta, minus_eta1, LIBDEVICE)
    inner = tl.where(u <= exact_div(1.0, alpha), u * alpha, exact_div(1.0, 2.0 - u * alpha))
    return _pow(inner, inv_eta1, LIBDEVICE)


@triton.jit
def _mutate_store(x, row, keep, j, lower, upper, out_ptr, mutate_ptr, upm_ptr, individual_ptr, dim,
                  p_m, p_individual, eta1, inv_eta1, LIBDEVICE: tl.constexpr):
    """Polynomial mutation (`genetic.polynomial_mutation`) of the children x at rows `row`; stored."""
    at = row[:, None] * dim + j[None, :]
    mask = keep[:, None] & (j < dim)[None, :]
    movable = (lower != upper)[None, :]
    mutate = (tl.load(mutate_ptr + at, mask=mask, other=1.0) < p_m) & movable
    span = tl.where(movable, upper[None, :] - lower[None, :], 1.0)
    d1, d2 = exact_div(x - lower[None, :], span), exact_div(upper[None, :] - x, span)
    u = tl.load(upm_ptr + at, mask=mask, other=0.5)
    low_side = _pow(2.0 * u + (1.0 - 2.0 * u) * _pow(1.0 - d1, eta1, LIBDEVICE), inv_eta1, LIBDEVICE) - 1.0
    high_side = 1.0 - _pow(2.0 * (1.0 - u) + 2.0 * (u - 0.5) * _pow(1.0 - d2, eta1, LIBDEVICE), inv_eta1, LIBDEVICE)
    y = x + tl.where(u <= 0.5, low_side, high_side) * span
    y = tl.minimum(tl.maximum(y, lower[None, :]), upper[None, :])
    individual = tl.load(individual_ptr + row, mask=keep, other=1.0) <= p_individual
    tl.store(out_ptr + at, tl.where(mutate & individual[:, None], y, x), mask=mask)


@triton.jit
def _offspring_kernel(x_ptr, out_ptr, rank_ptr, crowd_ptr, order_ptr, coins_ptr, lower_ptr, upper_ptr,
                      mates_ptr, cross_ptr, usbx_ptr, exchange_ptr, mutate_ptr, upm_ptr, individual_ptr,
                      n, dim, pairs, contestants,
                      p_c_bits, p_var_bits, p_exchange_bits, p_m_bits, p_individual_bits, tiny_bits,
                      minus_eta_c1_bits, inv_eta_c1_bits, eta_m1_bits, inv_eta_m1_bits,
                      BLOCK_P: tl.constexpr, BLOCK_D: tl.constexpr, DTYPE: tl.constexpr, LIBDEVICE: tl.constexpr):
    run = tl.program_id(2).to(tl.int64)
    i = tl.program_id(0) * BLOCK_P + tl.arange(0, BLOCK_P)  # pairs
    j = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)  # variables
    pair_ok, var_ok = i < pairs, j < dim
    mask = pair_ok[:, None] & var_ok[None, :]
    p_c, p_var, p_exchange = _real(p_c_bits, DTYPE), _real(p_var_bits, DTYPE), _real(p_exchange_bits, DTYPE)
    p_m, p_individual, tiny = _real(p_m_bits, DTYPE), _real(p_individual_bits, DTYPE), _real(tiny_bits, DTYPE)
    minus_eta_c1, inv_eta_c1 = _real(minus_eta_c1_bits, DTYPE), _real(inv_eta_c1_bits, DTYPE)
    eta_m1, inv_eta_m1 = _real(eta_m1_bits, DTYPE), _real(inv_eta_m1_bits, DTYPE)
    # the tournaments 2i and 2i + 1 give the pair's parents
    order_ptr += run * contestants
    coins_ptr += run * 2 * pairs
    rank_ptr += run * n
    crowd_ptr += run * n
    w1 = _winner(2 * i, order_ptr, coins_ptr, rank_ptr, crowd_ptr, pair_ok)
    w2 = _winner(2 * i + 1, order_ptr, coins_ptr, rank_ptr, crowd_ptr, pair_ok)
    x_ptr += run * n * dim
    p1 = tl.load(x_ptr + w1[:, None] * dim + j[None, :], mask=mask, other=0.0)
    p2 = tl.load(x_ptr + w2[:, None] * dim + j[None, :], mask=mask, other=0.0)
    lower = tl.load(lower_ptr + j, mask=var_ok, other=0.0)
    upper = tl.load(upper_ptr + j, mask=var_ok, other=1.0)
    # SBX
    at = run * pairs * dim + i[:, None] * dim + j[None, :]
    mates = tl.load(mates_ptr + run * pairs + i, mask=pair_ok, other=1.0) < p_c
    cross = (tl.load(cross_ptr + at, mask=mask, other=1.0) < p_var) & (tl.abs(p1 - p2) > tiny)
    cross = cross & (lower != upper)[None, :] & mates[:, None]
    y1, y2 = tl.minimum(p1, p2), tl.maximum(p1, p2)
    delta = tl.where(cross, y2 - y1, 1.0)
    u = tl.load(usbx_ptr + at, mask=mask, other=0.5)
    beta1 = 1.0 + exact_div(2.0 * (y1 - lower[None, :]), delta)
    beta2 = 1.0 + exact_div(2.0 * (upper[None, :] - y2), delta)
    c1 = 0.5 * ((y1 + y2) - _betaq(beta1, u, minus_eta_c1, inv_eta_c1, LIBDEVICE) * delta)
    c2 = 0.5 * ((y1 + y2) + _betaq(beta2, u, minus_eta_c1, inv_eta_c1, LIBDEVICE) * delta)
    smaller = p1 < p2
    child1, child2 = tl.where(smaller, c1, c2), tl.where(smaller, c2, c1)
    swap = (tl.load(exchange_ptr + at, mask=mask, other=1.0) < p_exchange) ^ (p1 > p2)
    child1, child2 = tl.where(swap, child2, child1), tl.where(swap, child1, child2)
    child1 = tl.minimum(tl.maximum(tl.where(cross, child1, p1), lower[None, :]), upper[None, :])
    child2 = tl.minimum(tl.maximum(tl.where(cross, child2, p2), lower[None, :]), upper[None, :])
    # PM of both children, each at its row of Q_t
    out_ptr += run * n * dim
    mutate_ptr += run * n * dim
    upm_ptr += run * n * dim
    individual_ptr += run * n
    _mutate_store(child1, i, pair_ok, j, lower, upper, out_ptr, mutate_ptr, upm_ptr, individual_ptr, dim,
                  p_m, p_individual, eta_m1, inv_eta_m1, LIBDEVICE)
    _mutate_store(child2, pairs + i, pair_ok & (pairs + i < n), j, lower, upper, out_ptr, mutate_ptr, upm_ptr,
                  individual_ptr, dim, p_m, p_individual, eta_m1, inv_eta_m1, LIBDEVICE)


def _bits(value: float, dtype: torch.dtype) -> int:
    """`value` rounded to `dtype` (float32 or float64), as the integer of its bit pattern."""
    if dtype == torch.float64:
        return struct.unpack("<q", struct.pack("<d", value))[0]
    return struct.unpack("<i", struct.pack("<f", value))[0]


def offspring_cuda(x: torch.Tensor, rank: torch.Tensor, crowding: torch.Tensor, order: torch.Tensor,
                   coins: torch.Tensor, lower: torch.Tensor, upper: torch.Tensor, uniforms: list[torch.Tensor],
                   rates: list[float]) -> torch.Tensor:
    """`heuriscale::nsga2_offspring` (see `algorithms/nsga2.py`) in one launch: Q_t (runs, N, D)."""
    runs, n, dim = x.shape
    pairs = math.ceil(n / 2)
    eta_c, p_c, p_var, p_exchange, eta_m, p_m, p_individual = rates
    out = torch.empty_like(x, memory_format=torch.contiguous_format)
    if out.numel() == 0:
        return out
    dtype = x.dtype
    bits = [_bits(v, dtype) for v in (p_c, p_var, p_exchange, p_m, p_individual, 1e-14, -(eta_c + 1.0),
                                      1.0 / (eta_c + 1.0), eta_m + 1.0, 1.0 / (eta_m + 1.0))]
    block_d = min(triton.next_power_of_2(dim), TILE)
    block_p = max(1, min(TILE // block_d, triton.next_power_of_2(pairs)))
    grid = (triton.cdiv(pairs, block_p), triton.cdiv(dim, block_d), runs)
    mates, cross, u_sbx, exchange, mutate, u_pm, individual = (t.contiguous() for t in uniforms)
    _offspring_kernel[grid](x.contiguous(), out, rank.contiguous(), crowding.contiguous(), order.contiguous(),
                            coins.contiguous(), lower.contiguous(), upper.contiguous(), mates, cross, u_sbx, exchange,
                            mutate, u_pm, individual, n, dim, pairs, order.shape[1], *bits, BLOCK_P=block_p,
                            BLOCK_D=block_d, DTYPE=tl.float64 if dtype == torch.float64 else tl.float32,
                            LIBDEVICE=not interpreted() and x.device.type == "cuda", num_warps=4)
    return out

