"""How far one float32 Firefly iteration lands from float64: the fused kernels against the eager step.

    PYTHONPATH=src python3 benchmarks/firefly_precision.py      # on a CUDA machine

The fused kernels compute each float32 product as three TF32 products (docs/benchmarks.md);
the eager step uses float32 matrix products. Both take the same float32 population and the
same random numbers, and each is compared with the eager step in float64 on that population
(upcast): the error is max |x_new - x_new(float64)| over the largest move max |x_new(float64) -
x|, per population. Populations of N = 16,384 in D = 32 on the sphere's box [-100, 100]^32:
uniform in the box; clustered (a spread of 1 around a point 50 from the origin, where
r^2 = |x_i|^2 + |x_j|^2 - 2 x_i.x_j cancels most); and the one a fused run reaches after 50
iterations.

Where the fused error comes from, per term: `_attract` hands `_move` W_i = sum_j e_ij and
S_i = sum_j e_ij (x_j - c) (c: the centre the kernels subtract), and the pull is
beta0 (S_i - W_i (x_i - c)). Against float64 (e_ij from float64 r^2): "weights" is the largest
relative error of W_i and "bias" its mean (signed; what does not average out over the pairs),
"W part" beta0 max |dW_i (x_i - c)| and "S part" beta0 max |dS_i|, both over the largest move,
at the coordinates the clamp leaves alone. `--products ieee` runs the same
kernels with IEEE float32 products (CUDA cores, no tensor cores) instead, `--sums float64`
with the tiles' and chunks' sums and the attraction added in float64 instead of float32.
"""

from __future__ import annotations

import argparse

import torch

import heuriscale as hs
from heuriscale.algorithms.base import State
from heuriscale.algorithms.firefly import attraction
from heuriscale.engine.kernels.firefly.cuda import TILES


def eager_move(problem, algo, x: torch.Tensor, f: torch.Tensor, u: torch.Tensor, dtype) -> torch.Tensor:
    """The eager step's new positions (algorithms/firefly.py's `ask`) in `dtype`, noise from u."""
    alpha, beta0, gamma = (float(c) for c in algo.coefficients(problem))
    x, f, u = x.to(dtype), f.to(dtype), u.to(dtype)
    pull, has_brighter = attraction(x, f, beta0, gamma, 1024)
    moved = x + pull + torch.where(has_brighter[..., None], alpha * (2.0 * u - 1.0), 0.0)
    bounds = (problem.lower.to(x.device, dtype), problem.upper.to(x.device, dtype))
    return torch.clamp(moved, *bounds).double()


