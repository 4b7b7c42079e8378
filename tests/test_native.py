"""The native CPU kernels (`engine="native"`, Numba) against the algorithms' eager steps.

With the eager step's own random numbers fed in, one native iteration must give the same
state; with the kernels' Philox stream, runs must converge like eager runs, give the same
numbers on any number of threads, and (where an algorithm also has Triton kernels) the same
numbers as the fused CUDA path with the same key.
"""

import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest
import torch
from scipy import stats

import heuriscale as hs
from heuriscale.engine.kernels import cpu_common, cpu_objectives, cpu_random
from heuriscale.engine.kernels import why_not_native
from registered import with_kernels

ROOT = Path(__file__).parent.parent

PROBLEMS = {  # computed inside the kernel, but for bbob-f10 (evaluated by the problem)
    "sphere": lambda: hs.get_problem("sphere", dim=5),
    "euclidean": lambda: hs.get_problem("euclidean", dim=2),
    "rastrigin": lambda: hs.get_problem("rastrigin", dim=5),
    "ackley": lambda: hs.get_problem("ackley", dim=7),
    "griewank": lambda: hs.get_problem("griewank", dim=6),
    "rosenbrock": lambda: hs.get_problem("rosenbrock", dim=5),
    "schwefel-2.26": lambda: hs.get_problem("schwefel-2.26", dim=4),
    "hgbat": lambda: hs.get_problem("hgbat", dim=3),
    "bbob-f10": lambda: hs.get_problem("bbob-f10", dim=10),
    "spring": lambda: hs.get_problem("spring"),
    "otsu": lambda: hs.get_problem("otsu", levels=2, size=64),
}
ALGORITHMS = {  # population 300: more than one block of rows, and not a multiple of one
    "pso": lambda: hs.PSO(pop_size=300),
}
STEP_CASES = [(a, p) for a in ALGORITHMS for p in sorted(PROBLEMS)]


def _tolerances(runner, dtype):
    eps = torch.finfo(getattr(torch, dtype)).eps
    scale = float(torch.maximum(runner.problem.lower.abs(), runner.problem.upper.abs()).max())
    return eps, scale


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("algorithm,name", STEP_CASES)
def test_one_native_step_equals_the_eager_step_with_the_same_random_numbers(algorithm, name, dtype):
    algo = ALGORITHMS[algorithm]()
    runner = hs.Runner(PROBLEMS[name](), algo, runs=2, seed=5, device="cpu", dtype=dtype, engine="native")
    native = runner._kernels
    assert runner._engine_used() == "native"
    eps, scale = _tolerances(runner, dtype)
    for k in range(3):
        before = native.prepare(runner.state)  # a copy
        best_before = runner.best_f.clone()
        torch.manual_seed(100 + k)
        native.given_r = torch.stack([torch.rand_like(before.x), torch.rand_like(before.x)])
        runner.step(1)
        torch.manual_seed(100 + k)  # the eager step draws the same numbers
        expected = algo.step(runner._guarded, before)
        f_scale = float(expected.f.abs().max())
        for field, want in vars(expected).items():
            atol = 64 * eps * (f_scale if field.endswith("f") else scale)
            torch.testing.assert_close(getattr(runner.state, field), want, rtol=64 * eps, atol=atol, msg=field)
        torch.testing.assert_close(runner.best_f, torch.minimum(best_before, expected.f.amin(-1)),
                                   rtol=64 * eps, atol=64 * eps * f_scale)
    assert runner.iteration == 3 and int(runner._it) == 3


TWINS = {  # the kernels with a Triton twin (synchronous Firefly): (algorithm, dim)
    "pso": (lambda: hs.PSO(pop_size=37), 5),
    "prs": (lambda: hs.PRS(pop_size=300, max_iters=20), 3),
    "firefly": (lambda: hs.Firefly(pop_size=100, alpha=0.5, beta0=1.0, gamma=0.01), 5),
    "fep-cauchy": (lambda: hs.FEP(pop_size=37), 5),
    "fep-gaussian": (lambda: hs.FEP(pop_size=37, mutation="gaussian"), 5),
}


