import json
import time

import pytest
import torch

import heuriscale as hs
from heuriscale.engine import history as history_module
from heuriscale.engine import minimizer as minimize_module


def test_seed_is_recorded_and_reproduces():
    a = hs.minimize("sphere", "pso", dim=3, iters=10, device="cpu")
    b = hs.minimize("sphere", "pso", dim=3, iters=10, device="cpu", seed=a.seed)
    assert torch.equal(a.best_f, b.best_f)


def test_runner_steps_match_minimize(device):
    r = hs.minimize("sphere", "pso", dim=4, iters=25, runs=2, seed=3, device=device)
    runner = hs.Runner("sphere", "pso", dim=4, runs=2, seed=3, device=device)
    for _ in range(5):
        runner.step(5)
    assert runner.iteration == 25
    torch.testing.assert_close(runner.result().best_f, r.best_f)


def test_history_is_monotone_and_ends_at_best(device):
    r = hs.minimize("rastrigin", "pso", dim=3, iters=100, runs=2, seed=0, device=device)
    assert r.history_f.shape == (2, r.history_iter.numel())
    assert r.history_iter[0] == 0 and r.history_iter[-1] == 100
    assert (r.history_f[:, 1:] <= r.history_f[:, :-1]).all()
    torch.testing.assert_close(r.history_f[:, -1], r.best_f)


def test_history_thins_itself(monkeypatch):
    monkeypatch.setattr(history_module, "HISTORY_SIZE", 10)
    r = hs.minimize("sphere", "pso", dim=2, iters=100, seed=0, device="cpu")
    n = r.history_iter.numel()
    assert 10 <= n <= 22 and r.history_iter[-1] == 100
    assert (r.history_iter.diff() > 0).all()
    monkeypatch.setattr(history_module, "HISTORY_SIZE", 1000)
    whole = hs.minimize("sphere", "pso", dim=2, iters=100, seed=0, device="cpu")  # every iteration kept
    torch.testing.assert_close(r.history_f, whole.history_f[:, r.history_iter], rtol=0, atol=0)


def test_iteration_and_evaluation_budgets():
    r = hs.minimize("sphere", hs.PSO(pop_size=10), dim=2, iters=7, device="cpu")
    assert r.iterations == 7 and r.evals == 80 and r.stop_reason == "iters"
    r = hs.minimize("sphere", hs.PSO(pop_size=10), dim=2, evals=95, device="cpu")
    assert r.evals == 90 and r.iterations == 8 and r.stop_reason == "evals"
    r = hs.minimize("sphere", hs.PSO(pop_size=10), dim=2, evals=1000, iters=3, device="cpu")
    assert r.iterations == 3


def test_time_limit_stops_within_a_chunk():
    # the native kernel's first build (seconds, on a clean machine) would count against the limit
    hs.engine.warm_up("rastrigin", hs.PSO(pop_size=50), dim=10, device="cpu")
    t0 = time.perf_counter()
    r = hs.minimize("rastrigin", hs.PSO(pop_size=50), dim=10, time_limit=0.3, device="cpu")
    elapsed = time.perf_counter() - t0
    assert r.stop_reason == "time_limit"
    assert 0.3 <= r.wall_time < 0.3 + 2 * minimize_module.CHUNK_SECONDS + 0.2
    assert elapsed < 2.0 and r.iterations > 10


def test_target_stops_when_every_run_reaches_it(device):
    r = hs.minimize("sphere", "pso", dim=5, target=1e-3, iters=10_000, runs=4, seed=0, device=device)
    assert r.stop_reason == "target"
    assert (r.best_f <= 1e-3).all() and r.iterations < 10_000
    assert (r.evals_to_target > 0).all() and (r.evals_to_target <= r.evals).all()
    # the last run to get there got there in the final chunk
    per_step = 100
    assert r.evals - int(r.evals_to_target.max()) <= per_step * r.iterations // 2 + per_step


def test_result_json_round_trip(tmp_path):
    r = hs.minimize("sphere", "pso", dim=3, iters=10, runs=2, seed=0, device="cpu", target=-1.0)
    path = r.save_json(tmp_path / "r.json")
    data = json.loads(path.read_text())
    assert data["best_f"] == r.best_f.tolist() and data["runs"] == 2
    assert data["summary"]["best"] == r.best and data["device"] == "cpu"
    back = hs.Result.load_json(path)
    assert torch.equal(back.best_x, r.best_x) and torch.equal(back.history_f, r.history_f)
    assert back.algorithm == r.algorithm and back.evals_to_target.tolist() == [-1, -1]
    assert data["evals_to_target"] == [None, None]  # never reached: null in JSON, not an unexplained -1
    assert set(r.to_numpy()) >= {"best_f", "best_x", "evals", "history_f", "wall_time", "device"}


def test_summary_statistics():
    r = hs.minimize("sphere", "pso", dim=3, iters=5, runs=4, seed=0, device="cpu")
    s = r.summary()
    f = r.best_f
    assert s["best"] == float(f.min()) and s["worst"] == float(f.max())
    assert s["median"] == pytest.approx(float(f.sort().values[1:3].mean()))
    assert s["std"] == pytest.approx(float(f.std()))


@pytest.mark.parametrize(
    "kwargs,message",
    [
        (dict(runs=0, iters=5), "runs must be an integer >= 1"),
        (dict(iters=0), "iters must be an integer >= 1"),
        (dict(evals=0), "evals must be an integer >= 1"),
        (dict(evals=50), r"evals=50 is less than one initial population \(100 evaluations"),
        (dict(), "give a budget"),
        (dict(target=0.1), "give a budget"),
        (dict(iters=5, time_limit=0), "time_limit must be > 0"),
        (dict(iters=5, dtype="float16"), "unsupported dtype"),
        (dict(iters=5, device="tpu"), "unknown device 'tpu'"),
        (dict(iters=5, seed=-1), "seed must be a non-negative integer"),
        (dict(iters=5, dim=4), "dim=4 was given but problem 'sphere' has dimension 3"),
    ],
)
def test_bad_engine_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        hs.minimize(hs.get_problem("sphere", dim=3), "pso", device=kwargs.pop("device", "cpu"), **kwargs)


def test_cuda_requested_without_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="no usable CUDA GPU"):
        hs.minimize("sphere", "pso", dim=2, iters=1, device="cuda")
    with pytest.raises(ValueError, match="no usable CUDA GPU"):
        hs.minimize("sphere", "pso", dim=2, iters=1, device="cuda:1")


def test_unknown_algorithm_lists_known_ones():
    with pytest.raises(ValueError, match=r"unknown algorithm 'psx' \(did you mean 'pso'\?\); known algorithms: .*pso"):
        hs.minimize("sphere", "psx", dim=2, iters=1)
    with pytest.raises(ValueError, match="must be a heuriscale Problem"):
        hs.minimize(lambda x: x, "pso", iters=1)
