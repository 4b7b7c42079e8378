"""CMA-ES (Hansen's tutorial): Table 1's parameters, one generation against a hand-derived
update in float64 with the same random numbers, its choices (start, bounds, restarts), its
errors, and pycma as a reference we did not write. The behaviour every algorithm shares is
tested in test_every_algorithm.py."""

import dataclasses
import math

import numpy as np
import pytest
import torch
from scipy import stats

import heuriscale as hs
from heuriscale.algorithms.base import Proposal
from heuriscale.algorithms.cmaes import CMAESState, table1


@pytest.mark.parametrize("n", [1, 2, 5, 10, 30, 100])
def test_table1_defaults_are_the_tutorials_formulas(n):
    lam = hs.CMAES.default_lambda(n)
    assert lam == 4 + math.floor(3 * math.log(n))  # (48)
    P = table1(n, lam)
    mu = lam // 2
    assert P["mu"] == mu and len(P["weights"]) == mu
    w = np.array(P["weights"])
    assert abs(w.sum() - 1) < 1e-12 and (np.diff(w) < 0).all() and (w > 0).all()  # decreasing, sum to 1
    assert abs(P["mu_eff"] - 1 / (w ** 2).sum()) < 1e-9  # mu_eff = 1 / sum w_i^2 for weights summing to 1
    assert 1 <= P["mu_eff"] <= mu
    me = P["mu_eff"]
    assert P["c_sigma"] == pytest.approx((me + 2) / (n + me + 5), rel=1e-12)
    assert P["d_sigma"] == pytest.approx(1 + 2 * max(0, math.sqrt((me - 1) / (n + 1)) - 1) + P["c_sigma"], rel=1e-12)
    assert P["c_c"] == pytest.approx((4 + me / n) / (n + 4 + 2 * me / n), rel=1e-12)
    assert P["c_1"] == pytest.approx(2 / ((n + 1.3) ** 2 + me), rel=1e-12)
    assert P["c_mu"] == pytest.approx(min(1 - P["c_1"], 2 * (0.25 + me + 1 / me - 2) / ((n + 2) ** 2 + me)), rel=1e-12)
    assert P["c_1"] + P["c_mu"] <= 1 and 0 < P["c_sigma"] < 1 and 0 < P["c_c"] <= 1
    chi = np.linalg.norm(np.random.default_rng(n).standard_normal((200_000, n)), axis=1).mean()
    assert P["chi_n"] == pytest.approx(chi, rel=5e-3)  # E|N(0, I)|


