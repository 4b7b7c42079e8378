"""The behaviour every algorithm shares, tested alike for every registered algorithm.

The list comes from the registry (`tests/registered.py`), so an algorithm registered
tomorrow, with its torch step only or with kernels, runs all of these: what it declares,
best-so-far over every evaluated point, evaluation counts, the box, NaN, seeds, batching,
targets, checkpoints, ask/tell, islands' migration, and the engines (eager on the CPU; eager, graph
and compiled on CUDA under `-m gpu`; its kernels where it declares them). The kernels'
own tests (test_native.py, test_fused.py) check each kernel against its algorithm's step.
"""

from __future__ import annotations

import importlib
import json

import pytest
import torch
from scipy import stats

import heuriscale as hs
from heuriscale.algorithms import State, algorithm_class
from registered import CAPTURABLE, NAMES, each, small, spec_only, with_kernels


def _box_log(dim: int, lower, upper, log: list):
    """Sphere that logs every point and value it is asked for (the evaluation log)."""

    def sphere(x):
        f = (x * x).sum(-1)
        log.append((x.detach().clone(), f.detach().clone()))
        return f

    return hs.TorchFunction(sphere, dim, lower, upper, name="logged-sphere")


# -- what an algorithm declares -------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_what_an_algorithm_declares_is_complete_and_usable(name):
    cls = algorithm_class(name)
    assert cls.name == name and cls.paper and isinstance(cls.min_pop, int) and cls.min_pop >= 1
    assert issubclass(cls.state_type, State)
    for preset, values in cls.presets.items():  # every preset builds and says what it sets
        algo = hs.get_algorithm(name, preset=preset)
        assert all(algo.params()[k] == v for k, v in values.items()), preset
    json.dumps(small(name).params())  # parameters are plain data (results and checkpoints store them)
    with pytest.raises(ValueError, match=f"{name} needs a population of at least {cls.min_pop}"):
        hs.get_algorithm(name, pop_size=cls.min_pop - 1)
    algo = small(name)
    assert 0 < algo.memory_bytes(1, 10, 4) < algo.memory_bytes(2, 10, 4) < algo.memory_bytes(2, 20, 8)
    if cls.kernels is not None:  # each declared fast path is where the engine looks for it
        folder = cls.kernels.folder or name
        for kind in ("cuda", "cpu"):
            if cls.kernels.has(kind):
                module = importlib.import_module(f"heuriscale.engine.kernels.{folder}.{kind}")
                assert hasattr(module, "ITERATION") and (kind == "cpu" or module.MAX_DIM > 0)


@pytest.mark.parametrize("name", NAMES)
def test_init_and_step_return_the_declared_state(name):
    algo = small(name, pop=10)
    runner = hs.Runner("sphere", algo, dim=3, runs=2, seed=0, device="cpu")
    for _ in range(2):
        assert type(runner.state) is algo.state_type
        assert runner.state.x.shape == (2, algo.pop_size, 3) and runner.state.f.shape == (2, algo.pop_size)
        runner.step()


def test_the_list_of_algorithms_shows_their_kernels():
    from typer.testing import CliRunner

    from heuriscale.cli import app

    res = CliRunner().invoke(app, ["list", "algorithms"], env={"COLUMNS": "300"})  # wide: one line a row
    assert res.exit_code == 0, res.output
    cells = [[c.strip() for c in line.strip("│").split("│")] for line in res.output.splitlines() if line.startswith("│")]
    kernels = {row[0]: row[-1] for row in cells}
    assert set(NAMES) <= set(kernels)
    assert (kernels["pso"], kernels["de"], kernels["cmaes"]) == ("cuda, cpu", "cpu", "cpu")  # both, CPU


