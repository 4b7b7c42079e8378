"""The fused Triton kernels (`engine="fused"`) against the algorithms' eager steps, the reference.

With the eager step's own random numbers fed in, one fused iteration must give the same
state; with the kernels' Philox stream, runs must converge like eager runs. On a machine
without CUDA these run the kernels in Triton's interpreter (see conftest); with CUDA they
run compiled under `pytest -m gpu`.
"""

import pytest
import torch
from scipy import stats

import heuriscale as hs
from heuriscale.algorithms.firefly import attraction
from heuriscale.engine.kernels import why_not_fused
from registered import each, with_kernels

PROBLEMS = {  # the first five are computed inside the kernel, the others by the problem
    "sphere": lambda: hs.get_problem("sphere", dim=5),
    "euclidean": lambda: hs.get_problem("euclidean", dim=2),
    "rastrigin": lambda: hs.get_problem("rastrigin", dim=5),
    "ackley": lambda: hs.get_problem("ackley", dim=7),
    "griewank": lambda: hs.get_problem("griewank", dim=6),
    "rosenbrock": lambda: hs.get_problem("rosenbrock", dim=5),
    "spring": lambda: hs.get_problem("spring"),
}
ALGORITHMS = {  # population 37: not a multiple of the kernels' blocks, so masked tails run too
    "pso": lambda: hs.PSO(pop_size=37),
    "firefly": lambda: hs.Firefly(pop_size=37, alpha=0.5, beta0=1.0, gamma=0.01),
    "prs": lambda: hs.PRS(pop_size=37, max_iters=20),
}
CASES = [(a, p) for a in ALGORITHMS for p in sorted(PROBLEMS) if a != "firefly" or p in ("sphere", "rastrigin", "rosenbrock")]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("algorithm,name", CASES)
def test_one_fused_step_equals_the_eager_step_with_the_same_random_numbers(algorithm, name, dtype, fused_device):
    algo = ALGORITHMS[algorithm]()
    runner = hs.Runner(PROBLEMS[name](), algo, runs=2, seed=5, device=fused_device, dtype=dtype, engine="fused")
    fused = runner._kernels
    assert runner._engine_used() == "fused"
    # Kernel and eager round differently (fused multiply-adds, sums in another order): allow
    # a few ulps of the box's scale for positions and of the objective's for values.
    eps = torch.finfo(getattr(torch, dtype)).eps
    scale = float(torch.maximum(runner.problem.lower.abs(), runner.problem.upper.abs()).max())
    for k in range(3):
        before = fused.prepare(runner.state)  # a copy
        best_before = runner.best_f.clone()
        torch.manual_seed(100 + k)
        fused.given_r = torch.stack([torch.rand_like(before.x), torch.rand_like(before.x)])
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


# Interpreted on the CPU these take 80 s together: `-m slow` there. The default run still ties
# the fused kernels to eager: test_native.py checks that they compute the native kernels'
# numbers, and that the native runs converge like eager ones.
INTERPRETED_IS_SLOW = [] if torch.cuda.is_available() else [pytest.mark.slow]


@pytest.mark.parametrize(("tiles", "dtype"), [((64, 64), "float64")] + [
    pytest.param(tiles, dtype, marks=INTERPRETED_IS_SLOW)
    for tiles, dtype in [((64, 64), "float32"), ((128, 32), "float64"), ((128, 32), "float32")]])
