"""APO's native CPU kernel (`engine="native"`) against the eager step, `algorithms/apo.py`.

The kernel draws Philox numbers, not torch's, so the two are compared in distribution:
final best values, each operator's share, the masks' sizes and coordinates, dormancy's
points; NaN values of inline objectives are counted per run, and greedy selection never
makes a protozoan worse. test_native.py checks every kernel alike for the rest (threads,
convergence, problems inline or between kernel calls, NaN, chunks of steps and checkpoints).
"""

import math

import numpy as np
import pytest
import torch
from scipy import stats

import heuriscale as hs
from heuriscale.algorithms.apo import APO, AUTOTROPH, DORMANCY, HETEROTROPH, REPRODUCTION
from heuriscale.engine.rng import RngStream

def _native_candidates(runner):
    """Like `APO.candidates` for a native runner: sorted parents, their values, the (clipped)
    candidates and each rank's operator, from one move-only kernel call on a copy."""
    fused = runner._kernels
    s = fused.prepare(runner.state)
    record = torch.empty(1, runner.runs, dtype=runner.dtype)
    fused._launch(s, runner.best_x.clone(), runner._hit_iter.clone(), runner._it.clone(), runner.best_f.clone(),
                  1, record, True, False, None)
    order = torch.from_numpy(fused.order)
    x = s.x.gather(1, order[..., None].expand(-1, -1, s.x.shape[-1]))
    return x, s.f.gather(1, order), fused.cand.clone(), torch.from_numpy(fused.kinds.astype(np.int64))


def _eager_candidates(problem, algo, runs):
    problem = problem.to("cpu", torch.float64)
    with RngStream(torch.device("cpu"), 0):
        x, f, x_new, kind = algo.candidates(problem, algo.init(problem, runs))
    return x, f, x_new.clamp(problem.lower, problem.upper), kind