# -- the engine's bookkeeping ------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_best_so_far_is_the_minimum_over_every_evaluated_point_and_evals_are_counted(name, device):
    log, runs = [], 3
    algo = small(name, pop=12)
    r = hs.minimize(_box_log(4, -10.0, 10.0, log), algo, iters=30, runs=runs, seed=2, device=device)
    all_f = torch.cat([f.reshape(runs, -1) for _, f in log], 1)
    all_x = torch.cat([x.reshape(runs, -1, 4) for x, _ in log], 1)
    if type(algo).rows_used is hs.Algorithm.rows_used:
        assert all_f.shape[1] == r.evals  # every evaluation counted, per run
    else:  # rows outside a shrinking population are evaluated with the rest and not counted
        assert all_f.shape[1] == algo.pop_size * 31 and r.evals < all_f.shape[1]
    assert r.evals == algo.evals_after(30)
    torch.testing.assert_close(r.best_f, all_f.min(1).values.cpu().double())
    at = all_f.argmin(1)
    torch.testing.assert_close(r.best_x, all_x[torch.arange(runs), at].cpu().double())
    assert (r.history_f[:, 1:] <= r.history_f[:, :-1]).all()
    torch.testing.assert_close(r.history_f[:, -1], r.best_f)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_every_evaluated_point_lies_in_the_box(name, dtype):
    # float32(-480.5527873) is below the float64 bound: lower + span * r once rounded past it
    # (the fuzzer's case: PRS, dim 1, this box, seed 0).
    log = []
    problem = _box_log(2, [-992.0, -3.0], [-480.5527873102094, 1e-3], log)
    hs.minimize(problem, small(name, pop=64), iters=20, runs=8, seed=0, device="cpu", dtype=dtype, engine="eager")
    run_dtype = getattr(torch, dtype)
    lo, hi = problem.lower.to(run_dtype), problem.upper.to(run_dtype)
    for x, _ in log:
        assert ((x >= lo) & (x <= hi)).all() and not x.isnan().any()


def _half_nan(x):
    """NaN on half the box (x_0 > 0), the sphere elsewhere: the NaN side holds the sphere's best."""
    return torch.where(x[..., 0] > 0, torch.nan, (x * x).sum(-1))


@pytest.mark.parametrize("name", NAMES)
def test_nan_never_becomes_best_and_is_counted(name, device):
    points = []

    def half_nan(x):
        points.append(x.detach().clone())
        return _half_nan(x)

    half = hs.TorchFunction(half_nan, 3, -5.0, 5.0, name="half-nan")
    r = hs.minimize(half, small(name, pop=16), iters=30, runs=4, seed=0, device=device)
    assert torch.isfinite(r.best_f).all() and (r.best_x[:, 0] <= 0).all()
    assert (r.nan_evals > 0).all() and (r.nan_evals <= r.evals).all()
    asked = torch.cat([p.reshape(4, -1, 3) for p in points], 1)
    assert not asked.isnan().any()  # an infinite value never turns into a NaN point
    assert torch.equal(r.nan_evals, (asked[..., 0] > 0).sum(1).cpu())  # every NaN counted, once
    assert torch.isfinite(r.history_f).all()
    nothing = hs.TorchFunction(lambda x: torch.full(x.shape[:-1], torch.nan, device=x.device), 2, -1.0, 1.0, name="nan")
    r = hs.minimize(nothing, small(name, pop=8), iters=5, runs=2, device=device)
    assert torch.isinf(r.best_f).all() and (r.best_f > 0).all() and (r.nan_evals == r.evals).all()


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_numbers_other_seed_differs_callers_stream_untouched(name, device):
    kw = dict(dim=5, iters=20, runs=3, device=device)
    torch.manual_seed(123)
    expected = torch.rand(3, device=device)
    torch.manual_seed(123)
    a = hs.minimize("rastrigin", small(name), seed=7, **kw)
    assert torch.equal(torch.rand(3, device=device), expected)  # the caller's stream is untouched
    b = hs.minimize("rastrigin", small(name), seed=7, **kw)
    c = hs.minimize("rastrigin", small(name), seed=8, **kw)
    assert a.extra["engine"] == b.extra["engine"]
    assert torch.equal(a.best_f, b.best_f) and torch.equal(a.best_x, b.best_x) and torch.equal(a.history_f, b.history_f)
    assert not torch.equal(a.best_x, c.best_x)