def test_fused_firefly_over_many_tiles_and_chunks_with_ties_equals_the_eager_step(tiles, dtype, fused_device):
    """The kernels visit the population in order of f, a tile of receivers against chunks of
    the attractor tiles before it, and scatter each firefly back to its row: over several
    tiles (300 fireflies on CUDA, 130 interpreted; tiles of 64 or 128 receivers and 64 or 32
    attractors, chunks of 64) and with f on a few levels (many ties, across tiles too: a tie
    must not attract), a step is the eager one."""
    cuda = fused_device == "cuda"
    pop = 300 if cuda else 130
    algo = hs.Firefly(pop_size=pop, alpha=0.5, beta0=0.2, gamma=0.01)
    runner = hs.Runner(PROBLEMS["rastrigin"](), algo, runs=2 if cuda else 1, seed=5, device=fused_device,
                       dtype=dtype, engine="fused")
    fused = runner._kernels
    fused.tiles(block_p=tiles[0], block_j=tiles[1], min_chunk=64)
    assert fused.slots > fused.blocks  # receiver tiles of several chunks
    eps = torch.finfo(getattr(torch, dtype)).eps
    for k in range(2 if cuda else 1):
        runner.state.f = (runner.state.f / 8).floor() * 8
        before, best_before = fused.prepare(runner.state), runner.best_f.clone()
        assert (before.f[:, :, None] == before.f[:, None, :]).sum() > pop * 10
        torch.manual_seed(100 + k)
        fused.given_r = torch.stack([torch.rand_like(before.x), torch.rand_like(before.x)])
        runner.step(1)
        torch.manual_seed(100 + k)
        expected = algo.step(runner._guarded, before)
        torch.testing.assert_close(runner.state.x, expected.x, rtol=0, atol=256 * eps * 5.12)
        torch.testing.assert_close(runner.state.f, expected.f, rtol=256 * eps, atol=256 * eps)
        torch.testing.assert_close(runner.best_f, torch.minimum(best_before, expected.f.amin(-1)), rtol=256 * eps,
                                   atol=256 * eps)


@pytest.mark.parametrize("float64_sums", [False, True])
def test_fused_firefly_positions_are_taken_inside_the_swarm_not_at_the_brightest(float64_sums, fused_device):
    """The kernels subtract a centre from every position before r^2 = |x_i|^2 + |x_j|^2 -
    2 x_i.x_j and sum_j e_ij x_j - (sum_j e_ij) x_i, which cancel what the centre leaves.
    With the brightest firefly 226 away from a swarm of spread 1, a float32 step lands within
    16 ulps of the largest move from float64 when interpreted (measured 2e-7 to 3e-7; the
    brightest as centre: 1.1e-5 to 1.4e-5); compiled, the TF32 products get 64."""
    n, dim = 256, 8
    algo = hs.Firefly(pop_size=n, gamma=100.0)
    runner = hs.Runner(hs.get_problem("sphere", dim=dim), algo, runs=1, seed=0, device=fused_device, engine="fused")
    g = torch.Generator(device=fused_device).manual_seed(3)
    x = 20 + torch.randn(1, n, dim, device=fused_device, generator=g)
    x[0, 0] = -60.0
    f = torch.rand(1, n, device=fused_device, generator=g)
    f[0, 0] = -1.0  # the brightest, far from the others
    u = torch.rand(2, 1, n, dim, device=fused_device, generator=g)
    runner._kernels.given_r = u
    runner._kernels.float64_sums = float64_sums  # (the option that adds the tiles' sums in float64)
    runner.state = runner._kernels.prepare(hs.algorithms.base.State(x=x.clone(), f=f))
    runner.step(1)
    alpha, beta0, gamma = (float(c) for c in algo.coefficients(runner._guarded))
    x64 = x.double()
    pull, has_brighter = attraction(x64, f.double(), beta0, gamma, n)
    expected = torch.clamp(x64 + pull + torch.where(has_brighter[..., None], alpha * (2.0 * u[0].double() - 1.0), 0.0),
                           runner.problem.lower.to(x64), runner.problem.upper.to(x64))
    largest_move = float((expected - x64).abs().max())
    ulps = 64 if fused_device == "cuda" else 16
    error = float((runner.state.x.double() - expected).abs().max()) / largest_move
    assert error < ulps * torch.finfo(torch.float32).eps, error


def _sorted_by_f(state):
    """A population's rows in order of f (FEP's survivors come out in another order than eager's)."""
    order = state.f.argsort(-1)
    return {k: v.gather(1, order if v.ndim == 2 else order[..., None].expand_as(v)) for k, v in vars(state).items()}


