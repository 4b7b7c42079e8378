"""L-SHADE and jSO: the population schedule, the memory update, jSO's changes, bad input, and
how they search (the CEC 2017 comparison with jSO's published table: docs/validation.md)."""

from __future__ import annotations

import math

import pytest
import torch

import heuriscale as hs
from heuriscale.algorithms.lshade import SHADEState, c_round, lehmer
from heuriscale.problems import get_problem


def test_population_sizes_follow_the_linear_reduction_to_the_budget():
    algo = hs.LSHADE().for_run(10, 100_000)
    assert algo.pop_size == 180 and algo.max_evals == 100_000  # N_init = 18 D
    sizes, nfe, n = [], 180, 180
    while nfe < 100_000:  # the paper's rule, written out again
        sizes.append(n)
        nfe += n
        n = max(4, min(n, math.floor((4 - 180) / 100_000 * nfe + 180 + 0.5)))
    assert list(algo._sizes) == sizes and sizes[0] == 180 and sizes[-1] in (4, 5)
    steps = algo.steps_within(100_000)
    assert algo.evals_after(steps) <= 100_000 < algo.evals_after(steps + 1)
    runner = hs.Runner("sphere", algo, dim=10, runs=2, seed=0, device="cpu", dtype="float64")
    runner.step(40)
    assert runner.state.n.tolist() == [algo._sizes[40]] * 2 and runner.evals == algo.evals_after(40)
    assert runner.state.nfe.tolist() == [algo.evals_after(40)] * 2
    alive = runner.state.f[:, : algo._sizes[40]]
    assert torch.isfinite(alive).all() and torch.isinf(runner.state.f[:, algo._sizes[40]:]).all()
    assert (alive[:, 1:] >= alive[:, :-1]).all()  # sorted: the worst leave from the end


@pytest.mark.parametrize("pop, final, budget", [(180, 4, 100_000), (466, 4, 3_000_000), (540, 4, 541),
                                                 (7, 7, 1_000), (50, 4, 50), (50, 4, 51), (540, 13, 10**7 + 3)])
def test_the_counted_schedule_is_the_one_generation_by_generation(pop, final, budget):
    """`_sizes` counts runs of one size instead of stepping (with_horizon searches over millions
    of generations): the same sizes as the rule applied one generation at a time."""
    algo = hs.LSHADE(pop_size=pop, final_pop=final, max_evals=budget)
    sizes, nfe, n = [], pop, pop
    while nfe < budget:
        sizes.append(n)
        nfe += n
        n = max(final, min(n, math.floor((final - pop) / budget * nfe + pop + 0.5)))
    assert list(algo._sizes) == sizes
    horizon = hs.LSHADE(pop_size=pop, final_pop=final).with_horizon(len(sizes) or 1)
    assert len(horizon._sizes) == max(len(sizes), 1) and horizon.max_evals <= max(budget, pop + 1)


def test_jso_sizes_from_the_dimension():
    assert hs.JSO().for_run(10, 100_000).pop_size == round(25 * math.log(10) * math.sqrt(10)) == 182
    assert hs.JSO().for_run(30, 300_000).pop_size == 466
    assert hs.get_algorithm("lshade", pop_size=50).for_run(10, 1000).pop_size == 50  # given: kept


def test_a_run_uses_its_budget_and_no_more():
    r = hs.minimize("rastrigin", "lshade", dim=5, evals=20_000, runs=2, seed=1, device="cpu")
    assert 20_000 - 4 < r.evals <= 20_000  # the last whole generation (of 4 or 5) within the budget
    r = hs.minimize("rastrigin", "jso", dim=5, evals=20_000, runs=2, seed=1, device="cpu")
    assert 20_000 - 4 < r.evals <= 20_000


def test_weighted_lehmer_mean():
    values, weights = torch.tensor([[0.2, 0.6, 1.0]], dtype=torch.float64), torch.tensor([[1.0, 2.0, 1.0]], dtype=torch.float64)
    mean, den = lehmer(values, weights)
    assert float(mean) == pytest.approx((0.04 + 2 * 0.36 + 1.0) / (0.2 + 1.2 + 1.0))
    assert float(den) == pytest.approx(2.4)
    assert float(c_round(torch.tensor(2.5))) == 3.0 and float(c_round(torch.tensor(3.5))) == 4.0  # C's round


