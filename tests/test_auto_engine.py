"""engine="auto": the choice from the timed eager step against the fast path's setup, and why."""

import pytest
import torch

import heuriscale as hs
from heuriscale.engine import auto
from heuriscale.engine.runner import Runner


def test_fast_path_when_the_steps_repay_its_setup():
    # Firefly N = 16,384, D = 32 on the H100: ~9.9 ms an eager step, ~0.3 ms of it on the host
    choice = auto.decide("fused", 200, 64, 9.9e-3, 3e-4)
    assert choice.engine == "fused"
    assert "eager 200 x 9.9 ms = 1.98 s" in choice.reason and "fused ~" in choice.reason


def test_eager_when_a_step_is_cheaper_than_the_setup():
    choice = auto.decide("fused", 300, 64, 2e-4, 1.5e-4)  # 60 ms of eager steps vs a build of ~0.5 s
    assert choice.engine == "eager" and "eager 300 x" in choice.reason


def test_break_even_follows_the_model():
    t_eager, t_launch, chunk = 1e-3, 2e-4, 64
    setup = auto.BUILD_WARM["compiled"] + t_eager + chunk * t_launch
    saved = (1 - auto.STEP_FRACTION["compiled"]) * t_eager
    even = setup / saved
    assert auto.decide("compiled", int(even) - 1, chunk, t_eager, t_launch).engine == "eager"
    assert auto.decide("compiled", int(even) + 2, chunk, t_eager, t_launch).engine == "compiled"


def test_shorter_than_a_chunk_or_open_ended():
    assert auto.decide("fused", 63, 64, 1.0, 0.1).engine == "eager"
    assert auto.decide("fused", float("inf"), 64, 0.0, 0.0).engine == "fused"


def test_auto_on_the_cpu_says_why():
    short = hs.minimize("sphere", "pso", dim=4, iters=20, device="cpu", seed=0)  # not worth loading kernels
    assert short.extra["engine"] == "eager"
    assert short.extra["engine_reason"] == "auto chose eager: 20 steps are fewer than 64: not worth loading kernels"
    long = hs.minimize("sphere", "pso", dim=4, iters=50_000, device="cpu", seed=0)
    assert long.extra["engine"] == "native" and long.extra["engine_reason"].startswith("auto chose native: eager 50000 x ")
    # (a time limit ends it early: the choice is made for its 50,000 iterations)
    profiled = hs.minimize("sphere", "pso", dim=4, iters=50_000, device="cpu", seed=0, profile=True, time_limit=0.5)
    assert profiled.extra["engine"] == "eager" and "profile=True" in profiled.extra["engine_reason"]


def test_a_short_time_limit_counts_only_this_algorithms_kernels_as_loaded(monkeypatch):
    from heuriscale.engine.kernels import cpu_common

    runner = Runner("rastrigin", hs.PSO(pop_size=50), dim=10, seed=0, device="cpu")
    # another algorithm's kernels in this process say nothing of PSO's in the disk cache
    monkeypatch.setattr(cpu_common, "native_loaded", {"NativeAPO", "NativeFEP"})
    other = auto.choose(runner, float("inf"), time_limit=0.3)
    assert other.engine == "eager" and "a time limit of 300 ms is short" in other.reason
    # 50 x 10 coordinates run in the serial build: the parallel one loaded says nothing of it
    monkeypatch.setattr(cpu_common, "native_loaded", {"NativePSO/parallel"})
    assert auto.choose(runner, float("inf"), time_limit=0.3).engine == "eager"
    monkeypatch.setattr(cpu_common, "native_loaded", {"NativePSO/serial"})
    assert auto.choose(runner, float("inf"), time_limit=0.3).engine == "native"
    assert auto.choose(runner, float("inf"), time_limit=0.1).engine == "eager"  # 4 x 0.05 s > 0.1 s


def test_timing_an_eager_step_leaves_the_runs_untouched():
    apo = hs.get_algorithm("apo", pop_size=20, max_iters=30)
    plain = Runner("rastrigin", apo, dim=5, runs=3, seed=4, device="cpu")
    timed = Runner("rastrigin", apo, dim=5, runs=3, seed=4, device="cpu")
    seconds, host = timed.time_eager_step()
    assert seconds > 0 and 0 < host <= seconds
    for r in (plain, timed):
        r.step(30)
    torch.testing.assert_close(plain.best_f, timed.best_f, rtol=0, atol=0)
    torch.testing.assert_close(plain.state.x, timed.state.x, rtol=0, atol=0)


def test_engine_changes_only_before_the_first_step():
    r = Runner("sphere", "pso", dim=3, seed=0, device="cpu")
    r.use_engine("eager", "because")
    r.step(1)
    with pytest.raises(ValueError, match="before the first step"):
        r.use_engine("eager")


@pytest.mark.gpu
def test_auto_picks_fused_for_a_large_firefly_run():
    algo = hs.get_algorithm("firefly", pop_size=16_384)
    r = hs.minimize("sphere", algo, dim=32, iters=200, device="cuda", seed=0)
    assert r.extra["engine"] == "fused+graph", r.extra["engine_reason"]
    assert r.extra["engine_reason"].startswith("auto chose fused")