def test_operator_shares_and_mask_sizes_match_eager():
    n, dim, runs = 60, 12, 200
    algo = APO(pop_size=n, pf_max=0.1, max_iters=100)
    # the first iteration: no parent on a bound yet, so every masked coordinate moves
    runner = hs.Runner("sphere", algo, dim=dim, runs=runs, seed=0, device="cpu", dtype="float64", engine="native")
    native = _native_candidates(runner)
    eager = _eager_candidates(hs.get_problem("sphere", dim=dim), algo, runs)
    ranks = torch.arange(1, n + 1).expand(runs, n)
    renewing = {}
    for who, (x, f, x_new, kind) in (("native", native), ("eager", eager)):
        assert (f[:, 1:] >= f[:, :-1]).all(), who  # sorted, rank 1 first
        renew = (kind == DORMANCY) | (kind == REPRODUCTION)
        renewing[who] = renew.sum(1).numpy()
        # ceil(N pf_max U) ranks: at most ceil(N pf_max), 3.5 on average for N = 60
        assert renewing[who].max() <= math.ceil(n * 0.1) and 3.2 < renewing[who].mean() < 3.8, who
        foragers = (kind == AUTOTROPH) | (kind == HETEROTROPH)
        assert float((kind == AUTOTROPH).sum() / foragers.sum()) > 0.98, who  # pah(t=1 of 100) = 0.9998
        changed = (x_new != x).sum(-1)
        assert torch.equal(changed[foragers], ((dim * ranks + n - 1) // n)[foragers]), who  # ceil(D i / N)
        moved = changed[kind == REPRODUCTION].double()  # ceil(rand D): uniform on 1..D
        assert moved.numel() > 200 and moved.min() >= 1 and moved.max() <= dim, who
        assert abs(float(moved.mean()) - (dim + 1) / 2) < 0.6, who
        # every coordinate as likely to move: a forager of rank i moves each one with chance ones/D
        share = (x_new != x)[foragers].double().mean(0) / (changed[foragers].double().mean() / dim)
        assert ((share - 1).abs() < 0.05).all(), (who, share)
    assert stats.mannwhitneyu(renewing["native"], renewing["eager"]).pvalue > 1e-3
    # (13): dormancy's chance grows with the rank; the dormant ranks are distributed alike
    dormant = {who: ranks[c[3] == DORMANCY].numpy() for who, c in (("native", native), ("eager", eager))}
    assert dormant["native"].size > 200 and dormant["native"].mean() > n / 2 + 5
    assert stats.mannwhitneyu(dormant["native"], dormant["eager"]).pvalue > 1e-3


@pytest.mark.parametrize("steps", [5, 9])
def test_autotroph_share_follows_pah(steps):
    algo = APO(pop_size=60, max_iters=10)
    runner = hs.Runner("rastrigin", algo, dim=4, runs=200, seed=1, device="cpu", dtype="float64", engine="native")
    runner.step(steps)
    assert float(runner.state.t) == steps
    kind = _native_candidates(runner)[3]
    pah = 0.5 * (1 + math.cos(min((steps + 1) / 10, 1.0) * math.pi))  # (12) at t = steps + 1
    foragers = (kind == AUTOTROPH) | (kind == HETEROTROPH)
    assert abs(float((kind == AUTOTROPH).sum() / foragers.sum()) - pah) < 0.02


def test_dormancy_points_are_uniform_in_the_bounds():
    problem = hs.TorchFunction(lambda x: (x * x).sum(-1), 3, [-1.0, 0.0, 10.0], [1.0, 5.0, 30.0])
    runner = hs.Runner(problem, APO(pop_size=400, pf_max=1.0, max_iters=10), runs=20, seed=2, device="cpu",
                       dtype="float64", engine="native")
    _, _, x_new, kind = _native_candidates(runner)
    points = x_new[kind == DORMANCY]
    assert points.shape[0] > 500
    for c in range(3):
        lo, hi = float(problem.lower[c]), float(problem.upper[c])
        assert bool(((points[:, c] >= lo) & (points[:, c] <= hi)).all())
        assert stats.kstest(points[:, c].numpy(), "uniform", args=(lo, hi - lo)).pvalue > 1e-3


def test_nan_values_of_inline_objectives_are_counted_per_run():
    runner = hs.Runner("sphere", APO(pop_size=40, max_iters=10), dim=4, runs=2, seed=0, device="cpu",
                       dtype="float64", engine="native")
    runner.state.x[0] = math.nan  # run 0: every candidate but a dormant one (a fresh point) is NaN
    fused, s = runner._kernels, runner.state
    carry = (runner.best_x, runner._hit_iter, runner._it, runner.best_f)
    record = torch.empty(1, 2, dtype=torch.float64)
    s = fused._launch(s, *carry, 1, record, True, False, None)
    nan_rows = fused.cand.isnan().any(-1).sum(1)
    s = fused._launch(s, *carry, 1, record, False, True, None)  # the kernel evaluates sphere inline
    assert int(nan_rows[0]) > 20 and torch.equal(runner._guarded.nan_evals, nan_rows)
    assert not s.f.isnan().any() and torch.isfinite(runner.best_f).all() and torch.isfinite(record).all()


def test_greedy_selection_never_makes_a_protozoan_worse():
    runner = hs.Runner("rastrigin", APO(pop_size=30, max_iters=50), dim=5, runs=4, seed=0, device="cpu",
                       dtype="float64", engine="native")
    check_greedy_selection(runner, 50)


def check_greedy_selection(runner, steps: int) -> None:
    """`steps` steps of an APO runner on the 5-D Rastrigin: no protozoan gets worse, some get
    better, and every stored f is the objective's value at its x (also used by test_fused_apo)."""
    rastrigin = hs.get_problem("rastrigin", dim=5).to(runner.state.x.device, torch.float64)
    improved = 0
    for _ in range(steps):
        before = runner.state.f.sort(-1).values  # the step works on the sorted population
        runner.step()
        assert bool((runner.state.f <= before).all())
        improved += int((runner.state.f < before).sum())
        torch.testing.assert_close(runner.state.f, rastrigin.evaluate(runner.state.x), rtol=1e-12, atol=1e-12)
    assert improved > 0 and float(runner.state.t) == steps