@pytest.mark.parametrize("twin", sorted(TWINS))
def test_native_and_fused_kernels_draw_the_same_numbers(twin):
    """Same seed, same key, same Philox counters: the CPU and CUDA fast paths compute the same
    iterations (here the Triton kernels run in its interpreter) up to rounding; FEP's
    survivors come out in the same order."""
    pytest.importorskip("triton")
    make, dim = TWINS[twin]
    runs = {e: hs.Runner("rastrigin", make(), dim=dim, runs=2, seed=9, device="cpu", dtype="float64", engine=e)
            for e in ("native", "fused")}
    for runner in runs.values():
        runner.step(3)
    native, fused = (vars(runs[e].state) for e in ("native", "fused"))
    for field in native:
        torch.testing.assert_close(native[field], fused[field], rtol=1e-9, atol=1e-9, msg=field)
    torch.testing.assert_close(runs["native"].best_f, runs["fused"].best_f, rtol=1e-9, atol=1e-12)
    assert int(runs["native"]._kernels.counter) == int(runs["fused"]._kernels.counter) == 3


def test_inline_objectives_equal_the_problems():
    from heuriscale.engine.kernels.cpu_objectives import INLINE
    from heuriscale.problems.classic import CLASSIC, ClassicProblem

    x = torch.rand(50, 7, dtype=torch.float64) * 4 - 2
    for name, spec in CLASSIC.items():
        problem = ClassicProblem(name, dim=7)
        assert cpu_objectives.inline_objective(problem)[0] == INLINE[spec.fn]
        got = torch.from_numpy(cpu_objectives.values(problem, x.numpy()))
        torch.testing.assert_close(got, spec.fn(x), rtol=1e-12, atol=1e-12, msg=name)


APPLICATIONS = {  # computed inside the kernels from the problem's data: the same float64 numbers
    "spring, penalty": lambda: hs.get_problem("spring"),
    "spring, deb": lambda: hs.get_problem("spring", handling="deb"),
    "spring, penalty 10": lambda: hs.get_problem("spring", weight=10.0),
    "otsu, 1 level": lambda: hs.get_problem("otsu"),
    "otsu, 3 levels": lambda: hs.get_problem("otsu", levels=3, size=96),
    "otsu, 6 levels": lambda: hs.get_problem("otsu", levels=6, size=96),
}


@pytest.mark.parametrize("name", sorted(APPLICATIONS))
def test_application_objectives_inline_equal_the_problems_exactly(name):
    problem = APPLICATIONS[name]()
    fid, data = cpu_objectives.inline_objective(problem)
    assert fid > 0
    g = torch.Generator().manual_seed(0)
    x = problem.lower + (problem.upper - problem.lower) * torch.rand(4000, problem.dim, generator=g, dtype=torch.float64)
    x[:5] = problem.lower  # the box's corners: Otsu's thresholds 0 and 255, the spring's tightest constraints
    x[5:10] = problem.upper
    got = torch.from_numpy(cpu_objectives.values(problem, x.numpy()))
    if problem.dim <= 3:
        assert torch.equal(got, problem.evaluate(x))
    else:  # torch sums more than four classes' terms in an order of its own
        torch.testing.assert_close(got, problem.evaluate(x), rtol=1e-13, atol=0.0)
    if name.startswith("spring"):  # both sides of the constraints were sampled
        feasible = (problem.inner.constraints(x) <= 0).all(-1)
        assert 0 < int(feasible.sum()) < len(x)


def test_only_the_exact_application_problems_are_inline():
    from heuriscale.problems.constraints import Constrained
    from heuriscale.problems.engineering import SpringDesign

    class Lighter(SpringDesign):  # a subclass may change the objective: evaluated by the problem
        def evaluate(self, x):
            return super().evaluate(x) / 2

    lighter = Constrained(Lighter())
    assert cpu_objectives.inline_objective(lighter)[0] == 0
    assert cpu_objectives.inline_objective(hs.get_problem("sphere", dim=3, shift=1))[0] == 0
    assert cpu_objectives.inline_objective(hs.TorchFunction(lambda x: x.sum(-1), 2, -1.0, 1.0))[0] == 0


