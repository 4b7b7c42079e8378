"""L-SHADE's and jSO's native CPU kernel (`engine="native"`, engine/kernels/lshade/cpu.py)
against their eager steps.

With eager's own random numbers fed in, native generations must give eager's: the sorted
population (its alive rows), the memory, its slot, the evaluations, the population size and
the archive (as a set where it did not overflow, else rows it may hold; the two fill it in
other orders). With its Philox stream, runs must converge like eager runs, and a memory
that never updated would be seen. test_native.py checks every kernel alike for the rest.
"""

import pytest
import torch
from scipy import stats

import heuriscale as hs
from heuriscale.engine.kernels.lshade import cpu

from test_native_de import _sorted_rows

PROBLEMS = {  # inline, and evaluated by the problem between kernel calls
    "rastrigin": lambda: hs.get_problem("rastrigin", dim=5),
    "sphere-shifted": lambda: hs.get_problem("sphere", dim=7, shift=1),
}
MAKE = {"lshade": hs.LSHADE, "jso": hs.JSO}


def _eager_numbers(algo, state, seed):
    """The numbers eager LSHADE.ask draws after torch.manual_seed(seed), in its order, as the
    kernel's hooks take them."""
    runs, n0, dim = state.x.shape
    dt = state.x.dtype
    torch.manual_seed(seed)
    slot = torch.randint(0, algo.H, (runs, n0))
    normal = torch.randn(runs, n0, dtype=dt)
    cauchy = [torch.rand(runs, n0, dtype=dt) for _ in range(1 + cpu.REDRAWS)]
    index = [torch.rand((runs, n0), dtype=torch.float64) for _ in range(3)]
    cross = torch.rand_like(state.x)
    jrand = torch.randint(0, dim, (runs, n0, 1))[..., 0]
    params = torch.stack([slot.double(), normal.double(), *(c.double() for c in cauchy)], -1).contiguous()
    return torch.stack([*index, jrand.double()], -1).contiguous(), params, cross


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(PROBLEMS))
@pytest.mark.parametrize("algorithm", sorted(MAKE))
def test_native_generations_equal_the_eager_ones_with_the_same_random_numbers(algorithm, name, dtype):
    # N_init 300: more than one block of rows; a budget of 8 generations' worth, so that the
    # population shrinks each generation and jSO's progress passes its thresholds
    algo = MAKE[algorithm](pop_size=300, max_evals=1800)
    problem = PROBLEMS[name]()
    runner = hs.Runner(problem, algo, runs=2, seed=5, device="cpu", dtype=dtype, engine="native")
    native = runner._kernels
    assert runner._engine_used() == "native" and bool(native.fitness) == (name == "rastrigin")
    eps = torch.finfo(getattr(torch, dtype)).eps
    scale = float(torch.maximum(runner.problem.lower.abs(), runner.problem.upper.abs()).max())
    sizes = []
    for k in range(6):
        before = native.prepare(runner.state)  # a copy
        best_before = runner.best_f.clone()
        native.given_index, native.given_params, native.given_cross = _eager_numbers(algo, before, 100 + k)
        runner.step(1)
        torch.manual_seed(100 + k)  # eager's step, in its halves (ask, evaluate, tell)
        proposal = algo.ask(runner._guarded, before)
        trial_f = runner._guarded.evaluate(proposal.x)
        want = algo.tell(runner._guarded, before, proposal, trial_f)
        got = runner.state
        for field in ("n", "nfe", "k", "archive_n"):
            assert torch.equal(getattr(got, field), getattr(want, field)), field
        n = int(want.n[0])
        sizes.append(n)
        f_scale = float(want.f[:, :n].abs().max())
        torch.testing.assert_close(got.x[:, :n], want.x[:, :n], rtol=64 * eps, atol=64 * eps * scale)
        torch.testing.assert_close(got.f[:, :n], want.f[:, :n], rtol=64 * eps, atol=64 * eps * f_scale)
        assert torch.isinf(got.f[:, n:]).all()
        torch.testing.assert_close(got.m_f, want.m_f, rtol=1e3 * eps, atol=1e3 * eps)
        torch.testing.assert_close(got.m_cr, want.m_cr, rtol=1e3 * eps, atol=1e3 * eps)
        torch.testing.assert_close(runner.best_f, torch.minimum(best_before, want.f.amin(-1)),
                                   rtol=64 * eps, atol=64 * eps * f_scale)
        for run in range(2):  # the archive: eager's rows as a set, or (overflowed) rows it could hold
            rows = got.archive[run, :int(got.archive_n[run])]
            alive = int(before.n[run])
            joined = before.x[run, :alive][trial_f[run, :alive] < before.f[run, :alive]]
            candidates = torch.cat([before.archive[run, :int(before.archive_n[run])], joined])
            if candidates.shape[0] <= min(got.archive.shape[1], int(algo.arc_rate * n)):
                assert torch.equal(_sorted_rows(rows), _sorted_rows(want.archive[run, :int(want.archive_n[run])]))
            else:
                assert all((candidates == row).all(-1).any() for row in rows)
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] < sizes[0] < 300
    assert not torch.equal(runner.state.m_f, torch.full_like(runner.state.m_f, algo.m_f0))  # the memory moved



@pytest.mark.parametrize("algorithm", sorted(MAKE))
def test_native_runs_converge_like_eager_runs(algorithm):
    kw = dict(dim=10, evals=15_000, runs=30, device="cpu")
    eager = hs.minimize("rastrigin", MAKE[algorithm](), engine="eager", seed=0, **kw)
    native = hs.minimize("rastrigin", MAKE[algorithm](), engine="native", seed=1, **kw)
    assert native.extra["engine"] == "native" and native.evals == eager.evals
    assert stats.mannwhitneyu(eager.best_f.numpy(), native.best_f.numpy()).pvalue > 1e-3
    assert native.best_f.median() < 0.1 * native.history_f[:, 0].median()


@pytest.mark.parametrize("algorithm", sorted(MAKE))
def test_the_memory_adapts_and_the_population_shrinks_to_its_final_size(algorithm):
    """On the sphere the successful F and CR move the memory away from its start, and the
    population ends at final_pop when the budget is spent: a memory that never updated, or a
    schedule not followed, fails here."""
    runner = hs.Runner("sphere", MAKE[algorithm](pop_size=60, max_evals=6000), dim=10, runs=3, seed=1, device="cpu",
                       engine="native")
    gens = len(runner.algorithm._sizes)
    runner.step(gens)
    s = runner.state
    assert (s.n == 4).all() and (s.nfe == runner.algorithm.evals_after(gens)).all()
    assert (s.m_f != runner.algorithm.m_f0).any(-1).all() and (s.k > 0).any()
    assert (runner.best_f < 1e-3).all()
    assert (s.archive_n <= int(runner.algorithm.arc_rate * 4)).all()


def test_warm_up_builds_the_kernel_with_the_population_from_the_dimension():
    """L-SHADE's default population (18 D) and schedule are taken as a run would take them."""
    from heuriscale.engine import warm_up

    for name in ("lshade", "jso"):
        assert warm_up("rastrigin", name, dim=4, device="cpu")["engine"] == "native"
