import dataclasses
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from heuriscale.cli import app
from heuriscale.studies import PAPERS, ResultStore, RunConfig, aggregate, reproduce_paper, run_configs
from heuriscale.studies import study as study_module

CONFIGS = [
    RunConfig("pso", "sphere", iters=30, runs=3, dim=4, algorithm_params={"pop_size": 16}, timing="each"),
    RunConfig("apo", "rastrigin", iters=20, runs=4, dim=3, algorithm_params={"pop_size": 12}),
]


def test_store_keeps_one_row_per_run_and_aggregates(tmp_path):
    store = ResultStore(tmp_path / "s.sqlite")
    run_configs("demo", CONFIGS, store)
    for config in CONFIGS:
        agg = aggregate(store, "demo", config)
        assert agg["n"] == config.runs
        best = [r["best_f"] for r in agg["runs"]]
        assert agg["f"]["min"] == min(best) and agg["f"]["max"] == max(best)
        assert agg["f"]["median"] == pytest.approx(statistics.median(best))
        assert agg["f"]["std"] == pytest.approx(statistics.stdev(best))
        assert all(r["config"]["algorithm"] == config.algorithm for r in agg["runs"])
    # batched configurations advance their runs together; runs still differ
    apo = aggregate(store, "demo", CONFIGS[1])
    assert apo["batched"] and len({r["best_f"] for r in apo["runs"]}) == 4
    assert len({r["seed"] for r in aggregate(store, "demo", CONFIGS[0])["runs"]}) == 3


def test_rerun_recomputes_nothing_finished(tmp_path, monkeypatch):
    store = ResultStore(tmp_path / "s.sqlite")
    run_configs("demo", CONFIGS, store)
    calls = []
    real = study_module.execute
    monkeypatch.setattr(study_module, "execute", lambda c, r, *warm: calls.append(r) or real(c, r, *warm))
    run_configs("demo", CONFIGS, store)
    assert calls == []
    bigger = RunConfig("pso", "sphere", iters=30, runs=3, dim=4, algorithm_params={"pop_size": 32}, timing="each")
    run_configs("demo", CONFIGS + [bigger], store)
    assert calls == [[0], [1], [2]]  # only the new configuration ran


_SLOW_START = {"calls": 0}


def _slow_start_sphere(dim: int):
    """Sphere whose very first evaluation in the process takes 0.4 s longer: a start-up cost."""
    import heuriscale as hs

    def f(x):
        _SLOW_START["calls"] += 1
        if _SLOW_START["calls"] == 1:
            time.sleep(0.4)
        return (x * x).sum(-1)

    return hs.TorchFunction(f, dim, -5.0, 5.0, name="slow-start-sphere")


def test_short_runs_are_timed_warm(tmp_path, monkeypatch):
    """Issue 28: a short run's first call (thread-pool start, first-touch memory) is not in
    its time: the stored time is the best of warm repeats of the same seeded run, so a first
    call slowed by 0.4 s is left out, and the scores are the first call's."""
    from heuriscale.problems import register_problem

    register_problem("slow-start-sphere", _slow_start_sphere, "test only")
    _SLOW_START["calls"] = 0
    store = ResultStore(tmp_path / "s.sqlite")
    each = RunConfig("pso", "slow-start-sphere", iters=20, runs=2, dim=3, algorithm_params={"pop_size": 8},
                     timing="each")
    batched = dataclasses.replace(each, timing="batched", runs=3)
    run_configs("warm", [each, batched], store)
    first = aggregate(store, "warm", each)["runs"][0]
    timing = first["extra"]["timing"]
    assert timing["first_s"] >= 0.4  # the slow first call happened, and was measured ...
    assert timing["warm"] and 1 <= timing["repeats"] == len(timing["warm_s"]) <= study_module.WARM_REPEATS
    assert first["wall_time"] - first["setup_time"] == pytest.approx(min(timing["warm_s"]))  # ... but not stored
    assert first["wall_time"] - first["setup_time"] < 0.4
    for config in (each, batched):
        agg = aggregate(store, "warm", config)
        assert all(r["extra"]["timing"]["warm"] for r in agg["runs"])
        assert agg["time"]["max"] < 0.4
    # the scores are those of a single seeded run, repeats or not
    monkeypatch.setattr(study_module, "WARM_BELOW", 0.0)  # every run "long": timed once, as it came
    again = ResultStore(tmp_path / "again.sqlite")
    run_configs("warm", [each], again)
    cold = aggregate(again, "warm", each)["runs"]
    assert [r["best_f"] for r in cold] == [r["best_f"] for r in aggregate(store, "warm", each)["runs"]]
    assert all(r["extra"]["timing"] == {"warm": False, "repeats": 1, "first_s": r["wall_time"] - r["setup_time"],
                                        "warm_s": []} for r in cold)