@pytest.mark.parametrize("mutation", ["cauchy", "gaussian"])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", ["rastrigin", "rosenbrock"])
def test_one_fused_fep_generation_equals_the_eager_one_with_the_same_random_numbers(name, dtype, mutation,
                                                                                     fused_device):
    algo = hs.FEP(pop_size=37, q=4, mutation=mutation)
    problem = hs.get_problem(name, dim=5)
    runner = hs.Runner(problem, algo, runs=2, seed=5, device=fused_device, dtype=dtype, engine="fused")
    fused = runner._kernels
    eps = torch.finfo(getattr(torch, dtype)).eps
    for k in range(3):
        before = fused.prepare(runner.state)
        torch.manual_seed(100 + k)  # the numbers eager FEP.step draws, in its order
        x = before.x
        delta = torch.empty_like(x).cauchy_() if mutation == "cauchy" else torch.randn_like(x)
        common = torch.randn_like(x[..., :1])
        n_j = torch.randn_like(x)
        opponents = torch.randint(0, 2 * 37, (2, 2 * 37 * 4), device=fused_device)
        fused.given_r = torch.stack([delta, n_j, common.expand_as(x)])
        fused.given_opponents = opponents
        runner.step(1)
        torch.manual_seed(100 + k)
        expected = algo.step(runner._guarded, before)
        got, want = _sorted_by_f(runner.state), _sorted_by_f(expected)
        f_scale = float(expected.f.abs().max())
        for field in want:
            atol = 64 * eps * (f_scale if field == "f" else float(want[field].abs().max()))
            torch.testing.assert_close(got[field], want[field], rtol=64 * eps, atol=atol, msg=field)
    assert runner.iteration == 3 and torch.equal(runner.best_f, runner.state.f.amin(-1))


def test_fep_kernels_draw_cauchy_and_normal_numbers(fused_device):
    runner = hs.Runner("sphere", hs.FEP(pop_size=300), dim=8, runs=2, seed=1, device=fused_device, engine="fused")
    runner._kernels.drawn_r = torch.empty(3, *runner.state.x.shape, device=fused_device)
    runner.step(1)
    delta, n_j, n_i = runner._kernels.drawn_r.cpu().double()
    assert stats.kstest(delta.flatten().numpy(), "cauchy").pvalue > 1e-3  # 4,800 numbers
    assert stats.kstest(n_j.flatten().numpy(), "norm").pvalue > 1e-3
    assert stats.kstest(n_i[..., 0].flatten().numpy(), "norm").pvalue > 1e-3  # one per individual: 600
    assert torch.equal(n_i, n_i[..., :1].expand_as(n_i))
    assert abs(float(torch.corrcoef(torch.stack([n_j.flatten(), delta.flatten().atan()]))[0, 1])) < 0.1


@pytest.mark.parametrize(("dtype", "q"), [("float32", 10), ("float64", 3)])
def test_fep_survivors_over_many_programs_are_the_native_kernels_in_its_order(dtype, q, fused_device):
    """The selection spread over 12 programs a run (tiles of 8 union members) keeps the
    native kernel's survivors in its order: f on a few integers, so that many keys tie at
    the threshold and the first ones by index must be taken across programs."""
    from heuriscale.engine.kernels.fep.cpu import _survivors

    pop, runs = 45, 2
    runner = hs.Runner("sphere", hs.FEP(pop_size=pop, q=q), dim=3, runs=runs, seed=3, device=fused_device,
                       dtype=dtype, engine="fused")
    fused = runner._kernels
    fused.select_tile = 8
    g = torch.Generator().manual_seed(q)
    s = fused.prepare(runner.state)
    s.f = torch.randint(-4, 4, (runs, pop), generator=g).to(s.f)
    fused.child_f.copy_(torch.randint(-4, 4, (runs, pop), generator=g))
    union = torch.cat([s.f, fused.child_f], 1).cpu()
    fused.given_opponents = torch.randint(0, 2 * pop, (runs, 2 * pop * q), generator=g).to(fused_device)
    best_f = torch.full((runs,), float("inf"), dtype=s.f.dtype, device=fused_device)
    fused.select(s, runner.best_x.clone(), torch.full_like(runner._hit_iter, -1), torch.zeros_like(runner._it), best_f)
    wins = fused.wins.cpu()
    opponents = fused.given_opponents.cpu().reshape(runs, 2 * pop, q)
    drawn = union.gather(1, opponents.flatten(1)).view_as(opponents)
    assert torch.equal(wins, (union[:, :, None] <= drawn).sum(-1).int())
    for run in range(runs):
        want = torch.empty(pop, dtype=torch.int64)
        best = _survivors(union[run].numpy(), wins[run].numpy(), want.numpy(), q)
        assert torch.equal(fused.keep[run].cpu().long(), want)
        assert best_f[run] == union[run, best] == union[run].min()
    assert not fused.hist.any()  # zero again for the next generation


