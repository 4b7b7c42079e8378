"""COCO's bbob functions (problems/bbob.py) against COCO's own C code, and the `bbob` suite of
`heuriscale compare`.

The reference values come from cocoex (pip install coco-experiment), evaluated here at random
points: uniform in COCO's box [-5, 5]^D, outside it (uniform in [-10, 10] and [-100, 100]:
the penalties), near the optimum (1e-6 and 1e-3 away) and at it. Values agree when
|f - f_coco| <= 1e-9 max(|f_coco|, 1): relative, with an absolute floor of 1e-9 where f_coco
is near 0 (a value of 1e-12 has no meaningful 1e-9 relative neighbourhood once fopt has been
added and subtracted). Far points stop at |x| = 100: past about 1e3, f17 and f18 take
sin(50 s^0.1) of s ~ 1e100, where the last bit of a rotation's sum (BLAS and COCO add in
different orders) moves the sine by O(1); no two implementations agree there.
"""

from __future__ import annotations

import csv
import json
import sqlite3
from contextlib import closing

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

import heuriscale as hs
from heuriscale.cli import app
from heuriscale.problems import bbob_instances, problem_names
from heuriscale.problems.bbob import BBOB, DIMS
from heuriscale.studies import compare, get_suite
from heuriscale.studies.compare import plan
from heuriscale.studies.suites import BBOB_FRACTIONS

FUNCTIONS = range(1, 25)
INSTANCES = range(1, 16)
RTOL = 1e-9
NO_COCO = "COCO's reference (pip install coco-experiment, module cocoex >= 2.7 with BareProblem) is not installed"


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """These tensors are small: torch's intra-op threads only spin (10x slower on a loaded machine)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def cocoex():
    return pytest.importorskip("cocoex", minversion="2.7", reason=NO_COCO)


def sample_points(problem: BBOB, rng: np.random.Generator, box: int = 24) -> np.ndarray:
    """The points a problem is checked at (see the module's docstring)."""
    d, best = problem.dim, problem.optimum_x.numpy()
    return np.concatenate([
        rng.uniform(-5, 5, (box, d)),
        rng.uniform(-10, 10, (3, d)),
        rng.uniform(-100, 100, (3, d)),
        best + rng.normal(0, 1e-6, (3, d)),
        best + rng.normal(0, 1e-3, (3, d)),
        best[None],
    ])


def relative_errors(ours: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """|ours - reference| / max(|reference|, 1); 0 where both are the same (NaN or inf included),
    inf where only one is NaN."""
    with np.errstate(invalid="ignore"):
        err = np.abs(ours - reference) / np.maximum(np.abs(reference), 1.0)
    same = (ours == reference) | (np.isnan(ours) & np.isnan(reference))
    return np.where(same, 0.0, np.where(np.isnan(err), np.inf, err))


def check_against_coco(cocoex, function: int, dims, instances, rng, device: str = "cpu", box: int = 24) -> float:
    """Values, optimum and optimum location of every (dim, instance) equal to cocoex's; returns
    the largest relative error seen."""
    worst = 0.0
    for d in dims:
        for i in instances:
            p = hs.get_problem(f"bbob-f{function}", dim=d, instance=i)
            ref_problem = cocoex.BareProblem("bbob", function, d, i)
            x = sample_points(p, rng, box)
            reference = np.array([ref_problem(row) for row in x])
            ours = p.to(device, torch.float64).evaluate(torch.from_numpy(x).to(device)).cpu().numpy()
            err = relative_errors(ours, reference)
            k = int(err.argmax())
            assert err[k] <= RTOL, f"bbob-f{function} D={d} instance {i}: {ours[k]!r} != {reference[k]!r} at {x[k]}"
            worst = max(worst, float(err[k]))
            # where COCO says the optimum is, and its value (f20: COCO's best_value is its raw
            # function at best_parameter, a few 1e-15 above fopt; the others are fopt itself)
            assert np.array_equal(p.optimum_x.numpy(), np.asarray(ref_problem.best_parameter()))
            assert p.optimum_f == pytest.approx(ref_problem.best_value(), abs=1e-12)
            assert ref_problem(p.optimum_x.numpy()) == pytest.approx(p.optimum_f, abs=1e-12)
    return worst


# -- equal to COCO ---------------------------------------------------------------------------------
@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f"f{f}")
def test_equal_to_cocoex_on_every_standard_dimension_and_instance(cocoex, function, device):
    """All of COCO's standard grid: D = 2, 3, 5, 10, 20, 40 x instances 1-15."""
    check_against_coco(cocoex, function, DIMS, INSTANCES, np.random.default_rng(function), device)


@pytest.mark.slow
@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f"f{f}")
def test_equal_to_cocoex_at_many_more_points(cocoex, function):
    """The same grid at 1,000 points in the box per problem (instances 1-15), and the
    instances of later COCO workshops (51-60, 71-80, 91-100, 101-110)."""
    rng = np.random.default_rng(100 + function)
    check_against_coco(cocoex, function, DIMS, INSTANCES, rng, box=1000)
    check_against_coco(cocoex, function, DIMS, [*range(51, 61), *range(71, 81), *range(91, 111)], rng)


