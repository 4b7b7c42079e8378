"""The native CPU kernels of PRS and of both Firefly updates against their eager steps.

Same checks as test_native.py's for PSO: one iteration with the eager step's own random
numbers fed in equals the eager step; with the kernels' Philox stream, runs converge like
eager runs, give the same numbers on any number of threads and in any chunking of the steps,
and (PRS, synchronous Firefly) the same numbers as the fused CUDA kernels with the same key.
"""

import math

import numba
import pytest
import torch
from scipy import stats

import heuriscale as hs
from heuriscale.algorithms.prs import to_box
from heuriscale.engine.fused import native as native_module

PROBLEMS = {  # the first ones are computed inside the kernels, the last two by the problem
    "sphere": lambda: hs.get_problem("sphere", dim=5),
    "rastrigin": lambda: hs.get_problem("rastrigin", dim=5),
    "rastrigin-1d": lambda: hs.get_problem("rastrigin", dim=1),
    "rosenbrock": lambda: hs.get_problem("rosenbrock", dim=5),
    "ackley": lambda: hs.get_problem("ackley", dim=7),
    "griewank": lambda: hs.get_problem("griewank", dim=6),
    "spring": lambda: hs.get_problem("spring"),
    "cec2022-f1": lambda: hs.get_problem("cec2022-f1", dim=10),
}
ALGORITHMS = {
    # 300 rays: more than one block of rows (256), and not a multiple of one
    "prs": lambda: hs.PRS(pop_size=300, max_iters=20),
    # Firefly's attraction sums N terms, so eager's rounding grows with N: 37 as in test_fused
    "firefly": lambda: hs.Firefly(pop_size=37, alpha=0.5, beta0=1.0, gamma=0.01),
    "firefly-sequential": lambda: hs.Firefly(pop_size=12, alpha=0.5, beta0=1.0, gamma=0.01, update="sequential"),
}
STEP_CASES = [(a, p) for a in ALGORITHMS for p in PROBLEMS
              if a == "prs" or p not in ("ackley", "griewank", "rastrigin-1d")]  # PRS: every coordinate path


def _eager_numbers(algorithm, x):
    """The U[0, 1) numbers the eager step draws first, in its order (manual_seed set)."""
    if getattr(algorithm, "update", None) == "sequential":  # one number per pair (i, j)
        runs, n, dim = x.shape
        return torch.rand(runs, n, n, dim, dtype=x.dtype)[None]
    return torch.rand_like(x)[None]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("algorithm,name", STEP_CASES)
def test_one_native_step_equals_the_eager_step_with_the_same_random_numbers(algorithm, name, dtype):
    algo = ALGORITHMS[algorithm]()
    runner = hs.Runner(PROBLEMS[name](), algo, runs=2, seed=5, device="cpu", dtype=dtype, engine="native")
    native = runner._fused
    assert runner._engine_used() == "native"
    eps = torch.finfo(getattr(torch, dtype)).eps
    lower, upper = runner._guarded.lower, runner._guarded.upper
    scale = float(torch.maximum(lower.abs(), upper.abs()).max())
    # In float32, PRS's arcsine (11) is ill-conditioned near +-90 degrees, where an ulp of its
    # argument moves the angle by many ulps: there the kernel's float32 polynomials and eager's
    # float32 libm legitimately differ. So float32 angles are compared by their sines (the
    # arcsine's argument), positions as the box image of the kernel's own angles, and values
    # as the problem's at the kernel's own positions.
    by_sines = algorithm == "prs" and dtype == "float32"
    for k in range(3):
        before = native.prepare(runner.state)  # a copy
        best_before = runner.best_f.clone()
        torch.manual_seed(100 + k)
        native.given_r = _eager_numbers(algo, before.x)
        runner.step(1)
        torch.manual_seed(100 + k)  # the eager step draws the same numbers
        expected = algo.step(runner._guarded, before)
        got = vars(runner.state)
        f_scale = float(expected.f.abs().max())
        for field, want in vars(expected).items():
            atol = 64 * eps * (f_scale if field == "f" else scale)
            if by_sines and field == "theta":
                got_field, want, atol = torch.sin(torch.deg2rad(got[field])), torch.sin(torch.deg2rad(want)), 64 * eps
            elif by_sines and field == "x":
                got_field, want = got["x"], to_box(got["theta"], lower, upper)
            elif by_sines and field == "f":
                got_field, want = got["f"], runner._guarded.evaluate(got["x"])
            else:
                got_field = got[field]
            torch.testing.assert_close(got_field, want, rtol=64 * eps, atol=atol, msg=field)
        best = torch.minimum(best_before, got["f"].amin(-1) if by_sines else expected.f.amin(-1))
        torch.testing.assert_close(runner.best_f, best, rtol=64 * eps, atol=64 * eps * f_scale)
    assert runner.iteration == 3 and int(runner._it) == 3