KERNELS = {  # every native kernel (Firefly in both updates), for a population and a schedule's length
    "pso": lambda pop, iters: hs.PSO(pop_size=pop),
    "prs": lambda pop, iters: hs.PRS(pop_size=pop, max_iters=iters),
    "fep": lambda pop, iters: hs.FEP(pop_size=pop),
    "apo": lambda pop, iters: hs.APO(pop_size=pop, max_iters=iters),
    "firefly": lambda pop, iters: hs.Firefly(pop_size=pop, alpha=0.05),
    "firefly-sequential": lambda pop, iters: hs.Firefly(pop_size=pop, alpha=0.05, update="sequential"),
    "de": lambda pop, iters: hs.DE(pop_size=pop),
    "de-pbest": lambda pop, iters: hs.DE(pop_size=pop, strategy="current-to-pbest/1", repair="random"),
    "lshade": lambda pop, iters: hs.LSHADE(pop_size=pop, max_evals=pop * (iters + 1)),  # shrinking over the run
    "jso": lambda pop, iters: hs.JSO(pop_size=pop, max_evals=pop * (iters + 1)),
    "cmaes": lambda pop, iters: hs.CMAES(pop_size=pop),
    "cmaes-restarts": lambda pop, iters: hs.CMAES(pop_size=pop, restarts=True),
    "nsga2": lambda pop, iters: hs.NSGA2(pop_size=pop),  # one objective: an elitist GA (its own tests: test_native_nsga2.py)
}


#: NSGA-II's kernel runs these checks on one objective only, and its build (seconds to minutes on
#: a new machine, for each dtype and build) is its tests' cost: under -m slow; its fast default
#: test is test_native_nsga2.py's
KERNEL_CASES = [pytest.param(k, marks=pytest.mark.slow) if k == "nsga2" else k for k in sorted(KERNELS)]


def test_every_declared_cpu_kernel_is_tested_here():
    """KERNELS names each algorithm that declares CPU kernels (`kernels = Kernels(cpu=True)`),
    with its variants: a kernel added without its tests fails here."""
    assert {kernel.split("-")[0] for kernel in KERNELS} == set(with_kernels("cpu"))


@pytest.mark.parametrize("problem", ["spring, penalty", "otsu, 3 levels"])
@pytest.mark.parametrize("algorithm", KERNEL_CASES)
def test_every_kernel_computes_application_problems_inline_as_the_problem_would(algorithm, problem, monkeypatch):
    kw = dict(iters=30, runs=2, seed=3, device="cpu", dtype="float64", engine="native")
    assert cpu_objectives.inline_objective(APPLICATIONS[problem]())[0] > 0
    make = KERNELS[algorithm]
    pop = 12 if algorithm.startswith("firefly") else 40
    a = hs.minimize(APPLICATIONS[problem](), make(pop, 30), **kw)
    monkeypatch.setattr(cpu_common, "inline_objective", lambda p: (0, cpu_objectives.NO_DATA))
    b = hs.minimize(APPLICATIONS[problem](), make(pop, 30), **kw)  # evaluated between calls
    assert a.extra["engine"] == b.extra["engine"] == "native"
    assert torch.equal(a.best_f, b.best_f) and torch.equal(a.best_x, b.best_x)
    assert torch.equal(a.history_f, b.history_f) and a.iterations == 30


# -- every native kernel, the same checks -----------------------------------------------------
THREAD_PROBLEMS = {
    "inline": lambda: hs.get_problem("rastrigin", dim=3),
    "between-calls": lambda: hs.get_problem("rastrigin", dim=3, shift=0),  # evaluated by the problem
}


@pytest.mark.parametrize("problem", sorted(THREAD_PROBLEMS))
@pytest.mark.parametrize("kernel", KERNEL_CASES)
def test_results_do_not_depend_on_the_number_of_threads(kernel, problem, monkeypatch):
    pop = 20 if kernel == "firefly-sequential" else 300  # more than one block of rows, not a multiple of one
    kw = dict(iters=12, runs=3, seed=4, device="cpu", engine="native")
    results = []
    try:
        for threads, parallel_min in ((1, 0), (numba.config.NUMBA_NUM_THREADS, 0), (1, 10**12)):
            hs.set_cpu_threads(threads)  # one thread, all threads (parallel builds), the serial build
            monkeypatch.setattr(cpu_common, "PARALLEL_MIN", parallel_min)
            results.append(hs.minimize(THREAD_PROBLEMS[problem](), KERNELS[kernel](pop, 12), **kw))
    finally:
        hs.set_cpu_threads(None)
    for other in results[1:]:
        assert torch.equal(results[0].best_f, other.best_f) and torch.equal(results[0].best_x, other.best_x)
        assert torch.equal(results[0].history_f, other.history_f)
    assert results[0].extra["cpu_threads"] == 1 and results[1].extra["cpu_threads"] == numba.config.NUMBA_NUM_THREADS
    assert (results[0].history_f[:, -1] < results[0].history_f[:, 0]).any()