def test_the_kernels_random_numbers_are_uniform_and_independent(fused_device):
    runner = hs.Runner("sphere", hs.PSO(pop_size=200), dim=6, runs=2, seed=1, device=fused_device, engine="fused")
    draws = []
    for _ in range(2):
        runner._kernels.drawn_r = torch.empty(2, *runner.state.x.shape, device=fused_device)
        runner.step(1)
        draws.append(runner._kernels.drawn_r.cpu().double())
    r1, r2 = draws[0]
    u = draws[0].flatten().numpy()  # 4,800 numbers
    assert ((u >= 0) & (u < 1)).all()
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    def corr(a, b):
        return abs(float(torch.corrcoef(torch.stack([a.flatten(), b.flatten()]))[0, 1]))
    # r1 vs r2, neighbouring coordinates (one Philox call), the two runs, two iterations: 2,400
    # pairs each, so |corr| < 0.1 is ~5 standard errors
    assert corr(r1, r2) < 0.1 and corr(r1[..., 0::2], r1[..., 1::2]) < 0.1
    assert corr(r1[0], r1[1]) < 0.1 and corr(draws[0], draws[1]) < 0.1




#: Each algorithm that declares CUDA kernels, as these tests build it.
FUSED = {"pso": hs.PSO, "firefly": lambda pop_size: hs.Firefly(pop_size=pop_size, alpha=0.05), "prs": hs.PRS, "fep": hs.FEP,
         "apo": hs.APO}


def test_every_declared_cuda_kernel_is_tested_here():
    assert set(FUSED) == set(with_kernels("cuda"))


@pytest.mark.parametrize("algorithm", each(with_kernels("cuda"), marks=INTERPRETED_IS_SLOW))
def test_fused_runs_converge_like_eager_runs(algorithm, fused_device):
    cuda = fused_device == "cuda"
    # PRS's final values cluster at Rastrigin's local minima, so a set of 40 runs can land far
    # from the typical one by chance (measured on CUDA: eager medians 0.67-2.40 over 5 seeds):
    # 100 runs per side on CUDA.
    kw = dict(dim=4, iters=200 if cuda else 40, runs=100 if cuda else 10, device=fused_device)
    if algorithm == "fep" and not cuda:  # its selection kernel is slow to interpret
        kw.update(iters=20, runs=8)
    make = FUSED[algorithm]
    eager = hs.minimize("rastrigin", make(pop_size=32 if cuda else 16), engine="eager", seed=0, **kw)
    fused = hs.minimize("rastrigin", make(pop_size=32 if cuda else 16), engine="fused", seed=1, **kw)
    assert fused.extra["engine"] == ("fused+graph" if cuda else "fused")
    assert torch.isfinite(fused.best_f).all() and fused.iterations == kw["iters"]
    assert stats.mannwhitneyu(eager.best_f.numpy(), fused.best_f.numpy()).pvalue > 1e-3
    assert (fused.history_f[:, 1:] <= fused.history_f[:, :-1]).all()
    assert torch.equal(fused.best_f, fused.history_f.amin(1))  # best-so-far over every iteration


def test_fused_runs_are_reproducible_and_seeds_differ(fused_device):
    kw = dict(dim=3, iters=6, runs=2, device=fused_device, engine="fused")  # (interpreted: seconds an iteration)
    a = hs.minimize("sphere", hs.PSO(pop_size=16), seed=7, **kw)
    b = hs.minimize("sphere", hs.PSO(pop_size=16), seed=7, **kw)
    c = hs.minimize("sphere", hs.PSO(pop_size=16), seed=8, **kw)
    assert torch.equal(a.best_f, b.best_f) and torch.equal(a.best_x, b.best_x)
    assert not torch.equal(a.best_f, c.best_f)
    assert a.best_f[0] != a.best_f[1]  # the runs of one call draw different numbers