def _state(algo, f_parent, runs=1):
    n0 = len(f_parent)
    x = torch.zeros(runs, n0, 2, dtype=torch.float64)
    return SHADEState(x=x, f=torch.tensor([f_parent] * runs, dtype=torch.float64),
                      archive=torch.zeros(runs, n0, 2, dtype=torch.float64), archive_n=torch.zeros(runs, dtype=torch.long),
                      m_cr=torch.full((runs, algo.H), 0.5, dtype=torch.float64),
                      m_f=torch.full((runs, algo.H), 0.5, dtype=torch.float64), k=torch.zeros(runs, dtype=torch.long),
                      nfe=torch.full((runs,), n0), n=torch.full((runs,), n0))


def test_the_memory_takes_the_weighted_lehmer_means_of_the_successes():
    algo = hs.LSHADE(pop_size=4, max_evals=10_000)
    problem = get_problem("sphere", dim=2)
    s = _state(algo, [1.0, 2.0, 3.0, 4.0])
    F = torch.tensor([[0.3, 0.9, 0.5, 0.7]], dtype=torch.float64)
    CR = torch.tensor([[0.1, 0.8, 0.4, 0.0]], dtype=torch.float64)
    fu = torch.tensor([[0.5, 1.0, 3.0, 5.0]])  # improvements 0.5 and 1.0; a tie; a failure
    t = algo.tell(problem, s, hs.algorithms.base.Proposal(torch.ones(1, 4, 2, dtype=torch.float64), F=F, CR=CR), fu.double())
    w = torch.tensor([0.5, 1.0]) / 1.5
    assert float(t.m_f[0, 0]) == pytest.approx(float((w * torch.tensor([0.3, 0.9]) ** 2).sum() / (w * torch.tensor([0.3, 0.9])).sum()))
    assert float(t.m_cr[0, 0]) == pytest.approx(float((w * torch.tensor([0.1, 0.8]) ** 2).sum() / (w * torch.tensor([0.1, 0.8])).sum()))
    assert t.m_f[0, 1:].tolist() == [0.5] * (algo.H - 1) and int(t.k) == 1
    assert int(t.archive_n) == 2  # the two replaced parents (not the tie)
    assert sorted(t.f[0].tolist()) == [0.5, 1.0, 3.0, 4.0]  # the tie replaces, the failure does not

    s = _state(algo, [1.0, 2.0, 3.0, 4.0])  # every success with CR = 0: the CR memory turns terminal
    t = algo.tell(problem, s, hs.algorithms.base.Proposal(torch.ones(1, 4, 2, dtype=torch.float64), F=F,
                                                          CR=torch.zeros(1, 4, dtype=torch.float64)), fu.double())
    assert float(t.m_cr[0, 0]) == -1.0
    s = _state(algo, [1.0, 2.0, 3.0, 4.0])  # no success: nothing moves
    t = algo.tell(problem, s, hs.algorithms.base.Proposal(torch.ones(1, 4, 2, dtype=torch.float64), F=F, CR=CR),
                  torch.full((1, 4), 9.0, dtype=torch.float64))
    assert int(t.k) == 0 and t.m_f.tolist() == s.m_f.tolist()


def test_jso_averages_the_memory_and_adjusts_f_and_cr_over_the_run():
    algo = hs.JSO(pop_size=8, max_evals=10_000)
    F, CR = torch.tensor([[0.9, 0.5]]), torch.tensor([[0.1, 0.9]])
    for progress, want in ((0.1, ([0.7, 0.5], [0.7, 0.9], 0.7)), (0.3, ([0.7, 0.5], [0.6, 0.9], 0.8)),
                           (0.55, ([0.7, 0.5], [0.1, 0.9], 1.2)), (0.7, ([0.9, 0.5], [0.1, 0.9], 1.2))):
        f, cr, fw = algo.adjust(F, CR, torch.tensor([[progress]]))
        assert f.tolist()[0] == pytest.approx(want[0]) and cr.tolist()[0] == pytest.approx(want[1])
        assert fw.tolist()[0] == pytest.approx([want[2] * v for v in want[0]])
    assert float(algo.p_rate(torch.tensor(0.0))) == 0.25 and float(algo.p_rate(torch.tensor(1.0))) == 0.125
    m_f, m_cr = algo.sampled_memory(torch.full((1, 5), 0.3, dtype=torch.float64), torch.full((1, 5), 0.8, dtype=torch.float64))
    assert m_f.tolist() == [[0.3] * 4 + [0.9]] and m_cr.tolist() == [[0.8] * 4 + [0.9]]
    assert float(algo.memory_value(torch.tensor(0.8), torch.tensor(0.4))) == pytest.approx(0.6)