CONVERGE_PROBLEMS = {
    "rastrigin-4": lambda: hs.get_problem("rastrigin", dim=4),
    "rosenbrock-5": lambda: hs.get_problem("rosenbrock", dim=5),
    "shifted-sphere-10": lambda: hs.get_problem("sphere", dim=10, shift=1),  # evaluated between kernel calls
}
CONVERGE_SIZES = {"pso": (300, 100), "prs": (32, 100), "fep": (20, 100), "apo": (20, 100), "firefly": (16, 100),
                  "firefly-sequential": (8, 40), "de": (40, 100), "de-pbest": (40, 100),
                  "lshade": (40, 100), "jso": (40, 100), "cmaes": (10, 100),
                  "cmaes-restarts": (10, 100), "nsga2": (40, 100)}  # population, iterations
#: APO's kernel draws its own random numbers (it has no Triton twin): more problems for it.
CONVERGE = [pytest.param(k, "rastrigin-4", marks=pytest.mark.slow) if k == "nsga2" else (k, "rastrigin-4")
            for k in sorted(KERNELS)] + [("apo", "rosenbrock-5"), ("apo", "shifted-sphere-10")]


@pytest.mark.parametrize("kernel,problem", CONVERGE)
def test_native_runs_converge_like_eager_runs(kernel, problem):
    pop, iters = CONVERGE_SIZES[kernel]
    kw = dict(iters=iters, runs=30, device="cpu")
    eager = hs.minimize(CONVERGE_PROBLEMS[problem](), KERNELS[kernel](pop, iters), engine="eager", seed=0, **kw)
    native = hs.minimize(CONVERGE_PROBLEMS[problem](), KERNELS[kernel](pop, iters), engine="native", seed=1, **kw)
    assert native.extra["engine"] == "native" and native.iterations == iters
    assert torch.isfinite(native.best_f).all()
    assert stats.mannwhitneyu(eager.best_f.numpy(), native.best_f.numpy()).pvalue > 1e-3
    assert (native.history_f[:, 1:] <= native.history_f[:, :-1]).all()
    assert torch.equal(native.best_f, native.history_f.amin(1))  # best-so-far over every iteration
    assert native.best_f.median() < native.history_f[:, 0].median()  # and they improve


@pytest.mark.parametrize("kernel", KERNEL_CASES)
def test_problems_evaluated_between_kernel_calls_give_the_inline_numbers(kernel):
    """Sphere: the kernels' inline sum is torch's (in float64, up to four terms in its order),
    so even PRS, whose runs amplify rounding through the mean deviation, must agree."""
    kw = dict(iters=25, runs=2, seed=3, device="cpu", dtype="float64", engine="native")
    pop = 12 if kernel.startswith("firefly") else 30
    sphere = hs.get_problem("sphere", dim=3, bounds=(-5, 5))
    inline = hs.minimize(sphere, KERNELS[kernel](pop, 25), **kw)
    by_torch = hs.minimize(hs.TorchFunction(sphere.evaluate, 3, -5.0, 5.0), KERNELS[kernel](pop, 25), **kw)
    on_host = hs.minimize(hs.NumpyFunction(lambda X: sphere.evaluate(torch.from_numpy(X)).numpy(), 3, -5.0, 5.0),
                          KERNELS[kernel](pop, 25), **kw)
    for other in (by_torch, on_host):
        torch.testing.assert_close(inline.best_f, other.best_f, rtol=1e-9, atol=1e-12)
        torch.testing.assert_close(inline.history_f, other.history_f, rtol=1e-9, atol=1e-12)
    assert (inline.history_f[:, -1] < inline.history_f[:, 0]).any()