def kernel_sums(fused, run: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """(W, S) of the last iteration as `_move` adds them, in float64, by firefly (rows)."""
    first = fused.first.cpu()
    tile_of_slot = torch.repeat_interleave(torch.arange(len(first) - 1), first[1:] - first[:-1]).to(fused.pulls.device)
    blocks = len(first) - 1
    s = torch.zeros(blocks, fused.block_p, fused.block_d, dtype=torch.float64, device=fused.pulls.device)
    w = torch.zeros(blocks, fused.block_p, dtype=torch.float64, device=fused.pulls.device)
    s.index_add_(0, tile_of_slot, fused.pulls[run].double())
    w.index_add_(0, tile_of_slot, fused.weights[run].double())
    order = fused.order[run]
    s_rows, w_rows = torch.empty_like(s.flatten(0, 1)[:fused.pop]), torch.empty_like(w.flatten()[:fused.pop])
    s_rows[order], w_rows[order] = s.flatten(0, 1)[:fused.pop], w.flatten()[:fused.pop]
    return w_rows, s_rows[:, :fused.dim]


def exact_sums(x: torch.Tensor, f: torch.Tensor, center: torch.Tensor, gamma: float, rows: int = 1024):
    """(W, S) in float64 for one run's x (n, D), f (n)."""
    x, center = x.double(), center.double()
    sq = (x * x).sum(-1)
    w, s = torch.zeros_like(f, dtype=torch.float64), torch.zeros_like(x)
    for start in range(0, len(x), rows):
        xi = x[start:start + rows]
        r2 = (sq[start:start + rows, None] + sq[None, :] - 2.0 * xi @ x.T).clamp(min=0.0)
        e = torch.where(f[None, :] < f[start:start + rows, None], torch.exp(-gamma * r2), 0.0)
        w[start:start + rows], s[start:start + rows] = e.sum(-1), e @ (x - center)
    return w, s


def errors(runner, algo, x: torch.Tensor) -> dict[str, float]:
    """The fused and eager float32 errors of one iteration from population x, and the fused
    error's terms, as described above."""
    problem = runner._guarded  # (on the run's device)
    fused = runner._kernels
    state = State(x=x.clone(), f=problem.evaluate(x))
    u = torch.rand(2, *x.shape, device=x.device, generator=torch.Generator(device=x.device).manual_seed(1))
    fused.given_r = u
    runner.state = fused.prepare(state)
    runner.step(1)
    fused.given_r = None
    reference = eager_move(problem, algo, state.x, state.f, u[0], torch.float64)
    scale = float((reference - state.x.double()).abs().max())
    out = {"fused": float((runner.state.x.double() - reference).abs().max()) / scale,
           "eager float32": float((eager_move(problem, algo, state.x, state.f, u[0], torch.float32)
                                   - reference).abs().max()) / scale}
    _, beta0, gamma = (float(c) for c in algo.coefficients(problem))
    if hasattr(fused, "center"):
        center = fused.center[0, :fused.dim]
    else:  # (kernels that subtract the brightest firefly)
        center = state.x[0, int(state.f[0].argmin())]
    w, s = kernel_sums(fused)
    w64, s64 = exact_sums(state.x[0], state.f[0], center, gamma)
    relative = state.x[0].double() - center.double()
    lower, upper = problem.lower.double(), problem.upper.double()
    inside = (reference[0] > lower) & (reference[0] < upper)  # (where the clamp leaves the error)
    has = w64 > 0
    out["weights"] = float(((w - w64).abs() / w64)[has].max())
    out["bias"] = float(((w - w64) / w64)[has].mean())
    out["W part"] = beta0 * float(((w - w64)[:, None] * relative).abs()[inside].max()) / scale
    out["S part"] = beta0 * float((s - s64).abs()[inside].max()) / scale
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pop", type=int, default=16_384)
    ap.add_argument("--device", default="cuda", help="cpu: the kernels in Triton's interpreter (TRITON_INTERPRET=1)")
    ap.add_argument("--products", default="tf32x3", choices=["tf32x3", "ieee"],
                    help="the fused kernels' float32 products: three TF32 products each, or IEEE float32")
    ap.add_argument("--sums", default="float32", choices=["float32", "float64"],
                    help="what the fused kernels add the tiles' and chunks' sums in (FusedFirefly.float64_sums)")
    ap.add_argument("--time", action="store_true",
                    help="also the time per iteration of these kernels (640 iterations after 64, one run)")
    args = ap.parse_args()
    n, device = args.pop, args.device
    algo = hs.Firefly(pop_size=n)
    runner = hs.Runner(hs.get_problem("sphere", dim=32), algo, runs=1, seed=0, device=device, engine="fused")
    runner._kernels.float64_sums = args.sums == "float64"
    if args.products == "ieee":
        runner._kernels.split = False
        runner._kernels.tiles(*TILES[False][runner._kernels.block_d])
    g = torch.Generator(device=device).manual_seed(0)
    uniform = torch.rand(1, n, 32, device=device, generator=g) * 200 - 100
    clustered = 50 / 32**0.5 + torch.randn(1, n, 32, device=device, generator=g)
    populations = {"uniform in the box": uniform, "clustered (spread 1, 50 from 0)": clustered}
    runner.step(50)
    populations["after 50 fused iterations"] = runner.state.x.clone()
    print(f"products {args.products}, sums {args.sums}; errors of the largest move (fused, eager float32), "
          "of W (largest, mean signed), W part and S part of the largest move")
    if args.time:
        runner.step(64)
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        runner.step(640)
        end.record()
        torch.cuda.synchronize()
        print(f"{start.elapsed_time(end) / 640 * 1000:.1f} us an iteration (runner.step(640), graph replay)")
    for name, x in populations.items():
        e = errors(runner, algo, x)
        print(f"{name:34s} fused {e['fused']:.2e}  eager float32 {e['eager float32']:.2e}  weights {e['weights']:.1e} "
              f"(bias {e['bias']:+.1e})  W part {e['W part']:.1e}  S part {e['S part']:.1e}", flush=True)


if __name__ == "__main__":
    main()
