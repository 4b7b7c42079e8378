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
"""

from __future__ import annotations

import argparse

import torch

import heuriscale as hs
from heuriscale.algorithms.base import State
from heuriscale.algorithms.firefly import attraction


def eager_move(problem, algo, x: torch.Tensor, f: torch.Tensor, u: torch.Tensor, dtype) -> torch.Tensor:
    """The eager step's new positions (algorithms/firefly.py's `ask`) in `dtype`, noise from u."""
    alpha, beta0, gamma = (float(c) for c in algo.coefficients(problem))
    x, f, u = x.to(dtype), f.to(dtype), u.to(dtype)
    pull, has_brighter = attraction(x, f, beta0, gamma, 1024)
    moved = x + pull + torch.where(has_brighter[..., None], alpha * (2.0 * u - 1.0), 0.0)
    bounds = (problem.lower.to(x.device, dtype), problem.upper.to(x.device, dtype))
    return torch.clamp(moved, *bounds).double()


def errors(runner, algo, x: torch.Tensor) -> tuple[float, float]:
    """(fused, eager float32) error of one iteration from population x, as described above."""
    problem = runner._guarded  # (on the run's device)
    state = State(x=x.clone(), f=problem.evaluate(x))
    u = torch.rand(2, *x.shape, device=x.device, generator=torch.Generator(device=x.device).manual_seed(1))
    runner._kernels.given_r = u
    runner.state = runner._kernels.prepare(state)
    runner.step(1)
    runner._kernels.given_r = None
    reference = eager_move(problem, algo, state.x, state.f, u[0], torch.float64)
    scale = float((reference - state.x.double()).abs().max())
    return (float((runner.state.x.double() - reference).abs().max()) / scale,
            float((eager_move(problem, algo, state.x, state.f, u[0], torch.float32) - reference).abs().max()) / scale)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pop", type=int, default=16_384)
    ap.add_argument("--device", default="cuda", help="cpu: the kernels in Triton's interpreter (TRITON_INTERPRET=1)")
    args = ap.parse_args()
    n, device = args.pop, args.device
    algo = hs.Firefly(pop_size=n)
    runner = hs.Runner(hs.get_problem("sphere", dim=32), algo, runs=1, seed=0, device=device, engine="fused")
    g = torch.Generator(device=device).manual_seed(0)
    uniform = torch.rand(1, n, 32, device=device, generator=g) * 200 - 100
    clustered = 50 / 32**0.5 + torch.randn(1, n, 32, device=device, generator=g)
    populations = {"uniform in the box": uniform, "clustered (spread 1, 50 from 0)": clustered}
    runner.step(50)
    populations["after 50 fused iterations"] = runner.state.x.clone()
    for name, x in populations.items():
        fused, eager = errors(runner, algo, x)
        print(f"{name:34s} fused {fused:.2e}  eager float32 {eager:.2e}  (of the largest move)", flush=True)


if __name__ == "__main__":
    main()