def _counting(nans: list):
    """Half-NaN objectives (x_0 > 0: NaN, the sphere elsewhere) that count the NaN they return."""

    def rows(X):
        f = np.where(X[:, 0] > 0, np.nan, (X * X).sum(1))
        nans.append(int(np.isnan(f).sum()))
        return f

    def tensors(x):
        f = torch.where(x[..., 0] > 0, torch.nan, (x * x).sum(-1))
        nans.append(int(f.isnan().sum()))
        return f

    def point(x):
        nans.append(int(x[0] > 0))
        return float("nan") if x[0] > 0 else float((x * x).sum())

    return {"torch": hs.TorchFunction(tensors, 3, -1.0, 1.0), "numpy": hs.NumpyFunction(rows, 3, -1.0, 1.0),
            "scalar": hs.ScalarFunction(point, 3, -1.0, 1.0)}


@pytest.mark.parametrize("objective", ["torch", "numpy", "scalar"])
@pytest.mark.parametrize("kernel", KERNEL_CASES)
def test_nan_fitness_is_counted_and_never_best_and_bounds_hold(kernel, objective):
    """A user's objective called between kernel calls, each way it can come: its NaN values are
    counted in the kernel (the engine's guard, done there), all of them, and never a best."""
    nans = []
    runner = hs.Runner(_counting(nans)[objective], KERNELS[kernel](16, 10), runs=2, seed=0, device="cpu",
                       engine="native")
    runner.step(10)
    r = runner.result()
    assert (r.nan_evals > 0).all() and torch.isfinite(r.best_f).all()
    assert int(r.nan_evals.sum()) == sum(nans)
    assert (r.best_x[:, 0] <= 0).all()
    x = runner.state.x
    assert ((x >= -1.0) & (x <= 1.0)).all() and not x.isnan().any()


@pytest.mark.parametrize("kernel", KERNEL_CASES)
def test_steps_in_one_call_equal_steps_one_by_one_and_resume_from_checkpoints(kernel, tmp_path):
    """Many steps in one kernel call (two-buffer kernels ending in the other buffer after an
    odd number, PRS carrying its mean deviation) go exactly as single steps, and as a run
    resumed halfway from a checkpoint."""
    pop = {"prs": 40, "firefly": 30, "firefly-sequential": 10}.get(kernel, 20)
    kw = dict(dim=3, runs=2, seed=6, device="cpu", engine="native")
    one_call = hs.Runner("rastrigin", KERNELS[kernel](pop, 15), **kw)
    one_call.step(15)
    by_one = hs.Runner("rastrigin", KERNELS[kernel](pop, 15), **kw)
    for _ in range(15):
        by_one.step(1)
    for field, value in vars(one_call.state).items():
        assert torch.equal(value, getattr(by_one.state, field)), field
    assert torch.equal(one_call.best_f, by_one.best_f)
    assert torch.equal(one_call.result().history_f, by_one.result().history_f)
    path = tmp_path / "run.pt"
    half = hs.Runner("rastrigin", KERNELS[kernel](pop, 15), **kw)
    half.step(7)
    torch.save(half.state_dict(), path)
    whole = hs.minimize("rastrigin", KERNELS[kernel](pop, 15), iters=15, **kw)
    resumed = hs.minimize("rastrigin", KERNELS[kernel](pop, 15), iters=15, resume=path, **kw)
    assert torch.equal(whole.best_f, resumed.best_f) and torch.equal(whole.best_x, resumed.best_x)
    assert torch.equal(whole.history_f, resumed.history_f) and torch.equal(whole.best_f, one_call.best_f)


BOUNDS_JOB = """
import heuriscale as hs
from test_native import KERNELS  # tests/ is on PYTHONPATH (a package named tests may be installed)
for kernel in ("apo", "fep", "firefly", "firefly-sequential", "de", "de-pbest", "lshade", "jso", "cmaes",
               "cmaes-restarts"):  # PSO and PRS index by loop counters only
    make, pop = KERNELS[kernel], 10 if kernel.startswith("firefly") else 20
    for dim in (4, 130) if kernel == "apo" else (4,):  # APO: rows shorter and longer than DENSE_DIM
        # runs enough for every operator to follow every other (a reproduction after a foraging
        # move read stale pairs once), few enough coordinates for the serial builds only
        runs = 2 if dim > 4 else 16 if kernel.startswith("firefly") else 30
        hs.minimize("rastrigin", make(pop, 100), dim=dim, iters=100, runs=runs, seed=1, device="cpu", engine="native")
"""


