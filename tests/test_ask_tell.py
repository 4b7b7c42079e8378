"""`AskTell`: the caller evaluates. Its numbers, its checkpoints and every bad tell. (That an
ask/tell loop gives exactly minimize's numbers is checked for every algorithm, on the CPU and
under `-m gpu` on CUDA, in test_every_algorithm.py.)"""

import math

import numpy as np
import pytest
import torch

import heuriscale as hs
from heuriscale.engine.ask_tell import AskedProblem
from heuriscale.local import Hybrid


def _sphere(x):
    return (x * x).sum(-1)


def test_a_box_is_enough_and_shapes_follow_the_runs():
    opt = hs.AskTell("pso", dim=3, lower=-2, upper=[1, 2, 3], seed=0, device="cpu", pop_size=10)
    x = opt.ask()
    assert x.shape == (10, 3) and x.device.type == "cpu"
    assert (x >= -2).all() and (x <= torch.tensor([1.0, 2.0, 3.0])).all()
    opt.tell(_sphere(x).tolist())  # a list
    assert opt.evals == 10 and opt.best_f.shape == () and opt.best_x.shape == (3,)
    assert float(opt.best_f) == float(_sphere(x).min())
    many = hs.AskTell("de", dim=2, lower=-1, upper=1, runs=4, seed=0, device="cpu", pop_size=8)
    x = many.ask()
    assert x.shape == (4, 8, 2)
    many.tell(_sphere(x).numpy())  # a NumPy array
    assert many.best_f.shape == (4,) and many.best_x.shape == (4, 2)


def test_asking_again_before_telling_returns_the_same_points_and_a_copy():
    opt = hs.AskTell("fep", dim=2, lower=-1, upper=1, seed=1, device="cpu", pop_size=6)
    a = opt.ask()
    a += 100  # the caller's copy: the run's points stay as they were
    b = opt.ask()
    assert (b.abs() <= 1).all() and torch.equal(b, opt.ask())
    opt.tell(_sphere(b))
    assert not torch.equal(opt.ask(), b)


def test_the_budget_ends_the_loop_and_the_result_says_so():
    opt = hs.AskTell("prs", dim=2, lower=-5.12, upper=5.12, evals=205, seed=0, device="cpu", pop_size=20)
    told = 0
    while not opt.done:
        opt.tell(_sphere(opt.ask()))
        told += 1
    assert told == 10 and opt.evals == 20 + 9 * 20 and opt.algorithm.max_iters == 9  # 205 allows 9 steps
    r = opt.result()
    assert r.stop_reason == "evals" and r.evals == 200 and r.extra["ask_tell"] and r.iterations == 9
    with pytest.raises(ValueError, match=r"the budget is spent \(evals=205 per run, 200 told\): read result\(\)"):
        opt.ask()
    with pytest.raises(ValueError, match=r"tell\(\) after the budget"):
        opt.tell(np.zeros(20))


@pytest.mark.parametrize("values, message", [
    (np.zeros(9), r"expects one value per point of the last ask\(\), shape \(10,\), got shape \(9,\)"),
    (np.zeros((10, 1)), r"shape \(10,\), got shape \(10, 1\)"),
    ([[1.0, 2.0], [3.0]], r"takes numbers \(a tensor, NumPy array or list\) of shape \(10,\)"),
    (np.full(10, 1 + 1j), r"returned complex128 values"),
    ("abc", r"takes numbers \(a tensor, NumPy array or list\) of shape \(10,\), got a str"),
    (None, r"got a NoneType that is not one"),
])
def test_a_bad_tell_is_one_line_and_changes_nothing(values, message):
    opt = hs.AskTell("pso", dim=2, lower=-1, upper=1, seed=0, device="cpu", pop_size=10)
    x = opt.ask()
    opt.tell(_sphere(x))
    x = opt.ask()
    before = opt.state_dict()
    with pytest.raises(ValueError, match=message) as info:
        opt.tell(values)
    assert "\n" not in str(info.value)
    after = opt.state_dict()
    assert after["iteration"] == before["iteration"] and torch.equal(after["state"]["x"], before["state"]["x"])
    assert torch.equal(opt.ask(), x)  # the points still wait for their values
    opt.tell(_sphere(x))
    assert opt.iteration == 1