@pytest.mark.parametrize("algorithm,dim,pop", [("prs", 3, 300), ("firefly", 5, 100)])
def test_native_and_fused_kernels_draw_the_same_numbers(algorithm, dim, pop):
    """Same seed, same key, same Philox counters: the CPU and CUDA fast paths compute the same
    iterations (here the Triton kernels run in its interpreter) up to rounding."""
    pytest.importorskip("triton")
    make = {"prs": lambda: hs.PRS(pop_size=pop, max_iters=20),
            "firefly": lambda: hs.Firefly(pop_size=pop, alpha=0.5, beta0=1.0, gamma=0.01)}[algorithm]
    runs = {e: hs.Runner("rastrigin", make(), dim=dim, runs=2, seed=9, device="cpu", dtype="float64", engine=e)
            for e in ("native", "fused")}
    for runner in runs.values():
        runner.step(3)
    native, fused = (vars(runs[e].state) for e in ("native", "fused"))
    for field in native:
        torch.testing.assert_close(native[field], fused[field], rtol=1e-9, atol=1e-9, msg=field)
    torch.testing.assert_close(runs["native"].best_f, runs["fused"].best_f, rtol=1e-9, atol=1e-12)


THREADS_CASES = {  # more than one block per run, so that blocks go to different threads
    "prs": lambda: hs.PRS(pop_size=300, max_iters=40),
    "firefly": lambda: hs.Firefly(pop_size=300, alpha=0.05),
    "firefly-sequential": lambda: hs.Firefly(pop_size=20, alpha=0.05, update="sequential"),
}


@pytest.mark.parametrize("algorithm", sorted(THREADS_CASES))
def test_results_do_not_depend_on_the_number_of_threads(algorithm, monkeypatch):
    make = THREADS_CASES[algorithm]
    kw = dict(dim=3, iters=5, runs=3, seed=4, device="cpu", engine="native")
    results = []
    before = numba.get_num_threads()
    try:
        for threads, parallel_min in ((1, 0), (numba.config.NUMBA_NUM_THREADS, 0), (1, 10**12)):
            numba.set_num_threads(threads)  # one thread, all threads (parallel builds), the serial build
            monkeypatch.setattr(native_module, "PARALLEL_MIN", parallel_min)
            results.append(hs.minimize("rastrigin", make(), **kw))
    finally:
        numba.set_num_threads(before)
    for other in results[1:]:
        assert torch.equal(results[0].best_f, other.best_f) and torch.equal(results[0].best_x, other.best_x)
        assert torch.equal(results[0].history_f, other.history_f)
    assert results[0].extra["cpu_threads"] == 1 and results[1].extra["cpu_threads"] == numba.config.NUMBA_NUM_THREADS


@pytest.mark.parametrize("algorithm", sorted(THREADS_CASES))
def test_steps_in_one_call_equal_steps_one_by_one_and_resume_from_checkpoints(algorithm, tmp_path):
    """Many steps in one kernel call (synchronous Firefly alternating its two buffers, PRS
    carrying its mean deviation) go exactly as single steps, and as a run resumed halfway."""
    make = {"prs": lambda: hs.PRS(pop_size=40, max_iters=40), "firefly": lambda: hs.Firefly(pop_size=30),
            "firefly-sequential": lambda: hs.Firefly(pop_size=10, update="sequential")}[algorithm]
    kw = dict(dim=3, runs=2, seed=6, device="cpu", engine="native")
    one_call = hs.Runner("rastrigin", make(), **kw)
    one_call.step(15)
    by_one = hs.Runner("rastrigin", make(), **kw)
    for _ in range(15):
        by_one.step(1)
    for field, value in vars(one_call.state).items():
        assert torch.equal(value, getattr(by_one.state, field)), field
    assert torch.equal(one_call.best_f, by_one.best_f)
    assert torch.equal(one_call.result().history_f, by_one.result().history_f)
    path = tmp_path / "run.pt"
    half = hs.Runner("rastrigin", make(), **kw)
    half.step(7)
    torch.save(half.state_dict(), path)
    whole = hs.minimize("rastrigin", make(), iters=15, **kw)
    resumed = hs.minimize("rastrigin", make(), iters=15, resume=path, **kw)
    assert torch.equal(whole.best_f, resumed.best_f) and torch.equal(whole.history_f, resumed.history_f)
    assert torch.equal(whole.best_f, one_call.best_f)


