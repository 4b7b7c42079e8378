"""NSGA-II's native CPU kernel (`engine="native"`, engine/kernels/nsga2/) against the eager step.

With eager's own random numbers handed in (`NativeNSGA2.give`), a native generation must
give the eager one: the same survivors in the same order with the same ranks and crowding,
and the same coordinates (up to the last bits of SBX's and PM's powers, which NumPy-side
libm and torch compute apart). The inline ZDT and DTLZ objectives must equal the torch
problems; runs drawing their own (Philox) numbers must reach eager's hypervolumes; `auto`
must pick the kernel on the CPU. test_native.py runs its checks for every kernel on one
objective (threads, NaN, checkpoints, steps per call).
"""

import numpy as np
import pytest
import torch
from scipy import stats

import heuriscale as hs
from heuriscale.engine.guard import Guarded
from heuriscale.engine.kernels import cpu_moo_objectives
from heuriscale.engine.kernels.nsga2 import cpu
from heuriscale.engine.kernels.nsga2.cpu import UniformLayout
from heuriscale.problems.dtlz import DTLZ


def _eager_numbers(state, n, dim, dtype, seed):
    """What `NSGA2.step` draws after torch.manual_seed(seed), in its order (ask: the
    permutations' keys and coins, SBX's mates, cross, u and exchange, PM's mutate, u and
    individual draws; tell: the tie keys), as `give` takes them."""
    runs = state.x.shape[0]
    layout = UniformLayout(n, dim)
    pairs, k = layout.pairs, 2 * layout.pairs
    torch.manual_seed(seed)
    perm = torch.rand(runs, layout.perms, n)
    coins = torch.rand(runs, k)
    mates = torch.rand(runs, pairs, 1, dtype=dtype)
    cross, u_sbx, swap = (torch.rand(runs, pairs, dim, dtype=dtype) for _ in range(3))
    mutate, u_pm = (torch.rand(runs, n, dim, dtype=dtype) for _ in range(2))
    individual = torch.rand(runs, n, 1, dtype=dtype)
    tie = torch.rand(runs, 2 * n)
    return perm, coins, mates, cross, u_sbx, swap, mutate, u_pm, individual, tie


def _clone(state):
    return type(state)(**{k: v.clone() for k, v in vars(state).items()})


class OtherDTLZ2(DTLZ):
    """DTLZ2 as torch computes it, evaluated by the engine between kernel calls (a subclass
    is never computed inline)."""


class AsTheKernelComputesIt(hs.Problem):
    """A ZDT or DTLZ problem evaluated by the kernels' own inline function (float64, then the
    run's dtype): the eager step on it sees the values the kernel computes inline, to the bit
    (torch's differ from them in the last bits, and a child that copies its parent would
    then dominate it or not by a rounding)."""

    def __init__(self, problem):
        super().__init__(problem.dim, problem.lower, problem.upper)
        self.inner, self.objectives = problem, problem.objectives
        self.lower, self.upper = problem.lower, problem.upper  # in the run's dtype

    def evaluate(self, x):
        rows = x.detach().reshape(-1, self.dim).double().numpy()
        f = torch.from_numpy(cpu_moo_objectives.values(self.inner, rows))
        return f.reshape(*x.shape[:-1], self.objectives).to(x.dtype)


def _generations_agree(problem, pop, dtype, generations, inline):
    runner = hs.Runner(problem, hs.NSGA2(pop_size=pop), runs=2, seed=3, device="cpu", dtype=dtype, engine="native")
    native = runner._kernels
    assert runner._engine_used() == "native" and bool(native.fitness) == inline
    algo, guarded = runner.algorithm, runner._guarded
    if inline:
        guarded = Guarded(AsTheKernelComputesIt(guarded.inner), 2)
    eps = torch.finfo(getattr(torch, dtype)).eps
    for g in range(generations):
        before = _clone(runner.state)
        torch.manual_seed(100 + g)
        eager = algo.step(guarded, _clone(before))
        native.give(*_eager_numbers(before, pop, problem.dim, getattr(torch, dtype), 100 + g))
        runner.step(1)
        s = runner.state
        assert torch.equal(s.rank, eager.rank), g
        torch.testing.assert_close(s.x, eager.x, rtol=0, atol=64 * eps)
        torch.testing.assert_close(s.f, eager.f, rtol=64 * eps, atol=64 * eps)
        torch.testing.assert_close(s.crowding, eager.crowding, rtol=64 * eps, atol=0)
        runner.state = native.prepare(eager)  # the next generation from eager's population, exactly
    return runner


def test_one_native_generation_equals_the_eager_one_with_the_same_random_numbers():
    """DTLZ2 (M = 3) evaluated by the problem (so that F is torch's to the bit), an odd
    population (the last child dropped), three generations."""
    _generations_agree(OtherDTLZ2("dtlz2", dim=6, objectives=3), 13, "float64", 3, inline=False)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name,dim,M", [("zdt1", 10, 2), ("zdt3", 8, 2), ("dtlz1", 7, 3), ("dtlz2", 12, 3),
                                        ("dtlz2", 8, 5)])
def test_native_generations_equal_the_eager_ones_inline(name, dim, M, dtype):
    problem = hs.get_problem(name, dim=dim, **({"objectives": M} if name.startswith("dtlz") else {}))
    _generations_agree(problem, 40, dtype, 6, inline=True)


