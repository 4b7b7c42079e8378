"""FEP's native CPU kernel (`engine="native"`, fused/fep/cpu.py) against the eager step,
the fused Triton kernels and the distributions it draws from.

With the eager step's own random numbers fed in, one native generation must give the eager
generation (as a set: survivors come out in union order); with its Philox stream it must
draw Cauchy and normal numbers. test_native.py checks every kernel alike for the rest (the
fused kernels' numbers, threads, convergence, NaN, chunks of steps and checkpoints).
"""

import math

import numpy as np
import pytest
import torch
from numba import njit
from scipy import stats

import heuriscale as hs
from heuriscale.engine.kernels.fep import cpu, cpu_math

PROBLEMS = {  # computed inside the kernel, but for bbob-f10 (by the problem between kernel calls)
    "rastrigin": lambda: hs.get_problem("rastrigin", dim=5),
    "rosenbrock": lambda: hs.get_problem("rosenbrock", dim=5),
    "fep-f2": lambda: hs.get_problem("fep-f2"),
    "fep-f4": lambda: hs.get_problem("fep-f4"),
    "cec2022-f1": lambda: hs.get_problem("cec2022-f1", dim=10),
    "bbob-f10": lambda: hs.get_problem("bbob-f10", dim=10),
}


def _rows(state, order):
    return {k: v.gather(1, order if v.ndim == 2 else order[..., None].expand_as(v)) for k, v in vars(state).items()}


def _matched(got, want):
    """got's rows in want's order, each matched to the nearest (x, eta) (survivors come out in
    union order, eager's in key order, and sorting both by f could swap two rows whose f differ
    by less than rounding); the matching must be one to one."""
    def points(s):
        return torch.cat([s.x / want.x.abs().max(), s.eta / want.eta.abs().max()], -1).double()

    order = torch.cdist(points(want), points(got)).argmin(-1)
    assert all(len(set(row.tolist())) == got.x.shape[1] for row in order)
    return _rows(got, order), vars(want)