def test_other_dimensions_and_instances_cocoex_defines(cocoex):
    """COCO's generator works in any dimension (rotations up to 44), for any instance number."""
    rng = np.random.default_rng(7)
    for function in FUNCTIONS:
        dims = (4, 7, 44) if function not in bbob_instances.UNROTATED else (4, 7, 64)
        check_against_coco(cocoex, function, dims, (1, 123, bbob_instances.MAX_INSTANCE), rng, box=4)


def test_the_generator_reproduces_cocos_numbers(cocoex):
    """fopt is COCO's: on its 0.01 grid within [-1000, 1000]; f4 and f18 borrow f3's and f17's."""
    for function in FUNCTIONS:
        for instance in (1, 2, 15):
            fopt = bbob_instances.fopt(function, instance)
            assert fopt == pytest.approx(cocoex.BareProblem("bbob", function, 2, instance).best_value(), abs=1e-12)
            assert abs(fopt) <= 1000 and round(fopt * 100) == pytest.approx(fopt * 100, abs=1e-6)
    fopt = bbob_instances.fopt
    assert fopt(4, 3) == fopt(3, 3) and fopt(18, 3) == fopt(17, 3)
    r = bbob_instances.rotation(123, 10)
    np.testing.assert_allclose(r @ r.T, np.eye(10), atol=1e-14)
    u = bbob_instances.uniform(1000, 5)
    assert (u > 0).all() and (u <= 1).all() and 0.45 < u.mean() < 0.55


# -- what the problems promise -----------------------------------------------------------------------
def test_optimum_is_fopt_and_evaluates_to_it():
    for function in FUNCTIONS:
        p = hs.get_problem(f"bbob-f{function}", dim=5, instance=3)
        assert p.optimum_f == bbob_instances.fopt(function, 3)
        f_opt = p.evaluate(p.optimum_x).item()
        assert 0.0 <= f_opt - p.optimum_f <= 1e-12 * max(1.0, abs(p.optimum_f))
        x = torch.rand(200, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(function)) * 10 - 5
        assert (p.evaluate(x) >= p.optimum_f).all()
    assert hs.get_problem("bbob-f5", dim=3).optimum_x.abs().eq(5.0).all()  # the linear slope's corner
    assert hs.get_problem("bbob-f24", dim=3).optimum_x.abs().eq(1.25).all()