@pytest.mark.gpu
def test_auto_stays_eager_for_a_cheap_short_run_and_matches_pinned_engines():
    r = hs.minimize("sphere", "pso", dim=2, iters=100, device="cuda", seed=3)
    assert r.extra["engine"] == "eager", r.extra["engine_reason"]
    pinned = hs.minimize("sphere", "pso", dim=2, iters=100, device="cuda", seed=3, engine="eager")
    torch.testing.assert_close(r.best_f, pinned.best_f, rtol=0, atol=0)
    # a run long enough to choose the fused path gives exactly the pinned fused run's numbers
    long = hs.minimize("rastrigin", "pso", dim=2, iters=20_000, device="cuda", seed=3)
    assert long.extra["engine"] == "fused+graph", long.extra["engine_reason"]
    fused = hs.minimize("rastrigin", "pso", dim=2, iters=20_000, device="cuda", seed=3, engine="fused")
    torch.testing.assert_close(long.best_f, fused.best_f, rtol=0, atol=0)
    torch.testing.assert_close(long.history_f, fused.history_f, rtol=0, atol=0)


def test_warm_up_on_the_cpu_builds_the_native_kernels():
    built = hs.engine.warm_up("sphere", "prs", dim=3, device="cpu")
    assert built["engine"] == "native" and built["seconds"] > 0


@pytest.mark.gpu
def test_warm_up_builds_what_auto_uses():
    built = hs.engine.warm_up("rastrigin", "prs", dim=4, device="cuda")  # prs: no max_iters needed to build
    assert built["engine"] == "fused" and built["seconds"] > 0
    from typer.testing import CliRunner

    from heuriscale.cli import app

    res = CliRunner().invoke(app, ["warmup", "pso", "fep"])
    assert res.exit_code == 0, res.output
    assert "kernels built on cuda" in res.output and "fused" in res.output


def test_warmup_covers_the_papers_fused_configurations():
    from heuriscale.cli.warmup import paper_warmups

    labels = [job[0] for job in paper_warmups(["pso", "fep"], "cuda")]
    assert "pso on euclidean D=2 pop=65536 runs=1" in labels and "fep on fep-f5 D=32 pop=6400 runs=1" in labels
    assert len(labels) == len(set(labels))


def test_paper_003s_cuda_runs_replay_the_fused_apo_kernels():
    """Table 2's largest size and Table 3's spring (50 protozoa, where the compiled step would
    be faster, but the studies replay the uncompiled step instead, slower than the kernels).
    (One configuration of Table 2: building all 41 of APO's, rotations included, takes seconds.)"""
    from heuriscale.studies import PAPERS
    from heuriscale.studies.reproduce import configs_for
    from heuriscale.studies.study import build, engine_for

    experiments = {exp.name: exp for exp in PAPERS["apo"].experiments}
    row, config = next((row, config) for row, config in configs_for(experiments["table2"], "paper", ["cuda"])
                       if row["tags"] == {"function": "bent-cigar", "pop": 10_000, "D": 1000})
    assert engine_for(config, *build(config)) == "fused"
    (_, spring), = configs_for(experiments["table3"], "paper", ["cuda"])
    assert engine_for(spring, *build(spring)) == "fused"


def test_warmup_on_the_cpu_builds_each_native_kernel_once_per_dtype():
    from typer.testing import CliRunner

    from heuriscale.cli import app
    from heuriscale.cli.warmup import paper_warmups

    jobs = paper_warmups(["pso", "apo"], "cpu")
    assert sorted((job[2].name, job[5]) for job in jobs) == [("apo", "float32"), ("apo", "float64"), ("pso", "float32")]
    assert all(job[4] == "native" for job in jobs)
    res = CliRunner().invoke(app, ["warmup", "pso", "--device", "cpu"])
    assert res.exit_code == 0, res.output
    assert "kernels built on cpu" in res.output and "native" in res.output


def test_warmup_needs_cuda_and_known_names():
    from typer.testing import CliRunner

    from heuriscale.cli import app

    res = CliRunner().invoke(app, ["warmup", "nope"])
    assert res.exit_code == 2 and "unknown algorithm 'nope'" in res.output
    res = CliRunner().invoke(app, ["warmup", "pso", "--device", "mps"])
    assert res.exit_code == 2 and "builds CUDA or CPU kernels" in res.output


def test_progress_says_when_kernels_are_built(monkeypatch):
    from heuriscale.engine import progress as progress_module

    shown, builds = [], iter([True])  # the first chunk builds, later ones replay
    monkeypatch.setattr(progress_module.ProgressBar, "status", lambda self, text: shown.append(text))
    monkeypatch.setattr(Runner, "builds_next_step", property(lambda self: next(builds, False)))
    hs.minimize("sphere", "pso", dim=2, iters=30, device="cpu", seed=0, progress=True)
    assert shown == ["building kernels (takes seconds on the first run on this machine; cached afterwards)"]