# 41 calls an algorithm: the two cheapest in the default run, every algorithm under `pytest -m slow`
@pytest.mark.parametrize("name", [n if n in ("pso", "de") else pytest.param(n, marks=pytest.mark.slow) for n in NAMES])
def test_batched_runs_match_separate_runs_in_distribution(name):
    """Runs of one call draw from one stream, so run r is not any single call's run; they must
    be independent draws of the same distribution as separate runs (a broken batching, runs
    sharing a population or a run axis mixed into another, fails this)."""
    kw = dict(dim=5, iters=40, device="cpu", engine="eager")
    runs = 40
    batched = hs.minimize("rastrigin", small(name), runs=runs, seed=0, **kw).best_f
    separate = torch.cat([hs.minimize("rastrigin", small(name), runs=1, seed=100 + k, **kw).best_f for k in range(runs)])
    assert batched.unique().numel() == runs  # runs differ from each other
    # two tests per algorithm at 1e-3 each: the family's false-alarm rate stays near 1 %
    assert stats.mannwhitneyu(batched.numpy(), separate.numpy()).pvalue > 1e-3
    assert stats.ks_2samp(batched.numpy(), separate.numpy()).pvalue > 1e-3


@pytest.mark.parametrize("name", NAMES)
def test_a_target_stops_the_runs_and_says_when_each_reached_it(name):
    kw = dict(dim=2, runs=3, seed=5, device="cpu", engine="eager")
    free = hs.minimize("sphere", small(name), iters=30, **kw)
    target = float(free.history_f[:, free.history_iter.tolist().index(20)].max())  # every run there by 20
    r = hs.minimize("sphere", small(name), iters=10_000, target=target, **kw)
    assert r.stop_reason == "target" and r.iterations < 10_000 and (r.best_f <= target).all()
    algo = small(name)
    hit = [algo.steps_within(int(e)) for e in r.evals_to_target]  # evaluations back to iterations
    for run in range(3):  # the first iteration whose best-so-far reached the target
        assert int(hit[run]) == int(r.history_iter[r.history_f[run] <= target][0]) <= 20


# -- checkpoints --------------------------------------------------------------------------------
CHECKPOINT_CASES = [(n, "eager") for n in NAMES] + [(n, "native") for n in with_kernels("cpu")]


@pytest.mark.parametrize("name, engine", CHECKPOINT_CASES)
def test_resume_is_bit_identical(tmp_path, name, engine):
    kw = dict(dim=4, runs=3, device="cpu", engine=engine)
    algo = small(name, horizon=90)
    whole = hs.minimize("rastrigin", algo, iters=90, seed=5, **kw)
    path = tmp_path / "run.ckpt"
    part = hs.minimize("rastrigin", algo, iters=35, seed=5, checkpoint=path, **kw)
    assert part.iterations == 35 and path.is_file()
    resumed = hs.minimize("rastrigin", algo, iters=90, resume=path, **kw)  # seed comes from the checkpoint
    assert resumed.seed == 5 and resumed.iterations == 90 and resumed.evals == whole.evals
    for field in ("best_f", "best_x", "history_f", "history_iter", "nan_evals"):
        torch.testing.assert_close(getattr(resumed, field), getattr(whole, field), rtol=0, atol=0)


@pytest.mark.parametrize("name", NAMES)
def test_a_checkpoint_holds_the_declared_state_fields(tmp_path, name):
    runner = hs.Runner("sphere", small(name), dim=2, runs=2, seed=0, device="cpu")
    runner.step(3)
    saved = runner.state_dict()
    assert sorted(saved["state"]) == sorted(algorithm_class(name).state_type.__dataclass_fields__)
    saved["state"]["not_a_field"] = saved["state"]["x"]
    fresh = hs.Runner("sphere", small(name), dim=2, runs=2, seed=0, device="cpu")
    with pytest.raises(ValueError, match="written by another version of the algorithm"):
        fresh.load_state_dict(saved)