KILLED_STUDY = textwrap.dedent("""
    import sys
    from heuriscale.studies import ResultStore, RunConfig, run_configs
    config = RunConfig("pso", "rastrigin", iters=4000, runs=8, dim=10, algorithm_params={"pop_size": 64}, timing="each")
    run_configs("killed", [config], ResultStore(sys.argv[1]))
""")


def test_study_killed_midway_resumes_without_recomputing(tmp_path, monkeypatch):
    db = tmp_path / "k.sqlite"
    script = tmp_path / "study.py"
    script.write_text(KILLED_STUDY)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    proc = subprocess.Popen([sys.executable, str(script), str(db)], env=env)
    finished = 0
    deadline = time.time() + 120
    while time.time() < deadline and finished < 2:
        time.sleep(0.2)
        if db.exists():
            try:
                finished = sqlite3.connect(db).execute("SELECT COUNT(*) FROM runs").fetchone()[0]
            except sqlite3.OperationalError:
                pass
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 2 <= finished < 8, "the study should be killed midway"
    store = ResultStore(db)
    before = {r["repeat"]: r["best_f"] for r in store.runs("killed")}
    calls = []
    real = study_module.execute
    monkeypatch.setattr(study_module, "execute", lambda c, r, *warm: calls.append(r[0]) or real(c, r, *warm))
    config = RunConfig("pso", "rastrigin", iters=4000, runs=8, dim=10, algorithm_params={"pop_size": 64}, timing="each")
    run_configs("killed", [config], store)
    assert sorted(calls) == sorted(set(range(8)) - set(before))  # only the unfinished runs
    after = {r["repeat"]: r["best_f"] for r in store.runs("killed")}
    assert len(after) == 8 and all(after[k] == v for k, v in before.items())


def test_reproduce_writes_reports_with_paper_numbers_beside_ours(tmp_path):
    # paper 000's first three rows, as data: the same generic runner as `heuriscale reproduce`
    prs = PAPERS["prs"]
    mini = dataclasses.replace(prs, key="mini", experiments=[
        dataclasses.replace(prs.experiments[0], rows=prs.experiments[0].rows[:3], runs={"quick": 2, "paper": 2},
                            quick={"iters": ("cap", 50)})])
    report = reproduce_paper(mini, "quick", ["cpu"], tmp_path)
    text = report.read_text()
    assert "paper CUDA score" in text and "ours CPU score" in text and "0.05921" in text and "50 it x 2048" in text
    page = (tmp_path / "mini" / "report.html").read_text()
    assert page.startswith("<!doctype html>") and "Tables 2-5" in page and "MX250" in page
    csv = (tmp_path / "mini" / "results.csv").read_text().splitlines()
    assert len(csv) == 1 + 3 * 2  # 3 rows x 2 runs, one line per run
    calls = []
    real = study_module.execute
    study_module.execute = lambda c, r, *warm: calls.append(r) or real(c, r, *warm)
    try:
        reproduce_paper(mini, "quick", ["cpu"], tmp_path)  # resumes: nothing left to run
    finally:
        study_module.execute = real
    assert calls == []
    # a report written from a store names the hardware its runs recorded, not this machine's
    with sqlite3.connect(tmp_path / "mini" / "results.sqlite") as db:
        db.execute("UPDATE runs SET device_name = 'Recorded Xeon 9999'")
    text = reproduce_paper(mini, "quick", ["cpu"], tmp_path).read_text()
    assert "| cpu | " in text and "Recorded Xeon 9999 (engine" in text


def test_cli_reproduce_errors():
    res = CliRunner().invoke(app, ["reproduce", "nope"])
    assert res.exit_code == 2 and "unknown paper 'nope'" in res.output
    res = CliRunner().invoke(app, ["reproduce", "prs", "--scale", "huge"])
    assert res.exit_code == 2 and "unknown scale" in res.output


@pytest.mark.slow
def test_reproduce_all_quick(tmp_path):
    res = CliRunner().invoke(app, ["reproduce", "all", "--out", str(tmp_path), "--device", "cpu"])
    assert res.exit_code == 0, res.output
    for key in PAPERS:
        assert (tmp_path / key / "report.html").is_file() and (tmp_path / key / "results.csv").is_file()
    figures = list(tmp_path.glob("*/figures/*.png"))
    assert len(figures) >= 10
    rows = sqlite3.connect(tmp_path / "fep" / "results.sqlite").execute("SELECT COUNT(*) FROM runs").fetchone()[0]
    assert rows > 0