def test_instances_differ_and_are_described():
    a, b = hs.get_problem("bbob-f10", dim=5), hs.get_problem("bbob-f10", dim=5, instance=2)
    assert a.instance == 1 and b.instance == 2 and a.optimum_f != b.optimum_f
    assert not torch.equal(a.optimum_x, b.optimum_x) and not torch.equal(a.r, b.r)
    assert b.describe() == {"name": "bbob-f10", "dim": 5, "bounds": [-5.0, 5.0], "optimum_f": b.optimum_f,
                            "instance": 2}
    assert b.coco_id == "bbob_f010_i02_d05"


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f"f{f}")
def test_float32_is_float64_to_its_precision(function, device):
    p64 = hs.get_problem(f"bbob-f{function}", dim=10, instance=4)
    p32 = p64.to(device, torch.float32)
    assert all(v.dtype == torch.float32 for v in vars(p32).values() if torch.is_tensor(v) and v.is_floating_point())
    x = torch.rand(2000, 10, dtype=torch.float64, generator=torch.Generator().manual_seed(function)) * 12 - 6
    f64, f32 = p64.evaluate(x), p32.evaluate(x.float().to(device)).cpu()
    assert f32.dtype == torch.float32 and torch.isfinite(f32).all()
    # float32 resolves a value to about 1e-7 of the largest term it adds (fopt included), and
    # rotations, powers and oscillations multiply that (measured: at most 6e-5 of the scale
    # below); f19 takes cos(s) of s up to 1e6, which float32 holds to 0.06 (measured: 3e-3)
    scale = f64.abs() + abs(p64.optimum_f) + 1.0
    assert ((f32.double() - f64).abs() / scale).max() < (1e-2 if function == 19 else 2e-4)


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f"f{f}")
def test_any_leading_dimensions(function):
    p = hs.get_problem(f"bbob-f{function}", dim=3, instance=5)
    x = torch.rand(2, 3, 4, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(function)) * 10 - 5
    f = p.evaluate(x)
    assert f.shape == (2, 3, 4)
    flat = torch.stack([p.evaluate(row) for row in x.reshape(-1, 3)])  # one point at a time: shape ()
    assert flat.shape == (24,)
    torch.testing.assert_close(f.reshape(-1), flat, rtol=1e-11, atol=1e-11)  # gemm vs gemv: last bits