def test_pycma_computes_the_same_learning_rates():
    cma = pytest.importorskip("cma", reason="pycma (`pip install cma`, in the test extra) is not installed")
    for n in (3, 10, 40):
        lam = hs.CMAES.default_lambda(n)
        es = cma.CMAEvolutionStrategy(n * [0.0], 1.0, {"CMA_active": False, "popsize": lam, "verbose": -9})
        P = table1(n, lam)
        assert es.sp.weights.mueff == pytest.approx(P["mu_eff"], rel=1e-12)
        assert list(es.sp.weights[:lam // 2]) == pytest.approx(P["weights"], rel=1e-12)
        assert es.sp.cmu == pytest.approx(P["c_mu"], rel=1e-12) and es.sp.c1 == pytest.approx(P["c_1"], rel=1e-12)
        assert es.sp.cc == pytest.approx(P["c_c"], rel=1e-12)


def _generation_by_hand(s: CMAESState, p, f: np.ndarray, n: int, lam: int):
    """One generation of the tutorial's summary in NumPy float64, run 0, from state s and
    the proposal's standard normal numbers z (lambda, n) and eigenbasis B (an eigenbasis is
    unique up to signs and order, which change the samples, not their distribution): the
    expected mean, sigma, C and paths."""
    P = table1(n, lam)
    m, sigma, C = s.mean[0].numpy(), float(s.sigma[0]), s.C[0].numpy()
    ps, pc, g = s.p_sigma[0].numpy(), s.p_c[0].numpy(), int(s.g[0])
    z, B, D = p.z[0].numpy(), p.B[0].numpy(), p.d[0].numpy()
    np.testing.assert_allclose(B @ np.diag(D ** 2) @ B.T, C, rtol=1e-9, atol=1e-12 * np.abs(C).max())  # C = B D^2 B^T
    np.testing.assert_allclose(B.T @ B, np.eye(n), atol=1e-12)
    y = z @ np.diag(D) @ B.T  # y_k = B D z_k
    order = np.argsort(f, kind="stable")[:P["mu"]]
    w = np.array(P["weights"])
    y_w = w @ y[order]  # (41)
    m2 = m + sigma * y_w  # (42)
    C_inv_sqrt = B @ np.diag(1 / D) @ B.T
    cs, ds, cc, c1, cmu, me = (P[k] for k in ("c_sigma", "d_sigma", "c_c", "c_1", "c_mu", "mu_eff"))
    ps2 = (1 - cs) * ps + math.sqrt(cs * (2 - cs) * me) * C_inv_sqrt @ y_w  # (43)
    sigma2 = sigma * math.exp(cs / ds * (np.linalg.norm(ps2) / P["chi_n"] - 1))  # (44)
    h = float(np.linalg.norm(ps2) / math.sqrt(1 - (1 - cs) ** (2 * (g + 1))) < (1.4 + 2 / (n + 1)) * P["chi_n"])
    pc2 = (1 - cc) * pc + h * math.sqrt(cc * (2 - cc) * me) * y_w  # (45)
    delta = (1 - h) * cc * (2 - cc)
    rank_mu = sum(wi * np.outer(yi, yi) for wi, yi in zip(w, y[order]))
    C2 = (1 + c1 * delta - c1 - cmu * w.sum()) * C + c1 * np.outer(pc2, pc2) + cmu * rank_mu  # (47)
    return m2, sigma2, C2, ps2, pc2, h


@pytest.mark.parametrize("steps", [1, 40])
def test_a_generation_is_the_tutorials_update_in_float64(steps):
    """From a state well inside a box no sample leaves (so no penalty), after `steps` real
    generations (C no longer I, paths not 0): our tell equals the NumPy update with the
    same z, to rounding."""
    n, lam = 6, 12
    problem = hs.get_problem("rosenbrock", dim=n, bounds=(-1e9, 1e9)).to("cpu", torch.float64)
    algo = hs.CMAES(pop_size=lam, sigma0=0.5)
    torch.manual_seed(11)
    s = algo._fresh(problem, torch.full((2, n), 0.5, dtype=torch.float64))
    for _ in range(steps - 1):
        p = algo.ask(problem, s)
        s = algo.tell(problem, s, p, problem.evaluate(p.x))
    p = algo.ask(problem, s)
    f = problem.evaluate(p.x)
    new = algo.tell(problem, s, p, f)
    m2, sigma2, C2, ps2, pc2, h = _generation_by_hand(s, p, f[0].numpy(), n, lam)
    np.testing.assert_allclose(p.x[0].numpy(), s.mean[0].numpy() + float(s.sigma[0]) * p.y[0].numpy())
    np.testing.assert_allclose(new.mean[0].numpy(), m2, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(float(new.sigma[0]), sigma2, rtol=1e-10)
    np.testing.assert_allclose(new.p_sigma[0].numpy(), ps2, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(new.p_c[0].numpy(), pc2, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(new.C[0].numpy(), C2, rtol=1e-8, atol=1e-12 * np.abs(C2).max())
    assert int(new.g[0]) == int(s.g[0]) + 1
    if steps == 40:
        assert not np.allclose(s.C[0].numpy(), np.eye(n))  # a real C was tested


def test_the_stall_h_sigma_stops_the_rank_one_path_when_p_sigma_is_long():
    n, lam = 4, 8
    problem = hs.get_problem("sphere", dim=n, bounds=(-1e9, 1e9)).to("cpu", torch.float64)
    algo = hs.CMAES(pop_size=lam, sigma0=1.0)
    torch.manual_seed(0)
    s = algo._fresh(problem, torch.zeros(1, n, dtype=torch.float64))
    s = s.replace(p_sigma=torch.full_like(s.p_sigma, 10.0), p_c=torch.ones_like(s.p_c), g=s.g + 50)
    p = algo.ask(problem, s)
    new = algo.tell(problem, s, p, problem.evaluate(p.x))
    *_, pc2, h = _generation_by_hand(s, p, problem.evaluate(p.x)[0].numpy(), n, lam)
    assert h == 0.0  # |p_sigma| ~ 20 >> 1.4 E|N(0,I)|
    np.testing.assert_allclose(new.p_c[0].numpy(), (1 - table1(n, lam)["c_c"]) * np.ones(n), rtol=1e-12)
    np.testing.assert_allclose(new.p_c[0].numpy(), pc2, rtol=1e-12)


def test_the_start_is_uniform_in_the_box_with_sigma0_three_tenths_of_each_side():
    problem = hs.get_problem("sphere", dim=2, bounds=([-10.0, 0.0], [10.0, 1.0]))
    algo = hs.CMAES(pop_size=8)
    p = algo.ask_init(problem.to("cpu", torch.float64), 4000)
    m = p.mean0
    assert (m >= problem.lower).all() and (m <= problem.upper).all()
    assert stats.kstest(((m[:, 1] - 0.0) / 1.0).numpy(), "uniform").pvalue > 1e-3
    runner = hs.Runner(problem, algo, runs=3, seed=0, device="cpu", dtype="float64")
    state = algo._fresh(problem.to("cpu", torch.float64), m[:3])
    std = state.sigma[:, None] * state.C.diagonal(dim1=-2, dim2=-1).sqrt()
    torch.testing.assert_close(std, torch.tensor([[6.0, 0.3]] * 3, dtype=torch.float64))  # 0.3 x each side
    given = hs.CMAES(pop_size=8, sigma0=0.7)._fresh(problem.to("cpu", torch.float64), m[:3])
    assert torch.equal(given.sigma, torch.full((3,), 0.7, dtype=torch.float64))
    assert torch.equal(given.C[0], torch.eye(2, dtype=torch.float64))  # pycma's convention: C0 = I
    assert runner.state.f.shape == (3, 8)


def test_samples_outside_the_box_are_evaluated_clipped_and_ranked_behind_by_the_penalty():
    """The optimum sits on the bound (x = 0 on [0, 1]^3 for the sphere): every evaluated point
    lies in the box, and the runs converge onto the corner instead of drifting out."""
    log = []

    def sphere(x):
        log.append(x.clone())
        return (x * x).sum(-1)

    problem = hs.TorchFunction(sphere, 3, 0.0, 1.0, name="corner")
    r = hs.minimize(problem, hs.CMAES(pop_size=8), iters=300, runs=10, seed=0, device="cpu", dtype="float64")
    points = torch.cat([x.reshape(-1, 3) for x in log])
    assert (points >= 0).all() and (points <= 1).all()
    assert (points == 0).any()  # some samples were clipped
    assert (r.best_f < 1e-12).all()


def test_restarts_begin_again_when_a_termination_criterion_holds():
    """On Rastrigin at a small sigma every run converges into a local minimum long before
    the budget ends: with restarts each run starts again (TolFun/TolX), without them it
    never does; the restarts reach better optima."""
    kw = dict(dim=5, iters=1500, runs=8, seed=2, device="cpu", dtype="float64")
    plain = hs.Runner("rastrigin", hs.CMAES(pop_size=8, sigma0=0.05), **{k: v for k, v in kw.items() if k != "iters"})
    again = hs.Runner("rastrigin", hs.CMAES(pop_size=8, sigma0=0.05, restarts=True),
                      **{k: v for k, v in kw.items() if k != "iters"})
    plain.step(1500)
    again.step(1500)
    assert (plain.state.restarted == 0).all()
    assert (again.state.restarted >= 2).all()
    assert (again.state.g < 1500).all()
    assert torch.median(again.best_f) < torch.median(plain.best_f)


@pytest.mark.parametrize("bad, message", [
    (dict(sigma0=0.0), "cmaes: sigma0 must be > 0"), (dict(sigma0=float("nan")), "cmaes: sigma0 must be > 0"),
    (dict(sigma0="x"), "cmaes: sigma0 must be > 0"), (dict(restarts="yes"), "cmaes: restarts must be True or False"),
    (dict(pop_increase=0), "cmaes: pop_increase must be an integer >= 1"),
    (dict(pop_increase=1.5), "cmaes: pop_increase must be an integer >= 1"),
    (dict(pop_size=10, max_pop=8), r"cmaes: max_pop must be an integer >= pop_size \(10\)"),
    (dict(pop_size=1), "cmaes needs a population of at least 2"),
])
def test_bad_parameters_are_refused_clearly(bad, message):
    with pytest.raises(ValueError, match=message):
        hs.CMAES(**bad)


def test_a_sigma0_too_large_for_float32_is_refused():
    with pytest.raises(ValueError, match=r"cmaes: sigma0=1e\+300 does not fit in float32"):
        hs.minimize("sphere", hs.CMAES(sigma0=1e300), dim=2, iters=2, device="cpu")


def _pycma_evals_to_target(name, dim, lam, budget, runs, seed, **options):
    """pycma's evaluations to f <= 1e-8 (inf: not reached), from x0 uniform in the box and
    sigma0 = 0.3 x its side, non-active, its step-size constants set to Table 1's (pycma 4
    computes c_sigma and d_sigma otherwise) through its own module-level overrides."""
    cma = pytest.importorskip("cma", reason="pycma (`pip install cma`, in the test extra) is not installed")
    from cma import sigma_adaptation

    problem = hs.get_problem(name, dim=dim)
    lower, upper = problem.lower.double().numpy(), problem.upper.double().numpy()
    rng = np.random.default_rng(seed)
    hit = np.full(runs, np.inf)
    saved = sigma_adaptation._CSA_cs, sigma_adaptation._CSA_damps
    sigma_adaptation._CSA_cs, sigma_adaptation._CSA_damps = table1(dim, lam)["c_sigma"], table1(dim, lam)["d_sigma"]
    try:
        _pycma_runs(cma, problem, lower, upper, lam, budget, rng, hit, options)
    finally:
        sigma_adaptation._CSA_cs, sigma_adaptation._CSA_damps = saved
    return hit


def _pycma_runs(cma, problem, lower, upper, lam, budget, rng, hit, options):
    dim = problem.dim
    for run in range(len(hit)):
        es = cma.CMAEvolutionStrategy(lower + (upper - lower) * rng.random(dim), 0.3 * float((upper - lower).max()), {
            "popsize": lam, "seed": int(rng.integers(1, 2**31 - 1)), "CMA_active": False, "maxfevals": budget,
            "bounds": [list(lower), list(upper)], "verbose": -9, **options})
        while not es.stop():
            X = es.ask()
            f = problem.evaluate(torch.from_numpy(np.asarray(X))).numpy()
            es.tell(X, f.tolist())
            if f.min() <= 1e-8:
                hit[run] = es.countevals
                break


def _ours(name, dim, lam, budget, runs, seed, **params):
    r = hs.minimize(name, hs.CMAES(pop_size=lam, **params), dim=dim, evals=budget, runs=runs, seed=seed,
                    device="cpu", dtype="float64", target=1e-8, engine="eager")
    e = r.evals_to_target.numpy().astype(float)
    return np.where(e < 0, np.inf, e)


@pytest.mark.slow  # 20 s on 2 cores; the IPOP loop and a resumed run check the same code in the default run
def test_evaluations_to_target_match_pycma():
    """pycma (non-active, the algorithm of `cmaes`) on the 8-D elliptic, condition 1e6: the
    evaluations to f <= 1e-8 of 20 runs each side come from the same distribution. Learning
    C is what the elliptic measures: a rank-mu update left out, or a wrong c_sigma, moves
    the median by far more than these samples' spread (checked below against the same
    reference)."""
    dim, lam, budget, runs = 8, 10, 12_000, 20
    theirs = _pycma_evals_to_target("elliptic", dim, lam, budget, runs, seed=1)
    ours = _ours("elliptic", dim, lam, budget, runs, seed=1)
    assert np.isfinite(ours).all() and np.isfinite(theirs).sum() >= runs - 2
    assert stats.mannwhitneyu(ours, theirs).pvalue > 1e-3, (np.median(ours), np.median(theirs))


@pytest.mark.slow  # minutes under load on 2 cores: `pytest -m slow`
@pytest.mark.parametrize("broken", ["no rank-mu", "c_sigma / 5"])
def test_the_comparison_with_pycma_detects_a_broken_update(broken, monkeypatch):
    import heuriscale.algorithms.cmaes as module

    original = module.table1

    def table(n, lam):
        P = original(n, lam)
        if broken == "no rank-mu":
            P["c_mu"] = 0.0
        else:
            P["c_sigma"] = P["c_sigma"] / 5
        return P

    dim, lam, budget, runs = 8, 10, 12_000, 20
    theirs = _pycma_evals_to_target("elliptic", dim, lam, budget, runs, seed=1)
    monkeypatch.setattr(module, "table1", table)
    module._level_table.cache_clear()  # (a step reads Table 1 through this cache)
    try:
        ours = _ours("elliptic", dim, lam, budget, runs, seed=1)
    finally:
        module._level_table.cache_clear()
    assert stats.mannwhitneyu(ours, theirs).pvalue < 1e-3, (np.median(ours), np.median(theirs))


@pytest.mark.slow
@pytest.mark.parametrize("name, dim, lam, budget", [("elliptic", 10, 10, 20_000), ("rosenbrock", 10, 10, 30_000)])
def test_evaluations_to_target_match_pycma_on_more_functions(name, dim, lam, budget):
    runs = 30
    theirs = _pycma_evals_to_target(name, dim, lam, budget, runs, seed=3)
    ours = _ours(name, dim, lam, budget, runs, seed=3)
    a, b = ours[np.isfinite(ours)], theirs[np.isfinite(theirs)]
    assert stats.mannwhitneyu(a, b).pvalue > 1e-3, (np.median(a), np.median(b))
    assert stats.fisher_exact([[a.size, runs - a.size], [b.size, runs - b.size]]).pvalue > 1e-3


# -- IPOP: restarts that multiply the population ----------------------------------------------
def _gathered_and_plain(device="cpu", n=4, lam0=6, runs=3, seed=0):
    """An IPOP run set whose runs are at lambda = 2 lambda0 (as after one restart), stepped twice;
    the one generation of a plain lambda = 2 lambda0 CMA-ES made of the same samples; and the
    plain lambda0 generation of the second step's samples alone (a step that lost the first)."""
    problem = hs.get_problem("elliptic", dim=n).to(device, torch.float64)
    ipop = hs.CMAES(pop_size=lam0, restarts=True, pop_increase=2, max_pop=4 * lam0)
    torch.manual_seed(seed)
    p0 = ipop.ask_init(problem, runs)
    s0 = ipop.tell_init(problem, p0, problem.evaluate(p0.x))
    s0 = dataclasses.replace(s0, level=torch.ones_like(s0.level))
    p1 = ipop.ask(problem, s0)
    s1 = ipop.tell(problem, s0, p1, problem.evaluate(p1.x))
    p2 = ipop.ask(problem, s1)
    s2 = ipop.tell(problem, s1, p2, problem.evaluate(p2.x))
    both = Proposal(torch.cat([p1.x, p2.x], 1), z=torch.cat([p1.z, p2.z], 1), y=torch.cat([p1.y, p2.y], 1),
                    B=p1.B, d=p1.d)
    before = dataclasses.replace(s0, z_gen=s0.z_gen[:, :0], y_gen=s0.y_gen[:, :0], f_gen=s0.f_gen[:, :0],
                                 level=torch.zeros_like(s0.level))
    expected = hs.CMAES(pop_size=2 * lam0).tell(problem, before, both, problem.evaluate(both.x))
    half = hs.CMAES(pop_size=lam0).tell(problem, before, p2, problem.evaluate(p2.x))
    return s0, s1, s2, p1, p2, expected, half


def test_an_ipop_generation_of_twice_lambda0_is_gathered_over_two_steps_and_equals_the_plain_one(device):
    s0, s1, s2, p1, p2, expected, half = _gathered_and_plain(device)
    # the first step evaluates lambda0 points and leaves the distribution as it was
    for field in ("mean", "sigma", "C", "p_sigma", "p_c", "g", "best_hist"):
        assert torch.equal(getattr(s1, field), getattr(s0, field)), field
    assert s1.filled.tolist() == [6, 6, 6] and torch.equal(p1.B, p2.B)  # the same distribution sampled twice
    # the second completes the generation: (41)-(47) over all 2 lambda0 points, as lambda = 12 makes it
    assert s2.filled.tolist() == [0, 0, 0] and s2.g.tolist() == [2, 2, 2] and s2.restarted.tolist() == [0, 0, 0]
    for field in ("mean", "sigma", "C", "p_sigma", "p_c"):
        torch.testing.assert_close(getattr(s2, field), getattr(expected, field), rtol=1e-6, atol=1e-9, msg=field)
        assert not torch.allclose(getattr(half, field), getattr(expected, field), rtol=1e-3), field  # it could fail
    assert torch.equal(s2.best_hist[:, 1], s2.f_gen[:, :12].min(-1).values)  # the generation's best


def test_ipop_restarts_multiply_the_population_up_to_max_pop(device):
    """A criterion met at the end of a generation: the run restarts with lambda x 2, its next
    generation taking two steps; then x 4; at max_pop it stays there."""
    problem = hs.get_problem("rastrigin", dim=5)
    algo = hs.CMAES(pop_size=8, restarts=True, pop_increase=2, max_pop=32)
    assert algo.populations() == (8, 16, 32) and algo.ipop
    r = hs.Runner(problem, algo, runs=3, seed=1, device=device, engine="eager")
    r.step(2)
    r.state.sigma[1] = 1e-30  # TolX in run 1 only
    r.step(1)
    assert r.state.restarted.tolist() == [0, 1, 0] and r.state.level.tolist() == [0, 1, 0]
    mean = r.state.mean.clone()
    r.step(1)  # run 1 has half its 16 points
    assert torch.equal(r.state.mean[1], mean[1]) and not torch.equal(r.state.mean[0], mean[0])
    assert r.state.filled.tolist() == [0, 8, 0]
    r.step(1)
    assert not torch.equal(r.state.mean[1], mean[1]) and r.state.g.tolist()[1] == 1
    for level, steps in ((2, 2), (2, 4)):  # lambda 16 completes in 2 steps, then 32 in 4
        r.state.sigma[1] = 1e-30
        r.step(steps)
        assert r.state.level.tolist() == [0, level, 0] and r.state.filled.tolist() == [0, 0, 0]
    assert r.state.restarted.tolist() == [0, 3, 0]


def test_tolfun_reads_the_history_length_of_the_runs_lambda():
    """On a constant function only TolFun ends a run, after 10 + ceil(30 n / lambda)
    generations: with n = 4 and lambda 6, 12, 24, 48 (48 held) that is 30, 20, 15, 13 and 13
    generations, 30, 40, 60, 104 and 104 steps of 6 points (the first 30 counting the initial
    generation, which precedes step 1); each restart empties the history."""
    flat = hs.TorchFunction(lambda x: torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device), 4, -5.0, 5.0,
                            name="flat")
    r = hs.Runner(flat, hs.CMAES(pop_size=6, restarts=True, pop_increase=2, max_pop=48), runs=2, seed=0,
                  device="cpu", dtype="float64", engine="eager")
    restarts_at = []
    for step in range(1, 339):
        before = r.state.restarted.clone()
        r.step(1)
        if (r.state.restarted > before).any():
            assert (r.state.restarted > before).all()  # both runs alike
            assert torch.isinf(r.state.best_hist).all() and (r.state.filled == 0).all()
            restarts_at.append(step)
    assert restarts_at == [29, 69, 129, 233, 337], restarts_at


@pytest.mark.slow  # minutes under load on 2 cores: `pytest -m slow`
def test_ipop_solves_rastrigin_where_restarts_at_the_same_population_do_not():
    """Rastrigin's global structure shows at large populations (Auger & Hansen 2005, and the
    reason for IPOP): with the same budget, IPOP's runs reach the global optimum more often."""
    kw = dict(dim=5, evals=40_000, runs=12, seed=3, device="cpu", engine="eager", dtype="float64")
    ipop = hs.minimize("rastrigin", hs.get_algorithm("cmaes", preset="ipop", pop_size=8), **kw)
    fixed = hs.minimize("rastrigin", hs.CMAES(pop_size=8, restarts=True), **kw)
    solved_ipop, solved_fixed = int((ipop.best_f < 1e-8).sum()), int((fixed.best_f < 1e-8).sum())
    assert solved_ipop >= 10 and solved_fixed <= 6, (solved_ipop, solved_fixed)  # measured: 12 and 4
    assert stats.fisher_exact([[solved_ipop, 12 - solved_ipop], [solved_fixed, 12 - solved_fixed]])[1] < 0.05


def test_ipop_sizes_follow_the_budget_and_the_native_kernel_declines_it():
    ipop = hs.get_algorithm("cmaes", preset="ipop", pop_size=10)
    assert ipop.for_run(10, 200_000).populations()[-1] == 1280  # 100 x 2560 > 2e5
    assert ipop.with_horizon(19_999).populations()[-1] == 1280  # the same budget in steps of 10 points
    assert ipop.populations()[-1] == 10 * 2 ** 9  # no budget: a bare Runner
    assert not ipop.for_run(10, 1500).ipop and ipop.for_run(10, 1500).populations() == (10,)  # too small to grow
    assert hs.CMAES(pop_size=10, restarts=True, pop_increase=3, max_pop=100).populations() == (10, 30, 90)
    assert hs.CMAES(pop_size=10).populations() == (10,) == hs.CMAES(pop_size=10, restarts=True).populations()
    algo = hs.CMAES(pop_size=6, restarts=True, pop_increase=2, max_pop=12)
    assert hs.minimize("sphere", algo, dim=3, iters=5, device="cpu").extra["engine"] == "eager"
    with pytest.raises(ValueError, match="IPOP's restarts grow it"):
        hs.minimize("sphere", algo, dim=3, iters=5, device="cpu", engine="native")
    assert hs.minimize("sphere", hs.CMAES(pop_size=6, restarts=True), dim=3, iters=5, device="cpu",
                       engine="native").extra["engine"] == "native"  # restarts at one lambda: the kernel's


def test_ipop_resumes_bit_identically_from_a_checkpoint_inside_a_generation(tmp_path):
    kw = dict(dim=4, runs=3, device="cpu", engine="eager")
    algo = hs.CMAES(pop_size=6, sigma0=0.05, restarts=True, pop_increase=2, max_pop=48)
    whole = hs.minimize("rastrigin", algo, iters=400, seed=5, **kw)
    part = hs.minimize("rastrigin", algo, iters=257, seed=5, checkpoint=tmp_path / "c.ckpt", **kw)
    assert part.iterations == 257
    saved = torch.load(tmp_path / "c.ckpt", weights_only=False)
    assert (saved["state"]["filled"] > 0).any(), saved["state"]["level"]  # a generation half gathered
    resumed = hs.minimize("rastrigin", algo, iters=400, resume=tmp_path / "c.ckpt", **kw)
    for field in ("best_f", "best_x", "history_f", "nan_evals"):
        assert torch.equal(getattr(resumed, field), getattr(whole, field)), field


def test_an_ipop_ask_tell_loop_computes_what_minimize_does(tmp_path):
    """Through a checkpoint between an ask and its tell, with runs at larger lambdas gathering
    their generations: the same evaluations and best values as minimize."""
    problem = hs.get_problem("rastrigin", dim=4)
    algo = hs.get_algorithm("cmaes", preset="ipop", pop_size=6)
    opt = hs.AskTell(algo, problem, runs=3, evals=6 * 600, seed=3, device="cpu")
    while not opt.done:
        if opt.iteration == 300:
            opt.ask()
            opt.save(tmp_path / "at.ckpt")
            opt = hs.AskTell.load(tmp_path / "at.ckpt", problem, device="cpu")
        opt.tell(problem.evaluate(opt.ask()))
    told = opt.result()
    plain = hs.minimize(problem, algo, evals=opt.evals, runs=3, seed=3, device="cpu", engine="eager")
    assert told.evals == plain.evals == 3600
    assert torch.equal(told.best_f, plain.best_f) and torch.equal(told.best_x, plain.best_x)
    saved = torch.load(tmp_path / "at.ckpt", weights_only=False)
    assert (saved["state"]["level"] > 0).any()  # the checkpoint was taken with IPOP under way


def test_a_box_of_width_zero_is_refused_in_one_line_before_any_work():
    """sigma0 is 0.3 x the widest side: with lower == upper everywhere nothing scales the steps
    (C would be 0 / 0 and the eigendecomposition fail); a side of width 0 among others is fine."""
    flat = hs.TorchFunction(lambda x: (x ** 2).sum(-1), dim=3, lower=0.0, upper=0.0)
    with pytest.raises(ValueError, match="box of width 0") as caught:
        hs.minimize(flat, "cmaes", iters=5, seed=0, device="cpu", engine="eager")
    assert "\n" not in str(caught.value)
    with pytest.raises(ValueError, match="box of width 0"):
        hs.AskTell("cmaes", dim=2, lower=1.0, upper=1.0, evals=50, device="cpu")
    assert hs.minimize(flat, hs.CMAES(sigma0=0.5), iters=3, seed=0, device="cpu", engine="eager").best_f.isfinite().all()
    part = hs.TorchFunction(lambda x: (x ** 2).sum(-1), dim=3, lower=[0, -1, -1], upper=[0, 1, 1])
    r = hs.minimize(part, "cmaes", iters=60, runs=2, seed=0, device="cpu", engine="eager")
    assert (r.best_x[:, 0] == 0).all() and (r.best_f < 1e-4).all()