# -- ask/tell: the caller evaluates ------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_an_ask_tell_loop_computes_exactly_what_minimize_does(name, device, tmp_path):
    problem = hs.get_problem("rastrigin", dim=4)
    algo = small(name, pop=12)
    budget = algo.evals_after(25) + 3  # not a whole step more: 25 steps
    opt = hs.AskTell(algo, problem, runs=3, evals=budget, seed=3, device=device)
    while not opt.done:
        if opt.iteration == 11:  # a checkpoint between an ask and its tell, continued elsewhere
            opt.ask()
            opt.save(tmp_path / "at.ckpt")
            opt = hs.AskTell.load(tmp_path / "at.ckpt", problem, device=device)
        opt.tell(problem.evaluate(opt.ask()))
    told = opt.result()
    plain = hs.minimize(problem, algo, evals=opt.evals, runs=3, seed=3, device=device, engine="eager")
    assert told.evals == plain.evals == algo.evals_after(25)
    for field in ("best_f", "best_x", "history_f", "history_iter", "nan_evals"):
        assert torch.equal(getattr(told, field), getattr(plain, field)), field


# -- islands: how migrants leave and enter a population (the torchrun runs: test_distributed) ---
@pytest.mark.parametrize("name", NAMES)
def test_migrants_replace_the_worst_and_carry_every_field(name):
    algo = small(name, pop=10)
    mine = hs.Runner("rastrigin", algo, dim=3, runs=2, seed=1, device="cpu")
    other = hs.Runner("rastrigin", algo, dim=3, runs=2, seed=2, device="cpu")
    mine.step(3)
    other.step(3)
    k = 2
    leaving = algo.emigrants(other.state, k)  # (runs, k): the k best of the other island
    key = getattr(other.state, algo.migration_key)
    assert torch.equal(key.gather(1, leaving).sort(-1).values, key.sort(-1).values[:, :k])
    fields = algo.individual_fields(mine.state)
    assert "x" in fields and "f" in fields
    rows = {}
    for field in fields:
        value = getattr(other.state, field)
        index = leaving.reshape(leaving.shape + (1,) * (value.ndim - 2)).expand(*leaving.shape, *value.shape[2:])
        rows[field] = value.gather(1, index)
    before = mine.state
    after = algo.immigrate(before, rows)
    assert type(after) is type(before)
    for field in vars(before):
        assert getattr(after, field).shape == getattr(before, field).shape, field
    worst = getattr(before, algo.migration_key).topk(k, dim=-1, largest=True).indices
    for run in range(2):  # every newcomer arrived whole (all its fields), where a worst one was
        for j in range(k):
            arrived = [all(torch.equal(getattr(after, f)[run, slot], rows[f][run, j]) for f in fields)
                       for slot in worst[run].tolist()]
            assert any(arrived), (run, j)
    mine.state = after
    mine.step(2)  # and the island goes on from there
    assert torch.isfinite(mine.best_f).all()


# -- engines ------------------------------------------------------------------------------------
class _TorchStepOnlyPSO(hs.PSO):
    """PSO declaring no kernels: an algorithm of one's own, as a user writes it (every registered
    one has CPU kernels now, so this is how the path stays tested)."""

    name = "my-pso"
    kernels = None


@pytest.mark.parametrize("algorithm", [*each(spec_only("cpu")), pytest.param(None, id="a user's own")])
def test_an_algorithm_without_cpu_kernels_runs_eagerly_and_says_why(algorithm):
    make = (lambda: _TorchStepOnlyPSO(pop_size=20)) if algorithm is None else (lambda: small(algorithm))
    name = make().name
    with pytest.raises(ValueError, match=f"no native CPU kernel for '{name}'"):
        hs.minimize("sphere", make(), dim=2, iters=5, device="cpu", engine="native")
    r = hs.minimize("sphere", make(), dim=2, iters=500, device="cpu")
    assert r.extra["engine"] == "eager" and f"no native CPU kernel for '{name}'" in r.extra["engine_reason"]


def _cuda():
    if not torch.cuda.is_available():
        pytest.fail("GPU tests were selected (-m gpu) but torch sees no CUDA device")