@pytest.mark.parametrize("function", FUNCTIONS, ids=lambda f: f"f{f}")
def test_a_list_of_instances_is_each_instance_on_its_run(function):
    """instance=[...]: run r (the first axis) is evaluated as instance[r] alone would be."""
    instances = [3, 1, 7]
    many = hs.get_problem(f"bbob-f{function}", dim=4, instance=instances)
    assert many.runs_held == 3 and many.optimum_f is None and many.optimum_x is None
    x = torch.rand(3, 5, 2, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(function)) * 12 - 6
    f = many.evaluate(x)
    assert f.shape == (3, 5, 2)
    one = [hs.get_problem(f"bbob-f{function}", dim=4, instance=i) for i in instances]
    for r, p in enumerate(one):
        torch.testing.assert_close(f[r], p.evaluate(x[r]), rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(many.optima_x[r], p.optimum_x, rtol=0, atol=0)
    assert many.run_optima(3) == [p.optimum_f for p in one] and one[0].run_optima(2) == [one[0].optimum_f] * 2
    assert many.coco_id == [p.coco_id for p in one] and many.describe()["instance"] == instances
    assert many.select_runs([0, 1, 2]) is many and many.select_runs([2, 0]).instance == [7, 3]  # all: not rebuilt
    with pytest.raises(ValueError, match=r"holds 3 instances, one per run: .*shape \(3, \.\.\., 4\), got \(2, 4\)"):
        many.evaluate(x[:2, 0, 0])


def test_a_run_set_on_a_list_of_instances_tracks_each_runs_optimum():
    problem = hs.get_problem("bbob-f1", dim=3, instance=[1, 2])
    r = hs.minimize(problem, hs.PSO(pop_size=20), iters=150, runs=2, seed=3, device="cpu", dtype="float64")
    optima = torch.tensor(problem.run_optima(2), dtype=torch.float64)
    assert (r.best_f >= optima).all() and (r.best_f - optima < 1e-6).all()  # each near its own f*
    # each run's targets are its own f* + 10^(k/5): a hit is within its target, and one run's
    # ladder is not the other's (f* 79.48 and -394.48 on instances 1 and 2)
    from heuriscale.engine.history import target_precisions
    targets = optima[:, None] + target_precisions()
    hit = r.hit_evals >= 0
    assert hit[:, 0].all() and hit.sum(1).min() > 60  # down to 1e-6 and below, on both runs
    assert (r.hit_f[hit] <= targets[hit]).all() and (r.hit_f[hit] >= optima[:, None].expand_as(hit)[hit]).all()
    assert (r.best_f[:, None].expand_as(hit)[~hit] > targets[~hit]).all()  # a target missed is above the best
    with pytest.raises(ValueError, match=r"holds 2 instances, one per run: use runs=2 \(got runs=3\)"):
        hs.minimize(problem, hs.PSO(pop_size=20), iters=2, runs=3, seed=3, device="cpu")


@pytest.mark.parametrize("bad", [[], "1", [1, 0], [1, 2.5], {1: 2}])
def test_a_bad_list_of_instances_says_so(bad):
    with pytest.raises(ValueError, match="instance must be a whole number"):
        hs.get_problem("bbob-f2", dim=2, instance=bad)


def test_non_finite_points_as_coco():
    p = hs.get_problem("bbob-f6", dim=3)
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([[nan, 0, 0], [inf, 0, 0], [-inf, nan, 0]], dtype=torch.float64)
    f = p.evaluate(x)
    assert torch.isnan(f[0]) and f[1] == float("inf") and f[2] == float("inf")


BAD = [
    (dict(name="bbob-f1", dim=2, instance=0), "instance must be a whole number from 1 to 214,647"),
    (dict(name="bbob-f1", dim=2, instance=-3), "instance must be a whole number from 1 to 214,647"),
    (dict(name="bbob-f1", dim=2, instance=1.5), "instance must be a whole number"),
    (dict(name="bbob-f1", dim=2, instance=10**6), "instance must be a whole number from 1 to 214,647"),
    (dict(name="bbob-f3", dim=1), "defined for D >= 2 .*got dim=1"),
    (dict(name="bbob-f3", dim=0), "defined for D >= 2"),
    (dict(name="bbob-f9", dim=45), "bbob-f9 \\(rotated Rosenbrock\\) is defined for D <= 44.*f1-f5 and f20 take any D"),
    (dict(name="bbob-f25", dim=2), "unknown problem 'bbob-f25' .*known problems: .*bbob-f24"),
    (dict(name="bbob-f1", dim=2, seed=3), "problem 'bbob-f1' has no parameter 'seed'; its parameters are: instance"),
    (dict(name="bbob-f1"), "needs a dimension"),
]


@pytest.mark.parametrize("kwargs,message", BAD, ids=[m for _, m in BAD])
def test_bad_input_says_what_was_wrong(kwargs, message):
    with pytest.raises(ValueError, match=message):
        hs.get_problem(kwargs.pop("name"), **kwargs)


def test_bad_function_numbers():
    for function in (0, 25, 2.0, "3"):
        with pytest.raises(ValueError, match="bbob has functions 1-24"):
            BBOB(function, 2)


def test_listed_in_natural_order():
    names = [n for n in problem_names() if n.startswith("bbob-")]
    assert names == [f"bbob-f{k}" for k in FUNCTIONS]


@pytest.mark.parametrize("instance", [2, [2, 5]], ids=["one instance", "an instance per run"])
def test_the_engines_evaluate_bbob_between_kernel_calls(fused_device, instance):
    """As the CEC problems: the native (CPU) and fused (CUDA; Triton's interpreter here) kernels
    move the particles, the problem evaluates them in torch between two launches."""
    problem = hs.get_problem("bbob-f15", dim=5, instance=instance)
    optima = torch.tensor(problem.run_optima(2), dtype=torch.float64)
    for device, engine in (("cpu", "native"), (fused_device, "fused")):
        r = hs.minimize(problem, hs.PSO(pop_size=16), iters=8, runs=2, seed=1, device=device, dtype="float64",
                        engine=engine)
        assert r.extra["engine"].startswith(engine)
        # each run's best point evaluates to its best value on its own instance (runs first)
        torch.testing.assert_close(problem.to(device).evaluate(r.best_x[:, None].to(device))[:, 0].cpu(),
                                   r.best_f.cpu(), rtol=1e-12, atol=0)
        assert (r.best_f > optima).all() and (r.history_f[:, -1] <= r.history_f[:, 0]).all()


# -- the bbob suite of `compare` ---------------------------------------------------------------------
def test_bbob_suite_follows_cocos_procedure():
    s = get_suite("bbob")
    assert s.functions == tuple(f"bbob-f{k}" for k in FUNCTIONS) and s.all_dims() == (2, 3, 5, 10, 20, 40)
    assert s.runs == 15 and s.instances
    assert [s.budget("bbob-f7", d) for d in (2, 40)] == [20_000, 400_000]
    fx = s.fractions(10)
    assert fx == BBOB_FRACTIONS and len(fx) == 16 and fx[0] == pytest.approx(1e-3) and fx[-1] == 1.0
    assert fx[5] == pytest.approx(1e-2)  # five per decade
    c = plan(["pso", "de"], "bbob", dims=[3], functions=["f1", "f24"], runs=4, evals_per_dim=500, device="cpu")
    assert len(c.configs) == 2 * 2 and c.total_runs() == 16 and c.budget("bbob-f1", 3) == 1500
    for (algo, function, dim), config in c.configs:  # a function's instances advance together, run r on r + 1
        assert config.runs == 4 and config.problem_params == {"instance": [1, 2, 3, 4]}
    assert len({config.seed(0) for _, config in c.configs}) == len(c.configs)  # every run set its own seed
    assert "--evals-per-dim 500" in c.command
    with pytest.raises(ValueError, match="give the budget once"):
        plan(["pso"], "bbob", dims=[2], evals=1000, evals_per_dim=500, device="cpu")


@pytest.mark.parametrize("timing", ["batched", "each"])
def test_a_study_running_some_repeats_runs_their_instances(timing):
    """A resumed (or sharded) configuration runs only some repeats: they keep their instances."""
    from heuriscale.studies.study import RunConfig, execute

    config = RunConfig(algorithm="pso", problem="bbob-f1", iters=60, runs=4, dim=2, algorithm_params={"pop_size": 10},
                       problem_params={"instance": [1, 2, 3, 4]}, device="cpu", dtype="float64", timing=timing)
    rows = execute(config, [1, 3])
    optima = hs.get_problem("bbob-f1", dim=2, instance=[2, 4]).run_optima(2)  # 394.48, -152.04
    assert [r["repeat"] for r in rows] == [1, 3]
    for row, f_star in zip(rows, optima):
        assert f_star <= row["best_f"] < f_star + 10.0  # near its own instance's f*, not another's
    assert abs(optima[0] - optima[1]) > 500  # so a run on the wrong instance would fail the line above


def test_tiny_bbob_campaign_runs_each_instance_against_its_own_optimum(fast_figures, tmp_path):
    written = compare(["pso"], "bbob", dims=[2], functions=["f1", "f21"], runs=2, evals_per_dim=200,
                      pops={"pso": 10}, device="cpu", out=tmp_path, formats=("md", "csv"))
    with closing(sqlite3.connect(written["store"])) as con:
        rows = [(json.loads(c), r, best) for c, r, best in con.execute("SELECT config, repeat, best_f FROM runs")]
    assert len(rows) == 4
    optimum = {}
    for config, repeat, best_f in rows:
        instance = config["problem_params"]["instance"][repeat]
        p = hs.get_problem(config["problem"], dim=2, instance=instance)
        optimum[config["problem"], instance] = (p.optimum_f, best_f)
        assert best_f >= p.optimum_f
    assert sorted(optimum) == [("bbob-f1", 1), ("bbob-f1", 2), ("bbob-f21", 1), ("bbob-f21", 2)]
    assert optimum["bbob-f1", 1][0] != optimum["bbob-f1", 2][0]  # instances have their own fopt
    with (tmp_path / "runs.csv").open() as fh:
        runs = list(csv.DictReader(fh))
    assert len(runs) == 4 and {(r["function"], r["repeat"]) for r in runs} == {
        ("bbob-f1", "0"), ("bbob-f1", "1"), ("bbob-f21", "0"), ("bbob-f21", "1")}
    for r in runs:
        fopt, best_f = optimum[r["function"], int(r["repeat"]) + 1]  # repeat r is instance r + 1
        assert float(r["error"]) == pytest.approx(best_f - fopt, rel=1e-6, abs=1e-8)
    doc = json.loads(written["json"].read_text())
    assert doc["optima"]["bbob-f1 D=2 instance 2"] == optimum["bbob-f1", 2][0]


def test_cli_bbob_campaign_with_a_budget_per_dimension(fast_figures, tmp_path):
    args = ["compare", "--suite", "bbob", "--algorithms", "pso", "--functions", "f3", "--dims", "2", "--runs", "2",
            "--evals-per-dim", "100", "--pop", "pso=10", "--device", "cpu", "--out", str(tmp_path)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "campaign.json").read_text())
    assert doc["cells"] == [{"function": "bbob-f3", "dim": 2, "budget": 200}]
    assert "--evals-per-dim 100" in doc["meta"]["command"]
    res = CliRunner().invoke(app, args[:-2] + ["--evals", "300", "--out", str(tmp_path / "both")])
    assert res.exit_code == 2 and "give the budget once" in res.output