@pytest.mark.parametrize("bad, says", [
    (dict(p=0.0), "p must lie in"), (dict(H=0), "H must be an integer >= 1"), (dict(final_pop=2), "final_pop must be"),
    (dict(arc_rate=-1.0), "arc_rate must be > 0"), (dict(pop_size=3), "needs a population of at least 4"),
    (dict(max_evals=0), "max_evals must be an integer >= 1"),
])
def test_bad_settings_are_refused(bad, says):
    with pytest.raises(ValueError, match=says):
        hs.LSHADE(**bad)


def test_an_iteration_budget_gives_the_schedule_that_many_generations():
    r = hs.minimize("sphere", "lshade", dim=5, iters=300, device="cpu", seed=0)
    algo = hs.get_algorithm("lshade", **{k: v for k, v in r.algorithm.items() if k != "name"})
    assert r.iterations == 300 == len(algo._sizes) and algo._sizes[-1] <= 5  # shrunk to the end
    assert len(hs.LSHADE(pop_size=90, max_evals=algo.max_evals - 1)._sizes) < 300  # the smallest such budget


def test_without_a_budget_of_evaluations_or_iterations_it_says_what_to_give():
    with pytest.raises(ValueError, match="give evals"):
        hs.minimize("sphere", "lshade", dim=5, time_limit=1.0, device="cpu")
    with pytest.raises(ValueError, match="needs max_evals"):
        hs.Runner("sphere", "lshade", dim=5, device="cpu")


@pytest.mark.parametrize("name", ["lshade", "jso"])
def test_they_solve_what_de_of_the_same_budget_does_not(name):
    """Shifted Rastrigin, D = 10, 30,000 evaluations, 6 runs: the adaptive DEs reach the optimum
    (median error 2e-13 for L-SHADE, 4.5e-8 for jSO, eager) where DE/rand/1/bin at its defaults
    stays near 24; with the success-history memory frozen (the negative control below) they
    stop at 0.044 and 3.2, so the bound 1e-4 needs the adaptation working."""
    problem = get_problem("rastrigin", dim=10, shift=3)
    ours = hs.minimize(problem, name, evals=30_000, runs=6, seed=4, device="cpu", dtype="float64")
    de = hs.minimize(problem, hs.DE(pop_size=100), evals=30_000, runs=6, seed=4, device="cpu", dtype="float64")
    opt = problem.optimum_f
    assert float((ours.best_f - opt).median()) < 1e-4
    assert float((de.best_f - opt).median()) > 1.0


@pytest.mark.slow  # 30-90 s each on 2 cores; it shows the bound above is one a broken memory misses
@pytest.mark.parametrize("name", ["lshade", "jso"])
def test_with_the_memory_frozen_they_do_not_get_there(name, monkeypatch):
    """The negative control of the test above: a memory that never updates misses its bound."""
    algorithm = type(hs.get_algorithm(name))
    monkeypatch.setattr(algorithm, "memory_value", lambda self, old, mean: old)
    problem = get_problem("rastrigin", dim=10, shift=3)
    frozen = hs.minimize(problem, name, evals=30_000, runs=6, seed=4, device="cpu", dtype="float64", engine="eager")
    assert float((frozen.best_f - problem.optimum_f).median()) > 1e-3


@pytest.mark.parametrize("max_evals", [100, 40, 5000])
def test_evaluations_counted_equal_the_population_used_even_past_the_budget(max_evals):
    """evals_after / steps_within against the sizes the steps really had (state.n), also for
    iterations that outlast max_evals (the population is then final_pop, or the first one
    for a budget below it)."""
    algo = hs.LSHADE(pop_size=40, max_evals=max_evals)
    runner = hs.Runner("sphere", algo, dim=3, runs=2, seed=0, device="cpu")
    used = 40
    for k in range(1, 30):
        used += int(runner.state.n[0])
        runner.step(1)
        assert algo.evals_after(k) == used == runner.evals
        assert algo.steps_within(used) == k and algo.steps_within(used - 1) == k - 1


def test_ask_tell_asks_only_the_individuals_still_in_the_population():
    opt = hs.AskTell("lshade", dim=2, lower=-5, upper=5, evals=400, seed=0)
    asked = 0
    while not opt.done:
        x = opt.ask()
        asked += x.shape[0]
        opt.tell((x ** 2).sum(-1))
    assert asked == opt.evals == opt.result().evals and 400 - 4 < asked <= 400