@pytest.mark.slow
def test_native_generations_equal_the_eager_ones_with_constraints_and_one_objective():
    class Circle(hs.Problem):  # infeasible points inside the unit circle: constrained domination
        objectives, n_constraints = 2, 1

        def __init__(self):
            super().__init__(3, 0.0, 2.0)

        def evaluate(self, x):
            return torch.stack([x[..., 0], x[..., 1] + x[..., 2]], -1)

        def constraints(self, x):
            return (1 - (x[..., :2] ** 2).sum(-1))[..., None]

    _generations_agree(Circle(), 24, "float64", 5, inline=False)
    _generations_agree(hs.TorchFunction(lambda x: ((x - 0.3) ** 2).sum(-1), 4, -1.0, 1.0), 20, "float64", 5,
                       inline=False)


@pytest.mark.slow  # compiles every objective (slow on a new machine)
@pytest.mark.parametrize("name,M", [("zdt1", 2), ("zdt2", 2), ("zdt3", 2), ("zdt4", 2), ("zdt6", 2),
                                    *((f"dtlz{i}", M) for i in range(1, 8) for M in (2, 3, 5))])
def test_inline_objectives_equal_the_torch_problems(name, M):
    problem = hs.get_problem(name, **({"objectives": M} if name.startswith("dtlz") else {}))
    x = problem.lower + torch.rand(64, problem.dim, dtype=torch.float64, generator=torch.Generator().manual_seed(1)) \
        * (problem.upper - problem.lower)
    assert cpu_moo_objectives.moo_objective(problem)[0] > 0
    ours = cpu_moo_objectives.values(problem, x.numpy())
    np.testing.assert_allclose(ours, problem.evaluate(x).numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.slow
def test_native_runs_reach_eagers_hypervolume():
    kw = dict(iters=40, runs=8, device="cpu", dtype="float64")
    problem = hs.get_problem("zdt1", dim=10)
    eager = hs.minimize(problem, hs.NSGA2(pop_size=24), engine="eager", seed=0, **kw)
    native = hs.minimize(problem, hs.NSGA2(pop_size=24), engine="native", seed=1, **kw)
    assert native.extra["engine"] == "native" and eager.extra["engine"] == "eager" and native.iterations == 40
    assert stats.mannwhitneyu(eager.hv.numpy(), native.hv.numpy()).pvalue > 1e-3, (eager.hv, native.hv)
    assert float(native.hv.median()) > 0.95 * float(eager.hv.median())
    again = hs.minimize(problem, hs.NSGA2(pop_size=24), engine="native", seed=1, **kw)
    assert torch.equal(again.history_hv, native.history_hv)  # its own random numbers, reproducibly
    assert native.history_hv.shape == eager.history_hv.shape and torch.equal(native.history_iter, eager.history_iter)
    for x, F in zip(native.front_x, native.front_f):
        torch.testing.assert_close(problem.evaluate(x), F, rtol=1e-12, atol=1e-12)


def test_auto_weighs_the_kernel_for_nsga2_on_the_cpu_and_eager_for_moead():
    """The choice only (no kernel built): NSGA-II's eager generation at pop 100 against the
    kernel's setup; MOEA/D has no kernel."""
    from heuriscale.engine import auto

    problem = hs.get_problem("dtlz2", dim=12, objectives=3)
    runner = hs.Runner(problem, hs.NSGA2(pop_size=100), seed=0, device="cpu")
    assert runner.engine == "eager"
    assert auto.check_engine("auto", runner.device, runner.problem, runner.algorithm) == "native"
    choice = auto.choose(runner, 100)
    assert choice.engine == "native" and choice.reason.startswith("eager 100 x"), choice
    assert auto.choose(runner, 100, profile=True).engine == "eager"
    assert auto.choose(runner, 10).engine == "eager"  # fewer steps than a chunk: not worth loading it
    moead = hs.Runner(problem, hs.MOEAD(partitions=4), seed=0, device="cpu")
    assert auto.check_engine("auto", moead.device, moead.problem, moead.algorithm) == "eager"
    assert "no native CPU kernel for 'moead'" in auto.choose(moead, 100).reason


@pytest.mark.slow
def test_auto_picks_the_kernel_for_nsga2_on_the_cpu_and_eager_for_moead():
    problem = hs.get_problem("dtlz2", dim=12, objectives=3)
    r = hs.minimize(problem, hs.NSGA2(pop_size=100), iters=70, seed=0, device="cpu")
    assert r.extra["engine"] == "native" and r.extra["engine_reason"].startswith("auto chose native"), r.extra
    m = hs.minimize(problem, hs.MOEAD(partitions=4), iters=2, seed=0, device="cpu")
    assert m.extra["engine"] == "eager" and "no native CPU kernel for 'moead'" in m.extra["engine_reason"]


def test_bad_engine_requests_get_one_line_errors():
    dtlz2 = hs.get_problem("dtlz2", dim=12, objectives=3)
    cases = [
        (lambda: hs.minimize(dtlz2, "moead", iters=2, engine="native", device="cpu"), "no native CPU kernel for 'moead'"),
        (lambda: hs.minimize(dtlz2, "nsga2", iters=2, engine="compiled", device="cpu"), "needs a CUDA device; on cpu use engine='native'"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message) as info:
            call()
        assert "\n" not in str(info.value)
    mine = type("MyNSGA2", (hs.NSGA2,), {})()  # a subclass may change the step: no kernel for it
    assert "MyNSGA2 changes it" in cpu.unsupported(mine) and cpu.unsupported(hs.NSGA2()) is None