# the block bests' points read with their values; read after them (interpreted: 10-15 s each, `-m slow`)
@pytest.mark.parametrize("dim,pop", [(40, 24), pytest.param(300, 9, marks=INTERPRETED_IS_SLOW)])
@pytest.mark.parametrize("make", [hs.PSO, lambda pop_size: hs.PRS(pop_size=pop_size, max_iters=20)])
def test_chained_launches_end_as_launches_settled_one_by_one(make, dim, pop, fused_device):
    """A chain (each launch does the last one's bookkeeping, `settle` the last's: a graph's
    chunk) leaves the runs, the counts and the history rows bit for bit as single steps do."""
    kw = dict(runs=2, seed=2, device=fused_device, engine="fused", target=1e3)
    single = hs.Runner(hs.get_problem("rastrigin", dim=dim), make(pop_size=pop), **kw)
    chained = hs.Runner(hs.get_problem("rastrigin", dim=dim), make(pop_size=pop), **kw)
    fused = chained._kernels
    assert 1 < fused.blocks and fused.chains
    rows = []
    for _ in range(3):
        single.step(1)
        rows.append(single.best_f.clone())
    chained_rows = torch.full((3, 2), torch.nan, device=fused_device, dtype=single.best_f.dtype)
    with fused.chained():
        carry = (chained.state, chained.best_x, chained._hit_iter, chained._it, chained.best_f)
        for k in range(3):
            carry = fused(*carry, record=chained_rows[k])
    assert fused.link is None  # settled
    for field, value in vars(single.state).items():
        assert torch.equal(getattr(chained.state, field), value), field
    for mine, theirs in ((chained.best_f, single.best_f), (chained.best_x, single.best_x),
                         (chained._hit_iter, single._hit_iter), (chained._it, single._it),
                         (fused.counter, single._kernels.counter), (chained_rows, torch.stack(rows))):
        assert torch.equal(mine, theirs)
    assert int(chained._it) == 3 and int(fused.counter) == 3


@pytest.mark.parametrize("make", [lambda: hs.PSO(pop_size=16), lambda: hs.PRS(pop_size=16), lambda: hs.FEP(pop_size=16)])
def test_nan_fitness_is_counted_and_never_best(make, fused_device):
    def half_nan(x):
        return torch.where(x[..., 0] > 0, torch.nan, (x * x).sum(-1))

    problem = hs.TorchFunction(half_nan, 3, -1.0, 1.0)
    r = hs.minimize(problem, make(), iters=10, runs=2, seed=0, device=fused_device, engine="fused")
    assert (r.nan_evals > 0).all() and torch.isfinite(r.best_f).all()
    assert (r.best_x[:, 0] <= 0).all()


def test_target_iteration_is_recorded_by_the_kernels(fused_device):
    r = hs.minimize("sphere", hs.PSO(pop_size=16), dim=2, target=1.0, iters=200, runs=2, seed=3,
                    device=fused_device, engine="fused", chunk=8)
    assert r.stop_reason == "target"
    hit = (r.evals_to_target - 16) // 16  # the iteration each run reached the target
    assert hit.min() >= 1  # (reached by the steps, not by the initial population)
    for run in range(2):
        reached = r.history_iter[r.history_f[run] <= 1.0][0]  # history keeps every iteration here
        assert int(hit[run]) == int(reached)