def _fake_execute(config, repeats, warm_timing=True):
    """Stored rows shaped as `study.execute` writes them, without running anything: enough for
    every table and figure of every paper (positions, phases, snapshots, the hybrid's before)."""
    import random

    problem, _ = study_module.build(config)
    rng = random.Random(config.key())
    pop = config.algorithm_params.get("pop_size", 40)
    lo, hi = problem.lower.tolist(), problem.upper.tolist()
    rows, wall = [], rng.uniform(0.5, 1.5)
    for repeat in repeats:
        if config.timing == "each" or config.snapshots:
            wall = rng.uniform(0.5, 1.5)
        best = rng.uniform(1e-3, 1.0)
        extra = {"engine": "fake", "batched_runs": len(repeats) if config.timing == "batched" else 1}
        if config.refine:
            extra["global_best_f"] = best
            best = best * rng.choice([0.0, 0.5, 1.0])  # BFGS lowers a trial's best or leaves it
        if config.profile:
            extra["phases"] = {"selection": 0.1, "evaluation": 0.2, "mutation": 0.3}
        if config.snapshots:
            extra["snapshots"] = {str(t): {"x": [[rng.uniform(a, b) for a, b in zip(lo, hi)] for _ in range(pop)],
                                           "f": [rng.uniform(1, 2) for _ in range(pop)], "elapsed": 0.01 * t}
                                  for t in config.snapshots}
        if problem.n_constraints:
            extra.update(feasible=True, max_violation=0.0, objective=best)
        rows.append({"repeat": repeat, "config": {}, "seed": config.seed(repeat), "device": config.device,
                     "device_name": f"fake {config.device}", "best_f": best,
                     "best_x": [(a + b) / 2 for a, b in zip(lo, hi)], "evals": 100, "wall_time": wall,
                     "setup_time": 0.0, "history": {"iter": [0, config.iters], "f": [2 * best + 1, best]},
                     "extra": extra})
    return rows


@pytest.mark.slow  # every paper's study, shrunk: a minute on 2 cores
def test_no_table_of_any_papers_report_is_empty_when_its_runs_exist(tmp_path, monkeypatch):
    """Every paper at quick scale, on both devices, from stored runs (made up here, so the test
    is quick): every table has a row for each of its rows' stored configurations, every figure
    has a caption, every report cites its paper and states each table's budget."""
    import re

    monkeypatch.setattr(study_module, "execute", _fake_execute)
    for key, paper in PAPERS.items():
        report = reproduce_paper(paper, "quick", ["cpu", "cuda"], tmp_path)
        md = report.read_text()
        sections = md.split("\n## ")[1:]
        assert len(sections) == len(paper.experiments), key
        for exp, section in zip(paper.experiments, sections):
            table = [line for line in section.splitlines() if line.startswith("|")]
            if exp.kind != "snapshots":
                assert len(table) > 2, f"{key}: table '{exp.title}' has a header and no row"
            assert "Budget per run: ours " in section, f"{key}: {exp.title} states no budget"
            if exp.differs:
                assert exp.differs in section
            for alt in re.findall(r"!\[([^\]]*)\]\(", section):  # a sentence, not a file name
                assert " " in alt and alt.endswith(".") and not alt.endswith(".png"), alt
        assert "shared/papers/` paper" not in md and paper.citation and paper.citation in md
    firefly = (tmp_path / "firefly" / "report.md").read_text()
    assert "| sphere | cpu | 10 |" in firefly  # the time-modes table (empty before: its rows' tags did not match)


def test_firefly_report_pairs_each_trial_before_and_after_bfgs(tmp_path, monkeypatch):
    """'improved' counts the trials whose own best BFGS lowered; the median columns come from the
    same runs, so the refined median is never above the swarm's."""
    monkeypatch.setattr(study_module, "execute", _fake_execute)
    paper = PAPERS["firefly"]
    mini = dataclasses.replace(paper, experiments=[dataclasses.replace(paper.experiments[0], runs={"quick": 12, "paper": 12})])
    md = reproduce_paper(mini, "quick", ["cpu"], tmp_path).read_text()
    with ResultStore(tmp_path / "firefly" / "results.sqlite", readonly=True) as store:
        for row in mini.experiments[0].rows:
            fn = row["tags"]["function"]
            runs = [r for r in store.runs("firefly-quick") if r["config"]["problem"] == fn]
            improved = sum(r["best_f"] < r["extra"]["global_best_f"] for r in runs)
            line = next(line for line in md.splitlines() if line.startswith(f"| {fn} | cpu |"))
            cells = [c.strip() for c in line.strip("|").split("|")]
            assert cells[5] == f"{improved} of 12" and cells[6] == "0 of 12"
            assert float(cells[4]) <= float(cells[3])
