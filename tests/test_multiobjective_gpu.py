"""Several objectives on CUDA (`pytest -m gpu`): the sorting kernel against the torch
specification, graph replay against eager steps, and no host synchronisation in either."""

from __future__ import annotations

import pytest
import torch

import heuriscale as hs
from heuriscale.algorithms.pareto import dominance, peel_fronts_torch

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _cuda():
    if not torch.cuda.is_available():
        pytest.fail("GPU tests were selected (-m gpu) but torch sees no CUDA device")


def _aligned(runs: int, n: int, M: int, spread: float, generator: torch.Generator) -> torch.Tensor:
    """Objective sets (runs, n, M) with many fronts: nearly aligned objectives, ties included."""
    base = torch.randint(0, n, (runs, n, 1), generator=generator).double()
    return base + spread * torch.randint(0, 4, (runs, n, M), generator=generator).double()


def test_the_sorting_kernel_equals_the_torch_peeling():
    """One program per run (small sets, many runs) and many programs per run (large sets,
    which wait for each other at a barrier), every cover from one front to every point."""
    from heuriscale.engine.kernels.pareto_cuda import peel_fronts_cuda, programs_per_run

    g = torch.Generator().manual_seed(0)
    cases = [(64, 40, 2, 0.5), (3, 200, 3, 2.0), (2, 700, 2, 3.0), (1, 3000, 3, 50.0), (2, 5000, 2, 1e9)]
    seen_programs = set()
    for runs, n, M, spread in cases:
        F = _aligned(runs, n, M, spread, g)
        D = dominance(F).cuda()
        seen_programs.add(programs_per_run(runs, -(-n // 256), D.device))
        for cover in (1, n // 3, n // 2, n):
            assert torch.equal(peel_fronts_cuda(D, cover), peel_fronts_torch(D, cover)), (runs, n, cover)
    assert 1 in seen_programs and max(seen_programs) > 8  # both forms of the kernel ran


def test_the_sorting_from_objectives_equals_the_torch_sort():
    """`heuriscale::sort_fronts`: many programs adding their dominator counts, with and without
    violations, against the dominance matrix and peeling in torch."""
    from heuriscale.engine.kernels.pareto_cuda import sort_fronts_cuda

    g = torch.Generator().manual_seed(1)
    for runs, n, M, spread in [(4, 200, 3, 2.0), (1, 3000, 3, 50.0), (2, 5000, 2, 1e9)]:
        F = _aligned(runs, n, M, spread, g)
        violation = torch.where(torch.rand(runs, n, generator=g) < 0.2, torch.rand(runs, n, generator=g), 0.0).double()
        for v in (None, violation.cuda()):
            D = dominance(F.cuda(), v)  # the torch reference on the GPU too: peeling 5,000 points on a CPU takes minutes
            for cover in (1, n // 2, n):
                got = sort_fronts_cuda(F.cuda(), v, cover)
                assert torch.equal(got, peel_fronts_torch(D, cover)), (runs, n, cover)


@pytest.mark.parametrize("name", ["nsga2", "moead"])
def test_graph_replay_equals_eager_steps_with_several_objectives(name):
    """The uncompiled graph draws the same numbers: the same fronts and indicator history,
    sampled inside the graph at the cadence eager steps keep."""
    kw = dict(iters=75, runs=3, seed=7, device="cuda", chunk=16, ref=[1.5, 1.5, 1.5])  # 4 chunks + 11 eager steps
    problem = hs.get_problem("dtlz2", dim=12, objectives=3)
    algo = hs.NSGA2(pop_size=40) if name == "nsga2" else hs.MOEAD(partitions=6)
    eager = hs.minimize(problem, algo, engine="eager", **kw)
    graph = hs.minimize(problem, algo, engine="graph", **kw)
    assert graph.extra["engine"] == "graph" and graph.iterations == 75
    assert torch.equal(graph.history_iter, eager.history_iter) and torch.equal(graph.history_hv, eager.history_hv)
    assert all(torch.equal(a, b) for a, b in zip(graph.front_f, eager.front_f))


@pytest.mark.parametrize("engine", ["eager", "graph"])
def test_steps_never_synchronise_with_the_host(engine):
    problem = hs.get_problem("dtlz2", dim=12, objectives=3)
    runner = hs.Runner(problem, hs.NSGA2(pop_size=300), runs=2, device="cuda", engine=engine, seed=0, chunk=8)
    runner.step(8)  # the graph's capture synchronises once, before the steps
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        runner.step(24)
    finally:
        torch.cuda.set_sync_debug_mode("default")
    assert runner.result().iterations == 32


def test_auto_replays_several_objectives_from_graphs():
    problem = hs.get_problem("dtlz2", dim=12, objectives=3)
    r = hs.minimize(problem, hs.NSGA2(pop_size=100), iters=640, seed=0, device="cuda")
    assert r.extra["engine"] == "graph" and "several objectives" in r.extra["engine_reason"]
    assert float(r.hv[0]) > 0.5  # DTLZ2's front against ref 1.1^3: about 0.74 at the optimum