@pytest.mark.gpu
@pytest.mark.parametrize("name", CAPTURABLE)
def test_graph_replay_equals_eager(name):
    """`engine="graph"` replays the uncompiled step and draws the same random numbers."""
    _cuda()
    kw = dict(dim=6, iters=75, runs=3, seed=11, device="cuda", chunk=16)  # 4 chunks + 11 eager steps
    eager = hs.minimize("rastrigin", small(name), engine="eager", **kw)
    graph = hs.minimize("rastrigin", small(name), engine="graph", **kw)
    assert graph.extra["engine"] == "graph" and graph.iterations == 75
    assert torch.equal(graph.best_f, eager.best_f) and torch.equal(graph.best_x, eager.best_x)
    assert torch.equal(graph.history_iter, eager.history_iter) and torch.equal(graph.history_f, eager.history_f)


@pytest.mark.gpu
@pytest.mark.parametrize("name", CAPTURABLE)
def test_compiled_matches_eager_in_distribution(name):
    """`engine="compiled"` uses inductor's random streams: the same distribution, not the same numbers."""
    _cuda()
    kw = dict(dim=5, iters=64, runs=40, device="cuda", chunk=16)
    eager = hs.minimize("rastrigin", small(name, pop=32), engine="eager", seed=0, **kw)
    fast = hs.minimize("rastrigin", small(name, pop=32), engine="compiled", seed=1, **kw)
    assert fast.extra["engine"] == "compiled+graph"  # (a step that ran uncompiled says "graph")
    assert torch.isfinite(fast.best_f).all()
    assert stats.mannwhitneyu(eager.best_f.numpy(), fast.best_f.numpy()).pvalue > 1e-3
    assert (fast.history_f[:, 1:] <= fast.history_f[:, :-1]).all()


@pytest.mark.gpu
@pytest.mark.parametrize("name", each([n for n in spec_only("cuda") if n in CAPTURABLE]))  # the others: eager
def test_an_algorithm_without_fused_kernels_compiles_on_cuda_and_says_why(name):
    _cuda()
    with pytest.raises(ValueError, match=f"no fused kernel for '{name}'"):
        hs.minimize("sphere", small(name), dim=2, iters=5, device="cuda", engine="fused")
    runner = hs.Runner("sphere", small(name), dim=2, device="cuda", seed=0)
    from heuriscale.engine import auto

    assert auto.choose(runner, 10**6).engine == "compiled"


CUDA_ENGINES = [(n, e) for n in NAMES for e in (("graph", "compiled", "eager") if n in CAPTURABLE else ("eager",))] + [(n, "fused") for n in with_kernels("cuda")]


@pytest.mark.gpu
@pytest.mark.parametrize("name, engine", CUDA_ENGINES)
def test_resume_on_cuda_is_bit_identical(tmp_path, name, engine):
    _cuda()
    algo = small(name, horizon=300)
    kw = dict(dim=4, runs=3, device="cuda", engine=engine)
    whole = hs.minimize("rastrigin", algo, iters=300, seed=5, **kw)
    path = tmp_path / "run.ckpt"
    # A compiled step draws other random numbers than the eager steps that finish a budget
    # shorter than a chunk: it resumes bit for bit from a checkpoint between chunks (what
    # periodic checkpoints and signals write), here after two chunks of 64.
    hs.minimize("rastrigin", algo, iters=128 if engine == "compiled" else 100, seed=5, checkpoint=path, **kw)
    resumed = hs.minimize("rastrigin", algo, iters=300, resume=path, **kw)
    assert resumed.extra["engine"] == whole.extra["engine"]
    for field in ("best_f", "best_x", "history_f", "nan_evals"):
        torch.testing.assert_close(getattr(resumed, field), getattr(whole, field), rtol=0, atol=0)


@pytest.mark.gpu
@pytest.mark.parametrize("name", [n for n in NAMES if n not in CAPTURABLE])
def test_a_step_a_graph_cannot_capture_runs_eagerly_and_says_why(name):
    _cuda()
    r = hs.minimize("sphere", small(name), dim=4, iters=70, runs=2, seed=0, device="cuda")
    assert r.extra["engine"] == "eager"
    with pytest.raises(ValueError, match="cannot capture.*use engine='eager'"):
        hs.minimize("sphere", small(name), dim=4, iters=70, runs=2, seed=0, device="cuda", engine="graph")