CONVERGE = {
    "prs": (lambda: hs.PRS(pop_size=32), 100),
    "firefly": (lambda: hs.Firefly(pop_size=16, alpha=0.05), 100),
    "firefly-sequential": (lambda: hs.Firefly(pop_size=8, alpha=0.05, update="sequential"), 40),
}


@pytest.mark.parametrize("algorithm", sorted(CONVERGE))
def test_native_runs_converge_like_eager_runs(algorithm):
    make, iters = CONVERGE[algorithm]
    kw = dict(dim=4, iters=iters, runs=30, device="cpu")
    eager = hs.minimize("rastrigin", make(), engine="eager", seed=0, **kw)
    native = hs.minimize("rastrigin", make(), engine="native", seed=1, **kw)
    assert native.extra["engine"] == "native" and native.iterations == iters
    assert torch.isfinite(native.best_f).all()
    assert stats.mannwhitneyu(eager.best_f.numpy(), native.best_f.numpy()).pvalue > 1e-3
    assert (native.history_f[:, 1:] <= native.history_f[:, :-1]).all()
    assert torch.equal(native.best_f, native.history_f.amin(1))  # best-so-far over every iteration
    assert native.best_f.median() < native.history_f[:, 0].median()  # and they improve


@pytest.mark.parametrize("algorithm", sorted(THREADS_CASES))
def test_nan_fitness_is_counted_and_never_best_and_bounds_hold(algorithm):
    def half_nan(x):
        return torch.where(x[..., 0] > 0, torch.nan, (x * x).sum(-1))

    problem = hs.TorchFunction(half_nan, 3, -1.0, 1.0)
    make = {"prs": lambda: hs.PRS(pop_size=16, max_iters=10), "firefly": lambda: hs.Firefly(pop_size=16),
            "firefly-sequential": lambda: hs.Firefly(pop_size=16, update="sequential")}[algorithm]
    runner = hs.Runner(problem, make(), runs=2, seed=0, device="cpu", engine="native")
    runner.step(10)
    r = runner.result()
    assert (r.nan_evals > 0).all() and torch.isfinite(r.best_f).all()
    assert (r.best_x[:, 0] <= 0).all()
    x = runner.state.x
    assert ((x >= -1.0) & (x <= 1.0)).all() and not x.isnan().any()


def test_prs_polynomials_equal_libm():
    """The kernels' sin (up to the angles they reduce exactly), cos(2 pi v) and arcsine, in
    each dtype, against libm in float64."""
    from heuriscale.engine.fused.prs import cpu

    generator = torch.Generator().manual_seed(0)
    for name in ("float64", "float32"):
        pi, limit, sin_c, asin_c = cpu._MATH[name]
        dtype = getattr(torch, name)
        eps = torch.finfo(dtype).eps
        near = torch.linspace(-1e4, 1e4, 4001, dtype=torch.float64)
        far = (torch.rand(2000, dtype=torch.float64, generator=generator) * 2 - 1) * limit
        multiples = torch.round(far[:500] / math.pi) * math.pi  # where x - k pi cancels most
        x = torch.cat([near, far, multiples]).to(dtype).numpy()
        errors = [abs(float(cpu._sin(v, pi, sin_c)) - math.sin(float(v))) for v in x]
        assert max(errors) < 4 * eps
        turns = x[:4001:7] / 1000  # libm's reference rounds 2 pi v first: an error of 2 pi |v| eps
        cosines = [float(cpu._cos_turns(v, sin_c)) for v in turns]
        assert all(abs(c - math.cos(2 * math.pi * float(v))) < 4 * eps * (1 + 2 * math.pi * abs(float(v)))
                   for c, v in zip(cosines, turns))
        a = torch.linspace(-1, 1, 2001, dtype=dtype).numpy()
        errors = [abs(float(cpu._asin(v, asin_c)) - math.asin(float(v))) / max(abs(math.asin(float(v))), 1e-300)
                  for v in a]
        assert max(errors) < 4 * eps