def test_why_not_fused_says_why(monkeypatch):
    cpu = torch.device("cpu")
    sphere = hs.get_problem("sphere", dim=3)
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    assert "CUDA devices" in why_not_fused(hs.PSO(), sphere, cpu)
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    assert why_not_fused(hs.PSO(), sphere, cpu) is None
    assert "no fused kernel for 'de' (algorithms with one: 'apo', 'fep', 'firefly', 'prs', 'pso')" in why_not_fused(hs.get_algorithm("de"), sphere, cpu)
    assert why_not_fused(hs.PRS(max_iters=10), sphere, cpu) is None
    assert "implement update='synchronous' only, not 'sequential'" in why_not_fused(hs.Firefly(update="sequential"), sphere, cpu)
    assert why_not_fused(hs.Firefly(), sphere, cpu) is None
    assert "up to dim=256" in why_not_fused(hs.Firefly(), hs.get_problem("sphere", dim=300), cpu)
    assert "up to dim=4096" in why_not_fused(hs.PSO(), hs.get_problem("sphere", dim=5000), cpu)
    host = hs.NumpyFunction(lambda X: (X**2).sum(1), 3, -1, 1)
    assert why_not_fused(hs.PSO(), host, cpu) is None  # launched around each host evaluation, without a graph
    with pytest.raises(ValueError, match="engine 'fused' is not available: no fused kernel for 'de'"):
        hs.minimize("sphere", "de", dim=2, iters=10, device="cpu", engine="fused")


@pytest.mark.gpu
@pytest.mark.parametrize("algorithm", each(with_kernels("cuda")))
def test_graph_replay_of_fused_kernels_equals_launching_them_one_by_one(algorithm):
    kw = dict(dim=5, iters=101, runs=3, seed=2, device="cuda", engine="fused")
    graphed = hs.minimize("rastrigin", FUSED[algorithm](pop_size=100), chunk=16, **kw)  # 6 chunks + 5 steps
    direct = hs.minimize("rastrigin", FUSED[algorithm](pop_size=100), chunk=1000, **kw)  # never a whole chunk
    assert graphed.extra["engine"] == "fused+graph" and direct.extra["engine"] == "fused"
    assert torch.equal(graphed.best_f, direct.best_f) and torch.equal(graphed.best_x, direct.best_x)
    assert torch.equal(graphed.history_f, direct.history_f)


def _numpy_sphere(X):
    return (X * X).sum(1)


def test_a_host_objective_runs_the_fused_kernels_as_a_torch_one_does(fused_device):
    """A NumPy objective between the fused kernels' launches (no graph: the host cannot be
    captured) computes the numbers of the same objective in torch, which runs inside them:
    in float64 the two sums are the same numbers."""
    kw = dict(dim=2, iters=130 if fused_device == "cuda" else 8, runs=2, seed=3, device=fused_device,
              dtype="float64", engine="fused")  # on CUDA two 64-step chunks from a graph, then steps
    host = hs.minimize(hs.NumpyFunction(_numpy_sphere, 2, -5.0, 5.0), hs.PSO(pop_size=16), **kw)
    torch_fn = hs.minimize(hs.TorchFunction(lambda x: (x * x).sum(-1), 2, -5.0, 5.0), hs.PSO(pop_size=16), **kw)
    assert host.extra["engine"] == "fused"  # launched step by step
    assert torch_fn.extra["engine"] == ("fused+graph" if fused_device == "cuda" else "fused")
    assert torch.equal(host.best_f, torch_fn.best_f) and torch.equal(host.history_f, torch_fn.history_f)


@pytest.mark.gpu
def test_auto_engine_picks_the_fused_kernels_for_long_runs_on_cuda():
    from heuriscale.engine import auto
    from heuriscale.engine.runner import Runner

    r = hs.minimize("sphere", "pso", dim=10, iters=20_000, runs=5, seed=1, device="cuda")
    assert r.extra["engine"] == "fused+graph", r.extra["engine_reason"]
    assert (r.best_f < 1e-6).all()  # issue 2's acceptance bar, on the fused path
    # APO's kernels are weighed against the compiled step from population x dim = 1,000,000
    # (kernels/apo/cuda.py's compiled_faster; docs/benchmarks.md): at dim 4 auto takes the compiled step
    for name, fast in (("firefly", "fused"), ("prs", "fused"), ("fep", "fused"), ("apo", "compiled")):
        runner = Runner("sphere", hs.get_algorithm(name, **({"max_iters": 10**6} if name in ("prs", "apo") else {})),
                        dim=4, device="cuda", seed=0)
        assert auto.choose(runner, 10**6).engine == fast, name