@pytest.mark.parametrize("mutation", ["cauchy", "gaussian"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(PROBLEMS))
def test_one_native_generation_equals_the_eager_one_with_the_same_random_numbers(name, dtype, mutation):
    pop, q = 300, 4  # more than one block of parents and of union members, not a multiple of one
    algo = hs.FEP(pop_size=pop, q=q, mutation=mutation)
    runner = hs.Runner(PROBLEMS[name](), algo, runs=2, seed=5, device="cpu", dtype=dtype, engine="native")
    native = runner._kernels
    assert runner._engine_used() == "native" and bool(native.fitness) == (name != "bbob-f10")
    eps = torch.finfo(getattr(torch, dtype)).eps
    for k in range(3):
        before = native.prepare(runner.state)
        best_before = runner.best_f.clone()
        torch.manual_seed(100 + k)  # the numbers eager FEP.step draws, in its order
        x = before.x
        delta = torch.empty_like(x).cauchy_() if mutation == "cauchy" else torch.randn_like(x)
        common = torch.randn_like(x[..., :1])
        n_j = torch.randn_like(x)
        native.given_r = torch.stack([delta, n_j, common.expand_as(x)])
        native.given_opponents = torch.randint(0, 2 * pop, (2, 2 * pop * q))
        runner.step(1)
        torch.manual_seed(100 + k)
        expected = algo.step(runner._guarded, before)
        got, want = _matched(runner.state, expected)
        f_scale = float(expected.f.abs().max())
        for field in want:
            atol = 64 * eps * (f_scale if field == "f" else float(want[field].abs().max()))
            torch.testing.assert_close(got[field], want[field], rtol=64 * eps, atol=atol, msg=field)
        torch.testing.assert_close(runner.best_f, torch.minimum(best_before, expected.f.amin(-1)),
                                   rtol=64 * eps, atol=64 * eps * f_scale)
    assert runner.iteration == 3 and int(runner._it) == 3


@pytest.mark.parametrize("mutation", ["cauchy", "gaussian"])
def test_the_kernel_draws_cauchy_and_normal_numbers(mutation):
    runner = hs.Runner("sphere", hs.FEP(pop_size=300, mutation=mutation), dim=8, runs=2, seed=1, device="cpu",
                       engine="native")
    runner._kernels.drawn_r = torch.empty(3, *runner.state.x.shape, dtype=runner.state.x.dtype)
    runner.step(1)
    delta, n_j, n_i = runner._kernels.drawn_r.double()
    assert stats.kstest(delta.flatten().numpy(), "cauchy" if mutation == "cauchy" else "norm").pvalue > 1e-3
    assert stats.kstest(n_j.flatten().numpy(), "norm").pvalue > 1e-3  # 4,800 numbers
    assert stats.kstest(n_i[..., 0].flatten().numpy(), "norm").pvalue > 1e-3  # one per individual: 600
    assert torch.equal(n_i, n_i[..., :1].expand_as(n_i))

    def corr(a, b):
        return abs(float(torch.corrcoef(torch.stack([a.flatten(), b.flatten()]))[0, 1]))
    # |corr| < 0.1 is ~5 standard errors at 4,800 pairs (2,400 for neighbouring coordinates)
    assert corr(n_j, delta.atan()) < 0.1 and corr(n_j[..., 0::2], n_j[..., 1::2]) < 0.1
    assert corr(n_j[0], n_j[1]) < 0.1 and corr(n_i[..., 0], n_j[..., 0]) < 0.1


def test_survivors_are_the_mu_smallest_keys_with_ties_by_union_index():
    rng = np.random.default_rng(3)
    for q, mu in ((4, 37), (10, 300)):
        f = rng.integers(0, 20, 2 * mu).astype(np.float64)  # many ties in f, and in (wins, f)
        f[:3] = np.inf
        wins = rng.integers(0, q + 1, 2 * mu)
        keep = np.empty(mu, np.int64)
        best = cpu._survivors(f, wins, keep, q)
        want = sorted(range(2 * mu), key=lambda i: (q - wins[i], f[i], i))[:mu]
        assert keep.tolist() == sorted(want) and best == int(np.argmin(f))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_vectorised_elementary_functions_are_accurate(dtype):
    ftype = np.dtype(dtype).type

    @njit(error_model="numpy")
    def evaluate(z, a, v, u, w, out, pi_err):
        for i in range(z.shape[0]):
            out[0, i], out[1, i], out[2, i] = cpu_math.fast_exp(z[i]), cpu_math.fast_sin(a[i]), cpu_math.cos_turns(v[i])
            out[3, i], out[4, i] = cpu_math.box_muller(u[i], w[i], pi_err)
            out[5, i] = cpu_math.cauchy(u[i], pi_err)

    rng = np.random.default_rng(1)
    n = 100_000
    z, a, v = (rng.uniform(lo, hi, n).astype(ftype) for lo, hi in ((-20, 20), (0, 40), (-6, 6)))
    u, w = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    u[:3] = [0.0, 0.25, 0.5]
    out = np.empty((6, n), ftype)
    evaluate(z, a, v, u, w, out, cpu_math.pi_error(ftype))
    eps = np.finfo(ftype).eps
    z, a, v, u, w = (t.astype(np.float64) for t in (z, a, v, u, w))
    one_minus_u = (ftype(1) - u.astype(ftype)).astype(np.float64)  # rounded to the dtype, as the kernels do
    radius = np.sqrt(-2 * np.log(one_minus_u))
    assert np.max(np.abs(out[0] / np.exp(z) - 1)) < 4 * eps
    assert np.max(np.abs(out[1] - np.sin(a))) < 4 * eps * 40  # the argument's own rounding, times a
    assert np.max(np.abs(out[2] - np.cos(2 * np.pi * v))) < 4 * eps * 40
    assert np.max(np.abs(out[3] - radius * np.cos(2 * np.pi * w)) / np.maximum(radius, 1)) < 8 * eps
    assert np.max(np.abs(out[4] - radius * np.sin(2 * np.pi * w)) / np.maximum(radius, 1)) < 8 * eps
    t = (u.astype(ftype) - ftype(0.5)).astype(np.float64)  # (u - 1/2) in the dtype, then times its pi
    want = np.tan(t * float(ftype(math.pi)))
    # near the poles an ulp of the angle is worth more: about |tan| ulps
    assert (np.abs(out[5][3:] / want[3:] - 1) < 16 * eps * (1 + np.abs(want[3:]))).all()
    assert out[5][2] == 0 and np.isfinite(out[5][0]) and out[5][0] == np.float64(want[0]).astype(ftype)


def test_offspring_are_clipped_to_the_box_and_the_step_size_floor_holds():
    sphere = hs.get_problem("sphere", dim=3, bounds=(-1, 1))  # eta0 = 3 in a box of width 2
    runner = hs.Runner(sphere, hs.FEP(pop_size=40, eta_min=2.0), runs=2, seed=0, device="cpu", engine="native")
    runner.step(10)
    moved = runner._kernels.moved(runner.state)  # the last offspring
    for x in (runner.state.x, moved):
        assert ((x >= -1.0) & (x <= 1.0)).all()
    assert ((moved == -1.0) | (moved == 1.0)).any()  # some were clipped
    assert (runner.state.eta >= 2.0).all() and (runner.state.eta == 2.0).any()  # the floor held, and bit


def test_the_target_generation_is_recorded():
    r = hs.minimize("sphere", hs.FEP(pop_size=16), dim=2, target=1e-3, iters=500, runs=2, seed=3, device="cpu",
                    engine="native")
    assert r.stop_reason == "target"
    hit = (r.evals_to_target - 16) // 16  # the generation each run reached the target
    for run in range(2):
        assert int(hit[run]) == int(r.history_iter[r.history_f[run] <= 1e-3][0])