@pytest.mark.slow  # every kernel built again with bounds checks: minutes on 2 cores
def test_kernels_index_only_inside_their_arrays(tmp_path):
    """The kernels that index by drawn numbers (masks, pairs, opponents, survivors) built with
    Numba's bounds checks, in a cache of their own: an index out of an array raises
    IndexError instead of reading or writing memory."""
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": f"{ROOT / 'src'}:{ROOT}:{ROOT / 'tests'}"}
    done = subprocess.run([sys.executable, "-c", BOUNDS_JOB], capture_output=True, text=True, env=env, timeout=600,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]


def test_the_target_iteration_is_recorded():
    kw = dict(dim=2, runs=2, seed=3, device="cpu", engine="native")
    r = hs.minimize("sphere", hs.PSO(pop_size=16), target=1e-2, iters=200, **kw)
    assert r.stop_reason == "target"
    hit = (r.evals_to_target - 16) // 16
    for run in range(2):
        reached = r.history_iter[r.history_f[run] <= 1e-2][0]
        assert int(hit[run]) == int(reached)


def test_auto_picks_the_native_kernels_on_the_cpu_and_says_why_not():
    r = hs.minimize("sphere", "pso", dim=5, iters=20_000, runs=2, seed=1, device="cpu")
    assert r.extra["engine"] == "native", r.extra["engine_reason"]
    assert (r.best_f < 1e-6).all()
    sphere, cpu = hs.get_problem("sphere", dim=3), torch.device("cpu")
    assert why_not_native(hs.PSO(), sphere, cpu) is None
    assert "on the CPU" in why_not_native(hs.PSO(), sphere, torch.device("meta"))
    from heuriscale.engine.auto import check_engine

    with pytest.raises(ValueError, match="engine 'native' is not available: native kernels run on the CPU"):
        check_engine("native", torch.device("meta"), sphere, hs.PSO())


def test_cli_cpu_threads_and_bad_values():
    from typer.testing import CliRunner

    from heuriscale.cli import app

    try:
        res = CliRunner().invoke(app, ["run", "pso", "--problem", "sphere", "--dim", "2", "--iters", "5000",
                                       "--device", "cpu", "--cpu-threads", "1", "--engine", "native", "-q"])
        assert res.exit_code == 0, res.output
        assert "native engine, 1 thread" in res.output and numba.get_num_threads() == 1
        for bad in ("0", str(numba.config.NUMBA_NUM_THREADS + 1)):
            res = CliRunner().invoke(app, ["run", "pso", "--device", "cpu", "--cpu-threads", bad, "-q"])
            assert res.exit_code == 2 and "cpu threads" in res.output, res.output
    finally:
        hs.set_cpu_threads(None)


def test_uniform_matches_tritons_int64_definition():
    """`native.uniform` works in int32 (for SIMD); tl.random.uint_to_uniform_float's rule,
    written out in int64 here: the word read as a signed int32 x, -x - 1 where x < 0, times
    2^-31. Edge words (signs, float32 rounding steps) and a million random ones."""
    @numba.njit
    def convert(words, out):
        for i in range(words.shape[0]):
            out[i] = cpu_random.uniform(words[i])

    edges = [0, 1, 2**24 - 1, 2**24, 2**24 + 1, 2**31 - 129, 2**31 - 128, 2**31 - 65, 2**31 - 64, 2**31 - 1,
             2**31, 2**31 + 1, 2**32 - 2**24 - 1, 2**32 - 129, 2**32 - 2, 2**32 - 1]
    words = np.concatenate([np.array(edges, np.uint64),
                            np.random.default_rng(0).integers(0, 2**32, 10**6, dtype=np.uint64)])
    x = words.astype(np.int64)
    x = np.where(x >= 2**31, x - 2**32, x)
    x = np.where(x < 0, -x - 1, x)
    expected = x.astype(np.float32) * np.float32(4.6566127342e-10)
    got = np.empty(words.shape[0], np.float32)
    convert(words, got)
    assert np.array_equal(got, expected)
    assert got.min() >= 0 and got.max() < 1