def test_tell_without_ask_and_after_it():
    opt = hs.AskTell("pso", dim=2, lower=-1, upper=1, seed=0, device="cpu", pop_size=4)
    with pytest.raises(ValueError, match=r"tell\(\) without ask\(\)"):
        opt.tell([1.0, 2.0, 3.0, 4.0])
    opt.tell(_sphere(opt.ask()))
    with pytest.raises(ValueError, match=r"tell\(\) without ask\(\)"):  # the second tell of one ask
        opt.tell([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(ValueError, match="nothing told yet"):
        hs.AskTell("pso", dim=2, lower=-1, upper=1, device="cpu").result()


def test_nan_is_counted_and_never_best():
    opt = hs.AskTell("apo", dim=2, lower=-1, upper=1, runs=2, iters=20, seed=0, device="cpu", pop_size=10)
    while not opt.done:
        x = opt.ask()
        f = _sphere(x)
        opt.tell(torch.where(x[..., 0] > 0, torch.nan, f))
    r = opt.result()
    assert torch.isfinite(r.best_f).all() and (r.best_x[:, 0] <= 0).all() and (r.nan_evals > 0).all()


def test_integer_values_are_taken_as_the_runs_dtype():
    opt = hs.AskTell("pso", dim=2, lower=-1, upper=1, seed=0, device="cpu", dtype="float64", pop_size=3)
    opt.ask()
    opt.tell([3, 1, 2])
    assert opt.best_f.dtype == torch.float64 and float(opt.best_f) == 1.0


def test_a_checkpoint_continues_bit_for_bit_even_between_ask_and_tell(tmp_path):
    problem = hs.get_problem("rastrigin", dim=3)
    whole = hs.AskTell("pso", problem, runs=2, evals=30 * 16, seed=5, device="cpu", pop_size=16)
    while not whole.done:
        whole.tell(problem.evaluate(whole.ask()))
    opt = hs.AskTell("pso", problem, runs=2, evals=30 * 16, seed=5, device="cpu", pop_size=16)
    for _ in range(10):
        opt.tell(problem.evaluate(opt.ask()))
    asked = opt.ask()
    opt.save(tmp_path / "at.ckpt")  # points asked, not yet told: they are saved too
    again = hs.AskTell.load(tmp_path / "at.ckpt")
    assert torch.equal(again.ask(), asked) and again.evals == opt.evals
    while not again.done:
        again.tell(problem.evaluate(again.ask()))
    a, b = again.result(), whole.result()
    for field in ("best_f", "best_x", "history_f", "history_iter", "nan_evals"):
        assert torch.equal(getattr(a, field), getattr(b, field)), field
    assert a.evals == b.evals == 30 * 16


@pytest.mark.parametrize("instance", [5, [2, 7]], ids=["one instance", "an instance per run"])
def test_a_loaded_checkpoint_rebuilds_its_problem_with_its_parameters(tmp_path, instance):
    """bbob's instance (one, or one per run) comes back with the problem, not instance 1."""
    problem = hs.get_problem("bbob-f3", dim=2, instance=instance)
    opt = hs.AskTell("pso", problem, runs=2, evals=20 * 8, seed=1, device="cpu", pop_size=8)
    opt.tell(problem.evaluate(opt.ask()))
    opt.save(tmp_path / "b")
    again = hs.AskTell.load(tmp_path / "b")
    assert again.problem.instance == instance and again.problem.run_optima(2) == problem.run_optima(2)
    x = again.ask()
    torch.testing.assert_close(again.problem.evaluate(x), problem.evaluate(x), rtol=0, atol=0)


def test_a_checkpoint_before_the_first_tell_and_a_box_without_a_problem(tmp_path):
    opt = hs.AskTell("de", dim=2, lower=-3, upper=3, seed=2, device="cpu", pop_size=5, CR=0.5)
    first = opt.ask()
    opt.save(tmp_path / "a")
    again = hs.AskTell.load(tmp_path / "a")
    assert isinstance(again.problem, AskedProblem) and again.algorithm.CR == 0.5
    assert torch.equal(again.ask(), first)
    again.tell(_sphere(first))
    assert again.evals == 5


def test_checkpoint_errors(tmp_path):
    opt = hs.AskTell("pso", dim=2, lower=-1, upper=1, seed=0, device="cpu", evals=100, pop_size=10)
    opt.tell(_sphere(opt.ask()))
    opt.save(tmp_path / "a")
    other = hs.AskTell("pso", dim=2, lower=-1, upper=1, seed=0, device="cpu", evals=200, pop_size=10)
    with pytest.raises(ValueError, match="for another budget"):
        other.load_state_dict(torch.load(tmp_path / "a", weights_only=True))
    other = hs.AskTell("pso", dim=3, lower=-1, upper=1, seed=0, device="cpu", evals=100, pop_size=10)
    with pytest.raises(ValueError, match="another configuration: problem was"):
        other.load_state_dict(torch.load(tmp_path / "a", weights_only=True))
    hs.minimize("sphere", "pso", dim=2, iters=3, device="cpu", checkpoint=tmp_path / "m")
    with pytest.raises(ValueError, match=r"holds a minimize\(\) run, not an AskTell one"):
        hs.AskTell.load(tmp_path / "m")
    with pytest.raises(ValueError, match="load a checkpoint into a new AskTell"):
        opt.load_state_dict(torch.load(tmp_path / "a", weights_only=True))


@pytest.mark.parametrize("make, message", [
    (lambda: hs.AskTell("pso", dim=2, device="cpu"), "give a problem, or the box of the points to ask for"),
    (lambda: hs.AskTell("pso", "sphere", dim=2, lower=0, upper=1, device="cpu"), "lower= and upper= describe the box"),
    (lambda: hs.AskTell("nope", dim=2, lower=0, upper=1, device="cpu"), "unknown algorithm 'nope'"),
    (lambda: hs.AskTell(hs.PSO(), dim=2, lower=0, upper=1, device="cpu", w=0.5), r"options \['w'\] are for an algorithm"),
    (lambda: hs.AskTell("prs", dim=2, lower=0, upper=1, device="cpu"), "prs schedules its steps over max_iters"),
    (lambda: hs.AskTell("pso", dim=2, lower=1, upper=0, device="cpu"), "lower"),
    (lambda: hs.AskTell("pso", dim=2, lower=0, upper=1, device="cpu", evals=5), r"evals=5 is less than one initial"),
    (lambda: hs.AskTell("pso", dim=2, lower=0, upper=1, device="cpu", pop_size=1), "needs a population of at least 2"),
    (lambda: hs.AskTell(Hybrid(algorithm=hs.PSO()), dim=2, lower=0, upper=1, device="cpu"),
     "evaluates points itself after the steps"),
])
def test_bad_set_ups_are_refused_clearly(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_an_algorithm_written_as_a_whole_step_is_refused_with_what_to_do():
    from dataclasses import dataclass

    @dataclass(kw_only=True)
    class Whole(hs.Algorithm):
        name = "whole"

        def init(self, problem, runs):
            x = problem.lower + (problem.upper - problem.lower) * torch.rand(runs, self.pop_size, problem.dim)
            return hs.State(x=x, f=problem.evaluate(x))

        def step(self, problem, state):
            return self.init(problem, state.x.shape[0])

    assert hs.minimize("sphere", Whole(pop_size=5), dim=2, iters=3, device="cpu").evals == 20  # minimize runs it
    with pytest.raises(ValueError, match=r"whole is written as a whole step \(init/step\), not as ask/tell halves"):
        hs.AskTell(Whole(pop_size=5), dim=2, lower=0, upper=1, device="cpu")


def test_sequential_firefly_asks_for_its_generation_at_once():
    """Its pairwise moves read the brightness of the generation's start, so it evaluates the
    whole population once per generation, like every other algorithm here."""
    problem = hs.get_problem("sphere", dim=2)
    opt = hs.AskTell(hs.Firefly(pop_size=6, update="sequential"), problem, iters=5, seed=1, device="cpu")
    while not opt.done:
        opt.tell(problem.evaluate(opt.ask()))
    plain = hs.minimize(problem, hs.Firefly(pop_size=6, update="sequential"), iters=5, seed=1, device="cpu",
                        engine="eager")
    assert torch.equal(opt.result().best_f, plain.best_f)


def test_the_progress_bar_counts_evaluations_per_second(capsys):
    opt = hs.AskTell("pso", dim=2, lower=-1, upper=1, iters=3, seed=0, device="cpu", pop_size=10, progress=True)
    while not opt.done:
        opt.tell(_sphere(opt.ask()))
    opt.close()
    shown = capsys.readouterr().out
    assert "40 evaluations" in shown and "/s" in shown and not math.isnan(float(opt.best_f))
